"""What every part of an offline turn shares: the shape of a script, and compass sums.

A turn is a generator script (see turn.py): it yields `(tool, arguments)` and is
sent back that call's ToolOutcome (or None when the engine gave none).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from core.perception import Perception
from services.mind import ToolOutcome

Spec = tuple[str, dict[str, Any]]
"""One call a script asks for: (tool name, JSON arguments)."""
Script = Generator[Spec, "ToolOutcome | None", Any]
WorkScript = Generator[Spec, "ToolOutcome | None", bool]
"""A script that also says whether it did what it set out to (its return value)."""
Pos = tuple[int, int]

DIRS = ("north", "east", "south", "west")
DELTA = {"north": (0, -1), "east": (1, 0), "south": (0, 1), "west": (-1, 0), "down": (0, 0)}
SIDES = {"north": ("west", "east"), "south": ("east", "west"),
         "east": ("north", "south"), "west": ("south", "north")}
"""Left and right of each direction, clockwise order."""
BACK = {"north": "south", "south": "north", "east": "west", "west": "east"}

SETTLE_RADIUS = 3
"""A shelter goes up within this many cells of its builder's haunt; a sign this close to
a landmark speaks of that landmark."""


def ok(outcome: ToolOutcome | None) -> bool:
    return outcome is not None and outcome.success


def day_of(perception: Perception) -> int:
    """The in-world day from "day 3, 08:00 (morning)"; from the tick if that cannot be read.

    A thousand agents read the same time text each tick: each text is parsed once."""
    text = perception.time_text
    day = _DAYS.get(text)
    if day is None:
        day = 0
        if text.startswith("day "):
            digits = text[4:].split(",", 1)[0]
            if digits.isdigit():
                day = int(digits)
        if len(_DAYS) > 64:
            _DAYS.clear()
        _DAYS[text] = day
    return day or perception.tick // 24 + 1


_DAYS: dict[str, int] = {}


def toward(dx: int, dy: int) -> tuple[str, ...]:
    """Directions that close a gap, the larger axis first (none when already there)."""
    horizontal = "east" if dx > 0 else "west"
    vertical = "south" if dy > 0 else "north"
    if abs(dx) >= abs(dy):
        return (horizontal, vertical) if dy else ((horizontal,) if dx else ())
    return (vertical, horizontal) if dx else (vertical,)


def args_key(args: Mapping[str, Any]) -> str:
    """A call's arguments as one comparable string (to remember what failed)."""
    return repr(sorted(args.items()))
