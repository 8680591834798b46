"""Bringing an older world file up to the current schema, safely.

Each migration runs in its own IMMEDIATE transaction together with the bump of
`PRAGMA user_version`, so a crash mid-migration leaves the file at the last
completed version. Before migrating an existing file, the caller takes a full
backup through SQLite's online backup API.
"""

from __future__ import annotations

import aiosqlite

from storage.schema import LATEST_VERSION, MIGRATIONS, Migration


def pending(current: int, target: int = LATEST_VERSION) -> tuple[Migration, ...]:
    """The migrations that take a file from `current` to `target`, in order."""
    return tuple(m for m in MIGRATIONS if current < m.version <= target)


async def apply_migrations(
    conn: aiosqlite.Connection, current: int, target: int = LATEST_VERSION
) -> int:
    """Apply pending migrations; returns the version reached."""
    version = current
    for migration in pending(current, target):
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in migration.statements:
                await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version = {int(migration.version)}")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        await conn.execute("COMMIT")
        version = migration.version
    return version
