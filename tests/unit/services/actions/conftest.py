"""A small hand-painted world for the ActionEngine tests, and a way to prove nothing changed.

The map is 20x20, grass unless painted otherwise (x grows east, y grows south):

    forest  x 2..5,   y 2..5        stone  x 14..17, y 2..5
    sand    x 2..5,   y 14..17      hill   x 15..17, y 9..11
    coast   x 8..13,  y 13..18 (a ring around the lake)
    water   x 9..12,  y 14..17
    the Spring (a landmark) at (6, 10)

Agents (tick 0 is 08:00, so everyone sees 3 cells):

    Ash   (8, 8)    carries a little of everything, a carved bowl and a stone axe
    Birch (9, 8)    right beside Ash (east)
    Cedar (10, 10)  within Ash's sight, not beside
    Dusk  (18, 18)  far from everyone
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from config import load_config
from core.actions import (
    AcceptInviteAction,
    Action,
    ActionResult,
    ApplyAction,
    ApproachAction,
    BuildShelterAction,
    CombineAction,
    DeclineInviteAction,
    DropAction,
    ExamineAction,
    GatherAction,
    GiveAction,
    InviteAction,
    JoinConversationAction,
    JourneyAction,
    LeaveConversationAction,
    NamePlaceAction,
    PlaceDoorAction,
    PlaceItemAction,
    PlaceWallAction,
    ReadSignAction,
    RemoveWallAction,
    SenseOthersAction,
    SleepAction,
    SpeakAction,
    TakeAction,
    WalkAction,
    WorkAction,
    WriteSignAction,
)
from core.agent import Agent, Inventory
from core.landmarks import Landmark
from core.objects import Item
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Direction, Position
from core.world import WorldState
from services.agent_service import AgentService
from services.changes import ChangeSet
from services.simulation import Simulation, build_simulation
from services.world_service import Clock, TerrainRules, WorldService
from tests.tool_calls import call_tool

CONFIG = load_config(None)
RULES = TerrainRules.from_traits(CONFIG.terrain.terrains)
BUILDING = CONFIG.settings.building
GATHERING = CONFIG.settings.gathering

WATER, COAST, SAND, GRASS, FOREST, HILL, STONE = (
    TERRAIN_CODE[t] for t in (
        Terrain.WATER, Terrain.COAST, Terrain.SAND, Terrain.GRASS, Terrain.FOREST,
        Terrain.HILL, Terrain.STONE,
    )
)

ASH, BIRCH, CEDAR, DUSK = (AgentName(n) for n in ("Ash", "Birch", "Cedar", "Dusk"))
START = {
    ASH: Position(8, 8),
    BIRCH: Position(9, 8),
    CEDAR: Position(10, 10),
    DUSK: Position(18, 18),
}
SPRING = Landmark("spring", "the Spring", "Clear water wells up between mossy stones.\n",
                  Position(6, 10))

FOREST_CELL = Position(3, 3)
STONE_CELL = Position(15, 3)
SAND_CELL = Position(3, 15)
GRASS_CELL = Position(8, 8)
HILL_CELL = Position(16, 10)
COAST_CELL = Position(9, 13)
WATER_CELL = Position(9, 14)

SAMPLE_ACTIONS: dict[str, Action] = {
    action.name: action
    for action in (
        WalkAction(Direction.NORTH),
        ApproachAction("Cedar"),
        JourneyAction(Position(8, 1)),
        ExamineAction(),
        SenseOthersAction(),
        TakeAction(),
        DropAction("wood"),
        GiveAction(BIRCH, "wood"),
        GatherAction(),
        CombineAction(("clay", "grass")),
        WorkAction("wood", "split"),
        ApplyAction("stone_axe", "wood"),
        BuildShelterAction(),
        PlaceWallAction(Direction.NORTH),
        PlaceDoorAction(Direction.NORTH),
        PlaceItemAction("wood"),
        RemoveWallAction(Direction.NORTH),
        WriteSignAction("hello"),
        ReadSignAction(),
        NamePlaceAction("Ash Corner"),
        SleepAction(),
        SpeakAction("hello"),
        InviteAction(BIRCH),
        AcceptInviteAction(),
        DeclineInviteAction(),
        JoinConversationAction(BIRCH),
        LeaveConversationAction(),
    )
}
"""One action of every kind, for Ash, most of which would work at the start."""

BOWL = Item("bowl-1", "carved_bowl", ("wooden", "container"))
AXE = Item("axe-1", "stone_axe", ("tool", "cutting"))


def paint() -> np.ndarray:
    codes = np.full((20, 20), GRASS, dtype=np.uint8)
    codes[2:6, 2:6] = FOREST
    codes[2:6, 14:18] = STONE
    codes[14:18, 2:6] = SAND
    codes[9:12, 15:18] = HILL
    codes[13:19, 8:14] = COAST
    codes[14:18, 9:13] = WATER
    return codes


def ash_inventory() -> Inventory:
    return Inventory(
        {"wood": 10, "plank": 8, "stone": 5, "clay": 3, "grass": 2},
        (BOWL, AXE),
    )


def make_sim() -> Simulation:
    world = WorldService(
        WorldState(20, 20, 1), paint(), RULES, clock=Clock(), landmarks=[SPRING]
    )
    agents = AgentService(world, [
        Agent(name=ASH, model_id="m", personality="p", position=START[ASH],
              inventory=ash_inventory()),
        Agent(name=BIRCH, model_id="m", personality="p", position=START[BIRCH],
              inventory=Inventory({"wood": 1})),
        Agent(name=CEDAR, model_id="m", personality="p", position=START[CEDAR]),
        Agent(name=DUSK, model_id="m", personality="p", position=START[DUSK],
              inventory=Inventory({"stone": 2})),
    ])
    return build_simulation(world, CONFIG, agents, seed=1)


@pytest.fixture
def sim() -> Simulation:
    return make_sim()


# ------------------------------------------------------------------ helpers


def snapshot(sim: Simulation) -> dict[str, Any]:
    """Everything an action could change, as plain comparable values (deep copies)."""
    world, conv = sim.world, sim.conversations
    arrays = {
        name: getattr(world, name).tobytes()
        for name in ("codes", "passable", "wall_east", "wall_south", "door_east", "door_south")
    }
    return {
        "state": world.state,
        "agents": sim.agents.get_all_agents(),
        "objects": sorted(world.all_objects(), key=lambda o: o.id),
        "places": sorted(world.all_places(), key=lambda p: p.key),
        "structures": sorted(world.all_structures(), key=lambda s: s.id),
        "arrays": arrays,
        "edge_materials": copy.deepcopy(world.edge_materials),
        "spent": dict(sim.gathering.spent_cells()),
        "gathering_dirty": set(sim.gathering.dirty),
        "conversations": copy.deepcopy(conv._conversations),
        "active": dict(conv._active),
        "turns": copy.deepcopy(conv._turns),
        "pending": dict(conv._pending),
        "admitted": dict(conv._admitted),
        "seen_from": dict(conv._seen_from),
        "last_spoke": dict(conv._last_spoke),
        "changes": copy.deepcopy(world.changes),
    }


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The snapshot keys that differ, for a readable assertion message."""
    return [key for key in before if before[key] != after[key]]


@contextmanager
def fresh_journal(sim: Simulation) -> Iterator[tuple[ChangeSet, set[Position]]]:
    """Run with an empty ChangeSet and gathering journal, as just after a flush.

    A key noted twice leaves a set as it was, so a refusal that notes something
    already noted would pass unseen; against an empty journal it cannot. The
    journal from before comes back afterwards.
    """
    saved = sim.world.changes, sim.gathering.dirty
    fresh: tuple[ChangeSet, set[Position]] = (ChangeSet(), set())
    sim.world.changes, sim.gathering.dirty = fresh
    try:
        yield fresh
    finally:
        sim.world.changes, sim.gathering.dirty = saved


def check_refusal(
    result: ActionResult, before: dict[str, Any], after: dict[str, Any],
    journal: tuple[ChangeSet, set[Position]], what: str,
) -> None:
    """A refusal: no events, nothing noted for storage, nothing different anywhere."""
    assert not result.success, result.message
    assert result.events == ()
    changes, dirty = journal
    assert changes.empty, f"a refused {what} noted {changes}: {result.message}"
    assert not dirty, f"a refused {what} noted spent cells {dirty}: {result.message}"
    changed = diff(before, after)
    assert not changed, f"a refused {what} changed {changed}: {result.message}"


def fails(sim: Simulation, name: str, action: Action, tick: int = 0) -> ActionResult:
    """Run an action that must fail; assert it changed nothing and return the result."""
    with fresh_journal(sim) as journal:
        before = snapshot(sim)
        result = sim.engine.execute_now(name, action, tick)
        after = snapshot(sim)
    check_refusal(result, before, after, journal, action.name)
    return result


async def fails_tool(
    sim: Simulation, name: str, tool: Any, arguments: Any, tick: int = 0
) -> ActionResult:
    """The same for a model's tool call."""
    with fresh_journal(sim) as journal:
        before = snapshot(sim)
        result = await call_tool(sim.engine, name, tool, arguments, tick)
        after = snapshot(sim)
    check_refusal(result, before, after, journal, f"{tool!r} call")
    return result


def succeeds(sim: Simulation, name: str, action: Action, tick: int = 0) -> ActionResult:
    result = sim.engine.execute_now(name, action, tick)
    assert result.success, result.message
    return result


def agent(sim: Simulation, name: str) -> Agent:
    found = sim.agents.get_agent(name)
    assert found is not None
    return found


def put(sim: Simulation, name: str, pos: Position) -> Agent:
    """Move an agent for a test's setup (not an action: no checks beyond standing room)."""
    return sim.agents.update_position(name, pos)


def give_stuff(sim: Simulation, name: str, **stacks: int) -> Agent:
    """Replace what an agent carries with exactly these stacks (and no items)."""
    return sim.agents.set_inventory(name, Inventory(stacks))
