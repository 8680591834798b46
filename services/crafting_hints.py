"""Crafting's words for an attempt that made nothing: the reason, and hints.

Hints tell an agent which direction is worth trying without naming the missing piece.
`CraftingHints` is a base of `CraftingService` (services/crafting.py), apart because the
hints are a question of their own (what to say about a near miss) over the same
indexes: `_combine`, `_work`, `_apply` and the name sets `_combined`, `_tools` and
`_targets`, which the service builds from its recipe book.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from config.recipes import Recipe
from services.crafting_request import ACTIONS, TECHNIQUES, Request, item_names

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


class CraftingHints:
    """The hints half of `CraftingService`: it reads the indexes the service builds."""

    _combine: dict[tuple[str, ...], Recipe]
    _work: dict[tuple[str, str | None], Recipe]
    _apply: dict[tuple[str, str], Recipe]
    _combined: set[str]
    _tools: set[str]
    _targets: set[str]

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
        names = item_names(inputs)
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


def no_recipe_reason(request: Request) -> str:
    if request.action == "work":
        technique = str(request.technique)
        gerund = _TECHNIQUE_FORMS.get(technique, ("", f"using {technique} on"))[1]
        return f"nothing comes of {gerund} {request.inputs[0]}"
    if request.action == "combine":
        return f"nothing comes of combining {_describe(request.inputs)}"
    tool, target = request.inputs
    return f"nothing comes of using {tool} on {target}"


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
