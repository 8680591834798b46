"""ObserverAPI over a real engine in its runner thread: snapshots, feed, commands."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engine import EngineRunner, HearthEngine
from observe.api import ObserverAPI, Update
from storage import Storage


def _api(world: Path, config, mind) -> ObserverAPI:
    async def make() -> HearthEngine:
        engine = await HearthEngine.open(Storage(world), config, mind=mind)
        return engine

    return ObserverAPI(EngineRunner(make))


def _wait(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def _stored_tick(world: Path) -> int:
    async def read() -> int:
        async with Storage(world, create=False, read_only=True) as storage:
            return (await storage.world.get_world_state()).tick

    return asyncio.run(read())


def test_snapshots_follow_the_ticks_and_never_change_afterwards(
    small_world: Path, config, scripted
) -> None:
    api = _api(small_world, config, scripted())
    updates: list[tuple[Update, str]] = []
    api.listen(lambda u: updates.append((u, threading.current_thread().name)))
    first = api.start()
    try:
        assert first.tick == 0 and len(first.agents) == 4
        assert first.terrain.shape == (48, 64) and not first.terrain.flags.writeable
        with pytest.raises(ValueError):
            first.wall_east[0, 0] = True
        where_first = {v.name: v.position for v in first.agents}
        api.run(3)
        assert _wait(lambda: len(updates) == 3)
        assert [u.snapshot.tick for u, _ in updates] == [1, 2, 3]
        assert {thread for _, thread in updates} == {"hearth-engine"}
        assert api.snapshot is updates[-1][0].snapshot
        # The first snapshot still says where everyone was at the start.
        assert {v.name: v.position for v in first.agents} == where_first
        moved = [v for v in api.snapshot.agents if v.position != where_first[v.name]]
        assert moved, "the scripted agents walk north"
        # Lines: one per action, in the feed in the order they happened.
        assert sum(len(u.lines) for u, _ in updates) == len(api.feed())
        assert all(line.kind == "walk" for line in api.feed())
        assert api.feed(agent=moved[0].name)
        assert {line.agent for line in api.feed(agent=moved[0].name)} == {moved[0].name}
        # Rows to redraw: where a moved agent was and where it is.
        last, before = updates[-1][0].snapshot, updates[-2][0].snapshot
        rows = last.changed_rows
        assert rows is not None
        for view in last.agents:
            was = before.agent(view.name)
            if was is not None and was.position != view.position:
                assert {was.position.y, view.position.y} <= rows
        state = api.run_state()
        assert state.running and state.paused and state.remaining == 0
        assert state.ticks_per_second > 0
    finally:
        assert api.stop(timeout=10)
    assert _stored_tick(small_world) == 3


def test_cells_perceptions_and_a_forced_turn(small_world: Path, config, scripted) -> None:
    api = _api(small_world, config, scripted())
    contexts = []
    api.runner.on_tick(contexts.append)
    api.start()
    try:
        someone = api.snapshot.agents[0]
        assert api.perception(someone.name).result(10) == ""  # no turn yet
        with pytest.raises(KeyError):
            api.perception("Nobody").result(10)
        with pytest.raises(KeyError):
            api.force_turn("Nobody")
        last = api.snapshot.agents[-1].name
        api.force_turn(last)
        api.tick()
        assert _wait(lambda: api.snapshot.tick == 1)
        cluster = next(c for c in contexts[0].clusters if last in c)
        assert cluster[0] == last
        here = api.snapshot.agent(someone.name)
        info = api.cell(here.position.x, here.position.y)
        assert info is not None and someone.name in [a.name for a in info.agents]
        assert info.terrain in {"grass", "sand", "forest", "hill", "stone", "coast", "water"}
        assert api.cell(-1, 0) is None and api.cell(64, 0) is None
        seen = api.perception(someone.name).result(10)
        assert seen.startswith("Tick 0,")
        assert here.activity  # its walk, narrated
    finally:
        assert api.stop(timeout=10)
    late = api.runner.call(lambda engine: engine.tick)
    with pytest.raises(RuntimeError, match="not running"):
        late.result(1)


def test_walls_and_doors_read_by_side() -> None:
    from observe.api import cell_info
    from observe.snapshot import WorldSnapshot

    shape = (5, 6)
    east, south = np.zeros(shape, bool), np.zeros(shape, bool)
    door_e, door_s = np.zeros(shape, bool), np.zeros(shape, bool)
    east[2, 2] = True                       # east side of (2, 2)
    south[1, 2] = True                      # north side of (2, 2)
    east[2, 1] = door_e[2, 1] = True        # west side of (2, 2), a door
    snap = WorldSnapshot(0, "day 1", "morning", "clear", 6, 5, np.zeros(shape, np.uint8),
                         east, south, door_e, door_s)
    info = cell_info(snap, 2, 2)
    assert info is not None
    assert info.walls == ("north", "east") and info.doors == ("west",)
    assert cell_info(snap, 0, 0).walls == ()
