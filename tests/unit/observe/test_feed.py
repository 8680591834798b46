"""The event feed: one line per FeedLine, failures marked, bounded, filtered, following
the end unless scrolled up, replaced for a past tick, and cheap to add to."""

from __future__ import annotations

import time

from observe.tui.widgets.feed import EventFeed
from tests.unit.observe.tui_kit import (
    NASTY,
    OneWidget,
    feed_line,
    screen_lines,
    screen_segment_texts,
    screen_text,
)

SIZE = (80, 10)


def many(count: int, start: int = 0, agents: tuple[str, ...] = ("Ember", "Sage")) -> list:
    return [feed_line(i // 10, agents[i % len(agents)], f"line {i}")
            for i in range(start, start + count)]


async def test_lines_are_shown_one_per_row_and_failures_marked() -> None:
    feed = EventFeed()
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.add([feed_line(123, "Ember", "Ember walks north."),
                  feed_line(124, "Sage", "Sage cannot walk into the water.", ok=False),
                  feed_line(125, None, "The weather turns rainy.", kind="weather_changed"),
                  feed_line(126, "Ash", "word " * 40)])
        await pilot.pause()
        rows = screen_lines(app)
        assert rows[0].rstrip() == "t123 Ember walk: Ember walks north."
        assert rows[1].rstrip() == "✗ t124 Sage walk: Sage cannot walk into the water."
        assert rows[2].rstrip() == "t125 weather_changed: The weather turns rainy."
        assert rows[3].endswith("…") and len(rows[3]) == SIZE[0]
        failed = feed.render_line(1)
        assert any(seg.style is not None and seg.style.color is not None
                   and seg.style.color.name == "red" for seg in failed)


async def test_the_feed_keeps_only_the_newest_lines() -> None:
    feed = EventFeed(max_lines=100)
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.add(many(250))
        await pilot.pause()
        assert len(feed.shown) == 100
        assert feed.shown[0].text == "line 150" and feed.shown[-1].text == "line 249"
        assert feed.virtual_size.height == 100
        assert screen_lines(app)[-1].rstrip().endswith("line 249")


async def test_it_follows_the_end_unless_scrolled_up() -> None:
    feed = EventFeed()
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.add(many(50))
        await pilot.pause()
        assert "line 49" in screen_lines(app)[-1]
        feed.add(many(5, 50))
        await pilot.pause()
        assert "line 54" in screen_lines(app)[-1]
        feed.focus()
        await pilot.press("pageup")
        await pilot.pause()
        top_before = feed.scroll_offset.y
        feed.add(many(20, 55))
        await pilot.pause()
        assert feed.scroll_offset.y == top_before  # the person's place is kept
        assert "line 74" not in screen_text(app)
        feed.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        feed.add(many(3, 75))
        await pilot.pause()
        assert "line 77" in screen_lines(app)[-1]  # back at the end: following again


async def test_filter_shows_one_agents_lines_and_keeps_up() -> None:
    feed = EventFeed(max_lines=40)
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.add(many(30))
        feed.set_filter("Sage")
        assert feed.filter == "Sage"
        assert {line.agent for line in feed.shown} == {"Sage"}
        assert len(feed.shown) == 15
        feed.add(many(30, 30))  # 60 in all: the oldest 20 fall off, filtered ones too
        await pilot.pause()
        assert [line.text for line in feed.shown] == [f"line {i}" for i in range(21, 60, 2)]
        assert "Ember" not in screen_text(app)
        assert "line 59" in screen_lines(app)[-1]
        feed.set_filter(None)
        await pilot.pause()
        assert len(feed.shown) == 40 and "Ember" in screen_text(app)


async def test_replace_shows_only_the_given_lines() -> None:
    feed = EventFeed()
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.add(many(30))
        feed.replace([feed_line(80, "Ember", "long ago")])
        await pilot.pause()
        assert [line.text for line in feed.shown] == ["long ago"]
        assert screen_lines(app)[0].rstrip() == "t80 Ember walk: long ago"
        assert "line" not in screen_text(app)
        feed.set_filter("Sage")
        feed.replace([feed_line(80, "Ember", "a"), feed_line(80, "Sage", "b")])
        assert [line.text for line in feed.shown] == ["b"]
        feed.clear()
        assert feed.shown == []


async def test_feed_text_is_literal() -> None:
    feed = EventFeed()
    app = OneWidget(feed)
    async with app.run_test(size=(200, 5)) as pilot:
        feed.add([feed_line(1, "Ember", NASTY, kind="[/]speak"),
                  feed_line(2, "Ember", "[/]", ok=False)])
        await pilot.pause()
        shown = screen_text(app)
        assert "[/]speak: [bold]x[/bold] [/] [@click=app.quit]click[/] [red]" in shown
        assert "✗ t2 Ember walk: [/]" in shown
        assert "cleared" in shown and "title" not in shown
        assert not any(ch in seg for seg in screen_segment_texts(app) for ch in "\x1b\x07\r\t")
        await pilot.click(EventFeed, offset=(50, 0))
        assert app.is_running


async def test_adding_a_thousand_lines_is_cheap() -> None:
    feed = EventFeed()
    app = OneWidget(feed)
    async with app.run_test(size=(100, 40)) as pilot:
        timings = []
        for tick in range(6):
            lines = many(1000, tick * 1000)
            started = time.perf_counter()
            feed.add(lines)
            timings.append(time.perf_counter() - started)
            await pilot.pause()
        assert len(feed.shown) == 5000
        assert min(timings) < 0.02, timings  # measured well under 1 ms
        assert len(feed._strips) <= 6 * 40  # only rows that were on screen were drawn


async def test_an_empty_feed_says_what_it_is_for() -> None:
    feed = EventFeed()
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert screen_lines(app)[0].startswith("Events: what agents do appears here")
        feed.set_filter("Ember")
        await pilot.pause()
        assert screen_lines(app)[0].startswith("Events: nothing from Ember yet")
        feed.add([feed_line(3, "Ember", "Ember walks north.")])
        await pilot.pause()
        rows = screen_lines(app)
        assert rows[0].rstrip() == "t3 Ember walk: Ember walks north."
        assert "Events:" not in screen_text(app)


async def test_a_chosen_line_holds_the_feed_still_until_it_is_let_go_or_falls_off() -> None:
    feed = EventFeed(max_lines=40)
    app = OneWidget(feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.add(many(30))
        feed.focus()
        await pilot.press("up", "up", "k")  # the newest in view, then two earlier
        await pilot.pause()
        assert feed.chosen is not None and feed.chosen.text == "line 27"
        top = feed.scroll_offset.y
        feed.add(many(5, 30))  # no following while a line is chosen
        await pilot.pause()
        assert feed.scroll_offset.y == top and feed.chosen.text == "line 27"
        assert "line 34" not in screen_text(app)
        feed.set_filter("Sage")  # line 27 is Sage's: still chosen
        assert feed.chosen is not None and feed.chosen.text == "line 27"
        feed.set_filter("Ember")  # not Ember's: let go
        assert feed.chosen is None
        feed.set_filter(None)
        await pilot.press("down")
        assert feed.chosen is not None
        chosen = feed.chosen.text
        feed.add(many(60, 35))  # the chosen line falls off the front: let go, following
        await pilot.pause()
        assert feed.chosen is None and chosen not in [ln.text for ln in feed.shown]
        assert "line 94" in screen_lines(app)[-1]
        await pilot.press("j")
        await pilot.pause()
        assert feed.chosen is not None and feed.chosen.text == "line 94"
        await pilot.press("escape")
        assert feed.chosen is None
