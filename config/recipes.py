"""recipes.yaml: everything that can be made, and the actions and techniques that make it.

The technique vocabulary is defined here once; services/crafting_request.py reads it
from `Technique` so the two cannot drift.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from config.base import ItemName, StrictBool, StrictInt, _Model

Technique = Literal[
    "split", "break", "strip", "shape", "hollow", "carve", "weave", "flatten", "grind", "twist"
]
Action = Literal["combine", "work", "apply"]


class Recipe(_Model):
    """One way to make an item.

    combine: put two or more items together; work: shape one item by hand with
    a technique; apply: use a tool (first input) on a target (second input).
    """

    name: ItemName
    action: Action
    inputs: list[ItemName]
    technique: Technique | None = None
    output_quantity: StrictInt = Field(1, ge=1, le=1000)
    """How many one making gives (at most 1,000: counts stay far from any integer's end)."""
    output_stackable: StrictBool = True
    properties: list[str] = Field(default_factory=list)
    discoveries: list[str] = Field(default_factory=list)
    description: str = ""

    @model_validator(mode="after")
    def _inputs_fit_action(self) -> Recipe:
        n = len(self.inputs)
        if self.action == "combine" and n < 2:
            problem = f"a combine recipe needs at least 2 inputs, got {n}"
        elif self.action == "work" and n != 1:
            problem = f"a work recipe needs exactly 1 input, got {n}"
        elif self.action == "apply" and n != 2:
            problem = f"an apply recipe needs exactly 2 inputs [tool, target], got {n}"
        elif self.action == "work" and self.technique is None:
            problem = "a work recipe needs a technique"
        elif self.action != "work" and self.technique is not None:
            problem = f"only work recipes take a technique, not {self.action}"
        else:
            return self
        raise ValueError(f"recipe {self.name!r}: {problem}")

    @property
    def key(self) -> tuple[str, tuple[str, ...], str | None]:
        """What the player does: two recipes with the same key would be ambiguous."""
        return (self.action, tuple(sorted(self.inputs)), self.technique)


class RecipeBook(_Model):
    """recipes.yaml: everything that can be made."""

    recipes: list[Recipe]

    @field_validator("recipes")
    @classmethod
    def _no_ambiguous_recipes(cls, recipes: list[Recipe]) -> list[Recipe]:
        seen: dict[tuple[str, tuple[str, ...], str | None], str] = {}
        for recipe in recipes:
            if recipe.key in seen:
                how = f" with {recipe.technique}" if recipe.technique else ""
                raise ValueError(
                    f"recipes {seen[recipe.key]!r} and {recipe.name!r} both {recipe.action} "
                    f"[{', '.join(recipe.inputs)}]{how}"
                )
            seen[recipe.key] = recipe.name
        return recipes

    def unreachable(self, gatherable: set[str]) -> list[tuple[int, Recipe, list[str]]]:
        """Recipes that can never be made starting from the gatherable resources.

        Returns (index, recipe, missing inputs) so the caller can point at the
        offending entry. An empty list means the recipe graph is closed.
        """
        available = set(gatherable)
        pending = list(enumerate(self.recipes))
        progress = True
        while pending and progress:
            progress = False
            for entry in list(pending):
                if set(entry[1].inputs) <= available:
                    available.add(entry[1].name)
                    pending.remove(entry)
                    progress = True
        return [(i, r, sorted(set(r.inputs) - available)) for i, r in pending]
