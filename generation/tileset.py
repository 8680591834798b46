"""The tiles world generation works with: the seven terrains and who may touch whom.

The adjacency graph is the reference design's: a chain from deep water to the
woods (water - coast - sand - grass - forest), hills reached from grass or
forest, and stone only inside hills. Every terrain may touch itself. Weights,
self-affinity and target shares come from config/terrain.yaml, so tuning the
look of a world never means editing code.

Tiles are numbered in `core.terrain.TERRAIN_ORDER`, so a generated array can be
stored and read back with the same codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain

ADJACENCY: tuple[tuple[Terrain, Terrain], ...] = (
    (Terrain.WATER, Terrain.COAST),
    (Terrain.COAST, Terrain.SAND),
    (Terrain.SAND, Terrain.GRASS),
    (Terrain.GRASS, Terrain.FOREST),
    (Terrain.GRASS, Terrain.HILL),
    (Terrain.FOREST, Terrain.HILL),
    (Terrain.HILL, Terrain.STONE),
)
"""Pairs of different terrains that may be neighbours (the relation is symmetric)."""


class TerrainTraits(Protocol):
    """What generation needs to know of a terrain (config's TerrainSpec has it).

    A protocol rather than an import keeps generation independent of config:
    the layers contract makes them siblings.
    """

    passable: bool
    weight: float
    self_affinity: float
    target_share: float


@dataclass(frozen=True, eq=False)
class Tileset:
    """Terrains as numbered tiles, with their adjacency as bitmasks.

    `compatible[t]` is the bitmask of tiles allowed next to tile t (bit i set
    means tile i may be a neighbour). Arrays are read-only so a tileset can be
    shared by every generation.
    """

    terrains: tuple[Terrain, ...]
    compatible: np.ndarray
    weights: np.ndarray
    self_affinity: np.ndarray
    target_shares: np.ndarray
    passable: np.ndarray

    @property
    def size(self) -> int:
        return len(self.terrains)

    @property
    def all_mask(self) -> int:
        return (1 << self.size) - 1

    def code(self, terrain: Terrain) -> int:
        return TERRAIN_CODE[terrain]

    def allowed(self, a: Terrain, b: Terrain) -> bool:
        return bool(self.compatible[self.code(a)] >> self.code(b) & 1)

    def adjacency_matrix(self) -> np.ndarray:
        """allowed[a, b] as a boolean matrix, for vectorised checks."""
        bits = np.arange(self.size)
        return (self.compatible[:, None] >> bits[None, :] & 1).astype(bool)

    @classmethod
    def from_traits(cls, terrains: Mapping[Terrain, TerrainTraits]) -> Tileset:
        """From terrain.yaml's entries (`HearthConfig.terrain.terrains`)."""
        missing = [t.value for t in TERRAIN_ORDER if t not in terrains]
        if missing:
            raise ValueError(f"no traits for terrain {', '.join(missing)}")
        specs = [terrains[t] for t in TERRAIN_ORDER]
        return cls.build(
            weights=[s.weight for s in specs],
            self_affinity=[s.self_affinity for s in specs],
            target_shares=[s.target_share for s in specs],
            passable=[s.passable for s in specs],
        )

    @classmethod
    def build(
        cls,
        *,
        weights: list[float],
        self_affinity: list[float],
        target_shares: list[float],
        passable: list[bool],
        adjacency: tuple[tuple[Terrain, Terrain], ...] = ADJACENCY,
    ) -> Tileset:
        n = len(TERRAIN_ORDER)
        compatible = np.array([1 << i for i in range(n)], dtype=np.uint8)
        for a, b in adjacency:
            compatible[TERRAIN_CODE[a]] |= 1 << TERRAIN_CODE[b]
            compatible[TERRAIN_CODE[b]] |= 1 << TERRAIN_CODE[a]
        arrays = {
            "compatible": compatible,
            # Copies: the arrays are frozen below, and a caller's own must stay writable.
            "weights": np.array(weights, dtype=np.float64),
            "self_affinity": np.array(self_affinity, dtype=np.float64),
            "target_shares": np.array(target_shares, dtype=np.float64),
            "passable": np.array(passable, dtype=bool),
        }
        for name, array in arrays.items():
            if array.shape != (n,):
                raise ValueError(f"{name} needs {n} values, one per terrain, got {array.shape}")
            array.setflags(write=False)
        return cls(terrains=TERRAIN_ORDER, **arrays)

