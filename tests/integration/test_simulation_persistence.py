"""The in-memory world survives a flush and a reload: what agents did is what is stored."""

from __future__ import annotations

import numpy as np
import pytest

from config import HearthConfig, load_config
from core.actions import (
    AcceptInviteAction,
    BuildShelterAction,
    DropAction,
    GatherAction,
    InviteAction,
    NamePlaceAction,
    SpeakAction,
    WalkAction,
    WriteSignAction,
)
from core.agent import Inventory
from core.types import Direction
from services.simulation import Simulation, flush, load_simulation
from services.world_setup import plan_world, write_world
from storage import Storage


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


async def _reloaded(storage: Storage, sim: Simulation, config: HearthConfig) -> Simulation:
    async with storage.unit_of_work() as uow:
        await flush(sim, uow)
        await uow.commit()
    return await load_simulation(storage, config)


def _state(sim: Simulation) -> dict:
    world = sim.world
    return {
        "agents": sim.agents.get_all_agents(),
        "objects": sorted(world.all_objects(), key=lambda o: o.id),
        "places": sorted(world.all_places(), key=lambda p: p.key),
        "structures": sorted(world.all_structures(), key=lambda s: s.id),
        "walls": (world.wall_east.copy(), world.wall_south.copy(),
                  world.door_east.copy(), world.door_south.copy()),
        "materials": dict(world.edge_materials),
        "spent": dict(sim.gathering.spent_cells()),
        "conversations": sorted(sim.conversations.active_conversations(), key=lambda c: c.id),
        "tick": world.tick,
    }


def _same(a: dict, b: dict) -> None:
    for key in a:
        if key == "walls":
            assert all(np.array_equal(x, y) for x, y in zip(a[key], b[key], strict=True))
        else:
            assert a[key] == b[key], key


async def test_actions_survive_flush_and_reload(tmp_path, config) -> None:
    plan = plan_world(config, seed=11, size=(80, 80), agent_count=2)
    async with Storage(tmp_path) as storage:
        await write_world(storage, plan, config)
        sim = await load_simulation(storage, config)
        ember, sage = (a.name for a in plan.agents)
        # Give Ember materials, and bring Sage beside her so they can talk.
        sim.agents.set_inventory(ember, Inventory({"plank": 8, "wood": 2}))
        here = sim.agents.require(ember).position
        sim.agents.update_position(sage, here)
        engine = sim.engine
        done = [
            engine.execute_now(ember, GatherAction(), 1),
            engine.execute_now(ember, DropAction("wood", 1), 1),
            engine.execute_now(ember, WriteSignAction("Ember's corner"), 1),
            engine.execute_now(ember, NamePlaceAction("Ember's Corner"), 1),
            engine.execute_now(ember, BuildShelterAction(), 1),
            engine.execute_now(ember, InviteAction(sage), 1),
            engine.execute_now(sage, AcceptInviteAction(), 1),
            engine.execute_now(sage, SpeakAction("A fine hut."), 1),
        ]
        assert all(r.success for r in done), [r.message for r in done if not r.success]
        sim.world.set_tick(2)
        before = _state(sim)
        assert before["structures"] and before["materials"] and before["spent"]

        again = await _reloaded(storage, sim, config)
        _same(before, _state(again))
        turns = again.conversations.turns(before["conversations"][0].id)
        assert [t.message for t in turns] == ["A fine hut."]
        assert again.world.changes.empty


async def test_nothing_noted_means_nothing_written(tmp_path, config) -> None:
    plan = plan_world(config, seed=3, size=(40, 40), agent_count=1)
    async with Storage(tmp_path) as storage:
        await write_world(storage, plan, config)
        sim = await load_simulation(storage, config)
        async with storage.unit_of_work() as uow:
            assert await flush(sim, uow) == 0
            await uow.commit()


async def test_a_failed_walk_notes_nothing(tmp_path, config) -> None:
    plan = plan_world(config, seed=3, size=(40, 40), agent_count=1)
    async with Storage(tmp_path) as storage:
        await write_world(storage, plan, config)
        sim = await load_simulation(storage, config)
        name = plan.agents[0].name
        pos = sim.agents.require(name).position
        sim.world.place_wall(pos, Direction.NORTH) if sim.world.edge_inside(
            pos, Direction.NORTH) else None
        sim.world.changes.cells.clear()
        sim.world.changes.edges.clear()
        result = sim.engine.execute_now(name, WalkAction(Direction.NORTH), 1)
        assert not result.success
        assert sim.world.changes.empty


async def test_a_wall_is_reloaded_from_both_sides(tmp_path, config) -> None:
    plan = plan_world(config, seed=4, size=(40, 40), agent_count=1)
    async with Storage(tmp_path) as storage:
        await write_world(storage, plan, config)
        sim = await load_simulation(storage, config)
        pos = sim.agents.require(plan.agents[0].name).position
        sim.world.place_wall(pos, Direction.EAST, "plank", 2)
        again = await _reloaded(storage, sim, config)
        assert again.world.has_wall(pos, Direction.EAST)
        assert again.world.has_wall(pos.step(Direction.EAST), Direction.WEST)
        assert again.world.remove_wall(pos, Direction.EAST) == [("plank", 2)]
