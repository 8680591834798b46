"""Enclosures: the areas that walls (doors included) close off from open land."""

from __future__ import annotations

import numpy as np
import pytest

from core.types import Direction, Position
from services.enclosure import (
    enclosed_region,
    enclosed_regions,
    regions_beside_edge,
    still_joined,
)


def no_walls(width: int = 10, height: int = 10) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((height, width), dtype=bool), np.zeros((height, width), dtype=bool)


def build_room(
    wall_east: np.ndarray, wall_south: np.ndarray, x0: int, y0: int, width: int, height: int
) -> None:
    """Walls all round the rectangle of cells x0..x0+width-1, y0..y0+height-1."""
    for y in range(y0, y0 + height):
        wall_east[y, x0 - 1] = True  # west side
        wall_east[y, x0 + width - 1] = True  # east side
    for x in range(x0, x0 + width):
        wall_south[y0 - 1, x] = True  # north side
        wall_south[y0 + height - 1, x] = True  # south side


def cells(x0: int, y0: int, width: int, height: int) -> frozenset[Position]:
    return frozenset(Position(x, y) for y in range(y0, y0 + height) for x in range(x0, x0 + width))


def test_a_one_cell_room_with_four_walls_is_enclosed() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 4, 4, 1, 1)
    assert enclosed_region(wall_east, wall_south, Position(4, 4)) == {Position(4, 4)}
    assert enclosed_region(wall_east, wall_south, Position(5, 4)) is None  # outside: open


def test_a_three_by_two_room_is_enclosed_from_any_of_its_cells() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 3, 5, 3, 2)
    room = cells(3, 5, 3, 2)
    assert len(room) == 6
    for seed in room:
        assert enclosed_region(wall_east, wall_south, seed) == room


def test_a_room_with_a_door_is_still_enclosed() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 3, 3, 2, 2)
    # A door is a wall edge for enclosure: callers pass walls including door edges, so
    # the array keeps the edge True. The same room with the edge truly open is not.
    assert enclosed_region(wall_east, wall_south, Position(3, 3)) == cells(3, 3, 2, 2)
    wall_east[3, 4] = False
    assert enclosed_region(wall_east, wall_south, Position(3, 3)) is None


def test_an_open_u_shape_is_not_enclosed() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 4, 4, 2, 2)
    wall_south[3, 4] = wall_south[3, 5] = False  # take away the north side
    assert enclosed_region(wall_east, wall_south, Position(4, 4)) is None
    assert enclosed_region(wall_east, wall_south, Position(5, 5)) is None


def test_an_area_touching_the_border_is_not_enclosed() -> None:
    wall_east, wall_south = no_walls()
    # Walls on the three inner sides of the corner cell (0, 0)... there is only the
    # east and the south one, and the map edge is not a wall.
    wall_east[0, 0] = wall_south[0, 0] = True
    assert enclosed_region(wall_east, wall_south, Position(0, 0)) is None
    # A room whose cells reach the last column, closed on every inner side.
    build_room(wall_east, wall_south, 7, 2, 3, 3)
    assert enclosed_region(wall_east, wall_south, Position(8, 3)) is None


def test_the_whole_map_without_walls_is_open_land() -> None:
    wall_east, wall_south = no_walls(50, 50)
    assert enclosed_region(wall_east, wall_south, Position(25, 25)) is None


def test_an_area_over_max_area_is_open_land() -> None:
    wall_east, wall_south = no_walls(40, 40)
    build_room(wall_east, wall_south, 5, 5, 21, 20)  # 420 cells
    assert enclosed_region(wall_east, wall_south, Position(10, 10)) is None  # default 400
    assert enclosed_region(wall_east, wall_south, Position(10, 10), max_area=420) == cells(
        5, 5, 21, 20
    )
    assert enclosed_region(wall_east, wall_south, Position(10, 10), max_area=419) is None


def test_bad_arguments_are_refused() -> None:
    wall_east, wall_south = no_walls()
    with pytest.raises(ValueError, match="outside the 10x10 map"):
        enclosed_region(wall_east, wall_south, Position(10, 0))
    with pytest.raises(ValueError, match="max_area must be a positive int"):
        enclosed_region(wall_east, wall_south, Position(5, 5), max_area=0)
    with pytest.raises(ValueError, match="boolean"):
        enclosed_region(wall_east.astype(int), wall_south, Position(5, 5))
    with pytest.raises(ValueError, match="cardinal"):
        regions_beside_edge(wall_east, wall_south, Position(5, 5), Direction.DOWN)


@pytest.mark.parametrize("recorded", [True, False], ids=["wall-recorded", "wall-not-yet"])
def test_the_last_wall_that_closes_a_room_gives_one_region(recorded: bool) -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 3, 3, 2, 3)
    wall_east[4, 4] = recorded  # the east side of (4, 4), the last wall placed
    regions = regions_beside_edge(wall_east, wall_south, Position(4, 4), Direction.EAST)
    assert regions == [cells(3, 3, 2, 3)]
    # Asked from the outside cell looking west: the same room.
    regions = regions_beside_edge(wall_east, wall_south, Position(5, 4), Direction.WEST)
    assert regions == [cells(3, 3, 2, 3)]


def test_a_wall_splitting_a_room_gives_two_regions() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 2, 2, 4, 3)
    # A partition between columns 3 and 4: the last of its three edges just placed.
    wall_east[2, 3] = wall_east[3, 3] = wall_east[4, 3] = True
    regions = regions_beside_edge(wall_east, wall_south, Position(3, 3), Direction.EAST)
    assert regions == [cells(2, 2, 2, 3), cells(4, 2, 2, 3)]


def test_a_wall_that_closes_nothing_gives_no_region() -> None:
    wall_east, wall_south = no_walls()
    wall_south[4, 4] = True
    assert regions_beside_edge(wall_east, wall_south, Position(4, 4), Direction.SOUTH) == []


def test_a_wall_inside_a_room_that_does_not_split_it_gives_it_once() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 2, 2, 3, 3)
    wall_south[2, 3] = True  # a stub of wall inside: the room is still one piece
    regions = regions_beside_edge(wall_east, wall_south, Position(3, 2), Direction.SOUTH)
    assert regions == [cells(2, 2, 3, 3)]


def test_a_wall_on_the_map_edge_has_one_side() -> None:
    wall_east, wall_south = no_walls()
    assert regions_beside_edge(wall_east, wall_south, Position(0, 5), Direction.WEST) == []


# ---------------------------------------------------------------------- against a plain flood


def reference_component(
    wall_east: np.ndarray, wall_south: np.ndarray, seed: Position,
    extra: tuple[Position, Position] | None = None,
) -> set[tuple[int, int]]:
    """Every cell joined to `seed`, found the slow obvious way."""
    height, width = wall_east.shape
    east, south = wall_east.tolist(), wall_south.tolist()
    blocked = sorted((p.x, p.y) for p in extra) if extra else None

    def open_between(a: tuple[int, int], b: tuple[int, int]) -> bool:
        pair = sorted((a, b))
        if pair == blocked:
            return False
        (ax, ay), (_, by) = pair
        return not (east[ay][ax] if ay == by else south[ay][ax])

    seen = {(seed.x, seed.y)}
    todo = [(seed.x, seed.y)]
    while todo:
        x, y = todo.pop()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= n[0] < width and 0 <= n[1] < height and n not in seen \
                    and open_between((x, y), n):
                seen.add(n)
                todo.append(n)
    return seen


def reference_region(
    wall_east: np.ndarray, wall_south: np.ndarray, seed: Position, max_area: int = 400,
    extra: tuple[Position, Position] | None = None,
) -> frozenset[Position] | None:
    """The whole component around `seed`, judged: too big or at the border is open land."""
    height, width = wall_east.shape
    seen = reference_component(wall_east, wall_south, seed, extra)
    if len(seen) > max_area or any(x in (0, width - 1) or y in (0, height - 1)
                                   for x, y in seen):
        return None
    return frozenset(Position(x, y) for x, y in seen)


def random_walls(rng: np.random.Generator, width: int, height: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Rooms of many sizes (some with a side missing) over a sprinkling of stray walls."""
    wall_east = rng.random((height, width)) < 0.08
    wall_south = rng.random((height, width)) < 0.08
    for _ in range(int(rng.integers(3, 12))):
        w = int(rng.integers(1, min(30, width - 2)))
        h = int(rng.integers(1, min(30, height - 2)))
        x0, y0 = int(rng.integers(1, width - w)), int(rng.integers(1, height - h))
        build_room(wall_east, wall_south, x0, y0, w, h)
        if rng.random() < 0.3:
            wall_south[y0 - 1, x0] = False
    return wall_east, wall_south


@pytest.mark.parametrize("seed", range(12))
def test_floods_agree_with_a_plain_flood_of_the_whole_component(seed: int) -> None:
    rng = np.random.default_rng(seed)
    width, height = int(rng.integers(10, 90)), int(rng.integers(10, 90))
    wall_east, wall_south = random_walls(rng, width, height)
    max_area = int(rng.choice([1, 5, 50, 400, 2000]))
    seeds = [Position(int(rng.integers(width)), int(rng.integers(height))) for _ in range(40)]
    expected = []
    for pos in seeds:
        want = reference_region(wall_east, wall_south, pos, max_area)
        assert enclosed_region(wall_east, wall_south, pos, max_area=max_area) == want
        if want is not None and want not in expected:
            expected.append(want)
    assert enclosed_regions(wall_east, wall_south, seeds, max_area=max_area) == expected
    for pos in seeds[:10]:
        direction = Direction(rng.choice(["north", "east", "south", "west"]))
        other = pos.step(direction)
        sides = [pos] + ([other] if 0 <= other.x < width and 0 <= other.y < height else [])
        want_sides: list[frozenset[Position]] = []
        for side in sides:
            region = reference_region(wall_east, wall_south, side, max_area, (pos, other))
            if region is not None and region not in want_sides:
                want_sides.append(region)
        assert regions_beside_edge(wall_east, wall_south, pos, direction,
                                   max_area=max_area) == want_sides


def test_a_closed_corridor_longer_than_the_first_window_is_found_whole() -> None:
    """A winding corridor runs 150 cells from its end: the flood must look past its
    first window, and still say the corridor is closed."""
    wall_east, wall_south = np.ones((20, 200), dtype=bool), np.ones((20, 200), dtype=bool)
    wall_east[10, 20:169] = False  # cells (20..169, 10) open into one another
    corridor = frozenset(Position(x, 10) for x in range(20, 170))
    assert enclosed_region(wall_east, wall_south, Position(20, 10)) == corridor
    wall_east[10, 169] = False  # now it runs on to the map's edge
    wall_east[10, 170:199] = False
    assert enclosed_region(wall_east, wall_south, Position(20, 10)) is None


def test_seeds_in_one_open_area_and_in_a_room_give_the_room_once() -> None:
    wall_east, wall_south = no_walls(60, 60)
    build_room(wall_east, wall_south, 30, 30, 1, 1)
    around = [Position(30, 30), Position(30, 29), Position(31, 30), Position(30, 31),
              Position(29, 30), Position(30, 30)]
    assert enclosed_regions(wall_east, wall_south, around) == [frozenset({Position(30, 30)})]
    with pytest.raises(ValueError, match="outside the 60x60 map"):
        enclosed_regions(wall_east, wall_south, [Position(60, 1)])


# ---------------------------------------------------------------------- still_joined


def test_cells_either_side_of_a_lone_wall_are_still_joined() -> None:
    wall_east, wall_south = no_walls()
    wall_east[4, 4] = True
    assert still_joined(wall_east, wall_south, Position(4, 4), Position(5, 4))
    assert still_joined(wall_east, wall_south, Position(5, 4), Position(4, 4))


def test_the_wall_that_closes_a_room_leaves_its_sides_apart() -> None:
    wall_east, wall_south = no_walls()
    build_room(wall_east, wall_south, 3, 3, 2, 2)
    assert not still_joined(wall_east, wall_south, Position(4, 3), Position(5, 3))
    # A door is part of the wall here too.
    assert not still_joined(wall_east, wall_south, Position(3, 3), Position(3, 2))


def test_a_long_way_round_is_not_found_within_a_small_budget() -> None:
    wall_east, wall_south = no_walls(30, 30)
    wall_east[2:28, 14] = True  # a long wall: round it is some 30 steps
    a, b = Position(14, 15), Position(15, 15)
    assert not still_joined(wall_east, wall_south, a, b, budget=64)
    assert still_joined(wall_east, wall_south, a, b, budget=900)


@pytest.mark.parametrize("seed", range(4))
def test_still_joined_never_joins_cells_a_plain_flood_keeps_apart(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    wall_east, wall_south = random_walls(rng, 40, 40)
    joined = 0
    for _ in range(200):
        a = Position(int(rng.integers(1, 39)), int(rng.integers(1, 39)))
        b = a.step(Direction(rng.choice(["north", "east", "south", "west"])))
        component = reference_component(wall_east, wall_south, a)
        if still_joined(wall_east, wall_south, a, b):
            joined += 1
            assert (b.x, b.y) in component
        elif (b.x, b.y) in component and len(component) <= 64:
            pytest.fail(f"{a} and {b} share a component of {len(component)} cells")
    assert joined > 0
