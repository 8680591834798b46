"""Guardrails: how much the Gardener may change, judged where the change is made.

The engine judges every stored request with `judge` before applying it, so the limits
hold whatever the Gardener (or a model, or anyone with the database) wrote:

- a cycle gets at most `per_cycle[level]` interventions (1, 1, 2, 3 for HEALTHY, WATCH,
  WARNING, CRITICAL), the level being the cycle's deterministic triage;
- the weather changes at most once every `weather_every_ticks`, world-wide;
- happenings, regrowth and revealed landmarks are local: each has a largest radius, and
  an area (cells within `area_cells` of one another) gets at most one of them every
  `area_every_ticks`;
- a happening's text has a length limit; a revealed landmark must exist.

"none" is always accepted and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.gardener.interventions import (
    Intervention,
    NoIntervention,
    Regrowth,
    RevealLandmark,
    WeatherChange,
    WorldHappening,
)
from core.gardener.triage import Level
from core.types import Position


@dataclass(frozen=True, slots=True)
class Caps:
    per_cycle: tuple[int, int, int, int] = (1, 1, 2, 3)
    """Interventions a cycle may have applied, by level (HEALTHY..CRITICAL)."""
    weather_every_ticks: int = 24
    area_cells: int = 40
    area_every_ticks: int = 48
    event_radius: int = 12
    event_text_chars: int = 280
    regrowth_radius: int = 5
    reveal_radius: int = 60

    def __post_init__(self) -> None:
        if len(self.per_cycle) != 4 or any(n < 0 for n in self.per_cycle):
            raise ValueError(f"per_cycle needs four counts of 0 or more, got {self.per_cycle}")
        numbers = (self.weather_every_ticks, self.area_cells, self.area_every_ticks,
                   self.event_radius, self.event_text_chars, self.regrowth_radius,
                   self.reveal_radius)
        if any(n < 0 for n in numbers):
            raise ValueError("every cap must be 0 or more")


@dataclass(frozen=True, slots=True)
class Applied:
    """An intervention the engine applied (what later judgements count against)."""

    tick: int
    cycle: int
    kind: str
    position: Position | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    accepted: bool
    reason: str

    @staticmethod
    def yes() -> Verdict:
        return Verdict(True, "within the guardrails")

    @staticmethod
    def no(reason: str) -> Verdict:
        return Verdict(False, reason)


def _near(a: Position, b: Position, cells: int) -> bool:
    return max(abs(a.x - b.x), abs(a.y - b.y)) <= cells


def judge(
    intervention: Intervention,
    *,
    cycle: int,
    level: Level,
    tick: int,
    applied: Sequence[Applied],
    landmarks: Mapping[str, Position],
    caps: Caps,
) -> Verdict:
    """May `intervention`, asked for by cycle `cycle` at triage `level`, be applied at
    `tick`, given what was `applied` before? Pure: the same inputs, the same verdict."""
    if isinstance(intervention, NoIntervention):
        return Verdict.yes()
    allowed = caps.per_cycle[int(level)]
    used = sum(1 for a in applied if a.cycle == cycle and a.kind != NoIntervention.kind)
    if used >= allowed:
        return Verdict.no(f"a {level} cycle may have {allowed} intervention"
                          f"{'s' if allowed != 1 else ''}, and this one has had {used}")
    if isinstance(intervention, WeatherChange):
        last = max((a.tick for a in applied if a.kind == WeatherChange.kind), default=None)
        if last is not None and tick - last < caps.weather_every_ticks:
            return Verdict.no(f"the weather was changed at tick {last}; the next change may "
                              f"come at tick {last + caps.weather_every_ticks}")
        return Verdict.yes()
    if isinstance(intervention, WorldHappening):
        if intervention.radius > caps.event_radius:
            return Verdict.no(f"an event reaches at most {caps.event_radius} cells, "
                              f"not {intervention.radius}")
        if len(intervention.text) > caps.event_text_chars:
            return Verdict.no(f"an event is told in at most {caps.event_text_chars} "
                              f"characters, not {len(intervention.text)}")
    elif isinstance(intervention, Regrowth):
        if intervention.radius > caps.regrowth_radius:
            return Verdict.no(f"regrowth covers at most {caps.regrowth_radius} cells around "
                              f"a spot, not {intervention.radius}")
    elif isinstance(intervention, RevealLandmark):
        if intervention.landmark not in landmarks:
            return Verdict.no(f"there is no landmark called {intervention.landmark!r}")
        if intervention.radius > caps.reveal_radius:
            return Verdict.no(f"a landmark is revealed to at most {caps.reveal_radius} cells "
                              f"around a spot, not {intervention.radius}")
    spot = intervention.position
    for before in applied:
        if (before.position is not None and before.kind != WeatherChange.kind
                and tick - before.tick < caps.area_every_ticks
                and _near(before.position, spot, caps.area_cells)):
            return Verdict.no(
                f"this area had an intervention ({before.kind}) at tick {before.tick}; "
                f"the next may come at tick {before.tick + caps.area_every_ticks}")
    return Verdict.yes()
