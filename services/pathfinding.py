"""Shortest walking paths on the world grid: A* over flat arrays, with a vectorised
reachability check so that "there is no way there" is cheap to find out too.

The movement grid is three ``(height, width)`` boolean arrays indexed ``[y, x]``:
``passable`` (can an agent stand on the cell), ``blocked_east[y, x]`` (the edge between
``(x, y)`` and ``(x + 1, y)`` is a wall without a door) and ``blocked_south[y, x]`` (the
edge between ``(x, y)`` and ``(x, y + 1)``). Doors are gaps, so callers pass wall-and-
not-door as blocked. A step goes north, east, south or west, onto a passable cell, across
an edge that is not blocked. The start need not be passable (an agent may stand where the
ground has since changed); it can be left but not re-entered.

How the search works, and why:

1. **Move masks, vectorised.** One pass of numpy slicing gives every cell a 4-bit mask of
   the steps allowed out of it (bounds, walls and the target's passability folded in).
   ``tobytes()`` turns it into a ``bytes`` object: indexing that yields a plain ``int``
   and costs a fraction of a numpy scalar read, and the conversion is a memory copy
   (``tolist()`` on 250,000 cells would cost milliseconds). The masks depend only on the
   grid, so a caller planning many paths keeps them (``move_masks``, ``masks=``): the
   WorldService keeps them and mends the few cells a wall, door or terrain change
   touches (``patch_move_masks``, services/path_grid.py).
2. **A\\* over flat indices.** Cell ``(x, y)`` is ``y * width + x``; g-costs and parents
   are dictionaries and the closed set a set, over the cells the search touches only
   (arrays over the whole map cost milliseconds to fill, for a journey whose search
   touches a few hundred cells). Each heap entry is ONE integer
   ``(f * span + h) * cells + index``, so ``heapq`` compares ints, never tuples. The key
   orders by f (optimality), then by smaller h (on open ground the search runs straight
   at the goal and expands little more than the path itself), then by cell index, so
   the same inputs always give the same path. The Manhattan heuristic is consistent on
   a unit-cost 4-connected grid, so a cell's first expansion is final and a neighbour
   already closed can never be improved (no closed check is needed when relaxing).
   Most journeys never need the heap: when every cell on the way has a step toward
   the goal open, A* only ever expands the next cell of one straight walk, and
   ``_descend`` follows that walk directly (the same path, see its docstring). Where a
   cell on it has no such step, the search runs from the start.
3. **Unreachability, vectorised.** A* alone proves "no path" only by expanding every cell
   the start can reach: 250,000 heap operations in pure Python is most of a second. So
   once A* has expanded ``REACHABILITY_CHECK_AFTER`` cells without arriving, it asks
   once whether start and goal are connected at all, by labelling the connected regions
   of the passable cells in numpy (the scanline scheme of ``generation.regions``,
   extended to walls: runs are broken by blocked east edges and joined only across open
   south edges, then merged by a vectorised union-find). That costs a few milliseconds
   on 500x500 and answers "no path" whatever the shape of the obstacle: a walled-in goal,
   a wall cutting the map in two, a maze. Short searches, the common case, finish
   before the check and never pay for it; a start shut in a small room exhausts A*'s
   heap before it, which is faster still.

Figures (``python -m bench pathfinding``, 500x500, medians): open map corner to corner
~3 ms, most of it the masks (the straight descent; ~7 ms as 999 expansions); no path
with the goal walled in ~12 ms (4,096 expansions, then the check); start shut in a 3x3
room ~2 ms; generated terrain across the map 20-40 ms. The worst case for a path that
does exist is a serpentine maze whose one path visits every cell: A* must then expand
all 250,000 cells (~0.6 s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from heapq import heappop, heappush

import numpy as np

from core.types import Position

__all__ = ["REACHABILITY_CHECK_AFTER", "find_path", "is_walkable", "move_masks",
           "patch_move_masks"]

REACHABILITY_CHECK_AFTER = 4096
"""A* expansions after which the search checks, once, that the goal can be reached.

About the work of one vectorised labelling of a 500x500 grid, so a search that proves
unreachable costs at most about twice what the check alone would."""

_NORTH, _EAST, _SOUTH, _WEST = 1, 2, 4, 8

Masks = bytes | bytearray | memoryview
"""Move masks, one byte a cell, flat by ``y * width + x``: anything that indexes to ints."""

_BOOL = np.dtype(np.bool_)
"""numpy's boolean dtype, the one instance boolean arrays made the usual ways share."""


def _check_grid(
    passable: np.ndarray, blocked_east: np.ndarray, blocked_south: np.ndarray
) -> tuple[int, int]:
    """Refuse anything but three 2-D boolean arrays of one shape; return (height, width).

    A uint8 terrain raster would read as "every non-zero code is passable", so a
    non-boolean array is refused rather than cast.

    Every journey's search starts here, with the same three good arrays: they are
    checked with identity tests first (numpy's own boolean dtype, a plain ndarray),
    and only anything else goes through the comparisons that word the refusal.
    """
    if (type(passable) is np.ndarray and type(blocked_east) is np.ndarray
            and type(blocked_south) is np.ndarray
            and passable.dtype is _BOOL and blocked_east.dtype is _BOOL
            and blocked_south.dtype is _BOOL and passable.ndim == 2
            and passable.shape == blocked_east.shape == blocked_south.shape):
        height, width = passable.shape
        return height, width
    arrays = {"passable": passable, "blocked_east": blocked_east, "blocked_south": blocked_south}
    for name, array in arrays.items():
        if not isinstance(array, np.ndarray) or array.dtype != np.bool_ or array.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D boolean numpy array (height, width), got "
                f"{getattr(array, 'dtype', type(array).__name__)} "
                f"with shape {getattr(array, 'shape', '?')}"
            )
    if not passable.shape == blocked_east.shape == blocked_south.shape:
        raise ValueError(
            "passable, blocked_east and blocked_south must share one shape, got "
            f"{passable.shape}, {blocked_east.shape} and {blocked_south.shape}"
        )
    height, width = passable.shape
    return height, width


def _inside(pos: Position, width: int, height: int) -> bool:
    return 0 <= pos.x < width and 0 <= pos.y < height


def _move_masks(
    passable: np.ndarray, blocked_east: np.ndarray, blocked_south: np.ndarray
) -> np.ndarray:
    """Per cell, a bit for each step allowed out of it: N=1, E=2, S=4, W=8.

    A step is allowed when the target is inside the map, passable, and the edge between
    the two cells is not blocked. The mask of an impassable cell still says how it could
    be left, which only matters for an impassable start.
    """
    open_east = ~blocked_east[:, :-1]
    open_south = ~blocked_south[:-1]
    masks = np.zeros(passable.shape, dtype=np.uint8)
    masks[1:] |= (open_south & passable[:-1]).view(np.uint8) * np.uint8(_NORTH)
    masks[:, :-1] |= (open_east & passable[:, 1:]).view(np.uint8) * np.uint8(_EAST)
    masks[:-1] |= (open_south & passable[1:]).view(np.uint8) * np.uint8(_SOUTH)
    masks[:, 1:] |= (open_east & passable[:, :-1]).view(np.uint8) * np.uint8(_WEST)
    return masks


def _region_roots(
    passable: np.ndarray, blocked_east: np.ndarray, blocked_south: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Connected regions of the passable cells, walls respected.

    Returns ``(run_of_cell, root)``: ``run_of_cell`` (flat, one entry per cell) numbers
    the horizontal run each cell belongs to (meaningless for impassable cells), and
    ``root[run]`` is the smallest run of that run's region. Two passable cells are
    connected exactly when their runs have the same root.

    A run is a maximal stretch of a row whose neighbouring cells are passable and joined
    by open east edges. Runs in consecutive rows are joined wherever a cell and the one
    below it are both passable with an open south edge; of several such joins between the
    same two runs side by side only the first is kept. The joins are merged by a
    vectorised union-find: every round, each root hooks onto the smallest root it shares
    a join with (``np.minimum.at``), then pointer jumping flattens the trees. Roots only
    ever point to smaller runs, so no cycle can form.
    """
    height, width = passable.shape
    link_east = passable[:, :-1] & passable[:, 1:] & ~blocked_east[:, :-1]
    run_starts = passable.copy()
    run_starts[:, 1:] &= ~link_east
    run_of_cell = np.cumsum(run_starts.ravel(), dtype=np.int64) - 1
    run_count = int(run_of_cell[-1]) + 1 if run_of_cell.size else 0
    root = np.arange(run_count, dtype=np.int64)
    if height < 2 or run_count == 0:
        return run_of_cell, root
    link_south = passable[:-1] & passable[1:] & ~blocked_south[:-1]
    joins = link_south.copy()
    # A join is redundant when the join just west of it links the same two runs.
    joins[:, 1:] &= ~(link_south[:, :-1] & link_east[:-1] & link_east[1:])
    upper_cells = np.flatnonzero(joins)  # (height - 1, width) flat == (height, width) flat
    first = run_of_cell[upper_cells]
    second = run_of_cell[upper_cells + width]
    while first.size:
        root_a = root[first]
        root_b = root[second]
        apart = root_a != root_b
        first, second = first[apart], second[apart]
        if not first.size:
            break
        root_a, root_b = root_a[apart], root_b[apart]
        np.minimum.at(root, np.maximum(root_a, root_b), np.minimum(root_a, root_b))
        while True:
            grand = root[root]
            if np.array_equal(grand, root):
                break
            root = grand
    return run_of_cell, root


def _connected(
    passable: np.ndarray,
    blocked_east: np.ndarray,
    blocked_south: np.ndarray,
    masks: Masks,
    start: int,
    goal: int,
) -> bool:
    """Can the goal (a passable cell) be reached from the start at all?

    The start may be impassable, and so in no region; it is then connected to whatever
    the cells it may step onto are connected to.
    """
    width = passable.shape[1]
    run_of_cell, root = _region_roots(passable, blocked_east, blocked_south)
    goal_root = root[run_of_cell[goal]]
    entries = [start] if passable.flat[start] else []
    mask = masks[start]
    for bit, step in ((_NORTH, -width), (_EAST, 1), (_SOUTH, width), (_WEST, -1)):
        if mask & bit:
            entries.append(start + step)
    return any(root[run_of_cell[cell]] == goal_root for cell in entries)


def _descend(masks: Masks, width: int, start: int, goal: int) -> list[int] | None:
    """The path `_search` finds when every cell on it has a step toward the goal open;
    None as soon as one has not (then only the search can say).

    On such ground A* never turns aside: every entry it has pushed has f equal to the
    start's h (the heuristic is consistent, so no f is smaller), and the cells just
    reached from the one being expanded have the smallest h of all (one less than
    it), so one of them is expanded next: the one with the smaller index, since keys
    order by (f, h, index). Each is reached there for the first time (a cell k steps
    from the start cannot have been reached sooner), so its parent is the cell before
    it. The path is therefore the walk that, from each cell, takes the first open step
    toward the goal in index order: north, west, east, south. Most journeys are such
    walks, and following one costs a fraction of the search's heap and dictionaries.
    """
    goal_y, goal_x = divmod(goal, width)
    y, x = divmod(start, width)
    cell = start
    path = []
    while cell != goal:
        mask = masks[cell]
        if y > goal_y and mask & _NORTH:
            cell -= width
            y -= 1
        elif x > goal_x and mask & _WEST:
            cell -= 1
            x -= 1
        elif x < goal_x and mask & _EAST:
            cell += 1
            x += 1
        elif y < goal_y and mask & _SOUTH:
            cell += width
            y += 1
        else:
            return None
        path.append(cell)
    return path


def _search(
    masks: Masks,
    width: int,
    start: int,
    goal: int,
    reachable: Callable[[], bool],
) -> list[int] | None:
    """A* from `start` to `goal` over flat cell indices; the cells after start, or None.

    `reachable` is called once, after REACHABILITY_CHECK_AFTER expansions, and a False
    answer ends the search.
    """
    cells = len(masks)
    span = width + cells // width  # every heuristic value is below this
    goal_y, goal_x = divmod(goal, width)
    # Costs, parents and the closed set are dictionaries over the cells the search
    # touches, not arrays over the map: a journey of 30 cells touches a few hundred,
    # and filling three 250,000-cell arrays cost ten times the search itself.
    g_cost = {start: 0}  # a cell not in it is unseen
    parent: dict[int, int] = {}
    closed: set[int] = set()
    start_y, start_x = divmod(start, width)
    h = abs(start_x - goal_x) + abs(start_y - goal_y)
    heap = [(h * span + h) * cells + start]
    expanded = 0
    check_at = REACHABILITY_CHECK_AFTER
    unseen = cells  # no path is `cells` steps long
    cost_of = g_cost.get
    while heap:
        cell = heappop(heap) % cells
        if cell in closed:
            continue
        if cell == goal:
            path = []
            while cell != start:
                path.append(cell)
                cell = parent[cell]
            path.reverse()
            return path
        closed.add(cell)
        expanded += 1
        if expanded == check_at and not reachable():
            return None
        mask = masks[cell]
        if not mask:
            continue
        y, x = divmod(cell, width)
        dx = x - goal_x
        dy = y - goal_y
        g_next = g_cost[cell] + 1
        if mask & _NORTH:
            nxt = cell - width
            if g_next < cost_of(nxt, unseen):
                g_cost[nxt] = g_next
                parent[nxt] = cell
                h = abs(dx) + abs(dy - 1)
                heappush(heap, ((g_next + h) * span + h) * cells + nxt)
        if mask & _EAST:
            nxt = cell + 1
            if g_next < cost_of(nxt, unseen):
                g_cost[nxt] = g_next
                parent[nxt] = cell
                h = abs(dx + 1) + abs(dy)
                heappush(heap, ((g_next + h) * span + h) * cells + nxt)
        if mask & _SOUTH:
            nxt = cell + width
            if g_next < cost_of(nxt, unseen):
                g_cost[nxt] = g_next
                parent[nxt] = cell
                h = abs(dx) + abs(dy + 1)
                heappush(heap, ((g_next + h) * span + h) * cells + nxt)
        if mask & _WEST:
            nxt = cell - 1
            if g_next < cost_of(nxt, unseen):
                g_cost[nxt] = g_next
                parent[nxt] = cell
                h = abs(dx - 1) + abs(dy)
                heappush(heap, ((g_next + h) * span + h) * cells + nxt)
    return None


def move_masks(
    passable: np.ndarray, blocked_east: np.ndarray, blocked_south: np.ndarray
) -> bytes:
    """The grid's move masks (see `_move_masks`) as bytes, ready for `find_path`.

    They depend only on the three arrays, and computing them is most of the cost of a
    short search on a large map, so a caller that plans many paths on a grid that
    rarely changes (the WorldService) keeps them and passes them in.
    """
    _check_grid(passable, blocked_east, blocked_south)
    return _move_masks(passable, blocked_east, blocked_south).tobytes()


def patch_move_masks(
    masks: bytearray,
    passable: np.ndarray,
    blocked_east: np.ndarray,
    blocked_south: np.ndarray,
    cells: Iterable[tuple[int, int]],
) -> None:
    """Work out again, in place, the move masks of `cells` ((x, y) inside the map).

    A wall, door or terrain change alters the masks of a handful of cells: the two
    beside an edge, the four around a cell whose terrain changed. On a large map a
    whole `move_masks` costs milliseconds (2000x2000: tens of them), and walls go up
    many times a tick, so a caller that keeps masks mends those cells instead. The
    rule is `_move_masks`', cell by cell; the tests hold the two to the same bytes.
    """
    height, width = passable.shape
    last_x, last_y = width - 1, height - 1
    for x, y in cells:
        mask = 0
        if y > 0 and not blocked_south[y - 1, x] and passable[y - 1, x]:
            mask |= _NORTH
        if x < last_x and not blocked_east[y, x] and passable[y, x + 1]:
            mask |= _EAST
        if y < last_y and not blocked_south[y, x] and passable[y + 1, x]:
            mask |= _SOUTH
        if x > 0 and not blocked_east[y, x - 1] and passable[y, x - 1]:
            mask |= _WEST
        masks[y * width + x] = mask


def find_path(
    passable: np.ndarray,
    blocked_east: np.ndarray,
    blocked_south: np.ndarray,
    start: Position,
    goal: Position,
    *,
    masks: Masks | None = None,
) -> list[Position] | None:
    """A shortest 4-connected walk from `start` (excluded) to `goal` (included).

    ``[]`` when start == goal; None when the goal is outside the map, impassable, or
    cannot be reached. Every step lands on a passable cell inside the map without
    crossing a blocked edge; the start itself need not be passable. Among equally short
    paths the choice is fixed, so the same inputs always give the same path.

    `masks`, if given, must be `move_masks` of these same three arrays; without it
    they are computed here.

    Raises ValueError for arrays that are not three 2-D boolean arrays of one shape,
    for masks of another size, and for a start outside the map (a caller's bug: nobody
    stands there).
    """
    height, width = _check_grid(passable, blocked_east, blocked_south)
    if masks is not None and len(masks) != height * width:
        raise ValueError(f"{len(masks)} move masks for a {width}x{height} map")
    if not _inside(start, width, height):
        raise ValueError(f"start {start} is outside the {width}x{height} map")
    if start == goal:
        return []
    if not _inside(goal, width, height) or not passable[goal.y, goal.x]:
        return None
    if masks is None:
        masks = _move_masks(passable, blocked_east, blocked_south).tobytes()
    start_cell = start.y * width + start.x
    goal_cell = goal.y * width + goal.x
    cells = _descend(masks, width, start_cell, goal_cell)
    if cells is None:

        def reachable() -> bool:
            return _connected(passable, blocked_east, blocked_south, masks, start_cell,
                              goal_cell)

        cells = _search(masks, width, start_cell, goal_cell, reachable)
        if cells is None:
            return None
    return [Position(cell % width, cell // width) for cell in cells]


def is_walkable(
    path: Sequence[Position],
    passable: np.ndarray,
    blocked_east: np.ndarray,
    blocked_south: np.ndarray,
    start: Position,
) -> bool:
    """Whether an agent at `start` could walk `path` step by step.

    Each position must be one cardinal step from the one before (the first from
    `start`), inside the map, passable, and reached without crossing a blocked edge.
    The empty path is walkable from any start inside the map; a start outside is not.
    """
    height, width = _check_grid(passable, blocked_east, blocked_south)
    if not _inside(start, width, height):
        return False
    here = start
    for there in path:
        dx, dy = there.x - here.x, there.y - here.y
        if abs(dx) + abs(dy) != 1:
            return False
        if not _inside(there, width, height) or not passable[there.y, there.x]:
            return False
        if dx == 1 and blocked_east[here.y, here.x]:
            return False
        if dx == -1 and blocked_east[there.y, there.x]:
            return False
        if dy == 1 and blocked_south[here.y, here.x]:
            return False
        if dy == -1 and blocked_south[there.y, there.x]:
            return False
        here = there
    return True
