"""Creating a new world: terrain, landmarks, residents, their homes, one database.

Order of work: generate the terrain (WFC), find the ground everyone can reach,
put landmarks on fitting cells there, place the agents (on grass, spaced apart,
all in that one region), then write everything in a single unit of work, so a
world is either fully created or not at all. Home folders come last; they never
overwrite what an agent already wrote.

Every random choice derives from the world's seed: the same seed, size, config
and agent count give the same world.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from config import HearthConfig
from core.agent import Agent
from core.clock import time_of_day
from core.landmarks import Landmark
from core.raster import TerrainRaster
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Position
from core.world import WorldState
from generation import GeneratedTerrain, Tileset, generate
from generation.landmarks import place_landmarks
from generation.placement import PlacementError, find_agent_positions
from generation.regions import largest_region
from services.roster import Resident, roster
from storage import Storage
from storage.homes import AgentHomes

Progress = Callable[[str, float], None]


class WorldSetupError(Exception):
    """A world cannot be created as asked; the message says why and what to change."""


@dataclass(frozen=True)
class NewWorld:
    state: WorldState
    agents: tuple[Agent, ...]
    landmarks: tuple[Landmark, ...]
    terrain: GeneratedTerrain
    generated_agents: tuple[str, ...]
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time per stage: terrain, placement, database, homes."""


def pick_seed(configured: int | None, override: int | None) -> int:
    """The seed to record: the flag's, else the config's, else a fresh random one."""
    if override is not None:
        return override
    if configured is not None:
        return configured
    return random.SystemRandom().randrange(2**31)


def status_text(agent: Agent, state: WorldState, config: HearthConfig) -> str:
    """The .status file: where and when, never inventory (that is for the prompt)."""
    clock = config.settings.time
    when = time_of_day(state.tick, clock.ticks_per_day, clock.start_hour)
    return (
        "# Written by Hearth; changes here are overwritten.\n"
        f"name: {agent.name}\n"
        f"tick: {state.tick}\n"
        f"time: {when}\n"
        f"weather: {state.weather.value}\n"
        f"position: ({agent.position.x}, {agent.position.y})\n"
        f"asleep: {'yes' if agent.is_sleeping else 'no'}\n"
    )


def _agent(resident: Resident, position: Position) -> Agent:
    return Agent(
        name=AgentName(resident.name),
        model_id=resident.model_id,
        personality=resident.personality,
        position=position,
    )


def plan_world(
    config: HearthConfig,
    *,
    seed: int | None = None,
    size: tuple[int, int] | None = None,
    agent_count: int | None = None,
    progress: Progress | None = None,
) -> NewWorld:
    """Generate a world in memory: nothing is written, so a refusal loses nothing."""
    settings = config.settings
    width, height = size or (settings.world.width, settings.world.height)
    world_seed = pick_seed(settings.world.seed, seed)
    try:
        residents = roster(config.agents.agents, agent_count, world_seed)
    except ValueError as exc:
        raise WorldSetupError(str(exc)) from None
    seconds: dict[str, float] = {}

    started = time.perf_counter()
    tileset = Tileset.from_traits(config.terrain.terrains)
    terrain = generate(width, height, world_seed, tileset=tileset, progress=progress)
    seconds["terrain"] = time.perf_counter() - started

    started = time.perf_counter()
    if progress:
        progress("placing landmarks and agents", 1.0)
    codes = terrain.codes
    reachable = largest_region(tileset.passable[codes])
    rng = np.random.default_rng([world_seed, 1])
    landmarks = tuple(place_landmarks(codes, config.landmarks, rng, reachable=reachable))
    try:
        positions = find_agent_positions(
            reachable,
            codes == TERRAIN_CODE[Terrain.GRASS],
            len(residents),
            min_spacing=settings.placement.min_spacing,
            max_spacing=settings.placement.max_spacing,
            rng=rng,
            avoid=[m.position for m in landmarks],
            near=_gathering_place(landmarks, _building_ground(config, codes), width, height),
            near_radius=settings.scheduling.horizon,
        )
    except PlacementError as exc:
        raise WorldSetupError(str(exc)) from None
    agents = tuple(_agent(r, p) for r, p in zip(residents, positions, strict=True))
    seconds["placement"] = time.perf_counter() - started
    return NewWorld(
        state=WorldState(width, height, world_seed),
        agents=agents,
        landmarks=landmarks,
        terrain=terrain,
        generated_agents=tuple(r.name for r in residents if r.generated),
        seconds=seconds,
    )


MATERIAL_RADIUS = 20
"""Cells (in each direction) around the gathering landmark searched for building ground."""
MATERIAL_CELLS = 12
"""Cells of building ground that make a landmark a place to settle: six walls' worth."""


def _building_ground(config: HearthConfig, codes: np.ndarray) -> np.ndarray:
    """Cells whose gathered resource is itself a wall material (forest's wood, stone's stone)."""
    materials = set(config.settings.building.wall_materials)
    kinds = [TERRAIN_CODE[Terrain(name)] for name, spec in config.terrain.terrains.items()
             if spec.gather in materials]
    return np.isin(codes, kinds)


def _gathering_place(
    landmarks: Sequence[Landmark], building: np.ndarray, width: int, height: int
) -> Position | None:
    """The landmark the agents wake within sight of: the one nearest the middle of the map
    that has wood or stone close by, else simply the nearest.

    Agents wake 30-60 cells apart and see 3 cells around them, so by wandering alone
    two of them rarely come into view of each other: in 200 ticks, a conversation
    happened in 18 of 30 default worlds (`python -m bench life`). A landmark stands out
    from `horizon` cells away; waking with one on the horizon, each makes it its haunt
    by its own sight, and their evenings there are where they meet.

    Building needs wood or stone, and an agent finds it only by walking past it. Some
    landmarks stand in grassland 40 cells wide (the standing stones like open ground),
    and agents settled there never built anything in 200 ticks (seeds 27 and 32 of
    `bench life`), so a landmark with at least MATERIAL_CELLS cells of building ground
    within MATERIAL_RADIUS is preferred; the middle of the map is still where the group
    starts, as the placement design asks.
    """
    if not landmarks:
        return None
    cx, cy = width // 2, height // 2
    ordered = sorted(landmarks, key=lambda m: (abs(m.position.x - cx) + abs(m.position.y - cy),
                                               m.name))
    r = MATERIAL_RADIUS
    for mark in ordered:
        x, y = mark.position.x, mark.position.y
        near = building[max(0, y - r): y + r + 1, max(0, x - r): x + r + 1]
        if int(near.sum()) >= MATERIAL_CELLS:
            return mark.position
    return ordered[0].position


async def write_world(
    storage: Storage,
    world: NewWorld,
    config: HearthConfig,
    homes: AgentHomes | None = None,
) -> None:
    """Write a planned world in one unit of work, then make the agents' homes."""
    if await storage.world.get_world_state() is not None:
        raise WorldSetupError(f"{storage.db_path} already holds a world")
    started = time.perf_counter()
    state = world.state
    raster = TerrainRaster(state.width, state.height, world.terrain.codes.tobytes())
    async with storage.unit_of_work() as uow:
        await uow.world.save_world_state(state)
        await uow.world.save_terrain(raster)
        await uow.world.save_landmarks(world.landmarks)
        for agent in world.agents:
            await uow.agents.save_agent(agent)
        await uow.commit()
    world.seconds["database"] = time.perf_counter() - started
    started = time.perf_counter()
    if homes is not None:
        for agent in world.agents:
            homes.create(agent.name, status_text(agent, state, config))
    world.seconds["homes"] = time.perf_counter() - started


async def create_world(
    storage: Storage,
    config: HearthConfig,
    *,
    homes: AgentHomes | None = None,
    seed: int | None = None,
    size: tuple[int, int] | None = None,
    agent_count: int | None = None,
    progress: Progress | None = None,
) -> NewWorld:
    """Plan and write a fresh world into an empty database."""
    world = plan_world(config, seed=seed, size=size, agent_count=agent_count, progress=progress)
    await write_world(storage, world, config, homes)
    return world
