"""Issue 43: an observer holds the world only while it runs it. Paused, it lets go,
so a `hearth --run` beside it can start; it follows that run as a watcher, and once the
run is over its own keys take the world back (the real program's run in another
process; the observer opened as `hearth` opens it, its HearthApp driven by Pilot)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from config import RuntimeEnv, load_config
from observe import watch_command
from observe.sharing import LET_GO_AFTER, SharingAPI
from observe.tui.app import HearthApp
from observe.tui.widgets.header import HearthHeader
from storage.world_lock import holder
from tests.integration.ticks.test_tui_app import _until

PROJECT = Path(__file__).resolve().parents[3]
SIZE = (160, 44)


def _hearth(data: Path, agents: Path, *args: str) -> list[str]:
    return [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(data),
            "--agents-dir", str(agents), *args]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def _stored_tick(data: Path) -> int:
    with sqlite3.connect(f"{(data / 'world.db').as_uri()}?mode=ro", uri=True) as db:
        return db.execute("SELECT tick FROM world_state").fetchone()[0]


def test_a_paused_observer_lets_a_run_beside_it_go_and_follows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, agents = tmp_path / "data", tmp_path / "agents"
    made = subprocess.run(_hearth(data, agents, "--init", "--seed", "5", "--size", "48x40"),
                          capture_output=True, text=True, timeout=120, cwd=PROJECT, env=_env())
    assert made.returncode == 0, made.stderr
    seen: dict[str, object] = {}

    async def drive(api, data_dir: str, clock=None) -> int:
        assert isinstance(api, SharingAPI)
        app = HearthApp(api, clock)
        async with app.run_test(size=SIZE) as pilot:
            header = app.query_one(HearthHeader)
            # Opened paused: within a moment it lets go of the world.
            started = time.monotonic()
            await _until(lambda: holder(data) is None, timeout=LET_GO_AFTER + 10)
            seen["let go after"] = time.monotonic() - started
            await pilot.pause()
            assert "⏸ paused" in header.line.plain, header.line.plain
            run = await asyncio.to_thread(
                subprocess.run, _hearth(data, agents, "--run", "5", "--quiet"),
                capture_output=True, text=True, timeout=120, cwd=PROJECT, env=_env())
            seen["run"] = run
            await _until(lambda: app.live.tick == 5, timeout=20)  # it followed the run
            await pilot.pause()
            assert header.line.plain.startswith("t5 "), header.line.plain
            # The run is over: the observer's own step takes the world back.
            await pilot.press("t")
            await _until(lambda: _stored_tick(data) == 6, timeout=30)
            await _until(lambda: app.live.tick == 6, timeout=10)
            assert api.running_here and "watching" not in header.line.plain
            await pilot.press("q")
            await pilot.pause()
        return 0

    monkeypatch.setattr("observe.tui.observe_world",
                        lambda api, data_dir, clock=None: asyncio.run(drive(api, data_dir, clock)))
    request = watch_command.Watch(RuntimeEnv(data, agents, None), load_config(None), None)
    assert watch_command.watch(request) == 0
    run = seen["run"]
    assert isinstance(run, subprocess.CompletedProcess)
    assert run.returncode == 0, run.stdout + run.stderr  # the run beside it was let in
    assert "Traceback" not in run.stderr
    assert float(seen["let go after"]) < LET_GO_AFTER + 5  # type: ignore[arg-type]
    assert _stored_tick(data) == 6 and holder(data) is None
