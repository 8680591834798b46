"""A world's files change whole or not at all: made aside and moved in, set aside as one.

    with WorldLock(data_dir):
        recover(data_dir)                      # finish or undo what a killed process left
        staging = new_staging(data_dir)        # build the new world.db in here
        ...
        saved = set_aside(data_dir, homes)     # the old world, all of it, as one backup
        install(staging, data_dir)             # world.db appears in one rename

A world is its database and the files beside it: the event log, the undo logs of
turns in flight, snapshots and traces (and the agents' homes, which live elsewhere).
Their only commit point is a rename, which the OS does whole:

- A new world is written in `data/.staging-STAMP/` and its world.db renamed into
  place last. Until then the folder has no world.db, so a killed `--init` leaves
  nothing a later `--init` must force (the staging folder is cleared by `recover`).
- An old world is set aside by moving its files into `backups/.partial-STAMP/`,
  world.db first (so from that moment the data folder holds no world, never a
  database without its event log), then its -wal and -shm, the side files and the
  homes listed in the partial folder, and renaming that folder to
  `backups/world.replaced.STAMP/`. `recover` finishes a move a kill interrupted, or
  drops a partial folder that had not yet taken the database. No backup ever carries
  a complete-looking name unless it is complete.

Every step runs under the world's writer lock (storage/world_lock.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from storage.database import utc_stamp
from storage.side_files import claim_dir

DB = "world.db"
SIDE_FILES = ("events.jsonl", "undo", "snapshots", "traces", "lineage.json")
"""What belongs to one world in its data folder besides the database."""
STAGING = ".staging-"
PARTIAL = ".partial-"
HOMES = "agents"
"""Inside a backup: the homes of the agents set aside with their world."""
HOMES_LIST = "homes.json"
"""Inside a partial backup: the homes to move with the world (absolute paths)."""


def new_staging(data_dir: Path) -> Path:
    """An empty folder to build a new world in, inside the data folder (same disk)."""
    staging = data_dir / f"{STAGING}{utc_stamp()}"
    staging.mkdir(parents=True)
    return staging


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _settle(db: Path) -> None:
    """Fold the write-ahead log into the file, so the file alone is the whole world."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous=FULL")  # the checkpoint syncs the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")  # removes -wal and -shm
    finally:
        conn.close()


def install(staging: Path, data_dir: Path) -> Path:
    """Move a world built in `staging` into the data folder: one rename makes it live."""
    built = staging / DB
    _settle(built)
    target = data_dir / DB
    os.replace(built, target)
    _fsync_dir(data_dir)
    shutil.rmtree(staging, ignore_errors=True)
    return target


def _move(source: Path, folder: Path) -> None:
    if source.exists() or source.is_symlink():
        folder.mkdir(parents=True, exist_ok=True)
        os.replace(source, folder / source.name)


def _take(data_dir: Path, partial: Path) -> None:
    """Move into `partial` whatever of the old world is still in the data folder and in
    the homes its list names: the database first, then the rest."""
    for suffix in ("", "-wal", "-shm"):
        _move(data_dir / f"{DB}{suffix}", partial)
    for name in SIDE_FILES:
        _move(data_dir / name, partial)
    try:
        homes = json.loads((partial / HOMES_LIST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        homes = []
    for home in homes if isinstance(homes, list) else []:
        _move(Path(str(home)), partial / HOMES)
    (partial / HOMES_LIST).unlink(missing_ok=True)


def set_aside(data_dir: Path, homes: Iterable[Path] = ()) -> Path:
    """Move the whole world in `data_dir` (and the given homes) into one dated backup;
    gives its folder. The database moves first: from then on the data folder holds no
    world, and `recover` knows to finish the move (see the module's docstring)."""
    stamp = utc_stamp()
    backups = data_dir / "backups"
    partial = backups / f"{PARTIAL}{stamp}"
    claim_dir(backups)  # backups/ as a link is moved aside, never written into
    partial.mkdir()
    listed = json.dumps([str(Path(h).absolute()) for h in homes])
    (partial / HOMES_LIST).write_text(listed, encoding="utf-8")
    _fsync_dir(partial)
    _take(data_dir, partial)
    _fsync_dir(partial)
    final = backups / f"world.replaced.{stamp}"
    os.replace(partial, final)
    _fsync_dir(backups)
    _fsync_dir(data_dir)
    return final


def recover(data_dir: Path) -> list[str]:
    """Finish what a killed `--init` left (under the writer lock); a line per thing done.

    A staging folder is an unfinished new world: removed. A partial backup holding the
    old world's database was interrupted while the old world was moving: the rest of
    it is moved along and the backup named. One without the database had moved
    nothing yet: removed, and the old world stays where it is."""
    done: list[str] = []
    if not data_dir.is_dir():
        return done
    for staging in sorted(data_dir.glob(f"{STAGING}*")):
        shutil.rmtree(staging, ignore_errors=True)
        done.append(f"removed {staging.name}, a world an interrupted --init had not finished")
    backups = data_dir / "backups"
    real = backups.is_dir() and not backups.is_symlink()  # never through a link
    for partial in sorted(backups.glob(f"{PARTIAL}*")) if real else []:
        if not (partial / DB).exists():
            shutil.rmtree(partial, ignore_errors=True)
            continue
        _take(data_dir, partial)
        final = backups / f"world.replaced.{partial.name.removeprefix(PARTIAL)}"
        os.replace(partial, final)
        done.append(f"finished setting the old world aside in {final}")
    return done


def identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` names now (device, inode), from a stat, which opens nothing;
    None if there is none. A world replaced by `--init --force` is another file."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def agent_names(db: Path) -> list[str]:
    """The names of the agents a world's database holds (read-only, through SQLite)."""
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        return [str(row[0]) for row in conn.execute("SELECT name FROM agents ORDER BY name")]
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()
