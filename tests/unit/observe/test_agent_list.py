"""The agent list: rows on screen, selection by keys, enter and click, selection kept
across snapshots, only changed rows redrawn, and speed with a thousand agents."""

from __future__ import annotations

import time

from observe.tui.widgets.agents import AgentList
from tests.unit.observe.tui_kit import (
    NASTY,
    OneWidget,
    agent_view,
    screen_lines,
    screen_segment_texts,
    screen_text,
    snapshot,
)

SIZE = (90, 12)


def crowd(count: int, tick: int = 0) -> list:
    """`count` agents named A0000..., walking one cell right per tick."""
    return [agent_view(f"A{i:04d}", (i + tick) % 50, i % 40, activity=f"walks to {i + tick}")
            for i in range(count)]


async def test_rows_show_name_state_position_and_activity() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    views = [agent_view("Ember", 3, 4, activity="Ember walks north."),
             agent_view("Sage", 1, 2, state="asleep"),
             agent_view("Ash", 0, 0, state="talking", activity="x" * 200)]
    async with app.run_test(size=SIZE) as pilot:
        agents.show(snapshot(views))
        await pilot.pause()
        rows = screen_lines(app)
        name, state, where, activity = rows[0].split()
        assert (name, state, where) == ("Ash", "talking", "(0,0)")
        assert activity == "x" * (len(activity) - 1) + "…"  # cut to the width
        assert rows[0].endswith("x…") and len(rows[0]) == SIZE[0]
        assert rows[1].split()[:3] == ["Ember", "awake", "(3,4)"]
        assert "Ember walks north." in rows[1]
        assert rows[2].split() == ["Sage", "asleep", "(1,2)"]
        assert agents.names == ["Ash", "Ember", "Sage"]


async def test_keys_move_the_selection_and_enter_posts_agent_chosen() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=SIZE) as pilot:
        agents.show(snapshot([agent_view(n) for n in ("Ash", "Ember", "Sage")]))
        agents.focus()
        await pilot.pause()
        assert agents.selected == "Ash"
        await pilot.press("down")
        assert agents.selected == "Ember"
        await pilot.press("j", "j", "j")  # stops at the last row
        assert agents.selected == "Sage"
        await pilot.press("k")
        assert agents.selected == "Ember"
        await pilot.press("up", "up")
        assert agents.selected == "Ash"
        assert app.chosen == []
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.chosen == ["Ember"]


async def test_the_selected_row_is_drawn_differently() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=SIZE) as pilot:
        agents.show(snapshot([agent_view("Ash"), agent_view("Ember")]))
        await pilot.pause()

        def background(row: int) -> object:
            strip = app.screen._compositor.render_strips()[row]
            return next(iter(strip)).style.bgcolor

        assert background(0) != background(1)
        agents.select("Ember")
        await pilot.pause()
        assert background(1) != background(0)
        assert agents.selected == "Ember"


async def test_click_selects_and_posts() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=SIZE) as pilot:
        agents.show(snapshot([agent_view(n) for n in ("Ash", "Ember", "Sage")]))
        await pilot.pause()
        assert await pilot.click(AgentList, offset=(2, 2))
        await pilot.pause()
        assert agents.selected == "Sage"
        assert app.chosen == ["Sage"]


async def test_selection_follows_the_name_across_snapshots_and_select() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=SIZE) as pilot:
        agents.show(snapshot([agent_view("Ember"), agent_view("Sage")]))
        assert agents.select("Sage")
        assert not agents.select("Nobody")
        assert agents.selected == "Sage"
        agents.show(snapshot([agent_view(n) for n in ("Ash", "Birch", "Ember", "Sage")]))
        await pilot.pause()
        assert agents.selected == "Sage"
        agents.show(snapshot([agent_view("Ash")]))  # Sage gone: the cursor stays in range
        assert agents.selected == "Ash"
        agents.show(snapshot([]))
        assert agents.selected is None


async def test_select_scrolls_far_rows_into_view() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=SIZE) as pilot:
        agents.show(snapshot(crowd(200)))
        await pilot.pause()
        agents.select("A0150")
        await pilot.pause()
        assert any(row.startswith("A0150") for row in screen_lines(app))
        await pilot.press("pageup")
        assert agents.selected is not None and agents.selected < "A0150"


async def test_only_changed_rows_are_rebuilt() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=SIZE) as pilot:
        views = crowd(100)
        agents.show(snapshot(views))
        await pilot.pause()
        assert agents.rebuilt_rows == 100
        moved = list(views)
        moved[1] = agent_view("A0001", 9, 9, activity="runs")
        moved[50] = agent_view("A0050", 0, 0, state="asleep", activity=moved[50].activity)
        agents.show(snapshot(moved))
        assert agents.rebuilt_rows == 2
        await pilot.pause()
        assert "(9,9)" in screen_lines(app)[1] and "runs" in screen_lines(app)[1]
        agents.show(snapshot(moved))
        assert agents.rebuilt_rows == 0


async def test_agent_text_is_shown_literally() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=(200, 5)) as pilot:
        agents.show(snapshot([agent_view("Ember", activity=NASTY)]))
        await pilot.pause()
        shown = screen_text(app)
        assert "[bold]x[/bold] [/] [@click=app.quit]click[/] [red]" in shown
        assert "cleared" in shown and "title" not in shown
        assert not any(ch in seg for seg in screen_segment_texts(app) for ch in "\x1b\x07\r\t")
        await pilot.click(AgentList, offset=(60, 0))  # on the [@click=...] words
        assert app.is_running


async def test_a_thousand_agents_stay_fast() -> None:
    agents = AgentList()
    app = OneWidget(agents)
    async with app.run_test(size=(100, 40)) as pilot:
        agents.show(snapshot(crowd(1000)))
        await pilot.pause()
        timings = []
        for tick in range(1, 6):
            shot = snapshot(crowd(1000, tick))
            started = time.perf_counter()
            agents.show(shot)
            timings.append(time.perf_counter() - started)
            await pilot.pause()
        assert agents.rebuilt_rows == 1000
        assert min(timings) < 0.05, timings  # measured about 1 ms on a slow core
        assert len(agents._strips) <= 40  # only the rows on screen were drawn
