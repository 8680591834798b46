"""The cell store behind PerceptionBuilder: cells made in bulk, slid windows, makers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from adapters.perception_cells import CellStore, _make_cells, _slide
from config import load_config
from core.perception import SeenCell
from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import Position
from core.world import WorldState
from services.world_service import Clock, TerrainRules, WorldService

RULES = TerrainRules.from_traits(load_config(None).terrain.terrains)


def world(width: int = 12, height: int = 9, seed: int = 3) -> WorldService:
    codes = np.random.default_rng(seed).choice(
        [TERRAIN_CODE[t] for t in Terrain], size=(height, width)).astype(np.uint8)
    return WorldService(WorldState(width, height, 1), codes, RULES, clock=Clock())


def expected(w: WorldService, x0: int, y0: int, x1: int, y1: int) -> list[SeenCell]:
    """The cells as the dataclass constructors make them, one by one."""
    return [
        SeenCell(Position(x, y), TERRAIN_ORDER[w.codes[y, x]], RULES.gather[w.codes[y, x]],
                 bool(w.passable[y, x]))
        for y in range(y0, y1) for x in range(x0, x1)
    ]


@pytest.mark.parametrize("window", [(0, 0, 12, 1), (3, 2, 4, 9), (2, 1, 9, 8), (5, 5, 6, 6)])
def test_cells_made_in_bulk_are_what_the_constructors_make(window):
    w = world()
    made = _make_cells(w, *window)
    assert made == expected(w, *window)
    assert all(type(c) is SeenCell and type(c.position) is Position for c in made)
    assert all(type(c.passable) is bool for c in made)
    assert {hash(c) for c in made} == {hash(c) for c in expected(w, *window)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].passable = False  # type: ignore[misc]


@pytest.mark.parametrize("move", [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-2, 3), (6, 0)])
def test_a_slid_window_reuses_what_it_shares_and_makes_the_rest(move):
    w = world(20, 20)
    last = (5, 5, 12, 12)
    old = tuple(_make_cells(w, *last))
    dx, dy = move
    now = (5 + dx, 5 + dy, 12 + dx, 12 + dy)
    slid = _slide(w, last, old, *now)
    assert list(slid) == expected(w, *now)
    shared = {id(c) for c in old}
    kept = [c for c in slid if id(c) in shared]
    assert len(kept) == max(0, 7 - abs(dx)) * max(0, 7 - abs(dy))  # reused, not remade


def test_a_world_that_fits_is_kept_whole_and_a_terrain_change_remakes_its_square():
    w = world(40, 30)
    store = CellStore(limit=40 * 30)
    store.sync(w)
    assert store.whole
    first = store.window(w, None, (), 10, 10, 17, 17)
    assert list(first) == expected(w, 10, 10, 17, 17)
    assert store.window(w, None, (), 10, 10, 17, 17)[0] is first[0]  # kept, not remade
    w.set_terrain(Position(12, 12), Terrain.WATER)
    assert store.stale(w)
    store.sync(w)
    again = store.window(w, None, (), 10, 10, 17, 17)
    assert list(again) == expected(w, 10, 10, 17, 17)
    assert again[2 * 7 + 2].terrain is Terrain.WATER
    assert again[-1] is first[-1]  # (16, 16), in another square: still the kept cell
    small = CellStore(limit=40 * 30 - 1)
    small.sync(w)
    assert not small.whole


def test_a_big_world_keeps_the_windows_a_terrain_change_did_not_touch():
    w = world(60, 40)
    store = CellStore(limit=100)  # too small to keep this world whole
    store.sync(w)
    assert not store.whole
    before = store.key
    near_box, far_box = (10, 10, 17, 17), (40, 25, 47, 32)
    near = store.window(w, None, (), *near_box)
    far = store.window(w, None, (), *far_box)
    w.set_terrain(Position(12, 12), Terrain.WATER)  # in the square (0, 0)-(16, 16)
    store.sync(w)
    assert store.key is not before
    assert store.reusable(w, before, near_box) is None
    assert store.reusable(w, before, far_box) == far_box
    assert store.reusable(w, store.key, near_box) == near_box  # made under this key
    assert store.window(w, store.reusable(w, before, far_box), far, *far_box) is far
    remade = store.window(w, store.reusable(w, before, near_box), near, *near_box)
    assert list(remade) == expected(w, *near_box)
    assert remade[2 * 7 + 2].terrain is Terrain.WATER
    # Windows from another world, or from before new terrain rules, are never reused.
    other = world(60, 40, seed=4)
    store.sync(other)
    assert store.reusable(other, before, far_box) is None
