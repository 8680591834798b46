"""`hearth --init` for a 500x500 world, end to end, as a user runs it.

    python -m bench init

Each run is a fresh process (`python -m main --init` into a temporary folder),
so the figure includes interpreter start-up and imports: what a person waits for.
Target (issue 3): <= 1.5 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Figure

PROJECT = Path(__file__).resolve().parent.parent
RUNS = 3


def run() -> list[Figure]:
    times = []
    for seed in range(RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "main", "--data-dir", f"{tmp}/data",
                 "--agents-dir", f"{tmp}/agents", "--init", "--seed", str(seed)],
                cwd=PROJECT, env=env, capture_output=True, text=True, check=False,
            )
            times.append(time.perf_counter() - started)
            if done.returncode != 0:
                raise RuntimeError(f"hearth --init failed: {done.stderr.strip()}")
            created = (Path(tmp) / "data" / "world.db").exists()
            homes = len(list((Path(tmp) / "agents").iterdir()))
    median = statistics.median(times)
    return [
        Figure(f"--init 500x500, median of {RUNS} processes", f"{median:.2f} s", "<= 1.5 s",
               median <= 1.5),
        Figure("--init runs", " ".join(f"{t:.2f}" for t in times)),
        Figure("last run wrote", f"world.db {'yes' if created else 'NO'}, {homes} homes"),
    ]
