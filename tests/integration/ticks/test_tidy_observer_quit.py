"""Quitting the observer leaves a tidy data folder (issue 39): the engine thread closes
the world's Storage while the observer's own history reader is still open (closed
after it, as `observe/watch_command.py` does), and a read-only connection that closes
last cannot fold the log in. The real HearthApp over a real engine thread, by Pilot."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import time
from pathlib import Path

from engine import EngineRunner, HearthEngine
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from services.simulation import clock_of
from storage import Storage
from storage.history import HistoryReader

SIZE = (140, 44)


def _log_size(data: Path) -> int:
    """world.db-wal's size from a stat (never an open: see CLAUDE.md); 0 if absent."""
    try:
        return os.stat(data / "world.db-wal").st_size
    except FileNotFoundError:
        return 0


async def test_quitting_the_observer_leaves_an_empty_log_and_whole_snapshots(
    small_world: Path, config, scripted
) -> None:
    kept = config.settings.storage.model_copy(
        update={"snapshot_every_ticks": 2, "snapshots_keep": 1})
    config = dataclasses.replace(config, settings=config.settings.model_copy(
        update={"storage": kept}))

    async def make() -> HearthEngine:
        engine = await HearthEngine.open(Storage(small_world), config, mind=scripted())
        return engine

    history = HistoryReader(small_world / "world.db")
    api = ObserverAPI(EngineRunner(make), history=history)
    await asyncio.to_thread(api.start)
    try:
        app = HearthApp(api, clock_of(config))
        async with app.run_test(size=SIZE) as pilot:
            api.run(7)
            deadline = time.monotonic() + 60
            while app.ticks_seen < 7:
                assert time.monotonic() < deadline, "timed out waiting for 7 ticks"
                await asyncio.sleep(0.02)
            assert history.first_tick() == 0  # the reader has read the world's log
            await pilot.press("q")
        assert app.return_value == 0
        assert api.stop(10)  # the engine thread closed the world's Storage
        assert _log_size(small_world) == 0  # though the history reader is still open
    finally:
        api.stop(10)
        history.close()
    assert _log_size(small_world) == 0
    names = sorted(p.name for p in (small_world / "snapshots").iterdir())
    assert names == ["snapshot_0.db", "snapshot_6.db"]
    assert all(re.fullmatch(r"snapshot_\d+\.db", name) for name in names)
