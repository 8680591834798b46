"""Cells and the grid.

Walls live on cell edges, not in cells: a wall between (3,4) and (3,5) is one
fact, stored as SOUTH on the first cell and NORTH on the second. A door is a
gap in a wall, so every door edge is also a wall edge. This keeps interiors
full-sized: a 3x3 walled room has nine usable cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from core.terrain import DEFAULT_TERRAIN, Terrain, Weather
from core.types import CARDINALS, Direction, Position, Rect

_NO_EDGES: frozenset[Direction] = frozenset()


def _edges(raw: Iterable[Direction | str]) -> frozenset[Direction]:
    if not raw:
        return _NO_EDGES  # the common case: most cells have no walls
    edges = frozenset(Direction.parse(d) for d in raw)
    if Direction.DOWN in edges:
        raise ValueError("walls and doors stand on cell edges: 'down' is not an edge")
    return edges


@dataclass(frozen=True, slots=True)
class Cell:
    """One grid cell: its terrain and the walls and doors on its four edges."""

    terrain: Terrain = DEFAULT_TERRAIN
    walls: frozenset[Direction] = frozenset()
    doors: frozenset[Direction] = frozenset()

    def __post_init__(self) -> None:
        if type(self.terrain) is not Terrain:
            object.__setattr__(self, "terrain", Terrain(self.terrain))
        object.__setattr__(self, "walls", _edges(self.walls))
        object.__setattr__(self, "doors", _edges(self.doors))
        if not self.doors <= self.walls:
            stray = ", ".join(sorted(d.value for d in self.doors - self.walls))
            raise ValueError(f"a door needs a wall on the same edge (no wall on: {stray})")

    @property
    def is_default(self) -> bool:
        """True when the cell needs no storage: default terrain, no walls."""
        return self.terrain is DEFAULT_TERRAIN and not self.walls

    def blocks(self, direction: Direction) -> bool:
        """Whether this cell's edge in `direction` stops movement."""
        return direction in self.walls and direction not in self.doors

    def with_terrain(self, terrain: Terrain) -> Cell:
        return Cell(terrain, self.walls, self.doors)

    def with_wall(self, direction: Direction) -> Cell:
        return Cell(self.terrain, self.walls | {direction}, self.doors)

    def without_wall(self, direction: Direction) -> Cell:
        """Remove the wall on an edge, and any door in it."""
        return Cell(self.terrain, self.walls - {direction}, self.doors - {direction})

    def with_door(self, direction: Direction) -> Cell:
        """Put a door on an edge; a wall is added if the edge had none."""
        return Cell(self.terrain, self.walls | {direction}, self.doors | {direction})

    def without_door(self, direction: Direction) -> Cell:
        """Close the gap: the edge keeps its wall."""
        return Cell(self.terrain, self.walls, self.doors - {direction})


@dataclass(frozen=True, slots=True)
class Grid:
    """A bounded grid with sparse cells: positions not listed are default cells.

    The grid is a value; `with_*` methods return a new grid. Services that edit
    the world many times a tick keep their own mutable indexes and use this type
    for rules and tests.
    """

    width: int
    height: int
    cells: Mapping[Position, Cell] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"grid size must be positive, got {self.width}x{self.height}")
        cleaned = {}
        for pos, cell in self.cells.items():
            if not self.in_bounds(pos):
                raise ValueError(f"cell {pos} lies outside the {self.width}x{self.height} grid")
            if not cell.is_default:
                cleaned[pos] = cell
        object.__setattr__(self, "cells", MappingProxyType(cleaned))

    def __hash__(self) -> int:
        return hash((self.width, self.height, frozenset(self.cells.items())))

    @property
    def bounds(self) -> Rect:
        return Rect(0, 0, self.width, self.height)

    def in_bounds(self, pos: Position) -> bool:
        return 0 <= pos.x < self.width and 0 <= pos.y < self.height

    def cell(self, pos: Position) -> Cell:
        if not self.in_bounds(pos):
            raise ValueError(f"{pos} lies outside the {self.width}x{self.height} grid")
        return self.cells.get(pos, _DEFAULT_CELL)

    def terrain_at(self, pos: Position) -> Terrain:
        return self.cell(pos).terrain

    def with_cell(self, pos: Position, cell: Cell) -> Grid:
        cells = dict(self.cells)
        cells[pos] = cell
        return Grid(self.width, self.height, cells)

    def with_terrain(self, pos: Position, terrain: Terrain) -> Grid:
        return self.with_cell(pos, self.cell(pos).with_terrain(terrain))

    def _edge_pair(self, pos: Position, direction: Direction) -> tuple[Position, Position]:
        if not direction.is_cardinal:
            raise ValueError("walls stand on edges: choose north, south, east or west")
        other = pos.step(direction)
        if not self.in_bounds(pos) or not self.in_bounds(other):
            raise ValueError(f"the {direction.value} edge of {pos} is at the edge of the world")
        return pos, other

    def with_wall(self, pos: Position, direction: Direction) -> Grid:
        """Build a wall on an edge, recorded on both cells that share it."""
        a, b = self._edge_pair(pos, direction)
        cells = dict(self.cells)
        cells[a] = self.cell(a).with_wall(direction)
        cells[b] = self.cell(b).with_wall(direction.opposite)
        return Grid(self.width, self.height, cells)

    def without_wall(self, pos: Position, direction: Direction) -> Grid:
        a, b = self._edge_pair(pos, direction)
        cells = dict(self.cells)
        cells[a] = self.cell(a).without_wall(direction)
        cells[b] = self.cell(b).without_wall(direction.opposite)
        return Grid(self.width, self.height, cells)

    def with_door(self, pos: Position, direction: Direction) -> Grid:
        a, b = self._edge_pair(pos, direction)
        cells = dict(self.cells)
        cells[a] = self.cell(a).with_door(direction)
        cells[b] = self.cell(b).with_door(direction.opposite)
        return Grid(self.width, self.height, cells)

    def edge_blocked(self, pos: Position, direction: Direction) -> bool:
        """Whether a wall without a door stands between `pos` and its neighbour."""
        a, b = self._edge_pair(pos, direction)
        return self.cell(a).blocks(direction) or self.cell(b).blocks(direction.opposite)

    def can_step(
        self, pos: Position, direction: Direction, passable: frozenset[Terrain]
    ) -> bool:
        """Whether one step from `pos` in `direction` is allowed.

        `passable` comes from config, so the grid does not hard-code which
        terrain can be walked on.
        """
        if not direction.is_cardinal:
            return False
        target = pos.step(direction)
        if not self.in_bounds(pos) or not self.in_bounds(target):
            return False
        if self.cell(target).terrain not in passable:
            return False
        return not self.edge_blocked(pos, direction)

    def neighbors(self, pos: Position) -> Iterator[Position]:
        for d in CARDINALS:
            nxt = pos.step(d)
            if self.in_bounds(nxt):
                yield nxt


_DEFAULT_CELL = Cell()


@dataclass(frozen=True, slots=True)
class WorldState:
    """The single row of world-wide facts: size, seed, clock and sky."""

    width: int
    height: int
    seed: int
    tick: int = 0
    weather: Weather = Weather.CLEAR

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"world size must be positive, got {self.width}x{self.height}")
        if self.tick < 0:
            raise ValueError(f"tick must be non-negative, got {self.tick}")
        object.__setattr__(self, "weather", Weather(self.weather))

    def advanced(self) -> WorldState:
        return WorldState(self.width, self.height, self.seed, self.tick + 1, self.weather)

    def with_weather(self, weather: Weather) -> WorldState:
        return WorldState(self.width, self.height, self.seed, self.tick, weather)
