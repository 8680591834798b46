"""A model mind's memory rebuilt from its turns' records (issue 30: a fork's walk) equals
what the real mind held after every turn.

Real ClaudeMinds (the real anthropic SDK over the strict Messages stand-in, thinking on)
and OpenAIMinds (the real openai client over a scripted endpoint) live ticks of the
real engine on a small world with compaction limits small enough that histories are
folded into summaries every few turns; a turn may take two actions and the models at
times ask for two at once, so some turns end at the limit with their tool loop open
(the next one joins its perception to the results, and neither compacts nor drops
thinking then). The engine is closed and opened again halfway (memories read back).
After each tick every agent's state is taken from the mind itself; then, from the
stored turns alone, adapters/memory_rebuild.py rebuilds each agent's state turn by turn,
and it must be the same after every tick.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from adapters.claude_batches import BatchGate
from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind.history import history_problem
from adapters.claude_mind.levers import Levers, levers_of
from adapters.claude_models import check_models
from adapters.memory_rebuild import (
    CannotRebuild,
    MemoryLimits,
    after_turn,
)
from adapters.openai_mind import OpenAIMind, OpenAIProfile
from config import HearthConfig
from config.claude import ClaudeSettings
from core.types import AgentName
from services.mind import TurnStart
from storage import Storage
from tests.fake_openai import ScriptedApi, reply, tool_call
from tests.messages_standin import Plan, Request, StrictMessagesApi, simple_agent

SONNET = "claude-sonnet-5-5"
TODAY = datetime.date(2026, 11, 26)
LIMITS = {"compact_above_chars": 9_000, "keep_recent_chars": 3_000, "summary_max_chars": 900}
REBUILD = MemoryLimits(LIMITS["keep_recent_chars"], LIMITS["summary_max_chars"])
TICKS, RESTART = 14, 7


def _canonical(state: Any) -> str:
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _with_actions(config: HearthConfig, most: int) -> HearthConfig:
    scheduling = config.settings.scheduling.model_copy(update={"max_actions_per_turn": most})
    return dataclasses.replace(config, settings=config.settings.model_copy(
        update={"scheduling": scheduling}))


async def _live(make_engine, config: HearthConfig, mind: Any, names: list[str]
                ) -> list[dict[str, str]]:
    """The mind's state of every agent after each tick, as the engine stores it."""
    seen: list[dict[str, str]] = []
    for ticks in (RESTART, TICKS - RESTART):
        async with make_engine(mind, config=_with_actions(config, 2)) as engine:
            for _ in range(ticks):
                ctx = await engine.tick_once()
                assert ctx.completed, (engine.halted, ctx.errors)
                seen.append({n: _canonical(mind.get_state(AgentName(n))) for n in names})
    return seen


def _sometimes_twice(request: Request) -> Plan:
    """simple_agent, asking for a second action at once about a third of the time."""
    plan = simple_agent(request)
    if request.tools and request.fresh and len(plan.calls) == 1 \
            and request.rng("twice").random() < 0.35:
        return Plan(plan.thinking, plan.text, [*plan.calls, ("examine", {})])
    return plan


def _rebuilt(db: Path, kind: str, names: list[str]) -> tuple[list[dict[str, str]], list[dict]]:
    """Every agent's state after each tick, from the stored turns alone; and the records."""
    conn = sqlite3.connect(db)
    try:
        turns = {(int(t), str(a)): json.loads(r) for t, a, r in conn.execute(
            "SELECT tick, agent, record FROM turns WHERE mind = ?", (kind,))}
    finally:
        conn.close()
    state: dict[str, Any] = dict.fromkeys(names)
    out = []
    for tick in range(TICKS):
        for name in names:
            record = turns.get((tick, name))
            if record is not None:
                state[name] = after_turn(kind, state[name], record.get("mind"), REBUILD)
        out.append({n: _canonical(state[n] if state[n] is not None else
                                  {"messages": [], "summary": ""}) for n in names})
    return out, [r["mind"] for r in turns.values()]


async def _names(data: Path) -> list[str]:
    async with Storage(data) as storage:
        return sorted(a.name for a in await storage.agents.get_all_agents())


async def claude_over_standin(names: list[str], levers: Levers | None = None
                              ) -> tuple[StrictMessagesApi, ClaudeMind]:
    """Claude minds for `names` over the strict stand-in, with this file's small limits."""
    api = StrictMessagesApi(behaviour=_sometimes_twice)
    client = api.client()
    lineup = await check_models(client, {SONNET: names}, TODAY)
    return api, ClaudeMind(client, {n: ClaudeProfile(SONNET, "Curious.", "low")
                                    for n in names}, lineup=lineup, levers=levers, **LIMITS)


SHIPPED = levers_of(ClaudeSettings(), [SONNET])
"""settings.yaml's levers: results wait for the next turn, thinking kept, light thinking."""


@pytest.mark.parametrize(("levers", "economy"), [(None, False), (SHIPPED, False),
                                                 (SHIPPED, True)],
                         ids=["levers off", "shipped levers", "shipped levers, batches"])
async def test_claude_memories_rebuilt_from_the_records_are_the_minds_own(
        make_engine, small_world: Path, config: HearthConfig, levers: Levers | None,
        economy: bool) -> None:
    names = await _names(small_world)
    api, mind = await claude_over_standin(names, levers)
    if economy:  # `--run --economy`: every request of a step in one Message Batch
        mind.batches = BatchGate(poll_seconds=0.01, gather_seconds=0.01)
    lived = await _live(make_engine, config, mind, names)
    assert api.refused == []
    if economy:
        assert api.served and all(s.batch for s in api.served)
        assert mind.batches is not None and mind.batches.sent_requests == len(api.served)
    if levers is not None:  # results waited for the next turn, and thinking was kept
        turns = _rebuilt(small_world / "world.db", "claude", names)[1]
        later = [r for r in turns if r.get("results") == "next_turn"]
        assert later and all(len(r["requests"]) == 1 for r in later)  # no request to hear
        assert all(r.get("thinking") == "kept" for r in turns if r)
        # A turn whose calls asked to learn something (examine) heard it within the turn.
        asked = [r for r in turns if any(b.get("name") == "examine" for m in r["messages"]
                                         for b in m["content"] if b.get("type") == "tool_use")]
        assert asked and all(r.get("results") != "next_turn" for r in asked)

    rebuilt, records = _rebuilt(small_world / "world.db", "claude", names)
    for tick, (want, got) in enumerate(zip(lived, rebuilt, strict=True)):
        assert got == want, f"tick {tick}"
    # What the rebuild had to follow happened: folding (at a closed and after an open
    # loop), thinking kept in the records and dropped later, perceptions joining results.
    assert any(r.get("folded") for r in records)
    thought = [r for r in records if any(b.get("type") == "thinking" for m in r["messages"]
                                         for b in m["content"])]
    kept = sum(lived[-1][n].count('"type":"thinking"') for n in names)
    assert thought and kept < len(thought)  # the records keep what the memory dropped
    assert any(m["role"] == "user" and any(b["type"] == "tool_result" for b in m["content"])
               and m["content"][-1]["type"] == "text"
               for r in records for m in r["messages"][:1])
    conn = sqlite3.connect(small_world / "world.db")
    try:
        rows = {a: (k, s) for a, k, s in conn.execute("SELECT agent, kind, state FROM minds")}
    finally:
        conn.close()
    assert rows == {n: ("claude", lived[-1][n]) for n in names}


def _local_model(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "user":  # a perception: act, twice
        return reply("Off I go, with a few words to remember it by.", calls=[
            tool_call("walk", direction="north"), tool_call("walk", direction="east")])
    return reply("Enough for now.")


async def test_local_model_memories_rebuilt_from_the_records_are_the_minds_own(
        make_engine, small_world: Path, config: HearthConfig) -> None:
    names = await _names(small_world)
    api = ScriptedApi(otherwise=_local_model)
    mind = OpenAIMind(api.client(), {n: OpenAIProfile("local-test", "Curious.") for n in names},
                      **LIMITS)
    lived = await _live(make_engine, config, mind, names)
    rebuilt, records = _rebuilt(small_world / "world.db", "local", names)
    for tick, (want, got) in enumerate(zip(lived, rebuilt, strict=True)):
        assert got == want, f"tick {tick}"
    assert any(r.get("folded") for r in records)


def _start(agent: str, tick: int) -> TurnStart:
    return TurnStart(AgentName(agent), tick, None, (), 8)  # type: ignore[arg-type]


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _open_history(turns: int) -> list[dict[str, Any]]:
    """Turns of a perception, a reply thinking and calling, and its result; the last
    turn's loop left open (its result is the newest message)."""
    history: list[dict[str, Any]] = []
    for i in range(turns):
        history += [
            _text("user", f"It is day 1, tick {i}. You stand in a meadow. " + "grass " * 60),
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm " * 40, "signature": f"sig{i}"},
                {"type": "text", "text": "I'll walk north."},
                {"type": "tool_use", "id": f"t{i}", "name": "walk",
                 "input": {"direction": "north"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                          "content": "You walk north. " * 10}]},
        ]
    return history


def test_a_full_context_under_an_open_loop_folds_as_the_mind_does() -> None:
    """The case the record alone does not fix: the model said its context was full
    while a tool loop was open (squeeze_next), so the turn's start keeps half as much
    and folds the rest of the loop whole. The real ClaudeMind's begin against the
    rebuild's (no request is made: begin only prepares the history)."""
    mind = ClaudeMind(None, {"Ember": ClaudeProfile(SONNET, "Curious.")},  # type: ignore[arg-type]
                      **LIMITS)
    before = {"messages": _open_history(12), "summary": ""}
    mind.set_state(AgentName("Ember"), before)
    mind.memory.squeeze_next("Ember")
    turn = mind.begin(_start("Ember", 12))
    assert turn.folded == len(before["messages"])
    state = json.loads(_canonical(mind.get_state(AgentName("Ember"))))
    opening = [*state["messages"][-1]["content"], {"type": "text", "text": "Now."}]
    record = {"mind": "claude", "messages": [{"role": "user", "content": opening}],
              "folded": turn.folded}
    want = {"messages": [*state["messages"][:-1], {"role": "user", "content": opening}],
            "summary": state["summary"]}
    assert after_turn("claude", before, record, REBUILD) == want
    assert want["summary"]  # something was folded into it

    # Without the squeeze the mind folds nothing while the loop is open, nor drops thinking.
    mind.set_state(AgentName("Ember"), before)
    assert mind.begin(_start("Ember", 13)).folded == 0
    record = {"mind": "claude", "messages": [{"role": "user", "content": [
        *before["messages"][-1]["content"], {"type": "text", "text": "Now."}]}]}
    after = after_turn("claude", before, record, REBUILD)
    assert after["messages"][:-1] == before["messages"][:-1]  # thinking kept, loop open


@pytest.mark.parametrize(("closed", "record", "why"), [
    (True, {"mind": "claude", "model": SONNET}, "holds no messages"),
    (True, None, "holds no record of its mind"),
    (True, {"mind": "local", "messages": []}, "kind 'local'"),
    (True, {"mind": "claude", "messages": [_text("user", "Now.")], "folded": 2},
     "do not end a whole turn"),
    (True, {"mind": "claude", "messages": [_text("user", "Now.")], "folded": 99},
     "folded 99 of"),
    (True, {"mind": "claude", "messages": [_text("assistant", "Hm.")]}, "perception"),
    (False, {"mind": "claude", "messages": [_text("user", "Now.")]}, "does not continue"),
    (False, {"mind": "claude", "messages": [_text("user", "Now.")], "folded": 2},
     "limits fold 9"),
])
def test_a_record_that_cannot_say_what_the_memory_became_is_refused(
        closed: bool, record: dict[str, Any] | None, why: str) -> None:
    history = _open_history(3)
    before = {"messages": [*history, _text("assistant", "Done.")] if closed else history,
              "summary": ""}
    with pytest.raises(CannotRebuild, match=why):
        after_turn("claude", before, record, REBUILD)


def test_a_turn_the_mind_never_began_leaves_the_memory_and_a_bad_one_starts_afresh() -> None:
    before = {"messages": _open_history(1), "summary": "s"}
    assert after_turn("claude", before, {}, REBUILD) == before
    assert after_turn("claude", {"messages": "damaged"}, {
        "mind": "claude", "messages": [_text("user", "Now.")]}, REBUILD) == {
        "messages": [_text("user", "Now.")], "summary": ""}


@pytest.mark.parametrize("messages", [
    None, "x", [], [{"role": "system", "content": [{"type": "text"}]}],
    [{"role": "user", "content": []}], [{"role": "user", "content": "text"}],
    [{"role": "user", "content": [{"text": "no type"}]}], [{"role": "user", "content": [1]}],
    [_text("user", "fine"), _text("assistant", "fine too")], ["not a message"],
])
def test_a_history_claude_cannot_be_sent_is_refused(messages: Any) -> None:
    fine = messages in ([], [_text("user", "fine"), _text("assistant", "fine too")])
    assert (history_problem(messages) is None) == fine
