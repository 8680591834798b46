"""What the `journey` tool says, checked against the real engine on a real world.

Its description claims: the way is planned; from the next tick the traveller is carried
one cell a tick; it takes no turns until it arrives, someone comes into view or the way
is blocked; its next turn then tells it where it is and after how many ticks. Each test
sets out through the real tool call (a scripted mind, the real ActionEngine, movement
phase and perception) and checks those claims one by one.
"""

from __future__ import annotations

from core.agent import Agent
from core.types import Direction, Position
from engine import HearthEngine
from services.mind import TurnStart
from services.tool_specs import tool_specs

JOURNEY = next(s.description for s in tool_specs() if s.name == "journey")


def _park_others(engine: HearthEngine, traveller: Agent) -> None:
    """Everyone but the traveller goes far off, out of its sight on the way."""
    agents, world = engine.sim.agents, engine.sim.world
    for i, other in enumerate(a for a in agents.get_all_agents() if a.name != traveller.name):
        for y in range(world.height):
            x = (i * 13) % world.width
            there = Position(x if i % 2 == 0 else world.width - 1 - x, y)
            if world.is_passable(there) and there.manhattan(traveller.position) > 30:
                agents.update_position(other.name, there)
                break


def _far_way(engine: HearthEngine, traveller: Agent, reach: int = 12) -> tuple[Position, int]:
    """A cell a journey reaches in at least `reach` steps: (it, the steps)."""
    world, agents = engine.sim.world, engine.sim.agents
    p = traveller.position
    for d in range(reach, reach + 10):
        for x, y in ((p.x + d, p.y), (p.x - d, p.y), (p.x, p.y + d), (p.x, p.y - d)):
            there = Position(x, y)
            if world.in_bounds(there) and world.is_passable(there):
                path = agents.plan_path(p, there)
                if path is not None and len(path) >= reach:
                    return there, len(path)
    raise AssertionError("no reachable cell far enough in the test world")


def _traveller(engine: HearthEngine) -> Agent:
    return sorted(engine.sim.agents.get_all_agents(), key=lambda a: a.name)[0]


def _mind(scripted, name: str, goal: Position):
    """Sets out for `goal` at `name`'s first turn; does nothing otherwise."""
    def script(start: TurnStart) -> list[tuple[str, dict]]:
        if start.agent == name and start.tick == 0:
            return [("journey", {"destination": {"x": goal.x, "y": goal.y}})]
        return []
    return scripted(script)


def _turns_of(mind, name: str) -> list[TurnStart]:
    return [s for s in mind.starts if s.agent == name]


def _sent_off(engine, scripted):
    """The traveller alone in the world, a far goal, and a mind that journeys there:
    (the traveller, the goal, the steps to it, the mind)."""
    traveller = _traveller(engine)
    _park_others(engine, traveller)
    goal, steps = _far_way(engine, traveller)
    mind = _mind(scripted, traveller.name, goal)
    engine.default_mind, engine.minds = mind, {}
    return traveller, goal, steps, mind

async def test_a_traveller_takes_no_turns_on_the_way_and_is_told_it_arrived(
    scripted, make_engine
) -> None:
    assert "taking no turns" in JOURNEY and "one cell a tick" in JOURNEY
    async with make_engine(scripted()) as engine:
        traveller, goal, steps, mind = _sent_off(engine, scripted)
        name = traveller.name
        ctx = await engine.tick_once()  # tick 0: it sets out, from where it stands
        assert [a.tool for a in ctx.turn_results[name].actions] == ["journey"]
        assert engine.sim.agents.require(name).position == traveller.position
        path = engine.sim.agents.require(name).journey.path
        assert len(path) == steps + 1 and path[0] == traveller.position

        for tick in range(1, steps + 1):  # one cell a tick, and no turn of its own
            ctx = await engine.tick_once()
            here = engine.sim.agents.require(name).position
            assert here == path[tick], tick
            if tick < steps:
                assert name not in ctx.turn_results and len(_turns_of(mind, name)) == 1, tick

        # It arrived at tick `steps` and acts that very tick; its turn tells it so.
        assert engine.sim.agents.require(name).position == goal
        assert len(_turns_of(mind, name)) == 2
        told = _turns_of(mind, name)[-1]
        assert told.tick == steps
        ticks = told.tick - 0
        expected = (f"Your journey is over: you arrived at ({goal.x}, {goal.y}) after "
                    f"{ticks} ticks on the road.")
        assert told.perception.journey_text == expected
        assert expected in told.perception.as_text()
        # Told once: the turn after does not tell it again.
        await engine.tick_once()
        assert _turns_of(mind, name)[-1].perception.journey_text is None


async def test_someone_coming_into_view_stops_the_journey_and_the_traveller_is_told(
    scripted, make_engine
) -> None:
    assert "someone comes into view" in JOURNEY
    async with make_engine(scripted()) as engine:
        traveller, goal, steps, mind = _sent_off(engine, scripted)
        name = traveller.name
        await engine.tick_once()  # sets out
        await engine.tick_once()  # one step
        here = engine.sim.agents.require(name)
        remaining = here.journey.remaining
        visitor = next(a.name for a in engine.sim.agents.get_all_agents() if a.name != name)
        world, radius = engine.sim.world, engine.sim.world.vision_radius()
        near = next(Position(here.position.x + dx, here.position.y + dy)
                    for dx in range(-radius + 1, radius) for dy in range(-radius + 1, radius)
                    if world.in_bounds(Position(here.position.x + dx, here.position.y + dy))
                    and world.is_passable(Position(here.position.x + dx, here.position.y + dy))
                    and Position(here.position.x + dx, here.position.y + dy) not in
                    here.journey.path)
        engine.sim.agents.update_position(visitor, near)

        ctx = await engine.tick_once()  # tick 2: a step, then the visitor is in view
        assert name in ctx.interrupted and name in ctx.turn_results
        told = _turns_of(mind, name)[-1]
        stood = engine.sim.agents.require(name).position
        assert told.tick == 2 and stood != goal
        assert told.perception.journey_text == (
            f"Your journey to ({goal.x}, {goal.y}) stopped at ({stood.x}, {stood.y}) after 2 "
            f"ticks on the road, {remaining - 1} steps short of it: {visitor} came into view.")


async def test_a_wall_across_the_way_stops_the_journey_and_the_traveller_is_told(
    scripted, make_engine
) -> None:
    assert "the way is blocked" in JOURNEY
    async with make_engine(scripted()) as engine:
        traveller, goal, steps, mind = _sent_off(engine, scripted)
        name = traveller.name
        await engine.tick_once()  # sets out
        journey = engine.sim.agents.require(name).journey
        start, nxt = journey.path[0], journey.path[1]
        side = next(d for d in (Direction.NORTH, Direction.SOUTH, Direction.EAST,
                                Direction.WEST) if start.step(d) == nxt)
        engine.sim.world.place_wall(start, side)

        ctx = await engine.tick_once()  # tick 1: the first step is walled off
        assert name in ctx.turn_results
        told = _turns_of(mind, name)[-1]
        assert engine.sim.agents.require(name).position == start
        assert told.perception.journey_text == (
            f"Your journey to ({goal.x}, {goal.y}) stopped at ({start.x}, {start.y}) after 1 "
            f"tick on the road, {steps} steps short of it: a wall stands to the "
            f"{side.value}.")
