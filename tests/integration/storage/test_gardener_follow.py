"""A SqliteHealthSource kept from cycle to cycle answers as a fresh one would.

The Gardener keeps one source for its whole run, and the source remembers what it
has read of the events and turns (storage.health_memo), reading only what the engine
committed since. Here the real engine lives a small world with offline minds while
sources are kept beside it: at the end of every tick, and in the middle of ticks
(from inside a mind's turn, when some of the tick's turns are committed and others
are not), each kept source's answers are checked against the same figures
worked out again row by row in plain Python (reference_history).

Three kept sources ask the way a Gardener might: every tick with a sliding window,
only now and then (a gap longer than the window), and with spans that jump back and
forth (each jump back must make it read afresh).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.offline_mind import OfflineMind
from config import load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from services.world_setup import create_world
from storage import Storage
from storage.gardener_source import SqliteHealthSource
from tests.integration.storage import reference_history as reference

SEED = 23
SIZE = (36, 30)
AGENTS = 6
TICKS = 40
"""Ticks lived: 8 o'clock to midnight, so the agents meet, build and lie down to sleep."""
FOREVER = 2**62
WAIT = 0.15
"""Seconds a waiting turn waits: well past the committer's longest delay (50 ms)."""


def _read_only(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)


def _answers(source: SqliteHealthSource, now: int, window: int,
             horizon: int) -> dict[str, Any]:
    """Everything a cycle asks of the history, over the given spans."""
    since = max(0, now - window)
    return {
        "social": source.last_social_ticks(max(0, now - horizon)),
        "finished": source.action_counts(since, now),
        "with the tick in progress": source.action_counts(since),
        "changes": source.lasting_changes(since, now),
        "all changes since": source.lasting_changes(since),
        "asleep": source.asleep_ticks(since, now),
    }


def _reference(table: sqlite3.Connection, now: int, window: int,
               horizon: int) -> dict[str, Any]:
    """The same, worked out from every row in plain Python."""
    since = max(0, now - window)
    return {
        "social": reference.last_social(table, max(0, now - horizon)),
        "finished": reference.actions(table, since, now),
        "with the tick in progress": reference.actions(table, since, FOREVER),
        "changes": reference.lasting_changes(table, since, now),
        "all changes since": reference.lasting_changes(table, since, FOREVER),
        "asleep": reference.asleep(table, since, now),
    }


@dataclass
class _Watch:
    """Kept sources, and how many times each was checked against a fresh one."""

    db: Path
    every_tick: SqliteHealthSource
    now_and_then: SqliteHealthSource
    jumping: SqliteHealthSource
    conns: list[sqlite3.Connection] = field(default_factory=list)
    checks: int = 0
    mid_tick: int = 0
    partial_turns: int = 0
    """Looks from inside a tick that already had some of its turns written."""
    differences: list[str] = field(default_factory=list)

    def check(self, during_tick: bool) -> None:
        table = _read_only(self.db)
        try:
            now = table.execute("SELECT tick FROM world_state").fetchone()[0]
            asked = [(self.every_tick, 8, 20)]
            if now % 7 == 0:  # a gap of 7 ticks, longer than its window of 5
                asked.append((self.now_and_then, 5, 9))
            jump = (3, 30) if now % 2 else (12, 6)  # back and forth every tick
            asked.append((self.jumping, *jump))
            for kept, window, horizon in asked:
                got = _answers(kept, now, window, horizon)
                expected = _reference(table, now, window, horizon)
                for what, value in expected.items():
                    if got[what] != value:
                        self.differences.append(
                            f"tick {now} ({'mid-tick' if during_tick else 'end'}), window "
                            f"{window}, horizon {horizon}: {what} {got[what]} != {value}")
                self.checks += 1
            self.mid_tick += during_tick
            self.partial_turns += during_tick and bool(table.execute(
                "SELECT COUNT(*) FROM turns WHERE tick = ?", (now,)).fetchone()[0])
        finally:
            table.close()


class _Waiting:
    """An offline turn that first waits a little, as a language model's would, then
    checks the kept sources: meanwhile the other agents' turns finish and the
    engine's commit task writes them (after its longest delay), so the check looks
    at a tick that is half written."""

    def __init__(self, turn: Any, watch: _Watch) -> None:
        self.turn, self.watch, self.waited = turn, watch, False

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        if not self.waited:
            self.waited = True
            await asyncio.sleep(WAIT)
            self.watch.check(during_tick=True)
        return await self.turn.next_calls(outcomes)

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        await self.turn.finish(outcomes, reason)

    def record(self) -> Mapping[str, Any]:
        return self.turn.record()


class _Checking(MindDefaults):
    """The offline mind, with a check of the kept sources at the start of every
    third agent's turn; on every fourth tick that agent waits first (_Waiting)."""

    kind = "offline"
    reads_text = False
    answers_at_once = False

    def __init__(self, offline: OfflineMind, watch: _Watch, names: list[str]) -> None:
        self.offline, self.watch, self.names = offline, watch, names

    def begin(self, start: TurnStart):
        turn = self.offline.begin(start)
        if self.names.index(start.agent) % 3 != 2:
            return turn
        if start.tick % 4 == 0:
            return _Waiting(turn, self.watch)
        self.watch.check(during_tick=True)
        return turn

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return self.offline.get_state(agent)

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        self.offline.set_state(agent, state)


async def _live(base: Path) -> _Watch:
    config = load_config(None)
    data = base / "data"
    async with Storage(data) as storage:
        await create_world(storage, config, seed=SEED, size=SIZE, agent_count=AGENTS)
        state = await storage.world.get_world_state()
        people = sorted(await storage.agents.get_all_agents(), key=lambda a: a.name)
    db = data / "world.db"
    conns = [_read_only(db) for _ in range(3)]
    watch = _Watch(db, *(SqliteHealthSource(conn) for conn in conns), conns=conns)
    offline = OfflineMind(state.seed, {a.name: a.personality for a in people})
    storage = Storage(data)
    engine = await HearthEngine.open(storage, config,
                          mind=_Checking(offline, watch, [a.name for a in people]),
                          agents_dir=base / "agents")
    try:
        for _ in range(TICKS):
            assert (await engine.tick_once()).completed
            watch.check(during_tick=False)
    finally:
        await engine.close()
        await storage.close()
    return watch


@pytest.fixture(scope="module")
def watch(tmp_path_factory: pytest.TempPathFactory):
    watched = asyncio.run(_live(tmp_path_factory.mktemp("follow")))
    yield watched
    for conn in watched.conns:
        conn.close()


def test_kept_sources_answer_as_fresh_ones_do(watch: _Watch) -> None:
    assert watch.differences == []
    assert watch.mid_tick >= TICKS  # every tick was looked at from inside it too
    assert watch.partial_turns > 0  # ...and some of those looks saw half a tick written
    assert watch.checks >= 2 * (TICKS + watch.mid_tick)


def test_the_world_lived_had_the_history_being_followed(watch: _Watch) -> None:
    """The comparison means something only if there was history to follow."""
    conn = _read_only(watch.db)
    try:
        kinds = {kind for (kind,) in conn.execute("SELECT DISTINCT kind FROM events")}
        turns = conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
    finally:
        conn.close()
    assert {"agent_slept", "agent_woke"} <= kinds
    assert kinds & {"conversation_started", "invitation_sent", "conversation_turn"}
    assert kinds & {"item_crafted", "wall_placed", "sign_written", "place_named"}
    assert turns >= AGENTS * TICKS // 2  # awake by day, asleep from late evening


def test_a_history_that_shrank_is_read_again(watch: _Watch, tmp_path: Path) -> None:
    """Events gone from under a kept source (a file replaced or rewritten by hand):
    it notices the newest event is older than what it saw, and reads from scratch."""
    db = tmp_path / "world.db"
    with sqlite3.connect(watch.db) as original, sqlite3.connect(db) as copy:
        original.backup(copy)
    kept_conn = _read_only(db)
    try:
        kept = SqliteHealthSource(kept_conn)
        before = _answers(kept, TICKS, 30, 40)
        assert before["social"] and before["changes"]
        with sqlite3.connect(db) as writer:
            writer.execute("DELETE FROM events WHERE tick >= ?", (TICKS - 20,))
        expected = _reference(kept_conn, TICKS, 30, 40)
        assert expected != before
        assert _answers(kept, TICKS, 30, 40) == expected
    finally:
        kept_conn.close()
