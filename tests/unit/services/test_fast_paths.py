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
