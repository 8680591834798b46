"""The pieces of the observer that only watches (observe/watching.py): the feed read
from stored rows, snapshots of a world loaded afresh, who holds the world, the header."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from config import load_config
from core.terrain import Terrain
from core.types import Direction, Position
from observe.api import RunState
from observe.snapshot import FeedLine, SnapshotMaker
from observe.tui.widgets.header import run_words
from observe.watching import LoadedWorld, StoredLines, changer, load_world
from services.world_setup import create_world
from storage import Storage
from storage.history import HistoryReader


async def _world(data: Path, *, agents: int = 3) -> Path:
    async with Storage(data) as storage:
        await create_world(storage, load_config(None), seed=5, size=(24, 20),
                           agent_count=agents)
    return data / "world.db"


def _turn(db: Path, tick: int, agent: str, *texts: str) -> None:
    record = {"actions": [{"tool": "walk", "text": t, "ok": True} for t in texts]}
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO turns (tick, agent, mind, actions, ended, record) "
                     "VALUES (?, ?, 'offline', ?, 'done', ?)",
                     (tick, agent, len(texts), json.dumps(record)))
    conn.close()


def _event(db: Path, tick: int, kind: str, data: dict) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO events (tick, agent, kind, data) VALUES (?, NULL, ?, ?)",
                     (tick, kind, json.dumps(data)))
    conn.close()


async def test_stored_lines_come_once_each_and_the_tick_in_progress_as_it_commits(
    tmp_path: Path,
) -> None:
    db = await _world(tmp_path / "data")
    _turn(db, 3, "Ember", "Ember walks.", "Ember walks.")  # the same words twice
    _turn(db, 5, "Sage", "Sage looks.")
    with HistoryReader(db) as history:
        stored = StoredLines(history, recall=2)
        first = stored.take(5)  # ticks 3 and 4 whole, and what tick 5 has so far
        assert [(line.tick, line.text) for line in first] == [
            (3, "Ember walks."), (3, "Ember walks."), (5, "Sage looks.")]
        assert stored.take(5) == []  # nothing new
        _turn(db, 5, "Ember", "Ember sleeps.")  # another turn of tick 5 commits
        _event(db, 6, "weather_changed", {"weather": "rainy"})
        _turn(db, 5, "River", "River walks.")
        later = stored.take(6)
        assert [(line.tick, line.agent, line.text) for line in later] == [
            (5, "Ember", "Ember sleeps."), (5, "River", "River walks."),
            (6, None, "The weather turns rainy.")]
        assert stored.take(6) == []
        # After a long gap only the last `most` ticks are read.
        _turn(db, 300, "Sage", "Sage wakes.")
        _turn(db, 100, "Sage", "too old to show")
        assert [line.text for line in stored.take(300)] == ["Sage wakes."]


async def test_a_world_loaded_afresh_redraws_only_the_rows_that_changed(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    await _world(data)
    config = load_config(None)
    async with Storage(data, create=False, read_only=True) as storage:
        worlds = [await load_world(storage, config) for _ in range(3)]
    assert all(isinstance(w, LoadedWorld) for w in worlds) and worlds[0].tick == 0
    maker = SnapshotMaker()
    first = maker.make(worlds[0])
    assert first.changed_rows is None
    assert first.agents[0].mind.startswith("not known yet")  # no turn stored yet

    same = maker.make(worlds[1])  # another load of the same world: nothing to redraw
    assert same.changed_rows == frozenset()
    assert same.terrain is first.terrain and same.wall_south is first.wall_south

    world = worlds[2].sim.world
    spot = next(Position(x, 7) for x in range(world.width)
                if world.terrain_at(Position(x, 7)) != Terrain.STONE)
    world.set_terrain(spot, Terrain.STONE)
    world.place_wall(Position(4, 12), Direction.SOUTH)
    changed = maker.make(worlds[2])
    assert changed.terrain is not same.terrain and not changed.terrain.flags.writeable
    assert not np.array_equal(changed.wall_south, same.wall_south)
    assert changed.changed_rows == {7, 11, 12, 13}


async def test_activity_comes_from_the_lines_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await _world(data, agents=1)
    async with Storage(data, create=False, read_only=True) as storage:
        world = await load_world(storage, load_config(None))
    name = world.sim.agents.get_all_agents()[0].name
    maker = SnapshotMaker()
    maker.note_activity([FeedLine(1, name, "walk", "walks\n  east"),
                         FeedLine(1, name, "agent_woke", f"{name} wakes."),
                         FeedLine(1, name, "error", "ended early", False)])
    assert maker.make(world).agent(name).activity == "walks east"


def test_who_changes_the_world_comes_from_its_lock_without_the_date(tmp_path: Path) -> None:
    assert changer(tmp_path) is None  # no lock file: nobody says
    (tmp_path / "writer.lock").write_text(json.dumps(
        {"pid": 4321, "command": "hearth --run 1000", "since": "2025-01-02T03:04:05+00:00"}))
    assert changer(tmp_path) == "process 4321 (hearth --run 1000)"
    (tmp_path / "writer.lock").write_text("")  # released: emptied
    assert changer(tmp_path) is None


def test_the_header_says_who_changes_the_world_or_what_went_wrong() -> None:
    watching = RunState(True, True, 0, 12.0, watch_only=True,
                        changer="process 4321 (hearth --run 1000)")
    words, _style = run_words(watching)
    assert words == "👁 watching only: process 4321 (hearth --run 1000) changes this world"
    nobody = RunState(True, True, 0, 0.0, watch_only=True)
    assert "nobody changes this world now" in run_words(nobody)[0]
    troubled = RunState(True, True, 0, 0.0, "cannot read the world now (locked)",
                        watch_only=True, changer="process 1 (hearth --run 5)")
    assert run_words(troubled)[0].endswith("changes this world; cannot read the world now "
                                           "(locked)")
    ended = RunState(False, True, 0, 0.0, "the world was replaced", watch_only=True)
    assert run_words(ended)[0] == "■ no longer following: the world was replaced"
    assert run_words(RunState(True, True, 0, 0.0))[0] == "⏸ paused"  # an engine's observer
