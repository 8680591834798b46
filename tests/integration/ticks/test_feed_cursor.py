"""A line cursor in the event feed, so `p` opens the stored turn behind any line
(issue 29), live and when looking back; and `p` on the turns of each kind of mind.

The real app over a real engine and world file (Pilot): keys and clicks choose a line,
the chosen line is drawn highlighted and stays chosen as ticks come, and the
provenance screen opens on that line's turn. The offline mind runs in-process, Claude
through the real SDK against the strict Messages stand-in (tests/messages_standin.py).
"""

from __future__ import annotations

import datetime
import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_models import check_models
from core.spend import Price
from observe.provenance import chosen_turn
from observe.snapshot import FeedLine
from observe.tui.provenance_screen import ProvenanceScreen
from observe.tui.widgets.feed import _CURSOR, EventFeed
from services.budget import Budgets, SpendMeter
from storage import Storage
from storage.history import NARRATED_EVENTS, HistoryReader
from tests.integration.ticks.test_tui_app import SIZE, _mind, _until, _watching
from tests.messages_standin import StrictMessagesApi
from tests.unit.observe.tui_kit import screen_lines

SONNET = "claude-sonnet-5-5"
TODAY = datetime.date(2026, 11, 26)
SMALL, LARGE = (80, 24), (160, 48)


def _is_turn(line: FeedLine) -> bool:
    return line.agent is not None and line.kind not in NARRATED_EVENTS


def _highlighted_rows(feed: EventFeed) -> list[int]:
    """The rows of the feed (on screen) drawn with the cursor's background."""
    rows = []
    for y in range(feed.scrollable_content_region.height):
        if any(seg.style is not None and seg.style.bgcolor == _CURSOR.bgcolor
               for seg in feed.render_line(y)):
            rows.append(y)
    return rows


async def _stored(world: Path, lines: list[FeedLine]) -> None:
    with HistoryReader(world / "world.db") as history:
        for line in lines:
            if _is_turn(line):
                await _until(lambda ln=line: history.turn(ln.tick, ln.agent) is not None)


def _plain(renderable) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return " ".join(console.export_text().split())


def _opened(app) -> tuple[ProvenanceScreen, tuple[int, str]]:
    screen = app.screen
    assert isinstance(screen, ProvenanceScreen), screen
    return screen, screen.turns[screen.index]


async def _claude(world: Path) -> tuple[ClaudeMind, StrictMessagesApi]:
    api = StrictMessagesApi()
    client = api.client()
    async with Storage(world, create=False, read_only=True) as storage:
        names = [a.name for a in await storage.agents.get_all_agents()]
    lineup = await check_models(client, {SONNET: names}, TODAY)
    meter = SpendMeter({SONNET: Price(3.0, 15.0, 3.75, 0.3)}, Budgets(), 24)
    profiles = {n: ClaudeProfile(SONNET, "Curious.", "low") for n in names}
    return ClaudeMind(client, profiles, lineup=lineup, meter=meter), api


# ---------------------------------------------------------------- choosing a line


async def test_keys_choose_a_feed_line_it_is_highlighted_and_p_opens_its_turn_live(
    small_world, config
) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(3)
            await _until(lambda: app.ticks_seen == 3)
            await pilot.pause()
            feed = app.query_one(EventFeed)
            shown = feed.shown
            assert len(shown) >= 6, shown
            await _stored(small_world, shown)
            assert feed.chosen is None and _highlighted_rows(feed) == []
            feed.focus()
            await pilot.press("up")  # the newest line in view
            await pilot.pause()
            assert feed.chosen_row == len(shown) - 1
            # Up to the newest line of another agent than the chosen one, a turn's line
            # that the newest-line rule would not open.
            target = max(i for i, ln in enumerate(shown)
                         if _is_turn(ln) and ln.agent != app.selected
                         and (ln.tick, ln.agent) != (shown[-1].tick, shown[-1].agent))
            for _ in range(len(shown) - 1 - target):
                await pilot.press("k")
            await pilot.pause()
            assert feed.chosen_row == target and feed.chosen == shown[target]
            assert _highlighted_rows(feed) == [target - feed.scroll_offset.y]
            # Ticks come: the chosen line stays chosen and in view (no following).
            top = feed.scroll_offset.y
            api.run(2)
            await _until(lambda: app.ticks_seen == 5)
            await pilot.pause()
            assert feed.chosen == shown[target] and feed.scroll_offset.y == top
            assert len(feed.shown) > len(shown)
            await pilot.press("p")
            await pilot.pause()
            screen, opened = _opened(app)
            line = shown[target]
            assert opened == (line.tick, line.agent)
            assert f"{line.agent} at tick {line.tick}" in screen.text.plain
            assert line.text in screen.text.plain
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ProvenanceScreen)
            # Escape on the feed lets the line go: the newest is followed again.
            await pilot.press("escape")
            await pilot.pause()
            assert feed.chosen is None and _highlighted_rows(feed) == []
            assert feed.is_vertical_scroll_end
            await pilot.press("q")


async def test_a_click_chooses_a_feed_line_and_p_opens_it_when_looking_back(
    small_world, config
) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(4)
            await _until(lambda: app.ticks_seen == 4)
            await pilot.pause()
            await _stored(small_world, app.query_one(EventFeed).shown)
            await pilot.press("left_square_bracket", "left_square_bracket")
            await pilot.pause()
            past = app.timeline.viewing
            assert past is not None and past < app.live.tick
            feed = app.query_one(EventFeed)
            shown = feed.shown
            assert shown and {ln.tick for ln in shown} == {past}
            top = feed.scroll_offset.y
            row = next(i for i in range(top, len(shown)) if _is_turn(shown[i])
                       and shown[i].agent != app.selected)
            await pilot.click(EventFeed, offset=(3, row - top))
            await pilot.pause()
            assert feed.chosen == shown[row] and feed.has_focus
            assert _highlighted_rows(feed) == [row - top]
            await pilot.press("p")
            await pilot.pause()
            screen, opened = _opened(app)
            assert opened == (past, shown[row].agent)
            assert f"{shown[row].agent} at tick {past}" in screen.text.plain
            assert shown[row].text in screen.text.plain
            await pilot.press("escape")
            await pilot.pause()
            # Back to live: the past's chosen line is let go.
            await pilot.press("end")
            await pilot.pause()
            assert app.timeline.is_live and feed.chosen is None
            await pilot.press("q")


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
async def test_help_and_footer_tell_the_feed_cursor(small_world, config, size) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=size) as pilot:
            app.query_one(EventFeed).focus()
            await _until(lambda: "Earlier line" in screen_lines(app)[-1], timeout=5)
            footer = screen_lines(app)[-1]
            assert "? Help" in footer and "q Quit" in footer, footer
            await pilot.press("question_mark")
            await pilot.pause()
            keys, panels = (_plain(app.screen.query_one(f"#help-{part}", Static).content)
                            for part in ("keys", "panels"))
            for words in ("Events feed", "Earlier line", "Later line", "Newest line"):
                assert words in keys, (words, keys)
            assert "click a line" in panels and "chosen feed line" in panels
            await pilot.press("escape", "q")


def test_a_happening_line_opens_the_nearest_turn_and_says_so() -> None:
    lines = [FeedLine(5, "Ember", "walk", "Ember walks.", True),
             FeedLine(5, "Sage", "agent_woke", "Sage wakes.", True),
             FeedLine(5, None, "weather_changed", "Rain.", True),
             FeedLine(5, "Sage", "speak", "Sage speaks.", True)]
    assert "agent_woke" in NARRATED_EVENTS
    turns, index, note = chosen_turn(lines, 3, None)
    assert turns == [(5, "Ember"), (5, "Sage")] and index == 1 and note is None
    turns, index, note = chosen_turn(lines, 2, None)
    assert index == 0 and note and "happening" in note  # Sage's waking is not its turn
    assert chosen_turn(lines, None, "Ember")[1] == 0
    assert chosen_turn(lines, None, None)[1] == 1


# ---------------------------------------------------------------- each kind of mind


async def _open_live_and_past(app, pilot, world, ticks: int) -> list[tuple[str, str]]:
    """Run `ticks`, then open provenance on the newest turn line, live and one tick back:
    each time the screen's text and the line's own text."""
    await _until(lambda: app.ticks_seen == ticks)
    await pilot.pause()
    feed = app.query_one(EventFeed)
    await _stored(world, feed.shown)
    seen = []
    for when in ("live", "past"):
        if when == "past":
            await pilot.press("left_square_bracket")
            await pilot.pause()
            assert app.timeline.viewing == app.live.tick - 1
        shown = feed.shown
        row = max(i for i, ln in enumerate(shown) if _is_turn(ln))
        feed.choose_row(row)
        await pilot.press("p")
        await pilot.pause()
        screen, opened = _opened(app)
        assert opened == (shown[row].tick, shown[row].agent), when
        seen.append((screen.text.plain, shown[row].text))
        await pilot.press("escape")
        await pilot.pause()
    await pilot.press("q")
    return seen


async def test_p_opens_an_offline_turn_live_and_in_the_past(small_world, config) -> None:
    async with _watching(small_world, config, await _mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(3)
            for text, line in await _open_live_and_past(app, pilot, small_world, 3):
                assert "(offline mind; turn ended:" in text, text
                assert "The offline mind is a script: it records no perception" in text
                assert "Perceived\n(not recorded)" in text
                assert "Mind: no tokens recorded; no cost recorded" in text
                assert line in text


async def test_p_opens_a_claude_turn_live_and_in_the_past(small_world, config) -> None:
    mind, standin = await _claude(small_world)
    async with _watching(small_world, config, mind) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(2)
            for text, line in await _open_live_and_past(app, pilot, small_world, 2):
                assert f"(claude mind, model {SONNET}; turn ended:" in text, text
                assert "You are at (" in text  # the perception, as the model was sent it
                assert "Said (reply)\n(not recorded)" not in text  # the stand-in replied
                assert "Mind: " in text and "output " in text and "$0.0" in text
                assert line in text
    assert standin.refused == []
