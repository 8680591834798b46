"""What a crafting attempt asks, checked, and what it made: the arguments a model typed
turned into a `Request` or one line saying what is wrong with them, and `CraftingResult`.

Apart from the service (services/crafting.py) because both it and the hints
(services/crafting_hints.py) read requests, and because this is the part that meets a
model's mistakes: every check here answers with a sentence, never an exception.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, get_args

from config.recipes import Recipe, Technique
from core.objects import Item, item_type

ACTIONS: tuple[str, ...] = ("combine", "work", "apply")
"""The crafting actions, in the order messages list them."""

TECHNIQUES: tuple[str, ...] = get_args(Technique)
"""The technique vocabulary, taken from the config model so the two cannot drift."""


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


class Request(NamedTuple):
    """An attempt whose arguments have been checked: known action, valid names.

    A named tuple, not a frozen dataclass: one is made for every crafting attempt,
    and the dataclass's checked field-by-field __init__ cost more than the look-up
    it serves."""

    action: str
    inputs: tuple[str, ...]
    technique: str | None


def item_names(inputs: object) -> tuple[str, ...] | None:
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


def parse(action: object, inputs: object, technique: object) -> Request | str:
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
    return Request(action, tuple(inputs), technique if isinstance(technique, str) else None)
