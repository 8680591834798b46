"""Opening phases: invitations lapse, sleepers wake, the weather turns."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from core.events import AgentWokeEvent, InvitationExpiredEvent, WeatherChangedEvent
from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from engine.phase_host import PhaseHost


class InvitationExpiryPhase(BasePhase):
    """Unanswered invitations lapse after their time; both agents learn it from the world."""

    name = "expire_invitations"

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        lapsed = self.engine.sim.conversations.expire_invitations(ctx.tick)
        return ctx.append_events(
            InvitationExpiredEvent(ctx.tick, inv.inviter, inv.invitee) for inv in lapsed
        )


class WakePhase(BasePhase):
    """Sleepers wake in the morning, once they have slept at least `min_sleep_ticks`."""

    name = "wake"

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        if ctx.period != "morning":
            return ctx
        agents = self.engine.sim.agents
        least = self.engine.config.settings.scheduling.min_sleep_ticks
        woke = []
        for agent in sorted(agents.get_all_agents(), key=lambda a: a.name):
            if agent.is_sleeping and ctx.tick - agent.last_active_tick >= least:
                agents.set_sleeping(agent.name, False)
                woke.append(agent.name)
        return ctx.with_woke(woke).append_events(
            AgentWokeEvent(ctx.tick, name, "morning") for name in woke
        )


class WeatherPhase(BasePhase):
    """The weather may turn, by the odds in settings.yaml, reproducibly for a seed and tick."""

    name = "weather"

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        rules = self.engine.config.settings.weather
        world = self.engine.sim.world
        rng = random.Random(f"{world.state.seed}:weather:{ctx.tick}")
        if rng.random() >= rules.change_chance:
            return ctx
        options = [(w, weight) for w, weight in rules.weights.items()
                   if w != world.weather and weight > 0]
        if not options:
            return ctx
        weather = rng.choices([w for w, _ in options], [x for _, x in options])[0]
        world.set_weather(weather)
        return ctx.with_weather(weather).append_events([WeatherChangedEvent(ctx.tick, weather)])
