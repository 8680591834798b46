"""WorldService: the shared world, in memory, where every agent's action lands.

The terrain is a numpy array (the generated raster with later changes laid on
top); walls and doors are boolean arrays over cell edges, so "is this edge
walled" is one array read and path finding sees the whole grid at once. A wall
between two cells is one fact: `wall_east[y, x]` is the edge between (x, y) and
(x + 1, y), `wall_south[y, x]` the edge between (x, y) and (x, y + 1); each
cell's own view (`cell(pos).walls`) is derived from those arrays, so the two
sides can never disagree.

Objects, signs, named places, landmarks and structures are dictionaries with a
position index. Objects, places and terrain changes are also indexed in
WINDOW_BUCKET-cell squares for window queries (`objects_in`, `places_in`,
`terrain_changed_since`), so what lies in an agent's view costs a few look-ups,
not one per cell. Nothing here validates an agent's intent (the ActionEngine does
that); the service keeps the world's own invariants (an edge inside the map,
doors only in walls, one structure per cell) and notes every change in
`changes` for the storage layer to write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from core.clock import TimeOfDay, time_of_day
from core.constants import effective_vision_radius
from core.landmarks import Landmark
from core.objects import Sign, WorldObject
from core.places import NamedPlace, place_key
from core.structures import Structure
from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain, Weather
from core.types import CARDINALS, Direction, Position
from core.world import Cell, WorldState
from services.changes import ChangeSet, collecting_now
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


@dataclass(frozen=True)
class TerrainRules:
    """Terrain traits the world needs, by terrain code (from terrain.yaml)."""

    passable: np.ndarray
    """passable[code] -> bool"""
    gather: tuple[str | None, ...]
    """gather[code] -> resource name or None"""

    @classmethod
    def from_traits(cls, terrains) -> TerrainRules:
        """From `HearthConfig.terrain.terrains` (a mapping Terrain -> spec)."""
        passable = np.array([terrains[t].passable for t in TERRAIN_ORDER], dtype=bool)
        passable.setflags(write=False)
        return cls(passable=passable, gather=tuple(terrains[t].gather for t in TERRAIN_ORDER))


@dataclass(frozen=True)
class Clock:
    ticks_per_day: int = 24
    start_hour: int = 8
    vision_radius: int = 3


def _row_major(obj: WorldObject) -> tuple[int, int]:
    return obj.position.y, obj.position.x


class WorldService:
    def __init__(
        self,
        state: WorldState,
        terrain: np.ndarray,
        rules: TerrainRules,
        *,
        clock: Clock = Clock(),
        cells: dict[Position, Cell] | None = None,
        objects: Iterable[WorldObject] = (),
        places: Iterable[NamedPlace] = (),
        landmarks: Iterable[Landmark] = (),
        structures: Iterable[Structure] = (),
        changes: ChangeSet | None = None,
        edge_materials: dict[EdgeKey, list[tuple[str, int]]] | None = None,
    ) -> None:
        if terrain.shape != (state.height, state.width):
            raise ValueError(
                f"terrain is {terrain.shape[1]}x{terrain.shape[0]} but the world is "
                f"{state.width}x{state.height}"
            )
        self._state = state
        self._w, self._h = state.width, state.height
        self._time_cache: tuple[int, Clock, TimeOfDay] | None = None
        """(tick, clock, its time of day): the last `time_of_day` answer."""
        self._radius_cache: tuple[int, Clock, int] | None = None
        """(tick, clock, how far anyone sees): the last `vision_radius` answer."""
        self.rules = rules
        self.clock = clock
        self._changes = changes if changes is not None else ChangeSet()
        self.codes = np.array(terrain, dtype=np.uint8)
        h, w = self.codes.shape
        self.wall_east = np.zeros((h, w), dtype=bool)
        self.wall_south = np.zeros((h, w), dtype=bool)
        self.door_east = np.zeros((h, w), dtype=bool)
        self.door_south = np.zeros((h, w), dtype=bool)
        self.edge_materials: dict[EdgeKey, list[tuple[str, int]]] = dict(edge_materials or {})
        for pos, cell in (cells or {}).items():
            self._load_cell(pos, cell)
        self.passable = rules.passable[self.codes]
        self._path_grid = PathGrid(self.passable, self.wall_east, self.door_east,
                                   self.wall_south, self.door_south)
        """What `find_path` needs, told of every terrain, wall and door change."""
        self._objects: dict[str, WorldObject] = {}
        self._objects_at: dict[Position, list[str]] = {}
        self._object_buckets: dict[tuple[int, int], dict[str, WorldObject]] = {}
        """(x // WINDOW_BUCKET, y // WINDOW_BUCKET) -> id -> the objects there, in the order
        they were placed (as in `_objects_at`)."""
        self._terrain_version = 0
        self._terrain_stamps: dict[tuple[int, int], int] = {}
        """bucket -> `terrain_version` just after its last terrain change."""
        for obj in objects:
            self._index_object(obj)
        self._places: dict[str, NamedPlace] = {p.key: p for p in places}
        self._place_buckets: dict[tuple[int, int], list[NamedPlace]] = {}
        """(x // WINDOW_BUCKET, y // WINDOW_BUCKET) -> the places named there."""
        for place in self._places.values():
            self._index_place(place)
        self._landmarks = tuple(landmarks)
        self._landmarks_at: dict[Position, list[Landmark]] = {}
        for mark in self._landmarks:
            self._landmarks_at.setdefault(mark.position, []).append(mark)
        self._structures: dict[str, Structure] = {}
        self._structure_at: dict[Position, str] = {}
        self._structure_rows: dict[int, int] = {}
        """y -> how many cells of that row `_structure_at` holds (rows with none are absent)."""
        for structure in structures:
            self._index_structure(structure)

    # ------------------------------------------------------------------ change journal

    @property
    def changes(self) -> ChangeSet:
        """Where changes are noted: the running turn's journal, else the world's own."""
        turn = collecting_now()
        return self._changes if turn is None else turn

    @changes.setter
    def changes(self, value: ChangeSet) -> None:
        self._changes = value

    # ------------------------------------------------------------------ world facts

    @property
    def state(self) -> WorldState:
        return self._state

    @property
    def width(self) -> int:
        return self._state.width

    @property
    def height(self) -> int:
        return self._state.height

    @property
    def tick(self) -> int:
        return self._state.tick

    @property
    def weather(self) -> Weather:
        return self._state.weather

    def time_of_day(self, tick: int | None = None) -> TimeOfDay:
        """The clock reading at `tick` (default: now).

        Asked on every narration and every vision check, thousands of times a tick, for
        the same few ticks: the last answer is kept (a TimeOfDay is immutable) and
        reused while the tick and the clock are the same.
        """
        if tick is None:
            tick = self._state.tick
        clock = self.clock
        known = self._time_cache
        if known is not None and known[0] == tick and known[1] is clock:
            return known[2]
        when = time_of_day(tick, clock.ticks_per_day, clock.start_hour)
        self._time_cache = (tick, clock, when)
        return when

    @property
    def is_night(self) -> bool:
        return self.time_of_day().is_night

    def vision_radius(self) -> int:
        """How far anyone sees right now (shorter at night).

        Asked by every walk, journey and look around, and the same all tick: kept, like
        `time_of_day`, while the tick and the clock are the same.
        """
        tick = self._state.tick
        clock = self.clock
        known = self._radius_cache
        if known is not None and known[0] == tick and known[1] is clock:
            return known[2]
        radius = effective_vision_radius(clock.vision_radius, self.time_of_day(tick).is_night)
        self._radius_cache = (tick, clock, radius)
        return radius

    def set_tick(self, tick: int) -> None:
        if tick < self._state.tick:
            raise WorldRuleError(f"time does not run backwards ({self.tick} -> {tick})")
        self._state = WorldState(
            self.width, self.height, self._state.seed, tick, self._state.weather
        )
        self.changes.world_state = True

    def set_weather(self, weather: Weather) -> None:
        self._state = self._state.with_weather(weather)
        self.changes.world_state = True

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

    # ------------------------------------------------------------------ objects

    def objects_at(self, pos: Position) -> list[WorldObject]:
        return [self._objects[i] for i in self._objects_at.get(pos, ())]

    def get_object(self, object_id: str) -> WorldObject | None:
        return self._objects.get(object_id)

    def all_objects(self) -> list[WorldObject]:
        return list(self._objects.values())

    def sign_at(self, pos: Position) -> Sign | None:
        for obj in self.objects_at(pos):
            if isinstance(obj, Sign):
                return obj
        return None

    def add_object(self, obj: WorldObject) -> None:
        self._require(obj.position)
        if obj.id in self._objects:
            raise WorldRuleError(f"object id {obj.id!r} is already in use")
        self._index_object(obj)
        self.changes.save_object(obj.id)

    def replace_object(self, obj: WorldObject) -> None:
        """Swap an object for a changed version of itself (same id, same cell)."""
        old = self._objects.get(obj.id)
        if old is None or old.position != obj.position:
            raise WorldRuleError(f"no object {obj.id!r} at ({obj.position.x}, {obj.position.y})")
        self._objects[obj.id] = obj
        self._file_object(obj)
        self.changes.save_object(obj.id)

    def remove_object(self, object_id: str) -> WorldObject:
        obj = self._objects.pop(object_id)
        ids = self._objects_at[obj.position]
        ids.remove(object_id)
        if not ids:
            del self._objects_at[obj.position]
        key = (obj.position.x // WINDOW_BUCKET, obj.position.y // WINDOW_BUCKET)
        bucket = self._object_buckets[key]
        del bucket[object_id]
        if not bucket:
            del self._object_buckets[key]
        self.changes.delete_object(object_id)
        return obj

    def _index_object(self, obj: WorldObject) -> None:
        self._objects[obj.id] = obj
        self._objects_at.setdefault(obj.position, []).append(obj.id)
        self._file_object(obj)

    def _file_object(self, obj: WorldObject) -> None:
        key = (obj.position.x // WINDOW_BUCKET, obj.position.y // WINDOW_BUCKET)
        self._object_buckets.setdefault(key, {})[obj.id] = obj

    # ------------------------------------------------------------------ window queries

    def objects_in(self, x0: int, y0: int, x1: int, y1: int) -> list[WorldObject]:
        """The objects on cells x0 <= x < x1, y0 <= y < y1: row by row from the north, west
        to east in a row, and on one cell in the order `objects_at` gives them.

        Objects are indexed in WINDOW_BUCKET-cell squares, so a window with nothing
        near costs a few dictionary look-ups, not one per cell.
        """
        buckets = self._object_buckets
        if not buckets or x0 >= x1 or y0 >= y1:
            return []
        size = WINDOW_BUCKET
        bx0, bx1 = x0 // size, (x1 - 1) // size
        found = []
        for by in range(y0 // size, (y1 - 1) // size + 1):
            for bx in range(bx0, bx1 + 1):
                here = buckets.get((bx, by))
                if here:
                    for obj in here.values():
                        there = obj.position
                        if x0 <= there.x < x1 and y0 <= there.y < y1:
                            found.append(obj)
        if len(found) > 1:
            found.sort(key=_row_major)  # stable: one cell's objects keep their order
        return found

    def places_in(self, x0: int, y0: int, x1: int, y1: int) -> list[NamedPlace]:
        """The named places on cells x0 <= x < x1, y0 <= y < y1, in no particular order."""
        buckets = self._place_buckets
        if not buckets or x0 >= x1 or y0 >= y1:
            return []
        size = WINDOW_BUCKET
        bx0, bx1 = x0 // size, (x1 - 1) // size
        found = []
        for by in range(y0 // size, (y1 - 1) // size + 1):
            for bx in range(bx0, bx1 + 1):
                for place in buckets.get((bx, by), ()):
                    there = place.position
                    if x0 <= there.x < x1 and y0 <= there.y < y1:
                        found.append(place)
        return found

    def _index_place(self, place: NamedPlace) -> None:
        key = (place.position.x // WINDOW_BUCKET, place.position.y // WINDOW_BUCKET)
        self._place_buckets.setdefault(key, []).append(place)

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

    # ------------------------------------------------------------------ places and landmarks

    def place_named(self, name: str) -> NamedPlace | None:
        return self._places.get(place_key(name))

    def places_at(self, pos: Position) -> list[NamedPlace]:
        return [p for p in self._places.values() if p.position == pos]

    def all_places(self) -> list[NamedPlace]:
        return list(self._places.values())

    def name_place(self, place: NamedPlace) -> None:
        self._require(place.position)
        if place.key in self._places:
            raise WorldRuleError(f"{place.name!r} is already the name of a place")
        self._places[place.key] = place
        self._index_place(place)
        self.changes.save_place(place.key)

    @property
    def landmarks(self) -> Sequence[Landmark]:
        return self._landmarks

    def landmarks_at(self, pos: Position) -> list[Landmark]:
        return list(self._landmarks_at.get(pos, ()))

    def landmark_named(self, name: str) -> Landmark | None:
        key = place_key(name)
        for mark in self._landmarks:
            if place_key(mark.name) == key:
                return mark
        return None

    # ------------------------------------------------------------------ structures

    def structure_at(self, pos: Position) -> Structure | None:
        # Every narration asks; almost every answer is "none", and a row look-up hashes an
        # int where `_structure_at` must hash a Position (a Python call).
        if pos.y not in self._structure_rows:
            return None
        sid = self._structure_at.get(pos)
        return self._structures[sid] if sid else None

    def all_structures(self) -> list[Structure]:
        return list(self._structures.values())

    def add_structure(self, structure: Structure) -> None:
        taken = [p for p in structure.interior if p in self._structure_at]
        if taken:
            raise WorldRuleError(f"({taken[0].x}, {taken[0].y}) already lies in a structure")
        self._index_structure(structure)
        self.changes.save_structure(structure.id)

    def remove_structure(self, structure_id: str) -> Structure:
        structure = self._structures.pop(structure_id)
        rows = self._structure_rows
        for pos in structure.interior:
            if self._structure_at.pop(pos, None) is not None:
                if rows[pos.y] == 1:
                    del rows[pos.y]
                else:
                    rows[pos.y] -= 1
        self.changes.delete_structure(structure_id)
        return structure

    def _index_structure(self, structure: Structure) -> None:
        self._structures[structure.id] = structure
        rows = self._structure_rows
        for pos in structure.interior:
            if pos not in self._structure_at:
                rows[pos.y] = rows.get(pos.y, 0) + 1
            self._structure_at[pos] = structure.id

    # ------------------------------------------------------------------ geometry

    def visible(self, viewer: Position, target: Position, radius: int | None = None) -> bool:
        """Within the square of vision around the viewer (Chebyshev distance)."""
        r = self.vision_radius() if radius is None else radius
        return max(abs(viewer.x - target.x), abs(viewer.y - target.y)) <= r

    def cells_around(self, centre: Position, radius: int) -> Iterator[Position]:
        for y in range(max(0, centre.y - radius), min(self.height, centre.y + radius + 1)):
            for x in range(max(0, centre.x - radius), min(self.width, centre.x + radius + 1)):
                yield Position(x, y)

    def _require(self, pos: Position) -> None:
        if not self.in_bounds(pos):
            raise WorldRuleError(
                f"({pos.x}, {pos.y}) is outside the {self.width}x{self.height} world"
            )
