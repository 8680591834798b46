"""A process that writes a world must never lose a commit because it, or anyone, looked.

POSIX record locks belong to a process and a file: closing any descriptor of the
database drops every lock SQLite holds on it in that process. Another process that
then closes its own connection believes it is the last, checkpoints, and deletes the
-wal file the writer is still committing into, and the writer's next commits are
gone. So nothing in a process that may hold connections opens world.db outside
SQLite. These tests use real processes and a real WAL database: the control case
(a raw `open()`/`close()`) shows the loss happening, so the test can fail; Hearth's
own ways of looking at a file must not cause it.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from storage.database import header_version, probe
from storage.gardener_db import GardenerStore
from storage.schema import HEARTH_TABLES

TABLE = sorted(HEARTH_TABLES)[0]


def _raw_open_close(path: Path) -> None:
    with path.open("rb") as fh:
        fh.read(100)


LOOKS: dict[str, Callable[[Path], object]] = {
    "probe (every writing open)": probe,
    "header_version": header_version,
    "the Gardener's header check": GardenerStore._check_header,
}


def _other_process(path: Path, sql: str) -> str:
    """Run `sql` in another process through its own connection, which it then closes."""
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "print(c.execute(sys.argv[2]).fetchone()[0]); c.close()")
    done = subprocess.run([sys.executable, "-c", code, str(path), sql],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _committed_after_looking(path: Path, look: Callable[[Path], object]) -> int:
    """A writer commits, looks at its own file, another process opens and closes the
    database, the writer commits again: how many rows a third process then sees."""
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA user_version=1")
        writer.execute(f"CREATE TABLE {TABLE} (x)")  # a name probe knows as Hearth's
        writer.execute(f"INSERT INTO {TABLE} VALUES (1)")
        look(path)
        assert _other_process(path, f"SELECT count(*) FROM {TABLE}") == "1"
        writer.execute(f"INSERT INTO {TABLE} VALUES (2)")
        return int(_other_process(path, f"SELECT count(*) FROM {TABLE}"))
    finally:
        writer.close()


def test_the_hazard_is_real_a_raw_open_and_close_loses_the_next_commit(tmp_path: Path) -> None:
    """The control: if this ever stops losing a commit, the tests below prove nothing."""
    assert _committed_after_looking(tmp_path / "world.db", _raw_open_close) == 1


@pytest.mark.parametrize("name", list(LOOKS))
def test_hearths_own_looks_lose_nothing(tmp_path: Path, name: str) -> None:
    assert _committed_after_looking(tmp_path / "world.db", LOOKS[name]) == 2


def test_a_log_a_dead_writer_left_is_recovered_when_a_read_only_look_may_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite answers "attempt to write a readonly database" when a read-only connection
    meets a log that needs recovering (its writer was killed at the wrong moment; seen
    under load). That is no damage: probe looks again through a connection that may
    recover the log, as the next writer would, and the world opens."""
    from storage import database

    path = tmp_path / "world.db"
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {TABLE} (x)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    real = database._look
    modes: list[str] = []

    def refusing(where: Path, mode: str):  # noqa: ANN202
        modes.append(mode)
        if "mode=ro" in mode:
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(where, mode)

    monkeypatch.setattr(database, "_look", refusing)
    assert probe(path).version == 1
    assert modes == ["?mode=ro", ""]
