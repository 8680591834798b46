"""What a fork needs from storage: a world's past read without disturbing it, and a
snapshot copied as a new world (the record of where a fork came from is
storage/lineage.py's).

    past = WorldPast.open(parent_data_dir)       # read-only; safe beside a writer
    base = past.base_snapshot(77)                # the newest kept snapshot at or before 77
    copy_as_new_world(base.path, staging / "world.db")

Nothing here writes to the parent: its database is read through `mode=ro` connections
(storage/history.py explains why a reader never opens world.db any other way), and a
snapshot file, once renamed into place, never changes again. Ticks count as the world's
clock does: "tick T" is the world after T ticks were lived, whose `world_state.tick` reads
T; its turns and events are those of ticks 0..T-1.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from storage.errors import StorageError, WorldNotFoundError
from storage.side_files import READ_FLAGS, kind
from storage.snapshots import SnapshotManager


class ForkError(StorageError):
    """A fork that cannot be made as asked; the message says why, in one line."""


def read_only(db: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """A `mode=ro` connection: it can never write, and reads committed data beside a writer.
    `immutable`: for a file that never changes again (a snapshot), read without locks or
    a -shm file, so not even SQLite's shared memory beside it is touched."""
    if not db.is_file():
        raise WorldNotFoundError(f"{db}: no world database here")
    how = "mode=ro&immutable=1" if immutable else "mode=ro"
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?{how}", uri=True,
                               isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("SELECT tick FROM world_state LIMIT 0").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ForkError(f"{db}: cannot read this world ({exc})") from None
    return conn


@dataclass(frozen=True, slots=True)
class Snapshot:
    tick: int
    path: Path


class WorldPast:
    """A world's stored past, read-only: its clock, snapshots, turns and file calls."""

    def __init__(self, data_dir: Path, conn: sqlite3.Connection) -> None:
        self.data_dir = data_dir
        self.db = data_dir / "world.db"
        self.conn = conn
        row = conn.execute("SELECT tick FROM world_state WHERE id = 1").fetchone()
        if row is None:
            conn.close()
            raise ForkError(f"{self.db} holds no world yet")
        self.tick = int(row[0])
        try:
            found = conn.execute("SELECT world_id FROM world_identity WHERE id = 1").fetchone()
        except sqlite3.OperationalError:  # a world from before identities
            found = None
        self.world_id: str | None = None if found is None else str(found[0])

    @classmethod
    def open(cls, data_dir: Path) -> WorldPast:
        data_dir = Path(data_dir)
        return cls(data_dir, read_only(data_dir / "world.db"))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> WorldPast:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def snapshots(self) -> list[Snapshot]:
        """This world's kept snapshots, oldest first (another world's are never listed)."""
        manager = SnapshotManager(self.data_dir / "snapshots", self.world_id)
        if not (self.data_dir / "snapshots").is_dir():
            return []
        return [Snapshot(t, p) for t, p in manager.list()]

    def base_snapshot(self, tick: int) -> Snapshot:
        """The newest snapshot at or before `tick`; ForkError, naming what is kept, if none."""
        kept = self.snapshots()
        usable = [s for s in kept if s.tick <= tick]
        if usable:
            return usable[-1]
        if kept:
            raise ForkError(f"{self.data_dir}: no snapshot at or before tick {tick} is kept "
                            f"(the oldest is of tick {kept[0].tick}); fork at tick "
                            f"{kept[0].tick} or later")
        raise ForkError(f"{self.data_dir}: the world keeps no snapshot to fork from (worlds "
                        "first run by this version keep their first tick's; "
                        "storage.snapshot_every_ticks 0 keeps none)")

    def turn_kinds(self, start: int, end: int) -> dict[str, set[str]]:
        """Which minds took each agent's turns in ticks start..end-1."""
        kinds: dict[str, set[str]] = {}
        for agent, mind in self.conn.execute(
                "SELECT DISTINCT agent, mind FROM turns WHERE tick >= ? AND tick < ?",
                (start, end)):
            kinds.setdefault(str(agent), set()).add(str(mind))
        return kinds

    def file_calls(self, before: int, changing: Collection[str]
                   ) -> Iterator[tuple[str, str, dict]]:
        """(agent, tool, arguments) of every successful call of a tool in `changing` (those
        that change a home: adapters/tools says which) in ticks before `before`, in the
        order they ran for each agent (one turn a tick, calls in the order of the turn's
        record)."""
        cursor = self.conn.execute(
            "SELECT agent, record FROM turns WHERE tick < ? AND record LIKE '%_file\"%' "
            "ORDER BY tick, agent", (before,))
        for agent, record_text in cursor.fetchall():
            try:
                actions = json.loads(record_text).get("actions", ())
            except (ValueError, AttributeError):
                continue
            for action in actions:
                if (isinstance(action, dict) and action.get("ok") is True
                        and action.get("tool") in changing
                        and isinstance(action.get("args"), dict)):
                    yield str(agent), str(action["tool"]), action["args"]

    def turn_rows(self, start: int, end: int) -> dict[tuple[int, str], tuple]:
        """(tick, agent) -> (mind, actions, ended, record) of ticks start..end-1."""
        return {(int(t), str(a)): (m, n, e, r) for t, a, m, n, e, r in self.conn.execute(
            "SELECT tick, agent, mind, actions, ended, record FROM turns "
            "WHERE tick >= ? AND tick < ?", (start, end))}

    def pending_requests(self, tick: int) -> tuple[list[tuple], list[tuple]]:
        """The Gardener's cycles and requests the engine applied (or refused) at `tick`,
        made after the snapshot the fork starts from: put back as pending before that
        tick runs, they are judged again as they were then."""
        requests = self.conn.execute(
            "SELECT id, cycle, kind, params, made_at, x, y FROM gardener_requests "
            "WHERE done_tick = ? ORDER BY id", (tick,)).fetchall()
        cycles = sorted({int(r[1]) for r in requests})
        marks = ",".join("?" * len(cycles))
        found = self.conn.execute(
            "SELECT id, tick, made_at, level, reasons, figures, decided_by, decision, "
            f"rationale, note FROM gardener_cycles WHERE id IN ({marks})", cycles
        ).fetchall() if cycles else []
        return found, requests


def copy_as_new_world(source: Path, target: Path) -> str:
    """Copy a world's database (a snapshot, read-only) to `target` through SQLite's backup
    API, and give the copy an identity of its own; returns it. A fork is another world:
    its side files (undo logs, snapshots, the event log) must never be taken for the
    parent's, nor the parent's for its."""
    src = read_only(source, immutable=True)
    try:
        dst = sqlite3.connect(target, isolation_level=None)
        try:
            src.backup(dst)
            world_id = uuid.uuid4().hex
            dst.execute("BEGIN IMMEDIATE")
            dst.execute("UPDATE world_identity SET world_id = ? WHERE id = 1", (world_id,))
            dst.execute("COMMIT")
        finally:
            dst.close()
    except sqlite3.Error as exc:
        raise ForkError(f"{source}: could not be copied to {target} ({exc})") from None
    finally:
        src.close()
    return world_id


def restore_requests(db: Path, cycles: list[tuple], requests: list[tuple]) -> None:
    """Put the parent's Gardener cycles and requests into the fork (as pending) before
    the tick that judged them; those already there are left as they are."""
    if not requests:
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT OR IGNORE INTO gardener_cycles (id, tick, made_at, level, reasons, figures,"
            " decided_by, decision, rationale, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            cycles)
        conn.executemany(
            "INSERT OR IGNORE INTO gardener_requests (id, cycle, kind, params, made_at, x, y)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)", requests)
        conn.execute("COMMIT")
    finally:
        conn.close()


def copy_event_lines(parent_log: Path, target_log: Path, db: Path) -> bool:
    """Start the fork's events.jsonl with the parent's first lines, one per event the
    fork's database holds (the log is in seq order, and the snapshot holds a prefix of
    the parent's events): a copy of bytes, where writing them anew from the table took
    most of a fork's time (8 s for 320,000 events). False, and nothing written, when the
    parent's log is not a regular file or is shorter; the fork's own start then writes
    its log from the table (and mends a copy that does not agree, EventMirror.reconcile)."""
    conn = read_only(db)
    try:
        count = int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    finally:
        conn.close()
    try:
        fd = os.open(parent_log, READ_FLAGS)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as source:
        if kind(os.fstat(source.fileno())) is not None:
            return False
        with open(target_log, "wb") as target:
            left = count
            while left:
                line = source.readline()
                if not line.endswith(b"\n"):
                    break
                target.write(line)
                left -= 1
    if left:
        target_log.unlink()
        return False
    return True


def directory_bytes(folder: Path) -> int:
    """The bytes of every regular file under `folder` (links not followed)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total
