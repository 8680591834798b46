"""The terrain raster and landmarks tables (schema v3) against a real world.db."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from core.landmarks import Landmark
from core.raster import TerrainRaster
from core.terrain import TERRAIN_ORDER, Terrain
from core.types import Position
from core.world import Cell, WorldState
from storage import LATEST_VERSION, CorruptDatabaseError, Storage
from storage.repositories.world import RASTER_ENCODING
from storage.schema import MIGRATIONS


def random_raster(width: int, height: int, seed: int) -> TerrainRaster:
    """Noise is the hardest case for the compression: nothing to share between cells."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, len(TERRAIN_ORDER), size=width * height, dtype=np.uint8)
    return TerrainRaster(width, height, codes.tobytes())


def tamper(db: Path, sql: str, params: tuple = ()) -> None:
    """Change the file behind the repository's back, through a connection of our own."""
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


# --- terrain raster ----------------------------------------------------------------------


async def test_terrain_is_absent_in_a_new_world(storage: Storage) -> None:
    assert await storage.world.get_terrain() is None


async def test_a_300x200_raster_round_trips_exactly(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    raster = random_raster(300, 200, seed=1)
    await storage.world.save_terrain(raster)

    loaded = await storage.world.get_terrain()
    assert loaded is not None
    assert (loaded.width, loaded.height) == (300, 200)
    assert loaded.codes == raster.codes
    assert loaded == raster
    async with reopen() as other:
        assert await other.world.get_terrain() == raster
    # Stored compressed, under the documented encoding.
    row = await storage.db.fetchone("SELECT width, height, encoding, data FROM terrain_raster")
    assert row is not None
    width, height, encoding, data = row
    assert (width, height, encoding) == (300, 200, RASTER_ENCODING)
    assert zlib.decompress(data) == raster.codes


async def test_a_smooth_map_is_stored_much_smaller_than_a_byte_per_cell(
    storage: Storage,
) -> None:
    codes = bytearray(300 * 200)
    for y in range(200):  # horizontal bands, like a real map's large patches
        codes[y * 300 : (y + 1) * 300] = bytes([y // 30]) * 300
    raster = TerrainRaster(300, 200, bytes(codes))
    await storage.world.save_terrain(raster)
    (size,) = await storage.db.fetchone("SELECT length(data) FROM terrain_raster")
    assert size < len(codes) // 20
    assert await storage.world.get_terrain() == raster


async def test_saving_again_replaces_the_raster(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    await storage.world.save_terrain(random_raster(300, 200, seed=1))
    smaller = random_raster(40, 70, seed=2)
    await storage.world.save_terrain(smaller)

    assert await storage.world.get_terrain() == smaller
    assert await storage.db.fetchall("SELECT id, width, height FROM terrain_raster") == [
        (1, 40, 70)
    ]
    async with reopen() as other:
        assert await other.world.get_terrain() == smaller


async def test_terrain_and_the_sparse_cells_live_side_by_side(storage: Storage) -> None:
    raster = TerrainRaster(2, 1, bytes([3, 0]))
    await storage.world.save_world_state(WorldState(2, 1, seed=5))
    await storage.world.save_terrain(raster)
    assert await storage.world.count_cells() == 0  # the raster adds no cell rows
    loaded = await storage.world.get_terrain()
    assert loaded is not None and loaded.terrain_at(Position(1, 0)) is Terrain.WATER


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"\x00\x01 not zlib at all", id="not-zlib"),
        pytest.param(zlib.compress(bytes(10)), id="wrong-length"),
        pytest.param(zlib.compress(bytes([9]) * (300 * 200)), id="unknown-terrain-code"),
        pytest.param(zlib.compress(bytes(300 * 200))[:-8], id="truncated"),
    ],
)
async def test_a_damaged_blob_raises_corrupt_database_error(
    storage: Storage, garbage: bytes
) -> None:
    await storage.world.save_terrain(random_raster(300, 200, seed=3))
    tamper(storage.db_path, "UPDATE terrain_raster SET data = ? WHERE id = 1", (garbage,))

    with pytest.raises(CorruptDatabaseError) as err:
        await storage.world.get_terrain()
    message = str(err.value)
    assert "damaged" in message
    assert str(storage.db_path) in message
    assert "\n" not in message


async def test_an_unknown_encoding_raises_corrupt_database_error(storage: Storage) -> None:
    await storage.world.save_terrain(random_raster(30, 20, seed=4))
    tamper(storage.db_path, "UPDATE terrain_raster SET encoding = 'lz4:u16' WHERE id = 1")

    with pytest.raises(CorruptDatabaseError) as err:
        await storage.world.get_terrain()
    assert "'lz4:u16'" in str(err.value)
    assert str(storage.db_path) in str(err.value)


async def test_a_failed_read_leaves_the_stored_row_alone(storage: Storage) -> None:
    await storage.world.save_terrain(random_raster(30, 20, seed=4))
    tamper(storage.db_path, "UPDATE terrain_raster SET encoding = 'future' WHERE id = 1")
    with pytest.raises(CorruptDatabaseError):
        await storage.world.get_terrain()
    assert await storage.db.fetchall("SELECT encoding FROM terrain_raster") == [("future",)]


# --- landmarks ---------------------------------------------------------------------------

SPRING = Landmark("spring", "Clearwater Spring", "Cold water bubbles up.", Position(4, 7))
OAK = Landmark("old_tree", "The Old Oak", "Older than anyone.", Position(10, 2))
CAIRN = Landmark("cairn", "Stone Cairn", "Someone piled these.", Position(4, 7))
STONES = Landmark("standing_stones", "The Ring", "Nine stones in a circle.", Position(0, 0))


async def test_landmarks_are_absent_in_a_new_world(storage: Storage) -> None:
    assert await storage.world.get_landmarks() == []
    assert await storage.world.count_landmarks() == 0
    assert await storage.world.get_landmarks_at(Position(4, 7)) == []


async def test_landmarks_round_trip_in_order(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    await storage.world.save_landmarks([OAK, SPRING, CAIRN])
    assert await storage.world.get_landmarks() == [OAK, SPRING, CAIRN]
    async with reopen() as other:
        assert await other.world.get_landmarks() == [OAK, SPRING, CAIRN]


async def test_saving_more_landmarks_appends_them(storage: Storage) -> None:
    await storage.world.save_landmarks([SPRING, OAK])
    await storage.world.save_landmarks([STONES])
    await storage.world.save_landmarks([])
    assert await storage.world.get_landmarks() == [SPRING, OAK, STONES]
    assert await storage.world.count_landmarks() == 3


async def test_landmarks_at_a_position(storage: Storage) -> None:
    await storage.world.save_landmarks([SPRING, OAK, CAIRN, STONES])
    assert await storage.world.get_landmarks_at(Position(4, 7)) == [SPRING, CAIRN]
    assert await storage.world.get_landmarks_at(Position(10, 2)) == [OAK]
    assert await storage.world.get_landmarks_at(Position(0, 0)) == [STONES]
    assert await storage.world.get_landmarks_at(Position(7, 4)) == []  # x and y swapped
    assert await storage.world.count_landmarks() == 4


async def test_landmark_text_is_kept_exactly(storage: Storage) -> None:
    odd = Landmark("well", "Brunnen „Alt“ — 'deep'", "Line one.\nLine two; 💧", Position(3, 3))
    await storage.world.save_landmarks([odd])
    assert await storage.world.get_landmarks() == [odd]


# --- an older file -------------------------------------------------------------------------


def make_v2_world(data_dir: Path) -> Path:
    """A file as schema v2 wrote it: a world row, no terrain raster or landmarks tables."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "world.db"
    conn = sqlite3.connect(db)
    for migration in MIGRATIONS[:2]:
        assert migration.version <= 2
        for statement in migration.statements:
            conn.execute(statement)
    conn.execute(
        "INSERT INTO world_state (id, width, height, seed, tick, weather, created_at) "
        "VALUES (1, 50, 40, 9, 33, 'cloudy', 'then')"
    )
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    return db


def table_names(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


async def test_a_v2_world_migrates_to_v3_with_empty_terrain_and_landmarks(
    tmp_path: Path,
) -> None:
    db = make_v2_world(tmp_path)
    assert not {"terrain_raster", "landmarks"} & table_names(db)
    assert LATEST_VERSION >= 3

    async with Storage(tmp_path) as storage:
        assert storage.db.migrated_from == 2
        assert await storage.db.user_version() == LATEST_VERSION
        assert await storage.world.get_world_state() == WorldState(50, 40, 9, 33, "cloudy")
        assert await storage.world.get_terrain() is None
        assert await storage.world.get_landmarks() == []
        assert await storage.world.count_landmarks() == 0
        assert await storage.db.fetchone("SELECT COUNT(*) FROM terrain_raster") == (0,)
        assert await storage.db.fetchone("SELECT COUNT(*) FROM landmarks") == (0,)
        # And the new tables work.
        raster = random_raster(50, 40, seed=6)
        await storage.world.save_terrain(raster)
        await storage.world.save_landmarks([SPRING])
        backup = storage.db.backup_path

    assert {"terrain_raster", "landmarks"} <= table_names(db)
    async with Storage(tmp_path) as again:
        assert again.db.migrated_from is None
        assert await again.world.get_terrain() == raster
        assert await again.world.get_landmarks() == [SPRING]
    # The backup taken before migrating is the v2 file, without the new tables.
    assert backup is not None and backup.exists()
    assert not {"terrain_raster", "landmarks"} & table_names(backup)


# --- cells are stored as changes over the raster -----------------------------------


async def test_a_cell_without_a_row_reads_as_its_generated_terrain(storage: Storage) -> None:
    forest = bytes([TERRAIN_ORDER.index(Terrain.FOREST)]) * 12
    await storage.world.save_terrain(TerrainRaster(4, 3, forest))
    assert await storage.world.get_cell(Position(2, 1)) == Cell(Terrain.FOREST)
    assert await storage.world.get_cell(Position(9, 9)) == Cell()  # off the raster


async def test_cells_equal_to_the_raster_are_not_stored_and_changes_are(
    storage: Storage,
) -> None:
    forest = bytes([TERRAIN_ORDER.index(Terrain.FOREST)]) * 12
    await storage.world.save_terrain(TerrainRaster(4, 3, forest))
    await storage.world.set_cells({
        Position(0, 0): Cell(Terrain.FOREST),  # same as the raster: no row
        Position(1, 0): Cell(Terrain.GRASS),  # forest cleared to grass: a real change
    })
    assert await storage.world.get_all_cells() == {Position(1, 0): Cell(Terrain.GRASS)}
    assert await storage.world.get_cell(Position(1, 0)) == Cell(Terrain.GRASS)
    # Writing the raster's own cell back removes the change again.
    await storage.world.set_cell(Position(1, 0), Cell(Terrain.FOREST))
    assert await storage.world.count_cells() == 0


async def test_replacing_the_raster_changes_what_a_missing_row_means(storage: Storage) -> None:
    code = TERRAIN_ORDER.index
    await storage.world.save_terrain(TerrainRaster(2, 1, bytes([code(Terrain.SAND)]) * 2))
    assert await storage.world.get_cell(Position(0, 0)) == Cell(Terrain.SAND)
    await storage.world.save_terrain(TerrainRaster(2, 1, bytes([code(Terrain.HILL)]) * 2))
    assert await storage.world.get_cell(Position(0, 0)) == Cell(Terrain.HILL)
