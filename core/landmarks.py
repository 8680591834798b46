"""Landmarks: special places the world is born with (a spring, an old tree, ...).

A landmark is part of the landscape, not something an agent made: world
generation places it on fitting terrain, and agents may find and examine it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.types import Position


@dataclass(frozen=True, slots=True)
class Landmark:
    """One landmark: `kind` is its config key (like "spring"), `name` what it is called."""

    kind: str
    name: str
    description: str
    position: Position

    def __post_init__(self) -> None:
        if not self.kind or not self.name.strip():
            raise ValueError("a landmark needs a kind and a name")
