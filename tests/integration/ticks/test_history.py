"""HistoryReader on a real world: real ticks committed by the engine, read back read-only.

The positions every past tick must give are the ones the live world really had after
that tick, recorded as the ticks ran; the lines must be what the live feed narrated.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from core.types import Position
from engine import EngineRunner, HearthEngine
from observe.snapshot import FeedLine, feed_lines
from storage import Storage
from storage.errors import NotAWorldError, StorageError, WorldNotFoundError
from storage.history import NARRATED_EVENTS, HistoryReader, PastLine

TICKS = 8
DIRECTIONS = ("east", "north", "north", "west", "south", "east", "east", "north", "west")
"""Walks that do not come back to where they began within a few ticks."""


def _walker(start) -> list[tuple[str, dict]]:
    """Each agent walks a direction that changes with the tick (and differs by agent)."""
    turn = start.tick + sum(map(ord, start.agent))
    return [("walk", {"direction": DIRECTIONS[turn % len(DIRECTIONS)]})]


def _positions(engine: HearthEngine) -> dict[str, tuple[int, int]]:
    return {a.name: (a.position.x, a.position.y) for a in engine.sim.agents.get_all_agents()}


def _near_cell(engine: HearthEngine, name: str, steps: int) -> Position:
    """A cell a journey of exactly `steps` steps reaches from where `name` stands."""
    agents = engine.sim.agents
    here = agents.require(name).position
    for dx in range(-steps, steps + 1):
        for dy in range(-steps, steps + 1):
            there = Position(here.x + dx, here.y + dy)
            if not engine.sim.world.in_bounds(there) or not engine.sim.world.is_passable(there):
                continue
            path = agents.plan_path(here, there)
            if path is not None and len(path) == steps:
                return there
    raise AssertionError("no cell that far in the test world")


def _expected_lines(ctx) -> tuple[FeedLine, ...]:
    """The live feed's lines of a tick, its turns put in agent-name order (the turns
    table does not keep the order turns were taken in; each agent's own lines keep
    theirs)."""
    fed = feed_lines(ctx)
    happenings = [f for f in fed if f.kind in NARRATED_EVENTS]
    turns = sorted((f for f in fed if f.kind not in NARRATED_EVENTS), key=lambda f: f.agent)
    return tuple(happenings + turns)


@pytest.fixture
async def walked(make_engine, scripted):
    """Run TICKS ticks of walking (one agent journeying, one whose mind fails); yield
    (engine, positions after each tick, lines fed at each tick, the traveller)."""
    mind = scripted(_walker, fail_for=frozenset())
    async with make_engine(mind) as engine:
        names = sorted(_positions(engine))
        traveller, failing = names[0], names[-1]
        mind.fail_for = frozenset({failing})
        engine.sim.agents.start_journey(traveller, _near_cell(engine, traveller, 4))
        after: dict[int, dict[str, tuple[int, int]]] = {}
        lines: dict[int, tuple[PastLine, ...]] = {}
        for _ in range(TICKS):
            ctx = await engine.tick_once()
            assert ctx.completed
            after[ctx.tick] = _positions(engine)
            lines[ctx.tick] = _expected_lines(ctx)
        assert engine.tick == TICKS
        yield engine, after, lines, traveller


async def test_every_past_tick_gives_the_positions_the_world_had_then(walked) -> None:
    engine, after, _lines, traveller = walked
    live = _positions(engine)
    # The walk must actually move people about, and the journey must step on its own.
    assert len({tuple(sorted(p.items())) for p in after.values()}) >= TICKS - 1
    journey_ticks = [t for t in range(1, TICKS)
                     if after[t][traveller] != after[t - 1][traveller]]
    assert journey_ticks, "the traveller never moved"
    with HistoryReader(engine.storage.db_path) as reader:
        assert reader.first_tick() == 0
        for t in reversed(range(TICKS)):  # step back from the live end
            assert dict(reader.at(t, TICKS, live).positions) == after[t], t
        for t in range(TICKS):  # and forward again
            assert dict(reader.at(t, TICKS, live).positions) == after[t], t
        for t in (3, 7, 0, 5, 1, 6, 2, 4, 0, 7):  # jumps, near and far
            assert dict(reader.at(t, TICKS, live).positions) == after[t], t
    with HistoryReader(engine.storage.db_path) as fresh:  # a far jump with no cursor
        assert dict(fresh.at(1, TICKS, live).positions) == after[1]


async def test_journey_steps_are_undone_though_no_turn_was_taken(walked) -> None:
    """While journeying an agent takes no turn: its steps are stored only as the
    movement phase's agent_moved events, and those alone must place it."""
    engine, after, _lines, traveller = walked
    with sqlite3.connect(engine.storage.db_path) as conn:
        turned = {t for (t,) in conn.execute("SELECT tick FROM turns WHERE agent = ?",
                                             (traveller,))}
    carried = [t for t in range(1, TICKS)
               if t not in turned and after[t][traveller] != after[t - 1][traveller]]
    assert carried, "the traveller was never carried by its journey"
    with HistoryReader(engine.storage.db_path) as reader:
        for t in carried:
            assert reader.at(t, TICKS, _positions(engine)).positions[traveller] == \
                after[t][traveller]
            assert reader.at(t - 1, TICKS, _positions(engine)).positions[traveller] == \
                after[t - 1][traveller]


async def test_lines_are_what_the_feed_narrated_and_what_the_turns_recorded(walked) -> None:
    engine, _after, lines, traveller = walked
    live = _positions(engine)
    with HistoryReader(engine.storage.db_path) as reader:
        told = {t: tuple(FeedLine.from_past(p) for p in reader.at(t, TICKS, live).lines)
                for t in range(TICKS)}
    assert told == lines  # the deeds too ("walk north"), from the stored arguments
    every = [line for t in range(TICKS) for line in told[t]]
    assert any(line.kind == "walk" and line.ok for line in every)
    assert any(line.kind == "error" and not line.ok for line in every)
    assert any(line.kind in ("journey_completed", "journey_interrupted")
               and line.agent == traveller for line in every)
    with sqlite3.connect(engine.storage.db_path) as conn:  # the records, read directly
        for t in range(TICKS):
            acted = [(agent, a["tool"], a["text"], a["ok"])
                     for agent, record in conn.execute(
                         "SELECT agent, record FROM turns WHERE tick = ? ORDER BY agent", (t,))
                     for a in json.loads(record)["actions"]]
            assert [(x.agent, x.kind, x.text, x.ok) for x in told[t]
                    if x.kind != "error" and x.kind not in NARRATED_EVENTS] == acted


async def test_stepping_one_tick_reads_only_that_ticks_moves(walked) -> None:
    engine, after, _lines, _traveller = walked
    live = _positions(engine)
    with HistoryReader(engine.storage.db_path) as reader:
        reader.at(5, TICKS, live)
        statements: list[str] = []
        assert reader._conn is not None
        reader._conn.set_trace_callback(statements.append)
        assert dict(reader.at(4, TICKS, live).positions) == after[4]
        assert dict(reader.at(5, TICKS, live).positions) == after[5]
        moves = [s for s in statements if "agent_moved" in s]
        assert len(moves) == 2
        assert "tick > 4 AND tick <= 5" in moves[0]  # undo tick 5 only
        assert "tick > 4 AND tick <= 5" in moves[1]  # redo tick 5 only


async def test_ticks_outside_the_stored_range_are_refused(walked) -> None:
    engine, _after, _lines, _traveller = walked
    live = _positions(engine)
    with HistoryReader(engine.storage.db_path) as reader:
        with pytest.raises(ValueError, match="before the first stored tick"):
            reader.at(-1, TICKS, live)
        with pytest.raises(ValueError, match=f"live world is at tick {TICKS}"):
            reader.at(TICKS, TICKS, live)


async def test_a_world_with_no_ticks_has_no_history(small_world: Path) -> None:
    with HistoryReader(small_world / "world.db") as reader:
        assert reader.first_tick() is None
        with pytest.raises(ValueError, match="no tick is stored yet"):
            reader.at(0, 1, {})


async def test_the_connection_cannot_write(walked) -> None:
    engine, _after, _lines, _traveller = walked
    with HistoryReader(engine.storage.db_path) as reader:
        assert reader._conn is not None
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader._conn.execute(
                "INSERT INTO events (tick, agent, kind, data) VALUES (0, 'x', 'y', '{}')")


def test_a_missing_or_foreign_file_is_refused_with_its_name(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "world.db"
    with pytest.raises(WorldNotFoundError, match=str(missing)):
        HistoryReader(missing)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all " * 200)
    with pytest.raises(NotAWorldError, match=str(junk)):
        HistoryReader(junk)
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    with pytest.raises(StorageError, match=str(damaged)):
        HistoryReader(damaged)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (x)").connection.close()
    with pytest.raises(NotAWorldError, match="no stored history"):
        HistoryReader(other)


def _wait(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return False


def test_reading_while_the_engine_runs_ticks_in_its_own_thread(
    small_world: Path, config, scripted
) -> None:
    """The UI thread reads past ticks while the runner commits new ones; a cursor made
    at an older live tick still steps right once the world has gone on."""
    lock = threading.Lock()
    after: dict[int, dict[str, tuple[int, int]]] = {}
    live: list[tuple[int, Mapping[str, tuple[int, int]]]] = []

    async def make() -> HearthEngine:
        engine = await HearthEngine.open(
            Storage(small_world), config, mind=scripted(_walker, delay=0.02))
        return engine

    def record(ctx) -> None:  # on the engine thread, between ticks
        engine = runner.engine
        assert engine is not None
        with lock:
            after[ctx.tick] = _positions(engine)
            live.append((engine.tick, after[ctx.tick]))

    def latest() -> tuple[int, Mapping[str, tuple[int, int]]]:
        with lock:
            return live[-1]

    runner = EngineRunner(make)
    runner.on_tick(record)
    runner.start()
    reads = 0
    try:
        runner.request_run()
        assert _wait(lambda: len(live) >= 3)
        with HistoryReader(small_world / "world.db") as reader:
            first_live, first_positions = latest()
            held = first_live - 2
            reader.at(held, first_live, first_positions)  # the cursor, made now
            assert _wait(lambda: latest()[0] >= first_live + 3)
            now, positions = latest()
            for t in (held - 1, held + 1):  # steps from a cursor older than the live end
                if t >= 0:
                    assert dict(reader.at(t, now, positions).positions) == after[t]
                    reads += 1
            while reads < 60 or latest()[0] < first_live + 10:
                now, positions = latest()
                t = reads % now
                with lock:
                    expected = after[t]
                assert dict(reader.at(t, now, positions).positions) == expected, (t, now)
                reads += 1
                assert runner.is_running and runner.error is None
    finally:
        runner.request_pause()
        assert runner.stop(timeout=20)
    assert reads >= 60
