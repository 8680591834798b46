"""The observer on a world another process is changing opens to watch only, and says so.

A real `hearth --run` in another process holds the world's writer lock and commits
ticks; the observer is opened as `hearth` opens it (`watch_command.watch`), with the real
HearthApp driven by Pilot in place of the terminal. It must name the process in its
header, follow the ticks as they are committed, refuse to run an engine beside it,
and quit cleanly.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from config import RuntimeEnv, load_config
from observe import watch_command
from observe.sharing import SharingAPI
from observe.tui.app import HearthApp
from observe.tui.widgets.feed import EventFeed
from observe.tui.widgets.header import HearthHeader
from observe.watching import WatchingAPI, WorldFollower
from storage import WorldBusyError, WorldLock
from storage.world_lock import held_here, holder

PROJECT = Path(__file__).resolve().parents[3]
SIZE = (160, 44)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def _hearth(data: Path, agents: Path, *args: str) -> list[str]:
    return [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(data),
            "--agents-dir", str(agents), *args]


def _stored_tick(data: Path) -> int:
    with sqlite3.connect(f"{(data / 'world.db').as_uri()}?mode=ro", uri=True) as db:
        return db.execute("SELECT tick FROM world_state").fetchone()[0]


def _wait(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


async def _until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


@pytest.fixture
def busy_world(tmp_path: Path) -> Iterator[tuple[Path, Path, subprocess.Popen, dict]]:
    """A small world that a `hearth --run 100000` in another process is living; also
    where every agent stood before it began. The process is killed at the end."""
    data, agents = tmp_path / "data", tmp_path / "agents"
    made = subprocess.run(_hearth(data, agents, "--init", "--seed", "5", "--size", "48x40"),
                          capture_output=True, text=True, timeout=120, cwd=PROJECT, env=_env())
    assert made.returncode == 0, made.stderr
    with sqlite3.connect(f"{(data / 'world.db').as_uri()}?mode=ro", uri=True) as db:
        start = {name: (x, y) for name, x, y in db.execute("SELECT name, x, y FROM agents")}
    writer = subprocess.Popen(_hearth(data, agents, "--run", "100000", "--quiet"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              cwd=PROJECT, env=_env())
    try:
        _wait(lambda: f"process {writer.pid} " in (holder(data) or ""))
        _wait(lambda: _stored_tick(data) > 0)
        yield data, agents, writer, start
    finally:
        writer.kill()
        writer.wait(timeout=30)


def _positions_after(data: Path, tick: int, start: dict) -> dict[str, tuple[int, int]]:
    """Where each agent stood at the end of `tick`: its last step by then, from the
    stored steps (every move is an `agent_moved` event)."""
    where = dict(start)
    with sqlite3.connect(f"{(data / 'world.db').as_uri()}?mode=ro", uri=True) as db:
        for agent, raw in db.execute("SELECT agent, data FROM events WHERE kind = "
                                     "'agent_moved' AND tick <= ? ORDER BY seq", (tick,)):
            to = json.loads(raw)["to_position"]
            where[agent] = (to["x"], to["y"])
    return where


def test_the_observer_of_a_busy_world_watches_it_and_runs_nothing(
    busy_world, monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, agents, writer, start = busy_world
    seen: dict[str, object] = {}

    async def drive(api, data_dir: str, clock=None) -> int:
        """What the terminal would do: look, press keys, quit."""
        seen["api"] = api
        # Another process runs the world: the observer watches (observe/sharing.py).
        assert isinstance(api, SharingAPI) and isinstance(api.active, WatchingAPI)
        app = HearthApp(api, clock)
        async with app.run_test(size=SIZE) as pilot:
            header = app.query_one(HearthHeader)
            line = header.line.plain
            assert "watching only" in line, line
            assert f"process {writer.pid} (hearth --run 100000" in line, line
            assert "$" not in line  # the spend is the other process's to count
            first = app.live.tick
            await _until(lambda: app.live.tick >= first + 5)  # it follows the commits
            await pilot.pause()
            assert header.line.plain.startswith(f"t{app.live.tick} "), header.line.plain
            fed = app.query_one(EventFeed).shown
            assert fed and max(line.tick for line in fed) >= first

            stored = _stored_tick(data)
            await pilot.press("space", "t", "plus", "F")
            await pilot.pause()
            notices = [n.message for n in app._notifications]
            assert len(notices) == 1, notices  # said once, not once a key
            assert "only watches" in notices[0] and f"process {writer.pid} " in notices[0]
            assert api.run_state().watch_only and api.run_state().paused
            # No engine here: nobody in this process took the lock, the writer keeps it
            # and goes on committing.
            assert not held_here(data)
            with pytest.raises(WorldBusyError, match=f"process {writer.pid} "):
                WorldLock(data).acquire()
            await _until(lambda: _stored_tick(data) > stored + 5)
            assert writer.poll() is None

            # Looking back shows where everyone stood then, though the live picture
            # may hold steps of its own tick already.
            for key in ("left_square_bracket", "left_curly_bracket"):  # back 1, then 10
                await pilot.press(key)
                await pilot.pause()
                tick = app.timeline.viewing
                assert tick is not None and tick < app.live.tick
                shown = {v.name: (v.position.x, v.position.y) for v in app.current.agents}
                assert shown == _positions_after(data, tick, start)
                assert "PAST" in header.line.plain
            await pilot.press("end")
            await pilot.press("q")
            await pilot.pause()
        seen["code"] = app.return_value
        return app.return_value or 0

    monkeypatch.setattr("observe.tui.observe_world",
                        lambda api, data_dir, clock=None: asyncio.run(drive(api, data_dir, clock)))
    started = time.monotonic()
    request = watch_command.Watch(RuntimeEnv(data, agents, None), load_config(None), None)
    code = watch_command.watch(request)
    assert code == 0 and seen["code"] == 0
    api = seen["api"]
    assert isinstance(api, SharingAPI) and isinstance(api.active, WatchingAPI)
    assert not api.active.follower.is_running
    assert time.monotonic() - started < 30
    assert writer.poll() is None  # quitting the observer left the writer alone
    assert not held_here(data)


def test_a_follower_sees_commits_and_stops_when_its_world_is_replaced(
    tmp_path: Path,
) -> None:
    """No other process needed for the follower itself: commits from any connection,
    and a world file replaced under it (as `--init --force` does)."""
    data, agents = tmp_path / "data", tmp_path / "agents"
    for where in (data, tmp_path / "other"):
        made = subprocess.run(_hearth(where, agents, "--init", "--seed", "5", "--size",
                                      "48x40"), capture_output=True, text=True, timeout=120,
                              cwd=PROJECT, env=_env())
        assert made.returncode == 0, made.stderr
    follower = WorldFollower(data, load_config(None), poll_seconds=0.05)
    loaded: list[int] = []
    follower.on_load(lambda world: loaded.append(world.tick))
    follower.start()
    try:
        assert loaded == [0] and follower.changer is None  # nobody holds it
        assert follower.call(lambda engine: 1).exception() is not None
        follower.request_run(5)
        follower.request_tick()
        time.sleep(0.3)
        assert loaded == [0] and _stored_tick(data) == 0  # asked to run: nothing ran
        db = sqlite3.connect(data / "world.db")
        with db:
            db.execute("UPDATE world_state SET tick = 7")
        db.close()
        _wait(lambda: loaded[-1:] == [7], 10)
        os.replace(tmp_path / "other" / "world.db", data / "world.db")
        _wait(lambda: not follower.is_running, 10)
        assert follower.trouble is not None and "replaced or moved" in follower.trouble
    finally:
        follower.stop()


def test_a_watcher_says_when_the_run_waits_on_a_message_batch(
    busy_world, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 42: a `--run --economy` waiting on its batch leaves `data/batch.json`
    (storage/batch_file.py); the watching header says so, and stops saying it once the
    note is gone."""
    from storage.batch_file import BatchWait, write_pending

    data, agents, writer, _ = busy_world
    lines: list[str] = []

    async def drive(api, data_dir: str, clock=None) -> int:
        app = HearthApp(api, clock)
        async with app.run_test(size=SIZE) as pilot:
            header = app.query_one(HearthHeader)
            write_pending(data, BatchWait(1, 3, time.time() - 130))
            await _until(lambda: "Message Batch" in header.line.plain)
            lines.append(header.line.plain)
            write_pending(data, None)
            await _until(lambda: "Message Batch" not in header.line.plain)
            lines.append(header.line.plain)
            await pilot.press("q")
        return 0

    monkeypatch.setattr("observe.tui.observe_world",
                        lambda api, data_dir, clock=None: asyncio.run(drive(api, data_dir, clock)))
    request = watch_command.Watch(RuntimeEnv(data, agents, None), load_config(None), None)
    assert watch_command.watch(request) == 0
    assert "waiting on a Message Batch of 3 request(s) for 2 min" in lines[0], lines
    assert f"process {writer.pid} " in lines[0] and "watching only" in lines[1]
    assert not (data / "batch.json").exists()
