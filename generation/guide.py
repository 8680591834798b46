"""The guide: a smooth sketch of the landscape that WFC follows where it can.

Unguided WFC with these tiles gives speckle: every cell is a fresh draw. Real
landscapes have structure at a larger scale, so generation first sketches one
from two smooth noise fields: elevation and moisture. Cutting the elevation at
quantiles gives, from the bottom, water, then coast, then sand (lakes ringed by
shallows and beaches) and, from the top, stone inside hills (hill ranges with
stone at their hearts). The middle ground is forest where it is moist, grass
elsewhere. Each band takes exactly its target share of the sketch.

The sketch ignores the adjacency rules (a forest may touch a beach); WFC then
keeps every guide tile that fits and decides the rest, so the finished map obeys
the rules while following the sketch's shapes and shares.
"""

from __future__ import annotations

import numpy as np

from core.terrain import TERRAIN_CODE, Terrain
from generation.noise import fractal_noise
from generation.tileset import Tileset

LOWLANDS = (Terrain.WATER, Terrain.COAST, Terrain.SAND)
"""Bands from the lowest elevation up."""
HIGHLANDS = (Terrain.STONE, Terrain.HILL)
"""Bands from the highest elevation down."""

SOFT = (Terrain.GRASS, Terrain.FOREST, Terrain.HILL)
"""Land cover that may all touch each other: safe to leave to WFC's draws."""

UNDECIDED = 255
"""A guide value that leaves the cell entirely to WFC."""

FEATURE_SIZE = 110.0
"""Cells across the largest lakes and ranges; fixed, so big worlds get more of them."""


def _quantile(field: np.ndarray, q: float) -> float:
    """A quantile from a sample of the field: exact enough for shares, far cheaper."""
    step = 3 if field.size > 1_000_000 else 1
    sample = field[::step, ::step].reshape(-1) if field.ndim == 2 else field[::step * step]
    if sample.size == 0:
        return 0.0
    q = min(max(q, 0.0), 1.0)
    k = int(round(q * (sample.size - 1)))
    return float(np.partition(sample, k)[k])


def sketch(
    height: int,
    width: int,
    rng: np.random.Generator,
    tileset: Tileset,
    *,
    feature_size: float = FEATURE_SIZE,
) -> np.ndarray:
    """A (height, width) uint8 map of preferred tiles with the target shares.

    Ringing the bands moves a few percent of cells between kinds (more on small
    maps, where the rings are a larger part of each lake), so if the first
    painting misses a share by more than 5%, the cuts are corrected by the
    miss and the map painted once more.
    """
    target = np.asarray(tileset.target_shares, dtype=np.float64)
    target = target / target.sum()
    elevation = fractal_noise(height, width, rng, feature_size=feature_size, octaves=5)
    moisture = fractal_noise(height, width, rng, feature_size=feature_size * 0.8, octaves=4)
    guide = _paint(elevation, moisture, target)
    got = np.bincount(guide.reshape(-1), minlength=target.size) / guide.size
    if np.max(np.abs(got / target - 1.0)) > 0.05:
        corrected = np.clip(target - (got - target), target * 0.25, None)
        guide = _paint(elevation, moisture, corrected / corrected.sum())
    return guide


def _paint(elevation: np.ndarray, moisture: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Cut the fields into bands with the given shares, then ring the bands."""
    low = np.cumsum([shares[TERRAIN_CODE[t]] for t in LOWLANDS])
    high = np.cumsum([shares[TERRAIN_CODE[t]] for t in HIGHLANDS])
    quantiles = [*low, *(1.0 - high[::-1])]
    cuts = np.array([_quantile(elevation, q) for q in quantiles], dtype=np.float32)
    middle = len(LOWLANDS)
    band_code = np.array(
        [TERRAIN_CODE[t] for t in LOWLANDS]
        + [TERRAIN_CODE[Terrain.GRASS]]
        + [TERRAIN_CODE[t] for t in reversed(HIGHLANDS)],
        dtype=np.uint8,
    )
    band = np.zeros(elevation.shape, dtype=np.uint8)
    for cut in cuts:  # cheaper than searchsorted for a handful of cuts
        band += elevation >= cut
    guide = np.take(band_code, band)

    # The middle ground: forest where it is moist.
    in_middle = band == middle
    middle_share = 1.0 - float(low[-1]) - float(high[-1])
    if middle_share > 0 and in_middle.any():
        forest_share = shares[TERRAIN_CODE[Terrain.FOREST]] / middle_share
        wet = _quantile(moisture[in_middle], 1.0 - forest_share)
        guide[in_middle & (moisture > wet)] = TERRAIN_CODE[Terrain.FOREST]
    _ring_the_bands(guide)
    return guide


def loosen_borders(guide: np.ndarray, width: int = 2) -> np.ndarray:
    """The guide with the land-cover borders (grass, forest, hill) left to WFC.

    The sketch's borders are contour lines: smooth and a little artificial. Cells
    along the borders between grass, forest and hill, which all may touch each
    other, are left undecided, and WFC fills them with weighted draws and
    self-affinity, giving ragged wood edges and hill feet. Shores and rock keep
    the sketch's rings: a random draw there would break the lake's shallows.
    """
    soft = np.zeros(256, dtype=bool)
    soft[[TERRAIN_CODE[t] for t in SOFT]] = True
    is_soft = soft[guide]
    edge = np.zeros(guide.shape, dtype=bool)
    differs = (guide[1:, :] != guide[:-1, :]) & is_soft[1:, :] & is_soft[:-1, :]
    edge[1:, :] |= differs
    edge[:-1, :] |= differs
    differs = (guide[:, 1:] != guide[:, :-1]) & is_soft[:, 1:] & is_soft[:, :-1]
    edge[:, 1:] |= differs
    edge[:, :-1] |= differs
    for _ in range(width - 1):
        edge = _grow(edge)
    loose = guide.copy()
    loose[edge & is_soft] = UNDECIDED
    return loose


def _grow(mask: np.ndarray) -> np.ndarray:
    """`mask` plus its four-neighbours."""
    out = mask.copy()
    out[1:, :] |= mask[:-1, :]
    out[:-1, :] |= mask[1:, :]
    out[:, 1:] |= mask[:, :-1]
    out[:, :-1] |= mask[:, 1:]
    return out


def _ring_the_bands(guide: np.ndarray) -> None:
    """Close the gaps where a steep slope skips a band, so the sketch is nearly legal.

    Where elevation falls faster than a band is wide, water would touch grass or
    stone would touch forest. Every lake gets a shallows ring and every shallows a
    beach; every outcrop gets a hill ring; woods stop short of beaches. What little
    is still illegal (a beach against a hill) is left for WFC to settle.
    """
    water, coast, sand = (TERRAIN_CODE[t] for t in LOWLANDS)
    forest = TERRAIN_CODE[Terrain.FOREST]
    stone, hill = (TERRAIN_CODE[t] for t in HIGHLANDS)
    is_water = guide == water
    guide[_grow(is_water) & ~is_water] = coast
    wet = guide <= coast  # water and coast are codes 0 and 1
    guide[_grow(guide == coast) & ~wet] = sand
    is_stone = guide == stone
    guide[_grow(is_stone) & ~is_stone & (guide > sand)] = hill
    guide[(guide == forest) & _grow(guide == sand)] = TERRAIN_CODE[Terrain.GRASS]
