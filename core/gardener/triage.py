"""Triage: health figures sorted into a level, with the reasons, by fixed thresholds.

Deterministic and free: it runs every cycle, before any language model is asked, and
its level (never the model's) decides how many interventions a cycle may ask for.
Each measure gives a level on its own; the world's level is the highest of them, and
when many agents are in trouble at once the world is CRITICAL whatever each says.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from core.gardener.health import AgentHealth, HealthFigures


class Level(IntEnum):
    HEALTHY = 0
    WATCH = 1
    WARNING = 2
    CRITICAL = 3

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where each measure crosses into WATCH, WARNING (and, for being alone, CRITICAL).
    Ticks are world ticks (24 make a day by default)."""

    alone_ticks: tuple[int, int, int] = (48, 120, 240)
    """Alone this long: WATCH, WARNING, CRITICAL."""
    failure_share: tuple[float, float] = (0.5, 0.8)
    """Share of an agent's actions that failed: WATCH, WARNING..."""
    failure_min_actions: int = 6
    """...counted only once the agent took at least this many actions."""
    quiet_ticks: tuple[int, int] = (72, 168)
    """No word said in any conversation this long: WATCH, WARNING."""
    sameness: tuple[float, float] = (0.9, 1.0)
    """`HealthFigures.sameness` at least this: WATCH, WARNING."""
    resources_near: tuple[int, int] = (4, 0)
    """Gatherable units near an agent at most this: WATCH, WARNING."""
    asleep_share: float = 0.8
    """Asleep for more than this share of the window: WATCH."""
    crowd_share: float = 0.5
    """At least this share of the agents (two or more) at WARNING: CRITICAL."""

    def __post_init__(self) -> None:
        a, b, c = self.alone_ticks
        if not 0 < a <= b <= c:
            raise ValueError(f"alone_ticks must rise: 0 < watch <= warning <= critical, "
                             f"got {self.alone_ticks}")
        if not 0 <= self.failure_share[0] <= self.failure_share[1] <= 1:
            raise ValueError(f"failure_share must rise within 0..1, got {self.failure_share}")
        if not 0 < self.quiet_ticks[0] <= self.quiet_ticks[1]:
            raise ValueError(f"quiet_ticks must rise, got {self.quiet_ticks}")
        if not 0 <= self.sameness[0] <= self.sameness[1] <= 1:
            raise ValueError(f"sameness must rise within 0..1, got {self.sameness}")
        if not self.resources_near[0] >= self.resources_near[1] >= 0:
            raise ValueError(f"resources_near must fall: watch >= warning >= 0, "
                             f"got {self.resources_near}")
        if not 0 < self.asleep_share <= 1 or not 0 < self.crowd_share <= 1:
            raise ValueError("asleep_share and crowd_share must be within (0, 1]")


@dataclass(frozen=True, slots=True)
class Reason:
    """Why the level is what it is: one measure over its line."""

    level: Level
    measure: str
    """alone, failing, quiet, sameness, resources, sleep or crowd."""
    text: str
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Triage:
    level: Level
    reasons: tuple[Reason, ...]

    def worst_agents(self, measure: str) -> tuple[str, ...]:
        """The agents named by `measure`'s reasons, worst level first (then by name)."""
        named = [r for r in self.reasons if r.measure == measure and r.agent is not None]
        named.sort(key=lambda r: (-r.level, r.agent))
        return tuple(r.agent for r in named if r.agent is not None)


def _rising(value: float, lines: tuple[float, ...]) -> Level:
    """The level of a measure that is worse the higher it is."""
    level = Level.HEALTHY
    for step, line in enumerate(lines, start=1):
        if value >= line:
            level = Level(step)
    return level


def _agent_reasons(health: AgentHealth, figures: HealthFigures,
                   rules: Thresholds) -> list[Reason]:
    name = health.name
    reasons: list[Reason] = []
    alone = _rising(health.ticks_alone, rules.alone_ticks)
    if alone:
        reasons.append(Reason(alone, "alone", f"{name} has seen no one for "
                              f"{health.ticks_alone} ticks", name))
    if health.actions >= rules.failure_min_actions:
        failing = _rising(health.failure_share, rules.failure_share)
        if failing:
            reasons.append(Reason(failing, "failing", f"{health.failures} of {name}'s "
                                  f"last {health.actions} actions failed", name))
    watch, warning = rules.resources_near
    if health.resources_near <= warning:
        reasons.append(Reason(Level.WARNING, "resources",
                              f"nothing left to gather near {name}", name))
    elif health.resources_near <= watch:
        reasons.append(Reason(Level.WATCH, "resources", f"only {health.resources_near} "
                              f"units left to gather near {name}", name))
    if figures.window > 0 and health.ticks_asleep / figures.window > rules.asleep_share:
        reasons.append(Reason(Level.WATCH, "sleep", f"{name} slept {health.ticks_asleep} "
                              f"of the last {figures.window} ticks", name))
    return reasons


def triage(figures: HealthFigures, rules: Thresholds) -> Triage:
    """The level of the world's health and every reason for it (HEALTHY, no reasons,
    when nothing crosses a line). The same figures always give the same triage."""
    reasons: list[Reason] = []
    in_trouble = 0
    for health in sorted(figures.agents, key=lambda h: h.name):
        mine = _agent_reasons(health, figures, rules)
        reasons.extend(mine)
        if any(r.level >= Level.WARNING for r in mine):
            in_trouble += 1
    if len(figures.agents) >= 2:
        quiet = _rising(figures.ticks_since_conversation, rules.quiet_ticks)
        if quiet:
            reasons.append(Reason(quiet, "quiet", "no one has spoken in a conversation for "
                                  f"{figures.ticks_since_conversation} ticks"))
    same = _rising(figures.sameness, rules.sameness)
    if same and figures.window > 0:
        reasons.append(Reason(same, "sameness", f"{figures.changes} lasting changes to the "
                              f"world in the last {figures.window} ticks"))
    count = len(figures.agents)
    if count >= 2 and in_trouble >= max(2, rules.crowd_share * count):
        reasons.append(Reason(Level.CRITICAL, "crowd",
                              f"{in_trouble} of {count} agents are in trouble at once"))
    level = max((r.level for r in reasons), default=Level.HEALTHY)
    return Triage(level, tuple(reasons))
