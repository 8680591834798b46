"""The running world: every service wired together, loaded from storage and written back.

    sim = await load_simulation(storage, config, homes=AgentHomes(agents_dir))
    result = await sim.engine.execute(AgentName("Ember"), WalkAction(Direction.NORTH), tick)
    async with storage.unit_of_work() as uow:
        await flush(sim, uow)
        await uow.commit()

Services hold the world in memory (actions take microseconds); `flush` writes
what the ChangeSet noted since the last flush, inside the caller's unit of
work, so a tick's changes land together or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from config import HearthConfig
from core.terrain import DEFAULT_TERRAIN, TERRAIN_CODE
from services.action_engine import ActionEngine, IdSource
from services.agent_service import AgentService
from services.changes import ChangeSet
from services.conversation_service import ConversationService
from services.crafting import CraftingService
from services.gathering import Gathering, Spent
from services.persistence import capture, write_capture
from services.world_service import Clock, TerrainRules, WorldService
from storage import Storage
from storage.homes import AgentHomes
from storage.unit_of_work import UnitOfWork


class NoWorldError(LookupError):
    """The database holds no world yet."""


@dataclass
class Simulation:
    world: WorldService
    agents: AgentService
    conversations: ConversationService
    crafting: CraftingService
    gathering: Gathering
    engine: ActionEngine

    @property
    def changes(self) -> ChangeSet:
        return self.world.changes


def build_simulation(
    world: WorldService,
    config: HearthConfig,
    agents: AgentService,
    *,
    conversations: ConversationService | None = None,
    gathering: Gathering | None = None,
    seed: int | None = None,
    ids: IdSource | None = None,
) -> Simulation:
    """Wire the services; `ids` is shared by everything that mints ids (the engine
    reseeds it per turn), so pass the one the conversations were given."""
    ids = ids or IdSource(seed)
    gathering = gathering or Gathering(
        capacity=config.settings.gathering.cell_capacity,
        per_gather=config.settings.gathering.yield_per_gather,
        regrow_ticks=config.settings.gathering.regrow_ticks,
    )
    conversations = conversations or ConversationService(agents, new_id=lambda: ids("conv"))
    crafting = CraftingService(config.recipes)
    engine = ActionEngine(
        world, agents, crafting, conversations,
        gathering=gathering, building=config.settings.building, ids=ids,
    )
    return Simulation(world, agents, conversations, crafting, gathering, engine)


def clock_of(config: HearthConfig) -> Clock:
    s = config.settings
    return Clock(s.time.ticks_per_day, s.time.start_hour, s.vision.radius)


async def load_simulation(
    storage: Storage, config: HearthConfig, *, homes: AgentHomes | None = None
) -> Simulation:
    state = await storage.world.get_world_state()
    if state is None:
        raise NoWorldError(f"{storage.db_path} holds no world yet")
    raster = await storage.world.get_terrain()
    if raster is None or (raster.width, raster.height) != (state.width, state.height):
        codes = np.full((state.height, state.width), TERRAIN_CODE[DEFAULT_TERRAIN], np.uint8)
    else:
        codes = np.frombuffer(raster.codes, dtype=np.uint8).reshape(state.height, state.width)
    world = WorldService(
        state, codes, TerrainRules.from_traits(config.terrain.terrains),
        clock=clock_of(config),
        cells=await storage.world.get_all_cells(),
        objects=await _all_objects(storage),
        places=await storage.world.get_all_named_places(),
        landmarks=await storage.world.get_landmarks(),
        structures=await storage.world.get_all_structures(),
        edge_materials=await storage.world.get_edge_materials(),
    )
    agents = AgentService(world, await storage.agents.get_all_agents(), homes=homes)
    active = await storage.conversations.get_active_conversations()
    turns = []
    for conv in active:
        turns += [t.turn for t in await storage.conversations.get_turns(conv.id)]
    ids = IdSource(state.seed + state.tick)
    conversations = ConversationService(
        agents, new_id=lambda: ids("conv"), conversations=active, turns=turns,
        invitations=await storage.conversations.get_pending_invitations(),
    )
    gathering = Gathering(
        capacity=config.settings.gathering.cell_capacity,
        per_gather=config.settings.gathering.yield_per_gather,
        regrow_ticks=config.settings.gathering.regrow_ticks,
        spent=[(pos, Spent(units, since)) for pos, units, since in
               await storage.world.get_spent()],
    )
    world.changes = ChangeSet()
    return build_simulation(
        world, config, agents, conversations=conversations, gathering=gathering, ids=ids,
    )


async def _all_objects(storage: Storage):
    state = await storage.world.get_world_state()
    assert state is not None
    return await storage.objects.get_objects_in(0, 0, state.width, state.height)


async def flush(sim: Simulation, uow: UnitOfWork) -> int:
    """Write everything noted in the world's own journal; returns how many rows were written.

    Call inside an open unit of work and commit after. Turns run by the engine
    keep their own journals (`services.changes.collecting`) and are written by its
    committer; this writes the rest (set-up, tick phases).
    """
    cap = capture(sim, sim.world.changes, sim.gathering.dirty)
    written = await write_capture(cap, uow)
    sim.gathering.dirty.clear()
    sim.world.changes = ChangeSet()
    return written
