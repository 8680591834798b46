"""Journeys in the movement phase: a traveller stops when someone comes into view."""

from __future__ import annotations

from core.agent import Agent
from core.types import Position
from engine import HearthEngine


def _far_way(engine: HearthEngine, traveller: Agent, reach: int = 14) -> Position:
    """A cell about `reach` steps away that a journey can reach."""
    world, agents = engine.sim.world, engine.sim.agents
    p = traveller.position
    for d in range(reach, reach + 10):
        for x, y in ((p.x + d, p.y), (p.x - d, p.y), (p.x, p.y + d), (p.x, p.y - d)):
            there = Position(x, y)
            if world.in_bounds(there) and world.is_passable(there):
                path = agents.plan_path(p, there)
                if path is not None and len(path) >= reach:
                    return there
    raise AssertionError("no reachable cell far enough in the test world")


def _open_cell_near(engine: HearthEngine, centre: Position, distance: int) -> Position:
    world = engine.sim.world
    occupied = {a.position for a in engine.sim.agents.get_all_agents()}
    for dx in range(-distance, distance + 1):
        for dy in (-distance, distance):
            for there in (Position(centre.x + dx, centre.y + dy),
                          Position(centre.x + dy, centre.y + dx)):
                if (world.in_bounds(there) and world.is_passable(there)
                        and there not in occupied):
                    return there
    raise AssertionError("no open cell at that distance")


def _setting_out(engine: HearthEngine) -> tuple[Agent, list[Agent]]:
    """The first agent sets out on a long journey; everyone else is moved far off."""
    agents = engine.sim.agents
    everyone = sorted(agents.get_all_agents(), key=lambda a: a.name)
    traveller, others = everyone[0], everyone[1:]
    world = engine.sim.world
    corner = 0
    for other in others:  # park the others in far corners, out of sight
        for y in range(world.height):
            x = (corner * 13) % world.width
            there = Position(x if corner % 2 == 0 else world.width - 1 - x, y)
            if world.is_passable(there) and there.manhattan(traveller.position) > 25:
                agents.update_position(other.name, there)
                break
        corner += 1
    agents.start_journey(traveller.name, _far_way(engine, traveller))
    return agents.require(traveller.name), [agents.require(o.name) for o in others]


async def test_someone_walking_up_to_a_traveller_stops_its_journey(
    scripted, make_engine
) -> None:
    async with make_engine(scripted(rounds=0)) as engine:
        traveller, others = _setting_out(engine)
        ctx = await engine.tick_once()
        assert traveller.name in ctx.moved and traveller.name not in ctx.interrupted
        here = engine.sim.agents.require(traveller.name)
        assert here.journey is not None

        # Between ticks someone arrives beside the traveller (as a walker would).
        radius = engine.sim.world.vision_radius()
        visitor = others[0].name
        engine.sim.agents.update_position(
            visitor, _open_cell_near(engine, here.position, max(1, radius - 1)))
        ctx = await engine.tick_once()

        assert traveller.name in ctx.interrupted
        assert engine.sim.agents.require(traveller.name).journey is None
        reasons = [e.reason for e in ctx.events if getattr(e, "agent", None) == traveller.name
                   and e.event_type == "journey_interrupted"]
        assert reasons == [f"{visitor} came into view"]


async def test_company_at_the_start_does_not_stop_a_journey(scripted, make_engine) -> None:
    async with make_engine(scripted(rounds=0)) as engine:
        traveller, others = _setting_out(engine)
        agents = engine.sim.agents
        companion = others[0].name
        # The companion stands in view when the journey starts, and stays beside it.
        agents.interrupt_journey(traveller.name)
        agents.update_position(companion, _open_cell_near(engine, traveller.position, 1))
        journey = agents.start_journey(traveller.name, _far_way(engine, traveller))
        assert companion in journey.seen

        ctx = await engine.tick_once()
        assert traveller.name not in ctx.interrupted
        assert agents.require(traveller.name).journey is not None
