"""A world's lineage: the chain of worlds it was forked from, read for the observer.

    write_lineage(data_dir, Lineage(parent, world_id, 77, made_at))   # engine/fork.py
    record = read_record(data_dir)             # the record, or None; damaged: an error
    lineage = read_lineage_chain(data_dir)     # nearest parent first; () for no fork
    lineage.lived_in(40)                       # the ancestor that lived tick 40, or None

A fork's `lineage.json` (written by engine/fork.py) names its parent's data folder and
the fork tick T; the parent's own `lineage.json` names the grandparent, and so on. Each
ancestor is looked at, never changed: its record read through a descriptor that
follows no link and never waits (a FIFO there cannot hang the reader), its database
only through SQLite (`header_version`, then a `mode=ro` connection: storage/history.py
says why a world file is never read any other way) and never locked, so a parent
another process is running loses nothing to the look.

The fork holds its parent's past itself: its database began as a copy of the parent's
snapshot and was walked on to T, each turn checked against the parent's row for row.
So a fork's ticks 0..T-1 are read from the fork's own file (once: never from both) and
the chain only says which world lived them. An ancestor that was moved, deleted,
replaced by another world, made unreadable or written by a newer Hearth is kept in the
chain from the record with the reason it cannot be read; a record that does not parse
is a `problem`, not an exception: nothing here raises for what it finds on the disk.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from storage.database import header_version
from storage.errors import StorageError
from storage.schema import LATEST_VERSION
from storage.side_files import READ_FLAGS

LINEAGE_FILE = "lineage.json"
"""Beside a fork's world.db: which world it was forked from, and at which tick."""

MOST_ANCESTORS = 32
"""The chain is followed this far at most (a record naming its own child ends it sooner)."""

RECORD_BYTES = 64 * 1024
"""A lineage record is a few hundred bytes; a longer file is not one."""

LOOK_PATIENCE_MS = 1000
"""How long a look at an ancestor waits for a lock (a checkpoint in another process)."""


class LineageRecordError(StorageError):
    """A lineage.json that is there but cannot be read as one."""


@dataclass(frozen=True, slots=True)
class Lineage:
    """A fork's record of where it came from (its `lineage.json`)."""

    parent: str
    """The parent's data folder, absolute, as it was when the fork was made."""
    parent_world_id: str | None
    tick: int
    """The parent's clock at the fork: the fork holds the parent's ticks 0..tick-1."""
    made_at: str
    base_snapshot: int = 0
    """The tick of the parent's snapshot the fork was re-walked from."""
    changed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """What the fork changed at its start, per agent ({"Ember": {"personality": ...}})."""


def write_lineage(data_dir: Path, lineage: Lineage) -> Path:
    path = Path(data_dir) / LINEAGE_FILE
    path.write_text(json.dumps(asdict(lineage), indent=2) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class Ancestor:
    """One world in the chain: the child holds this world's ticks 0..tick-1."""

    folder: str
    """Its data folder, as the record names it."""
    tick: int
    """The fork tick: the child's clock read this when it was made."""
    world_id: str | None
    """The identity the record names (None from a parent older than identities)."""
    problem: str | None = None
    """Why it cannot be read now (moved, deleted, another world, newer...); None: it can."""

    @property
    def reachable(self) -> bool:
        return self.problem is None

    @property
    def name(self) -> str:
        """A short name: the folder above `data/` (as `hearth` lays worlds out), else the
        folder's own name."""
        path = Path(self.folder)
        if path.name == "data" and path.parent.name:
            return path.parent.name
        return path.name or str(path)


@dataclass(frozen=True, slots=True)
class WorldLineage:
    """Where a world came from: its ancestors, nearest first."""

    ancestors: tuple[Ancestor, ...] = ()
    problem: str | None = None
    """A record in the chain that could not be read (the chain stops there)."""

    @property
    def is_fork(self) -> bool:
        return bool(self.ancestors) or self.problem is not None

    def lived_in(self, tick: int) -> Ancestor | None:
        """The ancestor that lived `tick` (the oldest whose fork tick is past it), or None
        when the world itself lived it."""
        owner = None
        for ancestor in self.ancestors:
            if tick >= ancestor.tick:
                break
            owner = ancestor
        return owner

    def problems(self) -> list[str]:
        """Every reason part of the chain cannot be read, nearest first."""
        found = [f"the parent world at {a.folder} cannot be read: {a.problem}"
                 for a in self.ancestors if a.problem is not None]
        if self.problem is not None:
            found.append(self.problem)
        return found


def read_lineage(data_dir: Path) -> Lineage | None:
    """The fork's record, or None for a world that is no fork or whose record cannot be
    read (then it is no record: a fork's lineage is a convenience for replay and
    `--compare`, which say what they find without it)."""
    try:
        return read_record(data_dir)
    except LineageRecordError:
        return None


def read_record(data_dir: Path) -> Lineage | None:
    """`data_dir`/lineage.json; None when there is none. LineageRecordError when one is
    there but is not a record (a link, a FIFO, too long, damaged)."""
    path = Path(data_dir) / LINEAGE_FILE
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise LineageRecordError(f"{path} cannot be read ({why})") from None
    try:
        with os.fdopen(fd, "rb") as source:
            if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
                raise LineageRecordError(f"{path} is not a regular file")
            raw = source.read(RECORD_BYTES + 1)
    except OSError as exc:
        raise LineageRecordError(f"{path} cannot be read ({exc.strerror or exc})") from None
    if len(raw) > RECORD_BYTES:
        raise LineageRecordError(f"{path} is too long to be a lineage record")
    try:
        record = json.loads(raw.decode("utf-8"))
        parent, tick, world_id = record["parent"], record["tick"], record.get("parent_world_id")
        made_at, base = record.get("made_at", ""), record.get("base_snapshot", 0)
        changed = {str(name): {str(what): str(value) for what, value in dict(told).items()}
                   for name, told in dict(record.get("changed") or {}).items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LineageRecordError(f"{path} is damaged ({type(exc).__name__}: {exc})") from None
    if (not isinstance(parent, str) or not parent or not _count(tick) or not _count(base)
            or not (world_id is None or isinstance(world_id, str))):
        raise LineageRecordError(f"{path} is damaged (a parent folder, a tick of 0 or more "
                                 "and a parent identity or null are needed)")
    return Lineage(parent, world_id, tick, str(made_at), base, changed)


def _count(value: object) -> bool:
    """A whole number of 0 or more (JSON's true and false are not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def look_at_parent(folder: Path, world_id: str | None, tick: int) -> str | None:
    """Why the world in `folder` is not the readable parent the record names (None: it is).
    Reads its header and two rows through SQLite, read-only; never writes, never locks."""
    db = folder / "world.db"
    try:
        if not db.is_file():
            return ("no world is there any more (moved or deleted?)" if not folder.exists()
                    else "its folder holds no world.db any more")
        version = header_version(db)
    except (OSError, StorageError, sqlite3.Error) as exc:
        return str(exc)
    if version > LATEST_VERSION:
        return (f"it was written by a newer Hearth (schema v{version}; this one knows "
                f"v{LATEST_VERSION})")
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True,
                               isolation_level=None, timeout=LOOK_PATIENCE_MS / 1000)
    except sqlite3.Error as exc:
        return f"it cannot be opened ({exc})"
    try:
        clock = conn.execute("SELECT tick FROM world_state WHERE id = 1").fetchone()
        try:
            found = conn.execute("SELECT world_id FROM world_identity WHERE id = 1").fetchone()
        except sqlite3.OperationalError:  # a world from before identities
            found = None
    except sqlite3.Error as exc:
        return f"it cannot be read ({exc})"
    finally:
        conn.close()
    if clock is None:
        return "it holds no world"
    now_id = None if found is None else str(found[0])
    if world_id is not None and now_id != world_id:
        return "another world is there now, not the one this was forked from"
    if int(clock[0]) < tick:
        return (f"its clock reads {int(clock[0])}, before the fork at tick {tick} "
                "(restored from an older copy?)")
    return None


def read_lineage_chain(data_dir: Path, *, most: int = MOST_ANCESTORS) -> WorldLineage:
    """The chain of worlds `data_dir`'s world was forked from, nearest first, each marked
    with why it cannot be read (if it cannot). Never raises for what it finds."""
    ancestors: list[Ancestor] = []
    here = Path(data_dir)
    seen = {_key(here)}
    while len(ancestors) < most:
        try:
            record = read_record(here)
        except LineageRecordError as exc:
            return WorldLineage(tuple(ancestors), f"{exc}; where it came from is unknown")
        if record is None:
            break
        parent, tick = Path(record.parent), record.tick
        folder = parent if parent.is_absolute() else here / parent
        problem = look_at_parent(folder, record.parent_world_id, tick)
        ancestors.append(Ancestor(str(folder), tick, record.parent_world_id, problem))
        key = _key(folder)
        if problem is not None or key in seen:
            break  # beyond a parent that cannot be read (or is another world) nothing is
            # known for sure; a record naming a world already in the chain ends it too
        seen.add(key)
        here = folder
    return WorldLineage(tuple(ancestors))


def _key(folder: Path) -> str:
    try:
        return str(folder.resolve())
    except OSError:
        return str(folder)
