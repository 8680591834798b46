"""Issue 39: the header's spend rate (an hour of running, an agent-day) and the rate
limit that paced the world, in words and as they wrap on a narrow terminal."""

from __future__ import annotations

import re

import pytest

from observe.api import RunState
from observe.snapshot import Pace, Spending
from observe.tui.widgets.header import (
    HearthHeader,
    Spare,
    header_parts,
    pace_words,
    rate_money,
    spend_rate_words,
    wrap_parts,
)
from services.budget import spend_rate
from tests.unit.observe.tui_kit import OneWidget, snapshot

RUNNING = RunState(True, False, None, 0.4)
SONNET_OUT = Pace("claude-sonnet-5-5", "output tokens", 8_000, 62.0)
HAIKU_REQ = Pace("claude-haiku-5-5", "requests", 50, 3.0)
SPENDING = Spending(seconds=600.0, agent_ticks=48, ticks_per_day=24, paced_by=(SONNET_OUT,))
ORIGIN = "forked from ../parent at tick 40"


def _plain(parts) -> list[str]:
    return [p.plain for p in parts]


def test_the_rate_is_per_hour_of_running_and_per_agent_day() -> None:
    # $0.12 in ten minutes of ticks: $0.72 an hour; over 48 agent-ticks of 24 a day
    # (two agent-days): $0.06 an agent-day.
    assert spend_rate_words(0.12, 600.0, 48, 24) == ["$0.72/h", "$0.06/agent-day"]
    assert spend_rate_words(30.0, 3600.0, 2400, 24) == ["$30.00/h", "$0.30/agent-day"]
    assert spend_rate_words(1234.5, 3600.0, 24, 24) == ["$1,234.50/h", "$1,234.50/agent-day"]
    # Below a cent, four places (not "$0.00" for a run of cheap turns).
    assert spend_rate_words(0.0001, 3600.0, 24, 24) == ["$0.0001/h", "$0.0001/agent-day"]
    assert rate_money(0.0) == "$0.00"


def test_no_rate_before_a_second_has_run_or_a_turn_was_lived() -> None:
    assert spend_rate_words(0.0, 0.0, 0, 24) == []
    assert spend_rate_words(0.05, 0.4, 0, 24) == []
    assert spend_rate_words(0.05, 0.4, 8, 24) == ["$0.15/agent-day"]
    assert spend_rate_words(0.05, 2.0, 0, 24) == ["$90.00/h"]


@pytest.mark.parametrize(("spent", "seconds", "agent_ticks", "per_day"), [
    (0.12, 600.0, 48, 24), (3.5, 7321.0, 1000, 96), (0.02, 45.0, 3, 1440)])
def test_the_short_form_says_the_figures_the_long_form_says(
        spent: float, seconds: float, agent_ticks: int, per_day: int) -> None:
    long = spend_rate(spent, seconds, agent_ticks, per_day)
    hour, day = re.fullmatch(r"\$\S+ spent, (\$\S+) an hour of running, (\$\S+) an agent-day",
                             long).groups()  # type: ignore[union-attr]
    assert spend_rate_words(spent, seconds, agent_ticks, per_day) == [
        f"{hour}/h", f"{day}/agent-day"]


def test_a_pace_in_short_words() -> None:
    assert pace_words(SONNET_OUT) == "paced by claude-sonnet-5-5's output tokens: 8,000/min"
    assert pace_words(HAIKU_REQ) == "paced by claude-haiku-5-5's requests: 50/min"


def test_the_rate_and_pace_come_after_the_spend_and_before_the_fork_origin() -> None:
    parts = header_parts(snapshot(tick=4651, spend=0.1234, spending=SPENDING), RUNNING,
                         origin=ORIGIN)
    assert _plain(parts)[-5:] == [
        "$0.1234", "$0.74/h", "$0.06/agent-day",
        "paced by claude-sonnet-5-5's output tokens: 8,000/min", ORIGIN]
    assert [isinstance(p, Spare) for p in parts[-5:]] == [False, True, True, True, False]
    two = Spending(600.0, 48, 24, (SONNET_OUT, HAIKU_REQ))
    words = _plain(header_parts(snapshot(spend=0.1234, spending=two), RUNNING))
    assert words[-2:] == [pace_words(SONNET_OUT), pace_words(HAIKU_REQ)]


def test_an_offline_world_keeps_the_header_it_had() -> None:
    """No Claude agent: the spend as before ("$0.00"), no rate, no pace."""
    offline = _plain(header_parts(snapshot(tick=12), RUNNING, origin=ORIGIN))
    assert offline == ["t12", "day 1, 08:00 (morning)", "☂ rainy", "▶ running without end",
                       "0.4 ticks/s", "$0.00", ORIGIN]
    # Claude speaking, nothing lived yet: the spend alone.
    fresh = Spending(0.0, 0, 24)
    assert _plain(header_parts(snapshot(tick=12, spending=fresh), RUNNING,
                               origin=ORIGIN)) == offline


def test_an_observer_that_only_watches_shows_no_spend_or_rate() -> None:
    state = RunState(True, False, None, 0.4, watch_only=True, changer="process 42")
    words = " ".join(_plain(header_parts(snapshot(spend=0.5, spending=SPENDING), state)))
    assert "$" not in words and "paced by" not in words


@pytest.mark.parametrize("width", [30, 40, 60, 80, 111, 200])
def test_on_a_narrow_terminal_the_rate_and_pace_go_before_anything_is_cut(width: int) -> None:
    parts = header_parts(snapshot(tick=4651, spend=0.1234, spending=SPENDING), RUNNING,
                         origin=ORIGIN)
    lines = [t.plain for t in wrap_parts(parts, width)]
    joined = " · ".join(lines)
    assert len(lines) <= 3 and all(len(line) <= width for line in lines), lines
    if width >= 40:  # what was always there stays: the run state, speed and spend
        for part in ("t4651", "running without end", "0.4 ticks/s", "$0.1234"):
            assert part in joined, (part, lines)
    if width >= 60:  # and the fork's origin, whole
        assert ORIGIN in joined and "…" not in joined, lines
    if "…" in joined:  # something had to be cut: only after all the spare parts went
        before = header_parts(snapshot(tick=4651, spend=0.1234), RUNNING, origin=ORIGIN)
        assert lines == [t.plain for t in wrap_parts(before, width)]
    if width >= 111:  # room for everything: nothing is left out
        assert "$0.74/h" in joined and pace_words(SONNET_OUT) in joined, lines
    # Left out the last first: never the rate while the pace is shown, never the hour's
    # rate while the agent-day's is.
    if pace_words(SONNET_OUT) in joined:
        assert "$0.06/agent-day" in joined
    if "/agent-day" in joined:
        assert "$0.74/h" in joined


def test_the_pace_is_left_out_before_the_fork_origin_is_cut() -> None:
    parts = header_parts(snapshot(tick=4651, spend=0.1234, spending=SPENDING), RUNNING,
                         origin=ORIGIN)
    lines = [t.plain for t in wrap_parts(parts, 80)]
    assert lines == [
        "t4651 · day 1, 08:00 (morning) · ☂ rainy · ▶ running without end · 0.4 ticks/s",
        f"$0.1234 · $0.74/h · $0.06/agent-day · {ORIGIN}"]


async def test_the_header_widget_shows_the_rate_and_pace_on_screen() -> None:
    header = HearthHeader()
    app = OneWidget(header)
    async with app.run_test(size=(120, 5)) as pilot:
        header.show(snapshot(tick=9, spend=0.1234, spending=SPENDING), RUNNING)
        await pilot.pause()
        shown = [s.text.rstrip() for s in app.screen._compositor.render_strips()]
        assert shown[0].endswith("$0.1234 · $0.74/h · $0.06/agent-day"), shown
        assert shown[1] == "paced by claude-sonnet-5-5's output tokens: 8,000/min", shown
        assert header.size.height == 2
        await pilot.resize_terminal(60, 5)
        await pilot.pause()
        shown = [s.text.rstrip() for s in app.screen._compositor.render_strips()]
        assert "paced by" not in " ".join(shown) and "…" not in " ".join(shown), shown
        assert "$0.1234" in " ".join(shown) and header.size.height <= 3
