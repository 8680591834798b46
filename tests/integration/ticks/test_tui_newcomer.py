"""Issue 29, the observer as a newcomer meets it: each fix driven end to end through the
real HearthApp over a real engine thread and a real world on disk (Pilot), at the
smallest terminal the layout supports (80x24) and a large one (160x48)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sqlite3
from pathlib import Path

import pytest

from adapters.offline_mind import OfflineMind
from observe.api import ObserverAPI
from observe.snapshot import deed_words
from observe.tui.app import HearthApp
from observe.tui.commands import hearth_commands
from observe.tui.glyphs import ASCII, EMOJI
from observe.tui.legend import LegendPanel, legend_text
from observe.tui.widgets.agents import AgentList
from observe.tui.widgets.detail import AgentDetail
from observe.tui.widgets.grid import GridView
from observe.tui.widgets.header import WEATHER_SYMBOLS, HearthHeader
from services.simulation import clock_of
from services.status import world_status
from services.status_command import format_status
from services.world_setup import create_world
from storage import Storage
from tests.integration.ticks.test_tui_app import _until, _watching
from tests.unit.observe.tui_kit import screen_lines, screen_text

SMALL, LARGE = (80, 24), (160, 48)
SIZES = pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])


async def _offline(world: Path) -> OfflineMind:
    async with Storage(world, create=False, read_only=True) as storage:
        state = await storage.world.get_world_state()
        people = await storage.agents.get_all_agents()
    return OfflineMind(state.seed, {a.name: a.personality for a in people})


async def _run(app: HearthApp, api: ObserverAPI, ticks: int, pilot) -> None:
    start = app.ticks_seen
    api.run(ticks)
    await _until(lambda: app.ticks_seen >= start + ticks)
    await _until(lambda: api.run_state().remaining == 0)
    await pilot.pause()


def _rows(app: HearthApp, region) -> list[str]:
    """The screen's characters inside `region`, row by row (cut by columns, so wide
    emoji elsewhere on a row do not shift it)."""
    strips = app.screen._compositor.render_strips()
    return [strip.crop(region.x, region.right).text for strip in strips[region.y:region.bottom]]


def _header(app: HearthApp) -> str:
    """The header as it is on screen: its lines, top of the main column."""
    return "\n".join(_rows(app, app.query_one(HearthHeader).region))


def _footer(app: HearthApp) -> str:
    return screen_lines(app)[-1]


def _db(world: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{world / 'world.db'}?mode=ro", uri=True)


# ---------------------------------------------------------------------- 1: the past's weather


@SIZES
async def test_1_a_past_tick_shows_its_own_weather_and_the_whole_header(
        small_world, config, size) -> None:
    weather = config.settings.weather.model_copy(update={"change_chance": 0.5})
    changing = dataclasses.replace(
        config, settings=config.settings.model_copy(update={"weather": weather}))
    async with _watching(small_world, changing, await _offline(small_world)) as (api, app):
        async with app.run_test(size=size) as pilot:
            await _run(app, api, 12, pilot)
            with _db(small_world) as db:
                changes = db.execute("SELECT tick, data FROM events WHERE kind = "
                                     "'weather_changed' ORDER BY tick, seq").fetchall()
            then = {}
            for tick in range(12):
                said = [json.loads(d)["weather"] for t, d in changes if t <= tick]
                then[tick] = said[-1] if said else "clear"
            live = app.live.weather
            differs = [t for t, w in then.items() if w != live]
            assert differs, "the weather never differed from today's in twelve ticks"
            tick = differs[0]
            for _ in range(app.live.tick - tick):
                await pilot.press("left_square_bracket")
            await pilot.pause()
            assert app.timeline.viewing == tick
            shown = _header(app)
            assert f"{WEATHER_SYMBOLS[then[tick]]} {then[tick]}" in shown, shown
            assert f"{WEATHER_SYMBOLS[live]} {live}" not in shown
            # The whole header, not cut: the past marker, the tick, the run state, spend.
            for part in ("◀ PAST", f"tick {tick} of {app.live.tick}", f"t{tick} ",
                         "paused", "$0.00"):
                assert part in shown, (part, shown)
            wide = size == LARGE
            assert ("End returns to live" if wide else "(End: live)") in shown, shown
            assert "…" not in shown
            await pilot.press("end")
            await pilot.pause()
            assert f"{WEATHER_SYMBOLS[live]} {live}" in _header(app)


# ---------------------------------------------------------------------- 2: run state, help, quit


@SIZES
async def test_2_header_keeps_run_state_speed_and_spend_and_footer_help_and_quit(
        small_world, config, size) -> None:
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=size) as pilot:
            await pilot.press("space")  # run without end
            await _until(lambda: app.ticks_seen >= 5)
            await _until(lambda: "ticks/s" in _header(app), timeout=5)
            shown = _header(app)
            for part in ("running without end", "ticks/s", "$0.00", "t"):
                assert part in shown, (part, shown)
            assert "…" not in shown
            for focused, own_key in ((GridView, "z Zoom"), (AgentList, "Details")):
                app.query_one(focused).focus()
                # The footer is made again after a focus change, with the panel's keys first.
                await _until(lambda key=own_key: key in _footer(app), timeout=5)
                footer = _footer(app)
                assert "? Help" in footer and "q Quit" in footer, (focused, footer)
            await pilot.press("space")


# ---------------------------------------------------------------------- 3: a click chooses


async def test_3_clicking_an_agent_on_the_grid_chooses_it_and_f_follows_it(
        small_world, config) -> None:
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            grid = app.query_one(GridView)
            default = app.selected
            other = next(v for v in app.live.agents if v.name != default)
            grid.centre_on(other.position.x, other.position.y)
            await pilot.pause()
            sx, sy = grid.scroll_offset
            await pilot.click(GridView, offset=(other.position.x * 2 - sx,
                                                other.position.y - sy))
            await pilot.pause()
            assert grid.cursor == (other.position.x, other.position.y)
            assert app.selected == other.name
            assert other.name in app.query_one(AgentDetail).text.plain
            grid.focus()
            await pilot.press("f")
            assert grid.following == other.name


# ---------------------------------------------------------------------- 4: recent actions


async def test_4_after_a_relaunch_recent_actions_come_from_the_stored_turns(
        small_world, config) -> None:
    mind = await _offline(small_world)
    async with _watching(small_world, config, mind) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            await _run(app, api, 12, pilot)
            await pilot.press("q")
    with _db(small_world) as db:
        live = db.execute("SELECT tick FROM world_state").fetchone()[0]
        old = db.execute("SELECT agent, MIN(tick) FROM turns WHERE actions > 0 AND tick < ? "
                         "GROUP BY agent ORDER BY agent", (live - 4,)).fetchall()
    assert old, "no agent acted early in the run"
    name, first = old[0]
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            app.select_agent(name)
            app.query_one("#side-tabs").active = "tab-agent"
            await _until(lambda: app.query_one(AgentDetail).perception_text is not None)
            await pilot.pause()
            shown = app.query_one(AgentDetail).text.plain
            recent = shown.split("recent actions", 1)[1].split("last perception", 1)[0]
            assert "none yet" not in recent
            assert any(f"t{t} " in recent for t in range(first, live - 3)), recent
            perceived = shown.split("last perception", 1)[1]
            assert "has not had a turn" not in perceived
            assert "its next turn shows it" in perceived


# ---------------------------------------------------------------------- 5: enter's label


async def test_5_enter_in_the_agents_list_is_labelled_details(small_world, config) -> None:
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            app.query_one(AgentList).focus()
            await _until(lambda: "Details" in _footer(app), timeout=5)
            footer = _footer(app)
            assert "Details" in footer and "Follow" in footer  # f follows; enter details
            assert "⏎ Follow" not in footer and "enter Follow" not in footer
            await pilot.press("enter")
            await pilot.pause()
            assert app.query_one("#side-tabs").active == "tab-agent"


# ---------------------------------------------------------------------- 6: no speed when paused


async def test_6_a_paused_world_shows_no_speed(small_world, config) -> None:
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            await pilot.press("space")
            await _until(lambda: app.ticks_seen >= 5)
            await pilot.press("space")
            await _until(lambda: api.run_state().paused)
            await _until(lambda: "paused" in _header(app), timeout=5)  # the next beat
            shown = _header(app)
            assert "paused" in shown and "ticks/s" not in shown, shown


# ---------------------------------------------------------------------- 7: a clean quit


async def test_7_a_clean_quit_leaves_no_tick_begun(data_dir, config, scripted) -> None:
    """q while a tick is in flight (turns that take a while): the tick is finished,
    not left begun for the next run to resume."""
    async with Storage(data_dir) as storage:
        await create_world(storage, config, seed=4242, size=(64, 48), agent_count=30)
    mind = scripted(delay=0.02)
    async with _watching(data_dir, config, mind) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            await pilot.press("space")
            await _until(lambda: app.ticks_seen >= 1)
            await asyncio.sleep(0.1)  # the next tick's first turns are under way
            await pilot.press("q")
        assert app.return_value == 0
    async with Storage(data_dir, create=False, read_only=True) as storage:
        progress = await storage.engine.get_progress()
        status = await world_status(storage, clock_of(config))
    assert progress is None  # the next run starts a new tick: nothing to resume
    assert status.unfinished_tick is None
    words = format_status(status)
    assert "was interrupted" not in words and "was begun" not in words


# ---------------------------------------------------------------------- 8: the legend


@SIZES
async def test_8_the_legend_explains_every_glyph_on_the_grid_and_in_help(
        small_world, config, size) -> None:
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=size) as pilot:
            legend = app.query_one(LegendPanel)
            assert not legend.shown
            await pilot.press("i")
            await pilot.pause()
            assert legend.shown and legend.region.width > 0
            assert "Legend (emoji" in screen_text(app)
            said = legend_text(EMOJI).plain
            for glyph in (*EMOJI.every_cell_glyph(), *EMOJI.every_narrow_glyph()):
                assert glyph.strip() in said, glyph
            assert "@     an agent" in said and "?     a sign" in said
            await pilot.press("a")  # ASCII: the legend follows the grid's set
            await pilot.pause()
            assert "Legend (ascii" in screen_text(app)
            await pilot.press("i")
            await pilot.pause()
            assert not legend.shown and "Legend (" not in screen_text(app)
            await pilot.press("question_mark")
            await pilot.pause()
            help_legend = str(app.screen.query_one("#help-legend").render())
            assert "Legend (ascii" in help_legend and "where walls meet" in help_legend
            for glyph in (*ASCII.every_cell_glyph(), *ASCII.every_narrow_glyph()):
                assert glyph.strip() in help_legend, glyph


# ---------------------------------------------------------------------- 11: resizing


async def test_11_resizing_keeps_the_cursor_in_the_middle(data_dir, config) -> None:
    async with Storage(data_dir) as storage:
        await create_world(storage, config, seed=4242, size=(160, 120), agent_count=2)
    async with _watching(data_dir, config, await _offline(data_dir)) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            grid = app.query_one(GridView)
            app.go_to(80, 60)
            await pilot.pause()

            def off_centre() -> tuple[float, float]:
                sx, sy = grid.scroll_offset
                region = grid.scrollable_content_region
                x, y = grid.cursor
                return (abs((x * 2 - sx) - region.width / 2) / region.width,
                        abs((y - sy) - region.height / 2) / region.height)

            assert max(off_centre()) < 0.1
            for w, h in (SMALL, LARGE, SMALL, LARGE):
                await pilot.resize_terminal(w, h)
                await pilot.pause()
                await pilot.pause()
                assert grid.cursor == (80, 60)
                assert max(off_centre()) < 0.1, ((w, h), off_centre())


# ---------------------------------------------------------------------- 12: what was done


async def test_12_the_agents_list_shows_what_was_done_and_the_palette_cuts_at_words(
        small_world, config, scripted) -> None:
    mind = scripted(lambda start: [("walk", {"direction": "east"})])
    async with _watching(small_world, config, mind) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            await _run(app, api, 2, pilot)
            await asyncio.sleep(SUMMARY_WAIT)
            await pilot.pause()
            walkers = [v for v in app.live.agents if v.activity]
            assert walkers
            for view in walkers:
                assert view.activity in ("walk east", "✗ walk east"), view.activity
            rows = _rows(app, app.query_one(AgentList).region)
            named = [row for row in rows if any(v.name in row for v in walkers)]
            assert named and all("walk east" in row for row in named), rows
            for command in hearth_commands(app):
                if command.title.startswith("Go to landmark") and len(command.help) >= 79:
                    assert command.help.endswith("…")
                    assert command.help[-2] != " "
            assert deed_words("say", {"message": "a long  way\nhome"}) == 'say "a long way home"'


SUMMARY_WAIT = 0.6
"""The agent list catches up twice a second."""


# ---------------------------------------------------------------------- 13: screenshots


async def test_13_the_palette_screenshot_goes_to_the_data_folder_and_says_where(
        small_world, config) -> None:
    async with _watching(small_world, config, await _offline(small_world)) as (api, app):
        async with app.run_test(size=LARGE) as pilot:
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"Screenshot")
            await asyncio.sleep(0.3)
            await pilot.press("enter")
            folder = small_world / "screenshots"
            await _until(lambda: folder.is_dir() and any(folder.iterdir()), timeout=10)
            saved = next(folder.iterdir())
            assert saved.suffix == ".svg" and "Hearth" in saved.read_text()
            await pilot.pause()
            said = [n.message for n in app._notifications]
            assert any(str(saved) in m for m in said), said
            # A folder that cannot be used: the notice says where it tried and why.
            for old in folder.iterdir():
                old.unlink()
            folder.rmdir()
            (small_world / "elsewhere").mkdir()
            os.symlink(small_world / "elsewhere", folder)
            assert app.deliver_screenshot() is None
            await pilot.pause()
            said = [n.message for n in app._notifications]
            assert any(f"Could not save a screenshot in {folder}" in m for m in said), said
            assert not any((small_world / "elsewhere").iterdir())
