"""Cells, walls on edges, the sparse grid, and the world's clock and sky."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.terrain import DEFAULT_TERRAIN, Terrain, Weather
from core.types import CARDINALS, Direction, Position, Rect
from core.world import Cell, Grid, WorldState

N, S, E, W, DOWN = (
    Direction.NORTH,
    Direction.SOUTH,
    Direction.EAST,
    Direction.WEST,
    Direction.DOWN,
)
LAND = frozenset(t for t in Terrain if t is not Terrain.WATER)
EVERYTHING = frozenset(Terrain)


# --- Cell -----------------------------------------------------------------------


def test_default_cell() -> None:
    c = Cell()
    assert c.terrain is DEFAULT_TERRAIN is Terrain.GRASS
    assert c.walls == frozenset() and c.doors == frozenset()
    assert c.is_default


def test_is_default_needs_default_terrain_and_no_walls() -> None:
    assert not Cell(Terrain.FOREST).is_default
    assert not Cell(walls=frozenset({N})).is_default
    assert not Cell(walls=frozenset({N}), doors=frozenset({N})).is_default
    assert Cell(Terrain.FOREST).with_terrain(Terrain.GRASS).is_default
    assert Cell().with_wall(E).without_wall(E).is_default


def test_cell_coerces_strings() -> None:
    c = Cell("forest", walls=("North", "east"), doors={"NORTH"})  # type: ignore[arg-type]
    assert c.terrain is Terrain.FOREST
    assert c.walls == frozenset({N, E})
    assert c.doors == frozenset({N})
    assert isinstance(c.walls, frozenset) and isinstance(c.doors, frozenset)
    assert Cell("grass").is_default  # type: ignore[arg-type]


def test_door_needs_a_wall() -> None:
    with pytest.raises(ValueError, match="door needs a wall") as info:
        Cell(walls=frozenset({N}), doors=frozenset({N, S, W}))
    assert "south" in str(info.value) and "west" in str(info.value)
    assert "north" not in str(info.value).split("no wall on:")[1]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"walls": frozenset({DOWN})},
        {"walls": frozenset({DOWN, N})},
        {"walls": frozenset({DOWN}), "doors": frozenset({DOWN})},
    ],
)
def test_down_is_not_an_edge(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="not an edge"):
        Cell(**kwargs)


def test_cell_down_via_methods_rejected() -> None:
    with pytest.raises(ValueError, match="not an edge"):
        Cell().with_wall(DOWN)
    with pytest.raises(ValueError, match="not an edge"):
        Cell().with_door(DOWN)


def test_unknown_edge_name_rejected() -> None:
    with pytest.raises(ValueError, match="unknown direction"):
        Cell(walls=frozenset({"up"}))  # type: ignore[arg-type]


def test_blocks() -> None:
    c = Cell(walls=frozenset({N, E}), doors=frozenset({E}))
    assert c.blocks(N)
    assert not c.blocks(E)  # a door is a gap
    assert not c.blocks(S)
    assert not c.blocks(W)
    assert not c.blocks(DOWN)


def test_cell_edits_return_new_cells() -> None:
    c = Cell(Terrain.SAND)
    walled = c.with_wall(N)
    assert c.walls == frozenset() and walled.walls == frozenset({N})
    doored = walled.with_door(N)
    assert doored.doors == frozenset({N}) and walled.doors == frozenset()
    closed = doored.without_door(N)
    assert closed.walls == frozenset({N}) and closed.doors == frozenset()
    assert closed.blocks(N)
    # A door on a bare edge brings its wall with it.
    assert Cell().with_door(W) == Cell(walls=frozenset({W}), doors=frozenset({W}))
    # Removing a wall removes its door too.
    gone = doored.without_wall(N)
    assert gone.walls == frozenset() and gone.doors == frozenset()
    assert gone.terrain is Terrain.SAND
    assert c.with_terrain(Terrain.HILL).terrain is Terrain.HILL
    assert c.terrain is Terrain.SAND


def test_cell_is_frozen() -> None:
    c = Cell()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.terrain = Terrain.WATER  # type: ignore[misc]


# --- Grid -----------------------------------------------------------------------


@pytest.mark.parametrize(("w", "h"), [(0, 5), (5, 0), (-1, 3), (0, 0)])
def test_grid_size_must_be_positive(w: int, h: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        Grid(w, h)


def test_grid_bounds() -> None:
    g = Grid(4, 3)
    assert g.bounds == Rect(0, 0, 4, 3)
    assert g.in_bounds(Position(0, 0))
    assert g.in_bounds(Position(3, 2))
    for p in [Position(4, 0), Position(0, 3), Position(-1, 0), Position(0, -1)]:
        assert not g.in_bounds(p)


@pytest.mark.parametrize("pos", [Position(4, 0), Position(0, 3), Position(-1, 1), Position(1, -1)])
def test_out_of_bounds_errors(pos: Position) -> None:
    g = Grid(4, 3)
    with pytest.raises(ValueError, match="outside"):
        g.cell(pos)
    with pytest.raises(ValueError, match="outside"):
        g.terrain_at(pos)
    with pytest.raises(ValueError, match="outside"):
        g.with_cell(pos, Cell(Terrain.SAND))
    with pytest.raises(ValueError, match="outside"):
        g.with_terrain(pos, Terrain.SAND)
    with pytest.raises(ValueError, match="outside"):
        Grid(4, 3, {pos: Cell(Terrain.SAND)})


def test_unlisted_cells_are_default() -> None:
    g = Grid(3, 3)
    assert g.cell(Position(1, 1)) == Cell()
    assert g.terrain_at(Position(2, 2)) is DEFAULT_TERRAIN
    assert dict(g.cells) == {}


def test_default_cells_are_not_stored() -> None:
    g = Grid(3, 3, {Position(0, 0): Cell(), Position(1, 1): Cell(Terrain.STONE)})
    assert dict(g.cells) == {Position(1, 1): Cell(Terrain.STONE)}
    g2 = g.with_terrain(Position(1, 1), Terrain.GRASS)
    assert dict(g2.cells) == {}
    assert g2 == Grid(3, 3)


def test_grid_cells_cannot_be_mutated_through_the_mapping() -> None:
    source = {Position(0, 0): Cell(Terrain.SAND)}
    g = Grid(2, 2, source)
    source[Position(1, 1)] = Cell(Terrain.STONE)
    assert Position(1, 1) not in g.cells
    with pytest.raises(TypeError):
        g.cells[Position(1, 0)] = Cell(Terrain.HILL)  # type: ignore[index]


def test_grid_is_immutable() -> None:
    g = Grid(3, 3)
    p = Position(1, 1)
    g.with_terrain(p, Terrain.WATER)
    g.with_wall(p, N)
    g.with_door(p, E)
    g.with_cell(p, Cell(Terrain.HILL))
    assert g == Grid(3, 3)
    assert dict(g.cells) == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.width = 10  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.cells = {}  # type: ignore[misc]


def test_with_terrain() -> None:
    g = Grid(3, 3).with_wall(Position(0, 0), E)
    g2 = g.with_terrain(Position(0, 0), Terrain.FOREST)
    assert g2.terrain_at(Position(0, 0)) is Terrain.FOREST
    assert g2.cell(Position(0, 0)).walls == frozenset({E})  # walls survive
    assert g.terrain_at(Position(0, 0)) is Terrain.GRASS


def test_with_wall_records_both_sides() -> None:
    a, b = Position(1, 1), Position(1, 2)
    g = Grid(3, 3).with_wall(a, S)
    assert g.cell(a).walls == frozenset({S})
    assert g.cell(b).walls == frozenset({N})
    assert set(g.cells) == {a, b}
    assert g.edge_blocked(a, S)
    assert g.edge_blocked(b, N)
    # The same edge built from the other side is the same grid.
    assert Grid(3, 3).with_wall(b, N) == g


def test_without_wall_clears_both_sides_and_storage() -> None:
    a = Position(1, 1)
    g = Grid(3, 3).with_wall(a, E).with_wall(a, N)
    g2 = g.without_wall(Position(2, 1), W)
    assert g2.cell(a).walls == frozenset({N})
    assert g2.cell(Position(2, 1)) == Cell()
    assert Position(2, 1) not in g2.cells
    assert g2.without_wall(a, N) == Grid(3, 3)


def test_with_door_makes_a_walled_gap_on_both_sides() -> None:
    a, b = Position(0, 0), Position(1, 0)
    g = Grid(2, 2).with_door(a, E)
    assert g.cell(a) == Cell(walls=frozenset({E}), doors=frozenset({E}))
    assert g.cell(b) == Cell(walls=frozenset({W}), doors=frozenset({W}))
    assert not g.edge_blocked(a, E)
    # Removing the wall removes the door as well.
    assert g.without_wall(b, W) == Grid(2, 2)


@pytest.mark.parametrize(
    ("pos", "direction"),
    [
        (Position(0, 0), N),
        (Position(0, 0), W),
        (Position(2, 2), S),
        (Position(2, 2), E),
        (Position(1, 0), N),
        (Position(0, 1), W),
    ],
)
def test_walls_at_the_edge_of_the_world(pos: Position, direction: Direction) -> None:
    g = Grid(3, 3)
    for edit in (g.with_wall, g.without_wall, g.with_door, g.edge_blocked):
        with pytest.raises(ValueError, match="edge of the world"):
            edit(pos, direction)


def test_walls_from_outside_the_grid_rejected() -> None:
    g = Grid(3, 3)
    # (-1, 1) stepping east lands inside, but the start is outside.
    with pytest.raises(ValueError):
        g.with_wall(Position(-1, 1), E)
    with pytest.raises(ValueError):
        g.with_door(Position(3, 1), W)


@pytest.mark.parametrize("edit", ["with_wall", "without_wall", "with_door", "edge_blocked"])
def test_down_is_not_a_grid_edge(edit: str) -> None:
    with pytest.raises(ValueError, match="north, south, east or west"):
        getattr(Grid(3, 3), edit)(Position(1, 1), DOWN)


def test_can_step_open_ground() -> None:
    g = Grid(3, 3)
    centre = Position(1, 1)
    for d in CARDINALS:
        assert g.can_step(centre, d, EVERYTHING)
    assert not g.can_step(centre, DOWN, EVERYTHING)


def test_can_step_not_off_the_world() -> None:
    g = Grid(3, 3)
    assert not g.can_step(Position(0, 0), N, EVERYTHING)
    assert not g.can_step(Position(0, 0), W, EVERYTHING)
    assert not g.can_step(Position(2, 2), S, EVERYTHING)
    assert not g.can_step(Position(2, 2), E, EVERYTHING)
    assert not g.can_step(Position(5, 5), N, EVERYTHING)
    assert not g.can_step(Position(-1, 0), E, EVERYTHING)


def test_can_step_blocked_by_walls_in_both_directions() -> None:
    a, b = Position(1, 1), Position(2, 1)
    g = Grid(3, 3).with_wall(a, E)
    assert not g.can_step(a, E, EVERYTHING)
    assert not g.can_step(b, W, EVERYTHING)
    # Other edges of the same cells stay open.
    assert g.can_step(a, N, EVERYTHING)
    assert g.can_step(b, S, EVERYTHING)


def test_can_step_through_doors() -> None:
    a, b = Position(1, 1), Position(2, 1)
    g = Grid(3, 3).with_door(a, E)
    assert g.can_step(a, E, EVERYTHING)
    assert g.can_step(b, W, EVERYTHING)
    closed = g.with_cell(a, g.cell(a).without_door(E)).with_cell(b, g.cell(b).without_door(W))
    assert not closed.can_step(a, E, EVERYTHING)
    assert not closed.can_step(b, W, EVERYTHING)


def test_a_wall_on_one_side_only_still_blocks() -> None:
    """edge_blocked checks both cells, so a half-recorded wall still stops movement."""
    a, b = Position(0, 0), Position(1, 0)
    g = Grid(2, 1).with_cell(a, Cell(walls=frozenset({E})))
    assert not g.can_step(a, E, EVERYTHING)
    assert not g.can_step(b, W, EVERYTHING)


def test_can_step_impassable_terrain() -> None:
    water = Position(1, 0)
    g = Grid(3, 1).with_terrain(water, Terrain.WATER)
    assert not g.can_step(Position(0, 0), E, LAND)
    assert not g.can_step(Position(2, 0), W, LAND)
    assert g.can_step(Position(0, 0), E, EVERYTHING)
    # Leaving impassable terrain is judged by the target only.
    assert g.can_step(water, E, LAND)
    assert not g.can_step(Position(0, 0), E, frozenset())


def test_neighbors_stay_in_bounds() -> None:
    g = Grid(3, 2)
    assert list(g.neighbors(Position(0, 0))) == [Position(1, 0), Position(0, 1)]
    assert set(g.neighbors(Position(1, 0))) == {Position(2, 0), Position(1, 1), Position(0, 0)}
    assert len(list(g.neighbors(Position(1, 1)))) == 3


# --- Grid property: every wall is one fact on two cells --------------------------

GW, GH = 4, 3
ops = st.lists(
    st.tuples(
        st.sampled_from(["with_wall", "without_wall", "with_door"]),
        st.integers(0, GW - 1),
        st.integers(0, GH - 1),
        st.sampled_from(CARDINALS),
    ),
    max_size=25,
)


def _edge(p: Position, d: Direction) -> frozenset[Position]:
    return frozenset({p, p.step(d)})


@settings(max_examples=80, deadline=None)
@given(ops)
def test_walls_stay_symmetric_under_any_edits(sequence: list) -> None:
    grid = Grid(GW, GH)
    model_walls: set[frozenset[Position]] = set()
    model_doors: set[frozenset[Position]] = set()
    for op, x, y, d in sequence:
        p = Position(x, y)
        before = grid
        if not grid.in_bounds(p.step(d)):
            with pytest.raises(ValueError):
                getattr(grid, op)(p, d)
            continue
        grid = getattr(grid, op)(p, d)
        assert grid is not before
        e = _edge(p, d)
        if op == "with_wall":
            model_walls.add(e)
        elif op == "without_wall":
            model_walls.discard(e)
            model_doors.discard(e)
        else:
            model_walls.add(e)
            model_doors.add(e)

    seen_walls: set[frozenset[Position]] = set()
    seen_doors: set[frozenset[Position]] = set()
    for p in grid.bounds.positions():
        cell = grid.cell(p)
        assert cell.doors <= cell.walls
        for d in CARDINALS:
            q = p.step(d)
            if not grid.in_bounds(q):
                assert d not in cell.walls
                continue
            other = grid.cell(q)
            assert (d in cell.walls) == (d.opposite in other.walls), (p, d)
            assert (d in cell.doors) == (d.opposite in other.doors), (p, d)
            assert grid.edge_blocked(p, d) == (d in cell.walls and d not in cell.doors)
            if d in cell.walls:
                seen_walls.add(_edge(p, d))
            if d in cell.doors:
                seen_doors.add(_edge(p, d))
    assert seen_walls == model_walls
    assert seen_doors == model_doors
    for pos, cell in grid.cells.items():
        assert not cell.is_default, pos
        assert grid.in_bounds(pos)
    assert set(grid.cells) == {p for e in model_walls for p in e}


terrains = st.sampled_from(list(Terrain))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, GW - 1), st.integers(0, GH - 1), terrains), max_size=15))
def test_terrain_edits_never_store_default_cells(edits: list) -> None:
    grid = Grid(GW, GH)
    model: dict[Position, Terrain] = {}
    for x, y, t in edits:
        grid = grid.with_terrain(Position(x, y), t)
        model[Position(x, y)] = t
    for pos in grid.bounds.positions():
        assert grid.terrain_at(pos) is model.get(pos, DEFAULT_TERRAIN)
    assert set(grid.cells) == {p for p, t in model.items() if t is not DEFAULT_TERRAIN}


# --- WorldState -----------------------------------------------------------------


def test_world_state_defaults_and_validation() -> None:
    ws = WorldState(10, 8, seed=42)
    assert (ws.tick, ws.weather) == (0, Weather.CLEAR)
    with pytest.raises(ValueError, match="positive"):
        WorldState(0, 8, seed=1)
    with pytest.raises(ValueError, match="positive"):
        WorldState(8, -1, seed=1)
    with pytest.raises(ValueError, match="tick"):
        WorldState(8, 8, seed=1, tick=-1)
    with pytest.raises(ValueError):
        WorldState(8, 8, seed=1, weather="snowy")  # type: ignore[arg-type]


def test_world_state_advanced_and_weather() -> None:
    ws = WorldState(10, 8, seed=42, tick=5, weather="rainy")  # type: ignore[arg-type]
    assert ws.weather is Weather.RAINY
    nxt = ws.advanced()
    assert nxt == WorldState(10, 8, 42, 6, Weather.RAINY)
    assert ws.tick == 5
    foggy = ws.with_weather(Weather.FOGGY)
    assert foggy == WorldState(10, 8, 42, 5, Weather.FOGGY)
    assert ws.weather is Weather.RAINY
    assert ws.with_weather("clear").weather is Weather.CLEAR  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ws.tick = 9  # type: ignore[misc]


def test_grids_are_hashable_by_value() -> None:
    a = Grid(5, 5).with_wall(Position(1, 1), Direction.NORTH)
    b = Grid(5, 5).with_wall(Position(1, 1), Direction.NORTH)
    assert hash(a) == hash(b)
    assert len({a, b, Grid(5, 5)}) == 2
