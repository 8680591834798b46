"""A summary of a world for `--status`: what exists, how big, who lives there."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from storage import LATEST_VERSION, Storage


@dataclass(frozen=True)
class AgentSummary:
    name: str
    x: int
    y: int
    model_id: str
    sleeping: bool
    journeying: bool


@dataclass(frozen=True)
class WorldStatus:
    db_path: str
    db_bytes: int
    schema_version: int
    latest_schema_version: int
    initialised: bool
    width: int | None
    height: int | None
    seed: int | None
    tick: int | None
    weather: str | None
    counts: dict[str, int]
    agents: list[AgentSummary]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def world_status(storage: Storage) -> WorldStatus:
    state = await storage.world.get_world_state()
    agents = await storage.agents.get_all_agents()
    db_bytes = sum(
        p.stat().st_size
        for p in (storage.db_path, storage.db_path.with_name(storage.db_path.name + "-wal"))
        if p.exists()
    )
    return WorldStatus(
        db_path=str(storage.db_path),
        db_bytes=db_bytes,
        schema_version=await storage.db.user_version(),
        latest_schema_version=LATEST_VERSION,
        initialised=state is not None,
        width=state.width if state else None,
        height=state.height if state else None,
        seed=state.seed if state else None,
        tick=state.tick if state else None,
        weather=state.weather.value if state else None,
        counts={
            "agents": len(agents),
            "stored_cells": await storage.world.count_cells(),
            "objects": await storage.objects.count_objects(),
            "named_places": await storage.world.count_named_places(),
            "structures": await storage.world.count_structures(),
            "conversations": await storage.conversations.count_conversations(),
        },
        agents=[
            AgentSummary(
                name=a.name,
                x=a.position.x,
                y=a.position.y,
                model_id=a.model_id,
                sleeping=a.is_sleeping,
                journeying=a.journey is not None,
            )
            for a in agents
        ],
    )
