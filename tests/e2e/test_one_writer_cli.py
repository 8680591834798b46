"""One world, one writer: a second process that would change a world is refused.

Real processes throughout: a `hearth --run` that is living the world, and beside it
a second `--run` and an `--init --force`, each of which must be refused in one line
naming who holds the world, while the first ends exactly as an undisturbed run.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.processes import PROJECT, clean_env, hearth, hearth_args

WORLD = ("--seed", "11", "--size", "200x160", "--agents", "150")  # ~20 ms a tick








def _world_rows(where: Path) -> tuple[list[tuple], list[tuple], list[tuple]]:
    db = sqlite3.connect(f"{(where / 'data' / 'world.db').as_uri()}?mode=ro", uri=True)
    try:
        return (db.execute("SELECT tick, weather FROM world_state").fetchall(),
                db.execute("SELECT tick, agent, mind, actions, ended FROM turns "
                           "ORDER BY tick, agent").fetchall(),
                db.execute("SELECT name, x, y FROM agents ORDER BY name").fetchall())
    finally:
        db.close()


def _lines(where: Path) -> int:
    return len((where / "data" / "events.jsonl").read_text().splitlines())


def test_a_second_writer_is_refused_and_the_first_ends_as_if_alone(tmp_path: Path) -> None:
    """The first run lives on until both have been refused, is stopped with Ctrl+C and
    goes on for five ticks; an undisturbed copy lives as many ticks at once, and the
    two agree row for row."""
    alone, busy = tmp_path / "alone", tmp_path / "busy"
    for where in (alone, busy):
        assert hearth(where, "--init", *WORLD).returncode == 0
    first = subprocess.Popen(hearth_args(busy, "--run", "100000", "--quiet"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=PROJECT, env=clean_env())
    try:
        lock = busy / "data" / "writer.lock"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (lock.exists() and lock.stat().st_size):
            time.sleep(0.02)
        assert first.poll() is None, "the first run ended before the second could try"
        second = hearth(busy, "--run", "3")
        replace = hearth(busy, "--init", "--force", "--seed", "3", "--size", "48x40")
        assert first.poll() is None, "the first run ended before both had tried"
    finally:
        first.send_signal(signal.SIGINT)  # the turn in flight is finished and committed
        out, err = first.communicate(timeout=300)
    assert first.returncode == 130, out + err
    lived = _world_rows(busy)[0][0][0]
    assert lived > 0, out
    assert hearth(busy, "--run", "5", "--quiet").returncode == 0  # goes on where it stopped
    assert hearth(alone, "--run", str(lived + 5), "--quiet").returncode == 0

    for refused in (second, replace):
        assert refused.returncode == 1, refused.stdout + refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert f"process {first.pid} " in lines[0] and "--run" in lines[0]
        assert "Traceback" not in refused.stdout + refused.stderr
    assert not (busy / "data" / "backups").exists()  # --force set nothing aside
    assert _world_rows(busy) == _world_rows(alone)
    assert _lines(busy) == _lines(alone)


def test_a_writer_that_died_leaves_no_lock_behind(tmp_path: Path) -> None:
    """The OS lets go of a dead process's lock: the next run is not refused."""
    assert hearth(tmp_path, "--init", "--seed", "11", "--size", "48x40").returncode == 0
    run = subprocess.Popen(hearth_args(tmp_path, "--run", "100000", "--quiet"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=PROJECT,
                           env=clean_env())
    lock = tmp_path / "data" / "writer.lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (lock.exists() and lock.stat().st_size):
        time.sleep(0.02)
    run.kill()
    run.wait(timeout=30)
    again = hearth(tmp_path, "--run", "2", "--quiet")
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_gardener_stops_with_a_line_when_its_world_is_replaced(tmp_path: Path) -> None:
    assert hearth(tmp_path, "--init", "--seed", "11", "--size", "48x40").returncode == 0
    gardener = subprocess.Popen(hearth_args(tmp_path, "--gardener"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=PROJECT, env=clean_env())
    try:
        assert gardener.stdout is not None
        assert gardener.stdout.readline().startswith("Gardener: tending")
        replaced = hearth(tmp_path, "--init", "--force", "--seed", "12", "--size", "48x40")
        assert replaced.returncode == 0, replaced.stderr  # a Gardener only reads: no lock
        out, err = gardener.communicate(timeout=30)
    finally:
        if gardener.poll() is None:
            gardener.kill()
    assert gardener.returncode == 1, out + err
    assert "was replaced or moved; stopped" in err and "Traceback" not in out + err


@pytest.mark.hostile
def test_a_closed_terminal_stops_a_run_as_ctrl_c_does(tmp_path: Path) -> None:
    """Issue 26: SIGHUP (the terminal went away) ended a run without its summary; now it
    finishes the turns in flight, saves, and says where it stopped, like SIGTERM."""
    import signal

    assert hearth(tmp_path, "--init", *WORLD).returncode == 0
    run = subprocess.Popen(hearth_args(tmp_path, "--run", "100000", "--quiet"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=PROJECT, env=clean_env())
    lock = tmp_path / "data" / "writer.lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (lock.exists() and lock.stat().st_size):
        time.sleep(0.02)
    time.sleep(0.5)
    run.send_signal(signal.SIGHUP)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, out + err
    assert "Traceback" not in out + err
    [stopped] = [line for line in out.splitlines() if line.startswith("Stopped at tick ")]
    tick = int(stopped.removeprefix("Stopped at tick ").split(";")[0])
    assert _world_rows(tmp_path)[0][0][0] == tick
