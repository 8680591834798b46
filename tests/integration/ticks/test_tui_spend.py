"""Issue 39: the observer's header says what the run costs as it goes (per hour of
running, per agent-day) and which rate limit paced the world.

The whole `hearth` observer as a person opens it (observe/watch_command.py `watch`: the
engine wired as for a run, Claude speaking for every agent) on a real world on disk, the
real anthropic SDK reaching the strict Messages API stand-in on a socket through
ANTHROPIC_BASE_URL, and the real HearthApp driven by Pilot in place of a terminal.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from config import RuntimeEnv, load_config
from observe import watch_command
from observe.api import ObserverAPI
from observe.snapshot import WorldSnapshot
from observe.tui.app import HearthApp
from observe.tui.widgets.header import HearthHeader, money
from services.budget import spend_rate
from services.world_setup import create_world
from storage import Storage
from tests.integration.ticks.test_tui_app import _until
from tests.messages_standin import StrictMessagesApi

SEED = 4242
AGENTS = 4
SIZE = (160, 48)
LATENCY = 0.25
"""Seconds each reply takes: a turn asks twice (act, then hear the results), so a tick
takes half a second at least and three of them more than a second of running."""

SMALL = (80, 24)

Drive = Callable[[ObserverAPI, HearthApp, Pilot], Awaitable[None]]


def _world(tmp_path: Path) -> Path:
    data = tmp_path / "data"

    async def make() -> None:
        async with Storage(data) as storage:
            await create_world(storage, load_config(None), seed=SEED, size=(64, 48),
                               agent_count=AGENTS)

    asyncio.run(make())
    return data


def _watch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str, drive: Drive,
           mind: str = "claude") -> None:
    """`hearth --mind MIND` on a fresh world, with `drive` in place of the person."""
    data = _world(tmp_path)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    codes: list[int | None] = []

    async def run(api: ObserverAPI, clock) -> int:
        app = HearthApp(api, clock)
        async with app.run_test(size=SIZE) as pilot:
            await drive(api, app, pilot)
            await pilot.press("q")
            await pilot.pause()
        codes.append(app.return_value)
        return app.return_value or 0

    monkeypatch.setattr("observe.tui.observe_world",
                        lambda api, data_dir, clock=None: asyncio.run(run(api, clock)))
    request = watch_command.Watch(RuntimeEnv(data, tmp_path / "agents", "test-key"),
                                  load_config(None), mind)
    assert watch_command.watch(request) == 0 and codes == [0]


async def _run(api: ObserverAPI, app: HearthApp, ticks: int) -> None:
    start = app.ticks_seen
    api.run(ticks)
    await _until(lambda: app.ticks_seen >= start + ticks, timeout=60)
    await _until(lambda: api.run_state().remaining == 0)
    app._beat()  # the header as the next half-second beat shows it
    await asyncio.sleep(0)


def _header(app: HearthApp) -> str:
    """The header's lines as they are on the screen."""
    region = app.query_one(HearthHeader).region
    strips = app.screen._compositor.render_strips()
    return "\n".join(s.crop(region.x, region.right).text
                     for s in strips[region.y:region.bottom])


def test_the_header_shows_the_spend_its_rate_an_hour_and_an_agent_day(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    standin = StrictMessagesApi(latency=LATENCY)
    seen: dict[str, object] = {}

    async def drive(api: ObserverAPI, app: HearthApp, pilot: Pilot) -> None:
        first = _header(app)
        assert money(0.0) in first  # the spend, as ever
        assert "/h" not in first and "/agent-day" not in first  # no rate before a tick
        started = time.monotonic()
        await _run(api, app, 3)
        seen["wall"] = time.monotonic() - started
        await _until(lambda: "/agent-day" in _header(app), timeout=5)
        seen["snapshot"], seen["header"] = app.live, _header(app)
        api.pause()
        await asyncio.sleep(1.2)  # paused time is no running time
        started = time.monotonic()
        await _run(api, app, 1)
        seen["one"] = time.monotonic() - started
        seen["after"] = app.live

    with standin.serve() as url:
        _watch(monkeypatch, tmp_path, url, drive)
    assert standin.refused == []
    snapshot, header = seen["snapshot"], str(seen["header"])
    assert isinstance(snapshot, WorldSnapshot)
    spending = snapshot.spending
    assert spending is not None and spending.paced_by == ()
    assert spending.agent_ticks == 3 * AGENTS  # every agent Claude speaks for, each tick
    assert spending.ticks_per_day == load_config(None).settings.time.ticks_per_day
    assert 3 * 2 * LATENCY <= spending.seconds <= float(seen["wall"])  # type: ignore[arg-type]
    assert snapshot.spend_usd > 0 and len(standin.served) >= 3 * AGENTS * 2
    # The figures the long form (services/budget.py) gives, in the header's short one,
    # right after the spend.
    long = spend_rate(snapshot.spend_usd, spending.seconds, spending.agent_ticks,
                      spending.ticks_per_day)
    hour, day = re.fullmatch(r"\$\S+ spent, (\$\S+) an hour of running, (\$\S+) an agent-day",
                             long).groups()  # type: ignore[union-attr]
    assert f"{money(snapshot.spend_usd)} · {hour}/h · {day}/agent-day" in header, header
    assert "paced by" not in header and "…" not in header
    # A second and more paused, then one tick: the running time grew by that tick's.
    after = seen["after"]
    assert isinstance(after, WorldSnapshot) and after.spending is not None
    assert after.spending.agent_ticks == 4 * AGENTS
    grown = after.spending.seconds - spending.seconds
    assert 2 * LATENCY <= grown <= float(seen["one"]), (grown, seen["one"])  # type: ignore[arg-type]


def test_a_rate_limit_that_paces_the_world_is_named_in_the_header(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A key just spent (its buckets start empty), 600 requests a minute: turns wait for
    room, and the header says which limit made them."""
    standin = StrictMessagesApi(rpm=600, full=False)
    seen: dict[str, object] = {}

    async def drive(api: ObserverAPI, app: HearthApp, pilot: Pilot) -> None:
        assert "paced by" not in _header(app)
        await _run(api, app, 2)
        await _until(lambda: "paced by" in _header(app), timeout=5)
        seen["snapshot"], seen["header"] = app.live, _header(app)
        await pilot.resize_terminal(*SMALL)  # the smallest terminal: the pace goes first
        await pilot.pause()
        await _until(lambda: "paced by" not in _header(app), timeout=5)
        seen["narrow"] = _header(app)

    with standin.serve() as url:
        _watch(monkeypatch, tmp_path, url, drive)
    assert [r for r in standin.refused if r.status != 429] == []
    snapshot, header = seen["snapshot"], str(seen["header"])
    assert isinstance(snapshot, WorldSnapshot) and snapshot.spending is not None
    paces = snapshot.spending.paced_by
    assert paces and all(p.waited > 0 for p in paces)
    assert "paced by claude-sonnet-5-5's requests: 600/min" in header, header
    narrow = str(seen["narrow"])
    assert money(snapshot.spend_usd) in narrow and "paused" in narrow and "…" not in narrow


def test_an_offline_world_keeps_its_header(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    """Nobody Claude speaks for: the spend as ever ($0.00), and no rate or pace."""
    seen: dict[str, object] = {}

    async def drive(api: ObserverAPI, app: HearthApp, pilot: Pilot) -> None:
        await _run(api, app, 3)
        seen["snapshot"], seen["header"] = app.live, _header(app)

    _watch(monkeypatch, tmp_path, "http://127.0.0.1:9", drive, mind="offline")
    snapshot, header = seen["snapshot"], str(seen["header"])
    assert isinstance(snapshot, WorldSnapshot) and snapshot.spending is None
    assert header.rstrip().endswith(f"⏸ paused · {money(0.0)}"), header
    assert "/h" not in header and "/agent-day" not in header and "paced" not in header
