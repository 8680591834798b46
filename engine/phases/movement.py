"""Journeys advance one cell; a traveller stops when someone new comes into view.

A traveller takes no turns on the way (the schedule leaves it out), so when a journey
ends, by arrival or otherwise, what happened is kept for its next turn
(`engine.journey_news`): where it stands, where it was going and after how many
ticks on the road, and why it stopped short.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import AgentMovedEvent, JourneyCompletedEvent, JourneyInterruptedEvent
from core.types import Position
from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from core.agent import Agent
    from engine.phase_host import PhaseHost
    from services.agent_service import AgentService
    from services.world_service import WorldService


class MovementPhase(BasePhase):
    name = "movement"

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        agents = self.engine.sim.agents
        radius = self.engine.sim.world.vision_radius()
        travellers = sorted(
            (a for a in agents.get_all_agents() if a.journey is not None and not a.is_sleeping),
            key=lambda a: a.name,
        )
        world, news = self.engine.sim.world, self.engine.journey_news
        moved, stopped, events = [], [], []
        for agent in travellers:
            name = agent.name
            journey = agent.journey
            assert journey is not None
            after, arrived, blocked = agents.advance_journey(name)
            stepped = after.position != agent.position
            if stepped:
                moved.append(name)
                events.append(AgentMovedEvent(ctx.tick, name, agent.position, after.position))
            # Ticks on the road: one a step, and this one if it ended without a step.
            ticks = journey.progress + 1
            if blocked:
                stopped.append(name)
                events.append(JourneyInterruptedEvent(ctx.tick, name, after.position, blocked))
                news[name] = journey_news(world, journey.destination, after.position, ticks,
                                          journey.remaining, blocked)
                continue
            if arrived:
                stopped.append(name)
                events.append(JourneyCompletedEvent(ctx.tick, name, after.position))
                news[name] = journey_news(world, journey.destination, after.position, ticks)
                continue
            newcomer = _newcomer(agents, after, radius)
            if newcomer is not None:
                agents.interrupt_journey(name)
                stopped.append(name)
                why = f"{newcomer} came into view"
                events.append(JourneyInterruptedEvent(ctx.tick, name, after.position, why))
                news[name] = journey_news(world, journey.destination, after.position, ticks,
                                          journey.remaining - 1, why)
        return ctx.with_moved(moved, stopped).append_events(events)


def journey_news(world: WorldService, goal: Position, here: Position, ticks: int,
                 left: int = 0, why: str | None = None) -> str:
    """What a traveller is told at its next turn of how its journey ended.

    `goal` is where it was going, `here` where it stands now, `ticks` how many ticks it
    was on the road (this one included), `left` how many steps of the way remain, `why`
    the reason it stopped short (None: it arrived)."""
    where = _named(world, goal)
    after = f"after {ticks} tick{'' if ticks == 1 else 's'} on the road"
    if why is None:
        return f"Your journey is over: you arrived at {where} {after}."
    short = f", {left} step{'' if left == 1 else 's'} short of it" if left > 0 else ""
    return (f"Your journey to {where} stopped at ({here.x}, {here.y}) {after}{short}: "
            f"{why}.")


def _named(world: WorldService, at: Position) -> str:
    """A spot as a traveller knows it: a landmark's or place's name and where it is."""
    marks = world.landmarks_at(at)
    name = marks[0].name if marks else None
    if name is None:
        places = world.places_at(at)
        name = places[0].name if places else None
    return f"{name} ({at.x}, {at.y})" if name else f"({at.x}, {at.y})"


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
