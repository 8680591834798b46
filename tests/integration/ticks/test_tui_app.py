"""The observer app end to end: the real HearthApp over a real engine thread and a real
world on disk, driven by Pilot (App.run_test)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from contextlib import asynccontextmanager
from pathlib import Path

from textual import events

from adapters.offline_mind import OfflineMind
from engine import EngineRunner, HearthEngine
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from observe.tui.no_world import NoWorldApp
from observe.tui.widgets.agents import AgentList
from observe.tui.widgets.cellinfo import CellPanel
from observe.tui.widgets.conversations import ConversationPanel
from observe.tui.widgets.detail import AgentDetail
from observe.tui.widgets.feed import EventFeed
from observe.tui.widgets.grid import GridView
from observe.tui.widgets.header import HearthHeader
from services.simulation import clock_of
from storage import Storage
from storage.history import HistoryReader

SIZE = (140, 44)
NASTY = "[bold]x[/] \x1b[2J\x1b]0;owned\x07 [@click=app.quit]q[/] \x07end"


def _observer(world: Path, config, mind) -> ObserverAPI:
    async def make() -> HearthEngine:
        engine = await HearthEngine.open(Storage(world), config, mind=mind)
        return engine

    return ObserverAPI(EngineRunner(make), history=HistoryReader(world / "world.db"))


async def _start(api: ObserverAPI) -> None:
    await asyncio.to_thread(api.start)


@asynccontextmanager
async def _watching(world: Path, config, mind):
    """A started observer over `world` and the app on it; stopped and closed after."""
    api = _observer(world, config, mind)
    await _start(api)
    try:
        yield api, HearthApp(api, clock_of(config))
    finally:
        api.stop(10)
        api.history.close()


async def _until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


def _stored_tick(world: Path) -> int:
    with sqlite3.connect(f"file:{world / 'world.db'}?mode=ro", uri=True) as db:
        return db.execute("SELECT tick FROM world_state").fetchone()[0]


async def _mind(world: Path) -> OfflineMind:
    async with Storage(world, create=False, read_only=True) as storage:
        state = await storage.world.get_world_state()
        people = await storage.agents.get_all_agents()
    return OfflineMind(state.seed, {a.name: a.personality for a in people})


async def test_time_keys_step_run_pause_and_the_header_follows(small_world, config) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            header = app.query_one(HearthHeader)
            assert header.line.plain.startswith("t0 ")
            await pilot.press("t")
            await _until(lambda: app.ticks_seen == 1)
            await pilot.pause()
            assert app.live.tick == 1
            await pilot.press("plus")  # ten more
            await _until(lambda: app.ticks_seen == 11)
            await pilot.press("space")  # run without end
            await _until(lambda: app.ticks_seen >= 14)
            await pilot.press("space")  # pause
            await _until(lambda: api.run_state().paused)
            settled = app.ticks_seen
            await asyncio.sleep(0.3)
            assert app.ticks_seen == settled
            await pilot.press("x", "ctrl+z", "f12")  # unknown keys do nothing
            await asyncio.sleep(0.2)
            assert app.ticks_seen == settled and app.is_running
            app._beat()
            await pilot.pause()
            assert header.line.plain.startswith(f"t{settled} ")
            assert "paused" in header.line.plain
            await pilot.press("q")
        assert app.return_value == 0
    assert _stored_tick(small_world) == settled


async def test_grid_agents_detail_follow_filter_ascii_and_help(small_world, config) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(3)
            await _until(lambda: app.ticks_seen == 3)
            await pilot.pause()
            grid = app.query_one(GridView)
            # The cursor moves with hjkl and the cell tab describes the cell under it.
            app.query_one("#side-tabs").active = "tab-cell"
            await pilot.pause()
            x, y = grid.cursor
            await pilot.press("l", "j")
            assert grid.cursor == (x + 1, y + 1)
            await pilot.pause()
            assert f"({x + 1}, {y + 1})" in app.query_one(CellPanel).text.plain
            # The agent list: choosing an agent opens its detail.
            app.query_one("#side-tabs").active = "tab-agents"
            await pilot.pause()
            agents = app.query_one(AgentList)
            agents.focus()
            await pilot.press("down", "enter")
            await pilot.pause()
            chosen = agents.selected
            assert chosen is not None
            assert app.query_one("#side-tabs").active == "tab-agent"
            await _until(lambda: "Tick " in (app.query_one(AgentDetail).perception_text or ""))
            assert chosen in app.query_one(AgentDetail).text.plain
            # Follow keeps the chosen agent under the cursor as ticks go by.
            grid.focus()
            await pilot.press("f")
            assert grid.following == chosen
            await asyncio.sleep(0.3)  # the notice is laid out and drawn
            await pilot.pause()
            assert app.is_running and app._exception is None
            api.run(2)
            await _until(lambda: app.ticks_seen == 5)
            await pilot.pause()
            where = api.snapshot.agent(chosen).position
            assert grid.cursor == (where.x, where.y)
            await pilot.press("f")
            assert grid.following is None
            # e filters the event feed to the chosen agent, and back.
            await pilot.press("e")
            feed = app.query_one(EventFeed)
            assert feed.filter == chosen
            assert {line.agent for line in feed.shown} <= {chosen}
            await pilot.press("e")
            assert feed.filter is None
            # The Talk tab (beside the grid) shows the world's conversations.
            app.query_one("#side-tabs").active = "tab-talk"
            await pilot.pause()
            talk = app.query_one(ConversationPanel)
            assert talk.region.width > 0 and talk.region.height > 0
            shown = talk.text.plain
            public = [c for c in api.snapshot.conversations if c.public]
            if public:
                assert "since tick" in shown
            else:
                assert shown == "No conversations."
            app.query_one("#side-tabs").active = "tab-agents"
            # a toggles plain ASCII drawing.
            await pilot.press("a")
            assert grid.ascii_mode
            await pilot.press("a")
            assert not grid.ascii_mode
            # F lets the chosen agent act first; ? shows help, escape closes it.
            await pilot.press("F")
            await pilot.press("question_mark")
            await pilot.pause()
            assert type(app.screen).__name__ == "HelpScreen"
            await pilot.press("escape")
            await pilot.pause()
            assert type(app.screen).__name__ == "Screen"
            await pilot.press("q")


async def test_looking_back_while_the_world_runs_and_returning_to_live(
    small_world, config
) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(6)
            await _until(lambda: app.ticks_seen == 6)
            await pilot.pause()
            await pilot.press("left_square_bracket", "left_square_bracket")
            await pilot.pause()
            assert app.timeline.viewing == 4
            header = app.query_one(HearthHeader).line.plain
            assert "PAST" in header and "viewing tick 4" in header
            assert app.current.tick == 4
            shown = app.query_one(EventFeed).shown
            assert shown and {line.tick for line in shown} == {4}
            # The live world goes on underneath; the view stays on tick 4.
            api.run(2)
            await _until(lambda: app.ticks_seen == 8)
            await pilot.pause()
            assert app.timeline.viewing == 4 and app.current.tick == 4
            assert app.live.tick == 8
            await pilot.press("right_square_bracket")
            assert app.timeline.viewing == 5
            await pilot.press("end")
            await pilot.pause()
            assert app.timeline.is_live and app.current.tick == 8
            assert "PAST" not in app.query_one(HearthHeader).line.plain
            await pilot.press("q")


async def test_agent_written_text_is_shown_literally(small_world, config, scripted) -> None:
    def nasty(start):
        return [("write_sign", {"text": NASTY}), ("speak", {"message": NASTY})]

    async with _watching(small_world, config, scripted(nasty)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(1)
            await _until(lambda: app.ticks_seen == 1)
            await pilot.pause()
            feed = app.query_one(EventFeed)
            texts = [line.text for line in feed.shown]
            assert any("[@click=app.quit]q[/]" in t for t in texts), texts
            signs = [o for o in api.snapshot.objects if getattr(o, "text", None)]
            assert signs, "the sign was written"
            sign = signs[0]
            app.query_one("#side-tabs").active = "tab-cell"
            app.go_to(sign.position.x, sign.position.y)
            await pilot.pause()
            shown = app.query_one(CellPanel).text.plain
            assert "[bold]x[/]" in shown and "[@click=app.quit]q[/]" in shown
            assert "\x1b" not in shown and "\x07" not in shown and "owned" not in shown
            screen = "".join(
                seg.text for strip in app.screen._compositor.render_strips() for seg in strip)
            assert "\x1b" not in screen and "\x07" not in screen
            assert "[@click=app.quit]" in screen
            app.say(f"Following {NASTY}.")  # notices take names as plain text too
            await asyncio.sleep(0.3)
            await pilot.pause()
            assert app.is_running and app._exception is None
            await pilot.click(CellPanel)  # clicking the words runs nothing
            await pilot.pause()
            assert app.is_running
            await pilot.press("q")


async def test_quitting_mid_run_stops_within_two_seconds_and_keeps_the_world_whole(
    small_world, config, scripted
) -> None:
    api = _observer(small_world, config, scripted(delay=0.05))
    await _start(api)
    app = HearthApp(api, clock_of(config))
    async with app.run_test(size=SIZE) as pilot:
        api.run()
        await _until(lambda: app.ticks_seen >= 2)
        await pilot.press("q")
    try:
        assert app.quit_seconds is not None and app.quit_seconds < 2.0
        assert not api.runner.is_running
    finally:
        api.stop(10)
        api.history.close()
    with sqlite3.connect(f"file:{small_world / 'world.db'}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tick = db.execute("SELECT tick FROM world_state").fetchone()[0]
        turns = db.execute("SELECT COUNT(*) FROM turns WHERE tick >= ?", (tick,)).fetchone()[0]
        progress = db.execute("SELECT tick FROM tick_progress").fetchall()
    # Either the tick closed, or its turns so far were committed whole and it resumes.
    assert turns == 0 or progress == [(tick,)]
    api2 = _observer(small_world, config, scripted())
    await _start(api2)
    try:
        api2.run(1)
        await _until(lambda: api2.snapshot.tick == tick + 1)
    finally:
        api2.stop(10)
        api2.history.close()


async def test_three_hundred_live_ticks_end_with_the_ui_on_the_worlds_tick(
    small_world, config
) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(300)
            await _until(lambda: app.ticks_seen == 300, timeout=180)
            await pilot.pause()
            app._beat()
            await pilot.pause()
            assert app.live.tick == 300 == app.current.tick
            assert app.query_one(HearthHeader).line.plain.startswith("t300 ")
            assert app.return_value is None  # still running, no error
            await pilot.press("q")
        assert app.return_value == 0
    assert _stored_tick(small_world) == 300


async def test_a_terminal_too_small_says_so_until_resized(small_world, config, scripted) -> None:
    async with _watching(small_world, config, scripted()) as (api, app):
        async with app.run_test(size=(60, 18)) as pilot:
            await pilot.pause()
            assert app.screen.has_class("too-small")
            message = app.query_one("#too-small")
            assert "60x18" in str(message.render())
            await pilot.resize_terminal(*SIZE)
            await pilot.pause()
            assert not app.screen.has_class("too-small")
            await pilot.press("q")


async def test_no_world_says_how_to_make_one(tmp_path: Path) -> None:
    app = NoWorldApp(str(tmp_path / "data"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = str(app.query_one("#no-world").render())
        assert "No world yet" in text and "hearth --init" in text
        app.post_message(events.Key("x", "x"))
        await pilot.pause()
        assert app.is_running
        await pilot.press("q")
    assert app.return_value == 1


async def test_command_palette_runs_n_ticks_and_follows_an_agent(small_world, config) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"run 3")
            await asyncio.sleep(0.3)
            await pilot.press("enter")
            await _until(lambda: app.ticks_seen == 3)
            name = api.snapshot.agents[1].name
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*f"follow {name}")
            await asyncio.sleep(0.3)
            await pilot.press("enter")
            await pilot.pause()
            assert app.query_one(GridView).following == name
            await pilot.press("q")
    assert _stored_tick(small_world) == 3


async def test_keys_still_work_after_choosing_an_agent_from_the_list(small_world, config) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            app.query_one(AgentList).focus()
            await pilot.press("down", "enter")
            await pilot.pause()
            assert app.query_one("#side-tabs").active == "tab-agent"
            await pilot.press("t")
            await _until(lambda: app.ticks_seen == 1)
            await pilot.press("left_square_bracket")
            await pilot.pause()
            assert app.timeline.viewing == 0
            await pilot.press("q")
