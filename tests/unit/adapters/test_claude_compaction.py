"""Compaction: the oldest whole turns fold into a bounded summary; nothing sent grows forever."""

from __future__ import annotations

import json

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind.compaction import SUMMARY_HEAD, compact, history_chars
from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import ToolCall, TurnStart
from services.tool_specs import tool_specs
from services.turn_loop import run_turn
from tests.fake_anthropic import ScriptedApi, reply, text, tool_use

EMBER = AgentName("Ember")


def turn_messages(n: int) -> list[dict]:
    """One whole turn: perception, a call, its result, a closing word."""
    return [
        {"role": "user",
         "content": [text(f"It is day 1, tick {n}.\nGrass all around " + "·" * 200)]},
        {"role": "assistant", "content": [text(f"Walking on, turn {n}."),
                                          tool_use("walk", f"t{n}", direction="north")]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                      "content": f"you walk north ({n})"}]},
        {"role": "assistant", "content": [text(f"Done with {n}.")]},
    ]


def life(turns: int) -> list[dict]:
    return [m for n in range(turns) for m in turn_messages(n)]


def test_the_oldest_whole_turns_fold_into_a_summary_that_opens_the_first_kept_message():
    history = life(30)
    kept, summary, folded = compact(history, "", keep_chars=3_000, summary_chars=50_000)
    assert folded > 0 and folded % 4 == 0  # whole turns only
    assert kept[1:] == history[folded + 1:]
    first = kept[0]
    assert first["role"] == "user" and first["content"][0]["text"].startswith(SUMMARY_HEAD)
    assert first["content"][1:] == history[folded]["content"]
    assert [m["role"] for m in kept] == ["user", "assistant"] * (len(kept) // 2)
    assert summary.startswith("Day 1:\n") and "  did: walk ×" in summary
    assert "you thought: Walking on, turn 21. · Done with 21." in summary  # the newest ten
    assert "Done with 25. · (+42 more)" in summary  # and how many more are on record
    assert history_chars(kept) < 3_000 + len(summary) + history_chars(turn_messages(0)) + 500


def test_a_second_compaction_extends_the_summary_without_nesting_it():
    kept, summary, _ = compact(life(30), "", keep_chars=3_000, summary_chars=50_000)
    kept = kept + [m for n in range(30, 60) for m in turn_messages(n)]
    again, summary2, folded = compact(kept, summary, keep_chars=3_000, summary_chars=50_000)
    assert folded > 0 and summary2.startswith("Day 1:\n  you thought: Walking on, turn 51.")
    assert "(+102 more)" in summary2  # 42 before, and 60 more thoughts folded since
    assert summary2.count("Day 1:") == 1  # the same day, told in two parts, is one entry
    assert "turn 55." in summary2 and SUMMARY_HEAD not in summary2
    walks = int(summary2.split("walk ×")[1].split()[0])
    assert walks == folded // 4 + int(summary.split("walk ×")[1].split()[0])
    heads = [b for m in again for b in m["content"]
             if b.get("type") == "text" and b["text"].startswith(SUMMARY_HEAD)]
    assert len(heads) == 1


def test_the_summary_keeps_its_newest_lines_within_its_limit():
    _, summary, _ = compact(life(100), "", keep_chars=2_000, summary_chars=1_500)
    assert len(summary) <= 1_500
    assert "turn 0." not in summary and "turn 9" in summary and "(+" in summary


def test_a_history_within_the_limit_is_left_alone():
    history = life(3)
    assert compact(history, "s", keep_chars=100_000, summary_chars=1_000) == (history, "s", 0)


def _perception(tick: int) -> Perception:
    return Perception(
        agent=EMBER, tick=tick, position=Position(5, 5), time_text=f"day 1, tick {tick}",
        period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="· @ ·",
        narrative="Grass all around you. " * 20, inventory_text="You carry nothing.",
        journey_text=None, visible_agents_text="", conversation_text=None,
        invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
        standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
        in_conversation_with=(), pending_invitation_from=None,
    )


async def test_requests_stop_growing_once_compaction_starts():
    def model(body: dict) -> dict:
        if body["messages"][-1]["content"][-1]["type"] == "text":
            return reply(text("On."), tool_use("walk", direction="north"))
        return reply(text("Rest."))

    api = ScriptedApi(otherwise=model)
    mind = ClaudeMind(api.client(), {"Ember": ClaudeProfile("m", "You are curious.")},
                      compact_above_chars=12_000, keep_recent_chars=4_000,
                      summary_max_chars=2_000)

    async def execute(call: ToolCall) -> ActionResult:
        return ActionResult.ok("you walk north")

    async def narrate(result: ActionResult, call: ToolCall) -> str:
        return "The grass bends under your feet; you walk north one step."

    records = []
    for tick in range(150):
        log = await run_turn(mind, TurnStart(EMBER, tick, _perception(tick), tool_specs(), 8),
                             execute, narrate)
        records.append(log.record)
    sizes = [len(json.dumps(b["messages"])) for b in api.requests[::2]]
    assert sizes[10] > 5 * sizes[0]  # it grew at first...
    assert max(sizes[75:]) <= max(sizes[25:75]) + 2_000  # ...then stopped growing
    assert max(sizes) < 12_000 + 5_000
    assert sum(1 for r in records if r.get("folded")) >= 3
    state = mind.get_state(EMBER)
    assert state["summary"] and state["messages"][0]["content"][0]["text"].startswith(SUMMARY_HEAD)


async def test_a_prompt_too_long_for_the_model_is_compacted_before_the_next_turn():
    calls = {"n": 0}

    def model(body: dict) -> object:
        calls["n"] += 1
        if calls["n"] == 61:  # the 31st turn's first request: the context is full
            from tests.fake_anthropic import error
            return error(400, "invalid_request_error",
                         "prompt is too long: 210000 tokens > 200000 maximum")
        if body["messages"][-1]["content"][-1]["type"] == "text":
            return reply(text("On."), tool_use("walk", direction="north"))
        return reply(text("Rest."))

    api = ScriptedApi(otherwise=model)
    mind = ClaudeMind(api.client(), {"Ember": ClaudeProfile("m", "You are curious.")},
                      compact_above_chars=1_000_000, keep_recent_chars=6_000,
                      summary_max_chars=2_000)

    async def execute(call: ToolCall) -> ActionResult:
        return ActionResult.ok("you walk north")

    async def narrate(result: ActionResult, call: ToolCall) -> str:
        return "you walk north"

    logs = []
    for tick in range(32):
        logs.append(await run_turn(mind, TurnStart(EMBER, tick, _perception(tick),
                                                   tool_specs(), 8), execute, narrate))
    assert logs[30].ended == "error" and "prompt is too long" in (logs[30].error or "")
    assert logs[31].record.get("folded")  # far below compact_above_chars, yet compacted
    after = api.requests[-2]["messages"]
    assert after[0]["content"][0]["text"].startswith(SUMMARY_HEAD)
    assert len(json.dumps(after)) < len(json.dumps(api.requests[-3]["messages"])) / 2


def later_turn_messages(n: int) -> list[dict]:
    """A turn under `claude.results_next_turn`: its perception follows the last turn's
    results in one message, and it ends on a call whose result opens the next turn."""
    opening = [{"type": "tool_result", "tool_use_id": f"t{n - 1}",
                "content": f"you walk north ({n - 1})"}] if n else []
    return [
        {"role": "user", "content": [*opening, text(f"It is day 1, tick {n}.\nGrass all "
                                                    "around " + "·" * 200)]},
        {"role": "assistant", "content": [text(f"Walking on, turn {n}."),
                                          tool_use("walk", f"t{n}", direction="north")]},
    ]


def test_results_that_opened_a_turn_fold_with_the_calls_they_answer():
    """Issue 42: a cut where a turn opens with the last turn's results moves them into
    the summary too, so the first kept message answers no folded call, and the day's
    deeds are all told."""
    history = [m for n in range(30) for m in later_turn_messages(n)]
    kept, summary, folded = compact(history, "", keep_chars=3_000, summary_chars=50_000)
    assert folded > 0 and folded % 2 == 0
    first = kept[0]
    assert not any(b["type"] == "tool_result" for b in first["content"])
    assert first["content"][0]["text"].startswith(SUMMARY_HEAD)
    assert first["content"][1:] == [b for b in history[folded]["content"]
                                    if b["type"] != "tool_result"]
    assert kept[1:] == history[folded + 1:]
    walked = folded // 2  # every folded turn walked, and each walk's result was folded
    assert f"did: walk ×{walked}" in summary, summary
