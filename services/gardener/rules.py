"""The Gardener's own rules: how it decides when no model is asked (offline, or the
model's budget spent). Deterministic: the same triage and figures, the same decision.

Respect for emergence comes first: a healthy world, or one only worth watching, gets
nothing. Otherwise the lightest touch that answers each reason, worst first:

- an agent alone for long: the landmark nearest the others (where company is likely)
  is made to stand out to it, a direction it may choose to take, or not;
- little left to gather near an agent, or its actions mostly failing: the land around
  it grows back;
- a quiet or unchanging world: a happening where most agents are, something to
  notice and perhaps talk about;
- many agents in trouble at once raises the level, so more of them are answered.

Among agents equally in trouble, the one farthest from anyone is answered first.

Never more than the level allows, and never two in one area (the engine would refuse
the second anyway).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from core.gardener import (
    Caps,
    HealthFigures,
    Intervention,
    Level,
    Regrowth,
    RevealLandmark,
    Triage,
    WorldHappening,
)
from core.types import Position
from services.gardener.decision import Decision

HAPPENINGS = (
    "A flock of starlings wheels overhead, chattering loudly, then streams away out of "
    "sight.",
    "A warm wind blows through, carrying a sweet smell from somewhere far off.",
    "A fox trots past, stops to look around, and slips away.",
    "A far-off rumble rolls past and fades, and all is quiet again.",
    "Somewhere out of sight, a bird calls three bright notes, then falls silent.",
)
"""What the rules may make happen where most agents are. The rules know nothing of that
place's ground, weather or hour, so each fits any of them: no trees on a shore, no
rainbow at night (tests/unit/gardener hold them to it)."""
REVEAL_RADIUS = 6
"""Cells around the lonely agent that a revealed landmark reaches: it, not everyone."""
HAPPENING_RADIUS = 10


def _distance(a: Position, b: Position) -> int:
    return max(abs(a.x - b.x), abs(a.y - b.y))


def _nearest(spot: Position, places: Sequence[tuple[str, Position]]) -> tuple[str, Position]:
    return min(places, key=lambda p: (_distance(spot, p[1]), p[0]))


GATHERING_CELLS = 20
"""Where most agents are: the agent with the most others within this many cells."""
CELLS_AT_ONCE = 4_000_000
"""Distances worked out in one array (a block of rows against every agent)."""


class _Crowd:
    """Every agent's position as arrays, so questions about all of them (who is
    farthest from anyone, where most of them are) cost array passes rather than a
    Python loop over every pair: a world of thousands in trouble at once is exactly
    when the Gardener must not take long."""

    def __init__(self, figures: HealthFigures) -> None:
        self.agents = figures.agents
        self.index = {a.name: i for i, a in enumerate(self.agents)}
        count = len(self.agents)
        self.xs = np.fromiter((a.position.x for a in self.agents), np.int64, count)
        self.ys = np.fromiter((a.position.y for a in self.agents), np.int64, count)

    def _blocks(self, rows: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rows, their distances to every agent), a block at a time."""
        step = max(1, CELLS_AT_ONCE // max(1, len(self.xs)))
        for start in range(0, len(rows), step):
            block = rows[start:start + step]
            yield block, np.maximum(np.abs(self.xs[block, None] - self.xs[None, :]),
                                    np.abs(self.ys[block, None] - self.ys[None, :]))

    def isolation(self, names: Iterable[str]) -> dict[str, int]:
        """Each named agent's distance to the nearest other one (0 if it is alone in
        the world); names not among the agents are left out."""
        rows = np.array(sorted({self.index[n] for n in names if n in self.index}), np.int64)
        found: dict[str, int] = {}
        if len(self.xs) < 2:
            return {self.agents[int(i)].name: 0 for i in rows}
        for block, far in self._blocks(rows):
            far[np.arange(len(block)), block] = np.iinfo(np.int64).max  # not itself
            for i, nearest in zip(block.tolist(), far.min(axis=1).tolist(), strict=True):
                found[self.agents[i].name] = int(nearest)
        return found

    def nearest_other(self, name: str) -> Position:
        """The nearest other agent's position (the first in the figures' order among
        equals), or the agent's own when it is alone in the world."""
        i = self.index[name]
        if len(self.xs) < 2:
            return self.agents[i].position
        far = np.maximum(np.abs(self.xs - self.xs[i]), np.abs(self.ys - self.ys[i]))
        far[i] = np.iinfo(np.int64).max
        return self.agents[int(np.argmin(far))].position

    def gathering_spot(self) -> Position:
        """The position of the agent with the most agents (itself included) within
        `GATHERING_CELLS`; among equals, the one whose name sorts last."""
        counts = np.empty(len(self.xs), np.int64)
        for block, far in self._blocks(np.arange(len(self.xs))):
            counts[block] = (far <= GATHERING_CELLS).sum(axis=1)
        most = counts.max()
        best = max((self.agents[int(i)].name, int(i)) for i in np.flatnonzero(counts == most))
        return self.agents[best[1]].position


def gathering_spot(figures: HealthFigures) -> Position:
    """Where most agents are (the rules put a happening there): see `_Crowd`."""
    return _Crowd(figures).gathering_spot()


def decide_by_rules(triage: Triage, figures: HealthFigures,
                    landmarks: Sequence[tuple[str, Position]], caps: Caps) -> Decision:
    if triage.level <= Level.WATCH or not figures.agents:
        return Decision((), f"The world is {triage.level}: the Gardener lets it be.")
    allowed = caps.per_cycle[int(triage.level)]
    chosen: list[Intervention] = []
    because: list[str] = []

    def take(change: Intervention, reason: str) -> None:
        spot = getattr(change, "position", None)
        if len(chosen) >= allowed:
            return
        if spot is not None and any(
                _distance(spot, getattr(c, "position", spot)) <= caps.area_cells
                for c in chosen if getattr(c, "position", None) is not None):
            return
        chosen.append(change)
        because.append(reason)

    crowd = _Crowd(figures)
    apart = crowd.isolation(r.agent for r in triage.reasons if r.agent)
    ordered = sorted(triage.reasons,  # the most stranded first among equals
                     key=lambda r: (-r.level, r.measure, -apart.get(r.agent or "", 0),
                                    r.agent or ""))
    for reason in ordered:
        if len(chosen) >= allowed:
            break
        if reason.level < Level.WARNING:
            continue
        at = crowd.index.get(reason.agent) if reason.agent else None
        health = figures.agents[at] if at is not None else None
        if reason.measure == "alone" and health is not None and landmarks:
            name, _ = _nearest(crowd.nearest_other(health.name), landmarks)
            take(RevealLandmark(name, health.position, min(REVEAL_RADIUS, caps.reveal_radius)),
                 f"{reason.text}: {name}, near the others, is made to stand out to them")
        elif reason.measure in ("resources", "failing") and health is not None:
            take(Regrowth(health.position, caps.regrowth_radius),
                 f"{reason.text}: the land around them grows back")
        elif reason.measure in ("quiet", "sameness"):
            text = HAPPENINGS[figures.tick % len(HAPPENINGS)][: caps.event_text_chars]
            take(WorldHappening(crowd.gathering_spot(),
                                min(HAPPENING_RADIUS, caps.event_radius), text),
                 f"{reason.text}: something happens where most of them are")
        # "crowd" raises the level (more interventions allowed); the agents' own reasons
        # say what each needs.
    if not chosen:
        return Decision((), f"The world is {triage.level}, but no gentle change answers it.")
    return Decision(tuple(chosen), "; ".join(because))
