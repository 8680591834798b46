"""What a data folder holds that its world does not need, found without changing or
opening anything (a stat, a directory listing, a look at the writer lock), for
`--status` and `--check`; services/status.py puts it in words.

A clean exit leaves none of these (storage/wal_checkpointer.py, storage/snapshots.py).
They come from a reader that held the log as the last writer ended, a run that was
killed, or an older Hearth:

- "log": world.db-wal with content while no writer holds the world. It holds committed
  ticks, so it is never removed: the next writer folds it into world.db, and its close
  empties it.
- "unkept", "beside", "partial": side files in snapshots/ (`SnapshotManager.strays`),
  removed by the next writer's open (`Storage.open`).
- "staging": a world an interrupted `--init` did not finish, removed by the next
  writer's open (`world_files.recover`).

A writer at work is never reported on for its own files: its log, the snapshot it is
copying and its `--init`'s staging folder are in use, not left over.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from storage.snapshots import SnapshotManager
from storage.world_files import STAGING
from storage.world_lock import writer_there

KINDS = ("log", "unkept", "beside", "partial", "staging")


@dataclass(frozen=True, slots=True)
class Leftover:
    kind: str
    """One of KINDS (see the module's docstring)."""
    path: Path
    """The file, or the folder that holds the files."""
    files: int
    bytes: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")


def find_leftovers(data_dir: Path) -> list[Leftover]:
    """What is left over in `data_dir`, one entry per kind (per folder for "staging")."""
    data_dir = Path(data_dir)
    writing = writer_there(data_dir)
    found = []
    log = data_dir / "world.db-wal"
    if not writing and (size := _regular_size(log)):
        found.append(Leftover("log", log, 1, size))
    strays = SnapshotManager(data_dir / "snapshots").strays()
    for kind in ("unkept", "beside") if writing else ("unkept", "beside", "partial"):
        if strays[kind]:
            found.append(Leftover(kind, data_dir / "snapshots", len(strays[kind]),
                                  sum(size for _path, size in strays[kind])))
    if not writing:
        for staging in sorted(data_dir.glob(f"{STAGING}*")):
            if _is_folder(staging):
                found.append(Leftover("staging", staging, *_tree(staging)))
    return found


def _regular_size(path: Path) -> int:
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _tree(folder: Path) -> tuple[int, int]:
    """(files, bytes) under `folder`, no link followed."""
    files = size = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            files += 1
            size += _regular_size(Path(root, name))
    return files, size
