"""The offline mind living in a real small world: PerceptionBuilder, ActionEngine, turn loop.

The 20x20 world of the action tests (forest, stone, sand, a lake, the Spring),
with Ash and Birch side by side. Ticks run roughly as the engine runs them:
invitations lapse, sleepers wake in the morning, journeys advance and travellers
do not take turns, everyone else takes a turn through `run_turn`.
"""

from __future__ import annotations

from typing import Any

import pytest

from adapters.offline_mind import OfflineMind
from adapters.perception import PerceptionBuilder
from core.actions import ACTION_TYPES, ActionResult
from services.mind import ToolCall, TurnStart
from services.tool_input import parse_action
from services.turn_loop import run_turn
from tests.tool_calls import call_tool
from tests.unit.adapters.offline_mind.conftest import PERSONALITIES, TOOLS
from tests.unit.services.actions.conftest import make_sim

pytestmark = pytest.mark.asyncio

CAST = {"Ash": PERSONALITIES["Ember"], "Birch": PERSONALITIES["River"],
        "Cedar": PERSONALITIES["Sage"], "Dusk": PERSONALITIES["Ember"]}
TICKS = 48


async def live(ticks: int = TICKS, seed: int = 4) -> list[tuple[int, str, str, dict, bool, str]]:
    """Every call made, in order: (tick, agent, tool, arguments, success, message)."""
    sim = make_sim()
    builder = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering)
    mind = OfflineMind(seed, CAST)
    done: list[tuple[int, str, str, dict, bool, str]] = []
    for tick in range(ticks):
        sim.world.set_tick(tick)
        sim.conversations.expire_invitations(tick)
        for agent in sim.agents.get_all_agents():
            if agent.is_sleeping and not sim.world.is_night:
                sim.agents.set_sleeping(agent.name, False)
            if agent.journey is not None:
                sim.agents.advance_journey(agent.name)
        for agent in sim.agents.get_all_agents():
            if agent.is_sleeping or agent.journey is not None:
                continue
            name = agent.name

            async def execute(call: ToolCall, name: str = name, tick: int = tick) -> ActionResult:
                if call.name not in ACTION_TYPES:  # the agent's own files: not the world's
                    return ActionResult.ok("written", data={"path": call.arguments.get("path")})
                return await call_tool(sim.engine, name, call.name, call.arguments, tick)

            async def narrate(result: ActionResult, call: ToolCall) -> str:
                return result.message

            perception = builder.build(name, tick, text=False)
            log = await run_turn(mind, TurnStart(name, tick, perception, TOOLS, 8),
                                 execute, narrate)
            assert log.error is None, log.error
            done += [(tick, name, a.tool, dict(a.arguments), a.success, a.narration)
                     for a in log.actions]
    return done


def did(calls: list[tuple[int, str, str, dict, bool, str]], tool: str, who: str | None = None
        ) -> list[Any]:
    return [c for c in calls if c[2] == tool and c[4] and (who is None or c[1] == who)]


async def test_agents_live_gather_craft_build_write_and_talk() -> None:
    calls = await live()
    assert did(calls, "gather") and did(calls, "work")
    assert did(calls, "build_shelter") or did(calls, "place_wall")
    assert did(calls, "write_sign") or did(calls, "name_place")
    # Ash and Birch start side by side: one invites, the other accepts, both speak.
    assert did(calls, "invite") and did(calls, "accept_invite")
    speakers = {c[1] for c in did(calls, "speak")}
    assert len(speakers) >= 2
    assert did(calls, "sleep")


async def test_every_call_is_one_the_world_can_parse() -> None:
    for _, _, tool, args, _, _ in await live(24):
        if tool in ACTION_TYPES:
            parse_action(tool, args)  # raises ToolInputError if the mind got a shape wrong


async def test_the_world_rarely_refuses_it() -> None:
    calls = await live()
    world = [c for c in calls if c[2] in ACTION_TYPES]
    refused = [c for c in world if not c[4]]
    assert len(refused) <= 0.15 * len(world), refused[:10]


async def test_a_whole_run_is_reproducible() -> None:
    assert await live(30) == await live(30)
    assert await live(30, seed=4) != await live(30, seed=5)
