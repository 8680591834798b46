"""Readers beside a running world never cost it a tick (issue 25).

A real `hearth --run` lives the world while other processes look at it in every way
a person might: Python's sqlite3, `hearth --status --json`, `hearth --gardener --once`
(which also writes its own rows), and a raw open()/close() of the file. Afterwards
the database must hold every tick the run committed, events.jsonl must equal the
events table (none missing, none extra, none twice) and the file must be intact.
The default suite runs a few reader cycles; `--run-slow` runs 200.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.processes import clean_env, hearth_args

WORLD = ("--seed", "11", "--size", "200x160", "--agents", "150")

RAW = ("import sys; fh = open(sys.argv[1], 'rb'); fh.read(100); fh.close()")
SQLITE = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
          "c.execute('SELECT count(*) FROM events').fetchone();"
          "c.execute('SELECT tick FROM world_state').fetchone(); c.close()")






def _readers(where: Path) -> list[list[str]]:
    db = str(where / "data" / "world.db")
    return [[sys.executable, "-c", SQLITE, db],
            hearth_args(where, "--status", "--json"),
            [sys.executable, "-c", RAW, db],
            hearth_args(where, "--gardener", "--once")]


def _check(where: Path, ticks: int) -> None:
    db = sqlite3.connect(where / "data" / "world.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT tick FROM world_state").fetchone()[0] == ticks
        seqs = [s for (s,) in db.execute("SELECT seq FROM events ORDER BY seq")]
    finally:
        db.close()
    logged = [json.loads(line)["seq"]
              for line in (where / "data" / "events.jsonl").read_text().splitlines()]
    assert len(logged) == len(set(logged))  # none twice
    assert logged == seqs  # none missing, none extra, in order


def _stress(where: Path, cycles: int) -> None:
    made = subprocess.run(hearth_args(where, "--init", *WORLD), capture_output=True, text=True,
                          timeout=300, env=clean_env())
    assert made.returncode == 0, made.stderr
    ticks = 100_000
    writer = subprocess.Popen(hearth_args(where, "--run", str(ticks), "--quiet"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=clean_env())
    try:
        readers = _readers(where)
        for cycle in range(cycles):
            done = subprocess.run(readers[cycle % len(readers)], capture_output=True,
                                  text=True, timeout=120, env=clean_env())
            said = done.stderr + done.stdout[-2000:]  # --status --json says a refusal on stdout
            assert done.returncode == 0, (readers[cycle % len(readers)][-2:], said)
            assert writer.poll() is None, "the writer stopped while being read"
    finally:
        time.sleep(0.2)
        writer.send_signal(2)  # Ctrl+C: the turn in flight is finished and committed
        out, err = writer.communicate(timeout=120)
    assert writer.returncode == 130, out + err
    assert "Traceback" not in out + err
    stopped = [line for line in out.splitlines() if line.startswith("Stopped at tick ")]
    assert len(stopped) == 1, out
    tick = int(stopped[0].removeprefix("Stopped at tick ").split(";")[0].split(":")[0])
    _check(where, tick)


def test_readers_of_every_kind_beside_a_running_world_lose_nothing(tmp_path: Path) -> None:
    _stress(tmp_path, cycles=8)


@pytest.mark.slow
def test_two_hundred_reader_cycles_beside_a_running_world_lose_nothing(tmp_path: Path) -> None:
    _stress(tmp_path, cycles=200)
