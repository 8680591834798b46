"""Observing: the raw facts a HealthSource reads, made into the Gardener's HealthFigures.

The source (storage.gardener_source.SqliteHealthSource in a real run) only reads; the
judgements live here, so they are the same whatever the facts come from: who counts
as alone, which span of ticks "the window" is, and that a figure never runs below 0
when the engine has already written part of the tick in progress.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, TypedDict

from config import HearthConfig
from core.clock import time_of_day
from core.gardener.health import AgentHealth, HealthFigures
from core.types import Position


class WorldFacts(Protocol):
    @property
    def tick(self) -> int:
        """The next tick to run."""
        ...

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    @property
    def weather(self) -> str: ...


class AgentFacts(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def x(self) -> int: ...

    @property
    def y(self) -> int: ...

    @property
    def sleeping(self) -> bool: ...


class HealthSource(Protocol):
    """The raw reads `observe` needs (storage.gardener_source.SqliteHealthSource)."""

    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside all see one state of the world."""
        ...

    def world(self) -> WorldFacts: ...

    def agents(self) -> Sequence[AgentFacts]: ...

    def last_social_ticks(self, since_tick: int = 0) -> dict[str, int]: ...

    def action_counts(self, since_tick: int,
                      until_tick: int | None = None) -> dict[str, tuple[int, int]]: ...

    def last_word_tick(self) -> int | None: ...

    def lasting_changes(self, since_tick: int, until_tick: int | None = None) -> int: ...

    def asleep_ticks(self, since_tick: int, now_tick: int) -> dict[str, int]: ...

    def gatherable_units_near(
        self, positions: Iterable[Position], radius: int, capacity: int,
        gatherable: Collection[str], *, regrow_ticks: int | None = None,
        tick: int | None = None,
    ) -> dict[Position, int]: ...

    def terrain_near(self, positions: Iterable[Position],
                     radius: int) -> dict[Position, tuple[str, ...]]: ...


class GatheringArgs(TypedDict):
    gatherable: frozenset[str]
    """Terrain kinds (their names in terrain.yaml) that yield something."""
    capacity: int
    regrow_ticks: int


class ObserveArgs(GatheringArgs):
    window: int
    look_radius: int
    sight: int
    alone_horizon: int | None
    clock: tuple[int, int] | None
    """(ticks_per_day, start_hour): to tell the part of the day the figures are for."""


def gathering_args(config: HearthConfig) -> GatheringArgs:
    """`observe`'s gathering arguments as the engine plays by them: the terrains with
    a `gather` in terrain.yaml, and settings.yaml's cell capacity and regrowth."""
    rules = config.settings.gathering
    return GatheringArgs(
        gatherable=frozenset(kind.value for kind, spec in config.terrain.terrains.items()
                             if spec.gather),
        capacity=rules.cell_capacity,
        regrow_ticks=rules.regrow_ticks,
    )


def observe_args(config: HearthConfig) -> ObserveArgs:
    """Every keyword argument of `observe` from the config: the Gardener's window and
    look radius, and "within sight" as far as an agent sees by day."""
    return ObserveArgs(
        window=config.settings.gardener.window_ticks,
        look_radius=config.settings.gardener.look_radius,
        sight=config.settings.vision.radius,
        # Past CRITICAL's line, how much longer someone was alone changes nothing.
        alone_horizon=config.settings.gardener.thresholds.alone_ticks[2],
        clock=(config.settings.time.ticks_per_day, config.settings.time.start_hour),
        **gathering_args(config),
    )


def observe(
    source: HealthSource,
    *,
    window: int,
    look_radius: int,
    sight: int,
    gatherable: Collection[str],
    capacity: int,
    regrow_ticks: int | None = None,
    alone_horizon: int | None = None,
    clock: tuple[int, int] | None = None,
) -> HealthFigures:
    """The world's health now, over the last `window` ticks (those before the world's
    next tick), all read in one snapshot.

    An agent is alone for 0 ticks while another stands within `sight` cells of it
    (Chebyshev, as agents see); otherwise for the ticks since its last social event,
    or since the world began. Units near an agent are counted within `look_radius`,
    with regrowth if `regrow_ticks` is given (as `gathering_args` gives it).
    With `alone_horizon`, only that many ticks of social history are read, and
    `ticks_alone` says at most that (enough for the triage, and a long history costs
    nothing more). Each agent's `ground` is the terrain within `sight` of it, and the
    figures carry the weather and, given the `clock` (ticks_per_day, start_hour), the
    part of the day: what words the Gardener writes there may name (fitting.py).
    """
    if window < 1:
        raise ValueError(f"window must be at least 1 tick, got {window}")
    if look_radius < 0 or sight < 0:
        raise ValueError(f"look_radius and sight must be 0 or more, got {look_radius} "
                         f"and {sight}")
    with source.snapshot():
        facts = source.world()
        now = facts.tick
        # A young world has fewer ticks behind it than the window: the figures look only
        # at the ticks that happened (an empty window at tick 0 says nothing is the same).
        window = min(window, now)
        since = now - window
        agents = sorted(source.agents(), key=lambda a: a.name)
        positions = {a.name: Position(a.x, a.y) for a in agents}
        social_since = 0 if alone_horizon is None else max(0, now - alone_horizon)
        social = source.last_social_ticks(social_since)
        counts = source.action_counts(since, now)
        asleep = source.asleep_ticks(since, now)
        near = source.gatherable_units_near(
            positions.values(), look_radius, capacity, gatherable,
            regrow_ticks=regrow_ticks, tick=now if regrow_ticks is not None else None)
        last_word = source.last_word_tick()
        changes = source.lasting_changes(since, now)
        ground = source.terrain_near(positions.values(), sight)
    company = set(_with_company(positions, sight))
    health = []
    for agent in agents:
        if agent.name in company:
            alone = 0
        else:
            alone = max(0, now - social.get(agent.name, social_since))
        actions, failures = counts.get(agent.name, (0, 0))
        health.append(AgentHealth(
            name=agent.name, position=positions[agent.name], ticks_alone=alone,
            actions=actions, failures=failures,
            resources_near=near.get(positions[agent.name], 0),
            ticks_asleep=min(window, asleep.get(agent.name, 0)),
            ground=ground.get(positions[agent.name], ()),
        ))
    quiet = now if last_word is None else max(0, now - last_word)
    period = time_of_day(now, *clock).period if clock is not None else ""
    return HealthFigures(tick=now, window=window, agents=tuple(health),
                         ticks_since_conversation=quiet, changes=changes,
                         weather=str(facts.weather), period=period)


def _with_company(positions: dict[str, Position], sight: int) -> Iterator[str]:
    """The agents with another agent within `sight` cells (Chebyshev).

    Agents are sorted into squares `sight` cells wide, so each compares itself only
    with those in its own and the eight squares around (a thousand agents: thousands
    of comparisons, not a million).
    """
    side = max(1, sight)
    squares: dict[tuple[int, int], list[tuple[str, Position]]] = {}
    for name, pos in positions.items():
        squares.setdefault((pos.x // side, pos.y // side), []).append((name, pos))
    for (sx, sy), members in squares.items():
        for name, pos in members:
            if any(other != name and pos.chebyshev(there) <= sight
                   for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                   for other, there in squares.get((sx + dx, sy + dy), ())):
                yield name
