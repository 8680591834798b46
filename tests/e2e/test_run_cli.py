"""`hearth --run N` as a person uses it: output, flags, Ctrl+C, SIGKILL, determinism.

The crash tests run the real CLI in a subprocess and kill it with SIGKILL at a
random moment; then they check the file (integrity), run again to finish, and
compare the final world with an uninterrupted run of the same length. With the
offline minds and a fixed seed the two must be identical row for row, which
could not hold if any turn had been half-applied or applied twice.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.life import life_report, live_world

PROJECT = Path(__file__).resolve().parents[2]
SEED = 31
SIZE = "96x80"
AGENTS = "8"
TICKS = 40

VOLATILE = frozenset({"tick_metrics", "tick_progress"})
"""Tables whose content is timing, not world: left out of comparisons."""


def _hearth(data: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(data / "data"),
         "--agents-dir", str(data / "agents"), *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=PROJECT,
    )


def _start(data: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.Popen(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(data / "data"),
         "--agents-dir", str(data / "agents"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=PROJECT,
    )


def _world_rows(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        out = {}
        for table in sorted(tables):
            if table in VOLATILE:
                continue
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def _scalar(db: Path, sql: str):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def fresh_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small world made once; tests copy it so they start from the same file."""
    base = tmp_path_factory.mktemp("fresh")
    made = _hearth(base, "--init", "--seed", str(SEED), "--size", SIZE, "--agents", AGENTS)
    assert made.returncode == 0, made.stderr
    return base


def _copy(world: Path, to: Path) -> Path:
    shutil.copytree(world, to)
    return to


@pytest.fixture(scope="module")
def reference(fresh_world: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The world after TICKS uninterrupted ticks."""
    run = _copy(fresh_world, tmp_path_factory.mktemp("ref") / "w")
    done = _hearth(run, "--run", str(TICKS), "--quiet")
    assert done.returncode == 0, done.stderr
    return _world_rows(run / "data" / "world.db")


# --- output and flags ---------------------------------------------------------------


def test_run_prints_a_line_per_action_and_a_summary(fresh_world: Path, tmp_path: Path) -> None:
    run = _copy(fresh_world, tmp_path / "w")
    done = _hearth(run, "--run", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    actions = [line for line in lines if line.startswith("[t")]
    assert actions and all(line.startswith(("[t0 ", "[t1 ", "[t2 ")) for line in actions)
    assert any(line.startswith("3 ticks, ") for line in lines)
    assert any(line.startswith("time per tick: ") for line in lines)
    assert _scalar(run / "data" / "world.db", "SELECT tick FROM world_state") == 3


def test_json_gives_one_object_per_tick_on_stdout(fresh_world: Path, tmp_path: Path) -> None:
    run = _copy(fresh_world, tmp_path / "w")
    done = _hearth(run, "--run", "4", "--json")
    assert done.returncode == 0, done.stderr
    ticks = [json.loads(line) for line in done.stdout.splitlines()]
    assert [t["tick"] for t in ticks] == [0, 1, 2, 3]
    assert all(t["completed"] and isinstance(t["turns"], list) for t in ticks)
    assert "ticks," in done.stderr  # the summary goes to stderr, stdout stays JSON


def test_quiet_prints_only_the_summary(fresh_world: Path, tmp_path: Path) -> None:
    run = _copy(fresh_world, tmp_path / "w")
    done = _hearth(run, "--run", "2", "--quiet")
    assert done.returncode == 0
    assert not any(line.startswith("[t") for line in done.stdout.splitlines())
    assert "2 ticks, " in done.stdout


@pytest.mark.parametrize("args, needle", [
    (("--run", "0"), "--run"),
    (("--run", "many"), "--run"),
    (("--quiet",), "--quiet goes with --run"),
    (("--run", "2", "--status"), "not allowed"),
])
def test_bad_run_flags_are_one_line_usage_errors(tmp_path: Path, args, needle) -> None:
    done = _hearth(tmp_path, *args)
    assert done.returncode == 2
    assert needle in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_status_shows_tick_times_after_a_run(fresh_world: Path, tmp_path: Path) -> None:
    run = _copy(fresh_world, tmp_path / "w")
    assert _hearth(run, "--run", "2", "--quiet").returncode == 0
    status = _hearth(run, "--status")
    assert "tick time over the last 2 tick(s)" in status.stdout
    assert "turns " in status.stdout and "(ms per phase)" in status.stdout


# --- determinism ----------------------------------------------------------------------


def test_the_same_seed_gives_the_same_world(fresh_world: Path, tmp_path: Path,
                                            reference: dict) -> None:
    again = _copy(fresh_world, tmp_path / "w")
    assert _hearth(again, "--run", str(TICKS), "--quiet").returncode == 0
    assert _world_rows(again / "data" / "world.db") == reference


def test_a_different_seed_gives_a_different_world(tmp_path: Path, reference: dict) -> None:
    other = tmp_path / "w"
    made = _hearth(other, "--init", "--seed", str(SEED + 1), "--size", SIZE, "--agents", AGENTS)
    assert made.returncode == 0
    assert _hearth(other, "--run", str(TICKS), "--quiet").returncode == 0
    rows = _world_rows(other / "data" / "world.db")
    assert rows["agents"] != reference["agents"]
    assert rows["events"] != reference["events"]


# --- stopping and crashing -----------------------------------------------------------------


def _resume_to(run: Path, total: int) -> None:
    """Run again until `total` ticks are complete (a resumed tick counts as one)."""
    db = run / "data" / "world.db"
    left = total - _scalar(db, "SELECT tick FROM world_state")
    if left > 0:
        done = _hearth(run, "--run", str(left), "--quiet")
        assert done.returncode == 0, done.stderr
    assert _scalar(db, "SELECT tick FROM world_state") == total


def _check_file(run: Path) -> None:
    db = run / "data" / "world.db"
    assert _scalar(db, "PRAGMA integrity_check") == "ok"
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()


def test_ctrl_c_finishes_the_turn_in_flight_commits_and_exits_130(
    fresh_world: Path, tmp_path: Path, reference: dict
) -> None:
    run = _copy(fresh_world, tmp_path / "w")
    proc = _start(run, "--run", "100000")
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    for line in proc.stdout:  # wait until it is living ticks
        if line.startswith("[t3 ") or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Stopped at tick" in err or "Stopped at tick" in out
    _check_file(run)
    _resume_to(run, TICKS)
    assert _world_rows(run / "data" / "world.db") == reference


def test_the_agents_folder_deleted_mid_run_stops_it_and_the_next_run_makes_it_again(
    fresh_world: Path, tmp_path: Path
) -> None:
    """The agents folder goes while a run lives ticks: the run stops with one line
    naming it (exit 1, no traceback); the next run says which homes it made again."""
    run = _copy(fresh_world, tmp_path / "w")
    proc = _start(run, "--run", "100000")
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    for line in proc.stdout:  # wait until it is living ticks
        if line.startswith("[t3 ") or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGSTOP)
    shutil.rmtree(run / "agents")
    proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out[-2000:] + err
    assert "Traceback" not in out + err
    stopped = [line for line in (out + err).splitlines() if line.startswith("Stopped at")]
    assert len(stopped) == 1 and f"the agents folder {run / 'agents'} is gone" in stopped[0]
    assert _scalar(run / "data" / "world.db", "SELECT tick FROM world_state") < 100000
    _check_file(run)
    again = _hearth(run, "--run", "2", "--quiet")
    assert again.returncode == 0, again.stderr
    made = [line for line in again.stdout.splitlines() if "missing home" in line]
    assert len(made) == 1
    names = [r for (r,) in sqlite3.connect(run / "data" / "world.db").execute(
        "SELECT name FROM agents")]
    assert names and all(n in made[0] and (run / "agents" / n / "journal.md").is_file()
                         for n in names)


def test_a_reader_that_stops_reading_ends_the_run_quietly(
    fresh_world: Path, tmp_path: Path
) -> None:
    """`hearth --run 100000 | head -3`: the run stops, says nothing, and its file is whole."""
    run = _copy(fresh_world, tmp_path / "w")
    proc = _start(run, "--run", "100000")
    assert proc.stdout is not None and proc.stderr is not None
    for _ in range(3):
        proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in err and "Broken pipe" not in err, err
    _check_file(run)
    assert _scalar(run / "data" / "world.db", "SELECT tick FROM world_state") < 100000


def _kill_and_resume(fresh_world: Path, where: Path, rng: random.Random, reference: dict) -> None:
    run = _copy(fresh_world, where)
    proc = _start(run, "--run", str(TICKS), "--quiet")
    time.sleep(rng.uniform(0.6, 2.4))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    _check_file(run)
    _resume_to(run, TICKS)
    _check_file(run)
    assert _world_rows(run / "data" / "world.db") == reference
    db_events = _scalar(run / "data" / "world.db", "SELECT COUNT(*) FROM events")
    lines = (run / "data" / "events.jsonl").read_text().splitlines()
    assert len(lines) == db_events
    assert [json.loads(x)["seq"] for x in lines] == list(range(1, db_events + 1))


@pytest.mark.parametrize("attempt", range(3))
def test_sigkill_at_a_random_moment_loses_nothing_and_resumes_exactly(
    fresh_world: Path, tmp_path: Path, reference: dict, attempt: int
) -> None:
    _kill_and_resume(fresh_world, tmp_path / "w", random.Random(1000 + attempt), reference)


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(20))
def test_sigkill_many_times(fresh_world: Path, tmp_path: Path, reference: dict,
                            attempt: int) -> None:
    _kill_and_resume(fresh_world, tmp_path / "w", random.Random(2000 + attempt), reference)


# --- a fresh default world lives ---------------------------------------------------------


LIFE_SEED = 1
PEOPLE = ("Ember", "Sage", "River")


def test_two_hundred_ticks_of_a_fresh_default_world(tmp_path: Path) -> None:
    """Every default agent gathers, crafts, builds and writes; two meet and talk.

    They find each other by walking and journeying: every move in the log is one
    cell, so nobody was put anywhere.
    """
    made = _hearth(tmp_path, "--init", "--seed", str(LIFE_SEED))
    assert made.returncode == 0, made.stderr
    lived = _hearth(tmp_path, "--run", "200", "--quiet", timeout=600)
    assert lived.returncode == 0, lived.stderr
    report = life_report(tmp_path / "data" / "world.db", PEOPLE)
    assert report.lived, "; ".join(report.problems())
    assert report.moves > 0 and report.jumps == 0  # every move one cell: nobody was put anywhere
    journals = [tmp_path / "agents" / n / "journal.md" for n in PEOPLE]
    assert any(j.read_text(encoding="utf-8").strip() for j in journals)


@pytest.mark.parametrize("seed", [2, 3, 4, 5])
def test_other_fresh_default_worlds_come_alive_too(tmp_path: Path, seed: int) -> None:
    """Seed 1 is not special: these come alive as well (`python -m bench life` counts 30)."""
    report, people = live_world(seed, tmp_path)
    assert people == tuple(sorted(PEOPLE))
    assert report.lived, f"seed {seed}: " + "; ".join(report.problems())
