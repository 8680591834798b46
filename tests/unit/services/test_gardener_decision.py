"""Reading a Gardener decision strictly, and the rules' own decisions."""

from __future__ import annotations

import json

import pytest

from core.gardener import (
    AgentHealth,
    Caps,
    HealthFigures,
    Level,
    Regrowth,
    RevealLandmark,
    Thresholds,
    WeatherChange,
    WorldHappening,
    triage,
)
from core.terrain import Weather
from core.types import Position
from services.gardener.decision import InvalidDecision, read_decision
from services.gardener.rules import decide_by_rules

SIZE = (100, 80)


def test_a_good_answer_becomes_its_interventions() -> None:
    answer = json.dumps({"rationale": "Sage is alone", "interventions": [
        {"type": "weather", "weather": "clear"},
        {"type": "none"},
        {"type": "event", "x": 3, "y": 4, "radius": 5, "text": "A fox  runs by."}]})
    decision = read_decision(f"Here it is:\n```json\n{answer}\n```", SIZE)
    assert decision.interventions == (
        WeatherChange(Weather.CLEAR), WorldHappening(Position(3, 4), 5, "A fox runs by."))
    assert decision.rationale == "Sage is alone"
    again = read_decision(decision.as_json(), SIZE)
    assert again == decision


@pytest.mark.parametrize(("answer", "says"), [
    ("no JSON here", "not a JSON object"),
    ("[1, 2]", "must be a JSON object"),
    ('{"interventions": []}', "rationale"),
    ('{"rationale": "x", "interventions": [], "agent": "Sage"}', "agent"),
    ('{"rationale": 5, "interventions": []}', "rationale"),
    ('{"rationale": "x", "interventions": [{"type": "teleport", "agent": "Sage"}]}',
     "unknown intervention"),
    ('{"rationale": "x", "interventions": [{"type": "regrowth", "x": 1, "y": 1, '
     '"radius": 2, "agent": "Sage"}]}', "not allowed: agent"),
    ('{"rationale": "x", "interventions": [{"type": "event", "x": 500, "y": 1, '
     '"radius": 2, "text": "hi"}]}', "outside"),
    ('{"rationale": "x", "interventions": ' + json.dumps([{"type": "none"}] * 6) + "}",
     "interventions"),
])
def test_anything_else_is_refused_with_the_reason(answer: str, says: str) -> None:
    with pytest.raises(InvalidDecision) as caught:
        read_decision(answer, SIZE)
    assert says in str(caught.value)


def _figures(*agents: AgentHealth, quiet: int = 0, changes: int = 48) -> HealthFigures:
    return HealthFigures(tick=500, window=48, agents=agents, ticks_since_conversation=quiet,
                         changes=changes)


def _agent(name: str, x: int, y: int, *, alone: int = 0, near: int = 50) -> AgentHealth:
    return AgentHealth(name, Position(x, y), alone, 10, 0, near, 0)


LANDMARKS = [("Old Tree", Position(12, 10)), ("Far Spring", Position(90, 70))]


def test_rules_leave_a_healthy_or_watched_world_alone() -> None:
    rules, caps = Thresholds(), Caps()
    healthy = _figures(_agent("Ash", 10, 10), _agent("Sage", 11, 10))
    watched = _figures(_agent("Ash", 10, 10, alone=60), _agent("Sage", 11, 10))
    for figures, level in ((healthy, Level.HEALTHY), (watched, Level.WATCH)):
        found = triage(figures, rules)
        assert found.level == level
        assert decide_by_rules(found, figures, LANDMARKS, caps).interventions == ()


def test_a_stranded_agent_is_shown_the_landmark_nearest_the_others() -> None:
    figures = _figures(_agent("Ash", 10, 10), _agent("Birch", 13, 11),
                       _agent("Sage", 80, 60, alone=200))
    found = triage(figures, Thresholds())
    assert found.level == Level.WARNING
    decision = decide_by_rules(found, figures, LANDMARKS, Caps())
    assert decision.interventions == (RevealLandmark("Old Tree", Position(80, 60), 6),)
    assert "Sage" in decision.rationale
    assert decide_by_rules(found, figures, LANDMARKS, Caps()) == decision  # deterministic


def test_rules_answer_bare_land_and_keep_within_the_level() -> None:
    figures = _figures(_agent("Ash", 10, 10, near=0), _agent("Birch", 95, 5, near=0),
                       _agent("Sage", 40, 75, near=0, alone=300))
    found = triage(figures, Thresholds())
    assert found.level == Level.CRITICAL
    decision = decide_by_rules(found, figures, LANDMARKS, Caps())
    assert len(decision.interventions) == Caps().per_cycle[3]
    assert any(isinstance(i, Regrowth) for i in decision.interventions)
    spots = [i.position for i in decision.interventions]
    assert len(set(spots)) == len(spots)
    # a second agent in the same area as one already answered is left to that answer
    crowded = _figures(_agent("Ash", 10, 10, near=0), _agent("Birch", 12, 12, near=0))
    found = triage(crowded, Thresholds())
    assert len(decide_by_rules(found, crowded, LANDMARKS, Caps()).interventions) == 1
