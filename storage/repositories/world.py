"""World-wide state: the world_state row, sparse cells, named places, structures."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from core.landmarks import Landmark
from core.places import NamedPlace, place_key
from core.raster import TerrainRaster
from core.structures import Structure
from core.terrain import Terrain, Weather
from core.types import AgentName, Position, Rect
from core.world import Cell, WorldState
from storage.database import utc_stamp
from storage.errors import CorruptDatabaseError
from storage.repositories.base import (
    Repository,
    decode_edges,
    decode_position,
    dumps,
    encode_edges,
    encode_position,
    loads,
)

RASTER_ENCODING = "zlib:u8"
"""How terrain_raster.data is encoded: zlib over one terrain code byte per cell."""
RASTER_LEVEL = 6


class WorldRepository(Repository):
    _raster: TerrainRaster | None = None
    _raster_loaded: bool = False
    # --- world_state -------------------------------------------------------------

    async def world_id(self) -> str | None:
        """The world's identity (storage/schema.py, migration 8), which its side files
        are checked against."""
        row = await self.db.fetchone("SELECT world_id FROM world_identity WHERE id = 1")
        return None if row is None else str(row[0])

    async def get_world_state(self) -> WorldState | None:
        row = await self.db.fetchone(
            "SELECT width, height, seed, tick, weather FROM world_state WHERE id = 1"
        )
        if row is None:
            return None
        width, height, seed, tick, weather = row
        return WorldState(width, height, seed, tick, Weather(weather))

    async def save_world_state(self, state: WorldState) -> None:
        async with self.db.transaction():
            await self.db.execute(
                """
                INSERT INTO world_state (id, width, height, seed, tick, weather, created_at)
                VALUES (1, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET
                    width = excluded.width, height = excluded.height, seed = excluded.seed,
                    tick = excluded.tick, weather = excluded.weather
                """,
                (state.width, state.height, state.seed, state.tick, state.weather.value,
                 utc_stamp()),
            )

    # --- terrain raster ----------------------------------------------------------

    async def save_terrain(self, raster: TerrainRaster) -> None:
        """Store the base terrain (replacing any), zlib-compressed: maps compress ~20x."""
        self._raster_loaded = False
        data = zlib.compress(raster.codes, RASTER_LEVEL)
        async with self.db.transaction():
            await self.db.execute(
                """
                INSERT INTO terrain_raster (id, width, height, encoding, data)
                VALUES (1, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET width = excluded.width,
                    height = excluded.height, encoding = excluded.encoding, data = excluded.data
                """,
                (raster.width, raster.height, RASTER_ENCODING, data),
            )

    async def get_terrain(self) -> TerrainRaster | None:
        """The base terrain, or None for a world created before terrain generation."""
        row = await self.db.fetchone(
            "SELECT width, height, encoding, data FROM terrain_raster WHERE id = 1"
        )
        if row is None:
            return None
        width, height, encoding, data = row
        if encoding != RASTER_ENCODING:
            raise CorruptDatabaseError(
                f"{self.db.path}: terrain stored as {encoding!r}, which this version cannot read"
            )
        try:
            return TerrainRaster(width, height, zlib.decompress(data))
        except (zlib.error, ValueError, TypeError) as exc:
            raise CorruptDatabaseError(
                f"{self.db.path}: the stored terrain is damaged ({exc})"
            ) from None

    # --- landmarks -----------------------------------------------------------------

    async def save_landmarks(self, landmarks: Sequence[Landmark]) -> None:
        async with self.db.transaction():
            await self.db.executemany(
                "INSERT INTO landmarks (kind, name, description, x, y) VALUES (?, ?, ?, ?, ?)",
                [(m.kind, m.name, m.description, m.position.x, m.position.y) for m in landmarks],
            )

    async def get_landmarks(self) -> list[Landmark]:
        rows = await self.db.fetchall(
            "SELECT kind, name, description, x, y FROM landmarks ORDER BY id"
        )
        return [Landmark(k, n, d, Position(x, y)) for k, n, d, x, y in rows]

    async def get_landmarks_at(self, pos: Position) -> list[Landmark]:
        rows = await self.db.fetchall(
            "SELECT kind, name, description, x, y FROM landmarks WHERE x = ? AND y = ? "
            "ORDER BY id",
            (pos.x, pos.y),
        )
        return [Landmark(k, n, d, Position(x, y)) for k, n, d, x, y in rows]

    async def count_landmarks(self) -> int:
        return await self._count("landmarks")

    # --- wall materials and spent cells ---------------------------------------------

    async def set_edge_materials(
        self, x: int, y: int, side: str, parts: Sequence[tuple[str, int]]
    ) -> None:
        """Replace what the wall on the east ("e") or south ("s") edge of (x, y) holds."""
        async with self.db.transaction():
            await self.db.execute(
                "DELETE FROM edge_materials WHERE x = ? AND y = ? AND side = ?", (x, y, side)
            )
            await self.db.executemany(
                "INSERT INTO edge_materials (x, y, side, part, material, quantity) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(x, y, side, i, m, q) for i, (m, q) in enumerate(parts)],
            )

    async def get_edge_materials(self) -> dict[tuple[int, int, str], list[tuple[str, int]]]:
        rows = await self.db.fetchall(
            "SELECT x, y, side, material, quantity FROM edge_materials ORDER BY x, y, side, part"
        )
        out: dict[tuple[int, int, str], list[tuple[str, int]]] = {}
        for x, y, side, material, quantity in rows:
            out.setdefault((x, y, side), []).append((material, quantity))
        return out

    async def set_spent(self, pos: Position, units: int, since_tick: int) -> None:
        """Record a part-gathered cell; units 0 forgets it (fully grown back)."""
        async with self.db.transaction():
            if units <= 0:
                await self.db.execute(
                    "DELETE FROM spent_cells WHERE x = ? AND y = ?", (pos.x, pos.y)
                )
            else:
                await self.db.execute(
                    "INSERT INTO spent_cells (x, y, units, since_tick) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (x, y) DO UPDATE SET units = excluded.units, "
                    "since_tick = excluded.since_tick",
                    (pos.x, pos.y, units, since_tick),
                )

    async def set_spent_many(self, cells: Sequence[tuple[Position, int, int]]) -> None:
        """`set_spent` for many cells in two statements."""
        gone = [(p.x, p.y) for p, units, _ in cells if units <= 0]
        kept = [(p.x, p.y, units, since) for p, units, since in cells if units > 0]
        async with self.db.transaction():
            if gone:
                await self.db.executemany("DELETE FROM spent_cells WHERE x = ? AND y = ?", gone)
            if kept:
                await self.db.executemany(
                    "INSERT INTO spent_cells (x, y, units, since_tick) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (x, y) DO UPDATE SET units = excluded.units, "
                    "since_tick = excluded.since_tick",
                    kept,
                )

    async def get_spent(self) -> list[tuple[Position, int, int]]:
        rows = await self.db.fetchall("SELECT x, y, units, since_tick FROM spent_cells")
        return [(Position(x, y), units, since) for x, y, units, since in rows]

    # --- cells -------------------------------------------------------------------

    async def _base_terrain(self) -> TerrainRaster | None:
        """The raster cells are stored against, read once per repository."""
        if self._raster_loaded is False:
            self._raster = await self.get_terrain()
            self._raster_loaded = True
        return self._raster

    async def _base_cell(self, pos: Position) -> Cell:
        """What a position holds with no row: its generated terrain, no walls."""
        return _base_cell_in(await self._base_terrain(), pos)

    async def get_cell(self, pos: Position) -> Cell:
        """The cell at `pos`: its stored row, else the generated terrain with no walls."""
        row = await self.db.fetchone(
            "SELECT terrain, walls, doors FROM cells WHERE x = ? AND y = ?", (pos.x, pos.y)
        )
        return await self._base_cell(pos) if row is None else _cell(row)

    async def set_cell(self, pos: Position, cell: Cell) -> None:
        await self.set_cells({pos: cell})

    async def set_cells(self, cells: Mapping[Position, Cell]) -> None:
        """Write many cells at once, sparsely: a cell equal to what its position holds
        with no row (the generated terrain, or grass in a world without a raster, and
        no walls) deletes its row instead. So turning forest into grass is kept."""
        raster = await self._base_terrain()
        keep = []
        drop = []
        for p, c in cells.items():
            if c == _base_cell_in(raster, p):
                drop.append((p.x, p.y))
            else:
                keep.append(
                    (p.x, p.y, c.terrain.value, encode_edges(c.walls), encode_edges(c.doors))
                )
        async with self.db.transaction():
            if keep:
                await self.db.executemany(
                    """
                    INSERT INTO cells (x, y, terrain, walls, doors) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (x, y) DO UPDATE SET terrain = excluded.terrain,
                        walls = excluded.walls, doors = excluded.doors
                    """,
                    keep,
                )
            if drop:
                await self.db.executemany("DELETE FROM cells WHERE x = ? AND y = ?", drop)

    async def get_cells_in(self, rect: Rect) -> dict[Position, Cell]:
        """Stored (non-default) cells inside a rectangle."""
        rows = await self.db.fetchall(
            "SELECT x, y, terrain, walls, doors FROM cells "
            "WHERE x >= ? AND x < ? AND y >= ? AND y < ?",
            (rect.x, rect.right, rect.y, rect.bottom),
        )
        return {Position(x, y): _cell((t, w, d)) for x, y, t, w, d in rows}

    async def get_all_cells(self) -> dict[Position, Cell]:
        rows = await self.db.fetchall("SELECT x, y, terrain, walls, doors FROM cells")
        return {Position(x, y): _cell((t, w, d)) for x, y, t, w, d in rows}

    async def count_cells(self) -> int:
        return await self._count("cells")

    # --- named places --------------------------------------------------------------

    async def save_named_place(self, place: NamedPlace) -> None:
        async with self.db.transaction():
            await self.db.execute(
                """
                INSERT INTO named_places (key, name, x, y, named_by, tick)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET name = excluded.name, x = excluded.x,
                    y = excluded.y, named_by = excluded.named_by, tick = excluded.tick
                """,
                (place.key, place.name, place.position.x, place.position.y, place.named_by,
                 place.tick),
            )

    async def get_named_place(self, name: str) -> NamedPlace | None:
        row = await self.db.fetchone(
            "SELECT name, x, y, named_by, tick FROM named_places WHERE key = ?",
            (place_key(name),),
        )
        return None if row is None else _place(row)

    async def get_places_at(self, pos: Position) -> list[NamedPlace]:
        rows = await self.db.fetchall(
            "SELECT name, x, y, named_by, tick FROM named_places WHERE x = ? AND y = ? "
            "ORDER BY tick, key",
            (pos.x, pos.y),
        )
        return [_place(r) for r in rows]

    async def get_all_named_places(self) -> list[NamedPlace]:
        rows = await self.db.fetchall(
            "SELECT name, x, y, named_by, tick FROM named_places ORDER BY key"
        )
        return [_place(r) for r in rows]

    async def count_named_places(self) -> int:
        return await self._count("named_places")

    async def delete_named_place(self, name: str) -> bool:
        async with self.db.transaction():
            return bool(
                await self.db.execute("DELETE FROM named_places WHERE key = ?", (place_key(name),))
            )

    # --- structures ------------------------------------------------------------------

    async def save_structure(self, structure: Structure) -> None:
        b = structure.bounds
        interior = sorted(encode_position(p) for p in structure.interior)
        async with self.db.transaction():
            await self.db.execute(
                """
                INSERT INTO structures (id, name, created_by, created_tick, is_private, interior,
                                        min_x, min_y, max_x, max_y)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name,
                    created_by = excluded.created_by, created_tick = excluded.created_tick,
                    is_private = excluded.is_private, interior = excluded.interior,
                    min_x = excluded.min_x, min_y = excluded.min_y,
                    max_x = excluded.max_x, max_y = excluded.max_y
                """,
                (structure.id, structure.name, structure.created_by, structure.created_tick,
                 int(structure.is_private), dumps(interior), b.x, b.y, b.right - 1,
                 b.bottom - 1),
            )

    async def get_structure(self, structure_id: str) -> Structure | None:
        row = await self.db.fetchone(f"{_STRUCTURE_SELECT} WHERE id = ?", (structure_id,))
        return None if row is None else _structure(row)

    async def get_structures_at(self, pos: Position) -> list[Structure]:
        rows = await self.db.fetchall(
            f"{_STRUCTURE_SELECT} WHERE min_x <= ? AND max_x >= ? AND min_y <= ? AND max_y >= ?",
            (pos.x, pos.x, pos.y, pos.y),
        )
        return [s for s in map(_structure, rows) if s.contains(pos)]

    async def get_all_structures(self) -> list[Structure]:
        rows = await self.db.fetchall(f"{_STRUCTURE_SELECT} ORDER BY created_tick, id")
        return [_structure(r) for r in rows]

    async def count_structures(self) -> int:
        return await self._count("structures")

    async def delete_structure(self, structure_id: str) -> bool:
        async with self.db.transaction():
            return bool(
                await self.db.execute("DELETE FROM structures WHERE id = ?", (structure_id,))
            )


_STRUCTURE_SELECT = (
    "SELECT id, name, created_by, created_tick, is_private, interior FROM structures"
)


@lru_cache(maxsize=4096)
@lru_cache(maxsize=16)
def _plain_cell(terrain: Terrain) -> Cell:
    return Cell(terrain)


_DEFAULT_CELL = Cell()


def _base_cell_in(raster: TerrainRaster | None, pos: Position) -> Cell:
    if raster is None or not raster.in_bounds(pos):
        return _DEFAULT_CELL
    return _plain_cell(raster.terrain_at(pos))


def _cell_of(terrain: str, walls: str, doors: str) -> Cell:
    """Cells are immutable and a world has few distinct ones: share the instances."""
    return Cell(Terrain(terrain), decode_edges(walls), decode_edges(doors))


def _cell(row: Iterable) -> Cell:
    terrain, walls, doors = row
    return _cell_of(terrain, walls, doors)


def _place(row: tuple) -> NamedPlace:
    name, x, y, named_by, tick = row
    return NamedPlace(name, Position(x, y), AgentName(named_by) if named_by else None, tick)


def _structure(row: tuple) -> Structure:
    sid, name, created_by, created_tick, is_private, interior = row
    return Structure(
        id=sid,
        interior=frozenset(decode_position(p) for p in loads(interior)),
        created_by=AgentName(created_by) if created_by else None,
        created_tick=created_tick,
        name=name,
        is_private=bool(is_private),
    )
