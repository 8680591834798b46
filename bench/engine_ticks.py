"""Whole ticks with offline minds, persistence included: how many agent-turns per second.

    python -m bench engine

A world is generated and written to a temporary folder with N agents scattered
over open ground (N = 100 and 1,000 on 500x500, 10,000 on 2000x2000), then the
real engine runs daytime ticks: perception, the offline mind, actions, narration
and the group commit to SQLite, exactly as `hearth --run` does (each tick's commit
written behind, while the next tick runs; turns per second count the wait for the
last one). Night ticks
(everyone asleep) would flatter the figures, so the world starts at 08:00 and of the
13 daytime ticks that follow, the first warms up and the other 12 are timed. Each tick's
CPU time (all threads of the process) is shown beside its wall time: on a shared
machine the two part when the process waits for the disk or for a processor.

The 1,000-agent world then sleeps through its first night and its second day is
timed too (`SECOND_DAY`): that is when the offline agents, carrying a day's
gathering, put up walls by the hundred, and a first day alone never shows what
building costs (it hid a flood fill and a path grid made afresh after every wall,
which had made those ticks cost 30-50% more CPU).

No targets: issue 5's (1,000 agents >= 10,000 agent-turns/s and a tick <= 0.1 s;
10,000 agents a tick <= 1.5 s) were withdrawn by issue 28. The offline mind exists so
a world lives without a key, and a tick's time is set by its language models, not by
this (`python -m bench minds` measures that). These figures are measures to keep: a
change must not make them worse, compared in one run on one machine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from adapters.offline_mind import OfflineMind
from bench import Figure
from config import HearthConfig, load_config
from core.agent import Agent
from core.types import AgentName, Position
from engine import HearthEngine
from services.world_service import TerrainRules
from services.world_setup import plan_world, write_world
from storage import Storage

CASES = ((100, 500), (1_000, 500), (10_000, 2000))
DAY_TICKS = 13
SECOND_DAY = 1_000
"""The case whose second day is timed as well."""


def _world_with(config: HearthConfig, agents: int, side: int, seed: int = 11):
    """A generated world, with `agents` agents on distinct random passable cells."""
    plan = plan_world(config, seed=seed, size=(side, side), agent_count=3)
    rules = TerrainRules.from_traits(config.terrain.terrains)
    passable = np.flatnonzero(rules.passable[plan.terrain.codes].ravel())
    rng = np.random.default_rng(seed)
    cells = rng.choice(passable, size=agents, replace=False)
    templates = plan.agents
    people = []
    for i, flat in enumerate(sorted(int(c) for c in cells)):
        base = templates[i % len(templates)]
        y, x = divmod(flat, side)
        people.append(Agent(AgentName(f"{base.name}{i}"), base.model_id, base.personality,
                            Position(x, y)))
    return dataclasses.replace(plan, agents=tuple(people))


def _next_period(engine: HearthEngine) -> str:
    world = engine.sim.world
    return world.time_of_day(world.tick).period


async def _second_day(engine: HearthEngine) -> list[float]:
    """Wall times of the daytime ticks of the world's second day (after its first night)."""
    while _next_period(engine) != "night":
        await engine.tick_once()
    while _next_period(engine) == "night":
        await engine.tick_once()
    times = []
    while _next_period(engine) != "night":
        started = time.perf_counter()
        await engine.tick_once()
        times.append(time.perf_counter() - started)
    return times


async def _measure(config: HearthConfig, agents: int, side: int) -> dict[str, float]:
    world = _world_with(config, agents, side)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        async with Storage(data) as storage:
            await write_world(storage, world, config)
            mind = OfflineMind(world.state.seed,
                               {a.name: a.personality for a in world.agents})
            engine = await HearthEngine.open(storage, config, mind=mind)
            engine.write_behind_on()  # as `hearth --run` does
            await engine.tick_once()  # warm-up: first sight of everyone, caches
            times, cpu, turns, actions, travelled = [], [], 0, 0, 0
            phases: dict[str, list[float]] = {}
            for _ in range(DAY_TICKS - 1):
                started, used = time.perf_counter(), time.process_time()
                ctx = await engine.tick_once()
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - used)
                turns += len(ctx.turn_results)
                actions += ctx.action_count
                travelled += len(ctx.moved)
                for name, ms in ctx.phase_ms:
                    phases.setdefault(name, []).append(ms)
            started = time.perf_counter()
            await engine.flush()  # the last tick's write: counted in turns per second
            last_write = time.perf_counter() - started
            second_day = await _second_day(engine) if agents == SECOND_DAY else []
            await engine.close()
    return {
        "median_tick_s": statistics.median(times),
        "median_cpu_s": statistics.median(cpu),
        "max_tick_s": max(times),
        "turns_per_s": turns / (sum(times) + last_write),
        "agent_ticks_per_s": agents * len(times) / (sum(times) + last_write),
        "actions_per_turn": actions / max(turns, 1),
        "turns_per_tick": turns / len(times),
        "travelling_per_tick": travelled / len(times),
        "phase_ms": {name: statistics.median(v) for name, v in phases.items()},
        "second_day": second_day,
    }


def run() -> list[Figure]:
    config = load_config(None)
    figures: list[Figure] = []
    per_agent_us: dict[int, float] = {}
    for agents, side in CASES:
        r = asyncio.run(_measure(config, agents, side))
        label = f"{agents} agents {side}x{side}"
        per_agent_us[agents] = r["median_tick_s"] / agents * 1e6
        figures.append(Figure(
            f"{label}: median daytime tick", f"{r['median_tick_s'] * 1000:.1f} ms "
            f"(max {r['max_tick_s'] * 1000:.1f}; CPU {r['median_cpu_s'] * 1000:.1f}, all threads)",
        ))
        figures.append(Figure(
            f"{label}: agent-turns per second",
            f"{r['turns_per_s']:,.0f} ({r['turns_per_tick']:.0f} turns/tick, "
            f"{r['actions_per_turn']:.2f} actions/turn)",
        ))
        figures.append(Figure(
            f"{label}: agents served per second (turns + journey steps)",
            f"{r['agent_ticks_per_s']:,.0f} ({r['travelling_per_tick']:.0f} travelling/tick)",
        ))
        if r["second_day"]:
            day2 = r["second_day"]
            figures.append(Figure(
                f"{label}: median daytime tick, second day",
                f"{statistics.median(day2) * 1000:.1f} ms (max {max(day2) * 1000:.1f}; "
                f"{len(day2)} ticks, walls going up)",
            ))
        figures.append(Figure(
            f"{label}: median phase times",
            ", ".join(f"{name} {ms:.1f}" for name, ms in r["phase_ms"].items() if ms >= 0.5)
            + " (ms)",
        ))
    base = per_agent_us[CASES[0][0]]
    for agents, _ in CASES:
        figures.append(Figure(
            f"tick time per agent, {agents} agents", f"{per_agent_us[agents]:.1f} µs "
            f"({per_agent_us[agents] / base:.2f}x the 100-agent cost)",
        ))
    return figures
