"""The write-ahead log is moved into world.db by a thread of its own, never by a commit."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from storage import Storage
from storage.repositories.engine import EventRow
from storage.wal_checkpointer import SAFETY_PAGES, WalCheckpointer


async def _pragma(storage: Storage, name: str):
    row = await storage.db.fetchone(f"PRAGMA {name}")
    return row[0]


def _wait_for(check, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return False


async def test_a_writing_storage_checkpoints_in_the_background(data_dir: Path) -> None:
    async with Storage(data_dir) as storage:
        assert storage.db.checkpointer is not None
        assert await _pragma(storage, "wal_autocheckpoint") == SAFETY_PAGES
    async with Storage(data_dir, read_only=True) as reader:
        assert reader.db.checkpointer is None


async def test_committed_rows_reach_the_file_itself_without_a_commit_checkpointing(
    data_dir: Path, tmp_path: Path
) -> None:
    async with Storage(data_dir) as storage:
        storage.db.checkpointer.stop()  # a fast one of our own instead
        async with storage.unit_of_work() as uow:
            await uow.engine.add_events(
                [EventRow(1, "Ada", "note", f'{{"n":{i}}}') for i in range(500)])
            await uow.commit()

        def rows_in_the_bare_file() -> int:
            copy = tmp_path / "bare.db"
            shutil.copyfile(storage.db_path, copy)  # world.db alone, no -wal beside it
            conn = sqlite3.connect(copy)
            try:
                return conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            except sqlite3.DatabaseError:
                return -1
            finally:
                conn.close()

        assert rows_in_the_bare_file() != 500  # only in the log so far
        fast = WalCheckpointer(storage.db_path, every_s=0.02)
        fast.start()
        try:
            assert _wait_for(lambda: fast.checkpoints >= 1)
        finally:
            fast.stop()
        assert fast.failure is None
        assert rows_in_the_bare_file() == 500


async def test_closing_folds_the_log_into_the_file(data_dir: Path) -> None:
    async with Storage(data_dir) as storage:
        async with storage.unit_of_work() as uow:
            await uow.engine.add_events([EventRow(1, None, "note", "{}")])
            await uow.commit()
        wal = storage.db_path.with_name(storage.db_path.name + "-wal")
        assert wal.exists()
    assert not wal.exists()


def test_a_checkpointer_that_cannot_open_its_file_says_why_and_stops(tmp_path: Path) -> None:
    nowhere = tmp_path / "missing" / "world.db"
    ckpt = WalCheckpointer(nowhere, every_s=0.01)
    ckpt.start()
    assert _wait_for(lambda: ckpt.failure is not None)
    ckpt.stop()
    assert "cannot open" in ckpt.failure and ckpt.checkpoints == 0


def test_the_interval_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        WalCheckpointer(tmp_path / "world.db", every_s=0)


def test_a_lasting_failure_is_logged_once_and_its_end_once(tmp_path: Path, caplog) -> None:
    class Flaky:
        def __init__(self) -> None:
            self.calls = 0

        def execute(self, sql: str):
            self.calls += 1
            if self.calls <= 3:
                raise sqlite3.OperationalError("database or disk is full")
            return sqlite3.connect(":memory:").execute("SELECT 0, 0, 0")

    ckpt = WalCheckpointer(tmp_path / "world.db")
    conn = Flaky()
    with caplog.at_level("WARNING", logger="hearth.storage"):
        for _ in range(5):
            ckpt._checkpoint(conn)  # type: ignore[arg-type]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["background WAL checkpoints are failing: database or disk is full",
                        "background WAL checkpoints work again"]
    assert ckpt.failure is None and ckpt.checkpoints == 2
