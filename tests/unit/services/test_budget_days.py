"""A per-agent-per-day budget counts the world clock's days: midnight to midnight.

settings.yaml's `budgets.per_agent_per_day` is "what one agent may cost in one in-world
day (midnight to midnight on the world's clock), over however many runs"; a world that
starts at 08:00 has a first day of 16 hours.
"""

from __future__ import annotations

import pytest

from core.clock import first_tick_of_day
from core.spend import Price, Usage
from services.budget import Budgets, SpendMeter

PRICES = {"m": Price(input=1.0, output=0.0, cache_write=0.0, cache_read=0.0)}
"""A dollar per million input tokens, so usage reads as dollars."""


def usd(amount: float) -> Usage:
    return Usage(input=round(amount * 1_000_000))


def meter(limit: float = 5.0, ticks_per_day: int = 24, start_hour: int = 8,
          earlier=(), now: int | None = None) -> SpendMeter:
    return SpendMeter(PRICES, Budgets(per_agent_per_day=limit), ticks_per_day, earlier,
                      now=now, start_hour=start_hour)


def test_spend_either_side_of_midnight_is_two_days():
    m = meter()
    m.add("Ember", 15, "m", usd(3))   # 23:00 on day 1
    m.add("Ember", 16, "m", usd(3))   # 00:00 on day 2
    assert m.reached() is None


def test_spend_within_the_clocks_first_day_adds_up():
    m = meter()
    m.add("Ember", 0, "m", usd(3))    # 08:00
    m.add("Ember", 15, "m", usd(3))   # 23:00, the same day
    assert m.reached() == "Ember's budget of $5.00 for day 1 is reached: $6.00 spent that day"


def test_the_days_are_not_blocks_of_ticks_per_day_from_the_start():
    """Tick 10 is 18:00 on day 1; ticks 16 and 23 are 00:00 and 07:00 on day 2. Blocks of
    24 ticks counted from tick 0 would put all three in one day."""
    m = meter()
    m.add("Ember", 10, "m", usd(4))
    m.add("Ember", 16, "m", usd(3))
    assert m.reached() is None
    m.add("Ember", 23, "m", usd(3))
    assert m.reached() is not None and "for day 2 is reached: $6.00" in m.reached()


def test_a_world_starting_at_midnight_keeps_days_of_ticks_per_day():
    m = meter(start_hour=0)
    m.add("Ember", 15, "m", usd(3))
    m.add("Ember", 16, "m", usd(3))
    assert m.reached() is not None and "for day 1" in m.reached()


def test_each_agent_has_its_own_day():
    m = meter()
    m.add("Ember", 20, "m", usd(4))
    m.add("Sage", 20, "m", usd(4))
    assert m.reached() is None


def test_an_earlier_runs_spend_counts_towards_the_same_clock_day():
    earlier = [("Ember", 17, "m", usd(3))]   # 01:00 on day 2, in a run before this one
    m = meter(earlier=earlier, now=20)
    assert m.reached() is None
    m.add("Ember", 20, "m", usd(3))
    assert m.reached() == "Ember's budget of $5.00 for day 2 is reached: $6.00 spent that day"
    assert m.run == pytest.approx(3.0)  # this run's spend is only its own


def test_an_earlier_runs_spend_on_the_day_before_midnight_does_not_count():
    earlier = [("Ember", 15, "m", usd(4))]   # 23:00 on day 1
    m = meter(earlier=earlier, now=16)
    m.add("Ember", 16, "m", usd(4))
    assert m.reached() is None


def test_a_day_already_spent_is_reached_at_once_until_the_clocks_midnight():
    earlier = [("Ember", 17, "m", usd(6))]
    assert meter(earlier=earlier, now=39).reached() == (
        "Ember's budget of $5.00 for day 2 is reached: $6.00 spent that day")
    assert meter(earlier=earlier, now=40).reached() is None  # 00:00 on day 3


CLOCKS = [(24, 8), (24, 0), (24, 23), (48, 6), (96, 17), (10, 5), (7, 20), (1, 12), (2, 8)]


@pytest.mark.parametrize(("ticks_per_day", "start_hour"), CLOCKS)
def test_the_budget_resets_exactly_at_each_midnight(ticks_per_day, start_hour):
    for day in (1, 2, 3):
        midnight = first_tick_of_day(day, ticks_per_day, start_hour)
        before = midnight - 1
        m = meter(ticks_per_day=ticks_per_day, start_hour=start_hour)
        m.add("Ember", before, "m", usd(4.5))
        m.add("Ember", midnight, "m", usd(4.5))
        assert m.reached() is None, (ticks_per_day, start_hour, day)
        m.add("Ember", midnight, "m", usd(1))
        assert m.reached() is not None and f"for day {day + 1} is reached: $5.50" \
            in m.reached(), (ticks_per_day, start_hour, day)


@pytest.mark.parametrize(("ticks_per_day", "start_hour"), CLOCKS)
def test_earlier_spend_counts_for_every_tick_of_its_clock_day(ticks_per_day, start_hour):
    for day in (0, 1, 2):
        start = first_tick_of_day(day, ticks_per_day, start_hour)
        end = first_tick_of_day(day + 1, ticks_per_day, start_hour)
        earlier = [("Ember", start, "m", usd(5))]
        for now in range(start, end):
            assert meter(ticks_per_day=ticks_per_day, start_hour=start_hour,
                         earlier=earlier, now=now).reached() is not None, (day, now)
        assert meter(ticks_per_day=ticks_per_day, start_hour=start_hour, earlier=earlier,
                     now=end).reached() is None
        # And the meter names the same day the clock does.
        assert meter(ticks_per_day=ticks_per_day, start_hour=start_hour).day(end - 1) == day
