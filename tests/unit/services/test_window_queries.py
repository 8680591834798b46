"""Window queries on the world and on gathering: what lies in x0 <= x < x1, y0 <= y < y1.

Each query answers exactly what asking cell by cell would (`objects_at`, `places_at`,
`spent_at`, `available`), in the same order, after any sequence of changes; the
indexes behind them are only a faster way to the same answer.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config import load_config
from core.objects import PlacedItem, Sign
from core.places import NamedPlace
from core.terrain import TERRAIN_CODE, Terrain
from core.types import Position
from core.world import WorldState
from services.gathering import SPENT_BUCKET, Gathering, Spent
from services.world_cells import WINDOW_BUCKET
from services.world_service import TerrainRules, WorldService

RULES = TerrainRules.from_traits(load_config(None).terrain.terrains)
SIZE = 2 * WINDOW_BUCKET + 5
"""Not a multiple of the bucket size, so the last squares are partial."""


def make_world(size: int = SIZE) -> WorldService:
    grass = np.full((size, size), TERRAIN_CODE[Terrain.GRASS], np.uint8)
    return WorldService(WorldState(size, size, 1), grass, RULES)


def cells_of(x0: int, y0: int, x1: int, y1: int) -> list[Position]:
    """The window's cells row by row (outside the map too: queries must not mind)."""
    return [Position(x, y) for y in range(y0, y1) for x in range(x0, x1)]


windows = st.tuples(
    st.integers(-3, SIZE), st.integers(-3, SIZE), st.integers(0, 2 * WINDOW_BUCKET + 3),
    st.integers(0, 2 * WINDOW_BUCKET + 3),
).map(lambda w: (w[0], w[1], w[0] + w[2], w[1] + w[3]))
"""(x0, y0, x1, y1), empty ones and ones hanging over the map's edge included."""

cells = st.tuples(st.integers(0, SIZE - 1), st.integers(0, SIZE - 1)).map(lambda c: Position(*c))


# ---------------------------------------------------------------------- objects


def test_objects_in_lists_a_window_row_by_row_and_one_cell_in_placing_order():
    world = make_world()
    here, east, south = Position(5, 5), Position(6, 5), Position(4, 6)
    pile = PlacedItem("p", here, None, 0, resource="wood", quantity=2)
    for obj in (Sign("s1", south, None, 0, "a"), pile, Sign("s2", east, None, 0, "b"),
                Sign("s3", here, None, 0, "c")):
        world.add_object(obj)
    assert [o.id for o in world.objects_in(4, 5, 7, 7)] == ["p", "s3", "s2", "s1"]
    assert [o.id for o in world.objects_in(5, 5, 6, 6)] == [o.id for o in world.objects_at(here)]
    assert world.objects_in(0, 0, 4, 5) == []
    assert world.objects_in(5, 5, 5, 9) == []  # an empty window


def test_objects_in_sees_a_replaced_object_as_it_is_now_and_forgets_a_removed_one():
    world = make_world()
    pile = PlacedItem("p", Position(3, 3), None, 0, resource="wood", quantity=2)
    world.add_object(pile)
    world.replace_object(dataclasses.replace(pile, quantity=7))
    assert [o.quantity for o in world.objects_in(0, 0, 8, 8)] == [7]
    world.remove_object("p")
    assert world.objects_in(0, 0, SIZE, SIZE) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "replace"]), cells,
                          st.integers(0, 30)), max_size=40),
       st.lists(windows, min_size=1, max_size=5))
def test_objects_in_answers_what_asking_every_cell_would(steps, queries):
    world = make_world()
    made = 0
    for what, pos, pick in steps:
        ids = sorted(o.id for o in world.all_objects())
        if what == "add":
            made += 1
            world.add_object(Sign(f"s{made}", pos, None, 0, "hi") if pick % 2 else
                             PlacedItem(f"p{made}", pos, None, 0, resource="wood", quantity=1))
        elif what == "remove" and ids:
            world.remove_object(ids[pick % len(ids)])
        elif what == "replace" and ids:
            obj = world.get_object(ids[pick % len(ids)])
            world.replace_object(dataclasses.replace(obj, created_tick=pick))
    for x0, y0, x1, y1 in queries:
        expected = [o for p in cells_of(x0, y0, x1, y1) for o in world.objects_at(p)]
        assert world.objects_in(x0, y0, x1, y1) == expected


# ---------------------------------------------------------------------- places


@settings(max_examples=40, deadline=None)
@given(st.lists(cells, max_size=25), st.lists(windows, min_size=1, max_size=5))
def test_places_in_answers_what_asking_every_cell_would(spots, queries):
    world = make_world()
    world.name_place(NamedPlace("the first", Position(1, 1), None, 0))  # before any query
    for i, pos in enumerate(spots):
        world.name_place(NamedPlace(f"place {i}", pos, None, i))
    for x0, y0, x1, y1 in queries:
        expected = [p for c in cells_of(x0, y0, x1, y1) for p in world.places_at(c)]
        assert sorted(world.places_in(x0, y0, x1, y1), key=lambda p: p.key) == sorted(
            expected, key=lambda p: p.key)


def test_places_named_when_the_world_was_made_are_found_too():
    grass = np.full((SIZE, SIZE), TERRAIN_CODE[Terrain.GRASS], np.uint8)
    well = NamedPlace("the well", Position(20, 3), None, 0)
    world = WorldService(WorldState(SIZE, SIZE, 1), grass, RULES, places=[well])
    assert world.places_in(18, 0, 25, 7) == [well]
    assert world.places_in(0, 0, 18, 7) == []


# ---------------------------------------------------------------------- terrain changes


def test_terrain_version_counts_changes_and_says_where_they_were():
    world = make_world()
    start = world.terrain_version
    assert world.terrain_changed_since(start) == []
    world.set_terrain(Position(3, 4), Terrain.FOREST)
    world.set_terrain(Position(SIZE - 1, SIZE - 1), Terrain.WATER)
    assert world.terrain_version == start + 2
    both = world.terrain_changed_since(start)
    assert any(x0 <= 3 < x1 and y0 <= 4 < y1 for x0, y0, x1, y1 in both)
    assert any(x0 <= SIZE - 1 < x1 and y0 <= SIZE - 1 < y1 for x0, y0, x1, y1 in both)
    assert all(0 <= x0 < x1 <= SIZE and 0 <= y0 < y1 <= SIZE for x0, y0, x1, y1 in both)
    # only what came after the version asked about
    later = world.terrain_changed_since(start + 1)
    assert len(later) == 1 and not any(x0 <= 3 < x1 and y0 <= 4 < y1 for x0, y0, x1, y1 in later)
    assert world.terrain_changed_since(world.terrain_version) == []


# ---------------------------------------------------------------------- gathering


def test_spent_in_lists_the_records_of_a_window_row_by_row():
    g = Gathering(capacity=3, regrow_ticks=10)
    for pos in (Position(5, 6), Position(2, 5), Position(4, 5)):
        g.take(pos, 1)
    assert [p for p, _ in g.spent_in(0, 0, 8, 8)] == [Position(2, 5), Position(4, 5),
                                                      Position(5, 6)]
    assert g.spent_in(0, 0, 8, 8)[0][1] == g.spent_at(Position(2, 5)) == Spent(1, 1)
    g.regrow(Position(4, 5))
    assert [p for p, _ in g.spent_in(0, 0, 8, 8)] == [Position(2, 5), Position(5, 6)]
    assert g.spent_in(0, 0, 2, 8) == []


def test_bare_in_lists_the_cells_with_nothing_left_until_they_grow_back():
    g = Gathering(capacity=2, per_gather=1, regrow_ticks=10)
    bare, tired = Position(3, 3), Position(4, 3)
    g.take(bare, 5)
    g.take(bare, 5)  # 2 of 2 taken: bare until one unit grows back, at tick 15
    g.take(tired, 5)  # 1 of 2: never bare
    assert g.bare_in(0, 0, 8, 8, 5) == [bare]
    assert g.bare_in(0, 0, 8, 8, 14) == [bare]
    assert g.bare_in(0, 0, 8, 8, 15) == []  # grown back (and dropped from the index)
    assert g.bare_in(0, 0, 8, 8, 6) == [bare]  # asking about the past still answers truly
    g.take(bare, 20)  # regrown to 2 by tick 25? no: 1 back at 15, so 1 left at 20
    assert g.bare_in(0, 0, 8, 8, 20) == [bare]
    g.regrow(bare)
    assert g.bare_in(0, 0, 8, 8, 20) == []


def test_bare_in_follows_a_changed_capacity():
    g = Gathering(capacity=3, regrow_ticks=10)
    g.take(Position(1, 1), 0)
    assert g.bare_in(0, 0, 4, 4, 0) == []
    g.capacity = 1
    assert g.bare_in(0, 0, 4, 4, 0) == [Position(1, 1)]


def test_records_loaded_at_start_are_indexed():
    g = Gathering(capacity=2, regrow_ticks=5, spent=[(Position(9, 9), Spent(2, 0)),
                                                     (Position(40, 2), Spent(1, 0))])
    assert g.bare_in(0, 0, SIZE, SIZE, 0) == [Position(9, 9)]
    assert [p for p, _ in g.spent_in(0, 0, 64, 64)] == [Position(40, 2), Position(9, 9)]


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 4), st.integers(1, 3), st.integers(1, 6),
    st.lists(st.tuples(st.sampled_from(["take", "take", "regrow", "wait", "ask"]), cells,
                       st.integers(0, 12), windows), max_size=60),
)
def test_spent_in_and_bare_in_answer_what_asking_every_cell_would(
    capacity, per_gather, regrow_ticks, steps,
):
    g = Gathering(capacity=capacity, per_gather=per_gather, regrow_ticks=regrow_ticks)
    tick = 0
    for what, pos, n, (x0, y0, x1, y1) in steps:
        if what == "take":
            g.take(pos, tick)
        elif what == "regrow":
            g.regrow(pos)
        elif what == "wait":
            tick += n
        else:
            when = max(0, tick - n) if n % 3 == 0 else tick  # now, or now and then the past
            window = cells_of(x0, y0, x1, y1)
            assert g.spent_in(x0, y0, x1, y1) == [
                (p, g.spent_at(p)) for p in window if g.spent_at(p) is not None
            ]
            assert g.bare_in(x0, y0, x1, y1, when) == [
                p for p in window if g.spent_at(p) is not None and g.available(p, when) <= 0
            ]


@pytest.mark.parametrize("x", [0, SPENT_BUCKET - 1, SPENT_BUCKET, 3 * SPENT_BUCKET + 1])
def test_a_window_across_square_edges_finds_every_cell(x):
    g = Gathering(capacity=1, regrow_ticks=100)
    spots = [Position(x + dx, y) for dx in (0, 1) for y in (SPENT_BUCKET - 1, SPENT_BUCKET)]
    for pos in spots:
        g.take(pos, 0)
    assert g.bare_in(x, SPENT_BUCKET - 1, x + 2, SPENT_BUCKET + 1, 0) == sorted(
        spots, key=lambda p: (p.y, p.x))
