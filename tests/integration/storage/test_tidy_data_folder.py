"""A tidy data folder (issue 39): a writer's close empties world.db-wal whoever reads
beside it, snapshots are files alone, and what older runs left is found (for --status
and --check) and removed by the next writer. Real SQLite files and real locks."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from storage import Storage, WorldBusyError
from storage.leftovers import Leftover, find_leftovers
from storage.repositories.engine import EventRow
from storage.wal_checkpointer import SETTLE_PATIENCE_S
from storage.world_lock import WorldLock, writer_there

PROJECT = Path(__file__).resolve().parents[3]
HOLD = ("import sys; sys.path.insert(0, sys.argv[2]);"
        "from storage.world_lock import WorldLock;"
        "lock = WorldLock(__import__('pathlib').Path(sys.argv[1])).acquire();"
        "print('held', flush=True); sys.stdin.readline()")


async def _write(storage: Storage, count: int = 300) -> None:
    async with storage.unit_of_work() as uow:
        await uow.engine.add_events(
            [EventRow(1, None, "note", f'{{"n":{i},"pad":"{"x" * 200}"}}')
             for i in range(count)])
        await uow.commit()


def _log_size(data_dir: Path) -> int | None:
    """world.db-wal's size from a stat (never an open: see CLAUDE.md); None if absent."""
    try:
        return os.stat(data_dir / "world.db-wal").st_size
    except FileNotFoundError:
        return None


def _reader(db: Path) -> sqlite3.Connection:
    """A read-only connection beside the writer, as --watch and --gardener keep one."""
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True,
                           isolation_level=None)


async def test_closing_empties_the_log_though_a_reader_stays_open(data_dir: Path) -> None:
    """The reader outlives the writer, and a read-only connection cannot fold the log in
    as it closes: before, the log stayed at its high-water mark."""
    storage = await Storage(data_dir).open()
    reader = None
    try:
        await _write(storage)
        reader = _reader(storage.db_path)
        assert reader.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 300
        assert (_log_size(data_dir) or 0) > 0
        checkpointer = storage.db.checkpointer
    finally:
        await storage.close()
    try:
        assert checkpointer is not None and checkpointer.settled is True
        assert _log_size(data_dir) == 0
        assert reader.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 300
    finally:
        reader.close()
    assert _log_size(data_dir) in (0, None)
    assert find_leftovers(data_dir) == []


async def test_a_reader_inside_a_read_keeps_the_log_and_the_close_neither_waits_nor_fails(
    data_dir: Path
) -> None:
    storage = await Storage(data_dir).open()
    try:
        await _write(storage)
        reader = _reader(storage.db_path)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM events").fetchone()  # holds this moment
        await _write(storage)
        checkpointer = storage.db.checkpointer
    finally:
        started = time.monotonic()
        await storage.close()
        took = time.monotonic() - started
    try:
        assert took < SETTLE_PATIENCE_S + 1.0, took
        assert checkpointer is not None and checkpointer.settled is False
        left = _log_size(data_dir)
        assert left and left > 0
        assert find_leftovers(data_dir) == [Leftover("log", data_dir / "world.db-wal", 1, left)]
    finally:
        reader.close()
    async with Storage(data_dir, create=False) as again:  # the next writer folds it in
        assert await again.engine.count_events() == 600
        assert find_leftovers(data_dir) == []  # a writer's own log is never a leftover
    assert _log_size(data_dir) in (0, None)
    assert find_leftovers(data_dir) == []


async def test_a_snapshot_is_one_file_and_reading_it_makes_no_other(storage: Storage) -> None:
    await _write(storage)
    path = await storage.snapshots.create(storage.db, 3)
    assert storage.snapshots.list() == [(3, path)]  # each is opened to see whose it is
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 300
    finally:
        conn.close()
    assert sorted(p.name for p in path.parent.iterdir()) == ["snapshot_3.db"]


def _plant(folder: Path, name: str, data: bytes = b"") -> None:
    (folder / name).write_bytes(data)


async def test_a_writing_open_and_pruning_remove_what_no_snapshot_needs(
    data_dir: Path, tmp_path: Path
) -> None:
    async with Storage(data_dir) as storage:
        for tick in (0, 2, 4):
            await storage.snapshots.create(storage.db, tick)
    snaps = data_dir / "snapshots"
    shm = bytes(32768)
    for name in ("snapshot_0.db-wal", "snapshot_2.db-wal", "snapshot_9.db-wal"):
        _plant(snaps, name)  # empty logs, as a read-only open of an older snapshot left
    for name in ("snapshot_0.db-shm", "snapshot_2.db-shm", "snapshot_9.db-shm"):
        _plant(snaps, name, shm)
    _plant(snaps, "snapshot_5.db.partial", b"half")  # a killed run's copy
    _plant(snaps, "snapshot_5.db.partial-journal", b"j")
    _plant(snaps, "snapshot_4.db-wal", b"frames")  # another program wrote to it: kept
    _plant(snaps, "snapshot_4.db-shm", shm)
    _plant(snaps, "notes.txt", b"mine")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not Hearth's")
    os.symlink(outside, snaps / "snapshot_7.db-wal")  # a link is never removed
    (data_dir / ".staging-20250101T000000000000Z").mkdir()
    _plant(data_dir / ".staging-20250101T000000000000Z", "world.db", b"x" * 1000)

    async with Storage(data_dir, create=False, read_only=True):
        pass  # a reader removes nothing
    found = {f.kind: (f.files, f.bytes) for f in find_leftovers(data_dir)}
    assert found == {"unkept": (2, len(shm)), "beside": (4, 2 * len(shm)),
                     "partial": (2, 5), "staging": (1, 1000)}

    async with Storage(data_dir, create=False) as storage:
        assert sorted(p.name for p in snaps.iterdir()) == [
            "notes.txt", "snapshot_0.db", "snapshot_2.db", "snapshot_4.db",
            "snapshot_4.db-shm", "snapshot_4.db-wal", "snapshot_7.db-wal"]
        _plant(snaps, "snapshot_2.db-wal")  # read by an older Hearth meanwhile
        _plant(snaps, "snapshot_2.db-shm", shm)
        _plant(snaps, "snapshot_6.db.partial", b"copying")  # as a copy being made looks
        assert [f.kind for f in find_leftovers(data_dir)] == ["beside"]  # nothing of a writer's
        assert storage.snapshots.prune(1) == [snaps / "snapshot_2.db"]
        assert sorted(p.name for p in snaps.iterdir()) == [
            "notes.txt", "snapshot_0.db", "snapshot_4.db", "snapshot_4.db-shm",
            "snapshot_4.db-wal", "snapshot_7.db-wal"]
    assert outside.read_bytes() == b"not Hearth's"
    assert not (data_dir / ".staging-20250101T000000000000Z").exists()
    assert find_leftovers(data_dir) == []


async def test_writer_there_tells_a_writer_from_none(data_dir: Path) -> None:
    assert not writer_there(data_dir)  # no lock file yet
    async with Storage(data_dir):
        assert writer_there(data_dir)  # this process
    assert not writer_there(data_dir)
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(data_dir), str(PROJECT)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        assert writer_there(data_dir)
        assert (data_dir / "writer.lock").read_text()  # its note is left as it was
    finally:
        other.communicate("\n", timeout=30)
    assert not writer_there(data_dir)


def test_looking_for_a_writer_never_turns_one_away(tmp_path: Path) -> None:
    """--status looks (a shared lock for microseconds) while writers come and go."""
    done = threading.Event()
    looks = [0]

    def look() -> None:
        while not done.is_set():
            writer_there(tmp_path)
            looks[0] += 1
            time.sleep(0.0001)

    looker = threading.Thread(target=look)
    looker.start()
    refused = taken = 0
    until = time.monotonic() + 1.0
    try:
        while time.monotonic() < until:
            try:
                WorldLock(tmp_path).acquire().release()
                taken += 1
            except WorldBusyError:
                refused += 1
    finally:
        done.set()
        looker.join()
    assert looks[0] > 200 and taken > 200 and refused == 0
