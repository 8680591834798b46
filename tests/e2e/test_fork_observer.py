"""The observer of a fork (issue 30, item 4): its lineage shown, and looking back before the
fork reaching the parent's past, as a user meets them.

A world lives 40 ticks (`hearth --run`), is forked at 25 (`hearth --fork`), the fork lives
10 ticks of its own and is forked again at 30. The real HearthApp is opened on each
(through Pilot, watching: nothing runs) and its header, past view, feed and provenance
are compared with what the parent itself stores. The parent must not change at all while
its children are observed; a parent moved, replaced, damaged or of a newer Hearth, and
a damaged record, are each one line in the app, and looking back still works.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from config import load_config
from observe.provenance import Provenance
from observe.tui.app import HearthApp
from observe.tui.commands import hearth_commands
from observe.tui.provenance_screen import ProvenanceScreen
from observe.tui.widgets.feed import EventFeed
from observe.tui.widgets.header import HearthHeader
from observe.watching import WatchingAPI
from services.simulation import clock_of
from storage.history import HistoryReader
from storage.lineage import read_lineage_chain
from storage.schema import LATEST_VERSION
from tests.e2e.worlds import copy_world, make_world, run

PARENT_TICKS, FORK_AT, FORK_LIVES, FORK2_AT = 40, 25, 10, 30
SIZE = (200, 44)


def _fork(data: Path, homes: Path, tick: int, into: Path) -> Path:
    done = run(data, homes, "--fork", str(tick), "--into", str(into))
    assert done.returncode == 0, done.stdout + done.stderr
    return into


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """parent (40 ticks), fork (of parent at 25, lived on to 35), fork2 (of fork at 30)."""
    made = make_world(tmp_path_factory.mktemp("made"))
    where = tmp_path_factory.mktemp("family")
    data, homes = copy_world(made, where / "parent" / "data", where / "parent" / "agents")
    done = run(data, homes, "--run", str(PARENT_TICKS), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    fork = _fork(data, homes, FORK_AT, where / "fork")
    done = run(fork / "data", fork / "agents", "--run", str(FORK_LIVES), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    fork2 = _fork(fork / "data", fork / "agents", FORK2_AT, where / "fork2")
    return {"parent": where / "parent", "fork": fork, "fork2": fork2, "made": made}


def _untouched(data: Path) -> dict[str, tuple[str, int]]:
    """Each database file's hash and mtime (-shm is SQLite's shared memory, which every
    reader of a WAL file may write; it holds no data)."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(data.iterdir())
            if p.is_file() and p.name.startswith("world.db") and not p.name.endswith("-shm")}


def _acting_tick(data: Path, before: int) -> int:
    """The latest tick before `before` at which some agent did something."""
    with HistoryReader(data / "world.db") as history:
        for tick in range(before - 1, -1, -1):
            if any(line.args is not None for line in history.lines(tick)):
                return tick
    raise AssertionError("no agent acted")


@asynccontextmanager
async def _observing(data: Path):
    config = load_config(None)
    history = HistoryReader(data / "world.db")
    api = WatchingAPI(data, config, history=history, poll_seconds=0.05)
    await asyncio.to_thread(api.start)
    try:
        app = HearthApp(api, clock_of(config))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            yield app, pilot
    finally:
        api.stop(10)
        history.close()


async def _look_at(app: HearthApp, pilot, tick: int) -> None:
    """Step back with the keys, ten ticks at a time and then one, until `tick` is shown."""
    while (app.timeline.viewing if app.timeline.viewing is not None else app.live.tick) > tick:
        viewing = app.timeline.viewing if app.timeline.viewing is not None else app.live.tick
        await pilot.press("left_curly_bracket" if viewing - tick >= 10 else "left_square_bracket")
        await pilot.pause()
    assert app.timeline.viewing == tick


def _texts(lines) -> list[tuple[str | None, str, str]]:
    return [(line.agent, line.kind, line.text) for line in lines]


def test_the_chain_of_a_fork_of_a_fork_is_read_from_the_records(family) -> None:
    parent, fork = (family["parent"] / "data").resolve(), (family["fork"] / "data").resolve()
    lineage = read_lineage_chain(family["fork2"] / "data")
    assert [(a.folder, a.tick, a.reachable) for a in lineage.ancestors] == [
        (str(fork), FORK2_AT, True), (str(parent), FORK_AT, True)]
    assert [a.name for a in lineage.ancestors] == ["fork", "parent"]
    assert lineage.lived_in(FORK2_AT) is None  # the fork2's own first tick
    assert lineage.lived_in(FORK2_AT - 1).name == "fork"
    assert lineage.lived_in(FORK_AT).name == "fork"
    assert lineage.lived_in(FORK_AT - 1).name == "parent"
    assert lineage.problems() == []
    assert not read_lineage_chain(family["parent"] / "data").is_fork


async def test_a_world_that_is_no_fork_shows_nothing_new(family) -> None:
    async with _observing(family["parent"] / "data") as (app, pilot):
        line = app.query_one(HearthHeader).line.plain
        assert "fork" not in line and "lineage" not in line.lower()
        assert not app.lineage.is_fork
        assert not [c for c in hearth_commands(app) if "lineage" in c.title.lower()]
        await _look_at(app, pilot, 5)
        assert "lived in" not in app.query_one(HearthHeader).line.plain
        assert [n.message for n in app._notifications] == []


async def test_a_fork_shows_its_parent_and_looks_back_into_its_past(family) -> None:
    parent_data = family["parent"] / "data"
    before = _untouched(parent_data)
    tick = _acting_tick(parent_data, FORK_AT)
    with HistoryReader(parent_data / "world.db") as history:
        parents_lines = history.lines(tick)
        acted = next(line.agent for line in parents_lines if line.args is not None)
        parents_turn = history.turn(tick, acted)
    assert parents_lines and parents_turn is not None

    async with _observing(family["fork"] / "data") as (app, pilot):
        header = app.query_one(HearthHeader)
        assert f"forked from parent at t{FORK_AT}" in header.line.plain
        assert "unreachable" not in header.line.plain
        assert [n.message for n in app._notifications] == []
        lineage = [c for c in hearth_commands(app) if c.title == "Show lineage"]
        assert len(lineage) == 1
        lineage[0].run()
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert said == [f"forked at tick {FORK_AT} from {parent_data.resolve()}"]

        await _look_at(app, pilot, FORK_AT)  # the fork's own first tick
        assert "lived in" not in header.line.plain
        await _look_at(app, pilot, tick)  # a tick the parent lived
        assert f"lived in parent, before it was forked at t{FORK_AT}" in header.line.plain
        assert "PAST" in header.line.plain
        feed = app.query_one(EventFeed)
        assert _texts(feed.shown) == _texts(parents_lines)
        # The stored turn behind the line is the parent's, word for word.
        feed.focus()
        row = next(i for i, line in enumerate(feed.shown) if line.agent == acted
                   and line.kind != "error" and line.tick == tick)
        feed.choose_row(row)
        await pilot.press("p")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProvenanceScreen)
        shown = screen.turns[screen.index]
        assert shown == (tick, acted)
        assert screen.shown == Provenance.of(parents_turn)
        await pilot.press("escape")
    assert _untouched(parent_data) == before


async def test_a_fork_of_a_fork_shows_the_chain(family) -> None:
    async with _observing(family["fork2"] / "data") as (app, pilot):
        header = app.query_one(HearthHeader)
        assert (f"forked from fork at t{FORK2_AT}, from parent at t{FORK_AT}"
                in header.line.plain)
        await _look_at(app, pilot, FORK2_AT - 2)
        assert f"lived in fork, before it was forked at t{FORK2_AT}" in header.line.plain
        await _look_at(app, pilot, FORK_AT - 3)
        assert f"lived in parent, before it was forked at t{FORK_AT}" in header.line.plain
        with HistoryReader(family["parent"] / "data" / "world.db") as history:
            assert _texts(app.query_one(EventFeed).shown) == _texts(history.lines(FORK_AT - 3))
        await pilot.resize_terminal(80, 24)  # narrow: the way back to live is still said
        await pilot.pause()
        lines = [text.plain for text in header.lines]
        assert lines[0].endswith("(End: live)") and "lived in parent" in lines[1], lines


def _spoil(case: str, fork: Path, family: dict[str, Path], where: Path) -> None:
    """Make the fork copy in `fork` meet one hostile case in its lineage."""
    record = fork / "data" / "lineage.json"
    lineage = json.loads(record.read_text())
    if case == "corrupt record":
        record.write_text('{"parent": "/some/where", "tick": "twenty')
        return
    if case == "record a FIFO":
        record.unlink()
        os.mkfifo(record)
        return
    moved = where / "elsewhere" / "data"
    if case == "replaced by another world":
        moved = family["fork2"] / "data"  # a world of another identity
    elif case != "moved":
        moved.mkdir(parents=True)
        shutil.copyfile(family["parent"] / "data" / "world.db", moved / "world.db")
        if case == "newer schema":
            conn = sqlite3.connect(moved / "world.db")
            conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
            conn.close()
        elif case == "damaged":
            (moved / "world.db").write_bytes(b"this is no database at all" * 200)
    lineage["parent"] = str(moved)
    record.write_text(json.dumps(lineage))


HOSTILE = {
    "moved": "no world is there any more",
    "replaced by another world": "another world is there now",
    "newer schema": "written by a newer Hearth",
    "damaged": "not an SQLite database",
    "corrupt record": "lineage.json is damaged",
    "record a FIFO": "lineage.json is not a regular file",
}


@pytest.mark.hostile
@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_parent_that_cannot_be_read_is_one_line_and_looking_back_still_works(
        family, tmp_path: Path, case: str) -> None:
    fork = tmp_path / "fork"
    shutil.copytree(family["fork"] / "data", fork / "data")
    _spoil(case, fork, family, tmp_path)
    tick = _acting_tick(family["parent"] / "data", FORK_AT)
    async with _observing(fork / "data") as (app, pilot):
        said = [n.message for n in app._notifications]
        assert len(said) == 1, said
        # Past a world that cannot be read (or is another world) nothing is followed.
        assert len(app.lineage.ancestors) == (0 if "record" in case else 1)
        assert HOSTILE[case] in said[0] and "looking back still works" in said[0]
        assert "Traceback" not in said[0] and "\n" not in said[0]
        line = app.query_one(HearthHeader).line.plain
        assert ("forked from parent (unreachable)" in line
                or "forked from elsewhere (unreachable)" in line
                or "forked from fork2 (unreachable)" in line
                or "forked from an unreadable record" in line), line
        await _look_at(app, pilot, tick)
        with HistoryReader(family["parent"] / "data" / "world.db") as history:
            assert _texts(app.query_one(EventFeed).shown) == _texts(history.lines(tick))
