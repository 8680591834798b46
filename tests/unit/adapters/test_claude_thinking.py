"""A 5.x model's thinking in ClaudeMind's turns, against the strict Messages API stand-in.

The rules (each enforced by tests/standin/):
- https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows: while a
  tool loop is open, the thinking blocks of the assistant message the tool results answer
  go back complete and unmodified, or the request is a 400.
- https://platform.claude.com/docs/en/build-with-claude/thinking: "outside tool use, omit
  prior turns' thinking" is allowed.
- https://platform.claude.com/docs/en/build-with-claude/preserved-thinking: a block is bound
  to what came before it (a changed prefix is a 400), to the model that wrote it (another
  model that cannot read it drops it, without error) and on Sonnet 5.5 to the account that
  made it (another account's is dropped, without error).
- https://platform.claude.com/docs/en/build-with-claude/prompt-caching: at most 4 cache
  breakpoints; a breakpoint may not sit on a thinking block.
- https://platform.claude.com/docs/en/build-with-claude/effort: `output_config.effort`.

Hearth's rule (adapters/claude_mind/history.py, `drop_thinking`): while a tool loop is
open nothing is dropped (the open exchange's thinking is bound to everything before it,
and compaction waits); the first turn that finds the loop closed drops all of it. A model
or account change is left to the API, which drops what it cannot read.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from typing import Any

import anthropic
import httpx2
import pytest

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind import history as h
from adapters.claude_mind.compaction import SUMMARY_HEAD, history_chars
from adapters.claude_models import check_models
from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import ToolCall, TurnStart
from services.tool_specs import tool_specs
from services.turn_loop import ACTION_LIMIT, ENDED, TurnLog, run_turn
from tests.messages_standin import Served, StrictMessagesApi

EMBER = AgentName("Ember")
PERSONALITY = "You are curious and restless, happiest with your hands busy."
SONNET = "claude-sonnet-5-5"
TODAY = dt.date(2026, 11, 26)
THINKING = ("thinking", "redacted_thinking")


def perception(tick: int) -> Perception:
    return Perception(
        agent=EMBER, tick=tick, position=Position(5, 5), time_text=f"day 1, tick {tick}",
        period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="· · @ · ·",
        narrative="Grass all around you.", inventory_text="You carry nothing.",
        journey_text=None, visible_agents_text="", conversation_text=None,
        invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
        standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
        in_conversation_with=(), pending_invitation_from=None)


async def execute(call: ToolCall) -> ActionResult:
    return ActionResult.ok(f"you {call.name}")


async def narrate(result: ActionResult, call: ToolCall) -> str:
    return result.message


async def turn(mind: ClaudeMind, tick: int, max_actions: int = 8) -> TurnLog:
    start = TurnStart(EMBER, tick, perception(tick), tool_specs(), max_actions)
    return await run_turn(mind, start, execute, narrate)


async def make_mind(api: StrictMessagesApi, model: str = SONNET, *, api_key: str = "test-key",
                    sent: list[dict[str, Any]] | None = None, **kw: Any) -> ClaudeMind:
    """A mind for Ember on `model`; `sent` gets the body of every Messages request, the
    ones the stand-in refuses too (api.served holds only the ones it answered)."""
    if sent is None:
        client = api.client(api_key=api_key)
    else:
        def handler(request: httpx2.Request) -> httpx2.Response:
            if request.method == "POST" and request.url.path == "/v1/messages":
                sent.append(json.loads(request.content))
            return api.handler(request)

        client = anthropic.AsyncAnthropic(
            api_key=api_key, max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    lineup = await check_models(client, {model: ["Ember"]}, TODAY)
    return ClaudeMind(client, {"Ember": ClaudeProfile(model, PERSONALITY, "medium")},
                      max_tokens=16_000, lineup=lineup, **kw)


def kinds(message: dict[str, Any]) -> list[str]:
    return [b["type"] for b in message["content"]]


def thinking_in(body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(message index, block) of every thinking block a request sends."""
    return [(i, b) for i, m in enumerate(body["messages"]) for b in m["content"]
            if b.get("type") in THINKING]


def breakpoints(body: dict[str, Any]) -> int:
    count = 1 if body.get("cache_control") else 0
    for part in (body.get("tools") or [], body.get("system") or []):
        count += sum(1 for b in part if isinstance(b, dict) and b.get("cache_control"))
    for message in body["messages"]:
        count += sum(1 for b in message["content"] if b.get("cache_control"))
    return count


def unmarked(value: Any) -> Any:
    out = copy.deepcopy(value)
    for message in out:
        for block in message["content"]:
            block.pop("cache_control", None)
    return out


def first_requests(api: StrictMessagesApi) -> list[Served]:
    """Each turn's first request: the newest message ends with the perception (text)."""
    return [s for s in api.served if s.body["messages"][-1]["content"][-1]["type"] == "text"]



def opening(served: list[Served] | list[dict[str, Any]], tick: int) -> dict[str, Any]:
    """The body of the first request of the turn at `tick`: the one whose newest block is
    that tick's perception."""
    text = perception(tick).as_text()
    bodies = [s.body if isinstance(s, Served) else s for s in served]
    found = [b for b in bodies if b["messages"][-1]["content"][-1].get("text") == text]
    assert len(found) == 1, f"one opening request for tick {tick}"
    return found[0]


# ---------------------------------------------------------------- within a turn


async def test_a_tool_loop_that_carries_thinking_is_accepted():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    log = await turn(mind, 1)
    assert log.ended == ENDED and log.error is None and api.refused == []
    assert len(api.served) == 2
    first, second = api.served
    thought = [b for b in first.reply["content"] if b["type"] == "thinking"]
    assert thought, "the stand-in's model thinks at medium effort"
    # The reply went back whole: its thinking first, as it was given.
    answered = second.body["messages"][1]
    assert answered["role"] == "assistant" and kinds(answered)[0] == "thinking"
    assert unmarked([answered])[0]["content"] == first.reply["content"]
    assert second.dropped == ()


async def test_every_request_asks_for_the_agents_effort_and_sets_no_sampling_or_budget():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    await turn(mind, 1)
    await turn(mind, 2)
    assert len(api.served) == 4
    for served in api.served:
        body = served.body
        assert body["output_config"] == {"effort": "medium"}
        assert body["max_tokens"] == 16_000
        for key in ("temperature", "top_p", "top_k"):
            assert key not in body
        assert "budget_tokens" not in json.dumps(body.get("thinking") or {})


async def test_the_turns_record_keeps_its_thinking_unmodified():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    log = await turn(mind, 1)
    replies = [s.reply["content"] for s in api.served]
    kept = [m["content"] for m in log.record["messages"] if m["role"] == "assistant"]
    assert kept == replies
    before = json.dumps(log.record["messages"], sort_keys=True)
    await turn(mind, 2)  # the next turn leaves the thinking out of what it sends...
    assert json.dumps(log.record["messages"], sort_keys=True) == before  # ...not the record
    assert any(b["type"] == "thinking" for content in kept for b in content)


# ---------------------------------------------------------------- the next turn


async def test_the_next_turn_sends_no_thinking_from_turns_that_are_over():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    for tick in (1, 2, 3):
        log = await turn(mind, tick)
        assert log.ended == ENDED
    assert api.refused == []
    openings = first_requests(api)
    assert len(openings) == 3
    for served in openings:
        assert thinking_in(served.body) == []
    # Inside each turn's loop the thinking of its own open exchange still goes back.
    for served in api.served:
        if served not in openings:
            assert [i for i, _ in thinking_in(served.body)] == [
                len(served.body["messages"]) - 2]


async def test_no_assistant_message_is_left_empty_when_its_thinking_goes():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    await turn(mind, 1)
    await turn(mind, 2)
    for served in api.served:
        for message in served.body["messages"]:
            assert message["content"]
            if message["role"] == "assistant":
                assert any(b["type"] not in THINKING for b in message["content"])


async def test_an_action_limited_turn_keeps_its_open_exchanges_thinking_next_turn():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    log = await turn(mind, 1, max_actions=1)
    assert log.ended == ACTION_LIMIT and len(api.served) == 1
    issued = [b for b in api.served[0].reply["content"] if b["type"] == "thinking"]
    assert issued
    log = await turn(mind, 2)
    assert log.ended == ENDED and api.refused == []
    opening = api.served[1].body
    assert [b for _, b in thinking_in(opening)] == issued
    assert kinds(opening["messages"][-1])[:1] == ["tool_result"]
    assert api.served[1].dropped == ()
    # Turn 2 closed the loop: turn 3 sends no thinking at all.
    await turn(mind, 3)
    assert api.refused == []
    assert thinking_in(first_requests(api)[-1].body) == []


async def test_two_action_limited_turns_in_a_row_leave_a_history_the_api_takes():
    """Turn 2's open exchange was made with turn 1's thinking before it, so turn 3 (which
    goes on with turn 2's loop) must send turn 1's thinking too, unchanged: leaving it
    out changes what turn 2's thinking is bound to (preserved-thinking, prefix check, a
    400). Nothing is dropped until a turn finds the loop closed (turn 4)."""
    api = StrictMessagesApi()
    mind = await make_mind(api)
    assert (await turn(mind, 1, max_actions=1)).ended == ACTION_LIMIT
    assert (await turn(mind, 2, max_actions=1)).ended == ACTION_LIMIT
    issued = [b for s in api.served for b in s.reply["content"] if b["type"] == "thinking"]
    assert len(issued) == 2  # one block in each turn's only reply
    log = await turn(mind, 3)
    assert api.refused == []
    assert log.error is None and log.halt is None and log.ended == ENDED
    body = opening(api.served, 3)
    assert [b for _, b in thinking_in(body)] == issued
    assert [i for i, _ in thinking_in(body)] == [1, 3]
    assert api.served[2].dropped == ()
    log = await turn(mind, 4)
    assert log.ended == ENDED and api.refused == []
    assert thinking_in(opening(api.served, 4)) == []


async def test_compaction_waits_while_an_exchange_is_open_and_runs_once_it_is_closed():
    """Folding old turns into the summary rewrites the start, which the open exchange's
    thinking is bound to (preserved-thinking, prefix check): it could not go back then,
    and could not be left out (thinking-tool-workflows). So compaction waits for the
    first turn that finds the loop closed, and that turn drops all the thinking."""
    api = StrictMessagesApi()
    mind = await make_mind(api, compact_above_chars=1_200, keep_recent_chars=600,
                           summary_max_chars=300)
    assert (await turn(mind, 1)).ended == ENDED
    log = await turn(mind, 2, max_actions=1)
    assert log.ended == ACTION_LIMIT and "folded" not in log.record
    first_message = unmarked(opening(api.served, 1)["messages"][:1])
    assert history_chars(mind.memory.history(EMBER)) > 1_200  # compaction is due...
    log = await turn(mind, 3)
    assert log.ended == ENDED and log.error is None and api.refused == []
    assert "folded" not in log.record  # ...but waits while the loop is open
    body = opening(api.served, 3)
    assert unmarked(body["messages"][:1]) == first_message
    assert SUMMARY_HEAD not in json.dumps(body)
    assert [i for i, _ in thinking_in(body)] == [len(body["messages"]) - 2]
    log = await turn(mind, 4)  # the first turn to find the loop closed
    assert log.ended == ENDED and log.error is None and log.halt is None
    assert api.refused == []
    assert log.record.get("folded", 0) > 0
    body = opening(api.served, 4)
    assert body["messages"][0]["content"][0]["text"].startswith(SUMMARY_HEAD)
    assert thinking_in(body) == []


async def test_a_squeeze_with_an_exchange_open_folds_the_loop_and_is_accepted():
    """The model said the context is full (`squeeze_next`) while an exchange is open:
    compaction does not wait, and as it rewrote the start, to which the open exchange's
    thinking is bound (preserved-thinking), the open loop is folded into the summary
    too. The request starts afresh from the summary and the perception, carries no
    thinking, and the stand-in takes it; the next turn goes on normally."""
    sent: list[dict[str, Any]] = []
    api = StrictMessagesApi()
    mind = await make_mind(api, sent=sent, keep_recent_chars=600, summary_max_chars=300)
    assert (await turn(mind, 1)).ended == ENDED
    assert (await turn(mind, 2, max_actions=1)).ended == ACTION_LIMIT
    assert h.exchange_open(mind.memory.history(EMBER))
    mind.memory.squeeze_next(EMBER)
    log = await turn(mind, 3)
    assert log.record.get("folded", 0) > 0
    assert log.ended == ENDED and log.halt is None and api.refused == []
    body = opening(sent, 3)
    assert len(body["messages"]) == 1  # the summary and the perception, nothing open
    first = body["messages"][0]["content"]
    assert first[0]["text"].startswith(SUMMARY_HEAD) and first[-1]["type"] == "text"
    assert "tool_result" not in kinds(body["messages"][0])
    assert thinking_in(body) == []
    assert (await turn(mind, 4)).ended == ENDED and api.refused == []


# ---------------------------------------------------------------- restored histories


async def open_exchange_state(api: StrictMessagesApi, model: str = SONNET) -> dict[str, Any]:
    """The stored state of an agent whose turn stopped at the action limit, as the engine
    keeps it (JSON)."""
    mind = await make_mind(api, model)
    assert (await turn(mind, 1, max_actions=1)).ended == ACTION_LIMIT
    state = json.loads(json.dumps(mind.get_state(EMBER)))
    assert set(state) == {"messages", "summary"}
    assert kinds(state["messages"][-2])[0] == "thinking"
    assert h.exchange_open(state["messages"])
    return state


def thinking_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] in THINKING]


async def test_a_history_restored_for_the_same_model_goes_on_with_its_thinking():
    api = StrictMessagesApi()
    state = await open_exchange_state(api)
    again = await make_mind(api)
    again.set_state(EMBER, state)
    assert again.get_state(EMBER) == state
    log = await turn(again, 2)
    assert log.ended == ENDED and log.error is None and api.refused == []
    served = api.served[1]
    assert [b for _, b in thinking_in(served.body)] == thinking_of(state["messages"][-2])
    assert served.dropped == ()  # the model read it


async def test_a_state_stored_with_a_model_and_account_restores_without_them():
    """States stored by the earlier design carried "model" and "account"; they restore,
    and those keys are not kept."""
    api = StrictMessagesApi()
    state = await open_exchange_state(api)
    mind = await make_mind(api)
    mind.set_state(EMBER, {**state, "model": "claude-opus-5", "account": "acct-9"})
    assert mind.get_state(EMBER) == state


@pytest.mark.parametrize(("old", "new"), [
    ("claude-sonnet-5", "claude-sonnet-5-5"),
    ("claude-opus-5", "claude-opus-5-5"),
    ("claude-opus-5-5", "claude-fable-5-1"),
])
async def test_moving_an_agent_with_an_open_exchange_to_a_newer_model_is_accepted(old, new):
    """The catalog's advice (claude-sonnet-5 -> claude-sonnet-5-5) followed while an agent's
    last turn stopped at the action limit. The new model reads the old one's thinking
    (preserved-thinking#switching-models), so the tool loop still needs it back, and it
    goes back unchanged: leaving it out would be a 400, which stops the run."""
    api = StrictMessagesApi()
    state = await open_exchange_state(api, old)
    mind = await make_mind(api, new)
    mind.set_state(EMBER, state)
    log = await turn(mind, 2)
    assert api.refused == []
    assert log.error is None and log.halt is None and log.ended == ENDED
    served = api.served[1]
    assert served.model == new
    assert [b for _, b in thinking_in(served.body)] == thinking_of(state["messages"][-2])
    assert served.dropped == ()


async def test_thinking_another_model_cannot_read_is_sent_and_dropped_by_the_api():
    """Sonnet 5.5's thinking is readable by no Opus model (preserved-thinking#switching-
    models): Hearth sends it back as it is, and the API drops it without error."""
    api = StrictMessagesApi()
    state = await open_exchange_state(api)
    opus = await make_mind(api, "claude-opus-5-5")
    opus.set_state(EMBER, state)
    log = await turn(opus, 2)
    assert log.ended == ENDED and api.refused == []
    served = api.served[1]
    assert served.model == "claude-opus-5-5"
    sent = thinking_in(served.body)
    assert [b for _, b in sent] == thinking_of(state["messages"][-2])
    assert len(served.dropped) == len(sent) > 0


@pytest.mark.parametrize("same_account", [False, True])
async def test_a_history_restored_under_a_new_key_is_accepted(same_account):
    """A new key while an exchange is open: another account's, or a rotated key of the same
    account. Sonnet 5.5's blocks work only in their own account, and another account's
    are dropped by the API without error (preserved-thinking#account-bound-thinking);
    leaving them out instead would break the tool loop's rule (thinking-tool-workflows)
    with a 400, which stops the run."""
    account = "acct-1" if same_account else "acct-2"
    api = StrictMessagesApi(keys={"test-key": "acct-1", "new-key": account})
    state = await open_exchange_state(api)
    mind = await make_mind(api, api_key="new-key")
    mind.set_state(EMBER, state)
    log = await turn(mind, 2)
    assert api.refused == []
    assert log.error is None and log.halt is None and log.ended == ENDED
    served = api.served[1]
    assert served.account == account
    assert [b for _, b in thinking_in(served.body)] == thinking_of(state["messages"][-2])
    assert bool(served.dropped) is not same_account  # another account's: dropped


# ---------------------------------------------------------------- breakpoints and the cache


async def test_requests_carry_at_most_four_breakpoints_and_none_on_thinking():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    await turn(mind, 1, max_actions=1)
    for tick in (2, 3, 4):
        await turn(mind, tick)
    assert api.refused == [] and len(api.served) >= 7
    for served in api.served:
        assert 1 <= breakpoints(served.body) <= 4
        for _, block in thinking_in(served.body):
            assert "cache_control" not in block


async def test_later_turns_read_earlier_turns_from_the_cache():
    api = StrictMessagesApi()
    mind = await make_mind(api)
    for tick in (1, 2, 3):
        await turn(mind, tick)
    openings = first_requests(api)
    reads = [s.usage["cache_read_input_tokens"] for s in openings]
    assert reads[0] == 0
    assert reads[1] > 0  # tools and system at least
    assert reads[2] > reads[1]  # and what turn 2 began with, from turn 2's requests
    for served in api.served[1:]:
        assert served.usage["cache_read_input_tokens"] > 0


# ---------------------------------------------------------------- history.py on plain lists


def thought(text: str = "hmm") -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "sig-" + text}


def said(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "walk", "input": {"direction": "north"}}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "you walk north"}


def conversation() -> list[dict[str, Any]]:
    """Two turns; the second stopped at the action limit, so its exchange is open."""
    return [
        {"role": "user", "content": [said("Morning.")]},
        {"role": "assistant", "content": [thought("a"), said("North."), call("t1")]},
        {"role": "user", "content": [result("t1")]},
        {"role": "assistant", "content": [thought("b"), said("Good.")]},
        {"role": "user", "content": [said("Noon.")]},
        {"role": "assistant", "content": [thought("c"), {"type": "redacted_thinking",
                                                         "data": "xyz"}, call("t2")]},
        {"role": "user", "content": [result("t2")]},
    ]


def test_exchange_open_when_the_newest_message_answers_tool_calls():
    assert h.exchange_open(conversation())
    assert not h.exchange_open(conversation()[:6])  # the calls are not answered yet
    assert not h.exchange_open(conversation()[:5])  # a perception
    assert not h.exchange_open(conversation()[:4])  # the model's own last word
    assert not h.exchange_open([])


def test_drop_thinking_drops_nothing_while_an_exchange_is_open():
    """The open exchange's thinking must go back, bound to all that came before it."""
    history = conversation()
    messages = list(history)
    before = copy.deepcopy(history)
    assert h.drop_thinking(history) == 0
    assert history == before
    assert all(a is b for a, b in zip(history, messages, strict=True))


def test_drop_thinking_takes_all_of_it_once_the_exchange_is_closed():
    history = [*conversation(), {"role": "assistant", "content": [thought("d"),
                                                                   said("Done.")]}]
    assert h.drop_thinking(history) == 5
    assert all(b["type"] not in THINKING for m in history for b in m["content"])
    assert kinds(history[1]) == ["text", "tool_use"] and kinds(history[3]) == ["text"]
    assert kinds(history[5]) == ["tool_use"] and kinds(history[7]) == ["text"]
    history = conversation()[:5]  # ends with a perception
    assert h.drop_thinking(history) == 2
    assert kinds(history[1]) == ["text", "tool_use"] and kinds(history[3]) == ["text"]


def test_drop_thinking_even_open_takes_all_of_it():
    history = conversation()
    assert h.drop_thinking(history, even_open=True) == 4
    assert all(b["type"] not in THINKING for m in history for b in m["content"])
    assert kinds(history[5]) == ["tool_use"]
    assert kinds(history[6]) == ["tool_result"]


def test_drop_thinking_never_leaves_an_assistant_message_empty():
    history = [{"role": "user", "content": [said("Hello.")]},
               {"role": "assistant", "content": [thought(), {"type": "redacted_thinking",
                                                             "data": "x"}]}]
    assert h.drop_thinking(history) == 2
    assert history[1] == {"role": "assistant", "content": [said(h.SILENCE)]}


def test_drop_thinking_replaces_messages_rather_than_changing_them():
    """The turn's record shares the message objects: they must keep their thinking."""
    history = conversation()
    record = list(history)
    snapshot = copy.deepcopy(record)
    assert h.drop_thinking(history, even_open=True) == 4
    assert record == snapshot
    assert history[0] is record[0]  # what had no thinking is the same message
    assert history[1] is not record[1]


def test_drop_thinking_leaves_user_messages_and_a_history_without_thinking_alone():
    plain = [{"role": "user", "content": [said("Hi.")]},
             {"role": "assistant", "content": [said("Hello.")]}]
    before = copy.deepcopy(plain)
    assert h.drop_thinking(plain) == 0
    assert plain == before
    assert h.drop_thinking(plain, even_open=True) == 0
    assert plain == before
    assert h.drop_thinking([]) == 0


def test_with_breakpoint_marks_the_last_block_and_the_end_of_the_earlier_turns():
    history = conversation()[:5]
    before = copy.deepcopy(history)
    sent = h.with_breakpoint(history, settled=4)
    assert history == before  # the stored messages are untouched
    marked = [(i, j) for i, m in enumerate(sent) for j, b in enumerate(m["content"])
              if "cache_control" in b]
    assert marked == [(3, 1), (4, 0)]
    assert sent[4]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert unmarked(sent) == before


def test_with_breakpoint_never_marks_a_thinking_block():
    history = [{"role": "user", "content": [said("Hi.")]},
               {"role": "assistant", "content": [said("Let me see."), thought()]},
               {"role": "user", "content": [said("Well?")]}]
    sent = h.with_breakpoint(history, settled=2)
    assert "cache_control" in sent[1]["content"][0]
    assert "cache_control" not in sent[1]["content"][1]
    only_thinking = [{"role": "user", "content": [said("Hi.")]},
                     {"role": "assistant", "content": [thought()]}]
    sent = h.with_breakpoint(only_thinking)
    assert all("cache_control" not in b for m in sent for b in m["content"])


@pytest.mark.parametrize("settled", [None, 0, 5, 99])
def test_with_breakpoint_adds_one_mark_when_there_is_no_earlier_turn(settled):
    history = conversation()[:5]
    sent = h.with_breakpoint(history, settled)
    assert sum("cache_control" in b for m in sent for b in m["content"]) == 1
    assert "cache_control" in sent[-1]["content"][-1]


def test_with_breakpoint_of_nothing_is_nothing():
    assert h.with_breakpoint([]) == []
