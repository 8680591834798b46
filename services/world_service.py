"""WorldService: the shared world, in memory, where every agent's action lands.

Its grid (terrain, walls, doors, steps) is `WorldCells` (services/world_cells.py) and
what stands on the grid (objects, places, landmarks, structures) is `WorldContents`
(services/world_contents.py); this module builds both from storage's values and adds
the world's own facts (size, tick, weather, time of day, how far anyone sees).
Nothing here validates an agent's intent (the ActionEngine does that); the service
keeps the world's own invariants (an edge inside the map, doors only in walls, one
structure per cell) and notes every change in `changes` for the storage layer to write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from core.clock import TimeOfDay, time_of_day
from core.constants import effective_vision_radius
from core.landmarks import Landmark
from core.objects import WorldObject
from core.places import NamedPlace
from core.structures import Structure
from core.terrain import TERRAIN_ORDER, Weather
from core.types import Position
from core.world import Cell, WorldState
from services.changes import ChangeSet, collecting_now
from services.path_grid import PathGrid
from services.world_cells import EdgeKey, WorldCells, WorldRuleError
from services.world_contents import WorldContents


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


class WorldService(WorldCells, WorldContents):
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

    # ------------------------------------------------------------------ geometry

    def visible(self, viewer: Position, target: Position, radius: int | None = None) -> bool:
        """Within the square of vision around the viewer (Chebyshev distance)."""
        r = self.vision_radius() if radius is None else radius
        return max(abs(viewer.x - target.x), abs(viewer.y - target.y)) <= r

    def cells_around(self, centre: Position, radius: int) -> Iterator[Position]:
        for y in range(max(0, centre.y - radius), min(self.height, centre.y + radius + 1)):
            for x in range(max(0, centre.x - radius), min(self.width, centre.x + radius + 1)):
                yield Position(x, y)
