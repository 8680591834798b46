"""OpenAIMind over the real openai client, with only the network scripted (httpx2.MockTransport).

Turns run through the real turn loop (services/turn_loop.run_turn); the world is
a small `execute` that answers each call, so what is checked is the mind: what it
sends, what it makes of every finish reason and failure, and the history it keeps.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx2
import openai
import pytest

from adapters.claude_mind import ClaudeProfile
from adapters.openai_mind import OpenAIMind, OpenAIMindError, OpenAIProfile
from adapters.openai_mind.compaction import SUMMARY_END, SUMMARY_HEAD, compact, history_chars
from adapters.openai_mind.history import NOT_RUN, SILENCE
from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import ToolCall, TurnStart
from services.tool_specs import tool_specs
from services.turn_loop import ACTION_LIMIT, ENDED, LIMIT_TEXT, MIND_ERROR, TurnLog, run_turn
from tests.fake_openai import BASE_URL, ScriptedApi, error, reply, tool_call

EMBER = AgentName("Ember")
PERSONALITY = "You are curious and restless, happiest with your hands busy."
TOOLS = tool_specs()


def perception(tick: int = 1, narrative: str = "Grass all around you.") -> Perception:
    return Perception(
        agent=EMBER, tick=tick, position=Position(5, 5), time_text=f"day 1, tick {tick}",
        period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="· · @ · ·",
        narrative=narrative, inventory_text="You carry nothing.",
        journey_text=None, visible_agents_text="", conversation_text=None,
        invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
        standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
        in_conversation_with=(), pending_invitation_from=None,
    )


def make_mind(api: ScriptedApi, **kw: Any) -> OpenAIMind:
    return OpenAIMind(api.client(), {"Ember": OpenAIProfile("local-test", PERSONALITY)}, **kw)


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


async def turn(mind: OpenAIMind, world: World, tick: int = 1, max_actions: int = 8,
               narrative: str = "Grass all around you.") -> TurnLog:
    start = TurnStart(EMBER, tick, perception(tick, narrative), TOOLS, max_actions)
    return await run_turn(mind, start, world.execute, world.narrate)


def roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


def sendable(messages: list[dict]) -> bool:
    """Every call answered by tool messages before the next user or assistant message."""
    waiting: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            if m["tool_call_id"] not in waiting:
                return False
            waiting.discard(m["tool_call_id"])
            continue
        if waiting:
            return False
        if m["role"] == "assistant":
            for call in m.get("tool_calls") or ():
                if not isinstance(json.loads(call["function"]["arguments"]), dict):
                    return False
            waiting = {c["id"] for c in m.get("tool_calls") or ()}
    return not waiting


# ---------------------------------------------------------------------- the exchange


async def test_a_tool_call_is_run_and_its_narrated_result_goes_back_before_the_turn_ends():
    api = ScriptedApi([reply("North it is.", calls=[tool_call("walk", "c1", direction="north")]),
                       reply("The light is good.")])
    world = World()
    log = await turn(make_mind(api), world)

    assert [(c.id, c.name, dict(c.arguments)) for c in world.calls] == [
        ("c1", "walk", {"direction": "north"})]
    assert log.ended == ENDED and log.error is None
    assert [a.narration for a in log.actions] == ["[walk] you walk north"]
    assert api.paths == ["/v1/chat/completions"] * 2
    first, second = api.requests
    assert first["model"] == "local-test" and first["max_tokens"] == 1024
    assert roles(first["messages"]) == ["system", "user"]
    assert first["messages"][0]["content"].startswith("You are Ember.")
    assert PERSONALITY in first["messages"][0]["content"]
    assert "Grass all around you." in first["messages"][1]["content"]
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "c1",
                                      "content": "[walk] you walk north"}
    assert roles(second["messages"]) == ["system", "user", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["function"] == {
        "name": "walk", "arguments": json.dumps({"direction": "north"})}


async def test_the_tools_are_sent_as_functions_with_the_engines_schemas():
    api = ScriptedApi([reply("I rest.")])
    await turn(make_mind(api), World())
    tools = api.requests[0]["tools"]
    assert [t["type"] for t in tools] == ["function"] * len(TOOLS)
    assert [t["function"]["name"] for t in tools] == [s.name for s in TOOLS]
    assert tools[0]["function"]["description"] == TOOLS[0].description
    assert tools[0]["function"]["parameters"] == json.loads(json.dumps(TOOLS[0].input_schema))


async def test_every_call_of_one_reply_is_answered_in_order_failures_marked():
    api = ScriptedApi([
        reply(calls=[tool_call("walk", "a", direction="east"),
                     tool_call("gather", "b", direction="down"),
                     tool_call("no_such_tool", "c")]),
        reply("Hm."),
    ])
    world = World()
    log = await turn(make_mind(api), world)

    # The unknown tool is the engine's to answer, not the mind's.
    assert [c.name for c in world.calls] == ["walk", "gather", "no_such_tool"]
    assert log.ended == ENDED
    answers = api.requests[1]["messages"][-3:]
    assert [(m["role"], m["tool_call_id"]) for m in answers] == [
        ("tool", "a"), ("tool", "b"), ("tool", "c")]
    assert answers[0]["content"] == "[walk] you walk east"
    assert answers[1]["content"] == "Error: [gather] gather is not possible here"
    assert answers[2]["content"] == "Error: [no_such_tool] no_such_tool is not possible here"


async def test_a_turn_may_end_without_any_action():
    api = ScriptedApi([reply("I sit and watch the clouds.")])
    world = World()
    log = await turn(make_mind(api), world)
    assert world.calls == [] and log.actions == () and log.ended == ENDED
    assert len(api.requests) == 1


async def test_each_request_begins_with_the_messages_of_the_one_before():
    api = ScriptedApi()
    mind = make_mind(api)
    for tick in range(1, 4):
        api.add(reply(calls=[tool_call("walk", direction="north")]), reply("On I go."))
        await turn(mind, World(), tick=tick)
    assert len(api.requests) == 6
    for before, after in zip(api.requests, api.requests[1:], strict=False):
        assert after["tools"] == before["tools"]
        assert after["messages"][:len(before["messages"])] == before["messages"]
        assert len(after["messages"]) > len(before["messages"])
        assert sendable(after["messages"][1:])


# ---------------------------------------------------------------------- unusable input


async def test_arguments_that_are_not_a_json_object_are_answered_by_the_mind_not_run():
    api = ScriptedApi([
        reply(calls=[tool_call("walk", "ok", direction="north"),
                     tool_call("walk", "broken", raw='{"direction": "nor'),
                     tool_call("gather", "list", raw='["down"]')]),
        reply("Let me try that again later."),
    ])
    world = World()
    mind = make_mind(api)
    log = await turn(mind, world)

    assert [c.id for c in world.calls] == ["ok"]  # only the usable call reached the world
    assert log.ended == ENDED and len(log.actions) == 1
    sent = api.requests[1]["messages"]
    answers = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert answers["ok"] == "[walk] you walk north"
    assert answers["broken"].startswith("Error: nothing was done")
    assert "walk was not valid JSON" in answers["broken"]
    assert "gather was a JSON array, not an object" in answers["list"]
    # What is kept (and sent back) stays a history any server takes: arguments are objects.
    assert sendable(sent[1:]) and sendable(mind.get_state(EMBER)["messages"])
    stored = {c["id"]: c["function"]["arguments"] for c in sent[2]["tool_calls"]}
    assert stored == {"ok": json.dumps({"direction": "north"}), "broken": "{}", "list": "{}"}


async def test_a_reply_whose_every_call_is_unusable_is_answered_and_asked_again_at_once():
    api = ScriptedApi([
        reply(calls=[tool_call("walk", "bad", raw="direction=north")]),
        reply(calls=[tool_call("walk", "good", direction="north")]),
        reply("There."),
    ])
    world = World()
    log = await turn(make_mind(api), world)
    assert [c.id for c in world.calls] == ["good"] and log.ended == ENDED
    assert len(api.requests) == 3
    assert api.requests[1]["messages"][-1]["tool_call_id"] == "bad"
    assert "not valid JSON" in api.requests[1]["messages"][-1]["content"]


async def test_a_model_that_never_gives_usable_input_is_not_asked_forever():
    api = ScriptedApi(otherwise=lambda body: reply(calls=[tool_call("walk", raw="{{")]))
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.ended == ENDED and log.actions == ()
    assert len(api.requests) == 3  # the first ask and two more
    history = mind.get_state(EMBER)["messages"]
    assert sendable(history) and history[-1]["role"] == "tool"


async def test_empty_arguments_mean_a_call_without_input():
    api = ScriptedApi([reply(calls=[tool_call("sleep", "z", raw="")]), reply("Night.")])
    world = World()
    await turn(make_mind(api), world)
    assert [(c.name, dict(c.arguments)) for c in world.calls] == [("sleep", {})]


# ---------------------------------------------------------------------- finish reasons


async def test_length_keeps_the_words_and_runs_no_cut_off_call():
    api = ScriptedApi([
        reply("I will walk", calls=[tool_call("walk", "cut", raw='{"direc')], finish="length"),
        reply("Another day."),
    ])
    mind, world = make_mind(api), World()
    log = await turn(mind, world)
    assert world.calls == [] and log.ended == ENDED and log.record["stop"] == "length"
    assert len(api.requests) == 1
    history = mind.get_state(EMBER)["messages"]
    assert history[-1] == {"role": "assistant", "content": "I will walk"}
    await turn(mind, world, tick=2)  # the history is still one the API takes
    assert roles(api.requests[1]["messages"]) == ["system", "user", "assistant", "user"]


async def test_a_filtered_reply_ends_the_turn_and_takes_the_perception_back():
    api = ScriptedApi([reply(None, finish="content_filter"), reply("Morning.")])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.actions == () and log.ended == ENDED
    assert log.record["stop"] == "content_filter" and log.record["messages"] == []
    assert mind.get_state(EMBER)["messages"] == []
    await turn(mind, World(), tick=2)
    assert roles(api.requests[1]["messages"]) == ["system", "user"]
    assert "tick 2" in api.requests[1]["messages"][1]["content"]


async def test_a_filter_after_actions_keeps_them_and_their_results():
    api = ScriptedApi([reply(calls=[tool_call("walk", "w", direction="west")]),
                       reply(None, finish="content_filter")])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert [a.tool for a in log.actions] == ["walk"] and log.ended == ENDED
    history = mind.get_state(EMBER)["messages"]
    assert roles(history) == ["user", "assistant", "tool"] and sendable(history)


async def test_an_unknown_finish_reason_ends_the_turn_with_a_warning(caplog):
    api = ScriptedApi([reply("Hmm", calls=[tool_call("walk", "f", direction="up")],
                             finish="function_call")])
    mind, world = make_mind(api), World()
    with caplog.at_level(logging.WARNING, logger="hearth.openai"):
        log = await turn(mind, world)
    assert world.calls == [] and log.ended == ENDED
    assert "unknown finish reason 'function_call'" in caplog.text
    assert mind.get_state(EMBER)["messages"][-1] == {"role": "assistant", "content": "Hmm"}


async def test_an_empty_reply_is_kept_as_silence_so_the_history_stays_sendable():
    api = ScriptedApi([reply("  ")])
    mind = make_mind(api)
    await turn(mind, World())
    assert mind.get_state(EMBER)["messages"][-1] == {"role": "assistant", "content": SILENCE}


# ---------------------------------------------------------------------- failures


@pytest.mark.parametrize("status", [500, 503, 429, 400, 404])
async def test_a_request_that_fails_for_good_ends_the_turn_with_the_cause(status):
    api = ScriptedApi([error(status, "model 'local-test' is busy")])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.ended == MIND_ERROR
    assert log.error == (f"the API answered {status}: "
                         "model 'local-test' is busy")
    assert mind.get_state(EMBER)["messages"] == []  # as if never asked
    assert log.record["stop"] == "error" and log.record["requests"][0]["error"]


async def test_a_failure_after_actions_keeps_them_and_their_results():
    api = ScriptedApi([reply(calls=[tool_call("walk", "w", direction="west")]),
                       error(500, "boom")])
    mind, world = make_mind(api), World()
    log = await turn(mind, world)
    assert log.ended == MIND_ERROR and [a.tool for a in log.actions] == ["walk"]
    history = mind.get_state(EMBER)["messages"]
    assert roles(history) == ["user", "assistant", "tool"]
    assert history[-1]["tool_call_id"] == "w"
    api.add(reply("Where was I?"))
    await turn(mind, world, tick=2)
    assert roles(api.requests[-1]["messages"]) == ["system", "user", "assistant", "tool", "user"]


async def test_a_dropped_connection_is_a_clear_error():
    api = ScriptedApi([httpx2.ConnectError("connection refused")])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.ended == MIND_ERROR
    assert f"could not reach the API at {BASE_URL}" in (log.error or "")
    assert mind.get_state(EMBER)["messages"] == []


async def test_a_request_that_times_out_is_a_clear_error():
    api = ScriptedApi([httpx2.ReadTimeout("too slow")])
    log = await turn(make_mind(api), World())
    assert log.ended == MIND_ERROR
    assert f"the request to {BASE_URL}" in (log.error or "") and "timed out" in (log.error or "")


async def test_the_clients_retries_are_used_not_rewritten():
    api = ScriptedApi([error(503, "loading model", **{"retry-after-ms": "1"}),
                       httpx2.ConnectError("still starting"), reply("Fine now.")])
    mind = OpenAIMind(api.client(max_retries=2),
                      {"Ember": OpenAIProfile("local-test", PERSONALITY)})
    log = await turn(mind, World())
    assert log.ended == ENDED and len(api.requests) == 3


async def test_a_failing_trace_never_stops_a_turn():
    def broken(agent: str, record: dict) -> None:
        raise OSError("disk full")

    api = ScriptedApi([reply("Fine.")])
    log = await turn(make_mind(api, trace=broken), World())
    assert log.ended == ENDED and log.error is None


# ---------------------------------------------------------------------- limits, state, record


async def test_calls_past_the_action_limit_are_answered_not_run():
    api = ScriptedApi([reply(calls=[tool_call("walk", f"w{i}", direction="north")
                                    for i in range(3)])])
    mind, world = make_mind(api), World()
    log = await turn(mind, world, max_actions=2)
    assert log.ended == ACTION_LIMIT and [c.id for c in world.calls] == ["w0", "w1"]
    assert len(api.requests) == 1
    history = mind.get_state(EMBER)["messages"]
    answers = [m for m in history if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["w0", "w1", "w2"]
    assert answers[2]["content"] == "Error: " + LIMIT_TEXT
    assert sendable(history)


async def test_the_record_holds_the_turns_messages_and_each_requests_usage():
    api = ScriptedApi([reply(calls=[tool_call("walk", direction="south")], prompt_tokens=1200),
                       reply("Done.", prompt_tokens=1300, completion_tokens=7)])
    log = await turn(make_mind(api), World())
    record = log.record
    assert record["mind"] == "local" and record["model"] == "local-test"
    assert record["stop"] == "stop"
    assert [r["usage"] for r in record["requests"]] == [
        {"prompt_tokens": 1200, "completion_tokens": 20},
        {"prompt_tokens": 1300, "completion_tokens": 7}]
    assert [r["stop"] for r in record["requests"]] == ["tool_calls", "stop"]
    assert all(isinstance(r["ms"], float) for r in record["requests"])
    assert roles(record["messages"]) == ["user", "assistant", "tool", "assistant"]
    json.dumps(record)  # stored as JSON


async def test_state_round_trips_and_a_broken_state_starts_afresh(caplog):
    api = ScriptedApi([reply(calls=[tool_call("walk", direction="north")]), reply("Hello.")])
    mind = make_mind(api)
    await turn(mind, World())
    saved = json.loads(json.dumps(mind.get_state(EMBER)))
    assert roles(saved["messages"]) == ["user", "assistant", "tool", "assistant"]
    again = make_mind(ScriptedApi([reply("Again.")]))
    again.set_state(EMBER, saved)
    assert again.get_state(EMBER) == saved
    await turn(again, World(), tick=2)
    assert again.get_state(EMBER)["messages"][:4] == saved["messages"]

    again.set_state(EMBER, {"messages": [{"role": "narrator", "content": "hi"}]})
    assert again.get_state(EMBER) == {"messages": [], "summary": ""}
    assert "cannot be used" in caplog.text


@pytest.mark.parametrize("messages", [
    "not a list",
    [{"role": "system", "content": "x"}],
    [{"role": "user", "content": ["blocks", "are", "claude's"]}],
    [{"role": "assistant", "content": None}],
    [{"role": "tool", "tool_call_id": "nobody", "content": "x"}],
    [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "walk", "arguments": "{}"}}]},
     {"role": "user", "content": "the call was never answered"}],
])
def test_every_kind_of_broken_state_starts_afresh(messages):
    mind = make_mind(ScriptedApi())
    mind.set_state(EMBER, {"messages": [{"role": "user", "content": "old"}], "summary": "s"})
    assert mind.get_state(EMBER)["summary"] == "s"
    mind.set_state(EMBER, {"messages": messages, "summary": "s"})
    assert mind.get_state(EMBER) == {"messages": [], "summary": ""}


async def test_a_history_left_with_open_calls_is_closed_before_the_next_perception():
    api = ScriptedApi([reply("Back.")])
    mind = make_mind(api)
    mind.set_state(EMBER, {"messages": [
        {"role": "user", "content": "Earlier."},
        {"role": "assistant", "content": None,
         "tool_calls": [tool_call("walk", "open", direction="east")]},
    ]})
    await turn(mind, World())
    sent = api.requests[0]["messages"]
    assert roles(sent) == ["system", "user", "assistant", "tool", "user"]
    assert sent[3] == {"role": "tool", "tool_call_id": "open", "content": NOT_RUN}
    assert NOT_RUN.startswith("Error: ")


async def test_a_trace_follows_the_turn_in_order():
    records: list[tuple[str, dict]] = []
    api = ScriptedApi([reply(calls=[tool_call("walk", direction="north")]), error(500, "x")])
    mind = make_mind(api, trace=lambda agent, record: records.append((agent, dict(record))))
    await turn(mind, World())
    assert [r["type"] for _, r in records] == [
        "turn_start", "request", "tool_call", "tool_result", "request_failed", "turn_end"]
    assert {a for a, _ in records} == {"Ember"}
    assert records[1][1]["usage"] == {"prompt_tokens": 100, "completion_tokens": 20}
    assert records[-2][1]["error"] == "the API answered 500: x"
    assert records[-1][1]["ended"] == "error"

    records.clear()
    api.add(reply("Done."))
    await turn(mind, World(), tick=2)
    assert [r["type"] for _, r in records] == ["turn_start", "request", "turn_end"]
    assert records[-1][1]["ended"] == ENDED


async def test_a_claude_profile_serves_too_and_an_agent_without_one_is_refused():
    api = ScriptedApi([reply("Hi.")])
    mind = OpenAIMind(api.client(), {"Ember": ClaudeProfile("local-test", PERSONALITY)})
    await turn(mind, World())
    assert api.requests[0]["model"] == "local-test"
    with pytest.raises(OpenAIMindError, match="no model profile for Nobody"):
        mind.begin(TurnStart(AgentName("Nobody"), 1, perception(), TOOLS, 8))


def test_the_mind_is_a_local_one_on_the_real_client():
    mind = make_mind(ScriptedApi())
    assert isinstance(mind.client, openai.AsyncOpenAI)
    assert (mind.kind, mind.reads_text, mind.answers_at_once) == ("local", True, False)


# ---------------------------------------------------------------------- compaction


def turn_messages(n: int) -> list[dict]:
    """One whole turn: perception, a call, its result, a closing word."""
    return [
        {"role": "user", "content": f"It is day 1, tick {n}.\nGrass all around " + "·" * 200},
        {"role": "assistant", "content": f"Walking on, turn {n}.",
         "tool_calls": [tool_call("walk", f"t{n}", direction="north")]},
        {"role": "tool", "tool_call_id": f"t{n}", "content": f"Error: a wall ({n})"},
        {"role": "assistant", "content": f"Done with {n}."},
    ]


def life(turns: int) -> list[dict]:
    return [m for n in range(turns) for m in turn_messages(n)]


def test_the_oldest_whole_turns_fold_into_a_summary_that_opens_the_first_kept_message():
    history = life(30)
    kept, summary, folded = compact(history, "", keep_chars=3_000, summary_chars=50_000)
    assert folded > 0 and folded % 4 == 0  # whole turns only
    assert kept[1:] == history[folded + 1:]
    assert kept[0]["role"] == "user"
    assert kept[0]["content"] == SUMMARY_HEAD + summary + SUMMARY_END + history[folded]["content"]
    assert "* It is day 1, tick 0." in summary and "you tried walk" in summary
    assert "-> a wall (0) (it failed)" in summary and "you thought: Done with 0." in summary
    assert history_chars(kept) < 3_000 + len(summary) + history_chars(turn_messages(0)) + 500
    assert sendable(kept)


def test_a_second_compaction_extends_the_summary_without_nesting_it():
    kept, summary, _ = compact(life(30), "", keep_chars=3_000, summary_chars=50_000)
    kept = kept + [m for n in range(30, 60) for m in turn_messages(n)]
    again, summary2, folded = compact(kept, summary, keep_chars=3_000, summary_chars=50_000)
    assert folded > 0 and summary2.startswith(summary)
    assert "tick 45" in summary2 and SUMMARY_HEAD not in summary2
    assert sum(m["content"].count(SUMMARY_HEAD) for m in again if m["role"] == "user") == 1


def test_the_summary_keeps_its_newest_lines_within_its_limit():
    _, summary, _ = compact(life(100), "", keep_chars=2_000, summary_chars=1_500)
    assert len(summary) <= 1_500
    assert "tick 0." not in summary and "tick 9" in summary


def test_a_history_within_the_limit_is_left_alone():
    history = life(3)
    assert compact(history, "s", keep_chars=100_000, summary_chars=1_000) == (history, "s", 0)


async def test_requests_stop_growing_once_compaction_starts():
    def model(body: dict) -> dict:
        if body["messages"][-1]["role"] == "user":
            return reply("On.", calls=[tool_call("walk", direction="north")])
        return reply("Rest.")

    api = ScriptedApi(otherwise=model)
    mind = OpenAIMind(api.client(), {"Ember": OpenAIProfile("m", "You are curious.")},
                      compact_above_chars=12_000, keep_recent_chars=4_000,
                      summary_max_chars=2_000)
    records = []
    for tick in range(120):
        log = await turn(mind, World(), tick=tick, narrative="Grass all around you. " * 20)
        records.append(log.record)
    sizes = [len(json.dumps([m for m in b["messages"] if m["role"] != "system"]))
             for b in api.requests[::2]]  # the history (the system prompt never changes)
    assert sizes[10] > 5 * sizes[0]  # it grew at first...
    assert max(sizes[60:]) <= max(sizes[20:60]) + 2_000  # ...then stopped growing
    assert max(sizes) < 12_000 + 5_000
    assert sum(1 for r in records if r.get("folded")) >= 3
    state = mind.get_state(EMBER)
    assert state["summary"] and state["messages"][0]["content"].startswith(SUMMARY_HEAD)
    assert sendable(state["messages"])


async def test_an_answer_without_a_reply_message_is_a_clear_error():
    empty = reply("x")
    empty["choices"] = []
    api = ScriptedApi([empty])
    mind = make_mind(api)
    log = await turn(mind, World())
    assert log.ended == MIND_ERROR and "held no reply message" in (log.error or "")
    assert mind.get_state(EMBER)["messages"] == []


# ---------------------------------------------------------------------- room at the endpoint


async def test_requests_wait_for_room_at_the_endpoint_and_a_stop_gives_the_turn_back():
    """A local server sends no rate limits: the room (adapters/capacity.py) holds requests
    to its window; a run stopping while a first request waits sends nothing, and the turn
    is marked not begun (the engine gives it back next run)."""
    from adapters.capacity import Capacities

    api = ScriptedApi(otherwise=lambda body: reply("Resting."))
    rooms = Capacities(start=1, ceiling=1)
    mind = make_mind(api, capacities=rooms)
    room = rooms.of(BASE_URL, "local-test")
    held = await room.admit()  # another agent's request fills the window
    stop = [False]
    mind.stopping = lambda: stop[0]
    waiting = asyncio.ensure_future(turn(mind, World()))
    await asyncio.sleep(0.05)
    assert api.requests == [] and not waiting.done()
    stop[0] = True
    log = await asyncio.wait_for(waiting, 2)
    assert log.not_begun and log.actions == () and api.requests == []
    assert mind.memory.history("Ember") == []  # the perception was taken back
    room.failed(held)
    stop[0] = False
    log = await turn(mind, World())
    assert log.ended == ENDED and len(api.requests) == 1
    assert room.figures.answered == 1 and room.in_flight == 0


async def test_a_request_cancelled_in_flight_gives_its_place_back_and_is_not_answered():
    """Issue 45: a request that never came back (the run cancelled it) is released as the
    Claude mind releases one (adapters/claude_calls.py): its place is free again, and the
    room learns nothing from it, as it would from an answer."""
    from adapters.capacity import Capacities

    sent = asyncio.Event()

    class Hanging(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            sent.set()
            await asyncio.Event().wait()  # the server never answers
            raise AssertionError("unreachable")

    client = openai.AsyncOpenAI(api_key="test-key", base_url=BASE_URL, max_retries=0,
                                http_client=httpx2.AsyncClient(transport=Hanging()))
    rooms = Capacities(start=1, ceiling=1)
    mind = OpenAIMind(client, {"Ember": OpenAIProfile("local-test", PERSONALITY)},
                      capacities=rooms)
    room = rooms.of(BASE_URL, "local-test")
    going = asyncio.ensure_future(turn(mind, World()))
    await asyncio.wait_for(sent.wait(), 2)
    assert room.in_flight == 1
    going.cancel()
    with pytest.raises(asyncio.CancelledError):
        await going
    assert room.in_flight == 0 and room.figures.answered == 0
