"""A database fault said in one line (`main.py` prints it and exits 1).

SQLite reports a lock held too long, a full disk, a failing disk and a disk turned
read-only in its own terms ("database is locked", "disk I/O error", ...); the words here
name the folder and say what to do, and that what was committed is kept.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def database_fault(exc: sqlite3.Error, where: Path) -> str:
    """A database fault met by a command on the world in `where` (its data folder), in
    words a person can act on: what happened, that the committed is saved, what to do."""
    said = str(exc)
    if "locked" in said or "busy" in said:
        return (f"{where / 'world.db'} stayed locked by another program longer than Hearth "
                "waits (an sqlite3 shell in a transaction?); everything committed is saved "
                "and the next run goes on from it: close what holds it and run again")
    if "full" in said or getattr(exc, "sqlite_errorname", "") == "SQLITE_IOERR_SHMSIZE":
        return (f"the disk holding {where} is full; everything committed is saved and the "
                "next run goes on from it: free some space and run again")
    if ("disk I/O error" in said or "readonly" in said) and _read_only(where):
        return (f"the disk holding {where} is read-only; everything committed is saved and "
                "the next run goes on from it: make it writable and run again")
    if "disk I/O error" in said:
        return (f"the disk holding {where} failed a read or write ({said}); everything "
                "committed is saved and the next run goes on from it: check the disk and "
                "run again")
    return (f"the database in {where} failed ({said}); everything committed is saved and "
            "the next run goes on from it")


def _read_only(where: Path) -> bool:
    """Whether the file system holding `where` is mounted read-only: SQLite says only
    "disk I/O error" when a disk turns read-only under an open database."""
    try:
        return bool(os.statvfs(where).f_flag & os.ST_RDONLY)
    except OSError:
        return False
