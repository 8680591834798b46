"""The grid `find_path` searches, kept between journeys and mended after each change.

    grid = PathGrid(world.passable, world.wall_east, world.door_east,
                    world.wall_south, world.door_south)
    passable, blocked_east, blocked_south, masks = grid.arrays()
    grid.edge_changed(south=False, x=4, y=7)   # after a wall or door on that edge
    grid.cell_changed(4, 7)                    # after that cell's terrain

Every journey plans a path, and building the blocked arrays and move masks for the
whole map costs several times a short search (500x500: a few milliseconds;
2000x2000: tens). Walls go up many times a tick once agents start building, and
making the grid afresh after each one meant every journey after a wall paid for a
whole map. A wall, door or terrain change alters one blocked edge and the masks of
two to four cells, so the grid notes each change and mends just those before it is
next handed out; past `MEND_LIMIT` pending changes it is made afresh instead.

What `arrays` hands out is read-only to the caller, and valid until the next change
to the world: the grid mends its own arrays in place.
"""

from __future__ import annotations

import numpy as np

from services.pathfinding import move_masks, patch_move_masks

MEND_LIMIT = 512
"""Pending changes mended one by one; more than this and the grid is made afresh
(a change costs a few microseconds to mend, a 500x500 grid a few milliseconds)."""

_CELL, _EAST, _SOUTH = 0, 1, 2


class PathGrid:
    def __init__(
        self,
        passable: np.ndarray,
        wall_east: np.ndarray,
        door_east: np.ndarray,
        wall_south: np.ndarray,
        door_south: np.ndarray,
    ) -> None:
        """The world's own arrays, read (never written) whenever the grid is made or mended."""
        self._passable = passable
        self._walls = (wall_east, door_east, wall_south, door_south)
        self._blocked_east: np.ndarray | None = None
        self._blocked_south: np.ndarray | None = None
        self._masks = bytearray()
        self._handed: tuple[np.ndarray, np.ndarray, np.ndarray, memoryview] | None = None
        self._pending: list[tuple[int, int, int]] = []
        """(what, x, y) since the grid was made: a cell's terrain, the edge east of or
        south of (x, y)."""

    def edge_changed(self, *, south: bool, x: int, y: int) -> None:
        """A wall or door went up or came down on the edge south of (or east of) (x, y)."""
        self._note(_SOUTH if south else _EAST, x, y)

    def cell_changed(self, x: int, y: int) -> None:
        """The terrain of (x, y) changed (and with it, perhaps, whether it is passable)."""
        self._note(_CELL, x, y)

    def _note(self, what: int, x: int, y: int) -> None:
        if self._handed is None:
            return  # nothing made yet: the next `arrays` reads everything anyway
        if len(self._pending) >= MEND_LIMIT:
            self._handed = None  # cheaper to make afresh than to mend
            self._pending.clear()
            return
        self._pending.append((what, x, y))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, memoryview]:
        """(passable, blocked_east, blocked_south, move masks), as `find_path` takes them."""
        if self._handed is None:
            self._make()
        elif self._pending:
            self._mend()
        return self._handed  # type: ignore[return-value]

    def _make(self) -> None:
        wall_east, door_east, wall_south, door_south = self._walls
        blocked_east = wall_east & ~door_east
        blocked_south = wall_south & ~door_south
        self._blocked_east, self._blocked_south = blocked_east, blocked_south
        self._masks = bytearray(move_masks(self._passable, blocked_east, blocked_south))
        views = []
        for array in (self._passable, blocked_east, blocked_south):
            view = array.view()
            view.setflags(write=False)
            views.append(view)
        self._handed = (*views, memoryview(self._masks).toreadonly())
        self._pending.clear()

    def _mend(self) -> None:
        wall_east, door_east, wall_south, door_south = self._walls
        blocked_east, blocked_south = self._blocked_east, self._blocked_south
        assert blocked_east is not None and blocked_south is not None
        height, width = self._passable.shape
        cells: set[tuple[int, int]] = set()
        for what, x, y in self._pending:
            if what == _EAST:
                blocked_east[y, x] = wall_east[y, x] and not door_east[y, x]
                cells.update(((x, y), (x + 1, y)))
            elif what == _SOUTH:
                blocked_south[y, x] = wall_south[y, x] and not door_south[y, x]
                cells.update(((x, y), (x, y + 1)))
            else:  # stepping onto (x, y) is what changed: its neighbours' masks say so
                cells.update(((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)))
        self._pending.clear()
        patch_move_masks(
            self._masks, self._passable, blocked_east, blocked_south,
            [(x, y) for x, y in cells if 0 <= x < width and 0 <= y < height],
        )
