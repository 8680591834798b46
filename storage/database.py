"""The one writer connection to world.db, and how transactions are taken on it.

Why one connection: SQLite allows one writer at a time anyway, and a single
aiosqlite connection serialises our statements on its own thread. Why
`isolation_level=None`: the sqlite3 module's implicit transactions hide where a
transaction starts; we issue `BEGIN IMMEDIATE` ourselves so the write lock is
taken up front and a unit of work never fails half-way on a busy upgrade.

Several asyncio tasks share the connection, so a transaction is guarded by a
lock, and the database remembers which task owns the open transaction (inside
it, a nested `transaction()` becomes a SAVEPOINT; any other task waits).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from storage import direct_db
from storage.errors import (
    CorruptDatabaseError,
    MigrationError,
    NewerSchemaError,
    NotAWorldError,
    StorageError,
    WorldNotFoundError,
)
from storage.migrations import apply_migrations
from storage.schema import HEARTH_TABLES, LATEST_VERSION
from storage.side_files import claim, claim_dir
from storage.wal_checkpointer import SAFETY_PAGES, WalCheckpointer

log = logging.getLogger("hearth.storage")

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


@dataclass(frozen=True)
class FileInfo:
    """What a read-only look at an existing file found."""

    version: int
    tables: frozenset[str]


def header_version(path: Path) -> int:
    """The schema version in a file's header, read without disturbing anyone using it.

    Never read a world file with `open()` in a process that may hold SQLite connections
    to it: POSIX record locks belong to the process, so closing any descriptor of the
    file drops every lock SQLite holds there, and another process may then checkpoint
    and delete the -wal and -shm files this one is still writing into (committed ticks
    lost). SQLite keeps its own descriptors open while locks are held, so the header is
    read through SQLite: first opened immutable (no locks taken, no -wal or -shm made,
    so a newer file is refused untouched), and if that read met pages a running
    checkpoint was rewriting, again read-only with SQLite's usual locks."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise StorageError(f"{path}: cannot read the world file ({exc.strerror})") from None
    if size == 0:
        raise NotAWorldError(
            f"{path}: the file is empty, not a Hearth world; move it aside to start a new world"
        )
    try:
        return _user_version(path, "mode=ro&immutable=1")
    except sqlite3.DatabaseError:
        pass  # a checkpoint was rewriting pages as they were read: read again, with locks
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open the world file ({exc})") from None
    try:
        return _user_version(path, "mode=ro")
    except sqlite3.DatabaseError as exc:
        if _disk_fault(exc):  # the disk, not the file: main names it in one line
            raise
        if "not a database" in str(exc):
            raise NotAWorldError(f"{path}: not an SQLite database, so not a Hearth world; "
                                 "it was left untouched") from None
        raise CorruptDatabaseError(
            f"{path}: the database could not be read ({exc}); it was left untouched"
        ) from None
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open the world file ({exc})") from None


def _user_version(path: Path, mode: str) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True,
                           timeout=direct_db.LOCK_PATIENCE)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def probe(path: Path) -> FileInfo:
    """Inspect an existing file without changing it: is it ours, which version, intact?"""
    _refuse_newer(path, header_version(path))
    try:
        version, tables, check = _look(path, "?mode=ro")
    except sqlite3.OperationalError as exc:
        if _disk_fault(exc):  # a full disk: main says so in one line
            raise
        if "readonly" not in str(exc):  # never reached: _look words all else itself
            raise CorruptDatabaseError(
                f"{path}: the database could not be read ({exc}); it was left untouched"
            ) from None
        # A writer that died left its log to recover, which a read-only connection may not
        # do; SQLite's own recovery of the log is what any next open would do.
        try:
            version, tables, check = _look(path, "")
        except sqlite3.OperationalError as again:
            raise StorageError(f"{path}: cannot read the world file ({again}); its folder "
                               "may not be writable") from None
    if check != "ok":
        raise CorruptDatabaseError(
            f"{path}: the database is damaged (integrity check: {check}); it was left "
            "untouched — restore a file from snapshots/ or backups/"
        )
    _refuse_newer(path, version)
    foreign = tables - HEARTH_TABLES
    if foreign:
        raise NotAWorldError(
            f"{path}: an SQLite file with tables Hearth does not know "
            f"({', '.join(sorted(foreign)[:3])}), so not a Hearth world; it was left untouched"
        )
    return FileInfo(version=version, tables=tables)


class _Locked(Exception):
    pass


def _look(path: Path, mode: str) -> tuple[int, frozenset[str], str]:
    """(schema version, table names, quick check) of a database file; a lock another
    program holds is waited for, saying so, up to `direct_db.LOCK_PATIENCE` seconds."""
    try:
        return _look_once(path, mode, 1.0)
    except _Locked:
        log.warning("%s is locked by another program; waiting for it (up to %.0f s)",
                    path, direct_db.LOCK_PATIENCE)
    try:
        return _look_once(path, mode, direct_db.LOCK_PATIENCE)
    except _Locked:
        raise StorageError(
            f"{path}: locked by another program for longer than Hearth waits (an sqlite3 "
            "shell in a transaction?); nothing was changed: close what holds it and run "
            "again") from None


def _look_once(path: Path, mode: str, patience: float) -> tuple[int, frozenset[str], str]:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}{mode}", uri=True, timeout=patience)
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open the world file ({exc})") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = frozenset(
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        )
        check = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "readonly" in str(exc):
            raise
        if "locked" in str(exc) or "busy" in str(exc):
            raise _Locked() from None
        if _disk_fault(exc):  # the disk is full or failing, the file may be fine: main says
            raise
        raise _damaged(path, exc) from None
    except sqlite3.DatabaseError as exc:
        raise _damaged(path, exc) from None
    finally:
        conn.close()
    return version, tables, check


def _disk_fault(exc: sqlite3.Error) -> bool:
    """SQLite could not read or write (a full disk: the WAL index cannot grow), which
    says nothing about what the file holds."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name == "SQLITE_FULL" or name.startswith("SQLITE_IOERR")


def _damaged(path: Path, exc: Exception) -> CorruptDatabaseError:
    return CorruptDatabaseError(
        f"{path}: the database is damaged ({exc}); it was left untouched — "
        "restore a file from snapshots/ or backups/")


def _refuse_newer(path: Path, version: int) -> None:
    if version > LATEST_VERSION:
        raise NewerSchemaError(
            f"{path}: written by a newer Hearth (schema v{version}; this Hearth reads up to "
            f"v{LATEST_VERSION}); upgrade Hearth to open it — the file was not changed"
        )


def backup_to(source: Path, destination: Path) -> Path:
    """Copy a live database consistently through SQLite's online backup API."""
    claim_dir(destination.parent)  # backups/ as a link is moved aside, not written into
    claim(destination)  # so is a link or FIFO at the name
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(destination)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    return destination


def utc_stamp() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")


class Database:
    """An open world.db: the connection, its lock, and transaction helpers."""

    def __init__(self, conn: aiosqlite.Connection, path: Path, *, read_only: bool) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        self.migrated_from: int | None = None
        self.backup_path: Path | None = None
        self._lock = asyncio.Lock()
        # The task that owns the open transaction, and its savepoint depth. A task
        # (not a context variable) marks ownership: tasks spawned inside a unit copy
        # the context, and must still wait for the unit rather than join it.
        self._owner: asyncio.Task[object] | None = None
        self._depth = 0
        self._savepoints = True
        self.checkpointer: WalCheckpointer | None = None
        """Moves the log into the file in the background (writing connections only)."""

    # --- opening ---------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: Path,
        *,
        create: bool = True,
        read_only: bool = False,
        synchronous: str = "NORMAL",
        backups_dir: Path | None = None,
    ) -> Database:
        sync = synchronous.upper()
        if sync not in SYNCHRONOUS_MODES:
            raise StorageError(f"unknown synchronous mode {synchronous!r}")
        if not path.exists():
            if not create or read_only:
                raise WorldNotFoundError(f"{path}: no world here yet")
            version = 0
        else:
            version = (await asyncio.to_thread(probe, path)).version
        if read_only and version < LATEST_VERSION:
            raise StorageError(
                f"{path}: uses schema v{version}; open it once with a writing command "
                f"(e.g. `hearth`) to migrate it to v{LATEST_VERSION}"
            )
        backup = None
        if 0 < version < LATEST_VERSION:
            target = (backups_dir or path.parent / "backups") / (
                f"{path.stem}.v{version}.{utc_stamp()}.db"
            )
            backup = await asyncio.to_thread(backup_to, path, target)
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if read_only:
                conn = await aiosqlite.connect(
                    f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None
                )
            else:
                conn = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise StorageError(f"{path}: cannot open the world file ({exc})") from None
        db = cls(conn, path, read_only=read_only)
        try:
            await db._configure(sync)
            if not read_only:
                # The log is copied into the file by a thread of its own, not inside
                # whichever commit happens to fill it (see storage/wal_checkpointer.py).
                await conn.execute(f"PRAGMA wal_autocheckpoint = {SAFETY_PAGES}")
                db.checkpointer = WalCheckpointer(path, synchronous=sync)
                db.checkpointer.start()
            if version < LATEST_VERSION:
                try:
                    await apply_migrations(conn, version)
                except sqlite3.Error as exc:
                    where = f"; the file before migrating is saved at {backup}" if backup else ""
                    raise MigrationError(f"{path}: migration failed ({exc}){where}") from None
                if version > 0:
                    db.migrated_from = version
                    db.backup_path = backup
        except BaseException:
            await db.close()
            raise
        return db

    async def _configure(self, synchronous: str) -> None:
        """Pragmas are per connection, so every connection gets all of them."""
        if not self.read_only:
            row = await self._switch_to_wal()
            if row is None or str(row[0]).lower() != "wal":
                raise StorageError(f"{self.path}: could not switch the database to WAL mode")
        await self.conn.execute(f"PRAGMA synchronous = {synchronous}")
        await self.conn.execute("PRAGMA foreign_keys = ON")
        await self.conn.execute("PRAGMA busy_timeout = 5000")

    async def _switch_to_wal(self) -> sqlite3.Row | tuple | None:
        """`PRAGMA journal_mode = WAL`, waiting (saying so) up to `direct_db.LOCK_PATIENCE`
        for a lock another program holds. A world never opened for writing yet is in
        rollback mode (storage/world_files.py), and while another connection holds a
        write lock on it SQLite refuses the switch at once, without its busy wait."""
        deadline = time.monotonic() + direct_db.LOCK_PATIENCE
        said = False
        while True:
            try:
                return await self.fetchone("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) \
                        or time.monotonic() >= deadline:
                    raise  # main says it in one line: locked longer than Hearth waits
            if not said:
                said = True
                log.warning("%s is locked by another program; waiting for it (up to %.0f s)",
                            self.path, direct_db.LOCK_PATIENCE)
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        """Stop the checkpointer first: after the last commit, it folds the log into the
        file and empties it, readers beside or not (storage/wal_checkpointer.py)."""
        if self.checkpointer is not None:
            await asyncio.to_thread(self.checkpointer.stop)
            self.checkpointer = None
        await self.conn.close()

    # --- statements ------------------------------------------------------------

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; returns the rowcount."""
        cursor = await self.conn.execute(sql, params)
        try:
            return cursor.rowcount
        finally:
            await cursor.close()

    async def execute_insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an INSERT; returns the new rowid."""
        cursor = await self.conn.execute(sql, params)
        try:
            return int(cursor.lastrowid or 0)
        finally:
            await cursor.close()

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self.conn.executemany(sql, rows)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | tuple | None:
        cursor = await self.conn.execute(sql, params)
        try:
            return await cursor.fetchone()
        finally:
            await cursor.close()

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        cursor = await self.conn.execute(sql, params)
        try:
            return list(await cursor.fetchall())
        finally:
            await cursor.close()

    async def user_version(self) -> int:
        row = await self.fetchone("PRAGMA user_version")
        return int(row[0]) if row else 0

    # --- transactions ----------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        """Whether the current task owns the open transaction."""
        return self._owner is not None and self._owner is asyncio.current_task()

    async def begin(self, *, savepoints: bool = True) -> None:
        """Take the write lock and open a transaction owned by this task.

        `savepoints=False` is for a writer that never carries on after a failed
        statement (the engine's group commit): repository methods inside it skip
        their SAVEPOINT/RELEASE round trips, and any failure rolls back the unit.
        """
        if self.in_transaction:
            raise StorageError("a unit of work is already open in this task")
        await self._lock.acquire()
        try:
            await self.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        self._owner = asyncio.current_task()
        self._depth = 1
        self._savepoints = savepoints

    async def commit_and_continue(self) -> None:
        """Commit what the owning task wrote, and open a fresh transaction."""
        await self.conn.execute("COMMIT")
        await self.conn.execute("BEGIN IMMEDIATE")

    async def rollback_and_continue(self) -> None:
        """Discard what the owning task wrote since its last commit; stay open."""
        await self.conn.execute("ROLLBACK")
        await self.conn.execute("BEGIN IMMEDIATE")

    async def end(self, *, commit: bool) -> None:
        """Close the owned transaction (commit or roll back) and release the lock."""
        try:
            if self.conn.in_transaction:
                await self.conn.execute("COMMIT" if commit else "ROLLBACK")
        finally:
            self._owner = None
            self._depth = 0
            self._savepoints = True
            self._lock.release()

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the write lock with no transaction open (for backups).

        Refused inside the task's own unit of work: a backup would wait forever
        for the transaction that this very task holds.
        """
        if self.in_transaction:
            raise StorageError("cannot take a snapshot inside an open unit of work")
        async with self._lock:
            yield

    @asynccontextmanager
    async def one_moment(self) -> AsyncIterator[None]:
        """Reads that all see one committed moment while another process writes (a
        deferred read transaction; DESIGN.md "A reader sees one moment")."""
        if self.in_transaction:
            yield
            return
        async with self._lock:
            await self.conn.execute("BEGIN")
            self._owner = asyncio.current_task()
            try:
                yield
            finally:  # a nested transaction() has committed or undone its own writes
                self._owner = None
                if self.conn.in_transaction:
                    await self.conn.execute("COMMIT")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Atomic block: commits on success, rolls back on error.

        Inside the task's own open unit of work it is a SAVEPOINT, so a repository
        method is all-or-nothing on its own and still part of the larger unit.
        Any other task (even one spawned inside the unit) waits for the lock.
        """
        if not self.in_transaction:
            await self.begin()
            ok = False
            try:
                yield
                ok = True
            finally:
                await self.end(commit=ok)
            return
        if not self._savepoints:
            yield  # the whole unit rolls back on any failure
            return
        name = f"sp_{self._depth}"
        await self.conn.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield
        except BaseException:
            await self.conn.execute(f"ROLLBACK TO {name}")
            await self.conn.execute(f"RELEASE {name}")
            raise
        else:
            await self.conn.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1
