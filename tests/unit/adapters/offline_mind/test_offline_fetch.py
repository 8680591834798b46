"""An agent with nothing to build with remembers where it saw wood or stone, and by its
second day goes there (or out on an expedition) rather than circling grass (issue 5:
every agent builds, also those who woke in grassland)."""

from __future__ import annotations

import pytest

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.memory import BUILT, GATHERED, Memory
from core.terrain import Terrain
from tests.unit.adapters.offline_mind.conftest import (
    PERSONALITIES,
    calls_of,
    cells_around,
    perceive,
    play,
    start,
)

pytestmark = pytest.mark.asyncio

AT = (50, 50)
GRASSLAND = Memory.of(origin=AT, anchor=AT, done=GATHERED)


def mind_with(memory: Memory) -> OfflineMind:
    mind = OfflineMind(3, {"Ember": PERSONALITIES["Ember"]})
    mind.set_state("Ember", memory.to_state())
    return mind


async def test_wood_seen_in_passing_is_remembered() -> None:
    mind = mind_with(GRASSLAND)
    cells = cells_around(AT, paint={(53, 52): Terrain.FOREST})
    await play(mind, start(perceive("Ember", 27, AT, cells=cells, day=2,
                                    inventory={"grass": 1})))
    assert mind.memory("Ember").stock == (53, 52)


async def test_on_the_first_day_it_does_not_look_out_for_material_yet() -> None:
    mind = mind_with(GRASSLAND)
    cells = cells_around(AT, paint={(53, 52): Terrain.FOREST})
    await play(mind, start(perceive("Ember", 3, AT, cells=cells, day=1,
                                    inventory={"grass": 1})))
    assert mind.memory("Ember").stock is None


async def test_a_builder_already_built_does_not_look_out_for_wood() -> None:
    mind = mind_with(GRASSLAND.replace(done=GATHERED | BUILT))
    cells = cells_around(AT, paint={(53, 52): Terrain.FOREST})
    await play(mind, start(perceive("Ember", 27, AT, cells=cells, day=2)))
    assert mind.memory("Ember").stock is None


async def test_on_day_two_it_heads_for_the_wood_it_saw() -> None:
    """Most daytime turns on grass, with wood remembered far to the east, go east."""
    stocked = GRASSLAND.replace(stock=(90, 50))
    east = 0
    for tick in range(25, 37):
        mind = mind_with(stocked)
        log = await play(mind, start(perceive("Ember", tick, AT, day=2,
                                              inventory={"grass": 1})))
        moves = [(n, a) for n, a in calls_of(log) if n in ("walk", "journey")]
        if moves:
            name, args = moves[0]
            east += (args["direction"] == "east" if name == "walk"
                     else args.get("destination", [0])[0] > AT[0])
    assert east >= 8
