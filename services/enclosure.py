"""Which cells a set of walls closes off: how structures are recognised.

When walls close an area, the cells inside are an enclosure (a house, a pen). Here a
door counts as part of its wall (a house with a door is still a house), so callers pass
``wall_east`` / ``wall_south``: ``(height, width)`` boolean arrays indexed ``[y, x]``
that are True for every wall edge, door or not, east of and south of each cell (the last
column's east and the last row's south values are ignored). Terrain plays no part.

The map's edge is not a wall: an area that reaches a border cell is open land, and so
is an area larger than ``max_area`` cells. The flood fill stops as soon as either is
certain, so asking about open land costs at most ``max_area`` cells of work, however
large the map; that is why this is a small pure-Python breadth-first search rather than
a whole-map numpy labelling.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from core.types import Direction, Position

__all__ = [
    "DEFAULT_MAX_AREA", "enclosed_region", "enclosed_regions", "regions_beside_edge",
    "still_joined",
]

DEFAULT_MAX_AREA = 400
"""Largest enclosure, in cells, before an area counts as open land."""

_Edge = tuple[int, int, int, int]
"""An undirected edge between two cells as (x1, y1, x2, y2), the smaller cell first."""


def _check_walls(wall_east: np.ndarray, wall_south: np.ndarray) -> tuple[int, int]:
    """Refuse anything but two 2-D boolean arrays of one shape; return (height, width)."""
    for name, array in (("wall_east", wall_east), ("wall_south", wall_south)):
        if not isinstance(array, np.ndarray) or array.dtype != np.bool_ or array.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D boolean numpy array (height, width), got "
                f"{getattr(array, 'dtype', type(array).__name__)} "
                f"with shape {getattr(array, 'shape', '?')}"
            )
    if wall_east.shape != wall_south.shape:
        raise ValueError(
            f"wall_east and wall_south must share one shape, got {wall_east.shape} "
            f"and {wall_south.shape}"
        )
    height, width = wall_east.shape
    return height, width


def _check_inside(name: str, pos: Position, width: int, height: int) -> None:
    if not (0 <= pos.x < width and 0 <= pos.y < height):
        raise ValueError(f"{name} {pos} is outside the {width}x{height} map")


def _check_max_area(max_area: int) -> None:
    if isinstance(max_area, bool) or not isinstance(max_area, int) or max_area < 1:
        raise ValueError(f"max_area must be a positive int, got {max_area!r}")


_FIRST_REACH = 24
"""Cells each way from the seed in the first window a flood runs over: open land
stops the flood at `max_area` (400) cells, some 14 cells out, well inside it."""


class _Known:
    """The cells a flood saw in open land: every one of them is in that open area."""

    __slots__ = ("x0", "y0", "columns", "cells")

    def __init__(self, x0: int, y0: int, columns: int, cells: set[int]) -> None:
        self.x0, self.y0, self.columns, self.cells = x0, y0, columns, cells

    def holds(self, pos: Position) -> bool:
        x, y = pos.x - self.x0, pos.y - self.y0
        return 0 <= x < self.columns and y >= 0 and y * self.columns + x in self.cells


def _regions(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    seeds: Iterable[Position],
    max_area: int,
    extra_wall: _Edge | None,
) -> list[frozenset[Position]]:
    """The distinct enclosed regions holding any of `seeds`, in the order of their first
    seed. A seed already inside a region found, or among the cells an earlier flood saw
    in open land, is not flooded again: the cells around a new wall are mostly one
    open area, and each flood of open land walks `max_area` cells."""
    regions: list[frozenset[Position]] = []
    open_land: list[_Known] = []
    for seed in seeds:
        if any(seed in region for region in regions):
            continue
        if any(known.holds(seed) for known in open_land):
            continue
        region, known = _flood(wall_east, wall_south, seed, max_area, extra_wall)
        if region is not None:
            regions.append(region)
        elif known is not None:
            open_land.append(known)
    return regions


def _flood(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    seed: Position,
    max_area: int,
    extra_wall: _Edge | None,
) -> tuple[frozenset[Position] | None, _Known | None]:
    """The enclosed region around `seed`, treating `extra_wall` as a wall too; or None.

    Also returns, when the area is open land, the cells seen on the way (all in that
    same open area), so a caller asking about a neighbouring seed can skip the flood.
    The flood runs over a window of the map first, widened only when the area runs
    into the window's side (an enclosure is at most `max_area` cells, but a corridor
    of them can be that long).
    """
    height, width = wall_east.shape
    reach = _FIRST_REACH
    while True:
        x0, y0 = max(seed.x - reach, 0), max(seed.y - reach, 0)
        x1, y1 = min(seed.x + reach + 1, width), min(seed.y + reach + 1, height)
        found = _flood_window(wall_east, wall_south, seed, max_area, extra_wall,
                              x0, y0, x1, y1)
        if found is not _CUT:
            return found  # type: ignore[return-value]
        reach *= 4


_CUT = object()
"""`_flood_window`'s answer when the area runs on past the window."""


def _flood_window(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    seed: Position,
    max_area: int,
    extra_wall: _Edge | None,
    x0: int, y0: int, x1: int, y1: int,
) -> object:
    """Breadth-first over the cells x0 <= x < x1, y0 <= y < y1, as flat indices into
    plain lists read from the arrays once (an element read from a numpy array costs
    several times a list's), stopping at the first map border cell (open land), the
    first cell past `max_area` (open land) or the first cell on the window's side
    that is not a map border (`_CUT`: the caller widens the window)."""
    height, width = wall_east.shape
    columns, rows = x1 - x0, y1 - y0
    east = wall_east[y0:y1, x0:x1].ravel().tolist()
    south = wall_south[y0:y1, x0:x1].ravel().tolist()
    if extra_wall is not None:
        ex, ey, fx, fy = extra_wall  # the smaller cell first
        if x0 <= ex < x1 and y0 <= ey < y1:
            (east if ey == fy else south)[(ey - y0) * columns + ex - x0] = True
    # What stops the flood at each cell: 1 the map's border, 2 the window's side.
    stop = np.zeros((rows, columns), dtype=np.int8)
    stop[0, :] = stop[-1, :] = stop[:, 0] = stop[:, -1] = 2
    if y0 == 0:
        stop[0, :] = 1
    if y1 == height:
        stop[-1, :] = 1
    if x0 == 0:
        stop[:, 0] = 1
    if x1 == width:
        stop[:, -1] = 1
    stops = stop.ravel().tolist()
    start = (seed.y - y0) * columns + seed.x - x0
    seen = {start}
    queue = [start]
    for k in queue:  # the list grows as the loop goes: a queue without a deque
        why = stops[k]
        if why:
            if why == 1:
                return None, _Known(x0, y0, columns, seen)
            return _CUT
        if not south[k - columns]:
            n = k - columns
            if n not in seen:
                seen.add(n)
                queue.append(n)
        if not east[k]:
            n = k + 1
            if n not in seen:
                seen.add(n)
                queue.append(n)
        if not south[k]:
            n = k + columns
            if n not in seen:
                seen.add(n)
                queue.append(n)
        if not east[k - 1]:
            n = k - 1
            if n not in seen:
                seen.add(n)
                queue.append(n)
        if len(seen) > max_area:
            return None, _Known(x0, y0, columns, seen)
    return frozenset(Position(x0 + k % columns, y0 + k // columns) for k in seen), None


def enclosed_region(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    seed: Position,
    *,
    max_area: int = DEFAULT_MAX_AREA,
) -> frozenset[Position] | None:
    """The cells reachable from `seed` without crossing a wall edge, if they are enclosed.

    None when that area touches the map's border (the world's edge is not a wall) or has
    more than `max_area` cells: then it is open land. Doors are part of the walls here.
    Raises ValueError for a seed outside the map or malformed arrays.
    """
    height, width = _check_walls(wall_east, wall_south)
    _check_inside("seed", seed, width, height)
    _check_max_area(max_area)
    return _flood(wall_east, wall_south, seed, max_area, None)[0]


def enclosed_regions(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    seeds: Iterable[Position],
    *,
    max_area: int = DEFAULT_MAX_AREA,
) -> list[frozenset[Position]]:
    """The distinct enclosed regions holding any of `seeds` (what `enclosed_region` gives
    for each seed, less the Nones and the repeats), in the order of their first seed.

    Cheaper than asking seed by seed: seeds in one open area are flooded once.
    Raises ValueError for a seed outside the map or malformed arrays.
    """
    height, width = _check_walls(wall_east, wall_south)
    seeds = list(seeds)
    for seed in seeds:
        _check_inside("seed", seed, width, height)
    _check_max_area(max_area)
    return _regions(wall_east, wall_south, seeds, max_area, None)


def regions_beside_edge(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    pos: Position,
    direction: Direction,
    *,
    max_area: int = DEFAULT_MAX_AREA,
) -> list[frozenset[Position]]:
    """The distinct enclosed regions on either side of the edge of `pos` toward `direction`.

    Asked after a wall is placed on that edge: what did it close? The edge counts as a
    wall whether or not the arrays record it yet. Returns 0, 1 or 2 regions, the one on
    `pos`'s side first; a single region reached from both sides (the wall closed
    nothing new between them) is listed once. An edge on the map's border has only
    `pos`'s side. Raises ValueError for a `pos` outside the map, a non-cardinal
    direction, or malformed arrays.
    """
    height, width = _check_walls(wall_east, wall_south)
    _check_inside("pos", pos, width, height)
    _check_max_area(max_area)
    direction = Direction.parse(direction)
    if not direction.is_cardinal:
        raise ValueError(f"a wall needs a cardinal direction (north, east, south, west), "
                         f"got {direction.value}")
    other = pos.step(direction)
    edge = min((pos.x, pos.y, other.x, other.y), (other.x, other.y, pos.x, pos.y))
    sides = [pos]
    if 0 <= other.x < width and 0 <= other.y < height:
        sides.append(other)
    return _regions(wall_east, wall_south, sides, max_area, edge)


def still_joined(
    wall_east: np.ndarray, wall_south: np.ndarray, a: Position, b: Position, *, budget: int = 64
) -> bool:
    """Whether `a` and `b` (cells inside the map) are joined by a walk of at most
    `budget` cells that crosses no wall or door edge. False means "not found within
    the budget", not "apart".

    Asked after a wall goes up between two cells: if they are still joined, the wall
    closed nothing and opened nothing (taking one edge out of an area that stays in
    one piece leaves the same cells in it), so no enclosure can have changed. In open
    land the walk round a new wall is three steps, where proving the land open takes
    a flood of `max_area` cells.
    """
    height, width = wall_east.shape
    goal = (b.x, b.y)
    seen = {(a.x, a.y)}
    queue = [(a.x, a.y)]
    for x, y in queue:
        steps = []
        if y > 0 and not wall_south[y - 1, x]:
            steps.append((x, y - 1))
        if x < width - 1 and not wall_east[y, x]:
            steps.append((x + 1, y))
        if y < height - 1 and not wall_south[y, x]:
            steps.append((x, y + 1))
        if x > 0 and not wall_east[y, x - 1]:
            steps.append((x - 1, y))
        for step in steps:
            if step == goal:
                return True
            if step not in seen:
                if len(seen) >= budget:
                    return False
                seen.add(step)
                queue.append(step)
    return False
