"""place_wall, place_door, remove_wall and build_shelter: walls cost, walls give back,
and closed walls make a shelter."""

from __future__ import annotations

import pytest

from core.actions import (
    BuildShelterAction,
    PlaceDoorAction,
    PlaceWallAction,
    RemoveWallAction,
    WalkAction,
)
from core.events import (
    DoorPlacedEvent,
    StructureDetectedEvent,
    StructureRemovedEvent,
    WallPlacedEvent,
    WallRemovedEvent,
)
from core.types import CARDINALS, Direction, Position
from services.enclosure import enclosed_region, enclosed_regions
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    BUILDING,
    CEDAR,
    START,
    agent,
    fails,
    give_stuff,
    put,
    succeeds,
)

HERE = START[ASH]

COST = BUILDING.wall_cost
DOOR = BUILDING.door_cost


def inventory_total(sim) -> dict[str, int]:
    """Every resource in inventories and in walls: building must neither make nor lose any."""
    totals: dict[str, int] = {}
    for a in sim.agents.get_all_agents():
        for name, count in a.inventory.stacks.items():
            totals[name] = totals.get(name, 0) + count
    for name, count in sim.world.materials_in_walls().items():
        totals[name] = totals.get(name, 0) + count
    return totals


def enclosed(sim, pos: Position):
    return enclosed_region(sim.world.wall_east, sim.world.wall_south, pos)


# ------------------------------------------------------------------ place_wall


def test_place_wall_charges_the_first_material_and_both_sides_see_it(sim):
    before = inventory_total(sim)
    result = succeeds(sim, ASH, PlaceWallAction(Direction.NORTH), tick=4)
    north = HERE.step(Direction.NORTH)
    assert sim.world.has_wall(HERE, Direction.NORTH)
    assert sim.world.has_wall(north, Direction.SOUTH)
    assert Direction.NORTH in sim.world.cell(HERE).walls
    assert Direction.SOUTH in sim.world.cell(north).walls
    assert agent(sim, ASH).inventory.count("plank") == 8 - COST
    assert sim.world.edge_materials == {(8, 7, "s"): [("plank", COST)]}
    assert result.events == (WallPlacedEvent(4, ASH, HERE, Direction.NORTH),)
    assert result.data == {"material": "plank", "structure": False}
    assert (8, 7, "s") in sim.changes.edges
    assert inventory_total(sim) == before


@pytest.mark.parametrize(
    ("stacks", "used"),
    [
        ({"wood": COST, "stone": COST}, "wood"),
        ({"stone": COST, "clay_brick": COST}, "clay_brick"),
        ({"plank": COST - 1, "cobblestone": COST}, "cobblestone"),
    ],
)
def test_place_wall_tries_materials_in_the_configured_order(sim, stacks, used):
    give_stuff(sim, ASH, **stacks)
    result = succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    assert result.data["material"] == used
    assert agent(sim, ASH).inventory.count(used) == stacks[used] - COST


def test_place_wall_blocks_walking_both_ways(sim):
    succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    fails(sim, ASH, WalkAction(Direction.EAST))
    fails(sim, BIRCH, WalkAction(Direction.WEST))


def test_place_wall_where_one_stands_is_refused(sim):
    succeeds(sim, ASH, PlaceWallAction(Direction.NORTH))
    result = fails(sim, ASH, PlaceWallAction(Direction.NORTH))
    assert result.message == "there is already a wall on the north side"


def test_place_wall_on_the_same_edge_from_the_other_side_is_refused(sim):
    succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    give_stuff(sim, BIRCH, plank=5)
    fails(sim, BIRCH, PlaceWallAction(Direction.WEST))


@pytest.mark.parametrize(
    ("start", "direction"),
    [(Position(0, 8), Direction.WEST), (Position(8, 19), Direction.SOUTH)],
)
def test_place_wall_on_the_world_edge_is_refused(sim, start, direction):
    put(sim, ASH, start)
    result = fails(sim, ASH, PlaceWallAction(direction))
    assert "world's edge" in result.message


def test_place_wall_without_materials_is_refused(sim):
    result = fails(sim, CEDAR, PlaceWallAction(Direction.NORTH))
    assert result.message.startswith(f"a wall takes {COST} of one of: plank, cobblestone")


def test_place_wall_with_too_little_of_every_material_is_refused(sim):
    give_stuff(sim, ASH, plank=COST - 1, wood=COST - 1, stone=COST - 1)
    fails(sim, ASH, PlaceWallAction(Direction.NORTH))


def test_the_wall_that_closes_a_room_makes_a_structure(sim):
    for d in (Direction.NORTH, Direction.EAST, Direction.SOUTH):
        assert succeeds(sim, ASH, PlaceWallAction(d)).data["structure"] is False
    result = succeeds(sim, ASH, PlaceWallAction(Direction.WEST), tick=9)
    assert result.data["structure"] is True
    structure = sim.world.structure_at(HERE)
    assert structure is not None
    assert structure.interior == {HERE}
    assert result.events[-1] == StructureDetectedEvent(9, structure.id, 1, ASH)


def test_closing_a_room_from_outside_finds_the_room(sim):
    room = HERE.step(Direction.EAST)
    for d in (Direction.NORTH, Direction.EAST, Direction.SOUTH):
        sim.world.place_wall(room, d)
    result = succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    assert result.data["structure"] is True
    assert sim.world.structure_at(room).interior == {room}
    assert sim.world.structure_at(HERE) is None


# ------------------------------------------------------------------ place_door


def test_place_door_into_a_wall(sim):
    succeeds(sim, ASH, PlaceWallAction(Direction.NORTH))
    result = succeeds(sim, ASH, PlaceDoorAction(Direction.NORTH), tick=2)
    north = HERE.step(Direction.NORTH)
    assert sim.world.has_door(HERE, Direction.NORTH)
    assert sim.world.has_door(north, Direction.SOUTH)
    assert agent(sim, ASH).inventory.count("plank") == 8 - COST - DOOR
    assert result.events == (DoorPlacedEvent(2, ASH, HERE, Direction.NORTH),)
    succeeds(sim, ASH, WalkAction(Direction.NORTH))


def test_place_door_without_a_wall_is_refused(sim):
    result = fails(sim, ASH, PlaceDoorAction(Direction.NORTH))
    assert "place_wall first" in result.message


def test_place_door_twice_is_refused(sim):
    succeeds(sim, ASH, PlaceWallAction(Direction.NORTH))
    succeeds(sim, ASH, PlaceDoorAction(Direction.NORTH))
    result = fails(sim, ASH, PlaceDoorAction(Direction.NORTH))
    assert result.message == "there is already a door on the north side"


def test_place_door_uses_only_door_materials(sim):
    give_stuff(sim, ASH, stone=10)
    succeeds(sim, ASH, PlaceWallAction(Direction.NORTH))  # stone does for a wall...
    result = fails(sim, ASH, PlaceDoorAction(Direction.NORTH))  # ...but not for a door
    assert result.message.startswith(f"a door takes {DOOR} of one of: plank, wood")


def test_place_door_falls_back_to_wood(sim):
    give_stuff(sim, ASH, wood=COST + DOOR)
    succeeds(sim, ASH, PlaceWallAction(Direction.NORTH))
    assert succeeds(sim, ASH, PlaceDoorAction(Direction.NORTH)).data["material"] == "wood"
    assert agent(sim, ASH).inventory.count("wood") == 0


def test_place_door_on_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(0, 8))
    fails(sim, ASH, PlaceDoorAction(Direction.WEST))


# ------------------------------------------------------------------ remove_wall


def test_remove_wall_gives_back_the_wall_and_the_door(sim):
    before = inventory_total(sim)
    succeeds(sim, ASH, PlaceWallAction(Direction.NORTH))
    succeeds(sim, ASH, PlaceDoorAction(Direction.NORTH))
    result = succeeds(sim, ASH, RemoveWallAction(Direction.NORTH), tick=3)
    assert agent(sim, ASH).inventory.count("plank") == 8
    assert not sim.world.has_wall(HERE, Direction.NORTH)
    assert not sim.world.has_door(HERE, Direction.NORTH)
    assert sim.world.edge_materials == {}
    assert result.events == (WallRemovedEvent(3, ASH, HERE, Direction.NORTH),)
    assert result.data["returned"] == [["plank", COST], ["plank", DOOR]]
    assert inventory_total(sim) == before


def test_remove_someone_elses_wall_from_the_other_side(sim):
    succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    succeeds(sim, BIRCH, RemoveWallAction(Direction.WEST))
    assert agent(sim, BIRCH).inventory.count("plank") == COST
    assert not sim.world.has_wall(HERE, Direction.EAST)


def test_remove_a_wall_without_materials_gives_nothing(sim):
    sim.world.place_wall(HERE, Direction.NORTH)
    result = succeeds(sim, ASH, RemoveWallAction(Direction.NORTH))
    assert result.data["returned"] == []
    assert "keep its nothing" in result.message


def test_remove_wall_where_there_is_none_is_refused(sim):
    result = fails(sim, ASH, RemoveWallAction(Direction.NORTH))
    assert result.message == "there is no wall on the north side"


def test_remove_wall_on_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(8, 0))
    fails(sim, ASH, RemoveWallAction(Direction.NORTH))


def test_remove_a_wall_of_a_shelter_removes_the_structure(sim):
    succeeds(sim, ASH, BuildShelterAction())
    structure = sim.world.structure_at(HERE)
    result = succeeds(sim, ASH, RemoveWallAction(Direction.SOUTH), tick=5)
    assert sim.world.structure_at(HERE) is None
    assert sim.world.all_structures() == []
    assert StructureRemovedEvent(5, structure.id, ASH) in result.events
    assert structure.id in sim.changes.structures_deleted


def test_remove_a_wall_of_a_shelter_from_outside_removes_it(sim):
    succeeds(sim, ASH, BuildShelterAction())
    succeeds(sim, BIRCH, RemoveWallAction(Direction.WEST))
    assert sim.world.all_structures() == []


# ------------------------------------------------------------------ build_shelter


def test_build_shelter_encloses_the_cell(sim):
    before = inventory_total(sim)
    result = succeeds(sim, ASH, BuildShelterAction(), tick=6)
    assert all(sim.world.has_wall(HERE, d) for d in CARDINALS)
    structure = sim.world.structure_at(HERE)
    assert structure is not None
    assert structure.interior == {HERE}
    assert structure.created_by == ASH
    assert [type(e) for e in result.events] == (
        [WallPlacedEvent] * 4 + [DoorPlacedEvent, StructureDetectedEvent]
    )
    assert result.events[-1] == StructureDetectedEvent(6, structure.id, 1, ASH)
    assert sim.world.has_door(HERE, Direction.SOUTH)
    # Eight planks make the four walls; the door takes the next door material, wood.
    assert agent(sim, ASH).inventory.count("plank") == 8 - 4 * COST
    assert agent(sim, ASH).inventory.count("wood") == 10 - DOOR
    assert inventory_total(sim) == before
    assert structure.id in sim.changes.structures_saved


def test_build_shelter_uses_walls_already_standing(sim):
    sim.world.place_wall(HERE, Direction.NORTH)
    result = succeeds(sim, ASH, BuildShelterAction())
    assert result.data["walls"] == ["east", "south", "west"]
    assert agent(sim, ASH).inventory.count("plank") == 8 - 3 * COST - DOOR
    assert sim.world.structure_at(HERE) is not None


def test_build_shelter_mixes_materials(sim):
    give_stuff(sim, ASH, plank=COST, wood=COST + DOOR, stone=COST, clay_brick=COST)
    succeeds(sim, ASH, BuildShelterAction())
    assert agent(sim, ASH).inventory.stacks == {}
    used = sorted(m for parts in sim.world.edge_materials.values() for m, _ in parts)
    assert used == ["clay_brick", "plank", "stone", "wood", "wood"]  # the door is wood


def test_build_shelter_without_enough_materials_changes_nothing(sim):
    give_stuff(sim, ASH, plank=4 * COST - 1)
    result = fails(sim, ASH, BuildShelterAction())
    assert f"needs 4 more walls: {4 * COST} units" in result.message
    assert not any(sim.world.has_wall(HERE, d) for d in CARDINALS)


def test_build_shelter_with_nothing_is_refused(sim):
    fails(sim, CEDAR, BuildShelterAction())


@pytest.mark.parametrize("start", [Position(0, 8), Position(8, 0), Position(19, 19)])
def test_build_shelter_against_the_world_edge_is_refused(sim, start):
    put(sim, ASH, start)
    result = fails(sim, ASH, BuildShelterAction())
    assert "world's edge" in result.message


def test_build_shelter_when_already_inside_one_is_refused(sim):
    succeeds(sim, ASH, BuildShelterAction())
    result = fails(sim, ASH, BuildShelterAction())
    assert result.message == "you are already inside a shelter"


def test_build_shelter_leaves_a_door_to_the_south(sim):
    succeeds(sim, ASH, BuildShelterAction())
    assert sim.world.has_door(HERE, Direction.SOUTH)
    succeeds(sim, ASH, WalkAction(Direction.SOUTH))


# ------------------------------------------------------------------ structures stay true


def test_opening_two_shelters_into_one_leaves_one_structure(sim):
    give_stuff(sim, BIRCH, plank=10)
    succeeds(sim, ASH, BuildShelterAction())
    succeeds(sim, BIRCH, BuildShelterAction())
    assert len(sim.world.all_structures()) == 2
    succeeds(sim, ASH, RemoveWallAction(Direction.EAST))
    room = {HERE, START[BIRCH]}
    assert enclosed(sim, HERE) == room
    structure = sim.world.structure_at(HERE)
    assert structure is not None and structure.interior == room


def test_splitting_a_structure_leaves_each_half_its_own(sim):
    east = HERE.step(Direction.EAST)
    for pos in (HERE, east):
        sim.world.place_wall(pos, Direction.NORTH)
        sim.world.place_wall(pos, Direction.SOUTH)
    sim.world.place_wall(HERE, Direction.WEST)
    put(sim, ASH, east)
    succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    assert sim.world.structure_at(HERE).interior == {HERE, east}
    put(sim, ASH, HERE)
    succeeds(sim, ASH, PlaceWallAction(Direction.EAST))
    for pos in (HERE, east):
        assert enclosed(sim, pos) == {pos}
        assert sim.world.structure_at(pos).interior == {pos}


# ------------------------------------------------------------------ structures stay true


@pytest.mark.parametrize("seed", range(4))
def test_structures_are_always_exactly_the_enclosed_areas(sim, seed):
    """Walls going up and coming down in a small patch, shelters among them: after
    every action the structures' interiors are the enclosed areas found from scratch
    (a wall whose two sides stay joined is let through without a flood; this is what
    makes that safe)."""
    import random

    rng = random.Random(seed)
    give_stuff(sim, ASH, plank=100_000)
    world = sim.world
    patch = [Position(x, y) for x in range(6, 13) for y in range(5, 12)
             if world.is_passable(Position(x, y))]
    everywhere = [Position(x, y) for y in range(world.height) for x in range(world.width)]
    closed_at_some_point = 0
    for _ in range(200):
        put(sim, ASH, rng.choice(patch))
        roll = rng.random()
        action = (BuildShelterAction() if roll < 0.05 else
                  RemoveWallAction(rng.choice(CARDINALS)) if roll < 0.3 else
                  PlaceDoorAction(rng.choice(CARDINALS)) if roll < 0.35 else
                  PlaceWallAction(rng.choice(CARDINALS)))
        sim.engine.execute_now(ASH, action, 1)
        areas = enclosed_regions(world.wall_east, world.wall_south, everywhere)
        assert {s.interior for s in world.all_structures()} == set(areas)
        closed_at_some_point += bool(areas)
    assert closed_at_some_point > 10
