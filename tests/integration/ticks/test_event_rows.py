"""Event rows as the committer writes them: one canonical JSON object per event."""

from __future__ import annotations

import json

from core.events import AgentMovedEvent, JourneyCompletedEvent
from core.types import AgentName, Position
from engine.committer import CANONICAL, canonical_json, event_rows


def test_a_step_is_written_exactly_as_the_general_encoding_would() -> None:
    names = ("Ash", 'Quote "me"', "Émile \\ tab\t", "🌲 grove")
    for i, name in enumerate(names):
        step = AgentMovedEvent(i * 7, AgentName(name), Position(i, 2), Position(i, 3))
        (row,) = event_rows([step])
        assert row.data == CANONICAL.encode(step.to_dict())
        assert json.loads(row.data)["agent"] == name
        assert (row.tick, row.agent, row.kind) == (i * 7, name, "agent_moved")


def test_other_events_keep_their_order_and_agent() -> None:
    rows = event_rows([
        JourneyCompletedEvent(3, AgentName("Birch"), Position(4, 4)),
        AgentMovedEvent(3, AgentName("Ash"), Position(0, 0), Position(1, 0)),
    ])
    assert [(r.agent, r.kind) for r in rows] == [
        ("Birch", "journey_completed"), ("Ash", "agent_moved")]
    assert json.loads(rows[0].data)["destination"] == {"x": 4, "y": 4}


def test_the_reused_encoder_writes_what_the_canonical_one_does() -> None:
    values = [{}, [], {"b": 1, "a": [1.5, None, True, 'é "quoted"\n\t'], "c": {"z": 1, "y": 2}},
              [1e100, -0.0, 3, "🌲"], {"nested": [{"k": [[]]}]}]
    for value in values:
        assert canonical_json(value) == CANONICAL.encode(value)
