"""Crafting: which recipe an action makes, and what making it does to an inventory.

The service is pure and synchronous: it holds an index over a `RecipeBook` and
nothing else (no storage, no clock, no randomness), so the engine can ask it
questions in the middle of a tick and tests can run every shipped recipe without
a database. Ids for new unique items come from the caller for the same reason
core takes ids from outside: the same request always gives the same answer.

Every method answers bad input with a failed result (or None, or no hints) rather
than an exception. The arguments come from language models, and a model that
types an unknown technique or an empty name should hear why nothing happened,
not crash the tick.

Three actions exist (see config/recipes.yaml):

- combine: two or more things put together; the order they are named in does not
  matter, but how many of each does (a multiset).
- work: one thing shaped by hand with a technique from a fixed vocabulary.
- apply: a tool (first) used on a target (second); the order matters, and only
  the target is used up.

The attempt's checks and its result are in services/crafting_request.py, the words for
one that made nothing (reasons, hints) in services/crafting_hints.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from config import Recipe, RecipeBook
from core.agent import Inventory, InventoryError
from core.objects import Item
from services.crafting_hints import CraftingHints, no_recipe_reason
from services.crafting_request import CraftingResult, Request, parse


class CraftingService(CraftingHints):
    """Looks recipes up, explains near misses, and applies recipes to inventories.

    Built once from the loaded recipe book; it never changes afterwards, so one
    instance can serve every agent.
    """

    def __init__(self, book: RecipeBook) -> None:
        self._recipes: tuple[Recipe, ...] = tuple(book.recipes)
        # The book guarantees no two recipes share a key, so each index is exact.
        self._combine: dict[tuple[str, ...], Recipe] = {}
        self._work: dict[tuple[str, str | None], Recipe] = {}
        self._apply: dict[tuple[str, str], Recipe] = {}
        for recipe in self._recipes:
            if recipe.action == "combine":
                self._combine[tuple(sorted(recipe.inputs))] = recipe
            elif recipe.action == "work":
                self._work[(recipe.inputs[0], recipe.technique)] = recipe
            else:
                self._apply[(recipe.inputs[0], recipe.inputs[1])] = recipe
        self._combined = {name for key in self._combine for name in key}
        self._tools = {tool for tool, _ in self._apply}
        self._targets = {target for _, target in self._apply}
        self._outputs = frozenset(recipe.name for recipe in self._recipes)
        self._made: dict[int, CraftingResult] = {}
        """id of a recipe of this book -> `CraftingResult.made(recipe)`: the same value every
        time, and building it (a Counter, a dozen checked fields) cost more than the craft."""

    # ------------------------------------------------------------------ look-ups

    @property
    def recipes(self) -> tuple[Recipe, ...]:
        """Every recipe, in the order of the book."""
        return self._recipes

    @property
    def known_outputs(self) -> frozenset[str]:
        """Every item type some recipe makes."""
        return self._outputs

    def recipes_using(self, item_type_: str) -> list[Recipe]:
        """The recipes that take an item as an input (as a tool too), in book order."""
        return [recipe for recipe in self._recipes if item_type_ in recipe.inputs]

    def find_recipe(
        self, action: str, inputs: Sequence[str], technique: str | None = None
    ) -> Recipe | None:
        """The recipe an attempt would follow, or None (also for invalid arguments).

        combine matches its inputs as a multiset, in any order; work needs exactly
        one input and its technique; apply goes through `find_apply_recipe`.
        """
        request = parse(action, inputs, technique)
        return None if isinstance(request, str) else self._lookup(request)

    def find_apply_recipe(self, tool: str, target: str) -> Recipe | None:
        """The recipe for using `tool` on `target`; order matters: the tool comes first."""
        if not isinstance(tool, str) or not isinstance(target, str):
            return None
        return self._apply.get((tool, target))

    # -------------------------------------------------------------------- trying

    def try_craft(
        self, action: str, inputs: Sequence[str], technique: str | None = None
    ) -> CraftingResult:
        """What an attempt would make, without any inventory: the recipe's result or why not."""
        request = parse(action, inputs, technique)
        if isinstance(request, str):
            return CraftingResult.failed(request, self.get_hints(action, inputs, technique))
        recipe = self._lookup(request)
        if recipe is None:
            return CraftingResult.failed(
                no_recipe_reason(request), self.get_hints(action, inputs, technique)
            )
        return CraftingResult.made(recipe)

    def try_apply(self, tool: str, target: str) -> CraftingResult:
        """`try_craft` for using a tool on a target; the result consumes only the target."""
        return self.try_craft("apply", [tool, target])

    def craft_into(
        self,
        inventory: Inventory,
        action: str,
        inputs: Sequence[str],
        technique: str | None = None,
        *,
        new_item_id: Callable[[], str],
    ) -> tuple[Inventory, CraftingResult]:
        """Make something from what an inventory holds: the new inventory and the result.

        Every named input must be held (a stack resource or unique items of that
        type, counted as a multiset: naming stick twice needs two sticks), the
        tool included for apply; otherwise the failure names what is missing.
        Inputs are used up stacks first, then unique items oldest first. A
        stackable output joins its stack; an unstackable one becomes
        `output_quantity` unique items with ids from `new_item_id` and the
        recipe's properties. On any failure the inventory comes back unchanged.
        """
        request = parse(action, inputs, technique)
        if isinstance(request, str):
            return inventory, CraftingResult.failed(
                request, self.get_hints(action, inputs, technique)
            )
        missing = _missing(inventory, request.inputs)
        if missing:
            return inventory, CraftingResult.failed(missing)
        recipe = self._lookup(request)
        if recipe is None:
            return inventory, CraftingResult.failed(
                no_recipe_reason(request), self.get_hints(action, inputs, technique)
            )
        result = self._made.get(id(recipe))
        if result is None:
            result = self._made[id(recipe)] = CraftingResult.made(recipe)
        try:
            changed, consumed, created = _apply_result(inventory, result, new_item_id)
        except ValueError as error:  # InventoryError too: a bad id from new_item_id
            return inventory, CraftingResult.failed(f"could not make {recipe.name}: {error}")
        if consumed or created:
            result = replace(result, consumed_items=consumed, created_items=created)
        return changed, result  # else it already has no items made or used up

    def apply_into(
        self,
        inventory: Inventory,
        tool: str,
        target: str,
        *,
        new_item_id: Callable[[], str],
    ) -> tuple[Inventory, CraftingResult]:
        """`craft_into` for using a held tool on a held target; the tool is kept."""
        return self.craft_into(inventory, "apply", [tool, target], new_item_id=new_item_id)

    def _lookup(self, request: Request) -> Recipe | None:
        if request.action == "work":
            return self._work.get((request.inputs[0], request.technique))
        if request.action == "combine":
            return self._combine.get(tuple(sorted(request.inputs)))
        tool, target = request.inputs
        return self.find_apply_recipe(tool, target)


# ------------------------------------------------------------------------ inventories


def _held(inventory: Inventory, name: str) -> int:
    """How many of a type an inventory holds: its stack plus its unique items."""
    items = inventory.items
    have = inventory.stacks.get(name, 0)
    return have + sum(1 for item in items if item.item_type == name) if items else have


def _missing(inventory: Inventory, inputs: Sequence[str]) -> str | None:
    """One line naming every input the inventory lacks, or None if it holds them all."""
    parts = []
    needs: dict[str, int] = {}  # Counter(inputs), without its cost for one or two names
    for name in inputs:
        needs[name] = needs.get(name, 0) + 1
    for name, need in needs.items():
        have = _held(inventory, name)
        if have < need:
            parts.append(f"{name} (need {need}, carrying {have})")
    return f"missing {', '.join(parts)}" if parts else None


def _apply_result(
    inventory: Inventory, result: CraftingResult, new_item_id: Callable[[], str]
) -> tuple[Inventory, tuple[Item, ...], tuple[Item, ...]]:
    """Take the consumed inputs out and put the output in; raises ValueError if impossible."""
    consumed: list[Item] = []
    for name, count in result.consumed_inputs:
        from_stack = min(count, inventory.count(name))
        if from_stack:
            inventory = inventory.remove_resource(name, from_stack)
        for _ in range(count - from_stack):
            item = inventory.find_item(name)
            if item is None:
                raise InventoryError(f"no {name} left to use")
            inventory = inventory.remove_item(item.id)
            consumed.append(item)
    output = str(result.output_type)
    if result.output_stackable:
        return inventory.add_resource(output, result.output_quantity), tuple(consumed), ()
    created = []
    for _ in range(result.output_quantity):
        item_id = new_item_id()
        if not isinstance(item_id, str) or not item_id:
            raise ValueError(f"new_item_id gave {item_id!r}, not an id")
        item = Item.unique(output, item_id, result.properties)
        inventory = inventory.add_item(item)
        created.append(item)
    return inventory, tuple(consumed), tuple(created)
