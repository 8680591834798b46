"""Opening files of other versions and kinds: migrate older, refuse newer, never harm."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from core.conversation import Conversation, Privacy
from core.places import NamedPlace
from core.types import AgentName, ConversationId, Position
from core.world import WorldState
from storage import (
    LATEST_VERSION,
    CorruptDatabaseError,
    NewerSchemaError,
    NotAWorldError,
    Storage,
    StorageError,
)
from storage.schema import MIGRATIONS


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_v1_world(data_dir: Path) -> Path:
    """A file as the first schema version wrote it, with a world row in it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "world.db"
    conn = sqlite3.connect(db)
    for statement in MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO world_state (id, width, height, seed, tick, weather, created_at) "
        "VALUES (1, 40, 30, 7, 12, 'rainy', 'then')"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    return db


async def test_older_file_is_backed_up_then_migrated(tmp_path: Path) -> None:
    db = make_v1_world(tmp_path)
    async with Storage(tmp_path) as storage:
        assert await storage.db.user_version() == LATEST_VERSION
        assert storage.db.migrated_from == 1
        backup = storage.db.backup_path
        assert await storage.world.get_world_state() == WorldState(40, 30, 7, 12, "rainy")
        # The tables of the newer migration work.
        conv = Conversation(ConversationId("c1"), frozenset({AgentName("Ember")}),
                            Privacy.PUBLIC, 12, AgentName("Ember"))
        await storage.conversations.save_conversation(conv)
        assert await storage.conversations.get_conversation("c1") == conv
    assert backup is not None and backup.exists()
    assert backup.parent == tmp_path / "backups"
    old = sqlite3.connect(backup)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 1
    assert old.execute("SELECT tick, weather FROM world_state").fetchone() == (12, "rainy")
    old.close()
    assert db.exists()


async def test_newer_file_is_refused_and_left_byte_identical(tmp_path: Path) -> None:
    async with Storage(tmp_path) as storage:
        await storage.world.save_world_state(WorldState(20, 20, 1))
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 5}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before, mtime = digest(db), db.stat().st_mtime_ns
    listing = sorted(p.name for p in tmp_path.iterdir())

    with pytest.raises(NewerSchemaError) as err:
        async with Storage(tmp_path):
            pass
    message = str(err.value)
    assert "newer Hearth" in message and f"v{LATEST_VERSION + 5}" in message
    assert "\n" not in message
    assert digest(db) == before
    assert db.stat().st_mtime_ns == mtime
    assert not (tmp_path / "backups").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "world.db-shm") == [
        n for n in listing if n != "world.db-shm"
    ]


@pytest.mark.parametrize(
    ("content", "error", "phrase"),
    [
        (b"this is a text file, not a database\n" * 20, NotAWorldError, "not an SQLite database"),
        (b"", NotAWorldError, "empty"),
    ],
)
async def test_non_sqlite_files_are_refused_untouched(
    tmp_path: Path, content: bytes, error: type[StorageError], phrase: str
) -> None:
    db = tmp_path / "world.db"
    db.write_bytes(content)
    with pytest.raises(error) as err:
        async with Storage(tmp_path):
            pass
    assert phrase in str(err.value) and str(db) in str(err.value)
    assert db.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["world.db"]


async def test_corrupt_file_is_refused_untouched(tmp_path: Path) -> None:
    async with Storage(tmp_path) as storage:
        await storage.world.save_world_state(WorldState(20, 20, 1))
        for i in range(300):
            await storage.world.save_named_place(
                NamedPlace(f"place {i}", Position(i % 20, i // 20 % 20), None, 0)
            )
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    data[2 * page : 3 * page] = b"\xff" * page  # smash a whole page after the schema
    db.write_bytes(bytes(data))
    before = digest(db)
    with pytest.raises(CorruptDatabaseError) as err:
        async with Storage(tmp_path):
            pass
    assert "damaged" in str(err.value)
    assert digest(db) == before


async def test_someone_elses_sqlite_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    before = digest(db)
    with pytest.raises(NotAWorldError) as err:
        async with Storage(tmp_path):
            pass
    assert "invoices" in str(err.value)
    assert digest(db) == before


async def test_read_only_open_of_an_older_file_asks_for_migration(tmp_path: Path) -> None:
    db = make_v1_world(tmp_path)
    before = digest(db)
    with pytest.raises(StorageError) as err:
        async with Storage(tmp_path, read_only=True):
            pass
    assert "migrate" in str(err.value)
    assert digest(db) == before


async def test_a_v5_file_loses_the_per_step_indexes_and_keeps_its_rows(tmp_path: Path) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    for migration in MIGRATIONS[:5]:
        for statement in migration.statements:
            conn.execute(statement)
    conn.execute("INSERT INTO world_state (id, width, height, seed, tick, weather, created_at) "
                 "VALUES (1, 40, 30, 7, 12, 'clear', 'then')")
    conn.execute("INSERT INTO agents (name, model_id, personality, x, y) "
                 "VALUES ('Ember', 'm', 'p', 3, 4)")
    conn.execute("INSERT INTO events (tick, agent, kind, data) VALUES (11, 'Ember', 'x', '{}')")
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    conn.close()
    assert {"idx_events_agent", "idx_agents_pos"} <= indexes
    async with Storage(tmp_path) as storage:
        assert storage.db.migrated_from == 5
        rows = await storage.db.fetchall("SELECT name FROM sqlite_master WHERE type = 'index'")
        left = {r[0] for r in rows}
        assert "idx_events_agent" not in left and "idx_agents_pos" not in left
        assert "idx_events_tick" in left
        assert [a.name for a in await storage.agents.get_agents_in(0, 0, 10, 10)] == ["Ember"]
        assert await storage.engine.next_event_seq() == 2
