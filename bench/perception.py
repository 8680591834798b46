"""Perception speed: `PerceptionBuilder.build` on a generated 500x500 world, 1,000 agents.

    python -m bench perception

The agents stand on distinct random passable cells of a lived-in world: 1,000 signs
and piles scattered about, 5,000 cells part-gathered, a fifth of them bare. Each round
is a new tick (the world's clock stays at daytime: vision radius 3) in which every
agent's perception is built once; between rounds half of the agents take a step, so
both a window seen last tick and a window moved by one cell are measured, as in the
engine. A figure is the median of the single builds of a round, the best of 10 rounds
(other work on the machine only adds time), after one warm-up round.

Target: <= 25 µs with text=False, a quarter of the ~100 µs agent turn (perception,
mind, actions, narration, commit) that issue 5's 10,000 agent-turns/s leaves.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from adapters.perception import PerceptionBuilder
from bench import Figure
from config import load_config
from core.agent import Agent
from core.objects import PlacedItem, Sign
from core.types import CARDINALS, AgentName, Position
from services.agent_service import AgentService
from services.simulation import build_simulation, clock_of
from services.world_service import TerrainRules, WorldService
from services.world_setup import plan_world

SIDE = 500
AGENTS = 1_000
OBJECTS = 1_000
SPENT = 5_000
BARE_SHARE = 5
"""One spent cell in this many is gathered bare; the others are part-gathered."""
ROUNDS = 10
"""Timed rounds, one tick each (the world's clock stays at daytime: vision radius 3)."""
TARGET_US = 25.0


def _setup():
    config = load_config(None)
    plan = plan_world(config, seed=11, size=(SIDE, SIDE), agent_count=3)
    rules = TerrainRules.from_traits(config.terrain.terrains)
    world = WorldService(plan.state, plan.terrain.codes, rules,
                         clock=clock_of(config), landmarks=plan.landmarks)
    rng = np.random.default_rng(11)
    passable = np.flatnonzero(world.passable.ravel())
    cells = [divmod(int(c), SIDE) for c in rng.choice(passable, AGENTS + OBJECTS, replace=False)]
    base = plan.agents[0]
    people = [Agent(AgentName(f"A{i}"), base.model_id, base.personality, Position(x, y))
              for i, (y, x) in enumerate(cells[:AGENTS])]
    agents = AgentService(world, people)
    sim = build_simulation(world, config, agents, seed=11)
    for i, (y, x) in enumerate(cells[AGENTS:]):
        obj = (Sign(f"s{i}", Position(x, y), people[0].name, 0, "hello")
               if i % 2 else PlacedItem(f"p{i}", Position(x, y), None, 0,
                                        resource="wood", quantity=3))
        world.add_object(obj)
    gatherable = np.flatnonzero([g is not None for g in rules.gather])
    spendable = np.flatnonzero(np.isin(world.codes, gatherable).ravel())
    for i, flat in enumerate(rng.choice(spendable, SPENT, replace=False)):
        y, x = divmod(int(flat), SIDE)
        times = sim.gathering.capacity if i % BARE_SHARE == 0 else int(rng.integers(1, 4))
        for _ in range(times):
            sim.gathering.take(Position(x, y), 0)
    return sim, [p.name for p in people], rng


def _step_half(sim, names: list[AgentName], rng: np.random.Generator) -> set[AgentName]:
    """Move every other agent (chosen afresh) one step where it can go."""
    moved = set()
    for name in names:
        if rng.random() < 0.5:
            continue
        agent = sim.agents.require(name)
        for k in rng.permutation(4):
            d = CARDINALS[int(k)]
            if sim.agents.step_blocker(agent.position, d) is None:
                sim.agents.update_position(name, agent.position.step(d))
                moved.add(name)
                break
    return moved


def _measure(sim, names: list[AgentName], rng: np.random.Generator, text: bool,
             ) -> tuple[float, float, float]:
    """(median of all builds, of builds after a step, of builds in place) in µs, each the
    best of ROUNDS rounds: noise from elsewhere on the machine only ever adds time."""
    builder = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering)
    for name in names:  # warm-up: first sight of everyone
        builder.build(name, 1, text=text)
    clock = time.perf_counter_ns
    best = [float("inf")] * 3
    for tick in range(2, 2 + ROUNDS):
        moved = _step_half(sim, names, rng)
        everything, stepped, stayed = [], [], []
        for name in names:
            started = clock()
            builder.build(name, tick, text=text)
            took = clock() - started
            everything.append(took)
            (stepped if name in moved else stayed).append(took)
        for i, times in enumerate((everything, stepped, stayed)):
            best[i] = min(best[i], statistics.median(times) / 1000)
    return best[0], best[1], best[2]


def run() -> list[Figure]:
    sim, names, rng = _setup()
    assert sim.world.vision_radius() == 3, "the bench is meant for daytime vision"
    figures = []
    for text in (False, True):
        overall, stepped, stayed = _measure(sim, names, rng, text)
        figures.append(Figure(
            f"build text={text}, median", f"{overall:.1f} µs "
            f"(after a step {stepped:.1f}, in place {stayed:.1f})",
            "" if text else f"<= {TARGET_US:.0f} µs",
            None if text else overall <= TARGET_US,
        ))
    return figures
