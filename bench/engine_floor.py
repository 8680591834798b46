"""What the engine itself costs a turn: ticks of 1,000 agents whose minds cost nothing.

    python -m bench floor

Issue 5 asks for 10,000 agent-turns a second with offline minds, persistence
included: 100 µs a turn, end to end. This bench asks how much of that the engine
spends before any mind thinks. The same world as `bench engine` (1,000 agents on
500x500, daytime) runs with two minds that decide nothing:

- *idle*: every turn ends at once, without a call. What remains is perception,
  the turn's bookkeeping (capture, record, the mind's state) and the commit.
- *one call*: every turn says one fixed line (`speak`, which changes nothing but
  the event log) and ends. Add the tool call's parsing, execution, event and
  narration.

No agent journeys or sleeps here, so every agent takes a turn every tick. If a
turn with a free mind already costs more than 100 µs, the target cannot be met by
making the offline mind cheaper; the engine's own path has to shrink first.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import Figure
from bench.engine_ticks import _world_with
from config import load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from services.world_setup import write_world
from storage import Storage

AGENTS, SIDE, TICKS = 1_000, 500, 10
LINE = {"message": "The light is good today."}


class _FreeTurn:
    __slots__ = ("calls",)

    def __init__(self, calls: tuple[ToolCall, ...]) -> None:
        self.calls = calls

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        calls, self.calls = self.calls, ()
        return calls

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        return None

    def record(self) -> Mapping[str, Any]:
        return {}


class FreeMind(MindDefaults):
    """A mind whose decisions cost nothing: no call at all, or the same `speak` every turn.

    It reads only structure and never waits (`reads_text` False, `answers_at_once`
    True), as the offline mind does, so the engine takes the same path for it.
    """

    kind = "free"
    reads_text = False
    answers_at_once = True

    def __init__(self, speaks: bool) -> None:
        self.calls = (ToolCall("say", "speak", LINE),) if speaks else ()

    def begin(self, start: TurnStart) -> _FreeTurn:
        return _FreeTurn(self.calls)

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return {}

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        return None

    def state_json(self, agent: AgentName) -> str:
        return "{}"


async def _measure(speaks: bool) -> dict[str, float]:
    config = load_config(None)
    world = _world_with(config, AGENTS, SIDE)
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp) / "data") as storage:
            await write_world(storage, world, config)
            engine = await HearthEngine.open(storage, config, mind=FreeMind(speaks))
            engine.write_behind_on()  # as `hearth --run` and `bench engine` do
            await engine.tick_once()  # warm-up
            times, turns, phases = [], 0, {}
            for _ in range(TICKS):
                started = time.perf_counter()
                ctx = await engine.tick_once()
                times.append(time.perf_counter() - started)
                turns += len(ctx.turn_results)
                for name, ms in ctx.phase_ms:
                    phases.setdefault(name, []).append(ms)
            await engine.close()
    tick = statistics.median(times)
    per_tick = turns / TICKS
    return {
        "tick_ms": tick * 1000,
        "turns_per_tick": per_tick,
        "us_per_turn": tick / per_tick * 1e6,
        "turns_ms": statistics.median(phases["turns"]),
        "commit_ms": statistics.median(phases["commit"]),
    }


def run() -> list[Figure]:
    figures = []
    for speaks, label in ((False, "idle minds (no call)"), (True, "one `speak` a turn")):
        r = asyncio.run(_measure(speaks))
        figures.append(Figure(
            f"{AGENTS} agents, {label}: tick",
            f"{r['tick_ms']:.1f} ms ({r['turns_per_tick']:.0f} turns; turns phase "
            f"{r['turns_ms']:.1f} ms, commit {r['commit_ms']:.1f} ms)",
        ))
        figures.append(Figure(
            f"{AGENTS} agents, {label}: engine cost a turn",
            f"{r['us_per_turn']:.0f} µs (at most {1e6 / r['us_per_turn']:,.0f} turns/s)",
            "<= 100 µs (10,000 turns/s)" if speaks else "",
            r["us_per_turn"] <= 100 if speaks else None,
        ))
    return figures
