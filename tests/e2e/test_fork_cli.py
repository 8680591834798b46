"""`hearth --fork T --into DIR`, `--mind replay` and `--compare` (issue 30), as a user runs them.

One offline world (tests/e2e/worlds.py) lives 140 ticks; it is forked at tick 77, and the
fork must equal the same world run for 77 ticks (every table but timing and the world's
identity, events.jsonl, the homes' files by hash), run on to 140 it must equal the parent,
replayed from the parent's records too, and the parent must not change.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

import main
from tests.e2e.worlds import copy_world, make_world, run, tick_of, world

PARENT_TICKS, FORK_AT = 140, 77


def _same(a: dict[str, object], b: dict[str, object]) -> list[str]:
    """The parts that differ, the world's identity left out (a fork is another world)."""
    return [k for k in sorted(a.keys() | b.keys())
            if k != "world_identity" and a.get(k) != b.get(k)]


def _files(folder: Path) -> dict[str, str]:
    """Every database file's hash and every event line: what a reader must never change
    (-shm files are SQLite's shared memory, which every reader of a WAL file writes, and
    a reader that finds no -wal file makes an empty one: SQLite's, holding nothing)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith("-shm") and p.name != "writer.lock"
            and not (p.name.endswith("-wal") and p.stat().st_size == 0)}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_world(tmp_path_factory.mktemp("made"))


@pytest.fixture(scope="module")
def parent(made: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("parent")
    data, homes = copy_world(made, where / "data", where / "agents")
    done = run(data, homes, "--run", str(PARENT_TICKS), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (data / "snapshots" / "snapshot_0.db").is_file()  # the world as made, kept
    return where


def _fork(parent: Path, tick: int, into: Path) -> None:
    done = run(parent / "data", parent / "agents", "--fork", str(tick), "--into", str(into))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"at tick {tick} into {into}" in done.stdout


def test_a_fork_is_the_world_as_it_stood_and_runs_on_to_the_parent(
        made: Path, parent: Path, tmp_path: Path) -> None:
    before = world(parent / "data", parent / "agents")
    files_before = _files(parent / "data")
    fork = tmp_path / "fork"
    _fork(parent, FORK_AT, fork)
    assert world(parent / "data", parent / "agents") == before  # the parent, untouched
    assert _files(parent / "data") == files_before

    lived = tmp_path / "lived"
    data, homes = copy_world(made, lived / "data", lived / "agents")
    assert run(data, homes, "--run", str(FORK_AT), "--quiet").returncode == 0
    forked = world(fork / "data", fork / "agents")
    assert _same(forked, world(data, homes)) == []
    assert forked["world_identity"] != before["world_identity"]
    lineage = json.loads((fork / "data" / "lineage.json").read_text())
    assert lineage["tick"] == FORK_AT and lineage["base_snapshot"] == 0
    assert Path(lineage["parent"]) == (parent / "data").resolve()
    assert not (fork / "data" / "limits.json").exists()  # the parent was told no limits

    done = run(fork / "data", fork / "agents", "--run", str(PARENT_TICKS - FORK_AT), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _same(world(fork / "data", fork / "agents"), before) == []


def test_a_fork_after_a_later_snapshot_starts_from_it(parent: Path, tmp_path: Path) -> None:
    fork = tmp_path / "late"
    _fork(parent, 120, fork)
    assert json.loads((fork / "data" / "lineage.json").read_text())["base_snapshot"] == 100
    done = run(fork / "data", fork / "agents", "--run", "20", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _same(world(fork / "data", fork / "agents"),
                 world(parent / "data", parent / "agents")) == []


def test_a_replay_ends_where_the_parent_ended_and_stops_past_it(
        parent: Path, tmp_path: Path) -> None:
    fork = tmp_path / "replayed"
    _fork(parent, FORK_AT, fork)
    done = run(fork / "data", fork / "agents", "--run", str(PARENT_TICKS - FORK_AT),
               "--quiet", "--mind", "replay")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _same(world(fork / "data", fork / "agents"),
                 world(parent / "data", parent / "agents")) == []

    past = run(fork / "data", fork / "agents", "--run", "2", "--quiet", "--mind", "replay")
    assert past.returncode == 1
    said = past.stdout + past.stderr
    assert "Traceback" not in said
    stops = [line for line in said.splitlines() if "no recorded turn" in line]
    assert len(stops) == 1, said
    # Ticks where everyone sleeps need no record; the first turn past the parent's end does.
    stopped = int(re.search(r"no recorded turn of \w+ at tick (\d+)", stops[0]).group(1))
    assert stopped >= PARENT_TICKS
    assert tick_of(fork / "data") == stopped  # the tick with no record did not pass


def test_a_changed_fork_diverges_and_compare_names_the_tick_and_agent(
        parent: Path, tmp_path: Path) -> None:
    fork = tmp_path / "changed"
    quiet = ("You are quiet and watchful, and you find peace in places where nothing "
             "happens. You stay where you are.")
    before = world(parent / "data", parent / "agents")
    made = run(parent / "data", parent / "agents", "--fork", str(FORK_AT), "--into", str(fork),
               "--personality", f"Ember={quiet}")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "Ember has a new personality in the fork" in made.stdout
    assert world(parent / "data", parent / "agents") == before  # the parent keeps its own
    conn = sqlite3.connect(fork / "data" / "world.db")
    try:
        people = dict(conn.execute("SELECT name, personality FROM agents"))
    finally:
        conn.close()
    assert people["Ember"] == quiet
    lineage = json.loads((fork / "data" / "lineage.json").read_text())
    assert lineage["changed"] == {"Ember": {"personality": quiet}}
    done = run(fork / "data", fork / "agents", "--run", str(PARENT_TICKS - FORK_AT), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr

    asked = run(parent / "data", parent / "agents", "--compare", str(parent), str(fork),
                "--json")
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    first = result["first_tick"]
    assert first is not None and FORK_AT <= first < PARENT_TICKS
    assert result["compared_from"] == FORK_AT  # the shared past is not walked again
    assert result["agents"]["Ember"]["first_tick"] == first
    assert "personality" in result["agents"]["Ember"]["now_differs"]
    firsts = [n for n, v in result["agents"].items() if v["first_tick"] == first]
    assert firsts == ["Ember"]

    said = run(parent / "data", parent / "agents", "--compare", str(parent), str(fork))
    assert said.returncode == 0
    assert f"The worlds first differ at tick {first}, in Ember." in said.stdout
    assert f"Ember: differs from tick {first}" in said.stdout

    same = run(parent / "data", parent / "agents", "--compare", str(parent), str(parent))
    assert "No agent did anything differently" in same.stdout


def test_bad_forks_are_one_line_and_change_nothing(
        parent: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HEARTH_DATA_DIR", "HEARTH_AGENTS_DIR", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    before = _files(parent / "data")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    cases = [
        (["--fork", str(PARENT_TICKS), "--into", str(tmp_path / "a")], 2, "not in the past"),
        (["--fork", "9999", "--into", str(tmp_path / "b")], 2, "not in the past"),
        (["--fork", "5", "--into", str(full)], 2, "not empty"),
        (["--fork", "5"], 2, "go together"),
        (["--fork", "-3", "--into", str(tmp_path / "c")], 2, "at least 0"),
        (["--fork", "5", "--into", str(tmp_path / "e"), "--personality", "Nobody=Kind."], 2,
         "no agent called Nobody"),
        (["--fork", "5", "--into", str(tmp_path / "e"), "--personality", "Ember"], 2,
         "expected NAME=TEXT"),
        (["--fork", "5", "--into", str(tmp_path / "e"), "--personality", "Ember=  "], 2,
         "expected NAME=TEXT"),
        (["--fork", "5", "--into", str(tmp_path / "e"), "--personality", "Ember=A.",
          "--personality", "Ember=B."], 2, "names Ember more than once"),
        (["--status", "--personality", "Ember=Kind."], 2, "--personality goes with --fork"),
    ]
    for args, code, words in cases:  # in this process: the same code, without a start-up each
        try:
            returned = main.main(["--data-dir", str(parent / "data"), "--agents-dir",
                                  str(parent / "agents"), *args])
        except SystemExit as refused:  # argparse's way out, as the process would exit
            returned = refused.code
        printed = capsys.readouterr()
        said = printed.out + printed.err
        assert returned == code, said
        assert "Traceback" not in said and words in said, said
        assert len(said.strip().splitlines()) == 1, said
    assert not any((tmp_path / name).exists() for name in "abe")
    assert [p.name for p in full.iterdir()] == ["keep.txt"]
    missing = run(tmp_path / "none", tmp_path / "none-homes", "--fork", "3", "--into",
                  str(tmp_path / "d"))
    assert missing.returncode == 1 and "no world here" in missing.stderr
    assert "Traceback" not in missing.stderr and not (tmp_path / "d").exists()
    gone = run(parent / "data", parent / "agents", "--compare", str(tmp_path / "none"),
               str(parent))
    assert gone.returncode == 1 and "no world here" in gone.stderr
    assert _files(parent / "data") == before


def test_a_fork_from_before_every_kept_snapshot_is_refused(parent: Path, tmp_path: Path
                                                           ) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(parent, bare)
    (bare / "data" / "snapshots" / "snapshot_0.db").unlink()
    done = run(bare / "data", bare / "agents", "--fork", "50", "--into", str(tmp_path / "x"))
    assert done.returncode == 1
    assert "no snapshot at or before tick 50" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_fork_starts_knowing_the_rate_limits_the_parent_was_told(
        parent: Path, tmp_path: Path) -> None:
    """The limits are the API key's: a fork's first run need not learn them again."""
    told = tmp_path / "told"
    shutil.copytree(parent, told)
    record = {"version": 1, "endpoints": {"claude-sonnet-5-5 at https://api.anthropic.com": {
        "at": 1_795_000_000.0, "input_guess": 1200.0,
        "buckets": {"requests": [50.0, 12.0], "output-tokens": [8000.0, 0.0]}}}}
    (told / "data" / "limits.json").write_text(json.dumps(record))
    fork = tmp_path / "fork"
    _fork(told, FORK_AT, fork)
    assert json.loads((fork / "data" / "limits.json").read_text()) == record
