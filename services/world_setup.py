"""Creating a new world's database: its size, its seed and its first inhabitants.

Until terrain generation lands, a new world is open grassland (cells are stored
sparsely, so an all-grass world has no cell rows). Agents are placed in a row
through the centre, `min_spacing` apart, so every pair is within the configured
spacing band; a request that cannot satisfy the band is refused clearly.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from config import AgentConfig, HearthConfig
from core.agent import Agent
from core.types import AgentName, Position
from core.world import WorldState
from storage import Storage


class WorldSetupError(Exception):
    """A world cannot be created as asked; the message says why."""


@dataclass(frozen=True)
class NewWorld:
    state: WorldState
    agents: tuple[Agent, ...]


def pick_seed(configured: int | None, override: int | None) -> int:
    """The seed to record: the flag's, else the config's, else a fresh random one."""
    if override is not None:
        return override
    if configured is not None:
        return configured
    return random.SystemRandom().randrange(2**31)


def row_positions(
    width: int, height: int, count: int, min_spacing: int, max_spacing: int
) -> list[Position]:
    """`count` positions in a centred row, each pair between the spacing bounds."""
    if count == 0:
        return []
    span = (count - 1) * min_spacing
    if count > 2 and span > max_spacing:
        raise WorldSetupError(
            f"{count} agents cannot stand in a row with every pair {min_spacing}-{max_spacing} "
            "cells apart; lower placement.min_spacing or raise placement.max_spacing"
        )
    if span >= width:
        raise WorldSetupError(
            f"{count} agents {min_spacing} cells apart need a world wider than {span} cells "
            f"(it is {width}); widen world.width or lower placement.min_spacing"
        )
    x0 = (width - 1 - span) // 2
    y = height // 2
    return [Position(x0 + i * min_spacing, y) for i in range(count)]


def _agent(spec: AgentConfig, position: Position) -> Agent:
    return Agent(
        name=AgentName(spec.name),
        model_id=spec.model_id,
        personality=spec.personality,
        position=position,
    )


async def create_world(
    storage: Storage, config: HearthConfig, seed: int | None = None
) -> NewWorld:
    """Write a fresh world into an empty database, all in one unit of work."""
    if await storage.world.get_world_state() is not None:
        raise WorldSetupError(f"{storage.db_path} already holds a world")
    world = config.settings.world
    placement = config.settings.placement
    specs: Sequence[AgentConfig] = config.agents.agents
    positions = row_positions(
        world.width, world.height, len(specs), placement.min_spacing, placement.max_spacing
    )
    state = WorldState(world.width, world.height, pick_seed(world.seed, seed))
    agents = tuple(_agent(spec, pos) for spec, pos in zip(specs, positions, strict=True))
    async with storage.unit_of_work() as uow:
        await uow.world.save_world_state(state)
        for agent in agents:
            await uow.agents.save_agent(agent)
        await uow.commit()
    return NewWorld(state, agents)
