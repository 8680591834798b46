"""Crafting against the shipped recipe book: every recipe works, and misses are explained."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config import Recipe, RecipeBook, load_config
from core.agent import Inventory
from core.objects import Item
from services.crafting import CraftingService
from services.crafting_hints import MAX_HINTS
from services.crafting_request import TECHNIQUES, CraftingResult

BOOK = load_config(None).recipes
RECIPES = list(BOOK.recipes)
UNSTACKABLE = {recipe.name for recipe in RECIPES if not recipe.output_stackable}
ITEM_NAMES = sorted({name for r in RECIPES for name in (r.name, *r.inputs)})


@pytest.fixture(scope="module")
def crafting() -> CraftingService:
    return CraftingService(BOOK)


def ids(prefix: str = "item") -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter)}"


def holding(*names: str) -> Inventory:
    """An inventory holding exactly these, each the way the world would hold it.

    Things a recipe makes unstackable are unique items; everything else is a stack.
    """
    stacks: Counter[str] = Counter()
    items: list[Item] = []
    for n, name in enumerate(names):
        if name in UNSTACKABLE:
            items.append(Item.unique(name, f"held-{n}", ("held",)))
        else:
            stacks[name] += 1
    return Inventory(dict(stacks), tuple(items))


def held(inventory: Inventory, name: str) -> int:
    return inventory.count(name) + sum(1 for i in inventory.items if i.item_type == name)


def book(*recipes: dict[str, object]) -> RecipeBook:
    return RecipeBook.model_validate({"recipes": list(recipes)})


# ------------------------------------------------------------------ every recipe


@pytest.mark.parametrize(
    "recipe", RECIPES, ids=[f"{r.action}-{r.name}-{i}" for i, r in enumerate(RECIPES)]
)
def test_every_shipped_recipe_crafts_from_exactly_its_inputs(
    crafting: CraftingService, recipe: Recipe
) -> None:
    before = holding(*recipe.inputs)
    if recipe.action == "apply":
        tool, target = recipe.inputs
        assert crafting.find_apply_recipe(tool, target) is recipe
        after, result = crafting.apply_into(before, tool, target, new_item_id=ids())
    else:
        assert crafting.find_recipe(recipe.action, recipe.inputs, recipe.technique) is recipe
        after, result = crafting.craft_into(
            before, recipe.action, recipe.inputs, recipe.technique, new_item_id=ids()
        )

    assert result.success, result.message
    assert result.recipe is recipe
    assert result.output_type == recipe.name
    assert result.output_quantity == recipe.output_quantity
    assert result.output_stackable == recipe.output_stackable
    assert result.properties == tuple(recipe.properties)
    assert result.discoveries == tuple(recipe.discoveries)
    assert result.hints == ()

    # What is left is the kept tool (for apply) plus exactly the output.
    kept = holding(recipe.inputs[0]) if recipe.action == "apply" else Inventory()
    if recipe.output_stackable:
        expected = kept.add_resource(recipe.name, recipe.output_quantity)
        assert result.created_items == ()
    else:
        made = tuple(
            Item.unique(recipe.name, f"item-{n}", tuple(recipe.properties))
            for n in range(1, recipe.output_quantity + 1)
        )
        expected = Inventory(kept.stacks, (*kept.items, *made))
        assert result.created_items == made
    assert after == expected


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.name for r in RECIPES])
def test_try_craft_agrees_with_craft_into(crafting: CraftingService, recipe: Recipe) -> None:
    dry = crafting.try_craft(recipe.action, recipe.inputs, recipe.technique)
    _, real = crafting.craft_into(
        holding(*recipe.inputs), recipe.action, recipe.inputs, recipe.technique,
        new_item_id=ids(),
    )
    assert dry.success and real.success
    assert (dry.recipe, dry.output_type, dry.output_quantity, dry.consumed_inputs) == (
        real.recipe, real.output_type, real.output_quantity, real.consumed_inputs
    )
    consumed = recipe.inputs[1:] if recipe.action == "apply" else recipe.inputs
    assert dict(dry.consumed_inputs) == Counter(consumed)


# ------------------------------------------------------------------------ combine


@pytest.mark.parametrize(
    "recipe", [r for r in RECIPES if r.action == "combine"], ids=lambda r: r.name
)
def test_combine_ignores_the_order_of_inputs(crafting: CraftingService, recipe: Recipe) -> None:
    for order in itertools.permutations(recipe.inputs):
        assert crafting.find_recipe("combine", list(order)) is recipe
    reordered = list(reversed(recipe.inputs))
    after, result = crafting.craft_into(
        holding(*recipe.inputs), "combine", reordered, new_item_id=ids()
    )
    assert result.success, result.message
    assert held(after, recipe.name) == recipe.output_quantity


def test_combine_counts_inputs_as_a_multiset() -> None:
    service = CraftingService(book(
        {"name": "rack", "action": "combine", "inputs": ["stick", "stick", "cord"]},
    ))
    one_stick = Inventory({"stick": 1, "cord": 1})
    after, result = service.craft_into(
        one_stick, "combine", ["stick", "cord", "stick"], new_item_id=ids()
    )
    assert not result.success
    assert after is one_stick
    assert "stick (need 2, carrying 1)" in result.message

    assert service.find_recipe("combine", ["stick", "cord"]) is None
    after, result = service.craft_into(
        Inventory({"stick": 3, "cord": 1}), "combine", ["cord", "stick", "stick"],
        new_item_id=ids(),
    )
    assert result.success, result.message
    assert result.consumed_inputs == (("stick", 2), ("cord", 1))
    assert after == Inventory({"stick": 1, "rack": 1})


# --------------------------------------------------------------------------- work


@pytest.mark.parametrize(
    ("item", "wrong", "hint"),
    [
        ("wood", "break", "wood can be split or carved"),
        ("stone", "carve", "stone can be broken, flattened or ground"),
        ("grass", "split", "grass can be stripped or woven"),
        ("fiber", "carve", "fiber can be woven or twisted"),
        ("clay", "grind", "clay can be shaped or hollowed"),
        ("plank", "weave", "plank can be split or carved"),
    ],
)
def test_wrong_technique_hints_at_the_valid_ones(
    crafting: CraftingService, item: str, wrong: str, hint: str
) -> None:
    result = crafting.try_craft("work", [item], wrong)
    assert not result.success
    assert result.recipe is None
    assert result.hints[0] == hint
    assert hint in result.message
    assert crafting.get_hints("work", [item], wrong) == list(result.hints)


@pytest.mark.parametrize("technique", ["chop", "Split", None, ""])
def test_unknown_or_missing_technique_fails_with_the_same_hint(
    crafting: CraftingService, technique: str | None
) -> None:
    result = crafting.try_craft("work", ["wood"], technique)
    assert not result.success
    assert "technique" in result.message
    assert "split" in result.message  # the vocabulary is named
    assert result.hints[0] == "wood can be split or carved"


def test_every_technique_reads_as_a_participle() -> None:
    """A technique added to the vocabulary without its wording would read as the bare verb."""
    service = CraftingService(book(*(
        {"name": f"thing_{t}", "action": "work", "inputs": ["thing"], "technique": t}
        for t in TECHNIQUES
    )))
    (hint, *_) = service.get_hints("work", ["thing"], None)
    assert hint == (
        "thing can be split, broken, stripped, shaped, hollowed, carved, woven, flattened, "
        "ground or twisted"
    )


def test_a_right_technique_gets_no_hints(crafting: CraftingService) -> None:
    assert crafting.get_hints("work", ["wood"], "split") == []
    assert crafting.get_hints("combine", ["cord", "stick"]) == []
    assert crafting.get_hints("apply", ["torch", "wood"]) == []


def test_work_hints_point_at_tools_for_things_not_worked_by_hand(
    crafting: CraftingService,
) -> None:
    assert crafting.get_hints("work", ["carved_bowl"], "carve") == [
        "carved_bowl can be worked with some tool"
    ]
    assert crafting.get_hints("work", ["polished_bowl"], "carve") == [
        "polished_bowl isn't used to make anything"
    ]


# ------------------------------------------------------------------ combine hints


def test_a_partial_combine_names_how_many_more_but_not_what(crafting: CraftingService) -> None:
    hints = crafting.get_hints("combine", ["fiber"])
    assert hints[0] == "fiber might combine with one more thing"
    assert not any("stick" in hint for hint in hints)  # torch's other input stays secret

    assert crafting.get_hints("combine", ["cord"])[:2] == [
        "cord might combine with one more thing",
        "cord might combine with two more things",
    ]
    assert crafting.get_hints("combine", ["cord", "cobblestone"]) == [
        "cobblestone and cord might combine with one more thing"
    ]


def test_combine_hints_do_not_depend_on_input_order(crafting: CraftingService) -> None:
    for names in (["cord", "cobblestone"], ["stick", "fiber", "stone"], ["torch", "wood"]):
        assert crafting.get_hints("combine", names) == crafting.get_hints(
            "combine", list(reversed(names))
        )


def test_combine_hints_for_too_many_and_for_the_wrong_action(crafting: CraftingService) -> None:
    assert "some of these might combine without the rest" in crafting.get_hints(
        "combine", ["stick", "fiber", "stone"]
    )
    assert "try using one of these on the other" in crafting.get_hints(
        "combine", ["torch", "wood"]
    )
    assert crafting.get_hints("combine", ["stick", "stone"]) == [
        "stick might combine with something else",
        "stone doesn't combine with anything",
    ]


def test_combining_one_thing_fails_but_still_hints(crafting: CraftingService) -> None:
    result = crafting.try_craft("combine", ["fiber"])
    assert not result.success
    assert "at least two" in result.message
    assert "fiber might combine with one more thing" in result.hints


# -------------------------------------------------------------------------- apply


def test_apply_keeps_the_tool_and_consumes_the_target(crafting: CraftingService) -> None:
    axe = Item.unique("stone_axe", "axe-1", ("tool", "cutting"))
    before = Inventory({"wood": 3}, (axe,))
    after, result = crafting.apply_into(before, "stone_axe", "wood", new_item_id=ids())
    assert result.success, result.message
    assert result.consumed_inputs == (("wood", 1),)
    assert result.consumed_items == ()
    assert after == Inventory({"wood": 2, "plank": 6}, (axe,))

    # A stackable tool stays too: the torch is not burnt up by charring wood.
    after, result = crafting.apply_into(
        Inventory({"torch": 1, "wood": 1}), "torch", "wood", new_item_id=ids()
    )
    assert result.success
    assert after == Inventory({"torch": 1, "charcoal": 2})


def test_apply_consumes_a_unique_target(crafting: CraftingService) -> None:
    bowl = Item.unique("carved_bowl", "bowl-1", ("wooden", "container"))
    after, result = crafting.apply_into(
        Inventory({"grit": 1}, (bowl,)), "grit", "carved_bowl", new_item_id=ids("new")
    )
    assert result.success, result.message
    assert result.consumed_items == (bowl,)
    assert after == Inventory(
        {"grit": 1}, (Item.unique("polished_bowl", "new-1", ("wooden", "container", "smooth")),)
    )


def test_apply_order_matters(crafting: CraftingService) -> None:
    for recipe in (r for r in RECIPES if r.action == "apply"):
        tool, target = recipe.inputs
        assert crafting.find_recipe("apply", [tool, target]) is recipe
        assert crafting.find_apply_recipe(target, tool) is None
        assert crafting.find_recipe("apply", [target, tool]) is None
    result = crafting.try_apply("wood", "torch")
    assert not result.success
    assert result.hints[0] == "it might work the other way round"


def test_apply_hints_say_what_tool_and_target_are_good_for(crafting: CraftingService) -> None:
    assert crafting.get_hints("apply", ["torch", "stone"]) == [
        "torch is a tool for something else",
        "stone can be worked with some other tool",
    ]
    assert crafting.get_hints("apply", ["wood", "fiber"]) == [
        "wood isn't a tool for anything",
        "no tool works on fiber",
    ]
    assert crafting.get_hints("apply", ["stick", "fiber"])[0] == "these might be combined instead"


# ---------------------------------------------------------------------- inventory


def test_missing_inputs_change_nothing_and_are_named(crafting: CraftingService) -> None:
    before = Inventory({"stick": 1, "cobblestone": 1})
    after, result = crafting.craft_into(
        before, "combine", ["stick", "cobblestone", "cord"], new_item_id=ids()
    )
    assert not result.success
    assert after is before
    assert result.message == "missing cord (need 1, carrying 0)"
    assert result.recipe is None and result.consumed_inputs == ()

    after, result = crafting.apply_into(Inventory({"wood": 1}), "stone_axe", "wood",
                                        new_item_id=ids())
    assert not result.success
    assert "stone_axe" in result.message and "wood" not in result.message


def test_holding_the_inputs_is_checked_before_the_recipe(crafting: CraftingService) -> None:
    """An agent cannot learn what combines by naming things it does not have."""
    _, result = crafting.craft_into(Inventory(), "combine", ["stick", "fiber"], new_item_id=ids())
    assert not result.success
    assert result.hints == ()
    assert "stick" in result.message and "fiber" in result.message


def test_no_recipe_changes_nothing(crafting: CraftingService) -> None:
    before = Inventory({"stone": 2})
    after, result = crafting.craft_into(before, "work", ["stone"], "carve", new_item_id=ids())
    assert after is before
    assert result.message.startswith("nothing comes of carving stone; ")


def test_stacks_are_used_before_unique_items() -> None:
    service = CraftingService(book(
        {"name": "plank", "action": "work", "inputs": ["wood"], "technique": "split"},
    ))
    odd = Item.unique("wood", "odd-wood", ("gnarled",))
    first, result = service.craft_into(
        Inventory({"wood": 1}, (odd,)), "work", ["wood"], "split", new_item_id=ids()
    )
    assert result.consumed_items == ()
    assert first == Inventory({"plank": 1}, (odd,))
    second, result = service.craft_into(first, "work", ["wood"], "split", new_item_id=ids())
    assert result.consumed_items == (odd,)
    assert second == Inventory({"plank": 2})


def test_unstackable_outputs_get_distinct_ids(crafting: CraftingService) -> None:
    inventory = Inventory({"wood": 3})
    new_id = ids("bowl")
    for _ in range(3):
        inventory, result = crafting.craft_into(
            inventory, "work", ["wood"], "carve", new_item_id=new_id
        )
        assert result.success
    assert inventory.stacks == {}
    assert [i.id for i in inventory.items] == ["bowl-1", "bowl-2", "bowl-3"]
    assert {i.item_type for i in inventory.items} == {"carved_bowl"}

    service = CraftingService(book({
        "name": "bead", "action": "work", "inputs": ["clay"], "technique": "shape",
        "output_quantity": 3, "output_stackable": False, "properties": ["round"],
    }))
    after, result = service.craft_into(
        Inventory({"clay": 1}), "work", ["clay"], "shape", new_item_id=ids("bead")
    )
    assert [i.id for i in after.items] == ["bead-1", "bead-2", "bead-3"]
    assert all(i.properties == ("round",) for i in after.items)
    assert result.created_items == after.items


@pytest.mark.parametrize("bad_id", ["same", "", 7])
def test_a_bad_new_id_fails_without_changing_anything(bad_id: object) -> None:
    service = CraftingService(book({
        "name": "bead", "action": "work", "inputs": ["clay"], "technique": "shape",
        "output_quantity": 2, "output_stackable": False,
    }))
    before = Inventory({"clay": 1})
    after, result = service.craft_into(
        before, "work", ["clay"], "shape", new_item_id=lambda: bad_id  # type: ignore[arg-type,return-value]
    )
    assert after is before
    assert not result.success
    assert result.message.startswith("could not make bead: ")


# ------------------------------------------------------------------------ helpers


def test_recipes_using_and_known_outputs(crafting: CraftingService) -> None:
    assert [r.name for r in crafting.recipes_using("stick")] == [
        "stone_axe", "stone_hammer", "torch", "fishing_rod", "stool"
    ]
    assert [r.name for r in crafting.recipes_using("torch")] == ["charcoal", "fired_pot"]
    assert crafting.recipes_using("polished_bowl") == []
    assert crafting.known_outputs == {r.name for r in RECIPES}
    assert "wood" not in crafting.known_outputs


def test_crafting_result_refuses_contradictions() -> None:
    with pytest.raises(ValueError, match="successful"):
        CraftingResult(success=True)
    with pytest.raises(ValueError, match="failed"):
        CraftingResult(success=False, output_type="plank", output_quantity=1)


# ------------------------------------------------------------------ bad arguments


@pytest.mark.parametrize(
    ("action", "inputs", "technique", "says"),
    [
        ("", ["wood"], "split", "unknown action"),
        ("smash", ["wood"], None, "unknown action"),
        (None, ["wood"], None, "unknown action"),
        ("work", [], "split", "exactly one"),
        ("work", ["wood", "stone"], "split", "exactly one"),
        ("work", [""], "split", "empty"),
        ("work", ["  "], "split", "empty"),
        ("work", ["Wood"], "split", "not an item name"),
        ("work", [3], "split", "not an item name"),
        ("work", "wood", "split", "list of item names"),
        ("work", None, "split", "list of item names"),
        ("work", ["wood"], "chop", "unknown technique"),
        ("work", ["wood"], 5, "unknown technique"),
        ("combine", ["stick", "fiber"], "split", "only work takes a technique"),
        ("combine", [], None, "at least two"),
        ("apply", ["torch"], None, "exactly two"),
        ("apply", ["torch", "wood", "wood"], None, "exactly two"),
        ("apply", ["torch", "wood"], "carve", "only work takes a technique"),
    ],
)
def test_bad_arguments_fail_cleanly(
    crafting: CraftingService, action: object, inputs: object, technique: object, says: str
) -> None:
    before = Inventory({"wood": 5, "stone": 5, "stick": 5, "fiber": 5, "torch": 1})
    result = crafting.try_craft(action, inputs, technique)  # type: ignore[arg-type]
    assert not result.success
    assert says in result.message
    assert crafting.find_recipe(action, inputs, technique) is None  # type: ignore[arg-type]
    after, into = crafting.craft_into(
        before, action, inputs, technique, new_item_id=ids()  # type: ignore[arg-type]
    )
    assert after is before
    assert into.message == result.message


def test_bad_tool_or_target_fails_cleanly(crafting: CraftingService) -> None:
    assert crafting.find_apply_recipe(["torch"], "wood") is None  # type: ignore[arg-type]
    assert not crafting.try_apply("", "wood").success
    before = Inventory({"wood": 1})
    after, result = crafting.apply_into(before, "torch", None,  # type: ignore[arg-type]
                                        new_item_id=ids())
    assert after is before and not result.success


names = st.one_of(st.sampled_from(ITEM_NAMES), st.text(max_size=12))
actions = st.one_of(st.sampled_from(["combine", "work", "apply"]), st.text(max_size=8))
techniques = st.one_of(st.none(), st.sampled_from(TECHNIQUES), st.text(max_size=8))
inventories = st.builds(
    lambda stacks, uniques: Inventory(
        stacks, tuple(Item.unique(t, f"u{n}") for n, t in enumerate(uniques))
    ),
    st.dictionaries(st.sampled_from(ITEM_NAMES), st.integers(0, 3), max_size=8),
    st.lists(st.sampled_from(ITEM_NAMES), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    action=actions,
    inputs=st.one_of(st.lists(names, max_size=4), st.text(max_size=6), st.none()),
    technique=techniques,
    inventory=inventories,
)
def test_random_attempts_never_raise(
    action: str, inputs: list[str], technique: str | None, inventory: Inventory
) -> None:
    service = CraftingService(BOOK)
    hints = service.get_hints(action, inputs, technique)
    assert len(hints) <= MAX_HINTS
    assert len(set(hints)) == len(hints)
    assert service.get_hints(action, inputs, technique) == hints

    dry = service.try_craft(action, inputs, technique)
    recipe = service.find_recipe(action, inputs, technique)
    assert dry.success == (recipe is not None)
    assert dry.message

    after, result = service.craft_into(inventory, action, inputs, technique, new_item_id=ids())
    if not result.success:
        assert after is inventory
        assert result.message
        return
    assert result.recipe is recipe
    output = result.output_type
    assert output is not None
    for name, count in result.consumed_inputs:
        expected = held(inventory, name) - count + (result.output_quantity if name == output else 0)
        assert held(after, name) == expected
    if output not in dict(result.consumed_inputs):
        assert held(after, output) == held(inventory, output) + result.output_quantity


def test_hints_are_capped_nearest_first_and_never_repeat() -> None:
    service = CraftingService(book(*(
        {"name": f"set_{n}", "action": "combine", "inputs": ["x", *[f"y{i}" for i in range(n)]]}
        for n in (4, 1, 3, 2)
    ), {"name": "pair", "action": "combine", "inputs": ["x", "z"]}))
    assert service.get_hints("combine", ["x"]) == [
        "x might combine with one more thing",
        "x might combine with two more things",
        "x might combine with three more things",
    ]


def test_shipped_hints_never_repeat(crafting: CraftingService) -> None:
    # stick goes into three recipes needing one more thing and two needing two more.
    assert crafting.get_hints("combine", ["stick"]) == [
        "stick might combine with one more thing",
        "stick might combine with two more things",
    ]
