"""Agent turns: clusters run concurrently, agents within a cluster one after another."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from core.types import AgentName
from engine.context import TickContext, TurnResult
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from engine.engine import HearthEngine


class AgentTurnPhase(BasePhase):
    """Each cluster is worked through in order by one of at most N workers.

    Agents in one cluster are close enough to see each other, so they act in turn
    and each perceives what the one before did. Clusters are far apart, so their
    turns may overlap in time (a language model's reply takes seconds). Workers pull
    the next cluster from a shared list, which keeps concurrency bounded without a
    task per cluster. A requested stop lets turns in flight finish, then stops.
    """

    name = "turns"
    runs_when_resumed = True

    def __init__(self, engine: HearthEngine) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        engine = self.engine
        pending = [list(c) for c in ctx.clusters]
        pending.reverse()  # pop() from the end takes clusters in schedule order
        results: dict[AgentName, TurnResult] = {}

        async def worker() -> None:
            while pending and not engine.stop_requested:
                cluster = pending.pop()
                for name in cluster:
                    if engine.stop_requested:
                        return
                    if name in ctx.already_done:
                        continue
                    result = await engine.run_agent_turn(name, ctx.tick)
                    if result is not None:
                        results[name] = result
                    await engine.committer.maybe_commit()

        workers = min(len(pending), engine.config.settings.scheduling.max_concurrent_clusters)
        if workers == 1:
            await worker()
        elif workers > 1:
            await asyncio.gather(*(worker() for _ in range(workers)))
        ordered = {n: results[n] for c in ctx.clusters for n in c if n in results}
        out = ctx.with_turn_results(ordered)
        unfinished = [n for c in ctx.clusters for n in c
                      if n not in results and n not in ctx.already_done]
        return out.with_stopped() if unfinished and engine.stop_requested else out
