"""Shortest paths on the movement grid, checked against a plain breadth-first search."""

from __future__ import annotations

from collections import deque
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import services.pathfinding as pathfinding
from core.types import Position
from services.pathfinding import find_path, is_walkable


def open_grid(width: int, height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.ones((height, width), dtype=bool),
        np.zeros((height, width), dtype=bool),
        np.zeros((height, width), dtype=bool),
    )


def steps_from(
    passable: np.ndarray, blocked_east: np.ndarray, blocked_south: np.ndarray, pos: Position
) -> list[Position]:
    """Every cell one legal step from `pos`, written from the rules, not the code."""
    height, width = passable.shape
    x, y = pos.x, pos.y
    out = []
    if y > 0 and not blocked_south[y - 1, x]:
        out.append(Position(x, y - 1))
    if x < width - 1 and not blocked_east[y, x]:
        out.append(Position(x + 1, y))
    if y < height - 1 and not blocked_south[y, x]:
        out.append(Position(x, y + 1))
    if x > 0 and not blocked_east[y, x - 1]:
        out.append(Position(x - 1, y))
    return [p for p in out if passable[p.y, p.x]]


def bfs_distance(
    passable: np.ndarray,
    blocked_east: np.ndarray,
    blocked_south: np.ndarray,
    start: Position,
    goal: Position,
) -> int | None:
    height, width = passable.shape
    if start == goal:
        return 0
    if not (0 <= goal.x < width and 0 <= goal.y < height) or not passable[goal.y, goal.x]:
        return None
    distance = {start: 0}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for there in steps_from(passable, blocked_east, blocked_south, here):
            if there not in distance:
                distance[there] = distance[here] + 1
                if there == goal:
                    return distance[there]
                queue.append(there)
    return None


@st.composite
def grids(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, Position, Position]:
    width = draw(st.integers(1, 9))
    height = draw(st.integers(1, 9))
    shape = (height, width)
    passable = draw(arrays(np.bool_, shape, elements=st.sampled_from([True, True, True, False])))
    walls = st.sampled_from([False, False, False, True])
    blocked_east = draw(arrays(np.bool_, shape, elements=walls))
    blocked_south = draw(arrays(np.bool_, shape, elements=walls))
    start = Position(draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1)))
    goal = Position(draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1)))
    return passable, blocked_east, blocked_south, start, goal


def assert_optimal(grid: tuple[np.ndarray, np.ndarray, np.ndarray, Position, Position]) -> None:
    passable, blocked_east, blocked_south, start, goal = grid
    expected = bfs_distance(passable, blocked_east, blocked_south, start, goal)
    path = find_path(passable, blocked_east, blocked_south, start, goal)
    if expected is None:
        assert path is None
        return
    assert path is not None
    assert len(path) == expected
    assert is_walkable(path, passable, blocked_east, blocked_south, start)
    if path:
        assert path[-1] == goal


@settings(max_examples=400, deadline=None)
@given(grids())
def test_paths_are_shortest_and_walkable(grid) -> None:
    assert_optimal(grid)


@settings(max_examples=300, deadline=None)
@given(grids())
def test_reachability_check_never_refuses_a_reachable_goal(grid) -> None:
    # Checking after the first expansion sends every search through the labelling.
    with mock.patch.object(pathfinding, "REACHABILITY_CHECK_AFTER", 1):
        assert_optimal(grid)


def reference_regions(
    passable: np.ndarray, blocked_east: np.ndarray, blocked_south: np.ndarray
) -> dict[Position, int]:
    region: dict[Position, int] = {}
    height, width = passable.shape
    for y in range(height):
        for x in range(width):
            seed = Position(x, y)
            if not passable[y, x] or seed in region:
                continue
            label = len(set(region.values()))
            region[seed] = label
            queue = deque([seed])
            while queue:
                for there in steps_from(passable, blocked_east, blocked_south, queue.popleft()):
                    if there not in region:
                        region[there] = label
                        queue.append(there)
    return region


@settings(max_examples=300, deadline=None)
@given(grids())
def test_region_labelling_matches_flood_fill(grid) -> None:
    passable, blocked_east, blocked_south, _, _ = grid
    width = passable.shape[1]
    run_of_cell, root = pathfinding._region_roots(passable, blocked_east, blocked_south)
    expected = reference_regions(passable, blocked_east, blocked_south)
    cells = list(expected)
    for a in cells:
        for b in cells:
            same = root[run_of_cell[a.y * width + a.x]] == root[run_of_cell[b.y * width + b.x]]
            assert same == (expected[a] == expected[b]), (a, b)


@pytest.mark.parametrize("seed", range(20))
def test_paths_on_larger_random_maps_are_shortest(seed: int) -> None:
    rng = np.random.default_rng(seed)
    width, height = (int(n) for n in rng.integers(20, 45, size=2))
    passable = rng.random((height, width)) > 0.2
    blocked_east = rng.random((height, width)) > 0.8
    blocked_south = rng.random((height, width)) > 0.8
    for _ in range(5):
        start = Position(int(rng.integers(width)), int(rng.integers(height)))
        goal = Position(int(rng.integers(width)), int(rng.integers(height)))
        assert_optimal((passable, blocked_east, blocked_south, start, goal))


def test_open_map_path_is_manhattan_long() -> None:
    grid = open_grid(40, 30)
    path = find_path(*grid, Position(0, 0), Position(39, 29))
    assert path is not None
    assert len(path) == 39 + 29
    assert path[-1] == Position(39, 29)
    assert is_walkable(path, *grid, Position(0, 0))


def test_start_equal_to_goal_is_the_empty_path() -> None:
    passable, blocked_east, blocked_south = open_grid(5, 5)
    assert find_path(passable, blocked_east, blocked_south, Position(2, 2), Position(2, 2)) == []
    passable[2, 2] = False  # already there, even where nobody could step
    assert find_path(passable, blocked_east, blocked_south, Position(2, 2), Position(2, 2)) == []


def test_a_wall_blocks_and_forces_a_detour() -> None:
    passable, blocked_east, blocked_south = open_grid(3, 3)
    blocked_east[0:2, 0] = True  # wall east of (0,0) and (0,1)
    path = find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(1, 0))
    assert path == [Position(0, 1), Position(0, 2), Position(1, 2), Position(1, 1), Position(1, 0)]


def test_a_wall_across_a_corridor_makes_it_unreachable() -> None:
    passable, blocked_east, blocked_south = open_grid(3, 1)
    blocked_east[0, 1] = True
    assert find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(2, 0)) is None
    blocked_south_only = np.zeros((3, 1), dtype=bool)
    blocked_south_only[0, 0] = True  # the same in a vertical corridor
    column = np.ones((3, 1), dtype=bool)
    assert find_path(column, np.zeros((3, 1), dtype=bool), blocked_south_only,
                     Position(0, 2), Position(0, 0)) is None


def test_a_door_in_a_wall_lets_the_path_through() -> None:
    passable, blocked_east, blocked_south = open_grid(5, 5)
    blocked_east[:, 1] = True  # a wall between columns 1 and 2 from top to bottom
    assert find_path(passable, blocked_east, blocked_south, Position(0, 2), Position(4, 2)) is None
    blocked_east[4, 1] = False  # a door at the bottom: wall there, but not blocked
    path = find_path(passable, blocked_east, blocked_south, Position(0, 2), Position(4, 2))
    assert path is not None
    assert len(path) == 4 + 2 + 2
    assert (Position(1, 4), Position(2, 4)) in set(zip(path, path[1:], strict=False))
    assert is_walkable(path, passable, blocked_east, blocked_south, Position(0, 2))


def test_impassable_cells_are_walked_around() -> None:
    passable, blocked_east, blocked_south = open_grid(5, 3)
    passable[0:2, 2] = False  # a pond in the middle column, open at the bottom
    path = find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(4, 0))
    assert path is not None
    assert len(path) == 8
    assert all(passable[p.y, p.x] for p in path)


def test_impassable_goal_is_none() -> None:
    passable, blocked_east, blocked_south = open_grid(5, 5)
    passable[3, 3] = False
    assert find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(3, 3)) is None


@pytest.mark.parametrize("goal", [Position(-1, 0), Position(0, -1), Position(5, 0),
                                  Position(0, 4), Position(99, 99)])
def test_goal_outside_the_map_is_none(goal: Position) -> None:
    grid = open_grid(5, 4)
    assert find_path(*grid, Position(1, 1), goal) is None


def test_start_outside_the_map_is_refused() -> None:
    grid = open_grid(5, 4)
    with pytest.raises(ValueError, match="outside the 5x4 map"):
        find_path(*grid, Position(5, 0), Position(1, 1))


def test_an_impassable_start_can_be_left_but_not_reentered() -> None:
    passable, blocked_east, blocked_south = open_grid(3, 1)
    passable[0, 1] = False  # standing in shallows that turned deep
    path = find_path(passable, blocked_east, blocked_south, Position(1, 0), Position(2, 0))
    assert path == [Position(2, 0)]
    assert find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(2, 0)) is None


def test_the_last_column_and_row_edge_values_are_ignored() -> None:
    passable, blocked_east, blocked_south = open_grid(4, 4)
    blocked_east[:, 3] = True
    blocked_south[3, :] = True
    path = find_path(passable, blocked_east, blocked_south, Position(3, 0), Position(0, 3))
    assert path is not None
    assert len(path) == 6


def test_same_inputs_same_path() -> None:
    rng = np.random.default_rng(7)
    passable = rng.random((40, 40)) > 0.25
    blocked_east = rng.random((40, 40)) > 0.85
    blocked_south = rng.random((40, 40)) > 0.85
    passable[0, 0] = passable[39, 39] = True
    blocked_east[0, 0] = blocked_south[0, 0] = False
    blocked_east[39, 38] = blocked_south[38, 39] = False
    args = (passable, blocked_east, blocked_south, Position(0, 0), Position(39, 39))
    first = find_path(*args)
    copies = tuple(a.copy() for a in args[:3])
    assert find_path(*args) == first
    assert find_path(*copies, Position(0, 0), Position(39, 39)) == first
    expected = bfs_distance(*args)
    assert (first is None) == (expected is None)
    if first is not None:
        assert len(first) == expected


def walled_in_goal(side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, Position]:
    passable, blocked_east, blocked_south = open_grid(side, side)
    c = side // 2
    blocked_east[c, c] = blocked_east[c, c - 1] = True
    blocked_south[c, c] = blocked_south[c - 1, c] = True
    return passable, blocked_east, blocked_south, Position(c, c)


def test_walled_in_goal_is_unreachable_on_a_large_map() -> None:
    # 100x100 is larger than REACHABILITY_CHECK_AFTER, so the labelling decides.
    passable, blocked_east, blocked_south, centre = walled_in_goal(100)
    assert passable.size > pathfinding.REACHABILITY_CHECK_AFTER
    assert find_path(passable, blocked_east, blocked_south, Position(0, 0), centre) is None
    assert find_path(passable, blocked_east, blocked_south, centre, Position(0, 0)) is None
    assert find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(99, 0))


def test_a_wall_across_a_large_map_makes_the_far_side_unreachable() -> None:
    passable, blocked_east, blocked_south = open_grid(120, 80)
    blocked_east[:, 59] = True
    assert find_path(passable, blocked_east, blocked_south, Position(0, 0),
                     Position(119, 79)) is None
    blocked_east[40, 59] = False  # one door
    path = find_path(passable, blocked_east, blocked_south, Position(0, 0), Position(119, 79))
    assert path is not None
    assert len(path) == 119 + 79
    assert is_walkable(path, passable, blocked_east, blocked_south, Position(0, 0))


def test_non_boolean_arrays_are_refused() -> None:
    passable, blocked_east, blocked_south = open_grid(3, 3)
    with pytest.raises(ValueError, match="passable must be a 2-D boolean"):
        find_path(passable.astype(np.uint8), blocked_east, blocked_south,
                  Position(0, 0), Position(1, 1))
    with pytest.raises(ValueError, match="share one shape"):
        find_path(passable, blocked_east[:, :2], blocked_south, Position(0, 0), Position(1, 1))


def test_is_walkable_rejects_each_kind_of_bad_step() -> None:
    passable, blocked_east, blocked_south = open_grid(4, 4)
    passable[3, 3] = False
    blocked_east[1, 1] = True  # between (1,1) and (2,1)
    blocked_south[1, 1] = True  # between (1,1) and (1,2)
    here = Position(1, 1)
    assert is_walkable([], passable, blocked_east, blocked_south, here)
    assert is_walkable([Position(1, 0), Position(2, 0)], passable, blocked_east, blocked_south,
                       here)
    bad = {
        "diagonal": [Position(2, 2)],
        "jump": [Position(1, 3)],
        "stand still": [Position(1, 1)],
        "east through wall": [Position(2, 1)],
        "south through wall": [Position(1, 2)],
        "impassable": [Position(1, 0), Position(2, 0), Position(3, 0), Position(3, 1),
                       Position(3, 2), Position(3, 3)],
        "off the map": [Position(1, 0), Position(1, -1)],
    }
    for name, path in bad.items():
        assert not is_walkable(path, passable, blocked_east, blocked_south, here), name
    assert not is_walkable([Position(1, 1)], passable, blocked_east, blocked_south,
                           Position(2, 1)), "west through wall"
    assert not is_walkable([Position(1, 1)], passable, blocked_east, blocked_south,
                           Position(1, 2)), "north through wall"
    assert not is_walkable([], passable, blocked_east, blocked_south, Position(4, 0))
