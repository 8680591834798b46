"""ClaudeMind over the real anthropic SDK, with only the network scripted (httpx2.MockTransport).

Turns run through the real turn loop (services/turn_loop.run_turn); the world is
a small `execute` that answers each call, so what is checked is the mind: what it
sends, what it makes of every stop reason and failure, and the history it keeps.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from adapters.claude_calls import CallPolicy
from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind.history import NOT_RUN, SILENCE, cut_off_note
from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import ToolCall, TurnStart
from services.tool_specs import tool_specs
from services.turn_loop import ACTION_LIMIT, ENDED, LIMIT_TEXT, MIND_ERROR, TurnLog, run_turn
from tests.fake_anthropic import ScriptedApi, error, reply, text, tool_use

EMBER = AgentName("Ember")
PERSONALITY = "You are curious and restless, happiest with your hands busy."
TOOLS = tool_specs()


def perception(tick: int = 1, note: str = "") -> Perception:
    return Perception(
        agent=EMBER, tick=tick, position=Position(5, 5), time_text=f"day 1, tick {tick}",
        period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="· · @ · ·",
        narrative=f"Grass all around you.{note}", inventory_text="You carry nothing.",
        journey_text=None, visible_agents_text="", conversation_text=None,
        invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
        standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
        in_conversation_with=(), pending_invitation_from=None,
    )


def unmarked(messages: list[dict]) -> list[dict]:
    """Messages without their cache breakpoints."""
    out = json.loads(json.dumps(messages))
    for message in out:
        for block in message["content"]:
            block.pop("cache_control", None)
    return out


def make_mind(api: ScriptedApi, **kw: Any) -> ClaudeMind:
    kw.setdefault("policy", CallPolicy(retries=0))
    return ClaudeMind(api.client(), {"Ember": ClaudeProfile("claude-test", PERSONALITY)}, **kw)


class World:
    """Stands in for the engine's execute/narrate: walking works, anything else fails."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    async def execute(self, call: ToolCall) -> ActionResult:
        self.calls.append(call)
        if call.name == "walk":
            return ActionResult.ok(f"you walk {call.arguments.get('direction')}")
        return ActionResult.fail(f"{call.name} is not possible here")

    async def narrate(self, result: ActionResult, call: ToolCall) -> str:
        return f"[{call.name}] {result.message}"


async def turn(mind: ClaudeMind, world: World, tick: int = 1, max_actions: int = 8) -> TurnLog:
    start = TurnStart(EMBER, tick, perception(tick), TOOLS, max_actions)
    return await run_turn(mind, start, world.execute, world.narrate)


def roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


async def test_a_tool_call_is_run_and_its_narrated_result_goes_back_before_the_turn_ends():
    api = ScriptedApi([reply(text("North it is."), tool_use("walk", "tu_1", direction="north")),
                       reply(text("The light is good."))])
    world = World()
    log = await turn(make_mind(api), world)

    assert [c.name for c in world.calls] == ["walk"]
    assert log.ended == ENDED and log.error is None
    assert [a.narration for a in log.actions] == ["[walk] you walk north"]
    first, second = api.requests
    assert first["model"] == "claude-test"
    assert "Grass all around you." in first["messages"][-1]["content"][0]["text"]
    assert second["messages"][-1] == {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": "tu_1", "content": "[walk] you walk north",
        "cache_control": {"type": "ephemeral"}}]}
    assert roles(second["messages"]) == ["user", "assistant", "user"]


async def test_every_result_of_one_reply_goes_back_in_one_message_failures_marked():
    api = ScriptedApi([
        reply(tool_use("walk", "a", direction="east"), tool_use("gather", "b", direction="down"),
              tool_use("no_such_tool", "c")),
        reply(text("Hm.")),
    ])
    world = World()
    await turn(make_mind(api), world)

    results = api.requests[1]["messages"][-1]["content"]
    assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [
        ("a", False), ("b", True), ("c", True)]
    assert results[2]["content"] == "[no_such_tool] no_such_tool is not possible here"


async def test_the_system_prompt_and_tools_are_the_agents_and_the_worlds():
    api = ScriptedApi([reply(text("I rest."))])
    await turn(make_mind(api), World())

    sent = api.requests[0]
    assert [t["name"] for t in sent["tools"]] == [s.name for s in TOOLS]
    assert sent["tools"][0]["input_schema"] == json.loads(json.dumps(TOOLS[0].input_schema))
    system = sent["system"][0]
    assert system["text"].startswith("You are Ember.")
    assert PERSONALITY in system["text"] and "no task is set for you" in system["text"]
    assert system["cache_control"] == {"type": "ephemeral"}


async def test_a_turn_may_end_without_any_action():
    api = ScriptedApi([reply(text("I sit and watch the clouds."))])
    world = World()
    log = await turn(make_mind(api), world)
    assert world.calls == [] and log.actions == () and log.ended == ENDED
    assert len(api.requests) == 1


async def test_each_request_begins_with_the_bytes_of_the_one_before():
    """Append-only history: request n+1 starts with request n's messages (but for the
    breakpoints, which mark where to cache and are not part of what is cached:
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching), and tools
    and system never change."""
    api = ScriptedApi()
    mind = make_mind(api)
    for tick in range(1, 4):
        api.add(reply(tool_use("walk", direction="north")), reply(text("On I go.")))
        await turn(mind, World(), tick=tick)
    assert len(api.requests) == 6
    for before, after in zip(api.requests, api.requests[1:], strict=False):
        assert after["tools"] == before["tools"] and after["system"] == before["system"]
        kept = unmarked(before["messages"])
        assert len(after["messages"]) > len(kept)
        assert unmarked(after["messages"])[:len(kept)] == kept
        assert roles(after["messages"])[::2] == ["user"] * len(after["messages"][::2])


async def test_max_tokens_keeps_the_words_and_runs_no_cut_off_call():
    """The cut call is neither run nor sent back; a note says so, and the model is asked
    once more within the turn (tests/unit/adapters/test_claude_cut_off.py: the strict API)."""
    api = ScriptedApi([
        reply(text("I will walk"), tool_use("walk", "cut", direction="no"), stop="max_tokens"),
        reply(text("Another day.")),
        reply(text("Morning.")),
    ])
    mind, world = make_mind(api), World()
    log = await turn(mind, world)
    assert world.calls == [] and log.ended == ENDED
    history = mind.get_state(EMBER)["messages"]
    assert history[1] == {"role": "assistant", "content": [text("I will walk")]}
    assert roles(history) == ["user", "assistant", "user", "assistant"]
    assert history[2]["content"] == [text(cut_off_note("max_tokens", ["walk"]))]
    assert unmarked(api.requests[1]["messages"]) == history[:3]
    await turn(mind, world, tick=2)  # the history is still one the API takes
    assert roles(api.requests[2]["messages"]) == ["user", "assistant", "user", "assistant",
                                                  "user"]


async def test_a_refusal_ends_the_turn_and_leaves_no_trace_in_the_history():
    api = ScriptedApi([reply(stop="refusal"), reply(text("Morning."))])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.actions == () and log.record["stop"] == "refusal"
    assert mind.get_state(EMBER)["messages"] == []
    await turn(mind, World(), tick=2)
    assert roles(api.requests[1]["messages"]) == ["user"]


async def test_an_empty_reply_is_kept_as_silence_so_the_history_stays_sendable():
    api = ScriptedApi([reply(text("  ")), reply(text("Hello."))])
    mind = make_mind(api)
    await turn(mind, World())
    assert mind.get_state(EMBER)["messages"][-1]["content"] == [text(SILENCE)]


@pytest.mark.parametrize("fault", [
    error(500, "api_error", "Internal server error"),
    error(529, "overloaded_error", "Overloaded"),
    error(429, "rate_limit_error", "Slow down", **{"retry-after": "0"}),
])
async def test_a_request_that_fails_for_good_ends_the_turn_with_the_cause(fault):
    api = ScriptedApi([fault])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.ended == MIND_ERROR
    assert f"the API answered {fault.status_code}" in (log.error or "")
    assert mind.get_state(EMBER)["messages"] == []  # as if never asked


async def test_a_failure_after_actions_keeps_them_and_their_results():
    api = ScriptedApi([reply(tool_use("walk", "w", direction="west")),
                       error(500, "api_error", "boom")])
    mind, world = make_mind(api), World()
    log = await turn(mind, world)
    assert log.ended == MIND_ERROR and [a.tool for a in log.actions] == ["walk"]
    history = mind.get_state(EMBER)["messages"]
    assert roles(history) == ["user", "assistant", "user"]
    assert history[-1]["content"][0]["tool_use_id"] == "w"
    api.add(reply(text("Where was I?")))
    await turn(mind, world, tick=2)  # the perception joins the unanswered results
    assert roles(api.requests[-1]["messages"]) == ["user", "assistant", "user"]
    assert api.requests[-1]["messages"][-1]["content"][-1]["type"] == "text"


async def test_a_request_is_retried_by_the_minds_policy():
    api = ScriptedApi([error(529, "overloaded_error", "Overloaded", **{"retry-after": "0"}),
                       reply(text("Fine now."))])
    mind = make_mind(api, policy=CallPolicy(retries=2))
    log = await turn(mind, World())
    assert log.ended == ENDED and len(api.requests) == 2


async def test_a_dropped_connection_is_a_clear_error():
    import httpx2
    api = ScriptedApi([httpx2.ConnectError("no route")])
    log = await turn(make_mind(api), World())
    assert log.ended == MIND_ERROR and "could not reach the API" in (log.error or "")


async def test_calls_past_the_action_limit_are_answered_not_run():
    api = ScriptedApi([reply(*(tool_use("walk", f"w{i}", direction="north") for i in range(3)))])
    mind, world = make_mind(api), World()
    log = await turn(mind, world, max_actions=2)
    assert log.ended == ACTION_LIMIT and len(world.calls) == 2
    results = mind.get_state(EMBER)["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["w0", "w1", "w2"]
    assert results[2]["content"] == LIMIT_TEXT and results[2]["is_error"] is True


async def test_the_record_holds_the_turns_messages_and_each_requests_usage():
    api = ScriptedApi([reply(tool_use("walk", direction="south"), input_tokens=1200,
                             cache_write=1100),
                       reply(text("Done."), input_tokens=1300, cache_read=1100)])
    log = await turn(make_mind(api), World())
    record = log.record
    assert [r["usage"] for r in record["requests"]] == [
        {"input": 1200, "output": 20, "cache_write": 1100, "cache_read": 0},
        {"input": 1300, "output": 20, "cache_write": 0, "cache_read": 1100}]
    assert roles(record["messages"]) == ["user", "assistant", "user", "assistant"]


async def test_state_round_trips_and_a_broken_state_starts_afresh(caplog):
    api = ScriptedApi([reply(text("Hello, world."))])
    mind = make_mind(api)
    await turn(mind, World())
    saved = json.loads(json.dumps(mind.get_state(EMBER)))
    again = make_mind(ScriptedApi())
    again.set_state(EMBER, saved)
    assert again.get_state(EMBER) == saved
    again.set_state(EMBER, {"messages": [{"role": "narrator", "content": []}]})
    assert again.get_state(EMBER)["messages"] == []
    assert "cannot be used" in caplog.text


async def test_a_history_left_with_open_calls_is_closed_before_the_next_perception():
    api = ScriptedApi([reply(text("Back."))])
    mind = make_mind(api)
    mind.set_state(EMBER, {"messages": [
        {"role": "user", "content": [text("Earlier.")]},
        {"role": "assistant", "content": [tool_use("walk", "open", direction="east")]},
    ]})
    await turn(mind, World())
    sent = api.requests[0]["messages"]
    assert roles(sent) == ["user", "assistant", "user"]
    assert sent[2]["content"][0] == {"type": "tool_result", "tool_use_id": "open",
                                     "content": NOT_RUN, "is_error": True}


def test_an_agent_without_a_profile_is_refused_clearly():
    mind = make_mind(ScriptedApi())
    start = TurnStart(AgentName("Nobody"), 1, perception(), TOOLS, 8)
    with pytest.raises(Exception, match="no Claude profile for Nobody"):
        mind.begin(start)


def test_the_client_is_the_real_sdk():
    assert isinstance(make_mind(ScriptedApi()).client, anthropic.AsyncAnthropic)


async def test_a_request_that_times_out_is_a_clear_error():
    import httpx2
    api = ScriptedApi([httpx2.ReadTimeout("too slow")])
    log = await turn(make_mind(api), World())
    assert log.ended == MIND_ERROR and "timed out" in (log.error or "")


async def test_a_trace_follows_the_turn_in_order():
    records: list[tuple[str, dict]] = []
    api = ScriptedApi([reply(tool_use("walk", direction="north")), reply(text("Done."))])
    mind = make_mind(api, trace=lambda agent, record: records.append((agent, dict(record))))
    await turn(mind, World())
    assert [r["type"] for _, r in records] == [
        "turn_start", "request", "tool_call", "tool_result", "request", "turn_end"]
    assert {a for a, _ in records} == {"Ember"}
    assert records[1][1]["usage"]["input"] == 100 and records[-1][1]["ended"] == ENDED


async def test_a_failing_trace_never_stops_a_turn():
    def broken(agent: str, record: dict) -> None:
        raise OSError("disk full")

    api = ScriptedApi([reply(text("Fine."))])
    log = await turn(make_mind(api, trace=broken), World())
    assert log.ended == ENDED and log.error is None


async def test_once_a_budget_is_reached_nothing_more_is_sent():
    from core.spend import Price
    from services.budget import Budgets, SpendMeter

    heard: list[str] = []
    meter = SpendMeter({"claude-test": Price(3.0, 15.0, 3.75, 0.3)}, Budgets(per_run=0.001), 24)
    api = ScriptedApi([reply(tool_use("walk", "w1", direction="north"), tool_use("walk", "w2",
                             direction="east"), input_tokens=400),
                       reply(text("More?"))])
    mind = make_mind(api, meter=meter, on_budget=heard.append)
    world = World()
    log = await turn(mind, world)
    assert len(api.requests) == 1  # the reply that crossed the line was the last sent
    assert [c.name for c in world.calls] == ["walk", "walk"]  # what it asked for still ran
    assert log.record["stop"] == "budget" and log.record["requests"][0]["usd"] > 0.001
    assert heard == ["the per-run budget of $0.0010 is reached: $0.0015 spent"]
    history = mind.get_state(EMBER)["messages"]
    assert [r["tool_use_id"] for r in history[-1]["content"]] == ["w1", "w2"]

    again = await turn(mind, world, tick=2)  # the next turn sends nothing at all
    assert len(api.requests) == 1 and again.actions == () and heard == heard[:1]


async def test_over_a_50_turn_session_each_request_is_mostly_its_predecessors_prefix():
    """Issue 6's cache measure on a scripted session (`python -m bench claude` runs it
    through the real engine): the share of each request, in the order the cache reads
    it (tools, system, messages), that is byte for byte a prefix of the one before."""
    from bench.claude_prompts import _common_prefix, prompt_text

    def model(body: dict) -> dict:
        if body["messages"][-1]["content"][-1]["type"] == "text":
            return reply(text("Let me walk a little."), tool_use("walk", direction="north"))
        return reply(text("That will do."))

    api = ScriptedApi(otherwise=model)
    mind, world = make_mind(api), World()
    for tick in range(50):
        await turn(mind, world, tick=tick)
    prompts = [prompt_text(b) for b in api.requests]
    shares = sorted(_common_prefix(a, b) / len(b) for a, b in zip(prompts, prompts[1:],
                                                                   strict=False))
    assert len(shares) == 99
    assert shares[len(shares) // 2] >= 0.9 and shares[0] >= 0.8
