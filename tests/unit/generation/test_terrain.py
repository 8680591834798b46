"""World terrain, end to end: the Done-when checks of terrain generation, as tests."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from core.terrain import DEFAULT_TERRAIN, TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import Position
from generation.regions import largest_region_share
from generation.terrain import (
    GeneratedTerrain,
    estimate_memory,
    generate,
    generate_terrain,
    generate_terrain_grid,
    sparse_terrain,
)
from generation.tileset import Tileset
from generation.wfc import SolveStats, count_violations

SMALL_SEEDS = range(50)
LARGE_SEEDS = range(5)
CASES = [(64, seed) for seed in SMALL_SEEDS] + [(500, seed) for seed in LARGE_SEEDS]
CASE_IDS = [f"{size}x{size}-seed{seed}" for size, seed in CASES]

SHARE_TOLERANCE = 0.30
"""Each terrain's share may miss its target by this fraction of the target."""
MIN_CONNECTED = 0.95


@cache
def _generated(size: int, seed: int, tileset: Tileset) -> GeneratedTerrain:
    """Each map once per test process: three checks read the same 55 maps."""
    return generate(size, size, seed, tileset=tileset)


@pytest.fixture
def world(request: pytest.FixtureRequest, tileset: Tileset) -> GeneratedTerrain:
    size, seed = request.param
    return _generated(size, seed, tileset)


@pytest.mark.parametrize("world", CASES, ids=CASE_IDS, indirect=True)
def test_no_adjacency_violations(world: GeneratedTerrain, tileset: Tileset) -> None:
    assert world.codes.dtype == np.uint8
    assert int(world.codes.max()) < len(TERRAIN_ORDER)
    assert count_violations(world.codes, tileset) == 0


@pytest.mark.parametrize("world", CASES, ids=CASE_IDS, indirect=True)
def test_terrain_shares_are_near_the_targets(world: GeneratedTerrain, tileset: Tileset) -> None:
    shares = world.shares()
    assert set(shares) == set(Terrain)
    assert sum(shares.values()) == pytest.approx(1.0)
    misses = {
        terrain.value: round(shares[terrain] / tileset.target_shares[TERRAIN_CODE[terrain]] - 1, 3)
        for terrain in Terrain
    }
    assert all(abs(miss) <= SHARE_TOLERANCE for miss in misses.values()), misses


@pytest.mark.parametrize("world", CASES, ids=CASE_IDS, indirect=True)
def test_passable_land_is_almost_all_one_region(
    world: GeneratedTerrain, tileset: Tileset
) -> None:
    passable = tileset.passable[world.codes]
    assert passable.shape == world.codes.shape and passable.dtype == bool
    assert largest_region_share(passable) >= MIN_CONNECTED


def test_shares_are_computed_from_the_codes() -> None:
    codes = np.array([[0, 0, 3, 3], [3, 3, 6, 4]], dtype=np.uint8)
    made = GeneratedTerrain(codes, seed=1, stats=SolveStats(1, 0, 0, 8), seconds=0.0)
    shares = made.shares()
    assert shares[Terrain.WATER] == 0.25
    assert shares[Terrain.GRASS] == 0.5
    assert shares[Terrain.STONE] == shares[Terrain.FOREST] == 0.125
    assert shares[Terrain.COAST] == shares[Terrain.SAND] == shares[Terrain.HILL] == 0.0
    assert (made.width, made.height) == (4, 2)


@pytest.mark.parametrize(("width", "height"), [(64, 64), (300, 120), (37, 91)])
def test_same_seed_and_size_give_the_identical_map(
    tileset: Tileset, width: int, height: int
) -> None:
    first = generate_terrain_grid(width, height, 2024, tileset=tileset)
    second = generate_terrain_grid(width, height, 2024, tileset=tileset)
    assert first.tobytes() == second.tobytes()
    assert first.shape == second.shape == (height, width)


def test_different_seeds_give_different_maps(tileset: Tileset) -> None:
    maps = {generate_terrain_grid(64, 64, seed, tileset=tileset).tobytes() for seed in range(5)}
    assert len(maps) == 5


def test_the_seed_is_recorded_and_a_missing_seed_is_drawn(tileset: Tileset) -> None:
    assert generate(32, 32, 77, tileset=tileset).seed == 77
    drawn = generate(32, 32, tileset=tileset)
    assert isinstance(drawn.seed, int) and 0 <= drawn.seed < 2**31
    replay = generate(32, 32, drawn.seed, tileset=tileset)
    assert replay.codes.tobytes() == drawn.codes.tobytes()


def test_generate_terrain_returns_only_non_grass_cells_matching_the_grid(
    tileset: Tileset,
) -> None:
    grid = generate_terrain_grid(120, 80, 9, tileset=tileset)
    sparse = generate_terrain(120, 80, 9, tileset=tileset)
    assert DEFAULT_TERRAIN is Terrain.GRASS
    assert Terrain.GRASS not in sparse.values()
    assert len(sparse) == int(np.count_nonzero(grid != TERRAIN_CODE[Terrain.GRASS]))
    assert len(sparse) > 0
    for pos, terrain in sparse.items():
        assert isinstance(pos, Position)
        assert 0 <= pos.x < 120 and 0 <= pos.y < 80
        assert TERRAIN_ORDER[grid[pos.y, pos.x]] is terrain
    # Every cell left out is grass.
    ys, xs = np.nonzero(grid == TERRAIN_CODE[Terrain.GRASS])
    assert not any(Position(int(x), int(y)) in sparse for x, y in zip(xs, ys, strict=True))


def test_sparse_terrain_reads_x_and_y_the_right_way_round() -> None:
    g, w, t = (TERRAIN_CODE[k] for k in (Terrain.GRASS, Terrain.WATER, Terrain.STONE))
    codes = np.array([[g, w, g], [g, g, t]], dtype=np.uint8)  # 3 wide, 2 high
    assert sparse_terrain(codes) == {Position(1, 0): Terrain.WATER, Position(2, 1): Terrain.STONE}


@pytest.mark.parametrize("bad", [0, -1, -64, True, False, 2.0, 64.5, "64", None])
def test_generate_rejects_sizes_that_are_not_positive_whole_numbers(
    tileset: Tileset, bad: object
) -> None:
    with pytest.raises(ValueError, match="width must be a positive whole number"):
        generate(bad, 64, 1, tileset=tileset)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="height must be a positive whole number"):
        generate(64, bad, 1, tileset=tileset)  # type: ignore[arg-type]


def test_the_grid_and_sparse_helpers_check_sizes_too(tileset: Tileset) -> None:
    with pytest.raises(ValueError, match="width"):
        generate_terrain_grid(0, 10, 1, tileset=tileset)
    with pytest.raises(ValueError, match="height"):
        generate_terrain(10, -5, 1, tileset=tileset)


@pytest.mark.parametrize(("width", "height"), [(300, 120), (120, 300), (1, 1), (1, 40), (40, 1)])
def test_non_square_and_tiny_maps_work(tileset: Tileset, width: int, height: int) -> None:
    world = generate(width, height, 5, tileset=tileset)
    assert world.codes.shape == (height, width)
    assert (world.width, world.height) == (width, height)
    assert count_violations(world.codes, tileset) == 0


def test_a_wide_map_is_not_a_transposed_tall_one(tileset: Tileset) -> None:
    wide = generate_terrain_grid(300, 120, 5, tileset=tileset)
    tall = generate_terrain_grid(120, 300, 5, tileset=tileset)
    assert wide.shape == (120, 300) and tall.shape == (300, 120)
    assert wide.tobytes() != np.ascontiguousarray(tall.T).tobytes()


def test_progress_is_reported_from_start_to_finish(tileset: Tileset) -> None:
    seen: list[tuple[str, float]] = []
    generate(48, 48, 3, tileset=tileset, progress=lambda stage, done: seen.append((stage, done)))
    fractions = [done for _, done in seen]
    assert len(seen) >= 2
    assert fractions == sorted(fractions)
    assert fractions[0] == 0.0 and fractions[-1] == 1.0


def test_estimate_memory_grows_with_the_area() -> None:
    sizes = [(1, 1), (64, 64), (500, 500), (1000, 500), (1000, 1000), (4000, 4000)]
    estimates = [estimate_memory(w, h) for w, h in sizes]
    assert estimates == sorted(estimates)
    assert len(set(estimates)) == len(estimates)
    for (w, h), estimate in zip(sizes, estimates, strict=True):
        assert estimate >= w * h  # at least a byte per cell
    # It depends on the area, not on the shape.
    assert estimate_memory(1000, 250) == estimate_memory(500, 500)
    # Doubling the area roughly doubles the per-cell part.
    big, bigger = estimate_memory(2000, 2000), estimate_memory(4000, 2000)
    assert 1.8 < bigger / big <= 2.0
