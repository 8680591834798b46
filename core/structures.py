"""Structures: areas that walls enclose, recognised rather than declared."""

from __future__ import annotations

from dataclasses import dataclass

from core.types import AgentName, Position, Rect


@dataclass(frozen=True, slots=True)
class Structure:
    """An enclosed set of cells. Interiors shelter from weather and may be private."""

    id: str
    interior: frozenset[Position]
    created_by: AgentName | None
    created_tick: int
    name: str | None = None
    is_private: bool = False

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a structure needs an id")
        object.__setattr__(self, "interior", frozenset(self.interior))
        if not self.interior:
            raise ValueError("a structure encloses at least one cell")

    @property
    def bounds(self) -> Rect:
        xs = [p.x for p in self.interior]
        ys = [p.y for p in self.interior]
        return Rect(min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1)

    @property
    def size(self) -> int:
        return len(self.interior)

    def contains(self, pos: Position) -> bool:
        return pos in self.interior
