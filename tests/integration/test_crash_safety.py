"""A writer killed with SIGKILL mid-unit leaves an intact database without that unit.

These run a real writer process (tests/integration/crash_writer.py) and kill it
the hard way, then inspect the file with plain sqlite3.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import PROJECT_DIR

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

WRITER = Path(__file__).with_name("crash_writer.py")
ROWS = 200


def start_writer(mode: str, data_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_DIR)}
    return subprocess.Popen(
        [sys.executable, str(WRITER), mode, str(data_dir)],
        cwd=PROJECT_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_for(proc: subprocess.Popen[str], word: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == word:
            return
        if not line and proc.poll() is not None:
            stderr = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"writer exited early: {stderr}")
    raise AssertionError(f"writer never printed {word}")


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def inspect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return conn


def test_killed_mid_unit_leaves_none_of_its_rows(tmp_path: Path) -> None:
    proc = start_writer("mid-unit", tmp_path)
    try:
        wait_for(proc, "MID")
        time.sleep(0.05)  # let it write a few more rows of the open unit
    finally:
        kill(proc)

    conn = inspect(tmp_path / "world.db")
    unit_a = conn.execute("SELECT COUNT(*) FROM objects WHERE id LIKE 'A-%'").fetchone()[0]
    unit_b = conn.execute("SELECT COUNT(*) FROM objects WHERE id LIKE 'B-%'").fetchone()[0]
    stone = conn.execute("SELECT COUNT(*) FROM cells WHERE terrain = 'stone'").fetchone()[0]
    conn.close()
    assert unit_a == ROWS, "the committed unit must survive"
    assert unit_b == 0, "the uncommitted unit must leave no rows"
    assert stone == 0


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.45])
def test_killed_at_any_moment_every_unit_is_all_or_nothing(tmp_path: Path, delay: float) -> None:
    proc = start_writer("loop", tmp_path)
    try:
        wait_for(proc, "READY")
        time.sleep(delay)
    finally:
        kill(proc)

    conn = inspect(tmp_path / "world.db")
    counts = Counter(
        re.match(r"U(\d+)-", oid).group(1)  # type: ignore[union-attr]
        for (oid,) in conn.execute("SELECT id FROM objects")
    )
    conn.close()
    assert counts, "at least the first unit was committed"
    assert set(counts.values()) == {ROWS}, f"a unit was half-written: {counts}"
    units = sorted(int(u) for u in counts)
    assert units == list(range(len(units))), "committed units are a gap-free prefix"


def test_reopening_after_a_kill_works_and_keeps_committed_rows(tmp_path: Path) -> None:
    proc = start_writer("mid-unit", tmp_path)
    try:
        wait_for(proc, "MID")
    finally:
        kill(proc)
    # Reopen through Hearth itself: the probe, WAL recovery and pragmas all run.
    import asyncio

    from storage import Storage

    async def reopen() -> int:
        async with Storage(tmp_path, create=False) as storage:
            return await storage.objects.count_objects()

    assert asyncio.run(reopen()) == ROWS
