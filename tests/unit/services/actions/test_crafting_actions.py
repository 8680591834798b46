"""combine, work and apply through the engine, with the shipped recipe book."""

from __future__ import annotations

import pytest

from core.actions import ApplyAction, CombineAction, WorkAction
from core.agent import Inventory
from core.events import ItemCraftedEvent
from core.objects import Item
from tests.unit.services.actions.conftest import (
    ASH,
    AXE,
    BOWL,
    CEDAR,
    agent,
    fails,
    fails_tool,
    succeeds,
)


def holding(sim, name, stacks: dict[str, int], items: tuple[Item, ...] = ()):
    sim.agents.set_inventory(name, Inventory(stacks, items))


# ------------------------------------------------------------------ work


def test_work_wood_split_makes_four_planks(sim):
    result = succeeds(sim, ASH, WorkAction("wood", "split"), tick=7)
    inv = agent(sim, ASH).inventory
    assert inv.count("wood") == 9
    assert inv.count("plank") == 12
    assert result.events == (ItemCraftedEvent(7, ASH, "work", ("wood",), "plank", 4),)
    assert result.data["output"] == "plank"
    assert result.data["quantity"] == 4
    assert result.message == "you make 4 plank"
    assert ASH in sim.changes.agents


def test_work_an_unstackable_thing_makes_a_new_unique_item(sim):
    result = succeeds(sim, ASH, WorkAction("wood", "carve"))
    bowls = [i for i in agent(sim, ASH).inventory.items if i.item_type == "carved_bowl"]
    assert len(bowls) == 2
    new = next(b for b in bowls if b != BOWL)
    assert new.id != BOWL.id
    assert new.properties == ("wooden", "container")
    assert result.data["discoveries"] == ["containers"]
    assert "it gives you ideas: containers" in result.message


def test_apply_uses_up_a_unique_target(sim):
    holding(sim, ASH, {"grit": 1}, (BOWL,))
    succeeds(sim, ASH, ApplyAction("grit", "carved_bowl"))
    items = agent(sim, ASH).inventory.items
    assert BOWL not in items
    assert [i.item_type for i in items] == ["polished_bowl"]


def test_work_something_not_carried_is_refused(sim):
    result = fails(sim, ASH, WorkAction("fiber", "twist"))
    assert result.message == "missing fiber (need 1, carrying 0)"


def test_work_with_a_technique_that_does_nothing_gives_hints(sim):
    result = fails(sim, ASH, WorkAction("wood", "twist"))
    assert result.message.startswith("nothing comes of twisting wood")
    assert "wood can be split or carved" in result.data["hints"]


def test_work_with_an_unknown_technique_gives_hints(sim):
    result = fails(sim, ASH, WorkAction("wood", "smash"))
    assert "unknown technique 'smash'" in result.message
    assert result.data["hints"]
    assert all(hint in result.message for hint in result.data["hints"])


def test_work_with_a_name_that_is_not_an_item_is_refused(sim):
    result = fails(sim, ASH, WorkAction("Wood!", "split"))
    assert "not an item name" in result.message


async def test_work_without_a_technique_is_refused_at_the_tool(sim):
    result = await fails_tool(sim, ASH, "work", {"item": "wood"})
    assert result.message == "work needs technique"


async def test_work_with_an_empty_technique_is_refused(sim):
    result = await fails_tool(sim, ASH, "work", {"item": "wood", "technique": ""})
    assert "needs a technique" in result.message


# ------------------------------------------------------------------ combine


@pytest.mark.parametrize("order", [("clay", "grass"), ("grass", "clay")])
def test_combine_clay_and_grass_in_any_order(sim, order):
    result = succeeds(sim, ASH, CombineAction(order), tick=1)
    inv = agent(sim, ASH).inventory
    assert (inv.count("clay"), inv.count("grass"), inv.count("adobe_brick")) == (2, 1, 2)
    (event,) = result.events
    assert (event.method, sorted(event.inputs), event.output, event.quantity) == (
        "combine", ["clay", "grass"], "adobe_brick", 2
    )


def test_combine_into_a_unique_tool(sim):
    holding(sim, ASH, {"stick": 1, "cobblestone": 1, "cord": 1})
    result = succeeds(sim, ASH, CombineAction(("cord", "stick", "cobblestone")))
    inv = agent(sim, ASH).inventory
    assert inv.stacks == {}
    (axe,) = inv.items
    assert axe.item_type == "stone_axe"
    assert result.data["discoveries"] == ["tools"]


def test_combine_with_something_missing_is_refused(sim):
    holding(sim, ASH, {"stick": 1, "cord": 1})
    result = fails(sim, ASH, CombineAction(("stick", "cobblestone", "cord")))
    assert result.message == "missing cobblestone (need 1, carrying 0)"


def test_combine_counts_each_name(sim):
    holding(sim, ASH, {"clay": 1})
    result = fails(sim, ASH, CombineAction(("clay", "clay")))
    assert "clay (need 2, carrying 1)" in result.message


def test_combine_things_that_make_nothing_is_refused_with_hints(sim):
    result = fails(sim, ASH, CombineAction(("wood", "stone")))
    assert result.message.startswith("nothing comes of combining stone and wood")
    assert isinstance(result.data["hints"], list)


async def test_combine_one_thing_is_refused_at_the_tool(sim):
    result = await fails_tool(sim, ASH, "combine", {"items": ["wood"]})
    assert "at least two" in result.message


# ------------------------------------------------------------------ apply


def test_apply_keeps_the_tool_and_uses_the_target(sim):
    result = succeeds(sim, ASH, ApplyAction("stone_axe", "wood"), tick=2)
    inv = agent(sim, ASH).inventory
    assert AXE in inv.items
    assert inv.count("wood") == 9
    assert inv.count("plank") == 14
    assert result.events == (ItemCraftedEvent(2, ASH, "apply", ("wood",), "plank", 6),)


def test_apply_with_a_stacked_tool_keeps_the_tool(sim):
    holding(sim, ASH, {"flat_stone": 1, "clay": 2})
    succeeds(sim, ASH, ApplyAction("flat_stone", "clay"))
    inv = agent(sim, ASH).inventory
    assert (inv.count("flat_stone"), inv.count("clay"), inv.count("clay_tile")) == (1, 1, 2)


def test_apply_without_the_tool_is_refused(sim):
    holding(sim, CEDAR, {"wood": 3})
    result = fails(sim, CEDAR, ApplyAction("stone_axe", "wood"))
    assert result.message == "missing stone_axe (need 1, carrying 0)"


def test_apply_without_the_target_is_refused(sim):
    holding(sim, ASH, {}, (AXE,))
    result = fails(sim, ASH, ApplyAction("stone_axe", "wood"))
    assert result.message == "missing wood (need 1, carrying 0)"


def test_apply_the_wrong_way_round_hints_at_it(sim):
    result = fails(sim, ASH, ApplyAction("wood", "stone_axe"))
    assert "it might work the other way round" in result.data["hints"]
    assert AXE in agent(sim, ASH).inventory.items


def test_apply_something_that_is_not_a_tool(sim):
    result = fails(sim, ASH, ApplyAction("carved_bowl", "wood"))
    assert "carved_bowl isn't a tool for anything" in result.data["hints"]
