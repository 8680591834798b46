"""What the offline mind keeps or makes its own way to spare work: the state text encoded
field by field, the last View of an agent's cells, calls made slot by slot, a random source
seeded in line. Each must give exactly what the plain way gives."""

from __future__ import annotations

import json
import random

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.memory import DEFAULTS, FIELDS, Memory
from adapters.offline_mind.rng import TurnRandom
from adapters.offline_mind.state_text import StateText
from services.mind import ToolCall
from tests.unit.adapters.offline_mind.conftest import perceive, start

_OTHER_VALUES = {
    "anchor": [(1, 2), (-3, 40), None], "haunt": ["the Spring", 'the "Öde"\n', ""],
    "home": [(3, 4), None], "heading": ["west", "north", ""],
    "target": [("the Spring", 9, 9), None], "visited": [("a", "b"), ()],
    "recipes": [(("work:wood:split", "plank"),), ()], "ideas": [("work:wood:carve",), ()],
    "failed": [("work:stone:weave", "work:stick:*"), ()], "read": [((5, 5), (6, 7)), ()],
    "wrote": [((6, 6),), ()], "named": [(("Quiet Grove", 7, 7),), ()],
    "met": [(("Sage", 12),), ()], "seen": [("Sage", 8, 8, 12), None], "lines": [0, 2, 7],
    "journal_day": [0, 3], "diary": [("built a shelter", "ÿ\\"), ()], "done": [0, 31],
    "walls": [((3, 4, "north"),), ()], "search": [(0, 0), (2, 17)], "origin": [(0, 0), None],
    "marks": [(("the Spring", 9, 9),), ()], "company": ["Sage", ""],
    "stock": [(5, 6), None], "since": [0, 57],
}


def canonical(memory: Memory) -> str:
    return json.dumps(memory.to_state(), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def test_state_text_encoded_field_by_field_is_always_the_full_encode() -> None:
    rng = random.Random(5)
    text = StateText()
    values = list(DEFAULTS)
    assert text.of(Memory(tuple(values))) == canonical(Memory(tuple(values)))
    for _ in range(400):
        for _ in range(rng.randint(0, 5)):  # none, one or several fields at once
            field = rng.choice(FIELDS)
            values[FIELDS.index(field)] = rng.choice(
                [*_OTHER_VALUES[field.name], field.default])
        memory = Memory(tuple(values))
        assert text.of(memory) == canonical(memory)
        assert text.of(memory) is text.of(memory)


async def test_a_turn_reuses_the_agents_last_view_only_for_the_very_same_cells() -> None:
    mind = OfflineMind(1, {"Ember": "You are a maker."})
    first = perceive("Ember", 1, inventory={"wood": 1})
    turn = mind.begin(start(first))
    view = turn.view
    again = mind.begin(start(perceive("Ember", 2, cells=first.cells, inventory={"wood": 1})))
    assert again.view is view  # same cells, same spot
    moved = mind.begin(start(perceive("Ember", 3, at=(51, 50), cells=first.cells)))
    assert moved.view is not view and moved.view.centre == (51, 50)
    other = mind.begin(start(perceive("Ember", 4)))  # equal cells, but not the same tuple
    assert other.view is not moved.view and other.view.cells is not first.cells


async def test_calls_made_slot_by_slot_are_ordinary_tool_calls() -> None:
    mind = OfflineMind(1, {"Ember": "You are a maker."})
    turn = mind.begin(start(perceive("Ember", 1, inventory={"wood": 1})))
    (call,) = await turn.next_calls(())
    plain = ToolCall(call.id, call.name, dict(call.arguments))
    assert type(call) is ToolCall and call == plain and repr(call) == repr(plain)
    assert call.id == "1.1"


def test_a_turns_random_source_is_turn_random_at_and_between_is_below_shifted() -> None:
    mind = OfflineMind(3, {"Ember": "You are curious."})
    persona = mind.persona("Ember")
    turn = mind.begin(start(perceive("Ember", 17)))
    expected = TurnRandom.at(persona.rng_base, 17)
    assert [turn.rng.next64() for _ in range(5)] == [expected.next64() for _ in range(5)]
    a, b = TurnRandom(1, 2, 3), TurnRandom(1, 2, 3)
    assert [a.between(6, 12) for _ in range(50)] == [6 + b.below(7) for _ in range(50)]
