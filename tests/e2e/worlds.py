"""One world lived twice, disturbed and not, for the hostile e2e tests (issue 26).

Several hostile cases (a full disk, signals, a lock another program holds) end the
same way: the disturbed run is resumed to TOTAL ticks and the world must then be
identical, row for row and line for line of events.jsonl, to an undisturbed run of
the same world (offline minds, one seed). What that takes is shared here, so every
case compares the same things in the same way: running `hearth` on a data folder
and a homes folder that may live apart, resuming, and reading a world whole.

Each test module keeps thin fixtures over `make_world` and `live_undisturbed`
(module-scoped, so a world is made once per module and worker).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

from tests.e2e.processes import PROJECT, clean_env, hearth_args

TOTAL = 60
"""Ticks of every world compared (the disturbed one in two runs or more)."""

VOLATILE = frozenset({"tick_metrics", "tick_progress"})
"""Timing, not world: left out of comparisons (as in test_run_cli.py)."""

SEED, SIZE, AGENTS = "31", "96x80", "8"
"""The world every case copies: ~2.5 ms a tick with offline minds."""


def run_args(data: Path, homes: Path, *args: str) -> list[str]:
    """`hearth *args` on the world in `data`, homes in `homes` (which may be apart)."""
    # hearth_args wants one folder holding data/ and agents/; here they may differ.
    words = hearth_args(Path("/nowhere"), *args)
    words[words.index("--data-dir") + 1] = str(data)
    words[words.index("--agents-dir") + 1] = str(homes)
    return words


def run(data: Path, homes: Path, *args: str, timeout: float = 120
        ) -> subprocess.CompletedProcess:
    return subprocess.run(run_args(data, homes, *args), capture_output=True, text=True,
                          timeout=timeout, cwd=PROJECT, env=clean_env())


def tick_of(data: Path) -> int:
    conn = sqlite3.connect(f"{(data / 'world.db').resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT tick FROM world_state").fetchone()[0])
    finally:
        conn.close()


def resume(data: Path, homes: Path, total: int = TOTAL) -> None:
    """Run on until the world has lived `total` ticks (more than one run if need be)."""
    for _ in range(3):
        left = total - tick_of(data)
        if left <= 0:
            break
        done = run(data, homes, "--run", str(left), "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stdout + done.stderr
    assert tick_of(data) == total


def world(data: Path, homes: Path) -> dict[str, object]:
    """Everything compared: the tables (less timing), events.jsonl, the homes' files."""
    conn = sqlite3.connect(f"{(data / 'world.db').resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        out: dict[str, object] = {
            t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
            for t in sorted(tables) if t not in VOLATILE}
    finally:
        conn.close()
    out["events.jsonl"] = (data / "events.jsonl").read_text(encoding="utf-8").splitlines()
    # .status is left out: each run's start writes it anew (for offline minds, which
    # never read it, only then), so a world lived in two runs differs there anyway.
    out["homes"] = {
        str(p.relative_to(homes)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(homes.rglob("*"))
        if p.is_file() and not p.name.startswith(".status")}
    return out


def minds_rows(db: Path) -> dict[str, tuple[str, str, int]]:
    """Each agent's stored mind: (kind, state JSON, the tick it was written), read-only."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {a: (k, s, t) for a, k, s, t in conn.execute(
            "SELECT agent, kind, state, tick FROM minds")}
    finally:
        conn.close()


def copy_world(made: Path, data: Path, homes: Path) -> tuple[Path, Path]:
    shutil.copytree(made / "data", data)
    shutil.copytree(made / "agents", homes)
    return data, homes


def make_world(where: Path) -> Path:
    """A new world in `where` (data/, agents/), never run: copied for every case, so all
    share one identity."""
    done = run(where / "data", where / "agents", "--init", "--seed", SEED, "--size", SIZE,
               "--agents", AGENTS)
    assert done.returncode == 0, done.stdout + done.stderr
    return where


def live_undisturbed(made: Path, where: Path, total: int = TOTAL) -> dict[str, object]:
    """The world `made` after `total` ticks lived in one run, nothing in its way."""
    data, homes = copy_world(made, where / "data", where / "agents")
    done = run(data, homes, "--run", str(total), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert tick_of(data) == total
    return world(data, homes)
