"""The compaction summary by in-world day, on a real life of 1,000 turns.

The history is made as the Claude mind makes it (a perception as the user's text, the
model's words and call, the narrated outcome as its result), from a real world: the
real perception of each tick, real tool calls through the engine, a neighbour who
talks, the template narrator. It is compacted as ModelMemory does, at the shipped
limits, after every turn.
"""

from __future__ import annotations

import functools
import random
import re

from adapters.claude_mind.compaction import SUMMARY_HEAD, compact, history_chars
from adapters.claude_mind.day_summary import Day, fit, parse, read_days
from adapters.perception import PerceptionBuilder
from core.actions import AcceptInviteAction, SpeakAction
from core.types import CARDINALS, Position
from services.narrator import NarrationContext, TemplateNarrator
from tests.tool_calls import call_tool
from tests.unit.services.actions.conftest import ASH, BIRCH, give_stuff, make_sim, put

COMPACT_ABOVE, KEEP, SUMMARY = 48_000, 8_000, 6_000
"""config/settings.yaml's claude limits."""
TURNS = 1_000
DAY_TICKS = 24
"""The test world's clock (services.world_service.Clock's default)."""


def _plan(tick: int, rng: random.Random, wall: list[str]) -> tuple[str, dict]:
    """Ash's day: walking, gathering, splitting wood, raising a wall and taking it down
    again (so it never walls itself in), inviting Birch, talking, leaving."""
    step = tick % 8
    if step == 0:
        return "walk", {"direction": rng.choice(CARDINALS).value}
    if step == 3:
        wall[:] = [rng.choice(CARDINALS).value]
        return "place_wall", {"direction": wall[0]}
    if step == 7:
        return "remove_wall", {"direction": wall[0]}
    return [("walk", {"direction": "north"}), ("gather", {}),
            ("work", {"item": "wood", "technique": "split"}), ("", {}),
            ("invite", {"invitee": BIRCH}),
            ("speak", {"message": f"Good to see you, Birch (tick {tick})."}),
            ("leave_conversation", {})][step]


@functools.cache
def life() -> tuple[list[list[dict]], list[str]]:
    """Each turn's messages, and every summary compaction made along the way."""
    return _life()


def _life() -> tuple[list[list[dict]], list[str]]:
    sim = make_sim()
    builder = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering,
                                horizon=40)
    narrator, rng, wall = TemplateNarrator(), random.Random(5), ["north"]
    history: list[dict] = []
    summary, summaries, turns = "", [], []
    import asyncio

    async def run() -> None:
        nonlocal history, summary
        for tick in range(TURNS):
            if tick % DAY_TICKS == 0:
                give_stuff(sim, ASH, wood=10, plank=8, stone=5)
                if tick % (3 * DAY_TICKS) == 0:
                    await call_tool(sim.engine, ASH, "name_place",
                                    {"place_name": f"Camp {tick // DAY_TICKS}"}, tick)
            me = sim.agents.get_agent(ASH)
            assert me is not None
            tool, args = _plan(tick, rng, wall)
            if tool == "invite":  # the neighbour comes close first
                for d in CARDINALS:
                    spot = Position(me.position.x + d.delta[0], me.position.y + d.delta[1])
                    if sim.world.in_bounds(spot) and sim.world.is_passable(spot) \
                            and not sim.agents.agents_at(spot):
                        put(sim, BIRCH, spot)
                        break
            seen = builder.build(ASH, tick).as_text()
            result = await call_tool(sim.engine, ASH, tool, args, tick)
            if tool == "invite" and result.success:
                sim.engine.execute_now(BIRCH, AcceptInviteAction(), tick)
            if tool in ("invite", "speak") and sim.conversations.is_talking(BIRCH):
                sim.engine.execute_now(
                    BIRCH, SpeakAction(f"Hello Ash, the river is west (tick {tick})."), tick)
            me = sim.agents.get_agent(ASH)
            ctx = NarrationContext(ASH, tick, me.position, "morning", sim.world.weather, tool)
            told = narrator.narrate_now(result, ctx)
            turn = [
                {"role": "user", "content": [{"type": "text", "text": seen}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": f"I will {tool} now (tick {tick})."},
                    {"type": "tool_use", "id": f"t{tick}", "name": tool, "input": args}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{tick}",
                                              "content": told, "is_error": not result.success}]},
                {"role": "assistant", "content": [{"type": "text", "text": "Done for now."}]},
            ]
            turns.append(turn)
            history = history + turn
            if history_chars(history) > COMPACT_ABOVE:
                history, summary, folded = compact(history, summary, keep_chars=KEEP,
                                                   summary_chars=SUMMARY)
                assert folded and history[0]["content"][0]["text"].startswith(SUMMARY_HEAD)
                summaries.append(summary)

    asyncio.run(run())
    return turns, summaries


def test_a_thousand_turns_keep_the_summary_within_its_limit_every_time():
    turns, summaries = life()
    assert len(turns) == TURNS and len(summaries) >= 10
    assert all(len(s) <= SUMMARY for s in summaries), max(map(len, summaries))
    before, days = parse(summaries[-1])
    numbers = [d.day for d in days]
    assert numbers == sorted(numbers) and len(numbers) >= 10, numbers
    # the oldest days left out whole are named as such, and newer ones keep more detail
    assert before and before[0].startswith("Earlier days (days 1-"), before
    sizes = [len(d.render()) for d in days]
    assert max(sizes[:-3]) < min(sizes[-3:]), sizes


def test_each_day_says_where_what_was_made_and_built_who_was_met_and_what_was_said():
    _, summaries = life()
    _, days = parse(summaries[-1])
    for day in days:
        text = day.render()
        assert re.search(r"went: \(\d+, \d+\)", text), text  # positions
        assert "met: Birch" in text, text
    recent = days[-4:-1]  # whole days at full detail
    for day in recent:
        text = day.render()
        assert re.search(r"made: \d+ plank", text), text
        assert re.search(r"built: .*you (raise|take down) .*wall", text), text
        assert "heard: Birch: Hello Ash, the river is west" in text, text
        assert "you said: Good to see you, Birch" in text, text
    assert any("Camp " in d.render() for d in days)  # a named place, where it was named


def test_what_was_said_is_quoted_as_it_was_never_reworded():
    turns, summaries = life()
    said = {t[1]["content"][1]["input"]["message"] for t in turns
            if t[1]["content"][1]["name"] == "speak"}
    _, days = parse(summaries[-1])
    quoted = [i.removesuffix(" (to Birch)") for d in days for i in d.items["said"]]
    assert quoted and all(q in said or (q.endswith("…") and any(s.startswith(q[:-1])
                                                                 for s in said))
                          for q in quoted)


def test_a_day_folded_in_two_parts_is_one_entry():
    turns, _ = life()
    first = [m for t in turns[:12] for m in t]
    second = [m for t in turns[12:DAY_TICKS] for m in t]
    whole = fit([], read_days(first + second), 50_000)
    before, parts = parse(fit([], read_days(first), 50_000))
    from adapters.claude_mind.day_summary import merge
    joined = fit(before, merge(parts, read_days(second, parts[-1].day)), 50_000)
    assert joined == whole and joined.count("Day 1:") == 1


def test_a_summary_too_small_for_one_day_keeps_its_newest_lines():
    day = Day(3)
    for n in range(200):
        day.add("heard", f"Birch: line {n}")
    text = fit([], [day], 500)
    assert len(text) <= 500 and "Day 3:" in text


def test_an_older_summary_without_days_goes_first():
    old = "\n".join(f"* It is day 1, tick {n}." for n in range(100))
    turns, _ = life()
    days = read_days([m for t in turns[:30] for m in t])
    alone = fit([], days, 50_000)
    before, parsed = parse(old)
    assert before == old.splitlines() and parsed == []
    new = fit(before, days, len(alone) + 200)
    assert new.endswith(alone) and "tick 99." in new and "tick 0." not in new
