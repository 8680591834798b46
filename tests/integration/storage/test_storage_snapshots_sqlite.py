"""Snapshots of a live world.db: real files that open with sqlite3 and hold the rows."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.agent import Agent, Inventory
from core.conversation import Conversation, ConversationTurn, Invitation, Privacy
from core.landmarks import Landmark
from core.objects import Item, PlacedItem, Sign
from core.places import NamedPlace
from core.raster import TerrainRaster
from core.structures import Structure
from core.terrain import Terrain, Weather
from core.types import AgentName, ConversationId, Direction, Position
from core.world import Cell, WorldState
from storage import Storage, StorageError
from storage.repositories.engine import EventRow, MindRow, TickMetrics, TurnRow
from storage.schema import HEARTH_TABLES, LATEST_VERSION

PROJECT_ROOT = Path(__file__).resolve().parents[3]
ASH, BIRCH = AgentName("Ash"), AgentName("Birch")


async def _fill(storage: Storage) -> Agent:
    ash = Agent(ASH, "m", "p", Position(1, 2),
                Inventory({"wood": 3}, (Item("i1", "axe", ("sharp",)),)),
                known_agents=frozenset({BIRCH}))
    await storage.world.save_world_state(WorldState(16, 16, 7, tick=40, weather=Weather.CLOUDY))
    await storage.world.set_cells({
        Position(1, 1): Cell(Terrain.WATER),
        Position(2, 1): Cell(Terrain.GRASS, frozenset({Direction.NORTH})),
    })
    await storage.world.save_named_place(NamedPlace("Pond", Position(1, 1), ASH, 3))
    await storage.world.save_terrain(TerrainRaster(16, 16, bytes([3]) * 256))
    await storage.world.save_landmarks([Landmark("spring", "the Spring", "Cold.", Position(4, 4))])
    await storage.world.set_edge_materials(2, 1, "e", [("plank", 2)])
    await storage.world.set_spent(Position(6, 6), 2, 39)
    await storage.world.save_structure(Structure("s1", frozenset({Position(5, 5)}), ASH, 4))
    await storage.agents.save_agent(ash)
    await storage.agents.save_agent(Agent(BIRCH, "m", "q", Position(2, 2)))
    await storage.objects.save_object(Sign("sign", Position(3, 3), ASH, 5, "hello"))
    await storage.objects.save_object(PlacedItem("pile", Position(3, 4), None, 6,
                                                 resource="stone", quantity=2))
    conv = Conversation(ConversationId("c1"), frozenset({ASH, BIRCH}), Privacy.PUBLIC, 7, ASH)
    await storage.conversations.save_conversation(conv)
    await storage.conversations.add_turn(ConversationTurn(conv.id, ASH, "hi", 7))
    await storage.conversations.add_invitation(Invitation(BIRCH, ASH, Privacy.PRIVATE, 8))
    await storage.engine.add_events([EventRow(8, ASH, "agent_slept", '{"type":"agent_slept"}')])
    await storage.engine.save_turns([TurnRow(8, ASH, "offline", 1, "ended", "{}")])
    await storage.engine.save_minds([MindRow(ASH, "offline", "{}", 8)])
    await storage.engine.set_progress(9, [[ASH, BIRCH]])
    await storage.engine.add_metrics(TickMetrics(8, "now", 1.5, 1, 1, {"turns": 1.0}))
    async with storage.db.transaction():  # the Gardener's rows (another process writes them)
        cycle = await storage.db.execute_insert(
            "INSERT INTO gardener_cycles (tick, made_at, level, reasons, figures, decided_by, "
            "decision, rationale) VALUES (39, 'now', 'WATCH', '[]', '{}', 'rules', '{}', 'q')")
        await storage.db.execute(
            "INSERT INTO gardener_requests (cycle, kind, params, made_at) "
            "VALUES (?, 'none', '{}', 'now')", (cycle,))
    return ash


def _dump(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in sorted(HEARTH_TABLES)
        }
    finally:
        conn.close()


async def test_snapshot_holds_the_same_rows_as_the_live_database(storage: Storage) -> None:
    await _fill(storage)

    path = await storage.snapshots.create(storage.db, 40)

    assert path == storage.data_dir / "snapshots" / "snapshot_40.db"
    assert path.is_file()
    assert not list(path.parent.glob("*.partial"))
    snap = _dump(path)
    assert snap == _dump(storage.db_path)
    assert len(snap["agents"]) == 2 and len(snap["inventory_items"]) == 1
    assert all(snap[t] for t in HEARTH_TABLES), "every table had a row to copy"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


async def test_a_snapshot_does_not_change_with_later_writes(storage: Storage) -> None:
    await _fill(storage)
    path = await storage.snapshots.create(storage.db, 40)
    before = _dump(path)

    await storage.agents.delete_agent(ASH)
    await storage.world.save_world_state(WorldState(16, 16, 7, tick=41))

    assert _dump(path) == before
    assert _dump(storage.db_path) != before


async def test_a_snapshot_restores_as_a_world(storage: Storage, tmp_path: Path) -> None:
    ash = await _fill(storage)
    path = await storage.snapshots.create(storage.db, 40)

    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copyfile(path, restored / "world.db")
    async with Storage(restored, create=False) as world:
        assert await world.agents.get_agent(ASH) == ash
        assert await world.world.get_world_state() == WorldState(16, 16, 7, 40, Weather.CLOUDY)
        assert await world.conversations.get_turns(ConversationId("c1"))


async def test_list_latest_and_prune(storage: Storage) -> None:
    snaps = storage.snapshots
    assert snaps.list() == [] and snaps.latest() is None
    await storage.world.save_world_state(WorldState(4, 4, 1))

    made = {tick: await snaps.create(storage.db, tick) for tick in (9, 100, 10, 2)}
    (snaps.directory / "notes.txt").write_text("not a snapshot")
    (snaps.directory / "snapshot_x.db").write_text("not a snapshot either")

    assert snaps.list() == [(t, made[t]) for t in (2, 9, 10, 100)]  # numeric, not by name
    assert snaps.latest() == made[100]

    with pytest.raises(ValueError):
        snaps.prune(0)
    assert snaps.prune(2) == [made[2], made[9]]
    assert not made[2].exists() and not made[9].exists()
    assert snaps.list() == [(10, made[10]), (100, made[100])]
    assert snaps.prune(5) == []
    assert (snaps.directory / "notes.txt").exists()
    assert (snaps.directory / "snapshot_x.db").exists()


async def test_a_second_snapshot_at_the_same_tick_replaces_the_first(storage: Storage) -> None:
    await storage.world.save_world_state(WorldState(4, 4, 1, tick=3))
    await storage.snapshots.create(storage.db, 3)
    await storage.world.save_world_state(WorldState(4, 4, 1, tick=3, weather=Weather.RAINY))
    path = await storage.snapshots.create(storage.db, 3)

    assert [t for t, _ in storage.snapshots.list()] == [3]
    assert _dump(path)["world_state"][0][5] == "rainy"


# Run in a child process: with the bug the aiosqlite worker thread spins forever,
# which would hang this test process on exit.
_SNAPSHOT_DURING_UNIT = textwrap.dedent(
    """
    import asyncio, os, sqlite3, sys, threading
    from pathlib import Path
    from core.world import WorldState
    from storage import Storage

    async def scenario(data):
        async with Storage(data) as storage:
            await storage.world.save_world_state(WorldState(4, 4, 1, tick=1))
            go = asyncio.Event()

            async def snapshotter():
                await go.wait()
                return await storage.snapshots.create(storage.db, 1)

            task = asyncio.create_task(snapshotter())
            async with storage.unit_of_work() as uow:
                await uow.world.save_world_state(WorldState(4, 4, 1, tick=2))
                go.set()
                await asyncio.sleep(0.1)
                # not committed: rolled back on exit
            path = await task
            conn = sqlite3.connect(path)
            print(conn.execute("SELECT tick FROM world_state").fetchone()[0], flush=True)
            conn.close()

    def give_up():
        print("TIMEOUT: still blocked after 20 s", flush=True)
        os._exit(3)

    # A watchdog thread, because a blocked aiosqlite call cannot be cancelled.
    watchdog = threading.Timer(20.0, give_up)  # a hang, not slowness: loaded CI is slow
    watchdog.daemon = True
    watchdog.start()
    asyncio.run(scenario(Path(sys.argv[1])))
    os._exit(0)
    """
)


def test_a_snapshot_taken_while_another_task_has_a_unit_open(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", _SNAPSHOT_DURING_UNIT, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The snapshot holds committed state only, never the rolled-back tick 2.
    assert result.stdout.split() == ["1"]


async def test_a_snapshot_inside_the_tasks_own_unit_is_refused_not_hung(tmp_path: Path) -> None:
    async with Storage(tmp_path / "data") as storage:
        async with storage.unit_of_work():
            # asyncio.timeout, not wait_for: wait_for runs the call in another task,
            # which (correctly) would wait for this unit instead of being refused.
            with pytest.raises(StorageError, match="inside an open unit of work"):
                async with asyncio.timeout(5):
                    await storage.snapshots.create(storage.db, tick=1)
        # The lock is free again afterwards.
        path = await asyncio.wait_for(storage.snapshots.create(storage.db, tick=2), timeout=5)
        assert path.exists()


async def test_a_snapshot_holds_the_moment_it_was_started_while_writing_goes_on(
    tmp_path: Path,
) -> None:
    async with Storage(tmp_path / "data") as storage:
        await storage.world.save_world_state(WorldState(4, 4, 1, tick=1))
        pending = storage.snapshots.start(storage.db, 1)
        # Written at once, likely before the thread has copied a page: not in the snapshot.
        await storage.world.save_world_state(WorldState(4, 4, 1, tick=2))
        await storage.engine.add_events([EventRow(2, None, "later", "{}")] * 200)
        path = await pending
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT tick FROM world_state").fetchone()[0] == 1
            assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
        finally:
            conn.close()
        assert not list(path.parent.glob("*.partial"))


async def test_a_half_written_copy_left_by_a_killed_run_is_cleared(tmp_path: Path) -> None:
    async with Storage(tmp_path / "data") as storage:
        await storage.world.save_world_state(WorldState(4, 4, 1, tick=5))
        storage.snapshots.directory.mkdir(parents=True)
        stale = storage.snapshots.directory / "snapshot_3.db.partial"
        stale.write_bytes(b"half a copy")
        path = await storage.snapshots.create(storage.db, 5)
    assert not stale.exists() and path.exists()
    assert [t for t, _ in storage.snapshots.list()] == [5]


async def test_the_world_as_made_is_never_pruned(storage: Storage) -> None:
    """snapshot_0 (taken before a world's first tick) is where a fork at any tick starts."""
    snaps = storage.snapshots
    await storage.world.save_world_state(WorldState(4, 4, 1))
    made = {tick: await snaps.create(storage.db, tick) for tick in (0, 100, 200, 300)}
    assert snaps.prune(2) == [made[100]]
    assert [t for t, _ in snaps.list()] == [0, 200, 300]
    assert snaps.prune(1) == [made[200]]
    assert made[0].exists()
