"""Commit: the last turns, the tick counter and the tick's closing, in one transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from engine.phase_host import PhaseHost


class CommitPhase(BasePhase):
    """Write what is still queued; advance the tick unless a stop left turns undone.

    A stopped tick keeps its progress record: the next run finishes it with the
    agents whose turns had not been committed. A stop always waits for its write;
    a finished tick's is left in flight when the engine writes behind.
    """

    name = "commit"
    critical = True
    runs_when_resumed = True

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        if ctx.stopped:
            await self.engine.committer.commit()
            return ctx
        await self.engine.committer.commit(
            finish_tick=ctx.tick, wait=not self.engine.write_behind)
        return ctx.with_completed()
