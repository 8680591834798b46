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

from collections import deque

import numpy as np

from core.types import Direction, Position

__all__ = ["DEFAULT_MAX_AREA", "enclosed_region", "regions_beside_edge"]

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


def _flood(
    wall_east: np.ndarray,
    wall_south: np.ndarray,
    seed: Position,
    max_area: int,
    extra_wall: _Edge | None,
) -> frozenset[Position] | None:
    """The enclosed region around `seed`, treating `extra_wall` as a wall too; or None.

    Breadth-first over cells; stops at the first border cell or the first cell past
    `max_area`.
    """
    height, width = wall_east.shape
    last_x, last_y = width - 1, height - 1
    seen = {(seed.x, seed.y)}
    queue = deque(seen)
    while queue:
        x, y = queue.popleft()
        if x == 0 or y == 0 or x == last_x or y == last_y:
            return None  # the world's edge is open
        steps = []
        if not wall_south[y - 1, x]:
            steps.append((x, y - 1))
        if not wall_east[y, x]:
            steps.append((x + 1, y))
        if not wall_south[y, x]:
            steps.append((x, y + 1))
        if not wall_east[y, x - 1]:
            steps.append((x - 1, y))
        for nx, ny in steps:
            if (nx, ny) in seen:
                continue
            if extra_wall is not None and min((x, y, nx, ny), (nx, ny, x, y)) == extra_wall:
                continue
            seen.add((nx, ny))
            if len(seen) > max_area:
                return None
            queue.append((nx, ny))
    return frozenset(Position(x, y) for x, y in seen)


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
    return _flood(wall_east, wall_south, seed, max_area, None)


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
    regions: list[frozenset[Position]] = []
    for side in sides:
        if any(side in region for region in regions):
            continue
        region = _flood(wall_east, wall_south, side, max_area, edge)
        if region is not None:
            regions.append(region)
    return regions
