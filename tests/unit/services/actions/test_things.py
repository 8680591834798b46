"""take, drop, give, place_item and gather: things move, and nothing appears or vanishes."""

from __future__ import annotations

import pytest

from core.actions import (
    DropAction,
    GatherAction,
    GiveAction,
    PlaceItemAction,
    TakeAction,
)
from core.events import (
    ItemDroppedEvent,
    ItemGivenEvent,
    ItemPlacedEvent,
    ItemTakenEvent,
    ResourceGatheredEvent,
)
from core.objects import Item, PlacedItem, Sign
from core.types import Direction, Position
from tests.unit.services.actions.conftest import (
    ASH,
    AXE,
    BIRCH,
    BOWL,
    CEDAR,
    COAST_CELL,
    DUSK,
    FOREST_CELL,
    GATHERING,
    GRASS_CELL,
    HILL_CELL,
    SAND_CELL,
    START,
    STONE_CELL,
    agent,
    fails,
    fails_tool,
    put,
    succeeds,
)

HERE = START[ASH]
NORTH = HERE.step(Direction.NORTH)
CUP = Item("cup-1", "clay_vessel", ("clay",))


def pile(sim, object_id: str, pos: Position, resource: str, quantity: int) -> PlacedItem:
    obj = PlacedItem(object_id, pos, None, 0, resource=resource, quantity=quantity)
    sim.world.add_object(obj)
    return obj


def lay(sim, object_id: str, pos: Position, item: Item) -> PlacedItem:
    obj = PlacedItem(object_id, pos, None, 0, item=item)
    sim.world.add_object(obj)
    return obj


def piles_at(sim, pos: Position) -> list[PlacedItem]:
    return [o for o in sim.world.objects_at(pos) if isinstance(o, PlacedItem)]


# ------------------------------------------------------------------ take


def test_take_a_pile_here(sim):
    pile(sim, "p1", HERE, "wood", 3)
    result = succeeds(sim, ASH, TakeAction(), tick=5)
    assert agent(sim, ASH).inventory.count("wood") == 13
    assert sim.world.get_object("p1") is None
    assert result.events == (ItemTakenEvent(5, ASH, HERE, "wood", 3),)
    assert "p1" in sim.changes.objects_deleted


def test_take_a_unique_item_keeps_its_identity(sim):
    lay(sim, "p2", HERE, CUP)
    succeeds(sim, ASH, TakeAction())
    assert CUP in agent(sim, ASH).inventory.items
    assert sim.world.objects_at(HERE) == []


def test_take_by_name_picks_that_thing(sim):
    pile(sim, "p1", HERE, "wood", 3)
    lay(sim, "p2", HERE, CUP)
    result = succeeds(sim, ASH, TakeAction(item=" Clay_Vessel "))
    assert result.data["item"] == "clay_vessel"
    assert CUP in agent(sim, ASH).inventory.items
    assert [o.id for o in piles_at(sim, HERE)] == ["p1"]
    assert agent(sim, ASH).inventory.count("wood") == 10


def test_take_from_the_next_cell(sim):
    pile(sim, "p1", NORTH, "stone", 2)
    succeeds(sim, ASH, TakeAction(Direction.NORTH))
    assert agent(sim, ASH).inventory.count("stone") == 7
    assert piles_at(sim, NORTH) == []


def test_take_through_a_door(sim):
    pile(sim, "p1", NORTH, "stone", 2)
    sim.world.place_wall(HERE, Direction.NORTH)
    sim.world.place_door(HERE, Direction.NORTH)
    succeeds(sim, ASH, TakeAction(Direction.NORTH))
    assert agent(sim, ASH).inventory.count("stone") == 7


def test_take_with_nothing_there_is_refused(sim):
    result = fails(sim, ASH, TakeAction())
    assert result.message == "there is nothing to take here"


def test_take_a_sign_is_refused(sim):
    sim.world.add_object(Sign("s1", HERE, BIRCH, 0, text="mine"))
    fails(sim, ASH, TakeAction())
    assert sim.world.sign_at(HERE) is not None


def test_take_by_a_name_not_there_is_refused(sim):
    pile(sim, "p1", HERE, "wood", 3)
    result = fails(sim, ASH, TakeAction(item="rope"))
    assert result.message == "there is no rope here"


def test_take_through_a_wall_is_refused(sim):
    pile(sim, "p1", NORTH, "stone", 2)
    sim.world.place_wall(HERE, Direction.NORTH)
    result = fails(sim, ASH, TakeAction(Direction.NORTH))
    assert "wall" in result.message


def test_take_past_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(0, 5))
    result = fails(sim, ASH, TakeAction(Direction.WEST))
    assert result.message == "the world ends to the west"


# ------------------------------------------------------------------ drop


def test_drop_part_of_a_stack(sim):
    result = succeeds(sim, ASH, DropAction("wood", 3), tick=2)
    assert agent(sim, ASH).inventory.count("wood") == 7
    (dropped,) = piles_at(sim, HERE)
    assert (dropped.resource, dropped.quantity, dropped.created_by) == ("wood", 3, ASH)
    assert result.events == (ItemDroppedEvent(2, ASH, HERE, "wood", 3),)
    assert dropped.id in sim.changes.objects_saved


def test_dropping_more_of_the_same_grows_one_pile(sim):
    succeeds(sim, ASH, DropAction("wood", 3))
    succeeds(sim, ASH, DropAction("wood", 2))
    (dropped,) = piles_at(sim, HERE)
    assert dropped.quantity == 5
    assert agent(sim, ASH).inventory.count("wood") == 5


def test_drop_the_whole_stack(sim):
    succeeds(sim, ASH, DropAction("wood", 10))
    assert "wood" not in agent(sim, ASH).inventory.stacks


def test_drop_a_unique_item(sim):
    succeeds(sim, ASH, DropAction("carved_bowl"))
    assert BOWL not in agent(sim, ASH).inventory.items
    (dropped,) = piles_at(sim, HERE)
    assert dropped.item == BOWL


def test_drop_more_than_carried_is_refused(sim):
    result = fails(sim, ASH, DropAction("wood", 11))
    assert result.message == "you have only 10 wood"


def test_drop_two_of_a_unique_item_is_refused(sim):
    result = fails(sim, ASH, DropAction("stone_axe", 2))
    assert "one of a kind" in result.message


def test_drop_something_not_carried_is_refused(sim):
    result = fails(sim, ASH, DropAction("rope"))
    assert "you carry no 'rope'" in result.message
    assert "wood" in result.message  # and it says what is carried


def test_drop_with_empty_hands_is_refused(sim):
    result = fails(sim, CEDAR, DropAction("wood"))
    assert "(you have: nothing)" in result.message


@pytest.mark.parametrize("quantity", [0, -3])
async def test_drop_quantity_below_one_is_refused_at_the_tool(sim, quantity):
    result = await fails_tool(sim, ASH, "drop", {"item": "wood", "quantity": quantity})
    assert "at least 1" in result.message


# ------------------------------------------------------------------ give


def test_give_part_of_a_stack_to_a_neighbour(sim):
    result = succeeds(sim, ASH, GiveAction(BIRCH, "plank", 3), tick=1)
    assert agent(sim, ASH).inventory.count("plank") == 5
    assert agent(sim, BIRCH).inventory.count("plank") == 3
    assert result.events == (ItemGivenEvent(1, ASH, BIRCH, "plank", 3),)
    assert {ASH, BIRCH} <= sim.changes.agents


def test_give_adds_to_the_recipients_stack(sim):
    succeeds(sim, ASH, GiveAction(BIRCH, "wood", 2))
    assert agent(sim, BIRCH).inventory.count("wood") == 3


def test_give_a_unique_item(sim):
    succeeds(sim, ASH, GiveAction(BIRCH, "stone_axe"))
    assert AXE not in agent(sim, ASH).inventory.items
    assert AXE in agent(sim, BIRCH).inventory.items


def test_give_to_someone_on_the_same_cell(sim):
    put(sim, CEDAR, HERE)
    succeeds(sim, ASH, GiveAction(CEDAR, "clay"))
    assert agent(sim, CEDAR).inventory.count("clay") == 1


@pytest.mark.parametrize("other", [CEDAR, DUSK])
def test_give_to_someone_not_beside_you_is_refused(sim, other):
    result = fails(sim, ASH, GiveAction(other, "wood"))
    assert "too far away" in result.message


def test_give_to_yourself_is_refused(sim):
    result = fails(sim, ASH, GiveAction(ASH, "wood"))
    assert result.message == "you cannot give to yourself"


@pytest.mark.parametrize("nobody", ["Nobody", "birch", ""])
def test_give_to_someone_unknown_is_refused(sim, nobody):
    result = fails(sim, ASH, GiveAction(nobody, "wood"))
    assert "nobody called" in result.message


def test_give_something_not_carried_is_refused(sim):
    result = fails(sim, ASH, GiveAction(BIRCH, "rope"))
    assert "you carry no 'rope'" in result.message


def test_give_more_than_carried_is_refused(sim):
    result = fails(sim, ASH, GiveAction(BIRCH, "plank", 9))
    assert result.message == "you have only 8 plank"


def test_give_two_of_a_unique_item_is_refused(sim):
    fails(sim, ASH, GiveAction(BIRCH, "carved_bowl", 2))


# ------------------------------------------------------------------ place_item


def test_place_item_at_your_feet(sim):
    result = succeeds(sim, ASH, PlaceItemAction("plank"), tick=3)
    assert agent(sim, ASH).inventory.count("plank") == 7
    (placed,) = piles_at(sim, HERE)
    assert (placed.resource, placed.quantity) == ("plank", 1)
    assert result.events == (ItemPlacedEvent(3, ASH, HERE, "plank"),)
    assert "at your feet" in result.message


def test_place_item_in_a_direction(sim):
    succeeds(sim, ASH, PlaceItemAction("carved_bowl", Direction.NORTH))
    (placed,) = piles_at(sim, NORTH)
    assert placed.item == BOWL
    assert BOWL not in agent(sim, ASH).inventory.items


def test_place_item_onto_a_pile_of_the_same(sim):
    pile(sim, "p1", NORTH, "plank", 2)
    succeeds(sim, ASH, PlaceItemAction("plank", Direction.NORTH))
    assert [(p.id, p.quantity) for p in piles_at(sim, NORTH)] == [("p1", 3)]


def test_place_item_into_water_is_refused(sim):
    put(sim, ASH, COAST_CELL)
    result = fails(sim, ASH, PlaceItemAction("plank", Direction.SOUTH))
    assert "water to the south cannot hold anything" in result.message


def test_place_item_through_a_wall_is_refused(sim):
    sim.world.place_wall(HERE, Direction.NORTH)
    result = fails(sim, ASH, PlaceItemAction("plank", Direction.NORTH))
    assert "wall" in result.message


def test_place_item_past_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(5, 0))
    fails(sim, ASH, PlaceItemAction("plank", Direction.NORTH))


def test_place_item_not_carried_is_refused(sim):
    result = fails(sim, ASH, PlaceItemAction("rope", Direction.NORTH))
    assert "you carry no 'rope'" in result.message


# ------------------------------------------------------------------ gather


@pytest.mark.parametrize(
    ("cell", "resource", "terrain"),
    [
        (FOREST_CELL, "wood", "forest"),
        (STONE_CELL, "stone", "stone"),
        (SAND_CELL, "clay", "sand"),
        (GRASS_CELL, "grass", "grass"),
    ],
)
def test_gather_yields_the_resource_of_the_terrain(sim, cell, resource, terrain):
    put(sim, ASH, cell)
    had = agent(sim, ASH).inventory.count(resource)
    result = succeeds(sim, ASH, GatherAction(), tick=6)
    got = GATHERING.yield_per_gather
    assert agent(sim, ASH).inventory.count(resource) == had + got
    assert result.events == (ResourceGatheredEvent(6, ASH, cell, resource, got),)
    assert result.data["left"] == GATHERING.cell_capacity - got
    assert f"from the {terrain}" in result.message
    assert cell in sim.gathering.dirty


def test_gather_from_the_next_cell(sim):
    put(sim, ASH, Position(6, 3))
    succeeds(sim, ASH, GatherAction(Direction.WEST))
    assert agent(sim, ASH).inventory.count("wood") == 11
    assert sim.gathering.available(Position(5, 3), 0) == GATHERING.cell_capacity - 1


@pytest.mark.parametrize(
    ("cell", "direction", "terrain"),
    [
        (COAST_CELL, Direction.SOUTH, "water"),
        (COAST_CELL, Direction.DOWN, "coast"),
        (HILL_CELL, Direction.DOWN, "hill"),
    ],
)
def test_gather_where_nothing_grows_is_refused(sim, cell, direction, terrain):
    put(sim, ASH, cell)
    result = fails(sim, ASH, GatherAction(direction))
    assert f"nothing to gather from {terrain}" in result.message


def test_a_cell_is_spent_after_its_capacity_then_regrows(sim):
    for n in range(GATHERING.cell_capacity):
        assert succeeds(sim, ASH, GatherAction(), tick=0).data["left"] == (
            GATHERING.cell_capacity - n - 1
        )
    assert agent(sim, ASH).inventory.count("grass") == 2 + GATHERING.cell_capacity
    spent = fails(sim, ASH, GatherAction(), tick=0)
    assert "spent for now" in spent.message
    fails(sim, ASH, GatherAction(), tick=GATHERING.regrow_ticks - 1)
    result = succeeds(sim, ASH, GatherAction(), tick=GATHERING.regrow_ticks)
    assert result.data["left"] == 0
    fails(sim, ASH, GatherAction(), tick=GATHERING.regrow_ticks)


def test_a_spent_cell_does_not_spend_its_neighbour(sim):
    for _ in range(GATHERING.cell_capacity):
        succeeds(sim, ASH, GatherAction())
    succeeds(sim, ASH, GatherAction(Direction.NORTH))


def test_gather_through_a_wall_is_refused(sim):
    put(sim, ASH, Position(6, 3))
    sim.world.place_wall(Position(6, 3), Direction.WEST)
    result = fails(sim, ASH, GatherAction(Direction.WEST))
    assert "wall" in result.message


def test_gather_past_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(0, 8))
    fails(sim, ASH, GatherAction(Direction.WEST))
