"""Journeys advance one cell; a traveller stops when someone new comes into view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import AgentMovedEvent, JourneyCompletedEvent, JourneyInterruptedEvent
from core.types import Position
from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
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
            newcomer = _newcomer(agents, name, agent.position, after.position, radius)
            if newcomer is not None:
                agents.interrupt_journey(name)
                stopped.append(name)
                events.append(JourneyInterruptedEvent(
                    ctx.tick, name, after.position, f"{newcomer} came into view"
                ))
        return ctx.with_moved(moved, stopped).append_events(events)


def _newcomer(
    agents: AgentService, name: str, before: Position, after: Position, radius: int
) -> str | None:
    """The first (by name) of those who came into view with this one step, if any.

    Most travellers see nobody, so the square around the new cell is looked at
    first and the old one only when someone is in sight; only the traveller has
    moved in between, so the old square is the one it saw a moment ago.
    """
    now = {a.name for a in agents.get_nearby_agents(after, radius)}
    now.discard(name)
    if not now:
        return None
    now.difference_update(a.name for a in agents.get_nearby_agents(before, radius))
    return min(now) if now else None
