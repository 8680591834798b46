"""The rules' questions about every agent at once (services.gardener.rules._Crowd)
give what asking pair by pair gives: random crowds on a small land (ties everywhere),
the arrays cut into blocks of many sizes, and whole decisions compared with ones
worked out by plain loops over every pair."""

from __future__ import annotations

import random

import pytest

from core.gardener import AgentHealth, Caps, HealthFigures, Level, Reason, Triage
from core.types import Position
from services.gardener import rules
from services.gardener.rules import GATHERING_CELLS, _Crowd, decide_by_rules

MEASURES = ("alone", "resources", "failing", "quiet", "sameness", "crowd", "sleep")


def _distance(a: Position, b: Position) -> int:
    return max(abs(a.x - b.x), abs(a.y - b.y))


def _crowd(rng: random.Random, count: int, side: int) -> HealthFigures:
    names = rng.sample([f"A{i:03d}" for i in range(count * 2)], count)
    agents = tuple(AgentHealth(n, Position(rng.randrange(side), rng.randrange(side)),
                               0, 10, 0, 50, 0) for n in names)
    return HealthFigures(tick=rng.randrange(1000), window=48, agents=agents,
                         ticks_since_conversation=0, changes=0)


def _isolation(figures: HealthFigures, name: str) -> int:
    here = next(a.position for a in figures.agents if a.name == name)
    return min((_distance(here, a.position) for a in figures.agents if a.name != name),
               default=0)


def _nearest_other(figures: HealthFigures, name: str) -> Position:
    here = next(a.position for a in figures.agents if a.name == name)
    best: Position | None = None
    for a in figures.agents:  # the first among equals, in the figures' order
        if a.name != name and (best is None or _distance(here, a.position)
                               < _distance(here, best)):
            best = a.position
    return here if best is None else best


def _gathering_spot(figures: HealthFigures) -> Position:
    return max(figures.agents, key=lambda a: (
        sum(_distance(a.position, b.position) <= GATHERING_CELLS for b in figures.agents),
        a.name)).position


@pytest.mark.parametrize("cells_at_once", [1, 7, 64, rules.CELLS_AT_ONCE])
def test_every_question_answers_as_pair_by_pair(monkeypatch: pytest.MonkeyPatch,
                                                cells_at_once: int) -> None:
    monkeypatch.setattr(rules, "CELLS_AT_ONCE", cells_at_once)
    rng = random.Random(cells_at_once)
    for round_ in range(60):
        figures = _crowd(rng, rng.randint(1, 40), rng.choice((3, 12, 60)))
        crowd = _Crowd(figures)
        names = [a.name for a in figures.agents]
        asked = rng.sample(names, rng.randint(0, len(names))) + ["Nobody"]
        assert crowd.isolation(asked) == {n: _isolation(figures, n) for n in asked
                                          if n != "Nobody"}, round_
        for name in names:
            assert crowd.nearest_other(name) == _nearest_other(figures, name), round_
        assert crowd.gathering_spot() == _gathering_spot(figures), round_


def _plain_decision(found: Triage, figures: HealthFigures,
                    landmarks: list[tuple[str, Position]], caps: Caps):
    """The same decision, with every distance asked pair by pair: the crowd's arrays
    answer the questions, so swapping in plain answers must change nothing."""

    class Plain(_Crowd):
        def isolation(self, names):  # type: ignore[override]
            return {n: _isolation(figures, n) for n in names if n in self.index}

        def nearest_other(self, name: str) -> Position:
            return _nearest_other(figures, name)

        def gathering_spot(self) -> Position:
            return _gathering_spot(figures)

    real = rules._Crowd
    rules._Crowd = Plain  # type: ignore[misc]
    try:
        return decide_by_rules(found, figures, landmarks, caps)
    finally:
        rules._Crowd = real  # type: ignore[misc]


def test_whole_decisions_are_those_of_plain_loops() -> None:
    rng = random.Random(8)
    caps = Caps()
    decided = 0
    for round_ in range(150):
        figures = _crowd(rng, rng.randint(1, 30), rng.choice((20, 80, 300)))
        names = [a.name for a in figures.agents]
        reasons = tuple(
            Reason(Level(rng.randint(1, 3)), measure, f"reason {i}",
                   rng.choice(names) if measure not in ("quiet", "sameness") else None)
            for i, measure in enumerate(rng.choices(MEASURES, k=rng.randint(1, 12))))
        found = Triage(max(r.level for r in reasons), reasons)
        landmarks = [(f"L{i}", Position(rng.randrange(300), rng.randrange(300)))
                     for i in range(rng.randint(0, 5))]
        got = decide_by_rules(found, figures, landmarks, caps)
        assert got == _plain_decision(found, figures, landmarks, caps), round_
        decided += bool(got.interventions)
    assert decided > 50  # most rounds asked for something: the comparisons had substance
