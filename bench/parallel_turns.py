"""Parallel efficiency of the turn phase with a slow mind: 20 lone agents and a trio.

    python -m bench parallel

Each mind call waits 200 ms (as a language model's reply would) and asks for one
action, so a turn is two calls (the action, then "done"): 0.4 s. The 20 lone
agents are each a cluster of one; the three agents standing together are one
cluster whose turns must run in order (3 x 0.4 s). With enough concurrency the
tick takes as long as that trio: ideal = 1.2 s. Efficiency = ideal / measured,
target >= 0.9. Concurrency is set to the number of clusters (21) for this bench;
settings.yaml's default (4) is for a machine's API rate limits, not a law.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import Figure
from config import load_config
from core.agent import Agent
from core.types import AgentName, Position
from engine import HearthEngine
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from services.world_service import TerrainRules
from services.world_setup import plan_world, write_world
from storage import Storage

DELAY = 0.2
CALLS_PER_TURN = 2


class _SlowTurn:
    def __init__(self) -> None:
        self.asked = 0

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        await asyncio.sleep(DELAY)
        self.asked += 1
        return [ToolCall("c", "examine", {})] if self.asked == 1 else []

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        return None

    def record(self) -> Mapping[str, Any]:
        return {}


class SlowMind(MindDefaults):
    """Stands in for a language model: every reply takes DELAY seconds."""

    kind = "slow"
    reads_text = True

    def begin(self, start: TurnStart) -> _SlowTurn:
        return _SlowTurn()

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return {}

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        return None


def _open_run(passable, x: int, y: int, length: int) -> Position:
    """The nearest cell (scanning outward) starting `length` open cells in a row."""
    height, width = passable.shape
    for r in range(max(width, height)):
        for yy in range(max(0, y - r), min(height, y + r + 1)):
            for xx in range(max(0, x - r), min(width - length, x + r + 1)):
                if passable[yy, xx:xx + length].all():
                    return Position(xx, yy)
    raise ValueError("no open ground")


def _layout(plan, config, side: int) -> tuple[Agent, ...]:
    """20 agents far apart on a grid, and 3 side by side in the middle."""
    passable = TerrainRules.from_traits(config.terrain.terrains).passable[plan.terrain.codes]
    base = plan.agents[0]
    spots = [_open_run(passable, 20 + (i % 5) * 110, 20 + (i // 5) * 110, 1) for i in range(20)]
    trio = _open_run(passable, side // 2, side // 2 + 40, 3)
    spots += [Position(trio.x + d, trio.y) for d in range(3)]
    return tuple(Agent(AgentName(f"A{i}"), base.model_id, base.personality, p)
                 for i, p in enumerate(spots))


async def _measure() -> float:
    config = load_config(None)
    settings = config.settings.model_copy(update={
        "scheduling": config.settings.scheduling.model_copy(
            update={"max_concurrent_clusters": 21}),
    })
    config = dataclasses.replace(config, settings=settings)
    plan = plan_world(config, seed=5, size=(500, 500), agent_count=3)
    world = dataclasses.replace(plan, agents=_layout(plan, config, 500))
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp) / "data") as storage:
            await write_world(storage, world, config)
            engine = await HearthEngine.open(storage, config, mind=SlowMind())
            started = time.perf_counter()
            ctx = await engine.tick_once()
            elapsed = time.perf_counter() - started
            assert len(ctx.turn_results) == 23, sorted(ctx.turn_results)
            assert len(ctx.clusters) == 21, ctx.clusters
    return elapsed


def run() -> list[Figure]:
    elapsed = asyncio.run(_measure())
    ideal = 3 * CALLS_PER_TURN * DELAY
    efficiency = ideal / elapsed
    return [
        Figure("20 lone agents + a cluster of 3, 200 ms per call: tick",
               f"{elapsed:.3f} s (ideal {ideal:.1f} s)"),
        Figure("parallel efficiency (ideal / measured)", f"{efficiency:.3f}", ">= 0.9",
               efficiency >= 0.9),
    ]
