"""World time: which hour of the day a tick falls on, and what to call it.

A tick is one step of the world. `ticks_per_day` of them make a day, and a new
world starts at `start_hour`, both from settings.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimeOfDay:
    day: int
    """Day number, starting at 1."""
    hour: int
    minute: int

    @property
    def period(self) -> str:
        """night (22-5), morning (5-12), afternoon (12-17) or evening (17-22)."""
        hour = self.hour
        # Read from a table for the hours there are (every narration asks), worked out
        # for any other hour as the table was.
        return _PERIOD_OF_HOUR[hour] if 0 <= hour < 24 else _period(hour)

    @property
    def is_night(self) -> bool:
        return self.period == "night"

    def __str__(self) -> str:
        return f"day {self.day}, {self.hour:02d}:{self.minute:02d} ({self.period})"


def _period(hour: int) -> str:
    if 5 <= hour < 12:
        return "morning"
    if 12 <= hour < 17:
        return "afternoon"
    if 17 <= hour < 22:
        return "evening"
    return "night"


_PERIOD_OF_HOUR = tuple(_period(hour) for hour in range(24))


def time_of_day(tick: int, ticks_per_day: int, start_hour: int) -> TimeOfDay:
    if tick < 0 or ticks_per_day < 1 or not 0 <= start_hour < 24:
        raise ValueError(
            f"bad clock: tick {tick}, ticks_per_day {ticks_per_day}, start_hour {start_hour}"
        )
    minutes = start_hour * 60 + tick * 24 * 60 // ticks_per_day
    day, minute_of_day = divmod(minutes, 24 * 60)
    hour, minute = divmod(minute_of_day, 60)
    return TimeOfDay(day + 1, hour, minute)


def day_of(tick: int, ticks_per_day: int, start_hour: int) -> int:
    """The clock's day a tick falls in, counted from 0: days turn at midnight, so a
    world that starts at 08:00 ends its first day 16 hours in, not 24."""
    return time_of_day(tick, ticks_per_day, start_hour).day - 1


def first_tick_of_day(day: int, ticks_per_day: int, start_hour: int) -> int:
    """The first tick that falls in the clock's `day` (0: the world's first tick)."""
    if day <= 0:
        return 0
    # minutes(t) = start_hour*60 + t*1440 // ticks_per_day must reach day*1440.
    tick = max(0, ((day * 24 - start_hour) * 60 * ticks_per_day + 1439) // 1440 - 1)
    while day_of(tick, ticks_per_day, start_hour) < day:
        tick += 1
    return tick


def night_left(tick: int, ticks_per_day: int, start_hour: int) -> int:
    """Ticks from `tick` to the first one of the morning when `tick` falls at night (a
    sleeper wakes in the morning), else 0; at most a day's ticks."""
    ahead = 0
    while time_of_day(tick + ahead, ticks_per_day, start_hour).is_night:
        ahead += 1
        if ahead >= ticks_per_day:
            break
    return ahead
