"""The kept path grid: mended cell by cell after each change, it must stay exactly what
a grid made afresh from the world would be."""

from __future__ import annotations

import random

import numpy as np
import pytest

from config import load_config
from core.terrain import TERRAIN_CODE, Terrain
from core.types import CARDINALS, Position
from core.world import WorldState
from services import path_grid
from services.pathfinding import find_path, move_masks
from services.world_cells import WorldRuleError
from services.world_service import Clock, TerrainRules, WorldService

RULES = TerrainRules.from_traits(load_config(None).terrain.terrains)


def new_world(size: int = 24) -> WorldService:
    codes = np.full((size, size), TERRAIN_CODE[Terrain.GRASS], np.uint8)
    return WorldService(WorldState(size, size, 1), codes, RULES, clock=Clock(vision_radius=3))


def fresh(world: WorldService) -> tuple[np.ndarray, np.ndarray, bytes]:
    blocked_east = world.wall_east & ~world.door_east
    blocked_south = world.wall_south & ~world.door_south
    return blocked_east, blocked_south, move_masks(world.passable, blocked_east, blocked_south)


def assert_like_fresh(world: WorldService) -> None:
    passable, blocked_east, blocked_south, masks = world.path_grid()
    want_east, want_south, want_masks = fresh(world)
    assert np.array_equal(passable, world.passable)
    assert np.array_equal(blocked_east, want_east)
    assert np.array_equal(blocked_south, want_south)
    assert bytes(masks) == want_masks


def random_change(world: WorldService, rng: random.Random) -> None:
    """One wall, door or terrain change somewhere (a refused one changes nothing)."""
    size = world.width
    pos = Position(rng.randrange(size), rng.randrange(size))
    direction = rng.choice(CARDINALS)
    what = rng.random()
    try:
        if what < 0.4:
            world.place_wall(pos, direction)
        elif what < 0.6:
            world.place_door(pos, direction)
        elif what < 0.8:
            world.remove_wall(pos, direction)
        else:
            world.set_terrain(pos, rng.choice(list(Terrain)))
    except WorldRuleError:
        pass


@pytest.mark.parametrize("seed", range(6))
def test_a_mended_grid_is_the_grid_made_afresh(seed: int) -> None:
    rng = random.Random(seed)
    world = new_world()
    assert_like_fresh(world)
    for _ in range(60):
        for _ in range(rng.choice([1, 1, 2, 5, 20])):
            random_change(world, rng)
        assert_like_fresh(world)


def test_paths_planned_between_changes_follow_the_world() -> None:
    world = new_world(12)
    start, goal = Position(2, 5), Position(3, 5)
    assert find_path(*world.path_grid()[:3], start, goal, masks=world.path_grid()[3]) == [goal]
    world.place_wall(start, CARDINALS[1])  # east: between start and goal
    grid = world.path_grid()
    assert len(find_path(*grid[:3], start, goal, masks=grid[3])) == 3
    world.set_terrain(Position(3, 4), Terrain.WATER)
    world.set_terrain(Position(3, 6), Terrain.WATER)
    grid = world.path_grid()
    path = find_path(*grid[:3], start, goal, masks=grid[3])
    assert len(path) == 7  # up two rows, across, and back down: both sides are water
    assert path == find_path(world.passable, *fresh(world)[:2], start, goal)


def test_more_changes_than_it_mends_make_it_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(path_grid, "MEND_LIMIT", 3)
    rng = random.Random(7)
    world = new_world()
    world.path_grid()
    for _ in range(40):
        random_change(world, rng)
    assert_like_fresh(world)


def test_what_it_hands_out_cannot_be_changed_by_the_caller() -> None:
    passable, blocked_east, blocked_south, masks = new_world().path_grid()
    for array in (passable, blocked_east, blocked_south):
        with pytest.raises(ValueError):
            array[0, 0] = True
    with pytest.raises(TypeError):
        masks[0] = 0
