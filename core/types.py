"""Small value types shared by the whole domain: positions, directions, rectangles, names.

Coordinates are screen-style: x grows to the east, y grows to the south, so
"north" is y - 1. Every layer above uses these same conventions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import NewType

AgentName = NewType("AgentName", str)
ConversationId = NewType("ConversationId", str)

_AGENT_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


def agent_name(raw: str) -> AgentName:
    """Validate and return an AgentName.

    Names become folder names under agents/ and trace file names, so they are
    restricted to a letter followed by letters, digits, '_' or '-' (max 32).
    """
    if not isinstance(raw, str) or not _AGENT_NAME_RE.fullmatch(raw):
        raise ValueError(
            f"invalid agent name {raw!r}: use 1-32 characters, a letter first, "
            "then letters, digits, '_' or '-'"
        )
    return AgentName(raw)


class Direction(StrEnum):
    """A compass direction, plus DOWN meaning "here, at my feet"."""

    NORTH = "north"
    SOUTH = "south"
    EAST = "east"
    WEST = "west"
    DOWN = "down"

    @property
    def delta(self) -> tuple[int, int]:
        return _DELTAS[self]

    @property
    def opposite(self) -> Direction:
        return _OPPOSITES[self]

    @property
    def is_cardinal(self) -> bool:
        return self is not Direction.DOWN

    @classmethod
    def parse(cls, raw: str) -> Direction:
        """Parse a direction name case-insensitively, with a helpful error."""
        if isinstance(raw, Direction):
            return raw
        try:
            return cls(str(raw).strip().lower())
        except ValueError:
            names = ", ".join(d.value for d in cls)
            shown = repr(raw) if len(str(raw)) <= 20 else repr(str(raw)[:17] + "...")
            raise ValueError(f"unknown direction {shown}: expected one of {names}") from None


_DELTAS = {
    Direction.NORTH: (0, -1),
    Direction.SOUTH: (0, 1),
    Direction.EAST: (1, 0),
    Direction.WEST: (-1, 0),
    Direction.DOWN: (0, 0),
}
_OPPOSITES = {
    Direction.NORTH: Direction.SOUTH,
    Direction.SOUTH: Direction.NORTH,
    Direction.EAST: Direction.WEST,
    Direction.WEST: Direction.EAST,
    Direction.DOWN: Direction.DOWN,
}

CARDINALS: tuple[Direction, ...] = (
    Direction.NORTH,
    Direction.EAST,
    Direction.SOUTH,
    Direction.WEST,
)


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A cell coordinate on the grid."""

    x: int
    y: int

    def offset(self, dx: int, dy: int) -> Position:
        return Position(self.x + dx, self.y + dy)

    def step(self, direction: Direction) -> Position:
        dx, dy = direction.delta
        return Position(self.x + dx, self.y + dy)

    def manhattan(self, other: Position) -> int:
        return abs(self.x - other.x) + abs(self.y - other.y)

    def chebyshev(self, other: Position) -> int:
        """Distance in king moves: the shape of a square vision window."""
        return max(abs(self.x - other.x), abs(self.y - other.y))

    def neighbors(self) -> tuple[Position, ...]:
        return tuple(self.step(d) for d in CARDINALS)

    def direction_to(self, other: Position) -> Direction:
        """The dominant cardinal direction from here to `other` (DOWN if equal)."""
        dx, dy = other.x - self.x, other.y - self.y
        if dx == 0 and dy == 0:
            return Direction.DOWN
        if abs(dx) >= abs(dy):
            return Direction.EAST if dx > 0 else Direction.WEST
        return Direction.SOUTH if dy > 0 else Direction.NORTH


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned rectangle of cells: [x, x+width) by [y, y+height)."""

    x: int
    y: int
    width: int
    height: int

    def __post_init__(self) -> None:
        if self.width < 0 or self.height < 0:
            raise ValueError(f"Rect size must be non-negative, got {self.width}x{self.height}")

    @classmethod
    def around(cls, center: Position, radius: int) -> Rect:
        """The square of side 2*radius+1 centred on `center`."""
        if radius < 0:
            raise ValueError(f"radius must be non-negative, got {radius}")
        side = 2 * radius + 1
        return cls(center.x - radius, center.y - radius, side, side)

    @property
    def right(self) -> int:
        """One past the last column."""
        return self.x + self.width

    @property
    def bottom(self) -> int:
        """One past the last row."""
        return self.y + self.height

    @property
    def area(self) -> int:
        return self.width * self.height

    def contains(self, pos: Position) -> bool:
        return self.x <= pos.x < self.right and self.y <= pos.y < self.bottom

    def intersection(self, other: Rect) -> Rect | None:
        x0, y0 = max(self.x, other.x), max(self.y, other.y)
        x1, y1 = min(self.right, other.right), min(self.bottom, other.bottom)
        if x1 <= x0 or y1 <= y0:
            return None
        return Rect(x0, y0, x1 - x0, y1 - y0)

    def clamp(self, pos: Position) -> Position:
        """The nearest position inside this rectangle (which must be non-empty)."""
        if self.area == 0:
            raise ValueError("cannot clamp into an empty Rect")
        return Position(
            min(max(pos.x, self.x), self.right - 1),
            min(max(pos.y, self.y), self.bottom - 1),
        )

    def positions(self) -> Iterator[Position]:
        """Every position inside, row by row."""
        for y in range(self.y, self.bottom):
            for x in range(self.x, self.right):
                yield Position(x, y)
