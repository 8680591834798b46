"""PerceptionBuilder's output pinned byte for byte on a fixed, busy scenario.

The expected values in `data/perception_golden.json` were first written by the builder
as it was before its cell store was reworked for speed, and written afresh when the
text became lossless (issue 27: the map's key, the steps around, exact offsets), so
any rework must give every agent exactly what it gave (text and structure, through
the shared cell store and through the sliding window of a world too big to keep). To
write the file afresh after a deliberate change of output:

    python -m tests.unit.adapters.test_perception_golden --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import adapters.perception as perception_module
from adapters.perception import PerceptionBuilder
from config import load_config
from core.agent import Agent
from core.landmarks import Landmark
from core.objects import Item, PlacedItem, Sign
from core.places import NamedPlace
from core.structures import Structure
from core.terrain import TERRAIN_CODE, Terrain, Weather
from core.types import CARDINALS, AgentName, Position
from core.world import WorldState
from services.agent_service import AgentService
from services.simulation import build_simulation
from services.world_service import Clock, TerrainRules, WorldService

GOLDEN = Path(__file__).parent / "data" / "perception_golden.json"
SIDE = 36
STEPS = 18
"""Ticks 0-17: the default clock turns to night at tick 14 (22:00)."""
SHOWN = AgentName("A0")
"""Whose text=True views are kept whole in the file (the others as digests)."""


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:24]


def scenario(builder_for) -> Iterator[tuple[str, object]]:
    """(label, perception) for every build of a fixed run: agents walk (into walls and
    water), gather, talk and invite; terrain, weather, objects and places change."""
    config = load_config(None)
    rules = TerrainRules.from_traits(config.terrain.terrains)
    rng = np.random.default_rng(2024)
    terrains = list(Terrain)
    codes = rng.choice([TERRAIN_CODE[t] for t in terrains], size=(SIDE, SIDE)).astype(np.uint8)
    codes[rng.random((SIDE, SIDE)) < 0.5] = TERRAIN_CODE[Terrain.GRASS]
    marks = (
        Landmark("spring", "Old Spring", "a spring", Position(3, 4)),
        Landmark("tree", "Great Oak", "an oak", Position(30, 30)),
        Landmark("rock", "Grey Stone", "a stone", Position(18, 2)),
        Landmark("rock", "Black Stone", "a stone", Position(18, 34)),
    )
    world = WorldService(WorldState(SIDE, SIDE, 1), codes, rules, clock=Clock(),
                         landmarks=marks)
    spots = [Position(x, y) for y in range(2, SIDE - 2, 5) for x in range(2, SIDE - 2, 5)]
    names = [AgentName(f"A{i}") for i in range(9)]
    start = dict(zip(names, spots[::2], strict=False))
    start[names[1]] = Position(start[names[0]].x + 1, start[names[0]].y)  # talk
    start[names[3]] = Position(start[names[2]].x, start[names[2]].y + 1)  # invite
    start[names[8]] = Position(0, 0)  # in the corner: a clipped view
    for pos in start.values():
        world.set_terrain(pos, Terrain.GRASS)
    agents = AgentService(world, [Agent(n, "m", "p", p) for n, p in start.items()])
    sim = build_simulation(world, config, agents, seed=1)
    for i in range(40):
        pos = Position(int(rng.integers(SIDE - 1)), int(rng.integers(SIDE - 1)))
        way = CARDINALS[int(rng.integers(1, 3))]  # east or south: inside the map
        if not world.has_wall(pos, way):
            world.place_wall(pos, way)
            if i % 3 == 0:
                world.place_door(pos, way)
    here = start[names[0]]
    for dx, dy, way, door in ((0, 0, CARDINALS[1], True), (1, 1, CARDINALS[2], False),
                              (-1, -1, CARDINALS[1], False), (2, 0, CARDINALS[2], False),
                              (2, 1, CARDINALS[1], False), (0, 2, CARDINALS[1], True)):
        pos = Position(here.x + dx, here.y + dy)
        if not world.has_wall(pos, way):
            world.place_wall(pos, way)
            if door:
                world.place_door(pos, way)
    world.add_structure(Structure("hut", frozenset({start[names[4]]}), names[4], 0, "the Hut"))
    world.name_place(NamedPlace("Ash Corner", start[names[0]], names[0], 0))
    world.name_place(NamedPlace("Far Field", Position(start[names[0]].x, 1), names[0], 0))
    talk = sim.conversations
    talk.create_invite(names[0], names[1], "public", 0)
    talk.accept_invite(names[1], 0)
    talk.add_turn(names[0], "Hello there.\nLovely day.", 0)
    talk.create_invite(names[2], names[3], "private", 0)

    builders = builder_for(sim)
    for tick in range(STEPS):
        if tick:
            world.set_tick(tick)
        if tick == 5:
            world.set_weather(Weather.RAINY)
        if tick == 9:
            talk.add_turn(names[1], "Hi!", tick)
        for i in range(6):  # objects come and go
            pos = Position(int(rng.integers(SIDE)), int(rng.integers(SIDE)))
            if rng.random() < 0.5:
                world.add_object(Sign(f"s{tick}-{i}", pos, names[0], tick, "hello"))
            else:
                world.add_object(
                    PlacedItem(f"p{tick}-{i}", pos, None, tick, resource="wood", quantity=i + 1)
                    if i % 2 else
                    PlacedItem(f"p{tick}-{i}", pos, None, tick,
                               item=Item(f"i{tick}-{i}", "carved_bowl"))
                )
        if tick % 4 == 3 and world.all_objects():
            world.remove_object(world.all_objects()[0].id)
        for _ in range(25):  # gathering, some cells bare
            pos = Position(int(rng.integers(SIDE)), int(rng.integers(SIDE)))
            for _ in range(int(rng.integers(1, 6))):
                sim.gathering.take(pos, tick)
        if tick % 3 == 2:
            pos = Position(int(rng.integers(SIDE)), int(rng.integers(SIDE)))
            if not sim.agents.agents_at(pos):
                world.set_terrain(pos, terrains[int(rng.integers(len(terrains)))])
        for name in names:
            if name in (names[0], names[1]) and tick < 10:
                pass  # the talkers stay put a while
            elif rng.random() < 0.7:
                way = CARDINALS[int(rng.integers(4))]
                if sim.agents.step_blocker(sim.agents.require(name).position, way) is None:
                    sim.agents.move_agent(name, way)
            for label, builder in builders.items():
                for text in (False, True):
                    yield f"{label} {name} tick {tick} text={text}", \
                        builder.build(name, tick, text=text)


def _builders(sim) -> dict[str, PerceptionBuilder]:
    return {
        "kept": PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering),
        "near": PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering,
                                  horizon=12),
    }


def record() -> dict[str, object]:
    digests, shown = {}, {}
    for label, seen in scenario(_builders):
        digests[label] = _digest(seen)
        if label.startswith(f"kept {SHOWN} ") and label.endswith("text=True"):
            shown[label] = seen.as_text()  # type: ignore[attr-defined]
    return {"digests": digests, "text": shown}


@pytest.fixture(scope="module")
def golden() -> dict[str, dict[str, str]]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _check(golden, labelled) -> int:
    checked = 0
    for label, seen in labelled:
        key = label.replace("slid ", "kept ")
        if key in golden["text"]:
            assert seen.as_text() == golden["text"][key], label
        assert _digest(seen) == golden["digests"][key], f"{label}: {seen!r}"
        checked += 1
    return checked


def test_every_build_is_what_the_builder_always_gave(golden):
    assert _check(golden, scenario(_builders)) == len(golden["digests"])


def test_a_world_too_big_to_keep_gives_the_same(golden, monkeypatch):
    """The sliding windows of a world past the store's room give the same values."""
    monkeypatch.setattr(perception_module, "_CELL_CACHE_LIMIT", 100)

    def sliding(sim):
        return {"slid": PerceptionBuilder(sim.world, sim.agents, sim.conversations,
                                          sim.gathering)}

    assert _check(golden, scenario(sliding)) == len(golden["digests"]) // 2


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(record(), indent=1, ensure_ascii=False) + "\n",
                      encoding="utf-8")
