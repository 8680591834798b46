"""Event rows as the committer writes them: one canonical JSON object per event."""

from __future__ import annotations

import json

from core.events import AgentMovedEvent, JourneyCompletedEvent
from core.types import AgentName, Position
from engine.committer import CANONICAL, canonical_json, event_rows, turn_record_json
from services.turn_loop import ActionRecord


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


def _general_record(actions, mind, error) -> str:
    record = {"actions": [a.to_json() for a in actions], "mind": dict(mind)}
    if error:
        record["error"] = error
    return CANONICAL.encode(record)


def test_a_turn_record_is_spelled_exactly_as_the_general_encoding_would() -> None:
    walk = ActionRecord("walk", {"steps": 2, "direction": "east"}, True,
                        'You walk — "two" steps\n east.\t🌲')
    fail = ActionRecord("speak", {"message": "Émile \\ said"}, False, "Nobody is here.")
    cases = [
        ((), {}, None),
        ((walk,), {"mind": "offline", "calls": ["walk"], "focus": "roam"}, None),
        ((walk, fail), {"z": 1, "a": [None, 1.5]}, "RuntimeError: it broke"),
        ((fail,), {}, ""),
    ]
    for actions, mind, error in cases:
        text = turn_record_json(actions, mind, error)
        assert text == _general_record(actions, mind, error)


def test_a_turn_record_with_odd_values_falls_back_to_the_general_encoding() -> None:
    odd = [ActionRecord("walk", {}, 1, "text"),  # a number, not a bool
           ActionRecord(7, {"a": 1}, True, "text")]  # a tool name that is not text
    for action in odd:
        assert turn_record_json([action], {}, None) == _general_record([action], {}, None)


def test_a_record_that_json_cannot_hold_is_replaced_by_a_note_not_an_error() -> None:
    walk = ActionRecord("walk", {"direction": "east"}, True, "You walk east.")
    text = turn_record_json([walk], {"seen": {1, 2}}, None)  # a set: not JSON
    record = json.loads(text)
    assert record["actions"] == [] and record["mind"] == {}
    assert record["error"].startswith("record not kept:")
