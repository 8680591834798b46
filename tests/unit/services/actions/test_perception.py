"""examine and sense_others: what an agent learns, and that looking changes nothing."""

from __future__ import annotations

import pytest

from core.actions import ExamineAction, GatherAction, SenseOthersAction
from core.objects import Item, PlacedItem, Sign
from core.places import NamedPlace
from core.structures import Structure
from core.types import Direction, Position
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    CEDAR,
    DUSK,
    GATHERING,
    START,
    fails,
    put,
    snapshot,
    succeeds,
)


def looks(sim, direction: Direction = Direction.DOWN, tick: int = 0):
    """Examine, and check that looking changed nothing."""
    before = snapshot(sim)
    result = succeeds(sim, ASH, ExamineAction(direction), tick)
    assert snapshot(sim) == before
    assert result.events == ()
    return result


# ------------------------------------------------------------------ examine


def test_examine_here_describes_the_ground(sim):
    result = looks(sim)
    assert result.message == "here: grass; grass can be gathered here (5 left)"
    assert result.data["position"] == [8, 8]
    assert result.data["terrain"] == "grass"
    assert result.data["resource"] == "grass"
    assert result.data["objects"] == []


def test_examine_a_direction_describes_the_next_cell(sim):
    put(sim, ASH, Position(5, 6))
    result = looks(sim, Direction.NORTH)
    assert result.message.startswith("north: forest; wood can be gathered here (5 left)")
    assert result.data["position"] == [5, 5]


def test_examine_water_mentions_nothing_to_gather(sim):
    put(sim, ASH, Position(9, 13))
    result = looks(sim, Direction.SOUTH)
    assert result.message == "south: water"
    assert result.data["resource"] is None


@pytest.mark.parametrize(
    ("start", "direction"),
    [(Position(0, 3), Direction.WEST), (Position(3, 0), Direction.NORTH),
     (Position(19, 3), Direction.EAST), (Position(3, 19), Direction.SOUTH)],
)
def test_examine_past_the_edge_of_the_world_is_refused(sim, start, direction):
    put(sim, ASH, start)
    result = fails(sim, ASH, ExamineAction(direction))
    assert result.message == f"the world ends to the {direction.value}"


def test_examine_shows_a_sign_and_what_lies_here(sim):
    here = START[ASH]
    sim.world.add_object(Sign("s1", here, BIRCH, 0, text="hello"))
    sim.world.add_object(PlacedItem("p1", here, None, 0, resource="wood", quantity=3))
    sim.world.add_object(PlacedItem("p2", here, None, 0, item=Item("cup-1", "clay_vessel")))
    result = looks(sim)
    assert "lying here: a sign, 3 wood, a clay_vessel" in result.message
    assert result.data["objects"] == ["a sign", "3 wood", "a clay_vessel"]


def test_examine_shows_walls_and_doors(sim):
    here = START[ASH]
    sim.world.place_wall(here, Direction.NORTH)
    sim.world.place_wall(here, Direction.EAST)
    sim.world.place_door(here, Direction.NORTH)
    result = looks(sim)
    assert "walls on the north, east side (a door on the north)" in result.message
    assert result.data["walls"] == ["north", "east"]
    assert result.data["doors"] == ["north"]


def test_examine_sees_the_wall_from_the_other_side(sim):
    sim.world.place_wall(START[ASH], Direction.NORTH)
    put(sim, ASH, START[ASH].step(Direction.NORTH))
    assert looks(sim).data["walls"] == ["south"]


def test_examine_inside_a_named_shelter(sim):
    sim.world.add_structure(Structure("st-1", {START[ASH]}, ASH, 0, name="Hut"))
    assert "inside a shelter called Hut" in looks(sim).message


def test_examine_shows_a_landmark_and_its_description(sim):
    put(sim, ASH, Position(7, 10))
    result = looks(sim, Direction.WEST)
    assert "the Spring: Clear water wells up between mossy stones." in result.message
    assert not result.message.endswith("\n")
    assert result.data["landmarks"] == ["the Spring"]


def test_examine_shows_the_name_of_a_place(sim):
    sim.world.name_place(NamedPlace("Ash Corner", START[ASH], ASH, 0))
    assert "this place is called Ash Corner" in looks(sim).message


def test_examine_shows_who_stands_there_but_not_yourself(sim):
    result = looks(sim, Direction.EAST)
    assert "Birch is here" in result.message
    assert result.data["agents"] == ["Birch"]
    assert looks(sim).data["agents"] == []


def test_examine_a_spent_cell(sim):
    for _ in range(GATHERING.cell_capacity):
        succeeds(sim, ASH, GatherAction())
    result = looks(sim)
    assert "the grass here is spent for now" in result.message


def test_examine_counts_what_is_left_after_gathering(sim):
    succeeds(sim, ASH, GatherAction())
    succeeds(sim, ASH, GatherAction())
    assert f"({GATHERING.cell_capacity - 2} left)" in looks(sim).message


# ------------------------------------------------------------------ sense_others


def sense(sim):
    before = snapshot(sim)
    result = succeeds(sim, ASH, SenseOthersAction())
    assert snapshot(sim) == before
    assert result.events == ()
    return result


def test_sense_others_with_nobody_known(sim):
    result = sense(sim)
    assert "you sense no one you know" in result.message
    assert result.data["sensed"] == []


def test_sense_others_lists_only_agents_already_met(sim):
    sim.agents.record_meeting(ASH, DUSK)
    result = sense(sim)
    names = [s["name"] for s in result.data["sensed"]]
    assert names == ["Dusk"]  # Birch and Cedar stand in plain sight but were never met
    assert "Birch" not in result.message


def test_sense_others_gives_direction_and_distance_bucket_never_a_position(sim):
    put(sim, ASH, Position(1, 1))
    put(sim, BIRCH, Position(3, 6))  # 7 away: nearby, mostly south
    put(sim, CEDAR, Position(12, 10))  # 20 away: far, mostly east
    # Dusk stays at (18, 18): 34 away, very far
    for other in (BIRCH, CEDAR, DUSK):
        sim.agents.record_meeting(ASH, other)
    result = sense(sim)
    assert result.data["sensed"] == [
        {"name": "Birch", "direction": "south", "distance": "nearby"},
        {"name": "Cedar", "direction": "east", "distance": "far"},
        {"name": "Dusk", "direction": "south", "distance": "very far"},
    ]
    assert "Cedar: far, to the east" in result.message
    assert not any(ch.isdigit() for ch in result.message)


@pytest.mark.parametrize(
    ("where", "bucket"),
    [
        (Position(10, 0), "nearby"),  # 10 steps
        (Position(11, 0), "far"),  # 11
        (Position(19, 11), "far"),  # 30
        (Position(19, 12), "very far"),  # 31
    ],
)
def test_sense_others_bucket_edges(sim, where, bucket):
    put(sim, ASH, Position(0, 0))
    put(sim, BIRCH, where)
    sim.agents.record_meeting(ASH, BIRCH)
    assert sense(sim).data["sensed"][0]["distance"] == bucket


def test_sense_others_on_the_same_cell_has_no_direction(sim):
    put(sim, BIRCH, START[ASH])
    sim.agents.record_meeting(ASH, BIRCH)
    result = sense(sim)
    assert result.message == "you sense Birch: nearby"
    assert result.data["sensed"][0]["direction"] == "down"
