"""What stands on the world's cells: objects and signs, named places, landmarks and
structures, each a dictionary with a position index.

Objects and places are also indexed in WINDOW_BUCKET-cell squares for window
queries (`objects_in`, `places_in`), so what lies in an agent's view costs a few
look-ups, not one per cell. `WorldContents` is a base of `WorldService`
(services/world_service.py), apart from the grid (services/world_cells.py) because
these are dictionaries with their own invariants (one id per object, one name per
place, one structure per cell); its dictionaries are set up by `WorldService.__init__`,
which also gives it `changes`.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.landmarks import Landmark
from core.objects import Sign, WorldObject
from core.places import NamedPlace, place_key
from core.structures import Structure
from core.types import Position
from services.world_cells import WINDOW_BUCKET, WorldRuleError


def _row_major(obj: WorldObject) -> tuple[int, int]:
    return obj.position.y, obj.position.x


class WorldContents:
    """The contents half of `WorldService`: objects, places, landmarks and structures
    (a cell is checked to be inside the map by `WorldCells._require`)."""

    _objects: dict[str, WorldObject]
    _objects_at: dict[Position, list[str]]
    _object_buckets: dict[tuple[int, int], dict[str, WorldObject]]
    _places: dict[str, NamedPlace]
    _place_buckets: dict[tuple[int, int], list[NamedPlace]]
    _landmarks: tuple[Landmark, ...]
    _landmarks_at: dict[Position, list[Landmark]]
    _structures: dict[str, Structure]
    _structure_at: dict[Position, str]
    _structure_rows: dict[int, int]

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
        """The named places on cells x0 <= x < x1, y0 <= y < y1, in no particular order.
        (The bucket walk of `objects_in`, written out again: a shared helper that listed
        the buckets added 0.8% to a 1,000-agent tick's instructions.)"""
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
