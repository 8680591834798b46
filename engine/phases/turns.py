"""Agent turns: clusters run concurrently, agents within a cluster one after another."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from core.types import AgentName
from engine.context import TickContext, TurnResult
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from engine.phase_host import PhaseHost


YIELD_EVERY = 8
"""Agents a worker passes between steps aside for the commit task (see `_step_aside`)."""

STREAM_TURNS = 32
"""Finished turns that start a commit at once when none is being written, so the
database thread writes them while minds wait on replies."""


class AgentTurnPhase(BasePhase):
    # Commits run in a task of their own, never inside a worker: a worker that
    # awaited a commit would let the others run ahead, and which turns ran first
    # would then depend on how fast the disk was. Workers step aside for that task
    # only at fixed counts of agents (`_step_aside`), and minds that answer at once
    # run in a single worker that never does, so with such minds the order of turns
    # is the same on every run and on every resume; a language model's turns also
    # yield while waiting for replies, and the task commits the finished ones.
    """Each cluster is worked through in order by one of at most N workers.

    Agents in one cluster are close enough to see each other, so they act in turn
    and each perceives what the one before did. Clusters are far apart, so their
    turns may overlap in time (a language model's reply takes seconds). Workers pull
    the next cluster from a shared list, which keeps concurrency bounded without a
    task per cluster. A requested stop lets turns in flight finish, then stops.
    """

    name = "turns"
    runs_when_resumed = True

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        engine = self.engine
        pending = [list(c) for c in ctx.clusters]
        pending.reverse()  # pop() from the end takes clusters in schedule order
        results: dict[AgentName, TurnResult] = {}

        finished, batch_ready = asyncio.Event(), asyncio.Event()

        names = [n for c in pending for n in c if n not in ctx.already_done]
        alone = engine.all_answer_at_once(names)

        async def worker() -> None:
            try:
                await work()
            except BaseException:  # a full disk, say: the others end their turns in flight
                engine.request_stop()
                raise

        async def work() -> None:
            passed = 0
            while pending and not engine.stop_requested:
                cluster = pending.pop()
                for name in cluster:
                    if engine.stop_requested:
                        return
                    if name not in ctx.already_done:
                        result = await engine.run_agent_turn(name, ctx.tick)
                        if result is not None:
                            results[name] = result
                    passed += 1
                    if not alone and passed % YIELD_EVERY == 0:
                        await self._step_aside(batch_ready)

        # Minds that answer at once gain nothing from overlapping turns: one worker
        # takes every cluster in schedule order and never steps aside, and the
        # commit phase writes the tick's turns together. (Stepping aside for a
        # commit moved it one statement per turn, and its threads' contention for
        # the GIL cost the turns more than the overlap saved.)
        workers = 1 if alone and pending else min(
            len(pending), engine.config.settings.scheduling.max_concurrent_clusters)
        background = asyncio.create_task(self._commit_meanwhile(finished, batch_ready))
        try:
            if workers == 1:
                await worker()
            elif workers > 1:
                ended = await _started_one_by_one(worker, workers)
                for failed in ended:
                    if isinstance(failed, BaseException):
                        raise failed
        finally:
            finished.set()
            batch_ready.set()
            await background
        ordered = {n: results[n] for c in ctx.clusters for n in c if n in results}
        out = ctx.with_turn_results(ordered)
        unfinished = [n for c in ctx.clusters for n in c
                      if n not in results and n not in ctx.already_done]
        return out.with_stopped() if unfinished and engine.stop_requested else out

    async def _step_aside(self, batch_ready: asyncio.Event) -> None:
        """Let the commit task (and the other workers) run between turns.

        A turn whose mind happens not to wait (a quick reply, an offline agent in a
        mixed world) would otherwise keep the loop until its worker ran out of
        clusters. The step is taken after a fixed count of agents passed, whether
        they acted or had already acted before a crash, so where it falls never
        depends on how fast the disk is.
        """
        committer = self.engine.committer
        if not committer.committing and committer.pending >= STREAM_TURNS:
            batch_ready.set()
        await asyncio.sleep(0)

    async def _commit_meanwhile(self, finished: asyncio.Event, batch_ready: asyncio.Event) -> None:
        """Commit finished turns while the workers go on: when a worker says a batch is
        full, or every `max_delay` (a language model's turns wait on replies)."""
        committer = self.engine.committer
        while not finished.is_set():
            ready = False
            try:
                await asyncio.wait_for(batch_ready.wait(), committer.max_delay or 0.05)
                ready = True
            except TimeoutError:
                pass
            batch_ready.clear()
            if finished.is_set():
                break
            await committer.maybe_commit(now=ready)


async def _started_one_by_one(work: Callable[[], Awaitable[None]], count: int
                              ) -> list[BaseException | None]:
    """Run `count` workers, starting them one loop pass apart; what each ended with.

    Started all at once, every worker takes its first step (a turn's start, up to its
    first request) before the event loop next looks at its sockets: on a run's first
    tick, when each request must first open a connection, no connection was made
    until every agent's turn had started (240 agents: 0.3 s, `python -m bench minds`).
    One pass apart, the loop completes the connections the earlier turns opened while
    the later ones start. Which worker starts when is the same either way."""
    tasks: list[asyncio.Task[None]] = []
    try:
        for _ in range(count):
            tasks.append(asyncio.ensure_future(work()))
            await asyncio.sleep(0)
        return list(await asyncio.gather(*tasks, return_exceptions=True))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
