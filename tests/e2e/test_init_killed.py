"""`--init` and `--init --force` killed at any moment leave a whole world or none (issue 25).

Real processes, SIGKILL at moments spread over a run's own duration. Afterwards the
data folder holds the complete old world or the complete new one, or no world at all,
and then a plain `--init` works; a backup named like a whole world is one; and a new
world never holds a file of the old one. Three moments each by default, twenty with
`--run-slow`.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.processes import clean_env, hearth, hearth_args

SIZE = ("--size", "400x320")
OLD, NEW = 1, 2








def _seed(db: Path) -> int | None:
    """The seed of a complete world in `db`, or None if it is not one."""
    if not db.exists():
        return None
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            return None
        row = conn.execute("SELECT seed FROM world_state").fetchone()
        agents = conn.execute("SELECT COUNT(*) FROM agents").fetchone()[0]
        return int(row[0]) if row and agents else None
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()


def _killed(where: Path, args: tuple[str, ...], after: float) -> None:
    proc = subprocess.Popen(hearth_args(where, *args), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=clean_env())
    time.sleep(after)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def _duration(where: Path) -> float:
    started = time.monotonic()
    assert hearth(where, "--init", "--seed", "9", *SIZE).returncode == 0
    return time.monotonic() - started


def _old_world(where: Path) -> list[str]:
    """A world with a past: events, undo and traces folders, a journal; gives its events."""
    assert hearth(where, "--init", "--seed", str(OLD), *SIZE).returncode == 0
    assert hearth(where, "--run", "3", "--quiet").returncode == 0
    for side in ("undo", "snapshots", "traces"):
        (where / "data" / side).mkdir(exist_ok=True)
        (where / "data" / side / "of-the-old-world.txt").write_text("old\n")
    (where / "agents" / "Ember" / "journal.md").write_text("The old world's day.\n")
    return (where / "data" / "events.jsonl").read_text().splitlines()


def _backups_are_whole(where: Path, events: list[str]) -> list[Path]:
    found = sorted((where / "data" / "backups").glob("world.replaced.*"))
    for folder in found:
        assert _seed(folder / "world.db") == OLD, folder
        assert (folder / "events.jsonl").read_text().splitlines() == events
        for side in ("undo", "snapshots", "traces"):
            assert (folder / side / "of-the-old-world.txt").exists()
        assert (folder / "agents" / "Ember" / "journal.md").read_text() == (
            "The old world's day.\n")
    return found


def _moments(count: int, duration: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return sorted(rng.uniform(0.3, max(0.6, duration * 1.1)) for _ in range(count))


def _fresh_init_killed(tmp_path: Path, count: int) -> None:
    duration = _duration(tmp_path / "timing")
    for i, moment in enumerate(_moments(count, duration, 25)):
        where = tmp_path / f"fresh{i}"
        _killed(where, ("--init", "--seed", str(NEW), *SIZE), moment)
        seed = _seed(where / "data" / "world.db")
        assert seed in (None, NEW), (moment, seed)
        assert seed is not None or not (where / "data" / "world.db").exists()
        plain = hearth(where, "--init", "--seed", str(NEW), *SIZE)
        if seed is None:
            assert plain.returncode == 0, (moment, plain.stderr)
            assert _seed(where / "data" / "world.db") == NEW
        else:
            assert plain.returncode == 2 and "already exists" in plain.stderr
        assert not list((where / "data").glob(".staging-*"))


def _forced_init_killed(tmp_path: Path, count: int) -> None:
    duration = _duration(tmp_path / "timing")
    for i, moment in enumerate(_moments(count, duration, 52)):
        where = tmp_path / f"forced{i}"
        events = _old_world(where)
        _killed(where, ("--init", "--force", "--seed", str(NEW), *SIZE), moment)
        data = where / "data"
        seed = _seed(data / "world.db")
        assert seed in (None, OLD, NEW), (moment, seed)
        assert seed is not None or not (data / "world.db").exists()
        if seed == OLD:  # untouched: the whole old world, its past with it
            assert (data / "events.jsonl").read_text().splitlines() == events
            assert (data / "undo" / "of-the-old-world.txt").exists()
        if seed == NEW:  # none of the old world's files among the new one's
            assert not (data / "events.jsonl").exists()
            for side in ("undo", "snapshots", "traces"):
                assert not (data / side / "of-the-old-world.txt").exists()
            assert _backups_are_whole(where, events)
        _backups_are_whole(where, events)
        if seed is None:  # neither whole here: a plain --init makes a world
            plain = hearth(where, "--init", "--seed", str(NEW), *SIZE)
            assert plain.returncode == 0, (moment, plain.stderr)
            assert _seed(data / "world.db") == NEW
            assert _backups_are_whole(where, events)  # the old world, whole, set aside
        assert not list(data.glob(".staging-*")) or seed is not None


def test_a_killed_init_leaves_a_whole_world_or_none(tmp_path: Path) -> None:
    _fresh_init_killed(tmp_path, 3)


def test_a_killed_init_force_leaves_the_old_world_or_the_new_whole(tmp_path: Path) -> None:
    _forced_init_killed(tmp_path, 3)


def test_after_init_force_no_file_of_the_old_world_is_among_the_new_ones(
    tmp_path: Path
) -> None:
    events = _old_world(tmp_path)
    done = hearth(tmp_path, "--init", "--force", "--seed", str(NEW), *SIZE)
    assert done.returncode == 0, done.stderr
    data = tmp_path / "data"
    assert _seed(data / "world.db") == NEW
    assert sorted(p.name for p in data.iterdir()) == ["backups", "world.db", "writer.lock"]
    [saved] = _backups_are_whole(tmp_path, events)
    assert json.loads(hearth(tmp_path, "--status", "--json").stdout)["seed"] == NEW
    assert (tmp_path / "agents" / "Ember" / "journal.md").read_text() == ""
    assert saved.name.startswith("world.replaced.")


@pytest.mark.slow
def test_twenty_killed_inits_leave_a_whole_world_or_none(tmp_path: Path) -> None:
    _fresh_init_killed(tmp_path, 20)


@pytest.mark.slow
def test_twenty_killed_forced_inits_leave_the_old_world_or_the_new_whole(
    tmp_path: Path
) -> None:
    _forced_init_killed(tmp_path, 20)
