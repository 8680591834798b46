"""A summary of a world for `--status`: what exists, how big, who lives there."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from config.models import TimeSettings
from core.clock import time_of_day
from core.terrain import TERRAIN_ORDER
from services.world_view import terrain_codes
from storage import LATEST_VERSION, Storage


@dataclass(frozen=True)
class AgentSummary:
    name: str
    x: int
    y: int
    model_id: str
    sleeping: bool
    journeying: bool
    state: str


@dataclass(frozen=True)
class LandmarkSummary:
    kind: str
    name: str
    x: int
    y: int


@dataclass(frozen=True)
class TickTimes:
    """How long recent ticks took: the mean of the last `ticks`, whole and per phase."""

    ticks: int
    last_tick: int
    mean_ms: float
    max_ms: float
    phases_ms: dict[str, float]
    """Phase -> mean milliseconds, in pipeline order."""


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
    time_of_day: str | None
    counts: dict[str, int]
    agents: list[AgentSummary]
    terrain_shares: dict[str, float] = field(default_factory=dict)
    landmarks: list[LandmarkSummary] = field(default_factory=list)
    tick_times: TickTimes | None = None
    unfinished_tick: int | None = None
    """A tick a stopped or crashed run left open (the next run finishes it)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def world_status(storage: Storage, clock: TimeSettings | None = None) -> WorldStatus:
    """Everything `--status` shows; `clock` (settings.time) names the time of day."""
    clock = clock or TimeSettings()
    state = await storage.world.get_world_state()
    shares: dict[str, float] = {}
    if state is not None:
        codes = await terrain_codes(storage, state.width, state.height)
        counts = np.bincount(codes.reshape(-1), minlength=len(TERRAIN_ORDER))
        shares = {t.value: round(float(counts[i]) / codes.size, 4)
                  for i, t in enumerate(TERRAIN_ORDER)}
    landmarks = await storage.world.get_landmarks() if state is not None else []
    agents = await storage.agents.get_all_agents()
    db_bytes = sum(
        p.stat().st_size
        for p in (storage.db_path, storage.db_path.with_name(storage.db_path.name + "-wal"))
        if p.exists()
    )
    schema = await storage.db.user_version()
    engine_records = schema >= 5  # older files have no engine tables yet
    counts_extra: dict[str, int] = {}
    times = None
    unfinished = None
    if engine_records:
        counts_extra = {"turns": await storage.engine.count_turns(),
                        "events": await storage.engine.count_events()}
        times = _tick_times(await storage.engine.recent_metrics(RECENT_TICKS))
        progress = await storage.engine.get_progress()
        unfinished = progress.tick if progress is not None else None
    return WorldStatus(
        db_path=str(storage.db_path),
        db_bytes=db_bytes,
        schema_version=schema,
        latest_schema_version=LATEST_VERSION,
        initialised=state is not None,
        width=state.width if state else None,
        height=state.height if state else None,
        seed=state.seed if state else None,
        tick=state.tick if state else None,
        weather=state.weather.value if state else None,
        time_of_day=(
            str(time_of_day(state.tick, clock.ticks_per_day, clock.start_hour)) if state else None
        ),
        counts={
            "agents": len(agents),
            "stored_cells": await storage.world.count_cells(),
            "objects": await storage.objects.count_objects(),
            "named_places": await storage.world.count_named_places(),
            "structures": await storage.world.count_structures(),
            "landmarks": len(landmarks),
            "conversations": await storage.conversations.count_conversations(),
            **counts_extra,
        },
        agents=[
            AgentSummary(
                name=a.name,
                x=a.position.x,
                y=a.position.y,
                model_id=a.model_id,
                sleeping=a.is_sleeping,
                journeying=a.journey is not None,
                state="asleep" if a.is_sleeping else (
                    "journeying" if a.journey is not None else "awake"
                ),
            )
            for a in agents
        ],
        terrain_shares=shares,
        landmarks=[
            LandmarkSummary(m.kind, m.name, m.position.x, m.position.y) for m in landmarks
        ],
        tick_times=times,
        unfinished_tick=unfinished,
    )


RECENT_TICKS = 100


def _tick_times(metrics) -> TickTimes | None:
    if not metrics:
        return None
    phases: dict[str, list[float]] = {}
    for m in metrics:
        for name, ms in m.phases.items():
            phases.setdefault(name, []).append(ms)
    return TickTimes(
        ticks=len(metrics),
        last_tick=metrics[-1].tick,
        mean_ms=round(sum(m.duration_ms for m in metrics) / len(metrics), 3),
        max_ms=round(max(m.duration_ms for m in metrics), 3),
        phases_ms={name: round(sum(v) / len(v), 3) for name, v in phases.items()},
    )
