"""Hand-built perceptions and a scripted world for the offline mind's tests.

`perceive(...)` makes a Perception the way the PerceptionBuilder would (cells
row by row over the vision square), from a few keyword arguments. `play(...)`
runs one turn through the real turn loop (services/turn_loop.run_turn) with an
`execute` callable standing in for the world.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from config import load_config
from core.actions import ActionResult
from core.perception import Perception, SeenAgent, SeenCell, SeenLandmark, SeenObject
from core.terrain import Terrain, Weather
from core.types import AgentName, Direction, Position
from services.mind import ToolCall, ToolSpec, TurnStart
from services.tool_specs import tool_specs
from services.turn_loop import TurnLog, run_turn

PERSONALITIES: dict[str, str] = {a.name: a.personality for a in load_config(None).agents.agents}
EMBER, SAGE, RIVER = AgentName("Ember"), AgentName("Sage"), AgentName("River")
FILE_SPECS = tuple(ToolSpec(n, n, {}) for n in
                   ("read_file", "write_file", "append_file", "list_files", "edit_file"))
TOOLS: tuple[ToolSpec, ...] = tuple(tool_specs()) + FILE_SPECS
GATHER = {Terrain.FOREST: "wood", Terrain.STONE: "stone", Terrain.SAND: "clay",
          Terrain.GRASS: "grass"}
PERIODS = {"morning": 9, "afternoon": 14, "evening": 19, "night": 23}

Cell = tuple[Terrain, bool]


def cells_around(
    at: tuple[int, int], radius: int = 3, ground: Terrain = Terrain.GRASS,
    paint: Mapping[tuple[int, int], Terrain] | None = None,
    spent: Iterable[tuple[int, int]] = (),
) -> tuple[SeenCell, ...]:
    """The vision square around `at`, row by row; `paint` changes single cells."""
    paint = paint or {}
    spent = set(spent)
    out = []
    for y in range(at[1] - radius, at[1] + radius + 1):
        for x in range(at[0] - radius, at[0] + radius + 1):
            terrain = paint.get((x, y), ground)
            resource = None if (x, y) in spent else GATHER.get(terrain)
            out.append(SeenCell(Position(x, y), terrain, resource, terrain is not Terrain.WATER))
    return tuple(out)


def seen_agent(name: str, at: tuple[int, int], me: tuple[int, int], **kw: Any) -> SeenAgent:
    pos = Position(*at)
    return SeenAgent(AgentName(name), pos, Position(*me).direction_to(pos),
                     abs(at[0] - me[0]) + abs(at[1] - me[1]), **kw)


def landmark(name: str, at: tuple[int, int], me: tuple[int, int]) -> SeenLandmark:
    pos = Position(*at)
    return SeenLandmark(name, "spring", pos, Position(*me).direction_to(pos),
                        abs(at[0] - me[0]) + abs(at[1] - me[1]))


def sign(at: tuple[int, int], me: tuple[int, int]) -> SeenObject:
    pos = Position(*at)
    return SeenObject("sign", pos, Position(*me).direction_to(pos),
                      abs(at[0] - me[0]) + abs(at[1] - me[1]))


def perceive(
    agent: str = "Ember", tick: int = 1, at: tuple[int, int] = (50, 50), *,
    period: str = "morning", day: int = 1, cells: tuple[SeenCell, ...] | None = None,
    agents: tuple[SeenAgent, ...] = (), landmarks: tuple[SeenLandmark, ...] = (),
    objects: tuple[SeenObject, ...] = (), inventory: Mapping[str, int] | None = None,
    pending: str | None = None, talking: tuple[str, ...] = (), on_journey: bool = False,
    inside: bool = False,
) -> Perception:
    cells = cells if cells is not None else cells_around(at)
    here = next((c.terrain for c in cells if (c.position.x, c.position.y) == at),
                Terrain.GRASS)
    return Perception(
        agent=AgentName(agent), tick=tick, position=Position(*at),
        time_text=f"day {day}, {PERIODS[period]:02d}:00 ({period})", period=period,
        weather=Weather.CLEAR, vision_radius=3, grid_view="", narrative="",
        inventory_text="", journey_text=None, visible_agents_text="",
        conversation_text=None, invitation_text=None, cells=cells, agents=agents,
        landmarks=landmarks, objects=objects,
        inventory=tuple(sorted((inventory or {}).items())), standing_on=here,
        inside_structure=inside, on_journey=on_journey,
        in_conversation_with=tuple(AgentName(t) for t in talking),
        pending_invitation_from=None if pending is None else AgentName(pending),
    )


def start(perception: Perception, *, max_actions: int = 8,
          tools: tuple[ToolSpec, ...] = TOOLS) -> TurnStart:
    return TurnStart(perception.agent, perception.tick, perception, tools, max_actions)


Execute = Callable[[ToolCall], ActionResult]


def succeed(call: ToolCall) -> ActionResult:
    """A world where everything works, reporting what the real engine would put in `data`."""
    args = call.arguments
    if call.name == "gather":
        return ActionResult.ok("you gather 1 wood", data={"resource": "wood", "quantity": 1,
                                                          "left": 4})
    if call.name == "walk":
        return ActionResult.ok("you walk", data={"terrain": "grass"})
    if call.name == "work":
        return ActionResult.ok("you make it", data={"output": f"worked_{args['item']}",
                                                    "quantity": 1, "discoveries": []})
    return ActionResult.ok(f"you {call.name}")


def fail(call: ToolCall) -> ActionResult:
    return ActionResult.fail(f"{call.name} cannot be done here")


async def play(mind: Any, turn_start: TurnStart, execute: Execute = succeed) -> TurnLog:
    """One turn through the real turn loop, with `execute` as the world."""

    async def run(call: ToolCall) -> ActionResult:
        return execute(call)

    async def narrate(result: ActionResult, call: ToolCall) -> str:
        return result.message

    return await run_turn(mind, turn_start, run, narrate)


def calls_of(log: TurnLog) -> list[tuple[str, dict[str, Any]]]:
    return [(a.tool, dict(a.arguments)) for a in log.actions]


def direction_of(call_args: Mapping[str, Any]) -> Direction:
    return Direction.parse(call_args.get("direction", "down"))
