"""WorldRepository against a real world.db: world state, sparse cells, places, structures."""

from __future__ import annotations

from collections.abc import Callable

from core.places import NamedPlace
from core.structures import Structure
from core.terrain import Terrain, Weather
from core.types import AgentName, Direction, Position, Rect
from core.world import Cell, WorldState
from storage import Storage

N, S, E, W = Direction.NORTH, Direction.SOUTH, Direction.EAST, Direction.WEST


# --- world state ----------------------------------------------------------------------


async def test_world_state_is_absent_in_a_new_world(storage: Storage) -> None:
    assert await storage.world.get_world_state() is None


async def test_world_state_round_trips_with_weather(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    state = WorldState(64, 48, seed=-123456789, tick=7, weather=Weather.FOGGY)
    await storage.world.save_world_state(state)

    assert await storage.world.get_world_state() == state
    async with reopen() as other:
        loaded = await other.world.get_world_state()
    assert loaded == state
    assert loaded is not None and loaded.weather is Weather.FOGGY


async def test_saving_again_updates_tick_and_weather_in_the_single_row(storage: Storage) -> None:
    state = WorldState(20, 10, seed=42)
    await storage.world.save_world_state(state)
    (created_at,) = await storage.db.fetchone("SELECT created_at FROM world_state")

    later = state.advanced().advanced().advanced().with_weather(Weather.RAINY)
    await storage.world.save_world_state(later)

    loaded = await storage.world.get_world_state()
    assert loaded == WorldState(20, 10, 42, tick=3, weather=Weather.RAINY)
    rows = await storage.db.fetchall("SELECT id, tick, weather, created_at FROM world_state")
    assert rows == [(1, 3, "rainy", created_at)]


# --- cells ------------------------------------------------------------------------------


async def test_missing_cell_reads_as_the_default_cell(storage: Storage) -> None:
    assert await storage.world.get_cell(Position(5, 5)) == Cell()
    assert await storage.world.count_cells() == 0


async def test_cell_with_terrain_walls_and_doors_round_trips(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    cell = Cell(Terrain.STONE, walls=frozenset({N, E, W}), doors=frozenset({E}))
    walled_grass = Cell(Terrain.GRASS, walls=frozenset({S}), doors=frozenset({S}))
    await storage.world.set_cell(Position(3, 4), cell)
    await storage.world.set_cell(Position(3, 5), walled_grass)

    assert await storage.world.get_cell(Position(3, 4)) == cell
    assert await storage.world.get_cell(Position(3, 5)) == walled_grass
    async with reopen() as other:
        assert await other.world.get_cell(Position(3, 4)) == cell
        assert await other.world.get_cell(Position(3, 5)) == walled_grass
        assert await other.world.count_cells() == 2


async def test_set_cell_overwrites_an_existing_cell(storage: Storage) -> None:
    pos = Position(1, 1)
    await storage.world.set_cell(pos, Cell(Terrain.FOREST, frozenset({N, S}), frozenset({N})))
    await storage.world.set_cell(pos, Cell(Terrain.SAND, frozenset({W})))

    assert await storage.world.get_cell(pos) == Cell(Terrain.SAND, frozenset({W}))
    assert await storage.world.count_cells() == 1


async def test_set_cells_writes_many_cells_in_one_call(storage: Storage) -> None:
    cells = {
        Position(x, y): Cell(Terrain.WATER if (x + y) % 2 else Terrain.HILL)
        for x in range(10)
        for y in range(7)
    }
    cells[Position(4, 4)] = Cell(Terrain.COAST, frozenset({N, S, E, W}), frozenset({N, W}))
    await storage.world.set_cells(cells)

    assert await storage.world.count_cells() == 70
    assert await storage.world.get_all_cells() == cells


async def test_writing_a_default_cell_deletes_its_row(storage: Storage) -> None:
    a, b, c = Position(0, 0), Position(1, 0), Position(2, 0)
    await storage.world.set_cells(
        {a: Cell(Terrain.SAND), b: Cell(Terrain.GRASS, frozenset({E})), c: Cell(Terrain.HILL)}
    )
    assert await storage.world.count_cells() == 3

    await storage.world.set_cell(a, Cell())
    # Removing the only wall of a grass cell makes it default again.
    await storage.world.set_cells({b: Cell(Terrain.GRASS), c: Cell(Terrain.STONE)})

    assert await storage.world.count_cells() == 1
    rows = await storage.db.fetchall("SELECT x, y, terrain FROM cells")
    assert rows == [(2, 0, "stone")]
    assert await storage.world.get_cell(a) == Cell()
    assert await storage.world.get_cell(b) == Cell()
    assert await storage.world.get_all_cells() == {c: Cell(Terrain.STONE)}


async def test_writing_a_default_cell_where_none_is_stored_is_harmless(storage: Storage) -> None:
    await storage.world.set_cells({Position(9, 9): Cell(), Position(8, 8): Cell(Terrain.HILL)})
    assert await storage.world.get_all_cells() == {Position(8, 8): Cell(Terrain.HILL)}


async def test_get_cells_in_respects_the_half_open_rectangle(storage: Storage) -> None:
    rect = Rect(2, 3, 4, 2)  # x in [2, 6), y in [3, 5)
    inside = {
        Position(2, 3): Cell(Terrain.WATER),
        Position(5, 3): Cell(Terrain.SAND, frozenset({N})),
        Position(2, 4): Cell(Terrain.FOREST),
        Position(5, 4): Cell(Terrain.HILL, frozenset({S, E}), frozenset({S})),
    }
    outside = {
        Position(1, 3): Cell(Terrain.STONE),
        Position(6, 3): Cell(Terrain.STONE),
        Position(2, 2): Cell(Terrain.STONE),
        Position(2, 5): Cell(Terrain.STONE),
        Position(6, 5): Cell(Terrain.STONE),
    }
    await storage.world.set_cells({**inside, **outside})

    assert await storage.world.get_cells_in(rect) == inside
    assert await storage.world.get_cells_in(Rect(0, 0, 0, 0)) == {}
    corner = Position(6, 5)
    assert await storage.world.get_cells_in(Rect(6, 5, 1, 1)) == {corner: outside[corner]}
    assert len(await storage.world.get_all_cells()) == 9


# --- named places -------------------------------------------------------------------------


async def test_named_place_round_trips_and_lookup_ignores_case_and_spaces(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    place = NamedPlace("  The   Old Oak ", Position(4, 9), AgentName("Ember"), tick=12)
    await storage.world.save_named_place(place)

    expected = NamedPlace("The Old Oak", Position(4, 9), AgentName("Ember"), 12)
    for query in ("The Old Oak", "the old oak", "  THE OLD\tOAK  ", "the  old   oak"):
        assert await storage.world.get_named_place(query) == expected
    assert await storage.world.get_named_place("old oak") is None
    async with reopen() as other:
        assert await other.world.get_named_place("tHe OlD oAk") == expected


async def test_named_place_without_namer_round_trips(storage: Storage) -> None:
    place = NamedPlace("Spawn", Position(0, 0), None, tick=0)
    await storage.world.save_named_place(place)
    assert await storage.world.get_named_place("spawn") == place


async def test_renaming_with_the_same_key_updates_the_one_row(storage: Storage) -> None:
    await storage.world.save_named_place(
        NamedPlace("River Bend", Position(1, 1), AgentName("Ash"), 3)
    )
    renamed = NamedPlace("RIVER bend", Position(7, 2), AgentName("Birch"), 8)
    await storage.world.save_named_place(renamed)

    assert await storage.world.get_named_place("river bend") == renamed
    assert await storage.world.get_all_named_places() == [renamed]
    assert await storage.world.get_places_at(Position(1, 1)) == []


async def test_places_at_a_position_and_all_places(storage: Storage) -> None:
    here = Position(5, 5)
    well = NamedPlace("Well", here, AgentName("Ash"), 10)
    square = NamedPlace("Market Square", here, AgentName("Birch"), 4)
    elsewhere = NamedPlace("Cave", Position(5, 6), None, 1)
    for place in (well, square, elsewhere):
        await storage.world.save_named_place(place)

    assert await storage.world.get_places_at(here) == [square, well]  # by tick
    assert await storage.world.get_places_at(Position(6, 5)) == []
    assert await storage.world.get_all_named_places() == [elsewhere, square, well]  # by key


async def test_deleting_a_named_place(storage: Storage) -> None:
    await storage.world.save_named_place(NamedPlace("Hearth Stone", Position(2, 2), None, 0))
    await storage.world.save_named_place(NamedPlace("Gate", Position(3, 2), None, 0))

    assert await storage.world.delete_named_place("  hearth STONE") is True
    assert await storage.world.delete_named_place("hearth stone") is False
    assert await storage.world.get_named_place("Hearth Stone") is None
    assert [p.name for p in await storage.world.get_all_named_places()] == ["Gate"]


# --- structures -----------------------------------------------------------------------------


def _l_shape() -> Structure:
    # ##.
    # #..   <- (1,1), (2,1) and (2,0) are not inside; the bounding box is 3x3
    # ###
    interior = {Position(10, 10), Position(11, 10), Position(10, 11)}
    interior |= {Position(10, 12), Position(11, 12), Position(12, 12)}
    return Structure(
        id="house-1",
        interior=frozenset(interior),
        created_by=AgentName("Ember"),
        created_tick=30,
        name="Ember's House",
        is_private=True,
    )


async def test_structure_round_trips_with_exact_interior(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    house = _l_shape()
    shed = Structure("shed", frozenset({Position(0, 0)}), None, 2)
    await storage.world.save_structure(house)
    await storage.world.save_structure(shed)

    loaded = await storage.world.get_structure("house-1")
    assert loaded == house
    assert loaded is not None
    assert loaded.interior == house.interior
    assert loaded.is_private is True and loaded.name == "Ember's House"
    assert await storage.world.get_structure("shed") == shed
    assert await storage.world.get_structure("nope") is None
    async with reopen() as other:
        assert await other.world.get_all_structures() == [shed, house]  # by created_tick


async def test_structures_at_only_returns_those_whose_interior_contains_the_point(
    storage: Storage,
) -> None:
    house = _l_shape()
    overlap = Structure("porch", frozenset({Position(11, 12), Position(11, 13)}), None, 31)
    await storage.world.save_structure(house)
    await storage.world.save_structure(overlap)

    assert await storage.world.get_structures_at(Position(10, 10)) == [house]
    # Inside the house's bounding box but not its interior:
    assert await storage.world.get_structures_at(Position(11, 11)) == []
    assert await storage.world.get_structures_at(Position(12, 10)) == []
    assert await storage.world.get_structures_at(Position(12, 11)) == []
    # Outside every box:
    assert await storage.world.get_structures_at(Position(9, 10)) == []
    assert await storage.world.get_structures_at(Position(11, 13)) == [overlap]
    found = await storage.world.get_structures_at(Position(11, 12))
    assert sorted(s.id for s in found) == ["house-1", "porch"]


async def test_saving_a_structure_again_updates_it(storage: Storage) -> None:
    house = _l_shape()
    await storage.world.save_structure(house)
    smaller = Structure(
        "house-1", frozenset({Position(20, 20), Position(21, 20)}), AgentName("Ash"), 40,
        name=None, is_private=False,
    )
    await storage.world.save_structure(smaller)

    assert await storage.world.get_structure("house-1") == smaller
    assert await storage.world.get_structures_at(Position(10, 10)) == []
    assert await storage.world.get_structures_at(Position(21, 20)) == [smaller]
    assert len(await storage.world.get_all_structures()) == 1


async def test_deleting_a_structure(storage: Storage) -> None:
    await storage.world.save_structure(_l_shape())
    assert await storage.world.delete_structure("house-1") is True
    assert await storage.world.delete_structure("house-1") is False
    assert await storage.world.get_structure("house-1") is None
    assert await storage.world.get_structures_at(Position(10, 10)) == []
