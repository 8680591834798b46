"""The guide sketch (elevation and moisture cut into bands) and the noise under it."""

from __future__ import annotations

import numpy as np
import pytest

from core.terrain import TERRAIN_CODE, Terrain
from generation.guide import SOFT, UNDECIDED, loosen_borders, sketch
from generation.noise import fractal_noise
from generation.tileset import Tileset

W, C, S, G, F, H, ST = (
    TERRAIN_CODE[t]
    for t in (
        Terrain.WATER,
        Terrain.COAST,
        Terrain.SAND,
        Terrain.GRASS,
        Terrain.FOREST,
        Terrain.HILL,
        Terrain.STONE,
    )
)
SOFT_CODES = (G, F, H)


def neighbour_pairs(grid: np.ndarray) -> set[tuple[int, int]]:
    """Every (a, b) of horizontally or vertically touching cells, both ways round."""
    pairs: set[tuple[int, int]] = set()
    for a, b in ((grid[:, :-1], grid[:, 1:]), (grid[:-1, :], grid[1:, :])):
        found = set(zip(a.ravel().tolist(), b.ravel().tolist(), strict=True))
        pairs |= found | {(y, x) for x, y in found}
    return pairs


def neighbours_of(grid: np.ndarray, code: int) -> set[int]:
    return {b for a, b in neighbour_pairs(grid) if a == code}


def make_sketch(tileset: Tileset, size: tuple[int, int], seed: int) -> np.ndarray:
    return sketch(size[0], size[1], np.random.default_rng(seed), tileset)


# --- sketch -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_sketch_shares_are_near_the_targets(tileset: Tileset, seed: int) -> None:
    guide = make_sketch(tileset, (200, 200), seed)
    assert guide.shape == (200, 200) and guide.dtype == np.uint8
    got = np.bincount(guide.ravel(), minlength=7) / guide.size
    target = np.asarray(tileset.target_shares) / np.sum(tileset.target_shares)
    misses = {t.value: round(float(got[i] / target[i] - 1), 3) for i, t in enumerate(Terrain)}
    assert all(abs(m) <= 0.15 for m in misses.values()), misses


@pytest.mark.parametrize("size", [(200, 200), (64, 64), (30, 300), (300, 30), (7, 7)])
@pytest.mark.parametrize("seed", range(4))
def test_sketch_rings_water_and_stone(tileset: Tileset, size: tuple[int, int], seed: int) -> None:
    guide = make_sketch(tileset, size, seed)
    assert guide.shape == size
    assert set(np.unique(guide).tolist()) <= set(range(7))
    # Lakes are ringed by shallows: water touches only water and coast.
    assert neighbours_of(guide, W) <= {W, C}
    # Shallows are ringed by beaches.
    assert neighbours_of(guide, C) <= {W, C, S}
    # Outcrops sit inside hills: stone never touches grass or forest (or the wet).
    assert not neighbours_of(guide, ST) & {G, F, W, C}
    # Woods stop short of beaches.
    assert S not in neighbours_of(guide, F)


def test_sketch_uses_every_band_on_a_large_map(tileset: Tileset) -> None:
    guide = make_sketch(tileset, (200, 200), 1)
    assert set(np.unique(guide).tolist()) == set(range(7))


def test_sketch_is_seeded(tileset: Tileset) -> None:
    one = make_sketch(tileset, (120, 90), 3)
    again = make_sketch(tileset, (120, 90), 3)
    other = make_sketch(tileset, (120, 90), 4)
    assert one.tobytes() == again.tobytes()
    assert one.tobytes() != other.tobytes()


def test_sketch_follows_other_target_shares(tileset: Tileset) -> None:
    shares = [0.20, 0.05, 0.05, 0.30, 0.20, 0.15, 0.05]
    wetter = Tileset.build(
        weights=list(tileset.weights), self_affinity=list(tileset.self_affinity),
        target_shares=shares, passable=list(tileset.passable),
    )
    guide = make_sketch(wetter, (200, 200), 0)
    got = np.bincount(guide.ravel(), minlength=7) / guide.size
    assert got[W] == pytest.approx(0.20, rel=0.15)
    assert got[G] == pytest.approx(0.30, rel=0.15)
    assert got[W] > 2 * tileset.target_shares[W]


# --- loosen_borders ---------------------------------------------------------------------


def soft_border_cells(guide: np.ndarray) -> np.ndarray:
    """Soft cells with a four-neighbour of a different soft terrain (a plain loop)."""
    h, w = guide.shape
    out = np.zeros(guide.shape, dtype=bool)
    for y in range(h):
        for x in range(w):
            if guide[y, x] not in SOFT_CODES:
                continue
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < h and 0 <= nx < w:
                    other = guide[ny, nx]
                    if other in SOFT_CODES and other != guide[y, x]:
                        out[y, x] = True
    return out


def within(mask: np.ndarray, steps: int) -> np.ndarray:
    """Cells at most `steps` four-neighbour steps from a True cell of `mask`."""
    out = mask.copy()
    for _ in range(steps):
        grown = out.copy()
        grown[1:, :] |= out[:-1, :]
        grown[:-1, :] |= out[1:, :]
        grown[:, 1:] |= out[:, :-1]
        grown[:, :-1] |= out[:, 1:]
        out = grown
    return out


def test_soft_terrains_are_grass_forest_and_hill() -> None:
    assert set(SOFT) == {Terrain.GRASS, Terrain.FOREST, Terrain.HILL}


@pytest.mark.parametrize("width", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_loosen_borders_frees_only_soft_cells_along_soft_borders(
    tileset: Tileset, width: int, seed: int
) -> None:
    guide = make_sketch(tileset, (80, 80), seed)
    before = guide.copy()
    loose = loosen_borders(guide, width)
    assert np.array_equal(guide, before)  # the input is left alone
    freed = loose == UNDECIDED
    assert freed.any()
    # Only grass, forest and hill are ever freed ...
    assert set(np.unique(guide[freed]).tolist()) <= set(SOFT_CODES)
    # ... and only near a border between two of them.
    border = soft_border_cells(guide)
    near = within(border, width - 1)
    assert not (freed & ~near).any()
    # Every border cell itself is freed.
    assert freed[border].all()
    # Everything else is the sketch unchanged.
    assert np.array_equal(loose[~freed], guide[~freed])


def test_loosen_borders_keeps_shores_and_rock() -> None:
    guide = np.array(
        [
            [W, C, S, G, G],
            [W, C, S, G, F],
            [C, C, S, H, H],
            [S, S, H, ST, H],
        ],
        dtype=np.uint8,
    )
    loose = loosen_borders(guide, 1)
    expected = guide.copy()
    # (y, x) of the soft cells with a different soft neighbour; the hills at the
    # bottom touch only sand and stone, so they stay.
    for y, x in ((0, 4), (1, 3), (1, 4), (2, 3), (2, 4)):
        expected[y, x] = UNDECIDED
    assert loose.tolist() == expected.tolist()


def test_loosen_borders_leaves_a_single_soft_terrain_alone() -> None:
    guide = np.array([[W, C, S, G], [C, S, G, G], [S, G, G, G]], dtype=np.uint8)
    assert np.array_equal(loosen_borders(guide, 2), guide)


# --- fractal_noise ----------------------------------------------------------------------


@pytest.mark.parametrize(("height", "width"), [(50, 80), (80, 50), (1, 1), (3, 200)])
def test_noise_has_the_requested_shape_and_dtype(height: int, width: int) -> None:
    field = fractal_noise(height, width, np.random.default_rng(0), feature_size=20.0)
    assert field.shape == (height, width)
    assert field.dtype == np.float32
    assert np.isfinite(field).all()


def test_noise_is_deterministic_for_the_same_seed() -> None:
    one = fractal_noise(64, 48, np.random.default_rng(42), feature_size=16.0, octaves=5)
    two = fractal_noise(64, 48, np.random.default_rng(42), feature_size=16.0, octaves=5)
    other = fractal_noise(64, 48, np.random.default_rng(43), feature_size=16.0, octaves=5)
    assert one.tobytes() == two.tobytes()
    assert not np.array_equal(one, other)


def test_noise_varies_across_the_field_but_smoothly() -> None:
    field = fractal_noise(200, 200, np.random.default_rng(1), feature_size=50.0, octaves=3)
    spread = float(field.max() - field.min())
    assert spread > 0
    # Neighbouring cells differ far less than the field as a whole.
    step = float(np.abs(np.diff(field, axis=1)).max())
    assert step < spread / 5


def test_noise_with_features_smaller_than_a_cell_is_flat() -> None:
    field = fractal_noise(10, 12, np.random.default_rng(0), feature_size=1.0)
    assert field.shape == (10, 12) and field.dtype == np.float32
    assert not field.any()
