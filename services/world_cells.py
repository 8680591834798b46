"""The world's grid: terrain codes per cell, walls and doors on the edges between cells,
and the questions every step asks of them.

The terrain is a numpy array (the generated raster with later changes laid on
top); walls and doors are boolean arrays over cell edges, so "is this edge
walled" is one array read and path finding sees the whole grid at once. A wall
between two cells is one fact: `wall_east[y, x]` is the edge between (x, y) and
(x + 1, y), `wall_south[y, x]` the edge between (x, y) and (x, y + 1); each
cell's own view (`cell(pos).walls`) is derived from those arrays, so the two
sides can never disagree.

`WorldCells` is a base of `WorldService` (services/world_service.py), apart from what
stands on the cells (services/world_contents.py) because the grid is arrays and their
invariants (an edge inside the map, doors only in walls, the kept path grid mended
after every change). Its arrays and sizes (`codes`, `passable`, `wall_east`,
`wall_south`, `door_east`, `door_south`, `edge_materials`, `_w`, `_h`, `_path_grid`,
`_terrain_version`, `_terrain_stamps`) are set up by `WorldService.__init__`, which
also gives it `rules`, `width`, `height` and `changes`.
"""

from __future__ import annotations

import numpy as np

from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import CARDINALS, Direction, Position
from core.world import Cell
from services.path_grid import PathGrid

EdgeKey = tuple[int, int, str]
"""(x, y, "e" or "s"): the east or south edge of cell (x, y)."""

STEP_OK, STEP_OFF_MAP, STEP_IMPASSABLE, STEP_WALLED = 0, 1, 2, 3
"""`WorldService.step_refusal` answers: why a step is refused (0: it is not)."""

_DELTAS = {d: d.delta for d in CARDINALS}
"""Direction -> (dx, dy), without the property call."""

_TERRAIN_NAMES = tuple(t.value for t in TERRAIN_ORDER)
"""Terrain code -> the terrain's name."""

WINDOW_BUCKET = 16
"""Side of the squares objects, places and terrain changes are indexed in for window queries."""


class WorldRuleError(ValueError):
    """A change the world itself forbids (an edge off the map, a door without a wall)."""


class WorldCells:
    """The grid half of `WorldService`: terrain, walls, doors and steps."""

    codes: np.ndarray
    passable: np.ndarray
    wall_east: np.ndarray
    wall_south: np.ndarray
    door_east: np.ndarray
    door_south: np.ndarray
    edge_materials: dict[EdgeKey, list[tuple[str, int]]]
    _w: int
    _h: int
    _path_grid: PathGrid
    _terrain_version: int
    _terrain_stamps: dict[tuple[int, int], int]

    # ------------------------------------------------------------------ cells

    def in_bounds(self, pos: Position) -> bool:
        return 0 <= pos.x < self._w and 0 <= pos.y < self._h

    def terrain_at(self, pos: Position) -> Terrain:
        self._require(pos)
        return TERRAIN_ORDER[self.codes[pos.y, pos.x]]

    def terrain_name_at(self, pos: Position) -> str:
        """`terrain_at(pos).value`, read from a table: an enum's value is a property call."""
        self._require(pos)
        return _TERRAIN_NAMES[self.codes[pos.y, pos.x]]

    def is_passable(self, pos: Position) -> bool:
        x, y = pos.x, pos.y
        return 0 <= x < self._w and 0 <= y < self._h and bool(self.passable[y, x])

    def gatherable_at(self, pos: Position) -> str | None:
        """The resource this cell's terrain yields, if any."""
        return self.rules.gather[self.codes[pos.y, pos.x]] if self.in_bounds(pos) else None

    def set_terrain(self, pos: Position, terrain: Terrain) -> None:
        """The one way to change a cell's terrain once the world is loaded: it counts the
        change in `terrain_version`, so whatever keeps what it read from `codes` or
        `passable` (the PerceptionBuilder does) knows to read again."""
        self._require(pos)
        code = TERRAIN_CODE[terrain]
        self.codes[pos.y, pos.x] = code
        self.passable[pos.y, pos.x] = self.rules.passable[code]
        self._terrain_version += 1
        self._path_grid.cell_changed(pos.x, pos.y)
        self._terrain_stamps[(pos.x // WINDOW_BUCKET, pos.y // WINDOW_BUCKET)] = (
            self._terrain_version
        )
        self.changes.cells.add(pos)

    def cell(self, pos: Position) -> Cell:
        """The cell as storage knows it: terrain, and walls and doors on its edges."""
        self._require(pos)
        walls = frozenset(d for d in CARDINALS if self.has_wall(pos, d))
        doors = frozenset(d for d in CARDINALS if self.has_door(pos, d))
        return Cell(self.terrain_at(pos), walls, doors)

    # ------------------------------------------------------------------ edges

    def _edge(self, pos: Position, direction: Direction) -> tuple[np.ndarray, np.ndarray, int, int]:
        """(wall array, door array, y, x) of an edge inside the map, or WorldRuleError."""
        if direction not in CARDINALS:
            raise WorldRuleError("walls stand on edges: north, south, east or west")
        other = pos.step(direction)
        if not self.in_bounds(pos) or not self.in_bounds(other):
            raise WorldRuleError(
                f"the {direction.value} edge of ({pos.x}, {pos.y}) is the edge of the world"
            )
        return self._edge_unchecked(pos, direction)

    def _edge_unchecked(
        self, pos: Position, direction: Direction
    ) -> tuple[np.ndarray, np.ndarray, int, int]:
        if direction is Direction.EAST:
            return self.wall_east, self.door_east, pos.y, pos.x
        if direction is Direction.WEST:
            return self.wall_east, self.door_east, pos.y, pos.x - 1
        if direction is Direction.SOUTH:
            return self.wall_south, self.door_south, pos.y, pos.x
        return self.wall_south, self.door_south, pos.y - 1, pos.x

    def edge_inside(self, pos: Position, direction: Direction) -> bool:
        return direction in CARDINALS and self.in_bounds(pos) and self.in_bounds(
            pos.step(direction)
        )

    def has_wall(self, pos: Position, direction: Direction) -> bool:
        if not self.edge_inside(pos, direction):
            return False
        walls, _, y, x = self._edge(pos, direction)
        return bool(walls[y, x])

    def has_door(self, pos: Position, direction: Direction) -> bool:
        if not self.edge_inside(pos, direction):
            return False
        _, doors, y, x = self._edge(pos, direction)
        return bool(doors[y, x])

    def edge_blocked(self, pos: Position, direction: Direction) -> bool:
        """A wall without a door: nobody passes. (One lookup: this is on every step.)"""
        if not self.edge_inside(pos, direction):
            return False
        walls, doors, y, x = self._edge_unchecked(pos, direction)
        return bool(walls[y, x]) and not doors[y, x]

    def step_refusal(self, pos: Position, direction: Direction) -> int:
        """Why one step from `pos` (a cell inside the map) in a cardinal `direction` is
        refused: STEP_OK (0), STEP_OFF_MAP, STEP_IMPASSABLE or STEP_WALLED, checked in
        that order.

        The same answer as in_bounds, is_passable and edge_blocked of the cell stepped
        to, asked in one call that makes no Position: every step of every walk and
        journey asks it, and a Position costs more than all the checks together.
        """
        dx, dy = _DELTAS[direction]
        x, y = pos.x, pos.y
        tx, ty = x + dx, y + dy
        if not (0 <= tx < self._w and 0 <= ty < self._h):
            return STEP_OFF_MAP
        if not self.passable[ty, tx]:
            return STEP_IMPASSABLE
        if not (0 <= x < self._w and 0 <= y < self._h):
            return STEP_OK  # edge_blocked: an edge with a side off the map has no wall
        # The edge between the two cells is east of the western one, south of the northern.
        if dy:
            walled = self.wall_south[min(y, ty), x] and not self.door_south[min(y, ty), x]
        else:
            walled = self.wall_east[y, min(x, tx)] and not self.door_east[y, min(x, tx)]
        return STEP_WALLED if walled else STEP_OK

    def open_steps(self, pos: Position, direction: Direction, most: int) -> int:
        """How many steps in a row from `pos` (a cell inside the map) in `direction`
        `step_refusal` would allow, up to `most`: 0 for a first step it refuses, or for a
        direction that is not cardinal.

        A walk of several steps asks once instead of once per step; the checks are
        step_refusal's, in its order, on the same arrays.
        """
        delta = _DELTAS.get(direction)
        if delta is None:
            return 0
        dx, dy = delta
        w, h, passable = self._w, self._h, self.passable
        walls, doors = (self.wall_south, self.door_south) if dy else (
            self.wall_east, self.door_east)
        x, y = pos.x, pos.y
        for taken in range(most):
            tx, ty = x + dx, y + dy
            if not (0 <= tx < w and 0 <= ty < h) or not passable[ty, tx]:
                return taken
            if 0 <= x < w and 0 <= y < h:
                ex, ey = (x, min(y, ty)) if dy else (min(x, tx), y)
                if walls[ey, ex] and not doors[ey, ex]:
                    return taken
            x, y = tx, ty
        return most

    def can_step(self, pos: Position, direction: Direction) -> bool:
        if direction not in CARDINALS:
            return False
        target = pos.step(direction)
        return self.is_passable(target) and not self.edge_blocked(pos, direction)

    def _edge_key(self, pos: Position, direction: Direction) -> EdgeKey:
        walls, _, y, x = self._edge(pos, direction)
        return (x, y, "e" if walls is self.wall_east else "s")

    def place_wall(
        self, pos: Position, direction: Direction, material: str | None = None, quantity: int = 0
    ) -> None:
        """Raise a wall on an edge; what it is made of is kept and given back on removal."""
        walls, _, y, x = self._edge(pos, direction)
        if walls[y, x]:
            raise WorldRuleError(f"there is already a wall on the {direction.value} side")
        walls[y, x] = True
        self._path_grid.edge_changed(south=walls is self.wall_south, x=x, y=y)
        if material and quantity:
            self.edge_materials[self._edge_key(pos, direction)] = [(material, quantity)]
        self.changes.edges.add(self._edge_key(pos, direction))
        self.changes.cells.update((pos, pos.step(direction)))

    def remove_wall(self, pos: Position, direction: Direction) -> list[tuple[str, int]]:
        """Take the wall (and any door in it) off an edge; returns the materials in it."""
        walls, doors, y, x = self._edge(pos, direction)
        if not walls[y, x]:
            raise WorldRuleError(f"there is no wall on the {direction.value} side")
        walls[y, x] = False
        doors[y, x] = False
        self._path_grid.edge_changed(south=walls is self.wall_south, x=x, y=y)
        returned = self.edge_materials.pop(self._edge_key(pos, direction), [])
        self.changes.edges.add(self._edge_key(pos, direction))
        self.changes.cells.update((pos, pos.step(direction)))
        return list(returned)

    def place_door(
        self, pos: Position, direction: Direction, material: str | None = None, quantity: int = 0
    ) -> None:
        walls, doors, y, x = self._edge(pos, direction)
        if not walls[y, x]:
            raise WorldRuleError("a door goes in a wall, and there is no wall there")
        if doors[y, x]:
            raise WorldRuleError(f"there is already a door on the {direction.value} side")
        doors[y, x] = True
        self._path_grid.edge_changed(south=walls is self.wall_south, x=x, y=y)
        if material and quantity:
            self.edge_materials.setdefault(self._edge_key(pos, direction), []).append(
                (material, quantity)
            )
        self.changes.edges.add(self._edge_key(pos, direction))
        self.changes.cells.update((pos, pos.step(direction)))

    def materials_in_walls(self) -> dict[str, int]:
        """Every resource built into walls and doors, for conservation checks."""
        totals: dict[str, int] = {}
        for parts in self.edge_materials.values():
            for material, quantity in parts:
                totals[material] = totals.get(material, 0) + quantity
        return totals

    def blocked_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(blocked_east, blocked_south): walls without doors, for path finding."""
        return self.wall_east & ~self.door_east, self.wall_south & ~self.door_south

    def path_grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, memoryview]:
        """(passable, blocked_east, blocked_south, move masks) for `find_path`: kept
        between journeys and mended after each terrain, wall or door change
        (services/path_grid.py). Read-only, and valid until the world next changes."""
        return self._path_grid.arrays()

    def _load_cell(self, pos: Position, cell: Cell) -> None:
        if not self.in_bounds(pos):
            return
        self.codes[pos.y, pos.x] = TERRAIN_CODE[cell.terrain]
        for d in cell.walls:
            if self.edge_inside(pos, d):
                walls, doors, y, x = self._edge(pos, d)
                walls[y, x] = True
                if d in cell.doors:
                    doors[y, x] = True

    # ------------------------------------------------------------------ terrain changes

    @property
    def terrain_version(self) -> int:
        """Goes up with every `set_terrain`: while it stays the same, no cell's terrain
        (nor passability, which follows from it) has changed."""
        return self._terrain_version

    def terrain_changed_since(self, version: int) -> list[tuple[int, int, int, int]]:
        """Windows (x0, y0, x1, y1), half-open and inside the map, that together hold every
        cell whose terrain was set after `terrain_version` read `version` (they may hold
        unchanged cells too). Empty when nothing changed since."""
        if version >= self._terrain_version:
            return []
        size, w, h = WINDOW_BUCKET, self._w, self._h
        return [
            (bx * size, by * size, min(w, (bx + 1) * size), min(h, (by + 1) * size))
            for (bx, by), stamp in self._terrain_stamps.items() if stamp > version
        ]

    def _require(self, pos: Position) -> None:
        if not self.in_bounds(pos):
            raise WorldRuleError(
                f"({pos.x}, {pos.y}) is outside the {self.width}x{self.height} world"
            )
