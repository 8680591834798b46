"""The world clock's days: they turn at midnight, however many ticks a day has and
whatever hour the world began at."""

from __future__ import annotations

import pytest

from core.clock import day_of, first_tick_of_day, time_of_day

CLOCKS = [(24, 8), (24, 0), (24, 23), (48, 8), (96, 5), (12, 7), (7, 13), (5, 22), (3, 1),
          (2, 23), (1, 8), (1, 0), (100, 17), (1440, 8), (1000, 6), (144, 12)]
"""(ticks_per_day, start_hour): the shipped clock, ticks that do not divide a day
evenly, ticks longer than the hours left in the first day, one tick a day."""


def test_a_world_starting_at_eight_ends_its_first_day_at_midnight_sixteen_ticks_in():
    assert [day_of(t, 24, 8) for t in (0, 15, 16, 39, 40)] == [0, 0, 1, 1, 2]
    assert first_tick_of_day(1, 24, 8) == 16
    assert first_tick_of_day(2, 24, 8) == 40
    assert time_of_day(16, 24, 8).hour == 0 and time_of_day(15, 24, 8).hour == 23


def test_a_world_starting_at_midnight_has_days_of_whole_ticks_per_day():
    assert [first_tick_of_day(d, 24, 0) for d in range(5)] == [0, 24, 48, 72, 96]


def test_day_zero_and_earlier_begin_at_the_first_tick():
    assert first_tick_of_day(0, 24, 8) == 0
    assert first_tick_of_day(-3, 24, 8) == 0


@pytest.mark.parametrize(("ticks_per_day", "start_hour"), CLOCKS)
def test_day_of_is_the_clocks_day_less_one(ticks_per_day, start_hour):
    for tick in range(ticks_per_day * 4 + 3):
        assert day_of(tick, ticks_per_day, start_hour) == \
            time_of_day(tick, ticks_per_day, start_hour).day - 1


@pytest.mark.parametrize(("ticks_per_day", "start_hour"), CLOCKS)
def test_days_never_go_back_and_never_skip(ticks_per_day, start_hour):
    days = [day_of(t, ticks_per_day, start_hour) for t in range(ticks_per_day * 5)]
    assert days[0] == 0
    assert all(b - a in (0, 1) for a, b in zip(days, days[1:], strict=False))


@pytest.mark.parametrize(("ticks_per_day", "start_hour"), CLOCKS)
def test_the_first_tick_of_a_day_is_the_first_at_or_after_its_midnight(ticks_per_day,
                                                                        start_hour):
    for day in range(1, 6):
        first = first_tick_of_day(day, ticks_per_day, start_hour)
        assert day_of(first, ticks_per_day, start_hour) == day
        assert day_of(first - 1, ticks_per_day, start_hour) == day - 1
        # Its time is less than one tick past midnight.
        when = time_of_day(first, ticks_per_day, start_hour)
        assert (when.hour * 60 + when.minute) * ticks_per_day < 24 * 60


@pytest.mark.parametrize(("ticks_per_day", "start_hour"), CLOCKS)
def test_the_first_day_is_as_long_as_the_hours_left_before_midnight(ticks_per_day,
                                                                   start_hour):
    first = first_tick_of_day(1, ticks_per_day, start_hour)
    # Ticks 0..first-1 cover the hours from start_hour to midnight (to within a tick).
    hours_left = 24 - start_hour
    assert abs(first - hours_left * ticks_per_day / 24) <= 1
    later = first_tick_of_day(2, ticks_per_day, start_hour) - first
    assert abs(later - ticks_per_day) <= 1


def test_bad_clocks_are_refused_with_what_was_given():
    with pytest.raises(ValueError, match="start_hour 24"):
        day_of(3, 24, 24)
    with pytest.raises(ValueError, match="ticks_per_day 0"):
        day_of(3, 0, 8)
