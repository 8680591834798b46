"""A whole world's base terrain as one compact value: a byte per cell.

Generated terrain is dense (every cell has a kind), so it is kept as a raster
of terrain codes (`core.terrain.TERRAIN_ORDER`) rather than a row per cell:
250,000 bytes for a 500x500 world instead of 250,000 database rows. Changes
made later (walls, doors, altered ground) live in the sparse cells table on top.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.terrain import TERRAIN_ORDER, Terrain
from core.types import Position

_VALID_CODES = bytes(range(len(TERRAIN_ORDER)))


@dataclass(frozen=True, slots=True)
class TerrainRaster:
    width: int
    height: int
    codes: bytes
    """Row-major terrain codes: cell (x, y) is codes[y * width + x]."""

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"a raster needs a positive size, got {self.width}x{self.height}")
        if len(self.codes) != self.width * self.height:
            raise ValueError(
                f"a {self.width}x{self.height} raster needs {self.width * self.height} codes, "
                f"got {len(self.codes)}"
            )
        stray = self.codes.translate(None, _VALID_CODES)
        if stray:
            raise ValueError(f"terrain code {stray[0]} is unknown")

    def __repr__(self) -> str:  # the codes would flood any log
        return f"TerrainRaster({self.width}x{self.height})"

    def in_bounds(self, pos: Position) -> bool:
        return 0 <= pos.x < self.width and 0 <= pos.y < self.height

    def terrain_at(self, pos: Position) -> Terrain:
        if not self.in_bounds(pos):
            raise IndexError(f"{pos} is outside the {self.width}x{self.height} world")
        return TERRAIN_ORDER[self.codes[pos.y * self.width + pos.x]]

    def shares(self) -> dict[Terrain, float]:
        """Fraction of cells of each terrain (every kind present, zero if absent)."""
        total = len(self.codes)
        return {kind: self.codes.count(code) / total for code, kind in enumerate(TERRAIN_ORDER)}
