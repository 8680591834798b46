"""Action execution speed: walk, gather and speak on a generated 500x500 world.

    python -m bench actions

Each figure is the median of many single executions through
`ActionEngine.execute_now` (the synchronous core of `execute`). Target (issue 4):
<= 50 microseconds for each.
"""

from __future__ import annotations

import statistics
import time

from bench import Figure
from config import load_config
from core.actions import GatherAction, SpeakAction, WalkAction
from core.types import Direction
from services.agent_service import AgentService
from services.simulation import build_simulation, clock_of
from services.world_service import TerrainRules, WorldService
from services.world_setup import plan_world

RUNS = 2000
TARGET_US = 50.0


def _median_us(action, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter_ns()
        action()
        times.append(time.perf_counter_ns() - started)
    return statistics.median(times) / 1000


def run() -> list[Figure]:
    config = load_config(None)
    plan = plan_world(config, seed=1, size=(500, 500))
    world = WorldService(plan.state, plan.terrain.codes,
                         TerrainRules.from_traits(config.terrain.terrains),
                         clock=clock_of(config), landmarks=plan.landmarks)
    agents = AgentService(world, plan.agents)
    sim = build_simulation(world, config, agents, seed=1)
    engine = sim.engine
    a, b = plan.agents[0].name, plan.agents[1].name
    # Put the two side by side, in conversation, on open ground.
    agents.update_position(b, agents.require(a).position)
    sim.conversations.create_invite(a, b, "public", 0)
    sim.conversations.accept_invite(b, 0)

    directions = [Direction.NORTH, Direction.EAST, Direction.SOUTH, Direction.WEST]
    step = iter(range(10**9))

    def walk() -> None:
        result = engine.execute_now(a, WalkAction(directions[next(step) % 4]), 1)
        assert result.success or "cannot walk" in result.message

    tick = iter(range(10**9))

    def gather() -> None:
        # A new tick each time so the cell regrows and every call does the full work.
        engine.execute_now(a, GatherAction(), next(tick) * 1000)

    speech = SpeakAction("The light on the water is lovely this morning.")

    def speak() -> None:
        result = engine.execute_now(a, speech, 1)
        assert result.success, result.message

    figures = []
    for label, fn in (("walk", walk), ("gather", gather), ("speak", speak)):
        fn()  # warm
        median = _median_us(fn)
        figures.append(Figure(f"{label} median of {RUNS}", f"{median:.1f} µs",
                              f"<= {TARGET_US:.0f} µs", median <= TARGET_US))
    return figures
