"""What branching costs (issue 30): forking a 1,000-agent world at tick 500, and what a
world's history takes on disk per 1,000 ticks.

    python -m bench fork

A 1,000-agent offline world is made and lived 501 ticks (`hearth --run`, a few minutes;
a fork is of a past tick), then forked as a user forks it, in a fresh process each time:
- at tick 500, a snapshot's tick: a copy of the snapshot and the homes made again from
  the recorded file calls, nothing walked;
- at tick 499, the worst case: from the snapshot of tick 400, 99 ticks walked again (the
  offline mind run again, checked against the stored turns).
Disk: the world's database (with its WAL), events.jsonl and snapshots at tick 0 and at
the end, per 1,000 ticks lived. HEARTH_BENCH_FORK_AGENTS and HEARTH_BENCH_FORK_TICKS
make a smaller run (for a quick look).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Figure

PROJECT = Path(__file__).resolve().parent.parent
AGENTS = int(os.environ.get("HEARTH_BENCH_FORK_AGENTS", "1000"))
TICKS = int(os.environ.get("HEARTH_BENCH_FORK_TICKS", "500"))


def _hearth(where: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "main", "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), *args],
        cwd=PROJECT, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"hearth {' '.join(args)} failed: {done.stderr.strip()}")
    return took


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _disk(data: Path) -> dict[str, int]:
    return {"database": sum(_size(data / n) for n in ("world.db", "world.db-wal")),
            "events.jsonl": _size(data / "events.jsonl"),
            "snapshots": _size(data / "snapshots")}


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "world"
        _hearth(world, "--init", "--seed", "7", "--agents", str(AGENTS))
        start = _disk(world / "data")
        homes0 = _size(world / "agents")
        lived = _hearth(world, "--run", str(TICKS + 1), "--quiet")
        end = _disk(world / "data")
        homes = _size(world / "agents")
        figures = [Figure(f"{AGENTS} agents lived {TICKS + 1} ticks", f"{lived:.0f} s")]
        per = 1000 / (TICKS + 1)
        for what in ("database", "events.jsonl"):
            figures.append(Figure(f"{what} per 1,000 ticks of history",
                                  f"{(end[what] - start[what]) * per / 1e6:.0f} MB "
                                  f"({start[what] / 1e6:.1f} MB made, "
                                  f"{end[what] / 1e6:.1f} MB at tick {TICKS + 1})"))
        # Bounded by snapshots_keep copies of the database (and the first), not by history.
        figures.append(Figure(f"snapshots kept at tick {TICKS + 1}",
                              f"{end['snapshots'] / 1e6:.0f} MB"))
        figures.append(Figure("homes per 1,000 ticks", f"{(homes - homes0) * per / 1e6:.1f} MB"))
        for at in sorted({TICKS, max(0, TICKS - 1)}, reverse=True):
            into = Path(tmp) / f"fork{at}"
            took = _hearth(world, "--fork", str(at), "--into", str(into))
            size = _size(into / "data") + _size(into / "agents")
            figures.append(Figure(f"fork at tick {at} (one process, start-up included)",
                                  f"{took:.1f} s, {size / 1e6:.0f} MB on disk"))
    return figures
