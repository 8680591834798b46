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

import os
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


async def test_nothing_in_a_living_world_opens_its_database_outside_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard that fails if the hazard comes back anywhere these paths reach: while a
    world lives here (making it, ticks with snapshots, the history reader, --status's
    view, a Gardener's store), no Python-level open of world.db or its -wal/-shm."""
    import builtins
    import io

    from adapters.offline_mind import OfflineMind
    from config import load_config
    from engine import HearthEngine
    from services.status import world_status
    from services.world_setup import create_world
    from storage import Storage
    from storage.history import HistoryReader

    data = tmp_path / "data"
    guarded = {str((data / name).resolve()) for name in ("world.db", "world.db-wal",
                                                        "world.db-shm")}
    touched: list[str] = []

    def watch(real):  # noqa: ANN001, ANN202
        def opening(file, *args, **kwargs):  # noqa: ANN001, ANN202
            where = file if isinstance(file, (str, bytes, os.PathLike)) else None
            if where is not None and str(Path(os.fsdecode(where)).resolve()) in guarded:
                touched.append(str(where))
            return real(file, *args, **kwargs)
        return opening

    monkeypatch.setattr(builtins, "open", watch(builtins.open))
    monkeypatch.setattr(io, "open", watch(io.open))
    monkeypatch.setattr(os, "open", watch(os.open))
    config = load_config(None)
    async with Storage(data) as storage:
        await create_world(storage, config, seed=3, size=(40, 32), agent_count=3)
    reader = HistoryReader(data / "world.db")
    try:
        async with Storage(data, create=False) as storage:
            state = await storage.world.get_world_state()
            agents = await storage.agents.get_all_agents()
            engine = await HearthEngine.open(storage, config, agents_dir=tmp_path / "agents",
                                  mind=OfflineMind(state.seed,
                                                   {a.name: a.personality for a in agents}))
            for _ in range(4):
                await engine.tick_once()
                await engine.committer.flush_writes()
                assert reader.first_tick() == 0
                reader.lines(engine.tick - 1)
            await storage.snapshots.create(storage.db, engine.tick)
            async with Storage(data, create=False, read_only=True) as looking:
                assert (await world_status(looking)).tick == engine.tick
            with GardenerStore(data / "world.db"):
                pass
            await engine.close()
    finally:
        reader.close()
    assert touched == []
