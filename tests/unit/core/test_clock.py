"""World time: which day, hour and period a tick falls on."""

from __future__ import annotations

import dataclasses

import pytest

from core.clock import TimeOfDay, time_of_day


def test_tick_zero_is_the_start_hour_of_day_one() -> None:
    when = time_of_day(0, 24, 8)
    assert when == TimeOfDay(day=1, hour=8, minute=0)
    assert when.period == "morning"
    assert not when.is_night


@pytest.mark.parametrize("start_hour", [0, 5, 13, 23])
def test_tick_zero_follows_any_start_hour(start_hour: int) -> None:
    assert time_of_day(0, 24, start_hour) == TimeOfDay(1, start_hour, 0)


@pytest.mark.parametrize(
    ("ticks_per_day", "tick", "expected"),
    [
        (24, 1, (1, 9, 0)),  # one hour per tick
        (24, 4, (1, 12, 0)),
        (48, 1, (1, 8, 30)),  # half an hour per tick
        (48, 3, (1, 9, 30)),
        (12, 1, (1, 10, 0)),  # two hours per tick
        (4, 1, (1, 14, 0)),  # six hours per tick
        (96, 1, (1, 8, 15)),
    ],
)
def test_hours_advance_by_a_day_over_ticks_per_day(
    ticks_per_day: int, tick: int, expected: tuple[int, int, int]
) -> None:
    assert time_of_day(tick, ticks_per_day, 8) == TimeOfDay(*expected)


def test_one_step_per_tick_over_a_whole_day() -> None:
    hours = [time_of_day(t, 24, 0).hour for t in range(24)]
    assert hours == list(range(24))
    assert {time_of_day(t, 24, 0).day for t in range(24)} == {1}


def test_day_wraps_at_midnight() -> None:
    assert time_of_day(15, 24, 8) == TimeOfDay(1, 23, 0)
    assert time_of_day(16, 24, 8) == TimeOfDay(2, 0, 0)
    assert time_of_day(24, 24, 8) == TimeOfDay(2, 8, 0)
    assert time_of_day(24 * 9 + 3, 24, 8) == TimeOfDay(10, 11, 0)


def test_day_wraps_when_starting_at_midnight() -> None:
    assert time_of_day(23, 24, 0) == TimeOfDay(1, 23, 0)
    assert time_of_day(24, 24, 0) == TimeOfDay(2, 0, 0)


def test_minutes_when_ticks_do_not_divide_the_day_evenly() -> None:
    # 1440 / 7 = 205.71... minutes per tick; each tick's time is floored from the start,
    # so the error never builds up over a day.
    assert time_of_day(1, 7, 8) == TimeOfDay(1, 11, 25)  # 480 + 205 = 685
    assert time_of_day(2, 7, 8) == TimeOfDay(1, 14, 51)  # 480 + 411 = 891
    assert time_of_day(3, 7, 8) == TimeOfDay(1, 18, 17)  # 480 + 617 = 1097
    assert time_of_day(6, 7, 8) == TimeOfDay(2, 4, 34)  # 480 + 1234 = 1714 = 1440 + 274
    assert time_of_day(7, 7, 8) == TimeOfDay(2, 8, 0)  # exactly one day later
    assert time_of_day(70, 7, 8) == TimeOfDay(11, 8, 0)


def test_minutes_are_never_out_of_range() -> None:
    for ticks_per_day in (5, 7, 11, 13, 25, 1000, 1441):
        for tick in range(0, 3 * ticks_per_day, max(1, ticks_per_day // 13)):
            when = time_of_day(tick, ticks_per_day, 17)
            assert 0 <= when.hour < 24
            assert 0 <= when.minute < 60
            assert when.day >= 1


def test_time_never_runs_backwards() -> None:
    previous = (0, 0, 0)
    for tick in range(0, 50):
        when = time_of_day(tick, 7, 21)
        now = (when.day, when.hour, when.minute)
        assert now > previous
        previous = now


@pytest.mark.parametrize(
    ("hour", "minute", "period"),
    [
        (0, 0, "night"),
        (4, 59, "night"),
        (5, 0, "morning"),
        (11, 59, "morning"),
        (12, 0, "afternoon"),
        (16, 59, "afternoon"),
        (17, 0, "evening"),
        (21, 59, "evening"),
        (22, 0, "night"),
        (23, 59, "night"),
    ],
)
def test_periods_at_their_boundaries(hour: int, minute: int, period: str) -> None:
    when = TimeOfDay(1, hour, minute)
    assert when.period == period
    assert when.is_night is (period == "night")


def test_periods_through_a_day_of_ticks() -> None:
    periods = [time_of_day(t, 24, 0).period for t in range(24)]
    assert periods == (
        ["night"] * 5 + ["morning"] * 7 + ["afternoon"] * 5 + ["evening"] * 5 + ["night"] * 2
    )


def test_is_night_only_at_night() -> None:
    nights = [h for h in range(24) if TimeOfDay(1, h, 0).is_night]
    assert nights == [0, 1, 2, 3, 4, 22, 23]


@pytest.mark.parametrize(
    ("when", "text"),
    [
        (TimeOfDay(1, 8, 0), "day 1, 08:00 (morning)"),
        (TimeOfDay(3, 5, 7), "day 3, 05:07 (morning)"),
        (TimeOfDay(12, 13, 45), "day 12, 13:45 (afternoon)"),
        (TimeOfDay(2, 0, 0), "day 2, 00:00 (night)"),
        (TimeOfDay(7, 19, 30), "day 7, 19:30 (evening)"),
    ],
)
def test_str_format(when: TimeOfDay, text: str) -> None:
    assert str(when) == text


def test_str_of_a_computed_time() -> None:
    assert str(time_of_day(0, 24, 8)) == "day 1, 08:00 (morning)"
    assert str(time_of_day(1, 7, 8)) == "day 1, 11:25 (morning)"


def test_time_of_day_is_frozen() -> None:
    when = TimeOfDay(1, 8, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        when.hour = 9  # type: ignore[misc]


@pytest.mark.parametrize(
    ("tick", "ticks_per_day", "start_hour"),
    [
        (-1, 24, 8),
        (0, 0, 8),
        (0, -24, 8),
        (0, 24, 24),
        (0, 24, -1),
        (5, 24, 100),
    ],
)
def test_bad_clock_raises(tick: int, ticks_per_day: int, start_hour: int) -> None:
    with pytest.raises(ValueError, match="bad clock"):
        time_of_day(tick, ticks_per_day, start_hour)


def test_bad_clock_message_names_the_values() -> None:
    with pytest.raises(ValueError) as info:
        time_of_day(-3, 24, 8)
    assert "-3" in str(info.value)


def test_edge_values_are_accepted() -> None:
    assert time_of_day(0, 1, 23) == TimeOfDay(1, 23, 0)
    assert time_of_day(1, 1, 23) == TimeOfDay(2, 23, 0)
