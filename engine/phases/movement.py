"""Journeys advance one cell; a traveller stops when someone new comes into view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import AgentMovedEvent, JourneyCompletedEvent, JourneyInterruptedEvent
from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from engine.engine import HearthEngine


class MovementPhase(BasePhase):
    name = "movement"

    def __init__(self, engine: HearthEngine) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        agents = self.engine.sim.agents
        travellers = sorted(
            (a for a in agents.get_all_agents() if a.journey is not None and not a.is_sleeping),
            key=lambda a: a.name,
        )
        moved, stopped, events = [], [], []
        for agent in travellers:
            seen_before = {a.name for a in agents.visible_to(agent.name)}
            after, arrived, blocked = agents.advance_journey(agent.name)
            if after.position != agent.position:
                moved.append(agent.name)
                events.append(AgentMovedEvent(ctx.tick, agent.name, agent.position, after.position))
            if blocked:
                stopped.append(agent.name)
                events.append(
                    JourneyInterruptedEvent(ctx.tick, agent.name, after.position, blocked)
                )
                continue
            if arrived:
                stopped.append(agent.name)
                events.append(JourneyCompletedEvent(ctx.tick, agent.name, after.position))
                continue
            newcomers = sorted({a.name for a in agents.visible_to(agent.name)} - seen_before)
            if newcomers:
                agents.interrupt_journey(agent.name)
                stopped.append(agent.name)
                events.append(JourneyInterruptedEvent(
                    ctx.tick, agent.name, after.position, f"{newcomers[0]} came into view"
                ))
        return ctx.with_moved(moved, stopped).append_events(events)
