"""The offline mind reads the walls and doors in its perception: it never asks for a
step that a wall without a door blocks, and steps through a door."""

from __future__ import annotations

import dataclasses

import pytest

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.basics import DELTA
from core.perception import Perception
from tests.unit.adapters.offline_mind.conftest import (
    PERSONALITIES,
    calls_of,
    perceive,
    play,
    start,
)

AT = (50, 50)


def _crossed(x: int, y: int, direction: str) -> tuple[int, int, str]:
    """The edge (as the world keys it) a step from (x, y) in `direction` crosses."""
    dx, dy = DELTA[direction]
    if dx:
        return (x if dx > 0 else x - 1, y, "e")
    return (x, y if dy > 0 else y - 1, "s")


def _walled(perception: Perception, walls: set, doors: set = frozenset()) -> Perception:
    return dataclasses.replace(perception, walls=tuple(sorted(walls)),
                               doors=tuple(sorted(doors)))


async def _walks(perception: Perception, seeds: range) -> list[tuple[str, int]]:
    """(direction, steps) of every walk asked for, over a turn for each seed."""
    walks = []
    for seed in seeds:
        mind = OfflineMind(seed, PERSONALITIES)
        for name, args in calls_of(await play(mind, start(perception))):
            if name == "walk":
                walks.append((args["direction"], args.get("steps", 1)))
    return walks


def _blocked_on_the_way(walls: set, direction: str, steps: int) -> bool:
    x, y = AT
    dx, dy = DELTA[direction]
    for _ in range(steps):
        if _crossed(x, y, direction) in walls:
            return True
        x, y = x + dx, y + dy
    return False


@pytest.mark.parametrize("tick", [10, 40, 70])
async def test_no_walk_crosses_a_wall_in_view(tick):
    """A room of 3x3 round it, with a door north of the top middle cell: every walk
    stops short of the walls, and the only way out is through the door."""
    x, y = AT
    walls = set()
    for cy in (y - 1, y, y + 1):
        walls.add((x - 2, cy, "e"))  # west side
        walls.add((x + 1, cy, "e"))  # east side
    for cx in (x - 1, x, x + 1):
        walls.add((cx, y + 1, "s"))  # south side
        if cx != x:
            walls.add((cx, y - 2, "s"))  # north side, but for the door
    doors = {(x, y - 2, "s")}
    perception = _walled(perceive(tick=tick, at=AT), walls, doors)
    walks = await _walks(perception, range(40))
    assert walks, "nobody walked: the test shows nothing"
    assert [w for w in walks if _blocked_on_the_way(walls, *w)] == []


async def test_walls_a_few_steps_on_cut_the_walks_short():
    """A closed 5x5 room round it: every walk stops two steps on, at the wall (without
    the walls, some of the same walks go further)."""
    x, y = AT
    walls = set()
    for c in range(-2, 3):
        walls |= {(x - 3, y + c, "e"), (x + 2, y + c, "e"),
                  (x + c, y - 3, "s"), (x + c, y + 2, "s")}
    open_walks = await _walks(perceive(at=AT), range(40))
    assert [w for w in open_walks if _blocked_on_the_way(walls, *w)] != []
    walks = await _walks(_walled(perceive(at=AT), walls), range(40))
    assert walks
    assert [w for w in walks if _blocked_on_the_way(walls, *w)] == []
    assert max(steps for _, steps in walks) == 2
