"""The Gardener's loop: when cycles run, with a fake clock and a fake sleep.

Nothing waits for real: each `sleep` moves the fake clock on by the seconds asked
for and the world on by the ticks its script says, so a test plays out hours of
polling in no time and knows exactly where every cycle ran.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.gardener import Level, Triage
from services.gardener.cycle import CycleReport
from services.gardener.decision import Decision
from services.gardener.loop import Schedule, keep_gardening


class World:
    """The fake world, clock and cycle: `ticks` says how far the world moves on during
    each sleep (0 after the script runs out); the loop stops after `polls` sleeps."""

    def __init__(self, *, tick: int = 0, ticks: Iterable[int] = (), polls: int = 20) -> None:
        self.tick = tick
        self.now = 1000.0
        self.steps = list(ticks)
        self.polls = polls
        self.sleeps: list[float] = []
        self.ran: list[tuple[float, int]] = []
        """(clock, tick) of every cycle run."""
        self.made: list[CycleReport] = []
        self.reported: list[CycleReport] = []

    def current_tick(self) -> int:
        return self.tick

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self.tick += self.steps.pop(0) if self.steps else 0

    def stop(self) -> bool:
        return len(self.sleeps) >= self.polls

    async def cycle(self) -> CycleReport:
        self.ran.append((self.now - 1000.0, self.tick))
        made = CycleReport(len(self.ran), self.tick, Triage(Level.HEALTHY, ()),
                           Decision((), "let it be"), "rules", None)
        self.made.append(made)
        return made

    async def run(self, schedule: Schedule, *, once: bool = False) -> int:
        return await keep_gardening(self.current_tick, self.cycle, schedule, once=once,
                                    report=self.reported.append, stop=self.stop,
                                    clock=self.clock, sleep=self.sleep)


async def test_the_first_poll_runs_a_cycle_at_once() -> None:
    world = World(tick=500, polls=1)

    done = await world.run(Schedule(every_ticks=24, every_minutes=10, poll_seconds=5))

    assert world.ran == [(0.0, 500)]  # before any sleep, at the world's tick then
    assert done == 1 and world.sleeps == [5]


async def test_the_next_cycle_waits_for_every_ticks_more_ticks() -> None:
    # 3 ticks a poll and no clock limit: cycles at 0, then at the first poll 10 or more
    # ticks on (12), and again 10 or more after that (24), however long it takes.
    world = World(ticks=[3] * 9, polls=9)

    done = await world.run(Schedule(every_ticks=10, every_minutes=None, poll_seconds=600))

    assert [tick for _, tick in world.ran] == [0, 12, 24]
    assert done == 3 and world.tick == 27
    assert world.sleeps == [600] * 9


async def test_a_paused_world_gets_a_cycle_every_every_minutes() -> None:
    world = World(tick=70, polls=13)  # the world does not move at all

    done = await world.run(Schedule(every_ticks=24, every_minutes=1, poll_seconds=20))

    assert world.ran == [(0.0, 70), (60.0, 70), (120.0, 70), (180.0, 70), (240.0, 70)]
    assert done == 5


async def test_whichever_comes_first_and_each_cycle_restarts_both_counts() -> None:
    # By time at 60 s (no tick moved); by ticks at 70 s (5 ticks in one poll), which
    # also restarts the clock: the next by time is at 130 s, not 120 s.
    world = World(ticks=[0] * 6 + [5], polls=14)

    done = await world.run(Schedule(every_ticks=5, every_minutes=1, poll_seconds=10))

    assert world.ran == [(0.0, 0), (60.0, 0), (70.0, 5), (130.0, 5)]
    assert done == 4


async def test_nothing_runs_between_the_marks() -> None:
    world = World(ticks=[1] * 30, polls=30)

    await world.run(Schedule(every_ticks=48, every_minutes=5, poll_seconds=9))

    # 9 s and 1 tick a poll: neither 48 ticks nor 300 s have passed since the first
    # cycle until the 34th poll, beyond this run's 30
    assert world.ran == [(0.0, 0)]


async def test_once_runs_exactly_one_cycle_and_does_not_wait() -> None:
    world = World(ticks=[100] * 5, polls=5)

    done = await world.run(Schedule(every_ticks=1, every_minutes=0.01, poll_seconds=1),
                           once=True)

    assert done == 1 and world.ran == [(0.0, 0)] and world.sleeps == []
    assert world.reported == world.made


async def test_stop_ends_the_loop_and_the_count_is_the_cycles_run() -> None:
    world = World(ticks=[2] * 50, polls=7)

    done = await world.run(Schedule(every_ticks=4, every_minutes=None, poll_seconds=1))

    assert len(world.sleeps) == 7  # stop() was asked before each poll, and held
    assert [tick for _, tick in world.ran] == [0, 4, 8, 12]
    assert done == len(world.ran) == 4


async def test_a_stop_already_asked_for_runs_nothing() -> None:
    world = World(polls=0)

    done = await world.run(Schedule(every_ticks=1, every_minutes=None, poll_seconds=1),
                           once=True)

    assert done == 0 and world.ran == [] and world.reported == []


async def test_report_gets_each_cycle_report_as_it_comes() -> None:
    world = World(ticks=[5] * 6, polls=7)

    done = await world.run(Schedule(every_ticks=10, every_minutes=None, poll_seconds=1))

    assert done == 4 and len(world.reported) == 4
    assert all(got is made for got, made in zip(world.reported, world.made, strict=True))
    assert [r.cycle for r in world.reported] == [1, 2, 3, 4]
    assert [r.tick for r in world.reported] == [0, 10, 20, 30]


async def test_a_cycle_that_could_not_run_is_tried_again_at_the_next_poll() -> None:
    world = World(tick=40, polls=3)
    failing = iter([True, False])

    async def sometimes() -> CycleReport | None:
        if next(failing, False):
            return None  # the database was busy, say
        return await world.cycle()

    done = await keep_gardening(world.current_tick, sometimes,
                                Schedule(every_ticks=24, every_minutes=None, poll_seconds=5),
                                once=False, report=world.reported.append, stop=world.stop,
                                clock=world.clock, sleep=world.sleep)

    assert done == 1 and world.reported == world.made
    assert world.ran == [(5.0, 40)]  # the second poll, not the next 24 ticks
