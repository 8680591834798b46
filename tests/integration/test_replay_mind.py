"""The replay mind against a real (small) SQLite file holding stored turns (issue 30)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters.replay_mind import OVER_THE_LIMIT, RecordedTurns, ReplayMind, ReplayNarrator
from core.types import AgentName
from services.mind import MindError, MindHalt, ToolOutcome, TurnStart

RECORDS = (
    "CREATE TABLE world_state (id INTEGER PRIMARY KEY, tick INTEGER);"
    "INSERT INTO world_state VALUES (1, 9);"
    "CREATE TABLE turns (tick INTEGER, agent TEXT, mind TEXT, actions INTEGER, "
    "ended TEXT, record TEXT, PRIMARY KEY (tick, agent));"
    "CREATE TABLE minds (agent TEXT PRIMARY KEY, kind TEXT, state TEXT, tick INTEGER);")
"""The tables a replay mind reads from its source world, its clock at tick 9."""


def _source(tmp_path: Path) -> RecordedTurns:
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    conn.executescript(RECORDS)
    walk = {"tool": "walk", "args": {"direction": "north"}, "ok": True, "text": "You walk."}
    note = {"tool": "append_file", "args": {"path": "notes.md", "text": "x"}, "ok": True,
            "text": "Added."}
    rows = [
        (3, "Ember", "claude", 2, "action_limit",
         {"actions": [walk, note], "mind": {"mind": "claude", "model": "m"},
          "narration": {"usd": 0.001}}),
        (4, "Ember", "claude", 1, "error",
         {"actions": [walk], "error": "the API kept failing", "mind": {}}),
        (5, "Ember", "claude", 1, "ended", {"actions": [walk], "mind": {}}),
    ]
    conn.executemany("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?)",
                     [(t, a, m, n, e, json.dumps(r)) for t, a, m, n, e, r in rows])
    conn.execute("INSERT INTO minds VALUES ('Ember', 'claude', '{\"said\":2}', 5)")
    conn.commit()
    conn.close()
    return RecordedTurns(db)


def _start(tick: int) -> TurnStart:
    return TurnStart(AgentName("Ember"), tick, None, (), 2)  # type: ignore[arg-type]


async def test_a_turn_at_the_limit_is_given_back_call_for_call(tmp_path: Path) -> None:
    mind = ReplayMind("claude", _source(tmp_path), {"Ember": '{"said":1}'})
    turn = mind.begin(_start(3))
    calls = await turn.next_calls(())
    assert [(c.name, dict(c.arguments)) for c in calls] == [
        ("walk", {"direction": "north"}), ("append_file", {"path": "notes.md", "text": "x"})]
    outcomes = [ToolOutcome(c.id, c.name, True, "") for c in calls]
    assert list(await turn.next_calls(outcomes)) == [OVER_THE_LIMIT]  # ends at the limit
    assert turn.record() == {"mind": "claude", "model": "m"}
    assert mind.state_json(AgentName("Ember")) == '{"said":1}'  # not the source's last yet


async def test_an_error_is_told_again_and_the_last_memory_taken(tmp_path: Path) -> None:
    mind = ReplayMind("claude", _source(tmp_path), {"Ember": '{"said":1}'})
    turn = mind.begin(_start(4))
    calls = await turn.next_calls(())
    with pytest.raises(MindError, match="the API kept failing"):
        await turn.next_calls([ToolOutcome(calls[0].id, "walk", True, "")])
    turn = mind.begin(_start(5))
    calls = await turn.next_calls(())
    assert list(await turn.next_calls([ToolOutcome(calls[0].id, "walk", True, "")])) == []
    assert mind.get_state(AgentName("Ember")) == {"said": 2}  # the source's, at its tick


async def test_no_record_or_another_outcome_stops_the_replay(tmp_path: Path) -> None:
    mind = ReplayMind("claude", _source(tmp_path))
    with pytest.raises(MindHalt, match="no recorded turn of Ember at tick 7"):
        await mind.begin(_start(7)).next_calls(())
    turn = mind.begin(_start(5))
    calls = await turn.next_calls(())
    with pytest.raises(MindHalt, match="left the record"):
        await turn.next_calls([ToolOutcome(calls[0].id, "walk", False, "blocked")])


def test_the_narrator_gives_back_the_recorded_words_and_spend_once(tmp_path: Path) -> None:
    narrator = ReplayNarrator(_source(tmp_path))
    ctx = SimpleNamespace(agent="Ember", tick=3)
    assert narrator.narrate_now(SimpleNamespace(success=True), ctx) == "You walk."  # type: ignore[arg-type]
    assert narrator.take_spend("Ember") == {"usd": 0.001}
    assert narrator.take_spend("Ember") is None
