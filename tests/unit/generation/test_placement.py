"""Agent start positions: standable, spaced, mutually reachable, near the centre."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from core.types import Position
from generation.placement import FULL_BAND_GROUP, PlacementError, find_agent_positions
from generation.regions import label_regions


def place(
    passable: np.ndarray,
    standable: np.ndarray | None = None,
    count: int = 3,
    *,
    min_spacing: int = 30,
    max_spacing: int = 60,
    seed: int = 0,
    avoid: tuple[Position, ...] | set[Position] = (),
) -> list[Position]:
    return find_agent_positions(
        passable,
        passable if standable is None else standable,
        count,
        min_spacing=min_spacing,
        max_spacing=max_spacing,
        rng=np.random.default_rng(seed),
        avoid=avoid,
    )


def pairwise(positions: list[Position]) -> list[int]:
    return [a.manhattan(b) for a, b in combinations(positions, 2)]


def assert_valid(positions: list[Position], passable: np.ndarray, standable: np.ndarray) -> None:
    """Distinct, standable, and all in one connected region of passable."""
    assert len(set(positions)) == len(positions)
    labels, _ = label_regions(passable)
    assert all(standable[p.y, p.x] for p in positions)
    regions = {int(labels[p.y, p.x]) for p in positions}
    assert len(regions) == 1
    assert 0 not in regions


def assert_chained(positions: list[Position], max_spacing: int) -> None:
    """Each agent after the first is within max_spacing of one placed before it."""
    for i, pos in enumerate(positions[1:], start=1):
        assert min(pos.manhattan(other) for other in positions[:i]) <= max_spacing


def test_default_three_get_the_full_band_near_the_centre() -> None:
    grass = np.ones((500, 500), dtype=bool)
    positions = place(grass)
    assert len(positions) == 3
    assert_valid(positions, grass, grass)
    assert all(30 <= d <= 60 for d in pairwise(positions))
    assert all(abs(p.x - 250) <= 100 and abs(p.y - 250) <= 100 for p in positions)


@pytest.mark.parametrize("seed", range(10))
def test_full_band_holds_for_many_seeds(seed: int) -> None:
    grass = np.ones((500, 500), dtype=bool)
    positions = place(grass, seed=seed)
    assert all(30 <= d <= 60 for d in pairwise(positions))


def test_same_rng_state_gives_same_positions() -> None:
    grass = np.ones((300, 300), dtype=bool)
    assert place(grass, seed=42) == place(grass, seed=42)
    assert place(grass, seed=42) != place(grass, seed=43)


def test_groups_up_to_the_limit_are_all_within_max_spacing() -> None:
    grass = np.ones((400, 400), dtype=bool)
    positions = place(grass, count=FULL_BAND_GROUP, seed=3)
    assert len(positions) == FULL_BAND_GROUP
    assert all(30 <= d <= 60 for d in pairwise(positions))


def test_lake_splitting_the_map_keeps_everyone_on_one_side() -> None:
    passable = np.ones((200, 200), dtype=bool)
    passable[:, 60:70] = False  # a lake from top to bottom: 60 columns west, 130 east
    positions = place(passable, count=3)
    assert_valid(positions, passable, passable)
    assert all(p.x >= 70 for p in positions)  # the larger side
    assert all(30 <= d <= 60 for d in pairwise(positions))


def test_lake_with_grass_only_on_the_smaller_side() -> None:
    passable = np.ones((200, 200), dtype=bool)
    passable[:, 60:70] = False
    standable = passable.copy()
    standable[:, 70:] = False  # the large east side is sand: walkable, not standable
    positions = place(passable, standable, count=3)
    assert_valid(positions, passable, standable)
    assert all(p.x < 60 for p in positions)


def test_agents_never_start_on_the_wrong_side_of_a_thin_wall() -> None:
    # Grass everywhere, but a one-cell water line splits the map so the only way
    # across is far away; a diagonal corner gap does not count as a passage.
    passable = np.ones((120, 120), dtype=bool)
    passable[60, :] = False
    passable[60, 0] = True  # a gap at the far west edge...
    passable[61, 0] = False  # ...blocked below, so it meets the south only at a corner
    labels, sizes = label_regions(passable)
    assert sizes.size == 3  # really two regions
    positions = place(passable, count=3, min_spacing=10, max_spacing=40)
    assert_valid(positions, passable, passable)


def test_avoid_is_honoured_even_over_the_whole_centre() -> None:
    grass = np.ones((500, 500), dtype=bool)
    avoid = {Position(x, y) for x in range(150, 351) for y in range(150, 351)}
    positions = place(grass, avoid=avoid)
    assert len(positions) == 3
    assert not avoid.intersection(positions)
    assert all(30 <= d <= 60 for d in pairwise(positions))


def test_avoid_leaves_the_only_free_cell() -> None:
    row = np.ones((1, 5), dtype=bool)
    avoid = (Position(0, 0), Position(1, 0), Position(3, 0), Position(4, 0), Position(9, 9))
    assert place(row, count=1, min_spacing=1, max_spacing=1, avoid=avoid) == [Position(2, 0)]


def test_many_agents_fit_on_a_200_map() -> None:
    grass = np.ones((200, 200), dtype=bool)
    positions = place(grass, count=40)
    assert len(positions) == 40
    assert_valid(positions, grass, grass)
    assert min(pairwise(positions)) >= 1
    assert_chained(positions, 60)


def test_too_many_agents_for_the_spacing_shrink_it() -> None:
    # 40 agents pairwise >= 30 apart cannot fit in 100x100: their disjoint diamonds of
    # radius 14 (421 cells each) would need 16840 cells, the grown box has 128^2 = 16384.
    grass = np.ones((100, 100), dtype=bool)
    positions = place(grass, count=40)
    assert len(positions) == 40
    assert_valid(positions, grass, grass)
    assert 1 <= min(pairwise(positions)) < 30
    assert_chained(positions, 60)


def test_narrow_strip_shrinks_the_spacing_for_a_small_group() -> None:
    strip = np.zeros((5, 40), dtype=bool)
    strip[2, :] = True  # 40 cells in a line: three agents cannot be 30 apart
    positions = place(strip, count=3)
    assert_valid(positions, strip, strip)
    distances = pairwise(positions)
    assert min(distances) < 30
    assert max(distances) <= 60


def test_scattered_grass_in_reach_after_shrinking() -> None:
    passable = np.ones((60, 60), dtype=bool)
    standable = np.zeros((60, 60), dtype=bool)
    standable[10, 10] = standable[10, 20] = standable[25, 15] = standable[50, 50] = True
    positions = place(passable, standable, count=3, min_spacing=30, max_spacing=40)
    assert set(positions) == {Position(10, 10), Position(20, 10), Position(15, 25)}


@pytest.mark.parametrize("seed", range(25))
def test_random_masks_either_place_validly_or_explain(seed: int) -> None:
    rng = np.random.default_rng(seed)
    height, width = rng.integers(5, 60, size=2)
    passable = rng.random((height, width)) < rng.uniform(0.5, 0.9)
    standable = passable & (rng.random((height, width)) < 0.5)
    count = int(rng.integers(1, 8))
    max_spacing = int(rng.integers(2, 20))
    try:
        positions = place(
            passable,
            standable,
            count,
            min_spacing=max_spacing // 2 or 1,
            max_spacing=max_spacing,
            seed=seed,
        )
    except PlacementError as exc:
        assert "\n" not in str(exc)
        return
    assert len(positions) == count
    assert_valid(positions, passable, standable)
    if count <= FULL_BAND_GROUP:
        assert all(d <= max_spacing for d in pairwise(positions))
    else:
        assert_chained(positions, max_spacing)


# Errors: one line each, saying what to change.


def test_count_below_one() -> None:
    grass = np.ones((10, 10), dtype=bool)
    with pytest.raises(PlacementError, match="agent count must be at least 1, got 0"):
        place(grass, count=0)


def test_more_agents_than_reachable_standable_cells() -> None:
    passable = np.zeros((3, 11), dtype=bool)
    passable[:, :5] = True  # 15 cells west
    passable[:, 6:] = True  # 15 cells east, not connected
    with pytest.raises(PlacementError, match="only 15 free standable cells.*at most 15"):
        place(passable, count=20, min_spacing=1, max_spacing=5)


def test_avoid_counts_against_reachable_cells() -> None:
    grass = np.ones((2, 2), dtype=bool)
    with pytest.raises(PlacementError, match="only 3 free standable cells"):
        place(grass, count=4, min_spacing=1, max_spacing=2, avoid=(Position(0, 0),))


def test_spacing_that_cannot_fit_for_a_small_group() -> None:
    row = np.ones((1, 200), dtype=bool)
    standable = np.zeros((1, 200), dtype=bool)
    standable[0, [0, 100, 199]] = True  # grass 99+ cells apart, max_spacing 60
    with pytest.raises(PlacementError, match="all within max_spacing 60.*raise max_spacing"):
        place(row, standable, count=2)


def test_spacing_that_cannot_fit_for_a_chain() -> None:
    row = np.ones((1, 400), dtype=bool)
    standable = np.zeros((1, 400), dtype=bool)
    standable[0, ::80] = True  # five grass cells, 80 apart
    with pytest.raises(PlacementError, match="each within max_spacing 60 of another"):
        place(row, standable, count=FULL_BAND_GROUP + 1)


def test_no_standable_cell() -> None:
    passable = np.ones((8, 8), dtype=bool)
    with pytest.raises(PlacementError, match="the 8x8 map has no standable cell"):
        place(passable, np.zeros((8, 8), dtype=bool))


def test_standable_cells_all_impassable() -> None:
    passable = np.zeros((4, 4), dtype=bool)
    with pytest.raises(PlacementError, match="every standable cell is impassable"):
        place(passable, np.ones((4, 4), dtype=bool))


def test_every_standable_cell_avoided() -> None:
    grass = np.ones((1, 2), dtype=bool)
    with pytest.raises(PlacementError, match="every standable cell is in avoid"):
        place(grass, count=1, avoid=(Position(0, 0), Position(1, 0)))


def test_mismatched_shapes() -> None:
    with pytest.raises(PlacementError, match=r"shape \(10, 12\) but standable has \(12, 10\)"):
        place(np.ones((10, 12), dtype=bool), np.ones((12, 10), dtype=bool))


def test_non_boolean_mask() -> None:
    with pytest.raises(PlacementError, match="standable must be a boolean mask, got dtype uint8"):
        place(np.ones((5, 5), dtype=bool), np.ones((5, 5), dtype=np.uint8))


def test_one_dimensional_mask() -> None:
    with pytest.raises(PlacementError, match="passable must be a 2-D"):
        place(np.ones(5, dtype=bool), np.ones(5, dtype=bool))


def test_min_spacing_below_one() -> None:
    with pytest.raises(PlacementError, match="min_spacing must be at least 1, got 0"):
        place(np.ones((5, 5), dtype=bool), min_spacing=0, max_spacing=3)


def test_max_spacing_below_min_spacing() -> None:
    with pytest.raises(PlacementError, match=r"max_spacing \(20\) must be at least min_spacing"):
        place(np.ones((5, 5), dtype=bool), min_spacing=30, max_spacing=20)


def test_placement_error_is_a_value_error() -> None:
    assert issubclass(PlacementError, ValueError)


def _near(grass: np.ndarray, near: Position, radius: int, seed: int = 0) -> list[Position]:
    return find_agent_positions(grass, grass, 3, min_spacing=30, max_spacing=60,
                                rng=np.random.default_rng(seed), near=near, near_radius=radius)


@pytest.mark.parametrize("seed", range(5))
def test_near_puts_the_group_within_the_radius_of_that_place(seed: int) -> None:
    grass = np.ones((500, 500), dtype=bool)
    spot = Position(400, 90)  # far from the centre
    positions = _near(grass, spot, 40, seed)
    assert all(max(abs(p.x - spot.x), abs(p.y - spot.y)) <= 40 for p in positions)
    assert all(30 <= d <= 60 for d in pairwise(positions))


def test_near_a_place_with_no_room_looks_further_out_and_keeps_the_spacing() -> None:
    grass = np.ones((300, 300), dtype=bool)
    grass[100:200, 100:200] = False  # nothing to stand on within 40 of the middle
    spot = Position(150, 150)
    positions = _near(grass, spot, 40)
    assert_valid(positions, grass, grass)
    assert all(30 <= d <= 60 for d in pairwise(positions))
    assert all(max(abs(p.x - spot.x), abs(p.y - spot.y)) <= 80 for p in positions)


def test_near_off_the_map_falls_back_to_the_centre() -> None:
    grass = np.ones((500, 500), dtype=bool)
    positions = _near(grass, Position(900, 900), 40)
    assert all(abs(p.x - 250) <= 100 and abs(p.y - 250) <= 100 for p in positions)
