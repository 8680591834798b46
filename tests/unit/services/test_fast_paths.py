"""The shortcuts on the action hot path answer exactly what the plain rules would.

A walk of several steps finds who might come into view with one look before it sets
off; the world keeps its path grid between wall changes; events turn into dicts from a
per-class field table; tool arguments go through per-tool converters. Each is checked
here against the straightforward definition it replaced.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config import load_config
from core import events as ev
from core.actions import WalkAction
from core.agent import Agent
from core.conversation import Privacy
from core.terrain import TERRAIN_CODE, Terrain, Weather
from core.types import CARDINALS, AgentName, Direction, Position
from core.world import WorldState
from services.action_engine import ActionEngine
from services.agent_service import AgentService
from services.conversation_service import ConversationService
from services.crafting import CraftingService
from services.pathfinding import find_path
from services.tool_input import ToolInputError, parse_action
from services.world_service import Clock, TerrainRules, WorldService

CONFIG = load_config(None)
RULES = TerrainRules.from_traits(CONFIG.terrain.terrains)
SIZE = 30


def person(i: int, x: int, y: int) -> Agent:
    return Agent(AgentName(f"P{i}"), "m", "p", Position(x, y))


def make_engine(
    people: list[Agent], water: list[tuple[int, int]] = (), vision: int = 3
) -> ActionEngine:
    codes = np.full((SIZE, SIZE), TERRAIN_CODE[Terrain.GRASS], np.uint8)
    for x, y in water:
        codes[y, x] = TERRAIN_CODE[Terrain.WATER]
    world = WorldService(WorldState(SIZE, SIZE, 1), codes, RULES,
                         clock=Clock(vision_radius=vision))
    agents = AgentService(world, people)
    return ActionEngine(world, agents, CraftingService(CONFIG.recipes),
                        ConversationService(agents, new_id=lambda: "conv-1"))


def walk_by_definition(engine: ActionEngine, walker: Agent, direction: Direction,
                       steps: int) -> tuple[Position, str | None, int]:
    """Where a walk ends, why it stopped and how many steps it took, asking who is near
    at every step (nobody else moves meanwhile, so positions can be read as they are)."""
    agents, radius = engine.agents, engine.world.vision_radius()
    seen = {a.name for a in agents.get_nearby_agents(walker.position, radius)}
    here, taken = walker.position, 0
    while taken < steps:
        if agents.step_blocker(here, direction):
            return here, (agents.step_blocker(here, direction) if taken else "refused"), taken
        here, taken = here.step(direction), taken + 1
        if taken == steps:
            break
        now = {a.name for a in agents.get_nearby_agents(here, radius)
               if a.name != walker.name}
        newcomers = sorted(now - seen)
        if newcomers:
            return here, f"{newcomers[0]} came into view", taken
    return here, None, taken


cell = st.tuples(st.integers(0, SIZE - 1), st.integers(0, SIZE - 1))


@settings(max_examples=200, deadline=None)
@given(
    crowd=st.lists(cell, min_size=1, max_size=25, unique=True),
    water=st.lists(cell, max_size=20),
    direction=st.sampled_from(CARDINALS),
    steps=st.integers(1, 5),
    vision=st.sampled_from([0, 1, 3]),
)
def test_a_walk_stops_exactly_where_asking_who_is_near_at_every_step_would(
    crowd, water, direction, steps, vision
):
    people = [person(i, x, y) for i, (x, y) in enumerate(crowd)]
    engine = make_engine(people, [w for w in water if w != crowd[0]], vision)
    walker = people[0]
    expected_at, expected_stop, expected_steps = walk_by_definition(
        engine, walker, direction, steps)
    result = engine.execute_now(walker.name, WalkAction(direction, steps), 3)
    if expected_stop == "refused":
        assert not result.success
        return
    assert result.success
    assert engine.agents.require(walker.name).position == expected_at
    assert result.data["stopped"] == expected_stop
    assert result.data["steps"] == expected_steps == len(result.events)


@settings(max_examples=100, deadline=None)
@given(crowd=st.lists(cell, max_size=30, unique=True),
       box=st.tuples(st.integers(-5, SIZE + 5), st.integers(-5, SIZE + 5),
                     st.integers(-5, SIZE + 5), st.integers(-5, SIZE + 5)))
def test_agents_in_box_finds_everyone_standing_in_it(crowd, box):
    engine = make_engine([person(i, x, y) for i, (x, y) in enumerate(crowd)])
    x0, y0, x1, y1 = box
    found = sorted(a.name for a in engine.agents.agents_in_box(x0, y0, x1, y1))
    assert found == sorted(a.name for a in engine.agents.get_all_agents()
                           if x0 <= a.position.x <= x1 and y0 <= a.position.y <= y1)


def test_the_kept_path_grid_follows_every_wall_door_and_terrain_change():
    engine = make_engine([])
    world = engine.world

    def planned(start: Position, goal: Position):
        fresh = find_path(world.passable, *world.blocked_arrays(), start, goal)
        assert engine.agents.plan_path(start, goal) == fresh
        return fresh

    start, goal = Position(5, 5), Position(6, 5)
    assert planned(start, goal) == [goal]
    world.place_wall(start, Direction.EAST)
    assert len(planned(start, goal)) == 3
    world.place_door(start, Direction.EAST)
    assert planned(start, goal) == [goal]
    world.remove_wall(start, Direction.EAST)
    world.set_terrain(goal, Terrain.WATER)
    assert planned(start, goal) is None
    passable = world.path_grid()[0]
    with pytest.raises(ValueError):
        passable[0, 0] = False  # what path_grid hands out cannot be changed by accident


def test_find_path_refuses_masks_of_another_grid():
    grid = (np.ones((4, 4), bool), np.zeros((4, 4), bool), np.zeros((4, 4), bool))
    with pytest.raises(ValueError, match="move masks"):
        find_path(*grid, Position(0, 0), Position(3, 3), masks=bytes(15))


def plain(value):
    """The original conversion, written out: what every field becomes in to_dict."""
    if isinstance(value, Position):
        return {"x": value.x, "y": value.y}
    if isinstance(value, Weather | Privacy | Direction):
        return value.value
    if isinstance(value, frozenset | set):
        return sorted(plain(v) for v in value)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    return value


@pytest.mark.parametrize("event", [
    ev.AgentMovedEvent(1, AgentName("A"), Position(1, 2), Position(1, 3)),
    ev.StructureDetectedEvent(2, "s-1", 4),
    ev.StructureDetectedEvent(2, "s-1", 4, AgentName("A")),
    ev.ItemCraftedEvent(3, AgentName("A"), "work", ("wood", "wood"), "plank", 4),
    ev.ConversationStartedEvent(4, "c-1", frozenset({"Zed", "Amy"}), Privacy.PRIVATE),
    ev.WeatherChangedEvent(5, Weather.RAINY),
    ev.WallPlacedEvent(6, AgentName("A"), Position(0, 0), Direction.EAST),
    ev.AgentWokeEvent(7, AgentName("A"), Weather.CLEAR),  # an enum where text is declared
    ev.ItemGivenEvent(8, AgentName("A"), AgentName("B"), "wood", True),  # a bool
])
def test_to_dict_is_every_field_made_plain_in_declaration_order(event):
    out = event.to_dict()
    assert list(out) == ["type", "category", *(f.name for f in dataclasses.fields(event))]
    assert out == {"type": event.event_type, "category": event.category,
                   **{f.name: plain(getattr(event, f.name)) for f in dataclasses.fields(event)}}
    assert type(out["tick"]) is int


@pytest.mark.parametrize(("arguments", "message"), [
    ({"direction": "North "}, None),
    ({"direction": Direction.EAST}, None),
    ({"direction": "n"}, "direction: unknown direction 'n'"),
    ({"direction": 3}, "direction must be a direction word, not 3"),
    ({"direction": "north", "steps": True}, "steps must be a whole number, not True"),
    ({"direction": "north", "steps": 2.0}, "steps must be a whole number, not 2.0"),
    ({"direction": "north", "pace": 1, "mood": 2},
     "walk does not take mood, pace (it takes: direction, steps)"),
])
def test_the_fast_converters_still_check_everything(arguments, message):
    if message is None:
        assert isinstance(parse_action("walk", arguments).direction, Direction)
    else:
        with pytest.raises(ToolInputError) as caught:
            parse_action("walk", arguments)
        assert str(caught.value).startswith(message)


# --- the second pass: what is now worked out once, or skipped when it cannot matter ---


agent_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(max_codepoint=0x7F)),
    st.sampled_from(["  Hello there.  ", "e\u0301t\u00e9", "caf\u00e9 \u00a0ok", "tab\there",
                     "\x1b[31mred\x1b[0m", "a\u202eb", "line\r\nbreak", "\u2028", ""]),
)


@settings(max_examples=500, deadline=None)
@given(text=agent_text, keep=st.booleans())
def test_clean_text_answers_what_the_character_loop_would(text, keep):
    from core.text import clean_text, clean_text_fully

    assert clean_text(text, keep_newlines=keep) == clean_text_fully(
        text, keep_newlines=keep)


def clean_speech_by_definition(message: str) -> str:
    """clean_speech's three passes, before its shortcut for printable messages."""
    from services.conversation_service import _ANSI, _CONTROL, _LINE_BREAKS

    return _CONTROL.sub("", _ANSI.sub("", _LINE_BREAKS.sub("\n", message))).strip()


@settings(max_examples=500, deadline=None)
@given(message=agent_text)
def test_clean_speech_answers_what_its_patterns_would(message):
    from services.conversation_service import ConversationError, clean_speech

    expected = clean_speech_by_definition(message)
    if not expected or len(expected) > 2000:
        with pytest.raises(ConversationError):
            clean_speech(message)
    else:
        assert clean_speech(message) == expected


@pytest.mark.parametrize(("tool", "arguments"), [
    ("walk", {"direction": "east", "steps": 3}),
    ("walk", {"steps": 3, "direction": "east"}),
    ("gather", {"direction": "down"}),
    ("speak", {"message": "The grass here has a quiet to it."}),
    ("work", {"item": "wood", "technique": "split"}),
    ("leave_conversation", {}),
])
def test_a_repeated_call_is_the_same_action_as_parsing_it_afresh(tool, arguments):
    from services.tool_input import _parse

    first, again = parse_action(tool, dict(arguments)), parse_action(tool, dict(arguments))
    assert first == again == _parse(tool, arguments)


@pytest.mark.parametrize(("kept", "asked", "message"), [
    ({"direction": "north", "steps": 1}, {"direction": "north", "steps": True},
     "steps must be a whole number, not True"),
    ({"direction": "north", "steps": 2}, {"direction": "north", "steps": 2.0},
     "steps must be a whole number, not 2.0"),
    ({"direction": "north"}, {"direction": "north", "pace": 1}, "walk does not take pace"),
])
def test_a_kept_call_never_answers_for_arguments_that_only_compare_equal(kept, asked, message):
    parse_action("walk", kept)
    with pytest.raises(ToolInputError) as caught:
        parse_action("walk", asked)
    assert str(caught.value).startswith(message)


def test_the_table_of_parsed_calls_is_dropped_when_full(monkeypatch):
    import services.tool_input as tool_input

    monkeypatch.setattr(tool_input, "PARSED_KEPT", 3)
    tool_input._parsed.clear()
    for i in range(10):
        assert parse_action("speak", {"message": f"remark {i}"}).message == f"remark {i}"
        assert len(tool_input._parsed) <= 3


@settings(max_examples=300, deadline=None)
@given(water=st.lists(cell, max_size=40), walls=st.lists(
    st.tuples(cell, st.sampled_from(CARDINALS), st.booleans()), max_size=30),
    start=cell, direction=st.sampled_from(list(Direction)), most=st.integers(0, 6))
def test_open_steps_counts_the_steps_step_refusal_allows(water, walls, start, direction, most):
    engine = make_engine([], water)
    world = engine.world
    for (x, y), side, door in walls:
        if world.edge_inside(Position(x, y), side) and not world.has_wall(Position(x, y), side):
            world.place_wall(Position(x, y), side)
            if door:
                world.place_door(Position(x, y), side)
    here, expected = Position(*start), 0
    if direction is not Direction.DOWN:
        while expected < most and not world.step_refusal(here, direction):
            here, expected = here.step(direction), expected + 1
    assert world.open_steps(Position(*start), direction, most) == expected


@settings(max_examples=300, deadline=None)
@given(water=st.lists(cell, max_size=120), walls=st.lists(
    st.tuples(cell, st.sampled_from(CARDINALS)), max_size=40), ends=st.tuples(cell, cell))
def test_the_straight_descent_is_the_path_the_search_finds(water, walls, ends):
    from services.pathfinding import _descend, _search

    engine = make_engine([], water)
    world = engine.world
    for (x, y), side in walls:
        if world.edge_inside(Position(x, y), side) and not world.has_wall(Position(x, y), side):
            world.place_wall(Position(x, y), side)
    masks = world.path_grid()[3]
    start, goal = (y * SIZE + x for x, y in ends)
    if start == goal or not world.passable.flat[goal]:
        return
    straight = _descend(masks, SIZE, start, goal)
    if straight is not None:
        assert straight == _search(masks, SIZE, start, goal, lambda: True)


def test_the_descent_gives_way_to_the_search_round_an_obstacle():
    water = [(5, y) for y in range(2, 9)]
    engine = make_engine([], water)
    start, goal = Position(2, 5), Position(8, 5)
    path = engine.agents.plan_path(start, goal)
    assert path is not None and len(path) > goal.manhattan(start)  # round the water
    assert path == find_path(engine.world.passable, *engine.world.blocked_arrays(), start, goal)


def test_structure_at_follows_structures_added_and_removed():
    from core.structures import Structure

    engine = make_engine([])
    world = engine.world
    first = Structure("s-1", frozenset({Position(3, 3), Position(4, 3), Position(3, 4)}),
                      None, 0)
    second = Structure("s-2", frozenset({Position(9, 3)}), None, 0)
    world.add_structure(first)
    world.add_structure(second)
    cells = [Position(x, y) for x in range(SIZE) for y in range(SIZE)]

    def by_definition(pos):
        return next((s for s in (first, second) if s in world.all_structures()
                     and pos in s.interior), None)

    assert all(world.structure_at(p) == by_definition(p) for p in cells)
    world.remove_structure("s-1")
    assert all(world.structure_at(p) == by_definition(p) for p in cells)
    world.remove_structure("s-2")
    assert all(world.structure_at(p) is None for p in cells)
    assert world._structure_rows == {}


def test_the_kept_vision_radius_follows_the_tick_and_the_clock():
    from core.constants import effective_vision_radius

    engine = make_engine([], vision=5)
    world = engine.world
    for tick in range(0, 30):
        world.set_tick(tick)
        assert world.vision_radius() == effective_vision_radius(5, world.time_of_day().is_night)
    world.clock = Clock(vision_radius=2)
    assert world.vision_radius() == effective_vision_radius(2, world.time_of_day().is_night)


def test_a_kept_recipe_result_is_the_one_made_afresh_and_unique_items_are_still_named():
    from core.agent import Inventory
    from services.crafting_request import CraftingResult

    crafting = CraftingService(CONFIG.recipes)
    for recipe in crafting.recipes:
        inputs = list(recipe.inputs)
        held = Inventory({name: inputs.count(name) for name in inputs})
        ids = iter(f"item-{i}" for i in range(100))
        for _ in range(2):  # the second attempt is answered from the kept result
            _, outcome = crafting.craft_into(held, recipe.action, inputs, recipe.technique,
                                             new_item_id=ids.__next__)
            made = CraftingResult.made(recipe)
            assert outcome.success
            assert dataclasses.replace(outcome, created_items=(), consumed_items=()) == made
            assert len(outcome.created_items) == (
                0 if recipe.output_stackable else recipe.output_quantity)


@pytest.mark.parametrize("event", [
    ev.AgentMovedEvent(1, AgentName("A"), Position(1, 2), Position(1, 3)),
    ev.JourneyStartedEvent(2, AgentName("A"), Position(5, 5), 7),
    ev.ResourceGatheredEvent(3, AgentName("A"), Position(0, 0), "wood", 1),
    ev.ItemCraftedEvent(4, AgentName("A"), "work", ("wood",), "plank", 4),
    ev.ConversationTurnEvent(5, "c-1", AgentName("A"), "hello"),
])
def test_written_out_event_constructors_set_every_field(event):
    values = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    assert type(event)(**values) == event
    assert dataclasses.replace(event, tick=9).tick == 9
    assert ev.event_from_dict(event.to_dict()) == event
