"""Point-in-time copies of world.db through SQLite's online backup API.

A snapshot is consistent even while the engine writes, because the backup API
copies pages under SQLite's own locking. Files are written under a temporary
name and renamed, so a crash never leaves a half-written snapshot_N.db.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from storage.database import Database

_NAME = re.compile(r"^snapshot_(\d+)\.db$")


class SnapshotManager:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    async def create(self, db: Database, tick: int) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / f"snapshot_{int(tick)}.db"
        partial = final.with_suffix(".db.partial")
        partial.unlink(missing_ok=True)
        # aiosqlite runs the backup on its own thread, so the target must allow that.
        target = sqlite3.connect(partial, check_same_thread=False)
        try:
            # Holding the write lock keeps a unit of work from being open meanwhile,
            # which would otherwise make the backup retry forever.
            async with db.exclusive():
                await db.conn.backup(target)
        finally:
            target.close()
        partial.replace(final)
        return final

    def list(self) -> list[tuple[int, Path]]:
        """(tick, path) of every snapshot, oldest first."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.iterdir():
            match = _NAME.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)

    def latest(self) -> Path | None:
        snaps = self.list()
        return snaps[-1][1] if snaps else None

    def prune(self, keep: int) -> list[Path]:
        """Delete all but the newest `keep` snapshots; returns what was removed."""
        if keep < 1:
            raise ValueError("keep at least one snapshot")
        doomed = [p for _, p in self.list()[:-keep]]
        for path in doomed:
            path.unlink(missing_ok=True)
        return doomed
