"""Tool descriptions pinned to what the engine does (issue 27, "Truthful tools").

Each claim a description makes is checked against the real engine on a real world:
the per-turn action limit the descriptions name is the configured one, every call
counts toward it (the tools that change nothing too), and the results say how many
calls are left once they run low; `work` names exactly the techniques the engine
accepts; `gather` names exactly what each kind of ground gives. Journeys are checked
in test_journey_news.py.
"""

from __future__ import annotations

import dataclasses
import re

from core.types import Direction
from services.crafting_request import TECHNIQUES
from services.mind import TurnStart
from services.turn_loop import LIMIT_TEXT, LOW_ACTIONS, actions_left_text
from tests.tool_calls import call_tool

FREE_LOOKING = ("examine", "sense_others", "read_sign", "write_sign")
"""The tools that once said "costs nothing": each now names the limit instead."""


def _with_limit(config, limit: int):
    scheduling = config.settings.scheduling.model_copy(update={"max_actions_per_turn": limit})
    settings = config.settings.model_copy(update={"scheduling": scheduling})
    return dataclasses.replace(config, settings=settings)


async def test_the_limit_named_is_the_configured_one_and_every_call_counts(
    scripted, make_engine, config
) -> None:
    limit = 5
    mind = scripted(lambda start: [("examine", {})] * (limit + 2))
    async with make_engine(mind, config=_with_limit(config, limit)) as engine:
        said = {s.name: s.description for s in engine.tools}
        for name in FREE_LOOKING:
            assert f"one of the {limit} you may make in a turn" in said[name], name
        numbers = {int(n) for name in FREE_LOOKING
                   for n in re.findall(r"one of the (\d+) you may make", said[name])}
        assert numbers == {limit}
        assert not any("costs nothing" in d.lower() for d in said.values())
        before = {a.name: (a.position, a.inventory) for a in engine.sim.agents.get_all_agents()}
        ctx = await engine.tick_once()
        after = {a.name: (a.position, a.inventory) for a in engine.sim.agents.get_all_agents()}
    assert before == after  # examine changed nothing...
    for name, result in ctx.turn_results.items():  # ...and yet counted, every call
        assert len(result.actions) == limit and result.ended == "action_limit", name
        assert not any(a.events for a in result.actions)


async def test_results_say_how_many_calls_are_left_once_they_run_low(
    scripted, make_engine, config
) -> None:
    limit = 6
    mind = scripted(lambda start: [("sense_others", {})] * (limit + 1))
    async with make_engine(mind, config=_with_limit(config, limit)) as engine:
        turns: dict[str, list] = {}
        original = mind.begin

        def begin(start: TurnStart):
            turn = original(start)
            turns[start.agent] = turn
            return turn

        mind.begin = begin
        ctx = await engine.tick_once()
    for name, turn in turns.items():
        heard = [o.text for o in turn.heard]
        assert len(heard) == limit + 1, name
        records = ctx.turn_results[name].actions
        for i, text in enumerate(heard[:limit]):
            left = limit - (i + 1)
            assert text.startswith(records[i].narration)  # the narration, as recorded
            if left > LOW_ACTIONS:
                assert text == records[i].narration
            else:
                assert text.endswith(actions_left_text(left, limit)), (i, text)
        assert f"{LOW_ACTIONS} of your {limit} tool calls this turn left" in heard[limit - 4]
        assert f"last of the {limit} tool calls" in heard[limit - 1]
        assert heard[limit] == LIMIT_TEXT  # past the limit: not run
        assert len(records) == limit


async def test_work_names_exactly_the_techniques_the_engine_accepts(
    scripted, make_engine
) -> None:
    async with make_engine(scripted(rounds=0)) as engine:
        spec = next(s for s in engine.tools if s.name == "work")
        actions = engine.sim.engine
        agent = sorted(a.name for a in engine.sim.agents.get_all_agents())[0]
        engine.sim.agents.add_resource(agent, "wood", 20)
        candidates = set(TECHNIQUES) | {
            "chop", "cut", "polish", "bend", "knot", "sharpen", "smash", "sand", "whittle",
            "braid", "mould", "mold", "scrape", "saw", "hammer", "dig", "fold", "tie"}
        accepted = set()
        for word in sorted(candidates):
            result = await call_tool(actions, agent, "work",
                                                {"item": "wood", "technique": word}, 0)
            if "unknown technique" not in result.message:
                accepted.add(word)
        named = set(re.findall(r"[a-z]+", spec.description)) & candidates
        assert accepted == set(TECHNIQUES) == named
        assert spec.input_schema["properties"]["technique"]["enum"] == list(TECHNIQUES)
        # And none is named in vain: each has a recipe in the engine's book.
        used = {r.technique for r in actions.crafting.recipes if r.action == "work"}
        assert used == set(TECHNIQUES)


async def test_gather_names_what_each_kind_of_ground_gives(scripted, make_engine, config) -> None:
    async with make_engine(scripted(rounds=0)) as engine:
        text = next(s.description for s in engine.tools if s.name == "gather")
        gives = {terrain.value: spec.gather for terrain, spec in config.terrain.terrains.items()
                 if spec.gather}
        kinds = {terrain.value for terrain in config.terrain.terrains}
        said = {ground: what for ground, what in re.findall(r"(\w+) gives (\w+)", text)
                if ground in kinds}
        assert said == gives


async def test_a_travellers_refusal_says_what_is_true_for_the_rest_of_its_turn(
    scripted, make_engine
) -> None:
    """Once on its way, hands-and-feet actions are refused this turn; looking and talking
    are not (and from the next tick the traveller has no turns at all)."""
    async with make_engine(scripted(rounds=0)) as engine:
        agents = engine.sim.agents
        name = sorted(a.name for a in agents.get_all_agents())[0]
        here = agents.require(name).position
        goal = next(here.step(d) for d in (Direction.NORTH, Direction.SOUTH, Direction.EAST,
                                           Direction.WEST)
                    if engine.sim.world.in_bounds(here.step(d))
                    and engine.sim.world.is_passable(here.step(d)))
        started = await call_tool(engine.sim.engine, name, "journey",
                                  {"destination": {"x": goal.x, "y": goal.y}}, 0)
        assert started.success
        refused = await call_tool(engine.sim.engine, name, "walk", {"direction": "north"}, 0)
        assert not refused.success and "for the rest of this turn" in refused.message.lower()
        looked = await call_tool(engine.sim.engine, name, "examine", {}, 0)
        sensed = await call_tool(engine.sim.engine, name, "sense_others", {}, 0)
        assert looked.success and sensed.success
