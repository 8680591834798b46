"""A tick of Claude minds end to end: the real engine, world, SQLite and anthropic SDK;
only the Messages API is scripted (httpx2.MockTransport).

Each agent's model walks north, tries a tool that does not exist and one with input
that makes no sense, hears all three outcomes in one message, and ends its turn.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from adapters.claude_calls import CallPolicy
from adapters.claude_mind import ClaudeMind, ClaudeProfile
from storage import Storage
from tests.fake_anthropic import ScriptedApi, error, reply, text, tool_use


def _agent_of(body: dict[str, Any]) -> str:
    return body["system"][0]["text"].split(".", 1)[0].removeprefix("You are ")


def _model(body: dict[str, Any]) -> dict[str, Any]:
    """What every agent's model does: three calls on seeing the world, then rest."""
    last = body["messages"][-1]["content"]
    if last[-1]["type"] == "text":  # a perception: act
        return reply(text("Let me look around."),
                     tool_use("walk", direction="north"),
                     tool_use("fly_away"),
                     tool_use("gather", direction="upwards-ish"))
    return reply(text("Enough for now."))


async def _profiles(data: Path) -> dict[str, ClaudeProfile]:
    async with Storage(data) as storage:
        agents = await storage.agents.get_all_agents()
    return {a.name: ClaudeProfile("claude-test", a.personality) for a in agents}


async def test_a_tick_of_claude_minds_runs_end_to_end(make_engine, small_world: Path) -> None:
    profiles = await _profiles(small_world)
    api = ScriptedApi(otherwise=_model)
    async with make_engine(ClaudeMind(api.client(), profiles)) as engine:
        ctx = await engine.tick_once()

    assert ctx.completed
    assert sorted(ctx.turn_results) == sorted(profiles)
    assert {r.mind for r in ctx.turn_results.values()} == {"claude"}
    assert sorted(_agent_of(b) for b in api.requests) == sorted(2 * list(profiles))

    answers = [b["messages"][-1]["content"] for b in api.requests
               if b["messages"][-1]["content"][0]["type"] == "tool_result"]
    assert len(answers) == len(profiles)
    for results in answers:
        walk, unknown, nonsense = results
        assert "is_error" not in walk or not walk["is_error"]
        assert unknown["is_error"] and "fly_away" in unknown["content"]
        assert nonsense["is_error"] and nonsense["content"].strip()

    db = sqlite3.connect(small_world / "world.db")
    try:
        turns = db.execute("SELECT agent, mind, actions, record FROM turns").fetchall()
        minds = dict(db.execute("SELECT agent, state FROM minds WHERE kind = 'claude'"))
        walked = db.execute("SELECT COUNT(*) FROM events WHERE kind = 'agent_moved'").fetchone()
    finally:
        db.close()
    assert sorted(t[0] for t in turns) == sorted(profiles)
    assert all(t[1] == "claude" and t[2] == 3 for t in turns)
    for _, _, _, record in turns:
        kept = json.loads(record)["mind"]["messages"]
        assert [m["role"] for m in kept] == ["user", "assistant", "user", "assistant"]
    assert set(minds) == set(profiles)
    assert all(len(json.loads(s)["messages"]) == 4 for s in minds.values())
    assert walked[0] >= 1


async def test_one_agents_failing_api_leaves_the_tick_to_everyone_else(
    make_engine, small_world: Path
) -> None:
    profiles = await _profiles(small_world)
    unlucky = sorted(profiles)[0]

    def model(body: dict[str, Any]) -> Any:
        if _agent_of(body) == unlucky:
            return error(500, "api_error", "Internal server error")
        return _model(body)

    api = ScriptedApi(otherwise=model)
    fast = CallPolicy(backoff=0.01)  # every retry made, each waited a hundredth of a second
    async with make_engine(ClaudeMind(api.client(), profiles, policy=fast)) as engine:
        ctx = await engine.tick_once()
    results = dict(ctx.turn_results)
    assert ctx.completed and set(results) == set(profiles)
    assert results[unlucky].ended == "error"
    assert "the API answered 500" in (results[unlucky].error or "")
    assert all(r.ended != "error" for n, r in results.items() if n != unlucky)


async def test_a_restart_resumes_each_agents_history_from_the_database(
    make_engine, small_world: Path
) -> None:
    profiles = await _profiles(small_world)
    api = ScriptedApi(otherwise=_model)
    async with make_engine(ClaudeMind(api.client(), profiles)) as engine:
        await engine.tick_once()
    first = {_agent_of(b): b for b in api.requests}  # each agent's last request of tick 0

    later = ScriptedApi(otherwise=_model)
    async with make_engine(ClaudeMind(later.client(), profiles)) as engine:
        await engine.tick_once()
    for body in later.requests:
        if body["messages"][-1]["content"][-1]["type"] != "text":
            continue
        before = first[_agent_of(body)]["messages"]
        # Tick 1's first request begins with all of tick 0, then says what is seen now.
        assert len(body["messages"]) == len(before) + 2
        assert [m["role"] for m in body["messages"][:len(before)]] == [
            m["role"] for m in before]
        assert body["messages"][0] == before[0]


async def test_a_small_model_retells_the_scene_and_its_cost_is_kept_with_the_turn(
    make_engine, small_world: Path
) -> None:
    from adapters.claude_mind.narrator import ModelNarrator

    profiles = await _profiles(small_world)

    def model(body: dict[str, Any]) -> Any:
        asked = body["messages"][-1]["content"]
        if isinstance(asked, str):  # the narrator: what is seen, retold with every fact
            seen = asked.split("What is seen: ", 1)[-1]
            return reply(text(f"A hush over everything. {seen}"), input_tokens=80)
        return _model(body)

    api = ScriptedApi(otherwise=model)
    client = api.client()
    narrator = ModelNarrator(client, "claude-haiku-4-5", speakers=profiles)
    async with make_engine(ClaudeMind(client, profiles), narrator=narrator,
                           scene_narrator=narrator) as engine:
        await engine.tick_once()
    firsts = [b for b in api.requests if isinstance(b["messages"][-1]["content"], list)
              and b["messages"][-1]["content"][-1]["type"] == "text"]
    assert len(firsts) == len(profiles)
    assert all("A hush over everything." in b["messages"][-1]["content"][-1]["text"]
               for b in firsts)
    db = sqlite3.connect(small_world / "world.db")
    try:
        records = [json.loads(r) for (r,) in db.execute("SELECT record FROM turns")]
    finally:
        db.close()
    for record in records:
        assert record["narration"]["model"] == "claude-haiku-4-5"
        assert record["narration"]["requests"][0]["usage"]["input"] == 80
