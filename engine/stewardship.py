"""The engine's side of the Gardener: judging its requests, applying them, and what
agents perceive of them afterwards.

The Gardener is another process; all it can do is leave requests in the database.
At the start of every tick (`engine.phases.gardener.GardenerPhase`) the engine reads
the pending ones and judges each with the domain's guardrails (`core.gardener.judge`)
against everything applied before, so the limits hold whatever was written. An
accepted request changes the world only through the world's own services (the
weather, the gathering ledger) or leaves a notice: a happening, or a landmark made
to stand out, that agents within its radius perceive for a few ticks. Nothing here
can reach an agent's position, belongings, memory, talk or files.

Notices live in memory and in the event log (each applied intervention is an event
of category "gardener" that says until when it is perceived), so a restarted engine
finds the ones still running in the events table.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.events import GardenerInterventionEvent, GardenerRefusedEvent
from core.gardener import (
    Applied,
    Caps,
    Intervention,
    Level,
    NoIntervention,
    RevealLandmark,
    WorldHappening,
    judge,
)
from core.gardener.interventions import InvalidIntervention, from_params
from core.landmarks import Landmark
from core.perception import Perception, SeenLandmark
from core.types import Position

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Notice:
    """Something agents within `radius` of `position` perceive until `until_tick`."""

    position: Position
    radius: int
    until_tick: int
    text: str | None = None
    landmark: Landmark | None = None

    def reaches(self, spot: Position) -> bool:
        return max(abs(spot.x - self.position.x), abs(spot.y - self.position.y)) <= self.radius


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one request (the storage repository's RequestOutcome, as values)."""

    request: int
    applied: bool
    reason: str
    position: Position | None


class Stewardship:
    """The interventions applied so far, the notices running, and the judging of new
    requests. One per engine; used on the engine's thread only."""

    def __init__(self, caps: Caps, happening_ticks: int) -> None:
        self.caps = caps
        self.happening_ticks = happening_ticks
        self.applied: list[Applied] = []
        self.notices: list[Notice] = []

    # ------------------------------------------------------------------ loading

    def remember(self, applied: Iterable[Applied], events: Iterable[dict[str, object]],
                 landmarks: Sequence[Landmark], tick: int) -> None:
        """Take up what was applied before (for the caps) and the notices still
        running at `tick` (from their events' data)."""
        self.applied = list(applied)
        by_name = {mark.name: mark for mark in landmarks}
        self.notices = []
        for data in events:
            until, spot = data.get("until_tick"), data.get("position")
            radius = data.get("radius")
            if not isinstance(until, int) or until <= tick or not isinstance(spot, dict):
                continue
            if not isinstance(radius, int):
                continue
            position = Position(int(spot["x"]), int(spot["y"]))
            name = data.get("landmark")
            mark = by_name.get(name) if isinstance(name, str) else None
            text = data.get("text") if data.get("kind") == WorldHappening.kind else None
            self.notices.append(Notice(position, radius, until,
                                       text if isinstance(text, str) else None, mark))

    # ------------------------------------------------------------------ judging

    def read(self, kind: str, params: str, level: str | None,
             size: tuple[int, int]) -> tuple[Intervention | None, Level | None, str]:
        """A stored request as an intervention and its cycle's level, or the reason
        it cannot be one."""
        if level is None:
            return None, None, "its cycle is not in the database"
        if level not in Level.__members__:
            return None, None, f"its cycle's level {level!r} is not a level"
        try:
            raw = json.loads(params)
        except (TypeError, ValueError):
            return None, None, "its parameters are not JSON"
        try:
            return from_params(kind, raw, size), Level[level], ""
        except InvalidIntervention as exc:
            return None, None, str(exc)

    def decide(self, request: int, cycle: int, kind: str, params: str, level: str | None,
               *, tick: int, size: tuple[int, int], landmarks: Sequence[Landmark],
               ) -> tuple[Intervention | None, str]:
        """The intervention to apply for this request, or None and why not."""
        intervention, rank, why = self.read(kind, params, level, size)
        if intervention is None or rank is None:
            return None, why
        verdict = judge(intervention, cycle=cycle, level=rank, tick=tick, applied=self.applied,
                        landmarks={m.name: m.position for m in landmarks}, caps=self.caps)
        if not verdict.accepted:
            return None, verdict.reason
        return intervention, verdict.reason

    def note_applied(self, tick: int, cycle: int, intervention: Intervention) -> None:
        if isinstance(intervention, NoIntervention):
            return
        spot = getattr(intervention, "position", None)
        self.applied.append(Applied(tick, cycle, intervention.kind, spot))

    # ------------------------------------------------------------------ perceiving

    def perceive(self, perception: Perception, tick: int) -> Perception:
        """`perception` with the notices that reach the agent: happenings as lines it
        notices, revealed landmarks among those it sees (as if on the horizon)."""
        live = [n for n in self.notices if n.until_tick > tick]
        if len(live) != len(self.notices):
            self.notices = live
        here = perception.position
        told: list[str] = []
        seen = list(perception.landmarks)
        names = {m.name for m in seen}
        for notice in live:
            if not notice.reaches(here):
                continue
            if notice.text is not None:
                told.append(notice.text)
            mark = notice.landmark
            if mark is not None:
                distance = max(abs(mark.position.x - here.x), abs(mark.position.y - here.y))
                direction = here.direction_to(mark.position)
                if mark.name not in names:  # beyond the horizon: seen now, as if on it
                    names.add(mark.name)
                    seen.append(SeenLandmark(mark.name, mark.kind, mark.position, direction,
                                             distance))
                told.append(f"{mark.name} catches your eye ({direction}, {distance} cells "
                            "away)")
        if not told:
            return perception
        return dataclasses.replace(perception, landmarks=tuple(seen),
                                   notices=perception.notices + tuple(told))


def intervention_event(tick: int, request: int, cycle: int, intervention: Intervention,
                       text: str, until: int | None) -> GardenerInterventionEvent:
    spot = getattr(intervention, "position", None)
    radius = getattr(intervention, "radius", None)
    landmark = intervention.landmark if isinstance(intervention, RevealLandmark) else None
    return GardenerInterventionEvent(tick, request, cycle, intervention.kind, text, spot,
                                     radius, landmark, until)


def refused_event(tick: int, request: int, cycle: int, kind: str,
                  reason: str) -> GardenerRefusedEvent:
    shown = kind if isinstance(kind, str) else repr(kind)
    return GardenerRefusedEvent(tick, request, cycle, shown[:60], reason[:300])

