"""The tick pipeline: phases run in order, each timed, a failing phase contained.

    pipeline = TickPipeline([WakePhase(...), ..., CommitPhase(...)])
    ctx = await pipeline.run(ctx)
    ctx.phase_ms   # (("expire_invitations", 0.02), ("wake", 0.01), ...)

A phase that raises is logged and skipped (the context records the error), so a
bug in, say, the weather never stops agents from living their tick. A phase
marked `critical` (the commit) re-raises instead: a tick that could not be
written must not look finished.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol

from engine.context import TickContext
from storage.errors import is_storage_fault

log = logging.getLogger("hearth.engine")


class Phase(Protocol):
    name: str

    async def run(self, ctx: TickContext) -> TickContext: ...


class BasePhase:
    """Timing, logging and error isolation around `_execute`."""

    name = "phase"
    critical = False
    runs_when_resumed = False
    """Opening phases already ran (and were committed) before a crash; they are skipped."""

    async def run(self, ctx: TickContext) -> TickContext:
        started = time.perf_counter()
        if ctx.resumed and not self.runs_when_resumed:
            return ctx.with_phase_time(self.name, 0.0)
        try:
            out = await self._execute(ctx)
        except Exception as exc:
            if self.critical or is_storage_fault(exc):  # a full disk stops the run
                raise
            log.exception("phase %s failed at tick %s; the tick goes on", self.name, ctx.tick)
            out = ctx.with_error(self.name, f"{type(exc).__name__}: {exc}")
        return out.with_phase_time(self.name, (time.perf_counter() - started) * 1000)

    async def _execute(self, ctx: TickContext) -> TickContext:
        raise NotImplementedError


class TickPipeline:
    def __init__(self, phases: Sequence[Phase]) -> None:
        self.phases = tuple(phases)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.phases)

    async def run(self, ctx: TickContext) -> TickContext:
        for phase in self.phases:
            ctx = await phase.run(ctx)
        return ctx
