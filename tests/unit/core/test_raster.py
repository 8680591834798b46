"""TerrainRaster: a whole world's base terrain as a byte per cell."""

from __future__ import annotations

import dataclasses

import pytest

from core.raster import TerrainRaster
from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import Position

# 3 wide, 2 high: every cell a different terrain, so a swapped x/y shows.
CODES = bytes([0, 1, 2, 3, 4, 5])


@pytest.fixture
def raster() -> TerrainRaster:
    return TerrainRaster(3, 2, CODES)


def test_terrain_at_reads_row_major(raster: TerrainRaster) -> None:
    assert raster.terrain_at(Position(0, 0)) is Terrain.WATER
    assert raster.terrain_at(Position(1, 0)) is Terrain.COAST
    assert raster.terrain_at(Position(2, 0)) is Terrain.SAND
    assert raster.terrain_at(Position(0, 1)) is Terrain.GRASS
    assert raster.terrain_at(Position(1, 1)) is Terrain.FOREST
    assert raster.terrain_at(Position(2, 1)) is Terrain.HILL


def test_terrain_at_uses_the_terrain_codes() -> None:
    codes = bytes(TERRAIN_CODE[t] for t in TERRAIN_ORDER)
    raster = TerrainRaster(len(codes), 1, codes)
    assert [raster.terrain_at(Position(x, 0)) for x in range(len(codes))] == list(TERRAIN_ORDER)


@pytest.mark.parametrize(
    ("pos", "inside"),
    [
        (Position(0, 0), True),
        (Position(2, 1), True),
        (Position(3, 0), False),
        (Position(0, 2), False),
        (Position(-1, 0), False),
        (Position(0, -1), False),
        (Position(3, 2), False),
    ],
)
def test_in_bounds(raster: TerrainRaster, pos: Position, inside: bool) -> None:
    assert raster.in_bounds(pos) is inside


@pytest.mark.parametrize("pos", [Position(3, 0), Position(0, 2), Position(-1, 0), Position(0, -1)])
def test_terrain_at_outside_raises_index_error(raster: TerrainRaster, pos: Position) -> None:
    with pytest.raises(IndexError, match="outside the 3x2 world"):
        raster.terrain_at(pos)


def test_negative_positions_do_not_wrap_around() -> None:
    # codes[-1] would quietly read the last cell; it must be refused instead.
    raster = TerrainRaster(2, 2, bytes([3, 3, 3, 6]))
    with pytest.raises(IndexError):
        raster.terrain_at(Position(-1, 0))


@pytest.mark.parametrize(("width", "height"), [(0, 5), (5, 0), (0, 0), (-1, 3), (3, -2)])
def test_a_raster_needs_a_positive_size(width: int, height: int) -> None:
    with pytest.raises(ValueError, match="positive size"):
        TerrainRaster(width, height, b"")


@pytest.mark.parametrize("length", [0, 5, 7, 12])
def test_the_codes_must_fill_the_raster_exactly(length: int) -> None:
    with pytest.raises(ValueError, match="needs 6 codes") as err:
        TerrainRaster(3, 2, bytes(length))
    assert f"got {length}" in str(err.value)


@pytest.mark.parametrize("bad", [7, 8, 200, 255])
def test_unknown_terrain_codes_are_refused(bad: int) -> None:
    with pytest.raises(ValueError, match=f"terrain code {bad} is unknown"):
        TerrainRaster(3, 2, bytes([0, 1, 2, bad, 4, 5]))


def test_every_known_code_is_accepted() -> None:
    codes = bytes(range(len(TERRAIN_ORDER)))
    assert TerrainRaster(len(codes), 1, codes).codes == codes


def test_shares_cover_every_kind_and_sum_to_one() -> None:
    raster = TerrainRaster(4, 2, bytes([3, 3, 3, 3, 0, 0, 4, 6]))
    shares = raster.shares()
    assert set(shares) == set(Terrain)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares[Terrain.GRASS] == 0.5
    assert shares[Terrain.WATER] == 0.25
    assert shares[Terrain.FOREST] == shares[Terrain.STONE] == 0.125
    assert shares[Terrain.COAST] == shares[Terrain.SAND] == shares[Terrain.HILL] == 0.0


def test_repr_is_short_even_for_a_big_raster() -> None:
    big = TerrainRaster(500, 400, bytes(200_000))
    assert repr(big) == "TerrainRaster(500x400)"
    assert len(repr(big)) < 40
    assert "TerrainRaster(3x2)" == repr(TerrainRaster(3, 2, CODES))


def test_a_raster_is_a_frozen_value(raster: TerrainRaster) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        raster.width = 4  # type: ignore[misc]
    assert raster == TerrainRaster(3, 2, bytes(CODES))
    assert raster != TerrainRaster(2, 3, CODES)
