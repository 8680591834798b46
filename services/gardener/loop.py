"""The Gardener as a process: a cycle each time the world has moved on enough.

It polls the world's tick through its read-only view (cheap: one small query) and
runs a cycle when `every_ticks` have passed since the last one, or `every_minutes`,
whichever comes first; `once` runs one cycle now and stops. It never waits on the
engine and the engine never waits on it: the only thing they share is the database,
where the Gardener's writes are one short transaction per cycle.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from services.gardener.cycle import CycleReport


@dataclass(frozen=True, slots=True)
class Schedule:
    every_ticks: int
    every_minutes: float | None
    poll_seconds: float


class NothingToTend(RuntimeError):
    """A world with no agents: there is no one whose world could need tending."""


async def keep_gardening(
    current_tick: Callable[[], int],
    cycle: Callable[[], Awaitable[CycleReport | None]],
    schedule: Schedule,
    *,
    once: bool,
    report: Callable[[CycleReport], None],
    stop: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> int:
    """Run cycles until `stop()` says so (or one, if `once`); the number run. A cycle
    that gives None could not be run (the database busy, say): it is tried again at
    the next poll, and does not count."""
    done = 0
    last_tick: int | None = None
    last_time = clock()
    while not stop():
        tick, now = current_tick(), clock()
        due = (last_tick is None or tick - last_tick >= schedule.every_ticks
               or (schedule.every_minutes is not None
                   and now - last_time >= schedule.every_minutes * 60))
        if due:
            made = await cycle()
            if made is not None:
                report(made)
                done += 1
                last_tick, last_time = tick, now
                if once:
                    break
        await sleep(schedule.poll_seconds)
    return done
