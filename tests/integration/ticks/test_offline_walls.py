"""An offline agent shut in a shelter with one door never walks into its walls.

The perception hands the offline mind the walls and doors in view (as the text's map
shows them), so it never chooses a step a wall without a door blocks: before, it
learnt a wall only by walking into it, tick after tick.
"""

from __future__ import annotations

from pathlib import Path

from adapters.offline_mind import OfflineMind
from core.failures import FailureReason as R
from core.types import Direction, Position
from storage import Storage

TICKS = 60


def _walled(result, radius: int) -> bool:
    """A walk refused by a wall, or stopped part of the way by one it could see when it
    set out (`radius`: how far it saw; a wall further on was not on its map)."""
    if not result.success:
        return result.reason == R.WALL_IN_WAY or "wall" in result.message
    return "wall" in str(result.data.get("stopped") or "") and result.data["steps"] < radius


def _room(world, near: Position, taken: set[tuple[int, int]]) -> Position:
    """The middle of the 3x3 block of passable cells nearest `near`, clear of the edge
    and of the cells in `taken`."""
    best = None
    for y in range(2, world.height - 2):
        for x in range(2, world.width - 2):
            if all(world.is_passable(Position(x + dx, y + dy)) and (x + dx, y + dy) not in taken
                   for dy in (-1, 0, 1) for dx in (-1, 0, 1)):
                far = abs(x - near.x) + abs(y - near.y)
                if best is None or far < best[0]:
                    best = (far, Position(x, y))
    assert best is not None
    return best[1]


def _shut_in(sim, name: str, taken: set[tuple[int, int]]) -> Position:
    """Walls round a 3x3 room about `name` (moved there), with one door (north of the top
    middle cell); returns the room's middle. The room and a cell round it join `taken`."""
    world = sim.world
    middle = _room(world, sim.agents.require(name).position, taken)
    sim.agents.update_position(name, middle)
    taken.update((middle.x + dx, middle.y + dy) for dy in range(-2, 3) for dx in range(-2, 3))
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            cell = Position(middle.x + dx, middle.y + dy)
            for way, out in ((Direction.NORTH, dy == -1), (Direction.SOUTH, dy == 1),
                             (Direction.WEST, dx == -1), (Direction.EAST, dx == 1)):
                if out:
                    world.place_wall(cell, way)
    world.place_door(Position(middle.x, middle.y - 1), Direction.NORTH)
    return middle


async def test_an_offline_agent_in_a_shelter_never_walks_into_its_walls(
    small_world: Path, make_engine,
) -> None:
    async with Storage(small_world) as storage:
        seed = (await storage.world.get_world_state()).seed
        people = {a.name: a.personality for a in await storage.agents.get_all_agents()}
    mind = OfflineMind(seed, people)
    async with make_engine(mind) as engine:
        sim = engine.sim
        taken: set[tuple[int, int]] = set()
        for agent in sim.agents.get_all_agents():  # every one shut in a shelter of its own
            taken.update((agent.position.x + dx, agent.position.y + dy)
                         for dy in range(-2, 3) for dx in range(-2, 3))
        for name in sorted(people):
            _shut_in(sim, name, taken)
        walks: list[tuple[str, int, str, object, int]] = []
        tools = engine.turn_tools
        execute = tools.execute

        async def watched(agent, tick, call):
            radius = sim.world.vision_radius()
            result = await execute(agent, tick, call)
            if call.name == "walk":
                walks.append((str(agent), tick, str(call.arguments), result, radius))
            return result

        tools.execute = watched
        for _ in range(TICKS):
            await engine.tick_once()

    assert len(walks) >= 5, "the agents hardly walked: the test shows nothing"
    into_walls = [(who, tick, args, result.message) for who, tick, args, result, radius in walks
                  if _walled(result, radius)]
    assert into_walls == []
