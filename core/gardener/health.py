"""Health figures: what the Gardener sees of the world, as plain numbers.

Hearth has no economy and no death, so health here is about the agents' lives as
they live them: company, whether what they try works, whether the world changes at
all, whether there is anything left to gather near them, and how they sleep. The
figures are made by storage from the database (read-only); nothing in them can be
used to reach into an agent.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.types import Position


@dataclass(frozen=True, slots=True)
class AgentHealth:
    """One agent, as the Gardener sees it over the last `HealthFigures.window` ticks."""

    name: str
    position: Position
    ticks_alone: int
    """Ticks since another agent was last within sight of this one (or since the
    world began, if never)."""
    actions: int
    """Actions taken in the window."""
    failures: int
    """Of them, the ones that failed."""
    resources_near: int
    """Units of gatherable material left within the Gardener's look radius."""
    ticks_asleep: int
    """Ticks of the window this agent spent asleep."""
    ground: tuple[str, ...] = ()
    """The kinds of terrain within this agent's sight (core.terrain.Terrain values,
    sorted): what words written for it may name (services/gardener/fitting.py)."""

    @property
    def failure_share(self) -> float:
        return self.failures / self.actions if self.actions else 0.0


@dataclass(frozen=True, slots=True)
class HealthFigures:
    """The world's health at one tick."""

    tick: int
    window: int
    """How many ticks back the per-agent counts and `changes` look."""
    agents: tuple[AgentHealth, ...]
    ticks_since_conversation: int
    """Ticks since any conversation had a word said in it (since the world began, if
    none ever did)."""
    changes: int
    """Lasting changes to the world in the window: things built, crafted, written,
    named, placed."""
    weather: str = ""
    """The weather now (a core.terrain.Weather value; "" when not read)."""
    period: str = ""
    """The part of the day now: morning, afternoon, evening or night ("" when not read)."""

    @property
    def sameness(self) -> float:
        """1.0 when nothing lasting changed in the window, falling towards 0 as
        changes come (one change a tick or more counts as a lively world)."""
        if self.window <= 0:
            return 0.0
        return max(0.0, 1.0 - self.changes / self.window)

    def agent(self, name: str) -> AgentHealth | None:
        for health in self.agents:
            if health.name == name:
                return health
        return None
