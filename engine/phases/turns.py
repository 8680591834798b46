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
    # Commits run in a task of their own, never inside a worker: a worker that
    # awaited a commit would let the others run ahead, and which turns ran first
    # would then depend on how fast the disk was. A mind that answers at once (the
    # offline mind) never yields, so its turns run in schedule order and are all
    # committed by the commit phase; a language model's turns yield while waiting
    # for replies, and the background task commits the finished ones meanwhile.
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

        workers = min(len(pending), engine.config.settings.scheduling.max_concurrent_clusters)
        finished = asyncio.Event()
        background = asyncio.create_task(self._commit_meanwhile(finished))
        try:
            if workers == 1:
                await worker()
            elif workers > 1:
                await asyncio.gather(*(worker() for _ in range(workers)))
        finally:
            finished.set()
            await background
        ordered = {n: results[n] for c in ctx.clusters for n in c if n in results}
        out = ctx.with_turn_results(ordered)
        unfinished = [n for c in ctx.clusters for n in c
                      if n not in results and n not in ctx.already_done]
        return out.with_stopped() if unfinished and engine.stop_requested else out

    async def _commit_meanwhile(self, finished: asyncio.Event) -> None:
        """Commit finished turns every `max_delay` while the workers wait on minds."""
        committer = self.engine.committer
        while not finished.is_set():
            try:
                await asyncio.wait_for(finished.wait(), committer.max_delay or 0.05)
            except TimeoutError:
                pass
            if not finished.is_set():
                await committer.maybe_commit()
