"""landmarks.yaml: the special places a new world is born with, and where each may stand."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, field_validator

from config.base import _SNAKE_RE, NonBlankStr, StrictInt, _Model
from core.terrain import Terrain

_TERRAIN_NAMES = ", ".join(t.value for t in Terrain)


def _terrain_name(raw: Any) -> Any:
    """Name the valid terrains, rather than pydantic's generic enum error."""
    if isinstance(raw, str) and raw not in {t.value for t in Terrain}:
        raise ValueError(f"unknown terrain {raw!r} (expected one of: {_TERRAIN_NAMES})")
    return raw


TerrainName = Annotated[Terrain, BeforeValidator(_terrain_name)]


def _no_repeats(terrains: list[Terrain]) -> list[Terrain]:
    seen: set[Terrain] = set()
    for terrain in terrains:
        if terrain in seen:
            raise ValueError(f"terrain {terrain.value!r} is listed twice")
        seen.add(terrain)
    return terrains


class LandmarkSpec(_Model):
    """One kind of landmark: what it is called and where it may stand."""

    name: NonBlankStr
    description: NonBlankStr
    terrains: Annotated[list[TerrainName], AfterValidator(_no_repeats)]
    """Where it may stand: at least one terrain."""
    near: Annotated[list[TerrainName], AfterValidator(_no_repeats)] = Field(default_factory=list)
    """If not empty, one of these must be among the 8 cells around it."""
    count: StrictInt = Field(1, ge=0, le=20)

    @field_validator("terrains")
    @classmethod
    def _at_least_one(cls, terrains: list[Terrain]) -> list[Terrain]:
        if not terrains:
            raise ValueError(f"at least one terrain is required (from: {_TERRAIN_NAMES})")
        return terrains


class LandmarksConfig(_Model):
    """landmarks.yaml: the special places a new world is born with, keyed by kind."""

    landmarks: dict[str, LandmarkSpec]

    @field_validator("landmarks", mode="before")
    @classmethod
    def _kinds_are_snake_case(cls, value: Any) -> Any:
        """A section whose entries are all commented out parses as null: no landmarks."""
        if value is None:
            return {}
        if isinstance(value, list):
            raise ValueError(
                "expected a mapping from each kind (like 'spring') to its entry, got a list"
            )
        if isinstance(value, dict):
            for kind in value:
                if not isinstance(kind, str) or not _SNAKE_RE.fullmatch(kind):
                    raise ValueError(
                        f"landmark kind {kind!r} is not a lowercase snake_case name "
                        "(like 'old_tree')"
                    )
        return value

    @field_validator("landmarks")
    @classmethod
    def _distinct_names(cls, landmarks: dict[str, LandmarkSpec]) -> dict[str, LandmarkSpec]:
        seen: dict[str, str] = {}
        for kind, spec in landmarks.items():
            key = spec.name.casefold()
            if key in seen:
                raise ValueError(
                    f"landmarks {seen[key]!r} and {kind!r} are both called {spec.name!r} "
                    "(names must differ ignoring case)"
                )
            seen[key] = kind
        return landmarks
