"""The data folder's own side files are never written through (issue 26, build item 1).

Hearth appends to events.jsonl and traces/NAME.jsonl and writes undo/NAME.json and
snapshots/snapshot_N.db. Each case plants something hostile at one of those names (a
symbolic link to a file outside, a hard link to it, a FIFO, a device node) or makes the
side folder a link to a folder outside, then runs Hearth: the real CLI in a subprocess,
or the real engine on a real world. What was planted is moved aside as
NAME.refused.STAMP (never followed, never opened to write, never deleted,
storage/side_files.py) with one warning line, and a fresh regular file is used. Each
ends with the checks of tests/integration/hostile.py: nothing in the folder the links
point into changed (listing, size, mtime and SHA-256) and no device node was written to
or waited on, nothing hung (every run has a deadline; a FIFO is unblocked if it is
missed), no traceback was logged or printed, and world.db passes SQLite's integrity
check.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from config import HearthConfig, load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from storage import Storage
from tests.integration.hostile import (
    DEADLINE,
    MAKES_A_DEVICE,
    assert_never_written_or_waited_on,
    assert_unharmed,
    device_opens,
    hearth,
    integrity,
    make_device,
    no_tracebacks,  # noqa: F401 - a fixture, used by every case below
    snapshot,
    within,
)

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("no_tracebacks")]

KINDS = ("symlink", "hardlink", "fifo", pytest.param("device", marks=MAKES_A_DEVICE))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Where every planted link points: where an escape would land."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "hosts").write_text("127.0.0.1 localhost\n", encoding="utf-8")
    (folder / "world.db").write_bytes(b"not a snapshot, someone else's file\n")
    return folder


def plant(kind: str, at: Path, target: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        at.unlink()
    if kind == "symlink":
        at.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, at)
    elif kind == "device":
        make_device(at)
    else:
        os.mkfifo(at)


@contextlib.contextmanager
def watched(kind: str, *planted: Path) -> Iterator[None]:
    """For a device node: fails unless it was at most opened to read, without waiting."""
    with device_opens(*(planted if kind == "device" else ())) as opened:
        yield
    assert_never_written_or_waited_on(opened)


def moved_aside(at: Path, kind: str) -> None:
    """`at` is now a regular file of its own (or absent), and what was planted is kept
    beside it as NAME.refused.STAMP, still what it was."""
    if os.path.lexists(at):
        info = os.lstat(at)
        assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1, at
    kept = list(at.parent.glob(f"{at.name}.refused.*"))
    assert len(kept) == 1, sorted(p.name for p in at.parent.iterdir())
    mode = os.lstat(kept[0]).st_mode
    assert {"symlink": stat.S_ISLNK, "hardlink": stat.S_ISREG,
            "fifo": stat.S_ISFIFO, "device": stat.S_ISCHR}[kind](mode)


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "moved aside" in r.getMessage()]


# -- through the CLI: events.jsonl ------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_cli_run_never_writes_through_events_jsonl(tmp_path, outside, kind) -> None:
    made = hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
    assert made.returncode == 0, made.stderr
    events = tmp_path / "data" / "events.jsonl"
    plant(kind, events, outside / "hosts")
    before = snapshot(outside)
    ran = hearth(tmp_path, "--run", "3", fifos=[events])
    assert ran.returncode == 0, ran.stderr
    said = [line for line in (ran.stderr + ran.stdout).splitlines() if "moved aside" in line]
    assert len(said) == 1 and "events.jsonl" in said[0], said
    moved_aside(events, kind)
    assert events.read_bytes().count(b"\n") > 0  # the log written anew from the database
    assert_unharmed(before, outside, tmp_path / "data" / "world.db", ran.stdout + ran.stderr)


def test_cli_run_with_the_backups_folder_a_link_never_writes_into_it(tmp_path, outside):
    made = hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
    assert made.returncode == 0, made.stderr
    (tmp_path / "data" / "backups").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    again = hearth(tmp_path, "--init", "--force", "--seed", "6", "--size", "48x40")
    assert again.returncode == 0, again.stderr
    assert os.path.islink(next((tmp_path / "data").glob("backups.refused.*")))
    [saved] = (tmp_path / "data" / "backups").glob("world.replaced.*")
    assert integrity(saved / "world.db") == "ok"
    assert_unharmed(before, outside, tmp_path / "data" / "world.db",
                    again.stdout + again.stderr)


# -- through the engine: events, traces, undo logs, snapshots ------------------------------


class Turn:
    def __init__(self, mind: FileMind, start: TurnStart) -> None:
        self.mind, self.start, self.asked = mind, start, 0

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        self.asked += 1
        if self.asked > 1:
            return []
        return [ToolCall("c0", "append_file", {"path": "notes.md", "text": "a line\n"})]

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        pass

    def record(self) -> Mapping[str, Any]:
        return {}


class FileMind(MindDefaults):
    """Appends to notes.md once a turn, so an undo log is written before it."""

    kind = "scripted"
    reads_text = True

    def begin(self, start: TurnStart) -> Turn:
        return Turn(self, start)

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return {}

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        pass


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    base = load_config(None)
    storage = base.settings.storage.model_copy(update={"snapshot_every_ticks": 1})
    return dataclasses.replace(
        base, settings=base.settings.model_copy(update={"storage": storage}))


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    made = hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
    assert made.returncode == 0, made.stderr
    agents = tmp_path / "agents"
    return tmp_path / "data", agents, sorted(p.name for p in agents.iterdir())


def run_engine(world, config: HearthConfig, *, ticks: int = 2,
               fifos: Sequence[Path] = ()) -> None:
    data, agents, _ = world

    async def go() -> None:
        storage = Storage(data)
        engine = await HearthEngine.open(storage, config, mind=FileMind(), agents_dir=agents)
        try:
            for _ in range(ticks):
                await engine.tick_once()
            await engine.finish_snapshot()
        finally:
            await engine.close()
            await storage.close()

    within(DEADLINE, go, fifos)


@pytest.mark.parametrize("kind", KINDS)
def test_the_event_log_is_never_written_through(world, config, outside, kind,
                                                caplog) -> None:
    data, _, _ = world
    events = data / "events.jsonl"
    plant(kind, events, outside / "hosts")
    before = snapshot(outside)
    with watched(kind, events):
        run_engine(world, config, fifos=[events])
    moved_aside(events, kind)
    assert events.read_bytes().count(b"\n") > 0
    assert [m for m in refusals(caplog) if "events.jsonl" in m]
    assert_unharmed(before, outside, data / "world.db")


@pytest.mark.parametrize("kind", KINDS)
def test_traces_are_never_written_through(world, outside, kind, caplog) -> None:
    data, _, names = world
    trace = data / "traces" / f"{names[0]}.jsonl"
    plant(kind, trace, outside / "hosts")
    before = snapshot(outside)

    async def write() -> list[dict]:
        async with Storage(data) as storage:
            storage.traces.write_now(names[0], {"turn": 1})
            storage.traces.write_now(names[0], {"turn": 2})
            return list(storage.traces.read(names[0]))

    with watched(kind, trace):
        assert [r["turn"] for r in within(DEADLINE, write, [trace])] == [1, 2]
    moved_aside(trace, kind)
    assert len(refusals(caplog)) == 1
    assert_unharmed(before, outside, data / "world.db")


def test_a_traces_folder_that_is_a_link_is_moved_aside(world, outside) -> None:
    data, _, names = world
    (data / "traces").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)

    async def write() -> None:
        async with Storage(data) as storage:
            storage.traces.write_now(names[0], {"turn": 1})

    within(DEADLINE, write)
    assert (data / "traces").is_dir() and not (data / "traces").is_symlink()
    assert os.path.islink(next(data.glob("traces.refused.*")))
    assert_unharmed(before, outside, data / "world.db")


@pytest.mark.parametrize("kind", KINDS)
def test_undo_logs_are_never_written_through(world, config, outside, kind) -> None:
    data, agents, names = world
    log, partial = data / "undo" / f"{names[0]}.json", data / "undo" / f"{names[1]}.partial"
    plant(kind, log, outside / "hosts")
    plant(kind, partial, outside / "world.db")
    before = snapshot(outside)
    with watched(kind, log, partial):
        run_engine(world, config, fifos=[log, partial])
    moved_aside(log, kind)
    assert list((data / "undo").glob(f"{names[1]}.partial.refused.*"))
    assert "a line" in (agents / names[0] / "notes.md").read_text(encoding="utf-8")
    assert_unharmed(before, outside, data / "world.db")


def test_an_undo_folder_that_is_a_link_is_moved_aside(world, config, outside) -> None:
    data, _, _ = world
    (data / "undo").symlink_to(outside, target_is_directory=True)
    (outside / "Ember.json").write_text("{torn", encoding="utf-8")  # would be dropped
    before = snapshot(outside)
    run_engine(world, config)
    assert os.path.islink(next(data.glob("undo.refused.*")))
    assert_unharmed(before, outside, data / "world.db")


@pytest.mark.parametrize("kind", KINDS)
def test_snapshots_are_never_written_through(world, config, outside, kind) -> None:
    data, _, _ = world
    snaps = data / "snapshots"
    # What the run's snapshots will be named, one that it only lists, and a partial.
    planted = [snaps / "snapshot_1.db", snaps / "snapshot_9.db", snaps / "snapshot_2.db.partial"]
    for at in planted:
        plant(kind, at, outside / "world.db")
    before = snapshot(outside)
    with watched(kind, *planted):
        run_engine(world, config, fifos=planted)
    for at in planted:
        kept = list(snaps.glob(f"{at.name}.refused.*"))
        assert len(kept) == 1, sorted(p.name for p in snaps.iterdir())
    assert sorted(p.name for p in snaps.glob("*.db")) == \
        ["snapshot_0.db", "snapshot_1.db", "snapshot_2.db"]  # 0: the world as made
    for name in ("snapshot_0.db", "snapshot_1.db", "snapshot_2.db"):
        info = os.lstat(snaps / name)
        assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1
        assert integrity(snaps / name) == "ok"
    assert_unharmed(before, outside, data / "world.db")


def test_a_snapshots_folder_that_is_a_link_is_moved_aside(world, config, outside) -> None:
    data, _, _ = world
    (data / "snapshots").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    run_engine(world, config)
    assert os.path.islink(next(data.glob("snapshots.refused.*")))
    assert sorted(p.name for p in (data / "snapshots").glob("*.db")) == \
        ["snapshot_0.db", "snapshot_1.db", "snapshot_2.db"]
    assert_unharmed(before, outside, data / "world.db")
