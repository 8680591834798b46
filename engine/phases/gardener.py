"""The Gardener's requests, judged and applied at the start of a tick.

Runs in the opening, after the weather: what it changes is captured and committed
with the rest of the opening, and what became of each request (applied or refused,
and why) is written in that same transaction (`TurnCommitter.gardener_outcomes`), so
a crash leaves both undone together and the requests are judged again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import DomainEvent, WeatherChangedEvent
from core.gardener import NoIntervention, Regrowth, RevealLandmark, WeatherChange, WorldHappening
from engine.context import TickContext
from engine.pipeline import BasePhase
from engine.stewardship import Notice, intervention_event, refused_event
from storage.repositories.gardener import RequestOutcome

if TYPE_CHECKING:
    from core.gardener import Intervention
    from engine.phase_host import PhaseHost


class GardenerPhase(BasePhase):
    name = "gardener"

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        engine = self.engine
        if engine.committer.outcomes_in_flight:  # or those requests would read as pending
            await engine.committer.flush_writes()
        pending = await engine.storage.gardener.pending()
        if not pending:
            return ctx
        steward = engine.stewardship
        world = engine.sim.world
        size = (world.width, world.height)
        landmarks = world.landmarks
        events: list[DomainEvent] = []
        outcomes: list[RequestOutcome] = []
        for request in pending:
            change, why = steward.decide(
                request.id, request.cycle, request.kind, request.params, request.level,
                tick=ctx.tick, size=size, landmarks=landmarks)
            if change is None:
                events.append(refused_event(ctx.tick, request.id, request.cycle,
                                            request.kind, why))
                outcomes.append(RequestOutcome(request.id, False, why, ctx.tick, None))
                continue
            text, until = self._apply(change, ctx.tick)
            steward.note_applied(ctx.tick, request.cycle, change)
            if isinstance(change, WeatherChange):
                ctx = ctx.with_weather(change.weather)
                events.append(WeatherChangedEvent(ctx.tick, change.weather))
            if not isinstance(change, NoIntervention):
                events.append(intervention_event(ctx.tick, request.id, request.cycle, change,
                                                 text, until))
            outcomes.append(RequestOutcome(request.id, True, text, ctx.tick,
                                           getattr(change, "position", None)))
        engine.committer.gardener_outcomes.extend(outcomes)
        return ctx.append_events(events)

    def _apply(self, change: Intervention, tick: int) -> tuple[str, int | None]:
        """Make the change; what happened in words, and until when it is perceived."""
        engine = self.engine
        steward = engine.stewardship
        world = engine.sim.world
        if isinstance(change, WeatherChange):
            world.set_weather(change.weather)
            return change.describe(), None
        if isinstance(change, Regrowth):
            gathering = engine.sim.gathering
            spot, r = change.position, change.radius
            spent = gathering.spent_in(spot.x - r, spot.y - r, spot.x + r + 1, spot.y + r + 1)
            for pos, _ in spent:
                gathering.regrow(pos)
            return (f"The land within {r} cells of ({spot.x},{spot.y}) grows back "
                    f"({len(spent)} gathered cells made whole)."), None
        until = tick + steward.happening_ticks
        if isinstance(change, WorldHappening):
            steward.notices.append(Notice(change.position, change.radius, until, change.text))
            return change.describe(), until
        if isinstance(change, RevealLandmark):
            mark = world.landmark_named(change.landmark)
            if mark is not None:
                steward.notices.append(Notice(change.position, change.radius, until,
                                              landmark=mark))
            return change.describe(), until
        return change.describe(), None


__all__ = ["GardenerPhase"]
