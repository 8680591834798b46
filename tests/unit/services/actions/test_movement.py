"""walk, approach and journey: each success, and each reason to refuse that changes nothing."""

from __future__ import annotations

import pytest

from core.actions import (
    ACTION_TYPES,
    ApproachAction,
    ExamineAction,
    JourneyAction,
    SleepAction,
    WalkAction,
)
from core.events import AgentMovedEvent, JourneyStartedEvent
from core.places import NamedPlace
from core.types import CARDINALS, Direction, Position
from services.action_engine import BUSY_WHILE_TRAVELLING
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    CEDAR,
    COAST_CELL,
    SAMPLE_ACTIONS,
    START,
    WATER_CELL,
    agent,
    fails,
    fails_tool,
    put,
    snapshot,
    succeeds,
)


def wall_in(sim, centre: Position, radius: int = 1) -> None:
    """Walls all round the square of cells within `radius` of `centre`."""
    lo_x, hi_x = centre.x - radius, centre.x + radius
    lo_y, hi_y = centre.y - radius, centre.y + radius
    for x in range(lo_x, hi_x + 1):
        sim.world.place_wall(Position(x, lo_y), Direction.NORTH)
        sim.world.place_wall(Position(x, hi_y), Direction.SOUTH)
    for y in range(lo_y, hi_y + 1):
        sim.world.place_wall(Position(lo_x, y), Direction.WEST)
        sim.world.place_wall(Position(hi_x, y), Direction.EAST)


# ------------------------------------------------------------------ walk


@pytest.mark.parametrize("direction", CARDINALS)
def test_walk_moves_one_cell(sim, direction):
    result = succeeds(sim, ASH, WalkAction(direction), tick=3)
    there = START[ASH].step(direction)
    assert agent(sim, ASH).position == there
    assert result.events == (AgentMovedEvent(3, ASH, START[ASH], there),)
    assert result.data["position"] == [there.x, there.y]
    assert result.data["terrain"] == "grass"
    assert ASH in sim.changes.agents


def test_walk_onto_forest_names_the_terrain(sim):
    put(sim, ASH, Position(6, 3))
    result = succeeds(sim, ASH, WalkAction(Direction.WEST))
    assert agent(sim, ASH).position == Position(5, 3)
    assert "forest" in result.message
    assert result.data["terrain"] == "forest"


def test_walk_onto_a_cell_someone_stands_on_is_allowed(sim):
    succeeds(sim, ASH, WalkAction(Direction.EAST))
    assert agent(sim, ASH).position == agent(sim, BIRCH).position


@pytest.mark.parametrize(
    ("start", "direction"),
    [
        (Position(0, 5), Direction.WEST),
        (Position(19, 5), Direction.EAST),
        (Position(7, 0), Direction.NORTH),
        (Position(7, 19), Direction.SOUTH),
    ],
)
def test_walk_off_the_world_is_refused(sim, start, direction):
    put(sim, ASH, start)
    result = fails(sim, ASH, WalkAction(direction))
    assert "world ends" in result.message
    assert agent(sim, ASH).position == start


def test_walk_into_water_is_refused(sim):
    put(sim, ASH, COAST_CELL)
    result = fails(sim, ASH, WalkAction(Direction.SOUTH))
    assert "water" in result.message
    assert agent(sim, ASH).position == COAST_CELL


def test_walk_through_a_wall_is_refused_from_both_sides(sim):
    north = START[ASH].step(Direction.NORTH)
    sim.world.place_wall(START[ASH], Direction.NORTH)
    assert "wall" in fails(sim, ASH, WalkAction(Direction.NORTH)).message
    put(sim, ASH, north)
    assert "wall" in fails(sim, ASH, WalkAction(Direction.SOUTH)).message


def test_walk_through_a_door_is_allowed(sim):
    sim.world.place_wall(START[ASH], Direction.NORTH)
    sim.world.place_door(START[ASH], Direction.NORTH)
    succeeds(sim, ASH, WalkAction(Direction.NORTH))
    assert agent(sim, ASH).position == START[ASH].step(Direction.NORTH)


async def test_walk_down_is_refused_at_the_tool(sim):
    result = await fails_tool(sim, ASH, "walk", {"direction": "down"})
    assert "north, south, east or west" in result.message


def test_walk_down_is_refused_by_the_engine_too(sim):
    """WalkAction refuses 'down' itself; the engine must still refuse one that slips by."""
    action = WalkAction(Direction.NORTH)
    object.__setattr__(action, "direction", Direction.DOWN)
    result = fails(sim, ASH, action)
    assert "down" in result.message


# ------------------------------------------------------------------ approach


def test_approach_a_visible_agent_takes_one_step_closer(sim):
    before = START[ASH].manhattan(START[CEDAR])
    result = succeeds(sim, ASH, ApproachAction("Cedar"), tick=2)
    now = agent(sim, ASH).position
    assert now.manhattan(START[ASH]) == 1
    assert now.manhattan(START[CEDAR]) == before - 1
    assert result.events == (AgentMovedEvent(2, ASH, START[ASH], now),)
    assert result.data["position"] == [now.x, now.y]


def test_approach_a_kind_of_terrain(sim):
    # The nearest forest Ash can see is (5, 5), three cells up and three to the west.
    result = succeeds(sim, ASH, ApproachAction("forest"))
    now = agent(sim, ASH).position
    assert now.manhattan(Position(5, 5)) == START[ASH].manhattan(Position(5, 5)) - 1
    assert result.data["remaining"] == now.manhattan(Position(5, 5))


def test_approach_a_landmark_by_its_name_without_the_article(sim):
    spring = Position(6, 10)
    succeeds(sim, ASH, ApproachAction("Spring"))
    assert agent(sim, ASH).position.manhattan(spring) == START[ASH].manhattan(spring) - 1


def test_approach_water_heads_for_the_shore(sim):
    put(sim, ASH, Position(10, 11))
    succeeds(sim, ASH, ApproachAction("water"))
    assert agent(sim, ASH).position == Position(10, 12)


def test_approach_someone_out_of_sight_is_refused(sim):
    result = fails(sim, ASH, ApproachAction("Dusk"))
    assert "see no 'Dusk'" in result.message


def test_approach_something_that_is_not_there_is_refused(sim):
    fails(sim, ASH, ApproachAction("dragon"))


def test_approach_a_terrain_out_of_sight_is_refused(sim):
    # The hills are seven cells east of Ash: farther than anyone sees.
    fails(sim, ASH, ApproachAction("hill"))


def test_approach_someone_already_beside_you_is_refused(sim):
    result = fails(sim, ASH, ApproachAction("Birch"))
    assert "already right beside you" in result.message


def test_approach_yourself_is_refused(sim):
    result = fails(sim, ASH, ApproachAction("Ash"))
    assert "see no 'Ash'" in result.message


def test_approach_someone_walled_in_is_refused(sim):
    wall_in(sim, START[CEDAR])
    result = fails(sim, ASH, ApproachAction("Cedar"))
    assert "no way to reach" in result.message


# ------------------------------------------------------------------ journey


def test_journey_to_a_position_sets_out(sim):
    goal = Position(8, 1)
    result = succeeds(sim, ASH, JourneyAction(goal), tick=4)
    journey = agent(sim, ASH).journey
    assert journey is not None
    assert journey.destination == goal
    assert journey.remaining == 7
    assert journey.current == START[ASH]
    assert result.events == (JourneyStartedEvent(4, ASH, goal, 7),)
    assert result.data == {"destination": [8, 1], "steps": 7}
    assert agent(sim, ASH).position == START[ASH]  # the first step comes with the next tick


def test_journey_goes_around_water(sim):
    # From the north shore to the south shore of the lake: around it, never through.
    put(sim, ASH, Position(10, 13))
    succeeds(sim, ASH, JourneyAction(Position(10, 18)))
    journey = agent(sim, ASH).journey
    assert journey is not None
    assert journey.remaining > 5
    assert all(sim.world.is_passable(p) for p in journey.path)


def test_journey_to_a_named_place(sim):
    sim.world.name_place(NamedPlace("Old Camp", Position(1, 8), None, 0))
    result = succeeds(sim, ASH, JourneyAction(place_name="  old CAMP "))
    assert agent(sim, ASH).journey.destination == Position(1, 8)
    assert "Old Camp" in result.message
    assert result.data["steps"] == 7


def test_journey_to_a_landmark_by_name(sim):
    result = succeeds(sim, ASH, JourneyAction(place_name="the spring"))
    assert agent(sim, ASH).journey.destination == Position(6, 10)
    assert "the Spring" in result.message


def test_journey_to_an_unknown_place_is_refused_with_the_names_there_are(sim):
    sim.world.name_place(NamedPlace("Old Camp", Position(1, 8), None, 0))
    result = fails(sim, ASH, JourneyAction(place_name="Atlantis"))
    assert "no place is called 'Atlantis'" in result.message
    assert "Old Camp" in result.message


@pytest.mark.parametrize("goal", [Position(20, 5), Position(5, 20), Position(-1, 0)])
def test_journey_out_of_the_world_is_refused(sim, goal):
    result = fails(sim, ASH, JourneyAction(goal))
    assert "outside the 20x20 world" in result.message


def test_journey_onto_water_is_refused(sim):
    result = fails(sim, ASH, JourneyAction(WATER_CELL))
    assert "water" in result.message


def test_journey_to_where_you_stand_is_refused(sim):
    result = fails(sim, ASH, JourneyAction(START[ASH]))
    assert "already there" in result.message


def test_journey_to_the_named_place_you_stand_on_is_refused(sim):
    sim.world.name_place(NamedPlace("Ash Corner", START[ASH], ASH, 0))
    result = fails(sim, ASH, JourneyAction(place_name="Ash Corner"))
    assert "already there" in result.message


def test_journey_to_a_walled_in_cell_is_refused(sim):
    goal = Position(15, 15)
    wall_in(sim, goal, radius=0)
    result = fails(sim, ASH, JourneyAction(goal))
    assert "no way there" in result.message


def test_journey_out_of_a_walled_room_is_refused(sim):
    wall_in(sim, START[ASH], radius=0)
    fails(sim, ASH, JourneyAction(Position(1, 1)))


def test_journey_while_asleep_is_refused(sim):
    succeeds(sim, ASH, SleepAction())
    result = fails(sim, ASH, JourneyAction(Position(8, 1)))
    assert "asleep" in result.message


def test_a_second_journey_is_refused_while_the_first_is_under_way(sim):
    succeeds(sim, ASH, JourneyAction(Position(8, 1)))
    result = fails(sim, ASH, JourneyAction(Position(1, 8)))
    assert "journey to (8, 1)" in result.message
    assert agent(sim, ASH).journey.destination == Position(8, 1)


@pytest.mark.parametrize("name", sorted(BUSY_WHILE_TRAVELLING))
def test_busy_actions_are_refused_while_journeying(sim, name):
    succeeds(sim, ASH, JourneyAction(Position(8, 1)))
    result = fails(sim, ASH, SAMPLE_ACTIONS[name])
    assert "you are on a journey" in result.message


@pytest.mark.parametrize("name", sorted(set(ACTION_TYPES) - BUSY_WHILE_TRAVELLING))
def test_looking_and_talking_are_not_refused_for_journeying(sim, name):
    succeeds(sim, ASH, JourneyAction(Position(8, 1)))
    result = sim.engine.execute_now(ASH, SAMPLE_ACTIONS[name], 0)
    assert "journey" not in result.message


def test_examine_works_while_journeying(sim):
    succeeds(sim, ASH, JourneyAction(Position(8, 1)))
    before = snapshot(sim)
    result = succeeds(sim, ASH, ExamineAction())
    assert result.message.startswith("here: grass")
    assert snapshot(sim) == before


# ------------------------------------------------------------------ walk several steps


def test_walk_several_steps_moves_that_far_with_one_event_per_step(sim):
    result = succeeds(sim, ASH, WalkAction(Direction.WEST, steps=3), tick=4)
    assert agent(sim, ASH).position == Position(5, 8)
    assert [e.to_position for e in result.events] == [Position(7, 8), Position(6, 8),
                                                     Position(5, 8)]
    assert result.data["steps"] == 3 and result.data["stopped"] is None
    assert "3 steps west" in result.message


def test_walk_stops_before_water_and_says_why(sim):
    put(sim, ASH, Position(10, 11))
    result = succeeds(sim, ASH, WalkAction(Direction.SOUTH, steps=5))
    assert agent(sim, ASH).position == Position(10, 13)
    assert result.data["steps"] == 2 and result.data["stopped"]
    assert "stop" in result.message


def test_walk_stops_when_someone_comes_into_view(sim):
    put(sim, ASH, Position(18, 12))
    result = succeeds(sim, ASH, WalkAction(Direction.SOUTH, steps=5))
    assert agent(sim, ASH).position == Position(18, 15)
    assert "Dusk came into view" in result.data["stopped"]


@pytest.mark.parametrize("steps", [0, -1, 6, 100])
async def test_walk_steps_out_of_range_are_refused(sim, steps):
    result = await fails_tool(sim, ASH, "walk", {"direction": "north", "steps": steps})
    assert result.reason == "bad_input"
