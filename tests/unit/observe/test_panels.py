"""The observer's panels, as real widgets in a small app: the header, the cell panel,
the conversations and the agent detail, each read back from the screen."""

from __future__ import annotations

import numpy as np
import pytest

from core.agent import Inventory, Journey
from core.landmarks import Landmark
from core.objects import Item, Sign
from core.places import NamedPlace
from core.structures import Structure
from core.types import AgentName, Position
from observe.api import CellInfo, RunState, cell_info
from observe.snapshot import ConversationView, WorldSnapshot
from observe.tui.widgets.cellinfo import CellPanel
from observe.tui.widgets.conversations import ConversationPanel
from observe.tui.widgets.detail import AgentDetail
from observe.tui.widgets.header import HearthHeader, money
from tests.unit.observe.tui_kit import (
    CONTROL_CHARACTERS,
    NASTY,
    NASTY_VISIBLE,
    OneWidget,
    agent_view,
    feed_line,
    screen_segment_texts,
    screen_text,
    snapshot,
)

SIZE = (110, 40)
RUNNING = RunState(running=True, paused=False, remaining=12, ticks_per_second=3.5)


def assert_safe(app: OneWidget) -> None:
    """The injected markup is on screen literally and no control character is."""
    shown = screen_text(app)
    for piece in NASTY_VISIBLE:
        assert piece in shown, f"{piece!r} is not shown literally"
    for segment in screen_segment_texts(app):
        for ch in CONTROL_CHARACTERS:
            assert ch not in segment, f"{ch!r} reached the screen"
    assert "cleared" in shown and "title" not in shown  # the OSC's title is dropped
    assert app.is_running


# ---------------------------------------------------------------------- header


async def test_header_shows_tick_time_weather_run_state_speed_and_spend() -> None:
    header = HearthHeader()
    app = OneWidget(header)
    async with app.run_test(size=SIZE) as pilot:
        header.show(snapshot(tick=123, weather="rainy", spend=0.0123), RUNNING)
        await pilot.pause()
        top = screen_text(app).splitlines()[0]
        for part in ("t123", "day 1, 08:00 (morning)", "☂ rainy", "running, 12 ticks left",
                     "3.5 ticks/s", "$0.0123"):
            assert part in top
        assert "PAST" not in top
        assert not header.has_class("-past")


@pytest.mark.parametrize(("state", "words"), [
    (RunState(True, True, 5, 0.0), "paused"),
    (RunState(True, False, None, 1.0), "running without end"),
    (RunState(True, False, 1, 1.0), "running, 1 tick left"),
    (RunState(True, False, 0, 0.0), "idle"),
    (RunState(False, False, 0, 0.0), "stopped"),
    (RunState(False, False, 0, 0.0, error="[/] boom"), "stopped: [/] boom"),
])
async def test_header_run_state_words(state: RunState, words: str) -> None:
    header = HearthHeader()
    async with OneWidget(header).run_test(size=SIZE) as pilot:
        header.show(snapshot(), state)
        await pilot.pause()
        assert words in header.line.plain
        assert words in screen_text(pilot.app).splitlines()[0]


async def test_header_marks_a_past_tick_clearly() -> None:
    header = HearthHeader()
    app = OneWidget(header)
    async with app.run_test(size=SIZE) as pilot:
        header.show(snapshot(tick=123), RUNNING, past_label="viewing tick 80 of 123")
        await pilot.pause()
        top = screen_text(app).splitlines()[0]
        assert top.startswith("◀ PAST: viewing tick 80 of 123 — End returns to live")
        assert header.has_class("-past")
        past_style = header.line.get_style_at_offset(app.console, 2)
        live_style = header.line.get_style_at_offset(app.console, header.line.plain.index("t123"))
        assert past_style != live_style
        header.show(snapshot(tick=124), RUNNING)
        await pilot.pause()
        assert "PAST" not in screen_text(app).splitlines()[0]
        assert not header.has_class("-past")


def test_money_shows_small_spends_with_four_decimals() -> None:
    assert money(0) == "$0.00"
    assert money(0.0123) == "$0.0123"
    assert money(12.5) == "$12.50"


# ---------------------------------------------------------------------- cell panel


def furnished_snapshot() -> WorldSnapshot:
    """A snapshot whose cell (2, 1) has a wall east, a door south, two agents, a sign,
    an item pile, a named place, a landmark and a shelter."""
    ember = agent_view("Ember", 2, 1)
    sage = agent_view("Sage", 2, 1, state="asleep")
    wall_east = np.zeros((4, 6), dtype=bool)
    wall_south = np.zeros((4, 6), dtype=bool)
    door_south = np.zeros((4, 6), dtype=bool)
    wall_east[1, 2] = True
    wall_south[1, 2] = door_south[1, 2] = True
    return snapshot(
        [ember, sage], wall_east=wall_east, wall_south=wall_south, door_south=door_south,
        objects=(Sign("s1", Position(2, 1), AgentName("Ember"), 3, NASTY),),
        places=(NamedPlace("Old [/] Oak", Position(2, 1), AgentName("Sage"), 4),),
        landmarks=(Landmark("spring", "Clear Spring", "cold", Position(2, 1)),),
        structures=(Structure("h1", frozenset({Position(2, 1)}), AgentName("Ember"), 5,
                              name="[bold]Hut[/bold]"),),
    )


async def test_cell_panel_shows_everything_in_the_cell() -> None:
    panel = CellPanel()
    app = OneWidget(panel)
    info = cell_info(furnished_snapshot(), 2, 1)
    assert info is not None
    async with app.run_test(size=SIZE) as pilot:
        panel.show(info)
        await pilot.pause()
        shown = screen_text(app)
        assert "(2, 1) grass" in shown
        assert "walls: east" in shown and "doors: south" in shown
        assert "agents: Ember (awake), Sage (asleep)" in shown
        assert "named: Old [/] Oak" in shown
        assert "landmarks: Clear Spring" in shown
        assert "shelter: inside [bold]Hut[/bold], 1 cell, built by Ember" in shown
        assert "past tick" not in shown
        assert_safe(app)


async def test_cell_panel_items_past_marker_and_outside() -> None:
    panel = CellPanel()
    app = OneWidget(panel)
    async with app.run_test(size=SIZE) as pilot:
        panel.show(CellInfo(0, 0, "sand", items=("3 wood", "axe")), past=True)
        await pilot.pause()
        shown = screen_text(app)
        assert "(0, 0) sand" in shown and "items: 3 wood, axe" in shown
        assert "past tick" in shown
        assert "walls" not in shown  # no wall line for a cell without walls
        panel.show(None)
        await pilot.pause()
        assert "outside the world" in screen_text(app)
        assert "sand" not in screen_text(app)


# ---------------------------------------------------------------------- conversations


def public(cid: str, start: int, *lines: tuple[int, str, str], ended: int | None = None,
           who: tuple[str, ...] = ("Ash", "Ember")) -> ConversationView:
    return ConversationView(cid, who, True, start, ended, tuple(lines))


async def test_conversations_newest_first_with_words_and_ended_marked() -> None:
    panel = ConversationPanel()
    app = OneWidget(panel)
    old = public("c1", 10, (11, "Ash", "hello there"), ended=20)
    new = public("c2", 30, (31, "Ember", "the river is up"), (32, "Ash", "let us go round"),
                 who=("Ash", "Ember", "Sage"))
    async with app.run_test(size=SIZE) as pilot:
        panel.show([old, new])
        await pilot.pause()
        shown = screen_text(app)
        assert "Ash, Ember and Sage since tick 30" in shown
        assert "t31 Ember: the river is up" in shown
        assert "t32 Ash: let us go round" in shown
        assert "Ash and Ember since tick 10 (ended at tick 20)" in shown
        assert "t11 Ash: hello there" in shown
        assert shown.index("since tick 30") < shown.index("since tick 10")
        assert shown.index("river") < shown.index("let us go round")  # words in order


async def test_private_conversations_show_only_that_they_exist() -> None:
    panel = ConversationPanel()
    app = OneWidget(panel)
    secret = ConversationView("p1", ("Ember", "Sage"), False, 40, None,
                              ((41, "Sage", "the key is under the stone"),))
    async with app.run_test(size=SIZE) as pilot:
        panel.show([secret])
        await pilot.pause()
        shown = screen_text(app)
        assert "a private conversation between Ember and Sage, since tick 40" in shown
        assert "key" not in shown and "stone" not in shown
        assert "Sage:" not in shown
        panel.show([])
        await pilot.pause()
        assert "No conversations." in screen_text(app)


async def test_conversation_words_are_literal() -> None:
    panel = ConversationPanel()
    app = OneWidget(panel)
    async with app.run_test(size=SIZE) as pilot:
        panel.show([public("c1", 1, (2, "Ash", NASTY))])
        await pilot.pause()
        assert_safe(app)


# ---------------------------------------------------------------------- agent detail


async def test_detail_shows_inventory_journey_actions_cost_mind_and_perception() -> None:
    journey = Journey(Position(3, 0), (Position(1, 0), Position(2, 0), Position(3, 0)))
    inventory = Inventory({"wood": 3, "stone": 1},
                          (Item("i1", "axe", ("sharp",)), Item("i2", "flute")))
    view = agent_view("Ember", 1, 0, state="journeying", inventory=inventory,
                      journey=journey, mind="claude")
    lines = [feed_line(t, "Ember", f"step {t}") for t in range(1, 15)]
    lines.append(feed_line(15, "Sage", "not Ember's"))
    lines.append(feed_line(16, "Ember", "the way is blocked", ok=False))
    perception = "Tick 16\n┌──┐\n│🌲│\n└──┘\nYou see a river."
    panel = AgentDetail()
    app = OneWidget(panel)
    async with app.run_test(size=SIZE) as pilot:
        panel.show(view, lines, 0.25, perception)
        await pilot.pause()
        assert panel.perception_text == perception
        shown = screen_text(app)
        assert "Ember  journeying at (1, 0)" in shown
        assert "mind: claude" in shown and "cost: $0.2500" in shown
        assert "carrying: 1 stone, 3 wood; axe (sharp), flute" in shown
        assert "journey: to (3, 0), 2 steps left" in shown
        assert "✗ t16 walk: the way is blocked" in shown
        assert "t6 walk: step 6" in shown and "t5 walk: step 5" not in shown  # last 10
        assert "not Ember's" not in shown
        rows = shown.splitlines()
        for part in ("┌──┐", "│🌲│", "└──┘", "You see a river."):
            assert any(part in row for row in rows), part
        assert rows.index(next(r for r in rows if "┌──┐" in r)) + 1 == rows.index(
            next(r for r in rows if "│🌲│" in r))  # line breaks kept


async def test_detail_without_agent_or_perception() -> None:
    panel = AgentDetail()
    app = OneWidget(panel)
    async with app.run_test(size=SIZE) as pilot:
        assert "No agent chosen." in screen_text(app)
        panel.show(agent_view("Sage"), [], 0.0, None)
        await pilot.pause()
        shown = screen_text(app)
        assert "carrying: nothing" in shown and "journey: none" in shown
        assert "not read yet" in shown and "cost: $0.00" in shown
        panel.show(agent_view("Sage"), [], 0.0, "")
        await pilot.pause()
        assert "it has not had a turn" in screen_text(app)
        assert panel.perception_text == ""
        panel.show(None, [], 0.0, "seen")
        assert panel.perception_text is None


async def test_detail_text_is_literal_and_perception_keeps_only_line_breaks() -> None:
    panel = AgentDetail()
    app = OneWidget(panel)
    view = agent_view("Ember", activity=NASTY)
    async with app.run_test(size=SIZE) as pilot:
        panel.show(view, [feed_line(3, "Ember", NASTY)], 0.0, "first\n" + NASTY)
        await pilot.pause()
        assert_safe(app)
        assert screen_text(app).count("[@click=app.quit]click[/]") == 2
        assert "first" in panel.text.plain.split("\n")[-2]
