"""The cells of a vision window, made once and handed out as slices: PerceptionBuilder's
hot path, kept apart from the words so each file stays readable.

Every build hands an agent the `SeenCell`s of its window, row by row. Making one
(a `Position` and a `SeenCell`) costs about a microsecond, a window has 49 of them by
day, and a turn's whole budget is tens of microseconds, so cells are made as few
times as possible:

- **A world that fits** (`limit` cells or fewer, 512x512) is kept whole, a row at a
  time: a row is made in one go the first time any window reaches it, so after the
  first tick every window is a handful of list slices and nothing is ever made again
  (until the terrain changes, which remakes just the changed squares). Whole rows,
  not squares around each window: a thousand agents walking about keep reaching new
  squares for many ticks, and each such miss cost a millisecond in the middle of a
  tick; rows are all made within the first.
- **A bigger world** is not kept (2000x2000 would take half a gigabyte): each agent's
  last window is kept instead, and a window that moved by a step reuses the cells it
  shares with it, making only the row or column that came into view.
- An agent whose window has not moved gets the very same tuple back (the builder
  keeps each agent's last window and hands it to `window` when it moved).

"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat

from core.perception import SeenCell
from core.terrain import TERRAIN_ORDER
from core.types import Position
from services.world_service import WorldService

Window = tuple[int, int, int, int]
"""x0, y0, x1, y1: the cells x0 <= x < x1, y0 <= y < y1."""


# ---------------------------------------------------------------------- the store


class CellStore:
    """The SeenCells of one world's windows, as its terrain makes them (a gatherable
    cell offers its resource: gathering is applied by the caller, per build)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Cells a world may have and still be kept whole."""
        self.key: tuple[object, object, int] | None = None
        """(world, its rules, its terrain_version) the kept cells were made for."""
        self.whole = False
        """The world is kept whole (in `rows`), rather than each agent's last window."""
        self.rows: list[list[SeenCell] | None] = []
        """rows[y][x] -> the SeenCell of (x, y); a row is None until a window reaches it."""
        self.bare: dict[tuple[int, int], SeenCell] = {}
        """(x, y) -> the cell as it looks gathered bare (made on first need)."""
        self._changed: dict[int, list[Window]] = {}
        """terrain_version -> the squares changed since it, asked once per version while
        `key` holds (agents whose windows predate a change mostly share one version)."""

    def stale(self, world: WorldService) -> bool:
        key = self.key
        return (key is None or key[2] != world.terrain_version or key[0] is not world
                or key[1] is not world.rules)

    def sync(self, world: WorldService) -> None:
        """Forget (or remake) the kept cells whose terrain may have changed: all of them
        for a new world or new terrain rules. A world kept whole remakes the changed
        squares in place; in a bigger one the new `key` tells every agent's next build
        that its last window is out of date, and the window is made afresh."""
        key = self.key
        if key is None or key[0] is not world or key[1] is not world.rules:
            self.whole = world.width * world.height <= self.limit
            self.rows = [None] * world.height
            self.bare.clear()
        elif self.whole:
            rows = self.rows
            for x0, y0, x1, y1 in world.terrain_changed_since(key[2]):
                for y in range(y0, y1):
                    row = rows[y]
                    if row is not None:
                        row[x0:x1] = _make_cells(world, x0, y, x1, y + 1)
        self.key = (world, world.rules, world.terrain_version)
        self._changed.clear()

    def reusable(self, world: WorldService, key: object, last: Window | None) -> Window | None:
        """`last`, an agent's last window made when the store's key was `key`, if its
        cells still hold (`window` may then reuse them), else None.

        In a world too big to keep whole, a terrain change anywhere gives the store a
        new key, and every agent's next window was made afresh: 10,000 builds on
        2000x2000 took ~800 ms after one change (the Gardener's) against ~125 ms with
        the windows it did not touch kept. A window that overlaps no square changed
        since its key is as good as new.
        """
        current = self.key
        if key is current:
            return last
        if (last is None or self.whole or not isinstance(key, tuple) or current is None
                or key[0] is not current[0] or key[1] is not current[1]):
            return None
        squares = self._changed.get(key[2])
        if squares is None:
            squares = self._changed[key[2]] = world.terrain_changed_since(key[2])
        x0, y0, x1, y1 = last
        for sx0, sy0, sx1, sy1 in squares:
            if sx0 < x1 and x0 < sx1 and sy0 < y1 and y0 < sy1:
                return None
        return last

    def window(self, world: WorldService, last: Window | None, old: tuple[SeenCell, ...],
               x0: int, y0: int, x1: int, y1: int) -> tuple[SeenCell, ...]:
        """The window's cells, row by row (`sync` first). `last` is the agent's last window
        made since `sync` (None if none) and `old` its cells: all a big world reuses."""
        if self.whole:
            rows = self.rows
            found: list[SeenCell] = []
            for y in range(y0, y1):
                row = rows[y]
                if row is None:
                    row = rows[y] = _make_cells(world, 0, y, world.width, y + 1)
                found += row[x0:x1]
            return tuple(found)
        if last is None:
            return _make_window(world, x0, y0, x1, y1)
        return _slide(world, last, old, x0, y0, x1, y1)

    def bare_cell(self, cell: SeenCell) -> SeenCell:
        """`cell` with nothing left to gather."""
        position = cell.position
        where = (position.x, position.y)
        bare = self.bare.get(where)
        if bare is None or bare.terrain is not cell.terrain or bare.passable is not cell.passable:
            if len(self.bare) > self.limit:  # many cells bare over a long run: stay bounded
                self.bare.clear()
            bare = self.bare[where] = SeenCell(position, cell.terrain, None, cell.passable)
        return bare


def _make_cells(world: WorldService, x0: int, y0: int, x1: int, y1: int) -> list[SeenCell]:
    """New SeenCells of the window x0 <= x < x1, y0 <= y < y1, row by row.

    One array read per fact for the whole window, then one `map` over flat lists: a
    step brings in a single row or column, and per-row loops cost more than its cells.
    """
    if y1 - y0 == 1:  # a row (also how a whole world is made)
        codes = world.codes[y0, x0:x1].tolist()
        passable = world.passable[y0, x0:x1].tolist()
        xs: Iterable[int] = range(x0, x1)
        ys: Iterable[int] = repeat(y0)
    elif x1 - x0 == 1:  # a column
        codes = world.codes[y0:y1, x0].tolist()
        passable = world.passable[y0:y1, x0].tolist()
        xs, ys = repeat(x0), range(y0, y1)
    else:
        codes = world.codes[y0:y1, x0:x1].ravel().tolist()
        passable = world.passable[y0:y1, x0:x1].ravel().tolist()
        columns = range(x0, x1)
        xs = list(columns) * (y1 - y0)
        ys = [y for y in range(y0, y1) for _ in columns]
    return list(map(_cell_maker(world.rules.gather), xs, ys, codes, passable))


_MAKERS: dict[int, tuple[object, Callable[[int, int, int, bool], SeenCell]]] = {}


def _cell_maker(gather: tuple[str | None, ...]) -> Callable[[int, int, int, bool], SeenCell]:
    """make(x, y, terrain code, passable) -> a new SeenCell, for terrain rules whose
    gather table is `gather` (made once per table)."""
    held = _MAKERS.get(id(gather))
    if held is not None and held[0] is gather:
        return held[1]
    terrains = TERRAIN_ORDER

    def make(x: int, y: int, code: int, can_pass: bool) -> SeenCell:
        return SeenCell(Position(x, y), terrains[code], gather[code], can_pass)

    if len(_MAKERS) > 64:  # many rule sets in one process (tests): stay bounded
        _MAKERS.clear()
    _MAKERS[id(gather)] = (gather, make)
    return make


def _make_window(world: WorldService, x0: int, y0: int, x1: int, y1: int,
                 ) -> tuple[SeenCell, ...]:
    return tuple(_make_cells(world, x0, y0, x1, y1))


def _slide(world: WorldService, last: Window, old: tuple[SeenCell, ...],
           x0: int, y0: int, x1: int, y1: int) -> tuple[SeenCell, ...]:
    """The window's cells, reusing those it shares with the agent's last window `last`
    (whose cells are `old`): a step makes one new row or column, not a window."""
    if last == (x0, y0, x1, y1):
        return old
    lx0, ly0, lx1, ly1 = last
    sx0, sx1 = max(x0, lx0), min(x1, lx1)  # the shared columns...
    sy0, sy1 = max(y0, ly0), min(y1, ly1)  # ...and rows
    if sx0 >= sx1 or sy0 >= sy1:  # a jump: nothing shared
        return _make_window(world, x0, y0, x1, y1)
    make = _make_cells
    columns = lx1 - lx0
    cells: list[SeenCell] = []
    if y0 < sy0:
        cells += make(world, x0, y0, x1, sy0)
    left = make(world, x0, sy0, sx0, sy1) if x0 < sx0 else None
    right = make(world, sx1, sy0, x1, sy1) if sx1 < x1 else None
    start = (sy0 - ly0) * columns + sx0 - lx0
    for j in range(sy1 - sy0):
        if left is not None:
            width = sx0 - x0
            cells += left[j * width:(j + 1) * width]
        cells += old[start:start + sx1 - sx0]
        start += columns
        if right is not None:
            width = x1 - sx1
            cells += right[j * width:(j + 1) * width]
    if sy1 < y1:
        cells += make(world, x0, sy1, x1, y1)
    return tuple(cells)
