"""Opening a world: create=False, read_only=True, and the pragmas every connection gets."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from core.agent import Agent
from core.types import AgentName, Position
from core.world import WorldState
from storage import LATEST_VERSION, Storage, StorageError, WorldNotFoundError

STATE = WorldState(12, 9, seed=5, tick=4)


async def _make_world(data_dir: Path) -> None:
    async with Storage(data_dir) as storage:
        await storage.world.save_world_state(STATE)
        await storage.agents.save_agent(Agent(AgentName("Ash"), "m", "p", Position(1, 1)))


async def _pragma(storage: Storage, name: str) -> object:
    row = await storage.db.fetchone(f"PRAGMA {name}")
    assert row is not None
    return row[0]


# --- create=False ----------------------------------------------------------------------


async def test_create_false_on_an_empty_folder_raises_and_creates_nothing(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WorldNotFoundError):
        async with Storage(empty, create=False):
            pass
    assert list(empty.iterdir()) == []
    assert Storage.world_exists(empty) is False


async def test_create_false_on_a_missing_folder_does_not_make_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(WorldNotFoundError):
        await Storage(missing, create=False).open()
    assert not missing.exists()


async def test_create_false_opens_an_existing_world(data_dir: Path) -> None:
    await _make_world(data_dir)
    assert Storage.world_exists(data_dir) is True
    async with Storage(data_dir, create=False) as storage:
        assert await storage.world.get_world_state() == STATE


async def test_a_new_world_is_created_at_the_latest_schema(tmp_path: Path) -> None:
    data_dir = tmp_path / "deep" / "er" / "data"
    async with Storage(data_dir) as storage:
        assert await storage.db.user_version() == LATEST_VERSION
        assert storage.db.migrated_from is None
    assert (data_dir / "world.db").is_file()
    assert not (data_dir / "backups").exists()


async def test_the_database_is_unavailable_before_open_and_after_close(data_dir: Path) -> None:
    storage = Storage(data_dir)
    with pytest.raises(StorageError):
        _ = storage.db
    await storage.open()
    await storage.close()
    with pytest.raises(StorageError):
        _ = storage.db


# --- read_only=True --------------------------------------------------------------------


async def test_read_only_on_a_missing_world_raises_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(WorldNotFoundError):
        async with Storage(tmp_path / "data", read_only=True):
            pass
    assert list(tmp_path.iterdir()) == []


async def test_read_only_reads_but_cannot_write(
    data_dir: Path, reopen: Callable[..., Storage]
) -> None:
    await _make_world(data_dir)
    async with reopen(read_only=True) as ro:
        assert await ro.world.get_world_state() == STATE
        assert [a.name for a in await ro.agents.get_all_agents()] == ["Ash"]

        with pytest.raises((sqlite3.OperationalError, StorageError)):
            await ro.world.save_world_state(STATE.advanced())
        with pytest.raises((sqlite3.OperationalError, StorageError)):
            await ro.agents.delete_agent(AgentName("Ash"))
        # A failed write released the lock: the next one fails too instead of hanging.
        with pytest.raises((sqlite3.OperationalError, StorageError)):
            await asyncio.wait_for(
                ro.agents.save_agent(Agent(AgentName("Birch"), "m", "p", Position(0, 0))), 5
            )
        with pytest.raises((sqlite3.OperationalError, StorageError)):
            await ro.db.execute("DELETE FROM agents")

        assert await ro.world.get_world_state() == STATE

    async with reopen() as rw:
        assert await rw.world.get_world_state() == STATE
        assert [a.name for a in await rw.agents.get_all_agents()] == ["Ash"]


async def test_read_only_sees_what_a_writer_committed(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    await storage.world.save_world_state(STATE)
    async with reopen(read_only=True) as ro:
        assert await ro.world.get_world_state() == STATE
        await storage.world.save_world_state(STATE.advanced())
        assert await ro.world.get_world_state() == STATE.advanced()


# --- pragmas ---------------------------------------------------------------------------


async def test_wal_and_foreign_keys_are_on(storage: Storage) -> None:
    assert str(await _pragma(storage, "journal_mode")).lower() == "wal"
    assert await _pragma(storage, "foreign_keys") == 1
    assert await _pragma(storage, "busy_timeout") == 5000
    assert await _pragma(storage, "synchronous") == 1  # NORMAL is the default


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("NORMAL", 1), ("FULL", 2), ("full", 2), ("OFF", 0), ("EXTRA", 3)],
)
async def test_synchronous_matches_what_was_asked(
    data_dir: Path, mode: str, expected: int
) -> None:
    async with Storage(data_dir, synchronous=mode) as storage:
        assert await _pragma(storage, "synchronous") == expected
        assert str(await _pragma(storage, "journal_mode")).lower() == "wal"
        assert await _pragma(storage, "foreign_keys") == 1


async def test_the_file_itself_is_in_wal_mode(storage: Storage) -> None:
    await storage.world.save_world_state(STATE)
    conn = sqlite3.connect(storage.db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


async def test_pragmas_apply_to_a_read_only_connection_too(
    data_dir: Path, reopen: Callable[..., Storage]
) -> None:
    await _make_world(data_dir)
    async with reopen(read_only=True, synchronous="FULL") as ro:
        assert await _pragma(ro, "foreign_keys") == 1
        assert await _pragma(ro, "synchronous") == 2


async def test_an_unknown_synchronous_mode_is_refused(data_dir: Path) -> None:
    with pytest.raises(StorageError):
        await Storage(data_dir, synchronous="SOMETIMES").open()
    assert not (data_dir / "world.db").exists()
