"""The replay mind rebuilding a Claude mind's memory from stored turns (issue 30), against a
real (small) SQLite file: turn by turn while the records allow, as found when one does
not (with a line saying why), and the source's own from the turn it last stored it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from adapters.memory_rebuild import MemoryLimits
from adapters.replay_mind import RecordedTurns, ReplayMind
from core.types import AgentName
from services.mind import ToolOutcome, TurnStart
from tests.integration.test_replay_mind import RECORDS

LIMITS = MemoryLimits(3_000, 900)
EMBER = AgentName("Ember")


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _turn(tick: int) -> list[dict[str, Any]]:
    """A turn's messages: the perception, a reply thinking and calling, the result, and
    the reply that ends the turn."""
    return [_text("user", f"It is tick {tick}."),
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": f"s{tick}"},
                {"type": "tool_use", "id": f"t{tick}", "name": "walk",
                 "input": {"direction": "north"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{tick}",
                                          "content": "You walk north."}]},
            _text("assistant", "Done.")]


def _source(tmp_path: Path, last: dict[str, Any], *, damaged: int | None = None
            ) -> RecordedTurns:
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    conn.executescript(RECORDS)
    walk = {"tool": "walk", "args": {"direction": "north"}, "ok": True, "text": "You walk."}
    for tick in (3, 4, 5):
        mind: dict[str, Any] = {"mind": "claude", "model": "m", "messages": _turn(tick)}
        if tick == damaged:
            del mind["messages"]
        conn.execute("INSERT INTO turns VALUES (?, 'Ember', 'claude', 1, 'ended', ?)",
                     (tick, json.dumps({"actions": [walk], "mind": mind})))
    conn.execute("INSERT INTO minds VALUES ('Ember', 'claude', ?, 5)", (json.dumps(last),))
    conn.commit()
    conn.close()
    return RecordedTurns(db)


async def _take(mind: ReplayMind, tick: int) -> None:
    turn = mind.begin(TurnStart(EMBER, tick, None, (), 8))  # type: ignore[arg-type]
    calls = await turn.next_calls(())
    assert list(await turn.next_calls([ToolOutcome(calls[0].id, "walk", True, "")])) == []
    await turn.finish((), "ended")


def _without_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**m, "content": [b for b in m["content"] if b["type"] != "thinking"]}
            for m in messages]


async def test_each_turn_rebuilds_the_memory_and_the_source_has_the_last_word(
        tmp_path: Path) -> None:
    found = {"messages": [], "summary": ""}
    mind = ReplayMind("claude", _source(tmp_path, {"messages": ["theirs"]}),
                      {"Ember": json.dumps(found)}, limits=LIMITS)
    await _take(mind, 3)
    assert mind.get_state(EMBER) == {"messages": _turn(3), "summary": ""}
    await _take(mind, 4)  # the turn before's thinking is dropped as the turn begins
    assert mind.get_state(EMBER) == {
        "messages": _without_thinking(_turn(3)) + _turn(4), "summary": ""}
    await _take(mind, 5)  # the tick the source last stored the memory: its own
    assert mind.get_state(EMBER) == {"messages": ["theirs"]}
    assert mind.not_rebuilt == {}


async def test_a_record_without_messages_keeps_the_memory_as_found_and_says_so(
        tmp_path: Path) -> None:
    found = json.dumps({"messages": [_text("user", "Before."), _text("assistant", "Hm.")],
                        "summary": "old"})
    mind = ReplayMind("claude", _source(tmp_path, {"messages": ["theirs"]}, damaged=4),
                      {"Ember": found}, limits=LIMITS)
    await _take(mind, 3)
    assert mind.get_state(EMBER)["messages"][2:] == _turn(3)
    await _take(mind, 4)
    assert mind.state_json(EMBER) == found  # as found, not half rebuilt
    assert mind.not_rebuilt == {"Ember": "its turn at tick 4 holds no messages to rebuild "
                                         "the memory from (a record older than them, or "
                                         "damaged)"}
    await _take(mind, 5)  # no more rebuilding; then the source's, exact again
    assert mind.get_state(EMBER) == {"messages": ["theirs"]} and mind.not_rebuilt == {}


async def test_without_limits_or_for_an_offline_mind_nothing_is_rebuilt(
        tmp_path: Path) -> None:
    source = _source(tmp_path, {"messages": ["theirs"]})
    for mind in (ReplayMind("claude", source, {"Ember": '{"said":1}'}),
                 ReplayMind("offline", source, {"Ember": '{"said":1}'}, limits=LIMITS)):
        await _take(mind, 3)
        assert mind.state_json(EMBER) == '{"said":1}' and mind.not_rebuilt == {}
