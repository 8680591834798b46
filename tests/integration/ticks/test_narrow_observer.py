"""Issue 43: the observer at 80x24 and at 120 columns: a feed line says what was done
before the scenery its narration may open with, the header is never cut (it wraps), and
a run that stopped shows no speed (the real HearthApp through Pilot)."""

from __future__ import annotations

import asyncio

import pytest

from engine import HearthEngine
from engine.runner import EngineRunner
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from observe.tui.widgets.feed import EventFeed
from observe.tui.widgets.header import HearthHeader
from services.simulation import clock_of
from storage import Storage
from storage.history import HistoryReader
from tests.integration.ticks.test_tui_app import _mind, _until


@pytest.mark.parametrize("size", [(80, 24), (120, 30)], ids=["80x24", "120x30"])
async def test_deeds_first_header_whole_and_no_speed_once_stopped(
    small_world, config, size: tuple[int, int]
) -> None:
    mind = await _mind(small_world)

    async def make() -> HearthEngine:
        engine = await HearthEngine.open(Storage(small_world), config, mind=mind)
        return engine

    api = ObserverAPI(EngineRunner(make, pace=20.0),
                      history=HistoryReader(small_world / "world.db"))
    await asyncio.to_thread(api.start)
    try:
        app = HearthApp(api, clock_of(config))
        async with app.run_test(size=size) as pilot:
            api.run(6)
            await _until(lambda: app.ticks_seen >= 6, timeout=30)
            await _until(lambda: api.run_state().remaining == 0)
            await pilot.pause()
            strips = app.screen._compositor.render_strips()
            feed = app.query_one(EventFeed)
            acted = [line for line in feed.shown if line.deed]
            assert acted
            region = feed.region
            shown = [s.crop(region.x, region.right).text
                     for s in strips[region.y:region.bottom]]
            rows = [row.removeprefix("✗ ") for row in shown]
            for line in acted[-3:]:  # the newest lines, as drawn: the deed comes first
                deed = line.deed.removeprefix("✗ ")
                start = f"t{line.tick} {line.agent} {deed}"[:24]  # before any cut
                assert any(row.startswith(start) for row in rows), (start, shown)
            header = app.query_one(HearthHeader)
            whole = " ".join(text.plain for text in header.lines)
            assert "…" not in whole and "t6" in whole and "⏸ paused" in whole
            assert "ticks/s" not in whole  # the run is over: no speed
            await pilot.press("q")
    finally:
        api.stop(10)
        api.history.close()
