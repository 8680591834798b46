"""Names agents give to places: a shared map written by its inhabitants."""

from __future__ import annotations

from dataclasses import dataclass

from core.constants import MAX_PLACE_NAME_LENGTH
from core.types import AgentName, Position


def place_key(name: str) -> str:
    """The form names are compared in: case- and space-insensitive."""
    return " ".join(name.split()).casefold()


@dataclass(frozen=True, slots=True)
class NamedPlace:
    name: str
    position: Position
    named_by: AgentName | None
    tick: int

    def __post_init__(self) -> None:
        clean = " ".join(self.name.split())
        if not clean:
            raise ValueError("a place name cannot be empty")
        if len(clean) > MAX_PLACE_NAME_LENGTH:
            raise ValueError(
                f"place name is {len(clean)} characters; the limit is {MAX_PLACE_NAME_LENGTH}"
            )
        object.__setattr__(self, "name", clean)

    @property
    def key(self) -> str:
        return place_key(self.name)
