"""Journeys advance one cell; a traveller stops when someone new comes into view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import AgentMovedEvent, JourneyCompletedEvent, JourneyInterruptedEvent
from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from core.agent import Agent
    from engine.engine import HearthEngine
    from services.agent_service import AgentService


class MovementPhase(BasePhase):
    name = "movement"

    def __init__(self, engine: HearthEngine) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        agents = self.engine.sim.agents
        radius = self.engine.sim.world.vision_radius()
        travellers = sorted(
            (a for a in agents.get_all_agents() if a.journey is not None and not a.is_sleeping),
            key=lambda a: a.name,
        )
        moved, stopped, events = [], [], []
        for agent in travellers:
            name = agent.name
            after, arrived, blocked = agents.advance_journey(name)
            if after.position != agent.position:
                moved.append(name)
                events.append(AgentMovedEvent(ctx.tick, name, agent.position, after.position))
            if blocked:
                stopped.append(name)
                events.append(JourneyInterruptedEvent(ctx.tick, name, after.position, blocked))
                continue
            if arrived:
                stopped.append(name)
                events.append(JourneyCompletedEvent(ctx.tick, name, after.position))
                continue
            newcomer = _newcomer(agents, after, radius)
            if newcomer is not None:
                agents.interrupt_journey(name)
                stopped.append(name)
                events.append(JourneyInterruptedEvent(
                    ctx.tick, name, after.position, f"{newcomer} came into view"
                ))
        return ctx.with_moved(moved, stopped).append_events(events)


def _newcomer(agents: AgentService, traveller: Agent, radius: int) -> str | None:
    """The first (by name) of those in view who were not in view after the last step.

    Whoever moved, the traveller or the other, it is someone coming into view. The
    journey remembers who is in view now, so one who stays in sight stops it once.
    Most travellers see nobody: one look at the square around them settles it.
    """
    journey = traveller.journey
    assert journey is not None
    now = {a.name for a in agents.get_nearby_agents(traveller.position, radius)}
    now.discard(traveller.name)
    if not now and not journey.seen:
        return None
    new = now - journey.seen
    if new:
        return min(new)
    if now != journey.seen:  # someone left the view: they would be new again
        agents.update_journey(traveller.name, journey.with_seen(frozenset(now)))
    return None
