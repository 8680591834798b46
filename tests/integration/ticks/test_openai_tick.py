"""A tick of OpenAI-compatible minds end to end: the real engine, world, SQLite and openai
client; only the chat-completions endpoint is scripted (httpx2.MockTransport).

Each agent's model walks north, tries a tool that does not exist, one with input
that makes no sense and one whose arguments are not JSON at all, hears all four
outcomes, and ends its turn.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx2

from adapters.openai_mind import OpenAIMind, OpenAIProfile
from storage import Storage
from tests.fake_openai import ScriptedApi, error, reply, tool_call


def _agent_of(body: dict[str, Any]) -> str:
    return body["messages"][0]["content"].split(".", 1)[0].removeprefix("You are ")


def _model(body: dict[str, Any]) -> dict[str, Any]:
    """What every agent's model does: four calls on seeing the world, then rest."""
    if body["messages"][-1]["role"] == "user":  # a perception: act
        return reply("Let me look around.", calls=[
            tool_call("walk", direction="north"),
            tool_call("fly_away"),
            tool_call("gather", direction="upwards-ish"),
            tool_call("walk", raw="north, please"),
        ])
    return reply("Enough for now.")


async def _profiles(data: Path) -> dict[str, OpenAIProfile]:
    async with Storage(data) as storage:
        agents = await storage.agents.get_all_agents()
    return {a.name: OpenAIProfile("local-test", a.personality) for a in agents}


async def test_a_tick_of_openai_minds_runs_end_to_end(make_engine, small_world: Path) -> None:
    profiles = await _profiles(small_world)
    api = ScriptedApi(otherwise=_model)
    async with make_engine(OpenAIMind(api.client(), profiles)) as engine:
        ctx = await engine.tick_once()

    assert ctx.completed
    assert sorted(ctx.turn_results) == sorted(profiles)
    assert {r.mind for r in ctx.turn_results.values()} == {"local"}
    assert all(r.ended == "ended" and r.error is None for r in ctx.turn_results.values())
    assert sorted(_agent_of(b) for b in api.requests) == sorted(2 * list(profiles))

    answers = [[m for m in b["messages"] if m["role"] == "tool"] for b in api.requests
               if b["messages"][-1]["role"] == "tool"]
    assert len(answers) == len(profiles)
    for walk, unknown, nonsense, not_json in answers:
        assert not walk["content"].startswith("Error: ")
        assert unknown["content"].startswith("Error: ") and "fly_away" in unknown["content"]
        assert nonsense["content"].startswith("Error: ") and nonsense["content"] != "Error: "
        assert not_json["content"].startswith("Error: nothing was done")
        assert "not valid JSON" in not_json["content"]

    db = sqlite3.connect(small_world / "world.db")
    try:
        turns = db.execute("SELECT agent, mind, actions, record FROM turns").fetchall()
        minds = dict(db.execute("SELECT agent, state FROM minds WHERE kind = 'local'"))
        walked = db.execute("SELECT COUNT(*) FROM events WHERE kind = 'agent_moved'").fetchone()
    finally:
        db.close()
    assert sorted(t[0] for t in turns) == sorted(profiles)
    assert all(t[1] == "local" and t[2] == 3 for t in turns)  # the non-JSON call never ran
    for _, _, _, record in turns:
        kept = json.loads(record)["mind"]["messages"]
        assert [m["role"] for m in kept] == ["user", "assistant"] + ["tool"] * 4 + ["assistant"]
    assert set(minds) == set(profiles)
    assert all(len(json.loads(s)["messages"]) == 7 for s in minds.values())
    assert walked[0] >= 1


async def test_one_agents_failing_endpoint_leaves_the_tick_to_everyone_else(
    make_engine, small_world: Path
) -> None:
    profiles = await _profiles(small_world)
    unlucky, unreachable = sorted(profiles)[:2]

    def model(body: dict[str, Any]) -> Any:
        if _agent_of(body) == unlucky:
            return error(500, "CUDA out of memory")
        if _agent_of(body) == unreachable:
            return httpx2.ConnectError("connection refused")
        return _model(body)

    api = ScriptedApi(otherwise=model)
    async with make_engine(OpenAIMind(api.client(), profiles)) as engine:
        ctx = await engine.tick_once()
    results = dict(ctx.turn_results)
    assert ctx.completed and set(results) == set(profiles)
    assert results[unlucky].ended == "error"
    assert "the API answered 500: CUDA out of memory" in (results[unlucky].error or "")
    assert results[unreachable].ended == "error"
    assert "could not reach the API" in (results[unreachable].error or "")
    others = [r for n, r in results.items() if n not in (unlucky, unreachable)]
    assert others and all(r.ended == "ended" and len(r.actions) == 3 for r in others)

    db = sqlite3.connect(small_world / "world.db")
    try:
        ended = dict(db.execute("SELECT agent, ended FROM turns"))
    finally:
        db.close()
    assert ended[unlucky] == ended[unreachable] == "error"
    assert {ended[n] for n in profiles if n not in (unlucky, unreachable)} == {"ended"}


async def test_a_restart_resumes_each_agents_history_from_the_database(
    make_engine, small_world: Path
) -> None:
    profiles = await _profiles(small_world)
    api = ScriptedApi(otherwise=_model)
    async with make_engine(OpenAIMind(api.client(), profiles)) as engine:
        await engine.tick_once()
    first = {_agent_of(b): b for b in api.requests}  # each agent's last request of tick 0

    later = ScriptedApi(otherwise=_model)
    async with make_engine(OpenAIMind(later.client(), profiles)) as engine:
        await engine.tick_once()
    opening = [b for b in later.requests if b["messages"][-1]["role"] == "user"]
    assert sorted(_agent_of(b) for b in opening) == sorted(profiles)
    for body in opening:
        before = first[_agent_of(body)]["messages"]
        # Tick 1's first request begins with all of tick 0, then says what is seen now.
        assert len(body["messages"]) == len(before) + 2
        assert body["messages"][:len(before)] == before
