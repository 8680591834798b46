"""World terrain: a guide sketch, then Wave Function Collapse over it.

    codes = generate_terrain_grid(500, 500, seed=12345)     # (500, 500) uint8 array
    sparse = generate_terrain(500, 500, seed=12345)         # {Position: Terrain}, non-grass

The same seed and size always give the identical map: every random choice is
drawn from one numpy Generator seeded with `seed`, in a fixed order.
"""

from __future__ import annotations

import operator
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.terrain import DEFAULT_TERRAIN, TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import Position
from generation.guide import FEATURE_SIZE, loosen_borders, sketch
from generation.tileset import Tileset
from generation.wfc import SolveStats, WFCSolver

Progress = Callable[[str, float], None]
"""Called with a stage name and the overall fraction done (0..1)."""

BYTES_PER_CELL = 48
"""Peak working memory per cell during generation, measured (see bench/) with margin."""


def estimate_memory(width: int, height: int) -> int:
    """Bytes generation will need at its peak, to refuse impossible sizes up front."""
    return width * height * BYTES_PER_CELL + 16 * 1024 * 1024


@dataclass(frozen=True, eq=False)
class GeneratedTerrain:
    codes: np.ndarray
    """(height, width) uint8 terrain codes in TERRAIN_ORDER, indexed [y, x]."""
    seed: int
    stats: SolveStats
    seconds: float

    @property
    def height(self) -> int:
        return int(self.codes.shape[0])

    @property
    def width(self) -> int:
        return int(self.codes.shape[1])

    def shares(self) -> dict[Terrain, float]:
        counts = np.bincount(self.codes.reshape(-1), minlength=len(TERRAIN_ORDER))
        return {t: float(counts[i]) / self.codes.size for i, t in enumerate(TERRAIN_ORDER)}


def _check_size(width: int, height: int) -> tuple[int, int]:
    sizes = []
    for name, value in (("width", width), ("height", height)):
        try:
            number = operator.index(value)  # ints and numpy integers, not floats
        except TypeError:
            number = None
        if isinstance(value, bool) or number is None or number < 1:
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
        sizes.append(number)
    return sizes[0], sizes[1]


def generate(
    width: int,
    height: int,
    seed: int | None = None,
    *,
    tileset: Tileset,
    max_retries: int = 10,
    feature_size: float = FEATURE_SIZE,
    progress: Progress | None = None,
) -> GeneratedTerrain:
    """Generate a map, with the figures a caller may want to report."""
    width, height = _check_size(width, height)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    if progress:
        progress("sketching the land", 0.0)
    # Ragged borders two cells deep read well on a big map; on a small one they
    # would eat a visible share of the thin hill rings, so one cell there.
    depth = 2 if min(width, height) >= 256 else 1
    guide = loosen_borders(
        sketch(height, width, rng, tileset, feature_size=feature_size), depth
    )
    if progress:
        progress("collapsing the wave", 0.4)
    solution = WFCSolver(tileset, rng, max_restarts=max_retries).solve(height, width, guide)
    if progress:
        progress("terrain done", 1.0)
    return GeneratedTerrain(solution.codes, seed, solution.stats, time.perf_counter() - started)


def generate_terrain_grid(
    width: int,
    height: int,
    seed: int | None = None,
    *,
    tileset: Tileset,
    max_retries: int = 10,
) -> np.ndarray:
    """The full map as a (height, width) uint8 array of terrain codes, indexed [y, x].

    The reference returned list[list[Terrain]]; an array is 30x smaller and is
    what every consumer (storage, maps, placement) wants. `TERRAIN_ORDER[code]`
    turns a code back into a Terrain.
    """
    return generate(width, height, seed, tileset=tileset, max_retries=max_retries).codes


def generate_terrain(
    width: int,
    height: int,
    seed: int | None = None,
    *,
    tileset: Tileset,
    max_retries: int = 10,
) -> dict[Position, Terrain]:
    """Only the cells that are not grass (the default terrain), as the reference had it."""
    codes = generate_terrain_grid(width, height, seed, tileset=tileset, max_retries=max_retries)
    return sparse_terrain(codes)


def sparse_terrain(codes: np.ndarray) -> dict[Position, Terrain]:
    ys, xs = np.nonzero(codes != TERRAIN_CODE[DEFAULT_TERRAIN])
    kinds = codes[ys, xs]
    return {
        Position(int(x), int(y)): TERRAIN_ORDER[k]
        for x, y, k in zip(xs.tolist(), ys.tolist(), kinds.tolist(), strict=True)
    }
