"""A tool call (tests/tool_calls.py, the registry's one door): whatever a model sends,
the answer is a result, never an exception, and a refused call changes nothing."""

from __future__ import annotations

import asyncio
import dataclasses
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.actions import ACTION_TYPES, ActionResult
from core.conversation import Privacy
from core.types import AgentName, Direction, Position
from tests.tool_calls import call_tool
from tests.unit.services.actions.conftest import (
    ASH,
    START,
    agent,
    check_refusal,
    fails_tool,
    fresh_journal,
    make_sim,
    snapshot,
)

TOOLS = sorted(ACTION_TYPES)
HUGE = "x" * 10**6
MESSAGE_LIMIT = 1000
"""A refusal is one clear line: it should never hand a model back a megabyte."""


# ------------------------------------------------------------------ names and shapes


@pytest.mark.parametrize("tool", ["fly", "", "Walk", " walk", None, 5, ["walk"], {"walk": 1}])
async def test_an_unknown_tool_is_refused_with_the_list_of_tools(sim, tool):
    result = await fails_tool(sim, ASH, tool, {})
    assert "there is no tool called" in result.message
    assert all(name in result.message for name in TOOLS)


@pytest.mark.parametrize("arguments", [["north"], "north", 7, ("north",), True])
async def test_arguments_that_are_not_an_object_are_refused(sim, arguments):
    result = await fails_tool(sim, ASH, "walk", arguments)
    assert "walk takes named arguments" in result.message


async def test_no_arguments_at_all_is_fine_for_a_tool_that_takes_none(sim):
    result = await call_tool(sim.engine, ASH, "sleep", None, 0)
    assert result.success
    assert agent(sim, ASH).is_sleeping


async def test_a_tool_call_for_someone_who_does_not_live_here_is_refused(sim):
    result = await fails_tool(sim, "Nobody", "sleep", {})
    assert "nobody called 'Nobody'" in result.message


@pytest.mark.parametrize(
    ("tool", "arguments", "needs"),
    [
        ("walk", {}, "walk needs direction"),
        ("walk", None, "walk needs direction"),
        ("give", {"item": "wood"}, "give needs recipient"),
        ("give", {"recipient": "Birch"}, "give needs item"),
        ("work", {"technique": "split"}, "work needs item"),
        ("apply", {"tool": "stone_axe"}, "apply needs target"),
        ("speak", {}, "speak needs message"),
    ],
)
async def test_missing_arguments_are_named(sim, tool, arguments, needs):
    result = await fails_tool(sim, ASH, tool, arguments)
    assert result.message == needs


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("walk", {"direction": "north", "speed": 2}),
        ("sense_others", {"radius": 10}),
        ("sleep", {"hours": 8}),
        ("walk", {1: "north"}),
        ("drop", {"item": "wood", "quantity": 1, "id": "item-1"}),
    ],
)
async def test_extra_arguments_are_refused(sim, tool, arguments):
    result = await fails_tool(sim, ASH, tool, arguments)
    assert f"{tool} does not take" in result.message


# ------------------------------------------------------------------ types


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("drop", {"item": 5}, "item must be text"),
        ("speak", {"message": 42}, "message must be text"),
        ("give", {"recipient": ["Birch"], "item": "wood"}, "recipient must be text"),
        ("drop", {"item": "wood", "quantity": True}, "quantity must be a whole number"),
        ("drop", {"item": "wood", "quantity": 1.0}, "quantity must be a whole number"),
        ("drop", {"item": "wood", "quantity": "2"}, "quantity must be a whole number"),
        ("walk", {"direction": ["north"]}, "direction must be a direction word"),
        ("walk", {"direction": 1}, "direction must be a direction word"),
        ("walk", {"direction": None}, "direction must be a direction word"),
        ("examine", {"direction": {"to": "north"}}, "direction must be a direction word"),
        ("journey", {"destination": {"x": 1, "y": 1, "z": 0}}, "destination must be"),
        ("journey", {"destination": {"x": 1}}, "destination must be"),
        ("journey", {"destination": [1, 2, 3]}, "destination must be"),
        ("journey", {"destination": "3,4"}, "destination must be"),
        ("journey", {"destination": {"x": 1.5, "y": 1}}, "whole-number x and y"),
        ("journey", {"destination": {"x": True, "y": 1}}, "whole-number x and y"),
        ("journey", {"destination": [1, "2"]}, "whole-number x and y"),
        ("combine", {"items": "wood,stone"}, "items must be a list of words"),
        ("combine", {"items": ["wood", 1]}, "items must be a list of words"),
        ("invite", {"invitee": "Birch", "privacy": "secret"}, "privacy must be"),
        ("invite", {"invitee": "Birch", "privacy": True}, "privacy must be"),
    ],
)
async def test_wrong_types_are_refused(sim, tool, arguments, says):
    result = await fails_tool(sim, ASH, tool, arguments)
    assert says in result.message


@pytest.mark.parametrize(
    "arguments",
    [{}, {"destination": None, "place_name": None},
     {"destination": {"x": 1, "y": 1}, "place_name": "the Spring"}],
)
async def test_journey_needs_exactly_one_destination(sim, arguments):
    result = await fails_tool(sim, ASH, "journey", arguments)
    assert "exactly one of a destination or a place name" in result.message


async def test_a_direction_word_is_read_loosely(sim):
    result = await call_tool(sim.engine, ASH, "walk", {"direction": " NORTH "}, 0)
    assert result.success
    assert agent(sim, ASH).position == START[ASH].offset(0, -1)


async def test_a_destination_may_be_a_pair(sim):
    result = await call_tool(sim.engine, ASH, "journey", {"destination": [8, 1]}, 0)
    assert result.success
    assert agent(sim, ASH).journey.destination.y == 1


# ------------------------------------------------------------------ unicode tricks


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("walk", {"direction": "ｎｏｒｔｈ"}),  # fullwidth letters
        ("walk", {"direction": "\u202enorth"}),  # right-to-left override
        ("walk", {"direction": "nor\u200bth"}),  # zero-width space
        ("walk", {"direction": "nоrth"}),  # Cyrillic o
        ("give", {"recipient": "Bir\u200bch", "item": "wood"}),
        ("give", {"recipient": "Birch\x00", "item": "wood"}),
        ("give", {"recipient": "Вirch", "item": "wood"}),  # Cyrillic B
        ("give", {"recipient": "Birch", "item": "wo\u0301od"}),  # a combining accent
        ("invite", {"invitee": "\u202eBirch"}),
        ("approach", {"target": "Ce\u200ddar"}),
        ("join_conversation", {"participant": "Ash\u0000"}),
        ("drop", {"item": "ｗｏｏｄ"}),
        ("speak", {"message": "\u200b\u200c\u200d\ufeff"}),
        ("write_sign", {"text": "\x1b[2J\x1b[H\x07"}),
        ("write_sign", {"text": "\ud800\udfff"}),  # lone surrogates
        ("name_place", {"place_name": "\u202e\u2066\u2069"}),
    ],
)
async def test_unicode_tricks_are_refused(sim, tool, arguments):
    await fails_tool(sim, ASH, tool, arguments)


async def test_lone_surrogates_are_cleaned_out_of_a_sign(sim):
    result = await call_tool(sim.engine, ASH, "write_sign", {"text": "ok\ud800"}, 0)
    assert result.success
    assert sim.world.sign_at(START[ASH]).text == "ok"


# ------------------------------------------------------------------ huge strings


HUGE_CALLS = [
    ("approach", {"target": HUGE}),
    ("journey", {"place_name": HUGE}),
    ("examine", {"direction": HUGE}),
    ("take", {"item": HUGE}),
    ("drop", {"item": HUGE}),
    ("give", {"recipient": HUGE, "item": "wood"}),
    ("give", {"recipient": "Birch", "item": HUGE}),
    ("place_item", {"item": HUGE}),
    ("combine", {"items": [HUGE, "wood"]}),
    ("work", {"item": HUGE, "technique": "split"}),
    ("work", {"item": "wood", "technique": HUGE}),
    ("apply", {"tool": HUGE, "target": "wood"}),
    ("write_sign", {"text": HUGE}),
    ("name_place", {"place_name": HUGE}),
    ("speak", {"message": HUGE}),
    ("invite", {"invitee": HUGE}),
    ("invite", {"invitee": "Birch", "privacy": HUGE}),
    ("join_conversation", {"participant": HUGE}),
]



def _huge_field(arguments: dict) -> str:
    return next(k for k, v in arguments.items() if v is HUGE or (isinstance(v, list)
                                                                 and HUGE in v))


def _call_id(call) -> str:
    tool, arguments = call
    return f"{tool}-{_huge_field(arguments)}"


@pytest.mark.parametrize("call", HUGE_CALLS, ids=_call_id)
async def test_a_million_characters_are_refused(sim, call):
    tool, arguments = call
    await fails_tool(sim, ASH, tool, arguments)


@pytest.mark.parametrize("call", HUGE_CALLS, ids=_call_id)
async def test_the_refusal_of_a_huge_argument_is_short(sim, call):
    tool, arguments = call
    result = await fails_tool(sim, ASH, tool, arguments)
    assert len(result.message) <= MESSAGE_LIMIT


# ------------------------------------------------------------------ anything at all

FIELDS = sorted({f.name for cls in ACTION_TYPES.values() for f in dataclasses.fields(cls)})
WORDS = st.sampled_from([
    "north", "south", "east", "west", "down", "Ash", "Birch", "Cedar", "Dusk", "Nobody",
    "wood", "plank", "stone", "clay", "grass", "stone_axe", "carved_bowl", "split", "carve",
    "public", "private", "the Spring", "forest", "water", "hello",
])
SCALARS = (
    st.none() | st.booleans() | st.integers(-3, 25) | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12) | WORDS
)
JSON_LIKE = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["x", "y"]) | st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
ARGUMENTS = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), JSON_LIKE,
                            max_size=4) | JSON_LIKE
NAMES = st.sampled_from(["Ash", "Birch", "Cedar", "Dusk"])
ITEMS = st.sampled_from(["wood", "plank", "stone", "clay", "grass", "stone_axe", "carved_bowl"])
SENSIBLE = {
    Direction: st.sampled_from(["north", "south", "east", "west", "down"]),
    Privacy: st.sampled_from(["public", "private"]),
    Position: st.fixed_dictionaries({"x": st.integers(-1, 20), "y": st.integers(-1, 20)}),
    int: st.integers(-1, 12),
    AgentName: NAMES,
    str: ITEMS | WORDS | st.sampled_from(["split", "carve", "break", "shape", "the Spring"]),
    tuple[str, ...]: st.lists(ITEMS, min_size=1, max_size=3),
}


def _sensible(tool: str):
    """Arguments of the right types (not always the right values) for one tool."""
    hints = typing.get_type_hints(ACTION_TYPES[tool])
    required, optional = {}, {}
    for f in dataclasses.fields(ACTION_TYPES[tool]):
        hint = hints[f.name]
        args = typing.get_args(hint)
        if type(None) in args:  # an optional field: its one other type
            hint = next(h for h in args if h is not type(None))
        values = SENSIBLE[hint]
        target = required if f.default is dataclasses.MISSING else optional
        target[f.name] = values
    return st.tuples(st.just(tool), st.fixed_dictionaries(required, optional=optional))


CALL = st.sampled_from(TOOLS).flatmap(_sensible) | st.tuples(
    st.sampled_from(TOOLS) | st.text(max_size=8), ARGUMENTS
)
CALLS = st.lists(
    st.tuples(NAMES, CALL, st.integers(0, 2)),
    min_size=1,
    max_size=12,
)


async def _run(calls) -> None:
    sim = make_sim()
    tick = 0
    for name, (tool, arguments), later in calls:
        tick += later
        with fresh_journal(sim) as journal:
            before = snapshot(sim)
            result = await call_tool(sim.engine, name, tool, arguments, tick)
            after = snapshot(sim)
        assert isinstance(result, ActionResult)
        assert isinstance(result.message, str) and result.message
        assert not result.message.endswith("could not be done just now"), (
            f"{tool}({arguments!r}) hit an unexpected error")
        if not result.success:
            check_refusal(result, before, after, journal, f"{tool}({arguments!r})")
        assert sim.conversations.check_invariants() == []


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(calls=CALLS)
def test_any_tool_call_is_answered_and_a_refusal_changes_nothing(calls):
    asyncio.run(_run(calls))
