"""GardenerStore: the Gardener's own rows in world.db, and nothing else.

The Gardener is a process of its own, beside the engine, and may change nothing of
the world: all it can do is record a cycle and queue requests that the engine judges
at the start of its next tick. So this store keeps two connections to the file:

- a read-only one (`mode=ro`), through which every read goes and which cannot write
  whatever is asked of it;
- a writing one (`mode=rw`, which never creates a file) that only ever runs the two
  INSERTs of `add_cycle`, in one short IMMEDIATE transaction per cycle. In WAL mode
  the engine goes on reading meanwhile; the write waits up to `BUSY_TIMEOUT_MS` for
  the engine's own commits, which are short.

Opening checks the file before anything else touches it: a missing file, one that
is not SQLite or not a Hearth world, a newer schema or an older one are each refused
with a message that says what to do. The store never creates or migrates a world:
that is the engine's (`hearth`'s) business, and a Gardener that did it could race
the engine's own migration.

Python's sqlite3 lets a connection be shared between threads only if the caller
serialises its use (the Gardener may run a call in a worker thread to keep its event
loop free), so each connection has a lock of its own: reads go on while a write
waits for the engine.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from core.gardener import Level
from storage.database import header_version, utc_stamp
from storage.errors import (
    CorruptDatabaseError,
    NewerSchemaError,
    NotAWorldError,
    StorageError,
    WorldNotFoundError,
)
from storage.schema import HEARTH_TABLES, LATEST_VERSION

BUSY_TIMEOUT_MS = 5000
"""How long a write (or a read during a checkpoint) waits for the engine's lock."""

RequestMemory = tuple[str, dict[str, Any], str, str | None]
"""(kind, params, status, reason) of one request, as the Gardener remembers it."""


@dataclass(frozen=True, slots=True)
class CycleRecord:
    """One past cycle, as the Gardener's next prompt remembers it."""

    id: int
    tick: int
    level: str
    reasons: Any
    """The stored reasons, parsed (a list of objects as the Gardener writes them)."""
    decided_by: str
    rationale: str
    requests: list[RequestMemory]
    """Its requests in the order queued, with what the engine made of them so far."""


def _lenient(raw: bytes) -> str:
    """Text from the reader: rows anyone can write must not stop the Gardener by not
    being UTF-8 (sqlite3 would raise while fetching them)."""
    return raw.decode("utf-8", "replace")


def _parsed(text: object, default: Any) -> Any:
    """JSON read back from a row that may not hold JSON (or not the expected kind)."""
    try:
        value = json.loads(text) if isinstance(text, str) else default
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


def _json_argument(name: str, text: object, kind: type | None) -> None:
    """Refuse an argument that is not JSON text (of `kind`, if given) before writing."""
    if not isinstance(text, str):
        raise ValueError(f"{name} must be JSON text, got {type(text).__name__}")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{name} is not JSON ({exc})") from None
    if kind is not None and not isinstance(value, kind):
        raise ValueError(f"{name} must be a JSON {'list' if kind is list else 'object'}, "
                         f"got {text[:60]!r}")


class GardenerStore:
    """world.db as the Gardener may use it: read anything, insert its own rows."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        reader = self._open_reader(self.path)
        try:
            writer = self._open_writer(self.path)
        except BaseException:
            reader.close()
            raise
        self._reader: sqlite3.Connection | None = reader
        self._writer: sqlite3.Connection | None = writer

    # ------------------------------------------------------------------ opening

    @staticmethod
    def _check_header(path: Path) -> None:
        """Refuse what is plainly not a world, or a newer one, before SQLite opens it
        (an SQLite open of a newer WAL file would already leave -shm behind)."""
        if not path.is_file():
            raise WorldNotFoundError(
                f"{path}: no world database here; make the world with `hearth` first "
                "(the Gardener never creates one)")
        try:
            version = header_version(path)  # never open(): see storage/database.py
        except NotAWorldError as exc:
            raise NotAWorldError(f"{exc}; point the Gardener at a world's world.db") from None
        GardenerStore._refuse_newer(path, version)

    @staticmethod
    def _refuse_newer(path: Path, version: int) -> None:
        if version > LATEST_VERSION:
            raise NewerSchemaError(
                f"{path}: written by a newer Hearth (schema v{version}; this Hearth reads up "
                f"to v{LATEST_VERSION}); upgrade Hearth to run its Gardener on this world — "
                "the file was not changed")

    @classmethod
    def _open_reader(cls, path: Path) -> sqlite3.Connection:
        """The read-only connection, after checking the file is a world of this very
        schema: the Gardener reads the world's tables as this code knows them, and an
        older file gets its Gardener tables only from the engine's migration."""
        cls._check_header(path)
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                   check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StorageError(f"{path}: cannot open the world file ({exc})") from None
        conn.text_factory = _lenient
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%'")}
            cls._refuse_newer(path, version)
            foreign = tables - HEARTH_TABLES
            if foreign or not tables:
                what = (f"with tables Hearth does not know ({', '.join(sorted(foreign)[:3])})"
                        if foreign else "with no tables")
                raise NotAWorldError(f"{path}: an SQLite file {what}, so not a Hearth world; "
                                     "point the Gardener at a world's world.db")
            if version < LATEST_VERSION:
                raise StorageError(
                    f"{path}: uses schema v{version}, older than this Hearth's v"
                    f"{LATEST_VERSION} (which has the Gardener's tables); open the world "
                    "once with `hearth` to migrate it, then start the Gardener again")
            # Touch every column used, so a file that only claims the version is refused
            # here rather than at the first cycle.
            conn.execute("SELECT id, tick, made_at, level, reasons, figures, decided_by, "
                         "decision, rationale, note FROM gardener_cycles LIMIT 0").fetchall()
            conn.execute("SELECT id, cycle, kind, params, status, reason, made_at, done_tick, "
                         "x, y FROM gardener_requests LIMIT 0").fetchall()
        except StorageError:
            conn.close()
            raise
        except sqlite3.OperationalError as exc:
            conn.close()
            if "no such" in str(exc):
                raise NotAWorldError(
                    f"{path}: says schema v{LATEST_VERSION} but lacks the Gardener's tables "
                    f"({exc}); not a Hearth world") from None
            raise StorageError(f"{path}: cannot read the world file ({exc})") from None
        except sqlite3.DatabaseError as exc:
            conn.close()
            if "not a database" in str(exc):
                raise NotAWorldError(f"{path}: not an SQLite database, so not a Hearth world; "
                                     "point the Gardener at a world's world.db") from None
            raise CorruptDatabaseError(
                f"{path}: the database is damaged ({exc}); restore a file from snapshots/ "
                "or backups/") from None
        return conn

    @staticmethod
    def _open_writer(path: Path) -> sqlite3.Connection:
        """The connection for `add_cycle` alone. `mode=rw` never makes a file, even if
        the world vanished since the reader's checks. It runs no checkpoints of its
        own (`wal_autocheckpoint = 0`): the engine's checkpointer does that work, and
        a Gardener commit should not copy the engine's log; whichever connection
        closes last folds the log into the file as usual."""
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True,
                                   check_same_thread=False, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise StorageError(f"{path}: cannot open the world file for the Gardener's "
                               f"records ({exc})") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA wal_autocheckpoint = 0")
        except sqlite3.Error as exc:
            conn.close()
            raise StorageError(f"{path}: cannot open the world file for the Gardener's "
                               f"records ({exc})") from None
        return conn

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close both; the writer last, so that if no one else has the file open it
        is the one (the one able to) that folds the log into the file."""
        with self._read_lock, self._write_lock:
            for conn in (self._reader, self._writer):
                if conn is not None:
                    conn.close()
            self._reader = self._writer = None

    def __enter__(self) -> GardenerStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _open(self, conn: sqlite3.Connection | None) -> sqlite3.Connection:
        if conn is None:
            raise StorageError(f"{self.path}: the Gardener's store is closed")
        return conn

    # ------------------------------------------------------------------ writing

    def add_cycle(
        self,
        tick: int,
        level: str,
        reasons_json: str,
        figures_json: str,
        decided_by: str,
        decision_json: str,
        rationale: str,
        note: str | None,
        requests: Sequence[tuple[str, str]],
    ) -> int:
        """Record a cycle and queue its requests (kind, params as a JSON object), all
        in one transaction: the engine sees the cycle with every request or none of
        it. Returns the cycle's id. Arguments that are not what the tables hold are
        refused (ValueError) before anything is written."""
        if type(tick) is not int or tick < 0:
            raise ValueError(f"tick must be a whole number of 0 or more, got {tick!r}")
        if level not in Level.__members__:
            raise ValueError(f"level must be one of {', '.join(Level.__members__)}, "
                             f"got {level!r}")
        _json_argument("reasons_json", reasons_json, list)
        _json_argument("figures_json", figures_json, dict)
        _json_argument("decision_json", decision_json, None)
        if not isinstance(decided_by, str) or not decided_by:
            raise ValueError("decided_by must name who decided ('rules' or a model id)")
        if not isinstance(rationale, str):
            raise ValueError("rationale must be text")
        if note is not None and not isinstance(note, str):
            raise ValueError("note must be text or None")
        queued = list(requests)
        for n, (kind, params) in enumerate(queued):
            if not isinstance(kind, str) or not kind:
                raise ValueError(f"request {n}: the kind must be text, got {kind!r}")
            _json_argument(f"request {n}'s params", params, dict)
        made_at = utc_stamp()
        with self._write_lock:
            conn = self._open(self._writer)
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    cursor = conn.execute(
                        "INSERT INTO gardener_cycles (tick, made_at, level, reasons, figures, "
                        "decided_by, decision, rationale, note) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (tick, made_at, level, reasons_json, figures_json, decided_by,
                         decision_json, rationale, note))
                    cycle = int(cursor.lastrowid or 0)
                    conn.executemany(
                        "INSERT INTO gardener_requests (cycle, kind, params, made_at) "
                        "VALUES (?, ?, ?, ?)",
                        [(cycle, kind, params, made_at) for kind, params in queued])
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StorageError(
                    f"{self.path}: could not record the Gardener's cycle ({exc}); nothing of "
                    "it was written, and the next cycle will try again") from None
        return cycle

    # ------------------------------------------------------------------ reading

    def recent_cycles(self, limit: int) -> list[CycleRecord]:
        """The last `limit` cycles, oldest first (newest last), each with its requests
        and what became of them: the Gardener's memory for its next decision. Rows
        that others wrote and that do not read as expected are read as far as they can
        be (params that are not a JSON object as {}, reasons that are not a list as [])."""
        if limit <= 0:  # SQLite reads a negative LIMIT as no limit at all
            return []
        with self._read_lock:
            conn = self._open(self._reader)
            try:
                cycles = conn.execute(
                    "SELECT id, CAST(tick AS INTEGER), level, reasons, decided_by, rationale "
                    "FROM gardener_cycles ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
                requests = conn.execute(
                    "SELECT cycle, kind, params, status, reason FROM gardener_requests "
                    "WHERE cycle BETWEEN ? AND ? ORDER BY id",
                    (cycles[-1][0], cycles[0][0])).fetchall() if cycles else []
            except sqlite3.DatabaseError as exc:
                raise StorageError(f"{self.path}: reading the Gardener's cycles failed "
                                   f"({exc})") from None
        asked: dict[int, list[RequestMemory]] = {int(row[0]): [] for row in cycles}
        for cycle, kind, params, status, reason in requests:
            if cycle in asked:
                asked[cycle].append((str(kind), _parsed(params, {}), str(status),
                                     None if reason is None else str(reason)))
        return [CycleRecord(int(cid), int(tick), str(level), _parsed(reasons, []),
                            str(decided_by), str(rationale), asked[int(cid)])
                for cid, tick, level, reasons, decided_by, rationale in reversed(cycles)]
