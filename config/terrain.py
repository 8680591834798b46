"""terrain.yaml: the gameplay side of each terrain kind (passable, what it yields, how it
is drawn, how much of a new world it covers)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from config.base import MAX_WEIGHT, ItemName, NonBlankStr, StrictBool, StrictFloat, _Model
from core.terrain import Terrain


def _one_visible_ascii(raw: str) -> str:
    """Maps are drawn one character per cell; a blank would hide the terrain."""
    if len(raw) != 1 or not ("!" <= raw <= "~"):
        raise ValueError(f"ascii must be exactly one visible ASCII character, got {raw!r}")
    return raw


class TerrainSpec(_Model):
    passable: StrictBool
    gather: ItemName | None = None
    emoji: NonBlankStr
    ascii: Annotated[str, AfterValidator(_one_visible_ascii)]
    weight: StrictFloat = Field(gt=0, le=MAX_WEIGHT)
    self_affinity: StrictFloat = Field(1.0, gt=0, le=MAX_WEIGHT)
    target_share: StrictFloat = Field(gt=0, lt=1)


class TerrainConfig(_Model):
    """terrain.yaml: the gameplay side of each terrain kind."""

    terrains: dict[Terrain, TerrainSpec]

    @field_validator("terrains", mode="before")
    @classmethod
    def _exactly_the_known_terrains(cls, value: Any) -> Any:
        """Name the stray or missing kinds, rather than pydantic's generic enum error."""
        if not isinstance(value, dict):
            return value
        known = [t.value for t in Terrain]
        unknown = [str(k) for k in value if k not in known]
        missing = [t for t in known if t not in value]
        problems = []
        for label, names in (("unknown", unknown), ("missing", missing)):
            if names:
                noun = "terrain" if len(names) == 1 else "terrains"
                problems.append(f"{label} {noun} {', '.join(map(repr, names))}")
        if problems:
            raise ValueError(f"{'; '.join(problems)} (expected exactly: {', '.join(known)})")
        return value

    @field_validator("terrains")
    @classmethod
    def _shares_and_symbols(cls, terrains: dict[Terrain, TerrainSpec]) -> dict:
        total = sum(spec.target_share for spec in terrains.values())
        if abs(total - 1.0) > 0.01:
            raise ValueError(f"target_share values must sum to 1.0, got {total:.3f}")
        owners: dict[str, Terrain] = {}
        for terrain, spec in terrains.items():
            if spec.ascii in owners:
                raise ValueError(
                    f"{owners[spec.ascii].value} and {terrain.value} both use ascii {spec.ascii!r}"
                )
            owners[spec.ascii] = terrain
        return terrains

    @property
    def gatherable(self) -> set[str]:
        """Every resource some terrain yields: the roots of the recipe graph."""
        return {spec.gather for spec in self.terrains.values() if spec.gather}
