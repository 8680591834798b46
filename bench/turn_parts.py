"""Where an offline turn's time goes, and how much of issue 5's tick is left for the engine.

    python -m bench parts

The 1,000-agent daytime world of `bench engine` runs with its offline mind behind a
timer that implements the same Mind port (every `begin`, `next_calls`, `finish`,
`record` and `state_json` is timed), and with every tool call timed too
(engine/tool_use.py `TurnTools.execute`: the registry's parsing and the action).
Each turn then splits into three parts:

- *the mind*: the offline mind's own thinking, from its perception to its calls;
- *its actions*: executing the calls it makes (checks and the world's change);
- *the engine*: everything else in the turn (perception, narration, the turn's
  capture, record and events), measured as the rest of `run_agent_turn`.

Issue 5's target is a 1,000-agent tick in 100 ms. The figure that matters is what
the minds and their actions alone leave of those 100 ms for everything the engine
does around them: each turn's perception, narration and bookkeeping, the journeys'
steps, the schedule and the commit. The timers cost about half a microsecond a
call (some 5 µs a turn), counted in the parts they wrap, so the mind and the
actions are, if anything, overstated by that much.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from adapters.offline_mind import OfflineMind
from bench import Figure
from bench.engine_ticks import _world_with
from config import load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import Mind, MindDefaults, MindTurn, ToolCall, ToolOutcome, TurnStart
from services.world_setup import write_world
from storage import Storage

AGENTS, SIDE, WARM_TICKS, TICKS = 1_000, 500, 2, 10
TARGET_TICK_S = 0.1

_clock = time.perf_counter


class Stopwatch:
    """Seconds spent in each part, added up over the timed ticks."""

    def __init__(self) -> None:
        self.mind = 0.0
        self.actions = 0.0
        self.turns = 0.0
        self.running = False
        """Parts are only counted while True (not during the warm-up)."""

    def add(self, part: str, started: float) -> None:
        """Count the time since `started` (a `_clock()` reading) towards `part`."""
        if self.running:
            setattr(self, part, getattr(self, part) + _clock() - started)


class _TimedTurn:
    __slots__ = ("_turn", "_watch")

    def __init__(self, turn: MindTurn, watch: Stopwatch) -> None:
        self._turn = turn
        self._watch = watch

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        started = _clock()
        calls = await self._turn.next_calls(outcomes)
        self._watch.add("mind", started)
        return calls

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        started = _clock()
        await self._turn.finish(outcomes, reason)
        self._watch.add("mind", started)

    def record(self) -> Mapping[str, Any]:
        started = _clock()
        record = self._turn.record()
        self._watch.add("mind", started)
        return record


class TimedMind(MindDefaults):
    """A Mind that times another: the engine sees the same kind and the same answers."""

    def __init__(self, mind: Mind, watch: Stopwatch) -> None:
        self._mind = mind
        self._watch = watch
        self.kind = mind.kind
        self.reads_text = mind.reads_text
        self.answers_at_once = mind.answers_at_once

    def begin(self, start: TurnStart) -> _TimedTurn:
        started = _clock()
        turn = self._mind.begin(start)
        self._watch.add("mind", started)
        return _TimedTurn(turn, self._watch)

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return self._mind.get_state(agent)

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        self._mind.set_state(agent, state)

    def state_json(self, agent: AgentName) -> str:
        started = _clock()
        text = self._mind.state_json(agent)
        self._watch.add("mind", started)
        return text


def _timed(
    call: Callable[..., Awaitable[Any]], watch: Stopwatch, part: str,
) -> Callable[..., Awaitable[Any]]:
    async def timed(*args: Any, **kwargs: Any) -> Any:
        started = _clock()
        try:
            return await call(*args, **kwargs)
        finally:
            watch.add(part, started)
    return timed


async def _measure() -> dict[str, float]:
    config = load_config(None)
    world = _world_with(config, AGENTS, SIDE)
    watch = Stopwatch()
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp) / "data") as storage:
            await write_world(storage, world, config)
            offline = OfflineMind(world.state.seed,
                                  {a.name: a.personality for a in world.agents})
            engine = await HearthEngine.open(storage, config, mind=TimedMind(offline, watch))
            engine.write_behind_on()  # as `hearth --run` and `bench engine` do
            tools = engine.turn_tools
            tools.execute = _timed(tools.execute, watch, "actions")  # type: ignore[method-assign]
            engine.run_agent_turn = _timed(engine.run_agent_turn, watch, "turns")  # type: ignore[method-assign]
            for _ in range(WARM_TICKS):
                await engine.tick_once()
            watch.running = True
            times, turns, turn_phase = [], 0, []
            for _ in range(TICKS):
                started = _clock()
                ctx = await engine.tick_once()
                times.append(_clock() - started)
                turns += len(ctx.turn_results)
                turn_phase.append(dict(ctx.phase_ms)["turns"])
            await engine.close()
    per_turn = 1e6 / turns
    return {
        "tick_ms": statistics.median(times) * 1000,
        "turns_phase_ms": statistics.median(turn_phase),
        "turns_per_tick": turns / TICKS,
        "mind_us": watch.mind * per_turn,
        "actions_us": watch.actions * per_turn,
        "turn_us": watch.turns * per_turn,
    }


def run() -> list[Figure]:
    r = asyncio.run(_measure())
    engine_us = r["turn_us"] - r["mind_us"] - r["actions_us"]
    thinking_ms = (r["mind_us"] + r["actions_us"]) * r["turns_per_tick"] / 1000
    rest_ms = r["tick_ms"] - thinking_ms
    left_ms = TARGET_TICK_S * 1000 - thinking_ms
    return [
        Figure(f"{AGENTS} agents, offline minds: tick",
               f"{r['tick_ms']:.1f} ms ({r['turns_per_tick']:.0f} turns; turns phase "
               f"{r['turns_phase_ms']:.1f} ms)"),
        Figure("a turn, all of it", f"{r['turn_us']:.1f} µs"),
        Figure("  the mind's thinking", f"{r['mind_us']:.1f} µs"),
        Figure("  its actions", f"{r['actions_us']:.1f} µs"),
        Figure("  the engine (perception, narration, bookkeeping)", f"{engine_us:.1f} µs"),
        Figure("the minds and their actions, a tick", f"{thinking_ms:.1f} ms"),
        Figure("the engine's part of a tick (turns' rest, journey steps, schedule, commit)",
               f"{rest_ms:.1f} ms",
               f"<= {left_ms:.1f} ms (what 100 ms leaves)", rest_ms <= left_ms),
    ]
