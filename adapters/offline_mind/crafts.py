"""Recipe knowledge learned by trying: keys, calls, and what an outcome teaches.

The offline mind is never shown the recipe book. It starts with a few ideas
anyone would have (split wood, break stone; see memory.OBVIOUS_IDEAS), and
learns the rest the way an agent with a language model would: it tries a
technique on something it carries or puts two things together, and reads the
outcome. Success (`data["output"]`, `data["quantity"]`) becomes a known recipe;
a failure with hints is a wrong guess, never guessed again, and hints such as
"wood can be split or carved" become new ideas to try.

A key names one attempt: "work:wood:split", "combine:clay+grass" (inputs
sorted, so the order they are named in does not matter), "apply:torch:wood".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TECHNIQUES: tuple[str, ...] = (
    "split", "break", "strip", "shape", "hollow", "carve", "weave", "flatten", "grind", "twist",
)
"""The techniques `work` takes, as its tool description lists them."""

_PARTICIPLES: dict[str, str] = {
    "split": "split", "broken": "break", "stripped": "strip", "shaped": "shape",
    "hollowed": "hollow", "carved": "carve", "woven": "weave", "flattened": "flatten",
    "ground": "grind", "twisted": "twist",
}
"""How hints name techniques ("wood can be split or carved") -> the technique."""


def work_key(item: str, technique: str) -> str:
    return f"work:{item}:{technique}"


def combine_key(items: Sequence[str]) -> str:
    return "combine:" + "+".join(sorted(items))


def apply_key(tool: str, target: str) -> str:
    return f"apply:{tool}:{target}"


def call_for(key: str) -> tuple[str, dict[str, Any]] | None:
    """The tool call that tries a key, or None for a key that is not well formed."""
    kind, _, rest = key.partition(":")
    if kind == "work":
        item, _, technique = rest.partition(":")
        if item and technique:
            return "work", {"item": item, "technique": technique}
    elif kind == "combine":
        items = [i for i in rest.split("+") if i]
        if len(items) >= 2:
            return "combine", {"items": items}
    elif kind == "apply":
        tool, _, target = rest.partition(":")
        if tool and target:
            return "apply", {"tool": tool, "target": target}
    return None


def key_of_call(name: str, args: Mapping[str, Any]) -> str | None:
    """The key of a crafting call this mind made, or None for any other call."""
    if name == "work":
        return work_key(str(args.get("item")), str(args.get("technique")))
    if name == "combine":
        return combine_key([str(i) for i in args.get("items", ())])
    if name == "apply":
        return apply_key(str(args.get("tool")), str(args.get("target")))
    return None


def inputs_of(key: str) -> list[str]:
    """What an attempt uses up (for apply: only the target; the tool is kept)."""
    kind, _, rest = key.partition(":")
    if kind == "work":
        return [rest.partition(":")[0]]
    if kind == "combine":
        return rest.split("+")
    if kind == "apply":
        return [rest.partition(":")[2]]
    return []


def needs_of(key: str) -> list[str]:
    """What must be carried to try it (for apply: the tool as well as the target)."""
    kind, _, rest = key.partition(":")
    if kind == "apply":
        tool, _, target = rest.partition(":")
        return [tool, target]
    return inputs_of(key)


def can_try(key: str, inventory: Mapping[str, int]) -> bool:
    need: dict[str, int] = {}
    for item in needs_of(key):
        need[item] = need.get(item, 0) + 1
    return bool(need) and all(inventory.get(item, 0) >= n for item, n in need.items())


def lonely_items(hints: Sequence[Any]) -> list[str]:
    """Things a combine failure says combine with nothing: "stool doesn't combine with anything"."""
    suffix = " doesn't combine with anything"
    return [h[: -len(suffix)] for h in hints
            if isinstance(h, str) and h.endswith(suffix) and " " not in h[: -len(suffix)]]


def ideas_from_hints(item: str, hints: Sequence[Any]) -> list[str]:
    """Work keys a failed attempt's hints point at: "wood can be split or carved"."""
    found: list[str] = []
    prefix = f"{item} can be "
    for hint in hints:
        if not isinstance(hint, str) or not hint.startswith(prefix):
            continue
        for word in hint[len(prefix):].replace(",", " ").split():
            technique = _PARTICIPLES.get(word)
            if technique is not None:
                found.append(work_key(item, technique))
    return found
