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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, get_args

from config import Recipe, RecipeBook
from config.models import Technique
from core.agent import Inventory, InventoryError
from core.objects import Item, item_type

ACTIONS: tuple[str, ...] = ("combine", "work", "apply")
"""The crafting actions, in the order messages list them."""

TECHNIQUES: tuple[str, ...] = get_args(Technique)
"""The technique vocabulary, taken from the config model so the two cannot drift."""

MAX_HINTS = 3
"""More hints than this read as a list of answers rather than a nudge."""

# How each technique reads in a sentence: (past participle, gerund). Hints say
# "wood can be split or carved", failures say "nothing comes of carving stone".
_TECHNIQUE_FORMS: dict[str, tuple[str, str]] = {
    "split": ("split", "splitting"),
    "break": ("broken", "breaking"),
    "strip": ("stripped", "stripping"),
    "shape": ("shaped", "shaping"),
    "hollow": ("hollowed", "hollowing"),
    "carve": ("carved", "carving"),
    "weave": ("woven", "weaving"),
    "flatten": ("flattened", "flattening"),
    "grind": ("ground", "grinding"),
    "twist": ("twisted", "twisting"),
}

_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


@dataclass(frozen=True, slots=True)
class CraftingResult:
    """What one crafting attempt did, or why it did nothing.

    A failure carries no recipe and no output, and consumes nothing; its message
    gives the reason followed by any hints. `created_items` and `consumed_items`
    are filled only by `craft_into`/`apply_into`, which work on a real inventory:
    they name the unique items that appeared and disappeared, so the caller can
    record them without comparing inventories.
    """

    success: bool
    recipe: Recipe | None = None
    output_type: str | None = None
    output_quantity: int = 0
    output_stackable: bool = True
    properties: tuple[str, ...] = ()
    consumed_inputs: tuple[tuple[str, int], ...] = ()
    discoveries: tuple[str, ...] = ()
    message: str = ""
    hints: tuple[str, ...] = ()
    created_items: tuple[Item, ...] = ()
    consumed_items: tuple[Item, ...] = ()

    def __post_init__(self) -> None:
        for name in (
            "properties", "consumed_inputs", "discoveries", "hints", "created_items",
            "consumed_items",
        ):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.success:
            if self.recipe is None or self.output_type is None or self.output_quantity < 1:
                raise ValueError(
                    "a successful crafting result needs its recipe, an output type and an "
                    "output quantity of at least 1"
                )
        elif (
            self.recipe is not None
            or self.output_type is not None
            or self.output_quantity
            or self.consumed_inputs
            or self.created_items
            or self.consumed_items
        ):
            raise ValueError(
                "a failed crafting result has no recipe and no output, and consumes nothing"
            )

    @classmethod
    def failed(cls, reason: str, hints: Sequence[str] = ()) -> CraftingResult:
        """A failure whose message is the reason, then each hint, separated by '; '."""
        return cls(success=False, message="; ".join((reason, *hints)), hints=tuple(hints))

    @classmethod
    def made(cls, recipe: Recipe) -> CraftingResult:
        """The success a recipe describes, before any inventory is involved."""
        consumed = recipe.inputs[1:] if recipe.action == "apply" else recipe.inputs
        quantity = recipe.output_quantity
        return cls(
            success=True,
            recipe=recipe,
            output_type=recipe.name,
            output_quantity=quantity,
            output_stackable=recipe.output_stackable,
            properties=tuple(recipe.properties),
            consumed_inputs=tuple(Counter(consumed).items()),
            discoveries=tuple(recipe.discoveries),
            message=f"made {recipe.name}" if quantity == 1 else f"made {quantity} {recipe.name}",
        )


class _Request(NamedTuple):
    """An attempt whose arguments have been checked: known action, valid names.

    A named tuple, not a frozen dataclass: one is made for every crafting attempt,
    and the dataclass's checked field-by-field __init__ cost more than the look-up
    it serves."""

    action: str
    inputs: tuple[str, ...]
    technique: str | None


class CraftingService:
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
        request = _parse(action, inputs, technique)
        return None if isinstance(request, str) else self._lookup(request)

    def find_apply_recipe(self, tool: str, target: str) -> Recipe | None:
        """The recipe for using `tool` on `target`; order matters: the tool comes first."""
        if not isinstance(tool, str) or not isinstance(target, str):
            return None
        return self._apply.get((tool, target))

    # --------------------------------------------------------------------- hints

    def get_hints(
        self, action: str, inputs: Sequence[str], technique: str | None = None
    ) -> list[str]:
        """Short nudges for an attempt that matched no recipe, best first.

        Hints tell an agent which direction is worth trying (which techniques an
        input takes, that a few things need one more, that a tool is a tool for
        something) without naming the missing piece, so discovery stays the
        agent's. No hints for an exact match or for unreadable arguments; at most
        MAX_HINTS, no repeats, and the same attempt always gets the same hints
        (combine hints do not depend on the order the inputs are named in).
        """
        if not isinstance(action, str) or action not in ACTIONS:
            return []
        names = _names(inputs)
        if not names:
            return []
        tech = technique if isinstance(technique, str) and technique else None
        if action == "work":
            hints = self._work_hints(names, tech)
        elif action == "combine":
            hints = self._combine_hints(names)
        else:
            hints = self._apply_hints(names)
        return list(dict.fromkeys(hints))[:MAX_HINTS]

    def _work_hints(self, names: tuple[str, ...], technique: str | None) -> list[str]:
        if len(names) != 1:
            return self._other_action_hints(names, exclude="work")
        (name,) = names
        if (name, technique) in self._work:
            return []
        hints = []
        participles = [_TECHNIQUE_FORMS.get(t, (t, t))[0] for t in self._techniques_for(name)]
        if participles:
            hints.append(f"{name} can be {_join(participles, 'or')}")
        if name in self._targets:
            hints.append(f"{name} can be worked with some tool")
        if name in self._tools:
            hints.append(f"{name} might be used as a tool on something")
        if name in self._combined:
            hints.append(f"{name} might combine with other things")
        if not hints:
            hints.append(f"{name} isn't used to make anything")
        return hints

    def _combine_hints(self, names: tuple[str, ...]) -> list[str]:
        if tuple(sorted(names)) in self._combine:
            return []
        have = Counter(names)
        hints: list[str] = []
        # Recipes these are part of: say how many more things, never which.
        partial: list[tuple[int, str]] = []
        for key in self._combine:
            need = Counter(key)
            if have < need:
                more = len(key) - len(names)
                things = "thing" if more == 1 else "things"
                partial.append((more, f"{_describe(names)} might combine with "
                                      f"{_number(more)} more {things}"))
        hints.extend(text for _, text in sorted(partial, key=lambda entry: entry[0]))
        hints.extend(self._other_action_hints(names, exclude="combine"))
        if any(Counter(key) < have for key in self._combine):
            hints.append("some of these might combine without the rest")
        if not partial:
            for name in sorted(have):
                if name in self._combined:
                    hints.append(f"{name} might combine with something else")
                else:
                    hints.append(f"{name} doesn't combine with anything")
        return hints

    def _apply_hints(self, names: tuple[str, ...]) -> list[str]:
        if len(names) != 2:
            return self._other_action_hints(names, exclude="apply")
        tool, target = names
        if (tool, target) in self._apply:
            return []
        hints = self._other_action_hints(names, exclude="apply")
        if (target, tool) in self._apply:
            hints.append("it might work the other way round")
        if tool in self._tools:
            hints.append(f"{tool} is a tool for something else")
        else:
            hints.append(f"{tool} isn't a tool for anything")
        if target in self._targets:
            hints.append(f"{target} can be worked with some other tool")
        else:
            hints.append(f"no tool works on {target}")
        return hints

    def _other_action_hints(self, names: tuple[str, ...], *, exclude: str) -> list[str]:
        """Hints for the right things tried with the wrong action."""
        hints = []
        if exclude != "combine" and len(names) >= 2 and tuple(sorted(names)) in self._combine:
            hints.append("these might be combined instead")
        if exclude != "apply" and len(names) == 2 and (
            tuple(names) in self._apply or tuple(reversed(names)) in self._apply
        ):
            hints.append("try using one of these on the other")
        if exclude != "work" and len(names) == 1 and self._techniques_for(names[0]):
            hints.append(f"{names[0]} can be worked by hand")
        return hints

    def _techniques_for(self, name: str) -> list[str]:
        """The techniques that work `name` by hand, in vocabulary order."""
        return [t for t in TECHNIQUES if (name, t) in self._work]

    # -------------------------------------------------------------------- trying

    def try_craft(
        self, action: str, inputs: Sequence[str], technique: str | None = None
    ) -> CraftingResult:
        """What an attempt would make, without any inventory: the recipe's result or why not."""
        request = _parse(action, inputs, technique)
        if isinstance(request, str):
            return CraftingResult.failed(request, self.get_hints(action, inputs, technique))
        recipe = self._lookup(request)
        if recipe is None:
            return CraftingResult.failed(
                _no_recipe_reason(request), self.get_hints(action, inputs, technique)
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
        request = _parse(action, inputs, technique)
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
                _no_recipe_reason(request), self.get_hints(action, inputs, technique)
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

    def _lookup(self, request: _Request) -> Recipe | None:
        if request.action == "work":
            return self._work.get((request.inputs[0], request.technique))
        if request.action == "combine":
            return self._combine.get(tuple(sorted(request.inputs)))
        tool, target = request.inputs
        return self.find_apply_recipe(tool, target)


# ------------------------------------------------------------------------ helpers


def _names(inputs: object) -> tuple[str, ...] | None:
    """The inputs as a tuple of valid item names, or None if any is not one."""
    if isinstance(inputs, str) or not isinstance(inputs, Sequence):
        return None
    if not all(_name_problem(name) is None for name in inputs):
        return None
    return tuple(inputs)


_GOOD_NAMES: set[str] = set()
"""Names `_name_problem` found well-formed: the same few come back in every attempt, and
the check is a regular expression. Dropped whole when it reaches GOOD_NAMES_KEPT."""

GOOD_NAMES_KEPT = 4096


def _name_problem(name: object) -> str | None:
    if type(name) is str and name in _GOOD_NAMES:
        return None
    if not isinstance(name, str):
        return f"{name!r} is not an item name"
    if not name.strip():
        return "an item name is empty"
    try:
        item_type(name)
    except ValueError:
        return (
            f"{name!r} is not an item name (use lowercase letters, digits and '_', "
            "a letter first)"
        )
    if type(name) is str:
        if len(_GOOD_NAMES) >= GOOD_NAMES_KEPT:
            _GOOD_NAMES.clear()
        _GOOD_NAMES.add(name)
    return None


def _parse(action: object, inputs: object, technique: object) -> _Request | str:
    """The checked request, or one line saying what is wrong with the arguments."""
    if not isinstance(action, str) or action not in ACTIONS:
        return f"unknown action {action!r} (expected one of: {', '.join(ACTIONS)})"
    if type(inputs) is not list and (isinstance(inputs, str) or not isinstance(inputs, Sequence)):
        return f"inputs must be a list of item names, not {inputs!r}"
    for name in inputs:
        problem = _name_problem(name)
        if problem is not None:
            return problem
    if technique == "":
        technique = None
    if technique is not None and (not isinstance(technique, str) or technique not in TECHNIQUES):
        return f"unknown technique {technique!r} (expected one of: {', '.join(TECHNIQUES)})"
    count = len(inputs)
    if action == "work":
        if count != 1:
            return f"work shapes exactly one thing at a time, got {count}"
        if technique is None:
            return f"work needs a technique (one of: {', '.join(TECHNIQUES)})"
    elif technique is not None:
        return f"only work takes a technique; {action} does not (got {technique!r})"
    elif action == "combine" and count < 2:
        return f"combine needs at least two things, got {count}"
    elif action == "apply" and count != 2:
        return f"apply needs exactly two things, a tool and then a target, got {count}"
    return _Request(action, tuple(inputs), technique if isinstance(technique, str) else None)


def _no_recipe_reason(request: _Request) -> str:
    if request.action == "work":
        technique = str(request.technique)
        gerund = _TECHNIQUE_FORMS.get(technique, ("", f"using {technique} on"))[1]
        return f"nothing comes of {gerund} {request.inputs[0]}"
    if request.action == "combine":
        return f"nothing comes of combining {_describe(request.inputs)}"
    tool, target = request.inputs
    return f"nothing comes of using {tool} on {target}"


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


def _describe(names: Iterable[str]) -> str:
    """A multiset of names in sentence form, sorted: 'cord, 2 stick and stone'."""
    counts = Counter(names)
    return _join([name if n == 1 else f"{n} {name}" for name, n in sorted(counts.items())])


def _join(parts: Sequence[str], word: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} {word} {parts[-1]}"


def _number(n: int) -> str:
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)
