"""Issue 43: the observer runs the world at a pace a person can follow, and `<`, `>` and
`m` change it as it runs (the real HearthApp through Pilot, the real runner thread)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from config import load_config
from engine import HearthEngine
from engine.runner import EngineRunner
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from observe.tui.widgets.header import HearthHeader
from services.simulation import clock_of
from storage import Storage
from storage.history import HistoryReader
from tests.integration.ticks.test_tui_app import SIZE, _mind, _until


def _paced(world: Path, config, mind, pace: float | None) -> ObserverAPI:
    async def make() -> HearthEngine:
        engine = await HearthEngine.open(Storage(world), config, mind=mind)
        return engine

    return ObserverAPI(EngineRunner(make, pace=pace), history=HistoryReader(world / "world.db"))


def test_the_shipped_pace_is_two_ticks_a_second() -> None:
    assert load_config(None).settings.observer.ticks_per_second == 2.0


async def test_the_world_keeps_to_the_pace_and_the_keys_change_it(small_world, config) -> None:
    api = _paced(small_world, config, await _mind(small_world), pace=10.0)
    await asyncio.to_thread(api.start)
    try:
        app = HearthApp(api, clock_of(config))
        async with app.run_test(size=SIZE) as pilot:
            started, first = time.monotonic(), app.ticks_seen
            api.run()
            await asyncio.sleep(1.0)
            paced = app.ticks_seen - first
            took = time.monotonic() - started
            # Never faster than the pace (one tick may start at once); a loaded machine
            # may be slower, but an offline tick takes milliseconds.
            assert 3 <= paced <= 10 * took + 2, (paced, took)
            header = app.query_one(HearthHeader)
            await _until(lambda: "(pace 10/s)" in header.line.plain)
            await pilot.press("less_than_sign")  # slower: the pace below 10/s
            await _until(lambda: api.run_state().pace == 8.0, timeout=5)
            await pilot.press("m")  # as fast as it goes
            await _until(lambda: api.run_state().pace is None, timeout=5)
            before = app.ticks_seen
            await asyncio.sleep(1.0)
            assert app.ticks_seen - before > 2 * paced  # far faster than the pace was
            await pilot.press("m")  # and back to the pace it had
            await _until(lambda: api.run_state().pace == 8.0, timeout=5)
            await pilot.press("greater_than_sign", "greater_than_sign")
            await _until(lambda: api.run_state().pace == 32.0, timeout=5)
            await pilot.press("greater_than_sign")  # past the fastest: full speed
            await _until(lambda: api.run_state().pace is None, timeout=5)
            await pilot.press("space", "q")
    finally:
        api.stop(10)
        api.history.close()
