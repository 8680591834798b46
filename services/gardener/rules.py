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

from collections.abc import Sequence

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
    "A flock of starlings wheels overhead and settles in the trees, chattering loudly.",
    "A warm wind carries the smell of blossom from somewhere nearby.",
    "A fox trots past, stops to look around, and slips away into the undergrowth.",
    "Bright mushrooms have sprung up overnight in a ring on the ground.",
    "A rainbow stands over the land for a while, then fades.",
)
REVEAL_RADIUS = 6
"""Cells around the lonely agent that a revealed landmark reaches: it, not everyone."""
HAPPENING_RADIUS = 10


def _distance(a: Position, b: Position) -> int:
    return max(abs(a.x - b.x), abs(a.y - b.y))


def _nearest(spot: Position, places: Sequence[tuple[str, Position]]) -> tuple[str, Position]:
    return min(places, key=lambda p: (_distance(spot, p[1]), p[0]))


def _gathering_spot(figures: HealthFigures) -> Position:
    """Where most agents are: the agent with the most others within 20 cells."""
    agents = figures.agents
    best = max(agents, key=lambda a: (sum(_distance(a.position, b.position) <= 20
                                          for b in agents), a.name))
    return best.position


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

    positions = {a.name: a.position for a in figures.agents}

    def isolation(name: str | None) -> int:
        """How far the agent is from the nearest other one (the most stranded first)."""
        if name is None or name not in positions:
            return 0
        here = positions[name]
        return min((_distance(here, p) for n, p in positions.items() if n != name), default=0)

    ordered = sorted(triage.reasons,
                     key=lambda r: (-r.level, r.measure, -isolation(r.agent), r.agent or ""))
    for reason in ordered:
        if reason.level < Level.WARNING:
            continue
        health = figures.agent(reason.agent) if reason.agent else None
        if reason.measure == "alone" and health is not None and landmarks:
            others = [a.position for a in figures.agents if a.name != health.name]
            toward = (_nearest(health.position, [("", p) for p in others])[1]
                      if others else health.position)
            name, _ = _nearest(toward, landmarks)
            take(RevealLandmark(name, health.position, min(REVEAL_RADIUS, caps.reveal_radius)),
                 f"{reason.text}: {name}, near the others, is made to stand out to them")
        elif reason.measure in ("resources", "failing") and health is not None:
            take(Regrowth(health.position, caps.regrowth_radius),
                 f"{reason.text}: the land around them grows back")
        elif reason.measure in ("quiet", "sameness"):
            text = HAPPENINGS[figures.tick % len(HAPPENINGS)][: caps.event_text_chars]
            take(WorldHappening(_gathering_spot(figures),
                                min(HAPPENING_RADIUS, caps.event_radius), text),
                 f"{reason.text}: something happens where most of them are")
        # "crowd" raises the level (more interventions allowed); the agents' own reasons
        # say what each needs.
    if not chosen:
        return Decision((), f"The world is {triage.level}, but no gentle change answers it.")
    return Decision(tuple(chosen), "; ".join(because))
