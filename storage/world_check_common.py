"""What both halves of the world check share: how a stored value is quoted, the list of
problems found, and what other rows are checked against (the world's size, agents and
tick). storage/world_check.py checks the world's rows and storage/world_check_records.py
the engine's records; both build on this module, and neither imports the other back.
"""

from __future__ import annotations

import json
from typing import Any

from core.types import Position

SHOWN = 60
"""Characters of a stored value quoted in a problem, at most."""


def show(value: Any) -> str:
    """A stored value quoted on one line, cut to SHOWN characters."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_json(text: Any) -> tuple[Any, str | None]:
    """(value, None), or (None, what is wrong) for text that is not JSON."""
    if not isinstance(text, str):
        return None, f"holds {show(text)}, not JSON text"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:
        return None, f"is not valid JSON ({str(exc).splitlines()[0][:SHOWN]})"


class Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, table: str, row: str, what: str) -> None:
        self.lines.append(f"{table} {row}: {what}")


class KnownWorld:
    """What other rows are checked against: the size, who exists, and the tick (None
    when world_state's is damaged, which is named already)."""

    def __init__(self, width: int, height: int, agents: frozenset[str],
                 tables: set[str], tick: int | None = None) -> None:
        self.width, self.height, self.agents, self.tables = width, height, agents, tables
        self.tick = tick

    def outside(self, x: Any, y: Any) -> str | None:
        """What is wrong with (x, y) as a cell of this world, or None."""
        if not (is_int(x) and is_int(y)):
            return f"position ({show(x)}, {show(y)}) is not two whole numbers"
        if not (0 <= x < self.width and 0 <= y < self.height):
            return f"position ({x}, {y}) lies outside the {self.width}x{self.height} world"
        return None

    def point(self, raw: Any) -> tuple[Position | None, str | None]:
        """A stored [x, y] pair as a position in bounds, or what is wrong with it."""
        if not (isinstance(raw, list) and len(raw) == 2):
            return None, f"{show(raw)} is not an [x, y] pair"
        wrong = self.outside(*raw)
        return (None, wrong) if wrong else (Position(raw[0], raw[1]), None)
