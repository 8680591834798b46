"""Requests sized to the key's limits (adapters/request_sizing.py, the capacity's part).

The rules come from https://platform.claude.com/docs/en/api/rate-limits: limits per
model class, token buckets a minute; ITPM counts input_tokens and
cache_creation_input_tokens, not cache reads, estimated as a request begins (so input
above the whole limit can never start); "OTPM rate limits are evaluated in real time
as output tokens are produced" (max_tokens costs no room, but Hearth keeps it within
the limit). The lowest limits the page has published (its former Tier 1) are 50 RPM /
30,000 ITPM / 8,000 OTPM for Sonnet and Opus and 50 / 50,000 / 10,000 for Haiku.
"""

from __future__ import annotations

import asyncio

import anthropic
import httpx2
import pytest

from adapters.capacity import Capacities, Capacity
from adapters.claude_calls import CallPolicy, Unservable, ask, halting_cause
from adapters.request_sizing import (
    LimitTooLow,
    history_room,
    lowest_tier,
    model_class,
    output_room,
    over_limit,
    room_needed,
)
from tests.unit.adapters.test_capacity import told


def test_models_share_the_limits_of_their_class():
    assert model_class("claude-sonnet-5-5") == model_class("claude-sonnet-4-6") == "sonnet"
    assert model_class("claude-haiku-4-5-20251001") == "haiku"
    assert model_class("llama3.1:8b") is None
    assert lowest_tier("claude-sonnet-5-5") == {
        "requests": 50, "input-tokens": 30_000, "output-tokens": 8_000}
    assert lowest_tier("claude-haiku-5-5") == {
        "requests": 50, "input-tokens": 50_000, "output-tokens": 10_000}
    assert lowest_tier("qwen2.5") is None  # nothing is assumed of an endpoint's own models


@pytest.mark.parametrize(("effort", "configured", "limit", "sent"), [
    ("medium", 16_000, None, 16_000),      # no limit known: as configured
    ("medium", 16_000, 8_000, 4_000),      # Tier 1 Sonnet: the room medium needs
    ("medium", 16_000, 80_000, 16_000),    # ten times that: as configured
    ("medium", 16_000, 40_000, 10_000),    # a quarter of the bucket, above the need
    ("low", 16_000, 8_000, 2_000),
    ("high", 16_000, 8_000, 8_000),        # the whole bucket: one at a time
    ("medium", 3_000, 8_000, 3_000),       # a smaller configured room is kept...
    ("medium", 3_000, 3_000, 3_000),       # ...and fits a bucket as small as itself
])
def test_max_tokens_fits_the_output_limit_with_the_room_the_effort_needs(
        effort, configured, limit, sent):
    assert output_room("claude-sonnet-5-5", effort, configured, limit) == sent
    if limit is not None:
        assert room_needed(effort, configured) <= sent <= limit


def test_an_output_limit_below_one_reply_is_a_setting_to_change():
    with pytest.raises(LimitTooLow) as caught:
        output_room("claude-sonnet-5-5", "xhigh", 16_000, 8_000)
    line = str(caught.value)
    assert "\n" not in line and "8,000 a minute" in line and "16,000" in line
    assert "claude.effort" in line


def test_a_cold_request_must_fit_the_input_limit():
    line = over_limit("claude-sonnet-5-5", "input-tokens", 30_000, 31_000)
    assert "input-token limit is 30,000 a minute, below the 31,000" in line
    # 80% of 30,000 tokens at 3 characters a token, less the tools and system prompt.
    assert history_room(30_000, 20_000) == 52_000
    assert history_room(None, 20_000) is None


async def test_until_told_a_claude_model_is_paced_to_the_lowest_tier():
    rooms = Capacities(start=32, ceiling=1000, lowest=lowest_tier)
    room = rooms.of("https://api.anthropic.com", "claude-sonnet-5-5")
    assert room.assumed and room.learning  # streamed, so the headers come at once
    assert room.limit("output-tokens") == 8_000 and room.limit("input-tokens") == 30_000
    first = await room.admit(output_tokens=4_000, input_tokens=12_000)
    second = await room.admit(output_tokens=4_000, input_tokens=12_000)
    third = asyncio.ensure_future(room.admit(output_tokens=4_000, input_tokens=12_000))
    await asyncio.sleep(0.05)
    assert not third.done()  # 24,000 of the assumed 30,000 input tokens are taken
    # The endpoint says its limits: they replace the assumption (and are kept).
    room.opened(first, told(requests=(4000, 3999), output=(400_000, 392_000),
                            inputs=(2_000_000, 1_988_000)))
    assert not room.assumed and room.limit("output-tokens") == 400_000
    await asyncio.wait_for(third, 1)
    assert room.said() is not None
    local = rooms.of("http://localhost:11434/v1", "llama3")
    assert not local.assumed and local.limit("output-tokens") is None
    for ticket in (first, second, third.result()):
        room.failed(ticket)


async def test_an_endpoint_that_says_no_limits_drops_the_assumption():
    rooms = Capacities(start=4, ceiling=64, lowest=lowest_tier)
    room = rooms.of("http://proxy", "claude-haiku-5-5")
    ticket = await room.admit(output_tokens=2_000)
    room.opened(ticket, {})
    assert not room.assumed and room.buckets == {} and room.said() is None


async def test_a_request_no_bucket_can_hold_is_refused_at_once_once_limits_are_told():
    """Uncached input above the whole input limit is answered 429 however long it waits
    (users report the same refusal on every retry of a 56,919-token prompt against
    30,000 ITPM): with the limit told, it is a setting to change, said at once."""
    room = Capacity("claude-sonnet-5-5 at x", model="claude-sonnet-5-5", start=4, ceiling=64)
    ticket = await room.admit(output_tokens=1_000, input_tokens=1_000)
    room.answered(ticket, told(inputs=(30_000, 29_000)), output_used=100)
    with pytest.raises(LimitTooLow, match="input-token limit is 30,000 a minute"):
        await room.admit(output_tokens=16_000, input_tokens=31_000)
    assert room.in_flight == 0


async def test_what_held_requests_longest_is_named_as_the_pace():
    room = Capacity("claude-sonnet-5-5 at x", model="claude-sonnet-5-5", start=4, ceiling=64)
    ticket = await room.admit(output_tokens=600)
    room.answered(ticket, told(requests=(6000, 5999), output=(600, 0)), output_used=600)
    await room.admit(output_tokens=30)  # 600 a minute: 10 a second, so 3 s
    kind, limit, seconds = room.pace()
    assert kind == "output-tokens" and limit == 600 and seconds >= 2.5
    lines = Capacities(start=1, ceiling=1).pace_lines()
    assert lines == []


def _standin(limit: int, calls: list[dict]) -> anthropic.AsyncAnthropic:
    """A Messages API endpoint whose output-token limit is `limit`: a request reserving
    more is answered 429 with the rate-limit headers, as the docs say every answer
    carries them; others get a short reply."""
    import json

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        calls.append(body)
        headers = {"anthropic-ratelimit-output-tokens-limit": str(limit),
                   "anthropic-ratelimit-output-tokens-remaining": str(limit),
                   "anthropic-ratelimit-requests-limit": "50",
                   "anthropic-ratelimit-requests-remaining": "49"}
        if body["max_tokens"] > limit:
            return httpx2.Response(429, headers={**headers, "retry-after": "1"}, json={
                "type": "error", "error": {"type": "rate_limit_error",
                                           "message": "output tokens per minute"}})
        message = {"id": "msg_1", "type": "message", "role": "assistant",
                   "model": body["model"], "content": [{"type": "text", "text": "ok"}],
                   "stop_reason": "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 2}}
        if not body.get("stream"):
            return httpx2.Response(200, headers=headers, json=message)
        # Streaming (https://platform.claude.com/docs/en/build-with-claude/streaming):
        # message_start, a content block's start, delta and stop, message_delta, stop.
        events = [
            ("message_start", {"message": {**message, "content": [], "stop_reason": None}}),
            ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
            ("content_block_stop", {"index": 0}),
            ("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 2}}),
            ("message_stop", {})]
        sse = "".join(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"
                      for name, data in events)
        return httpx2.Response(200, headers={**headers, "content-type": "text/event-stream"},
                               content=sse.encode())

    return anthropic.AsyncAnthropic(api_key="k", max_retries=0, http_client=httpx2.AsyncClient(
        transport=httpx2.MockTransport(handler)))


async def test_requests_are_sized_again_once_the_limits_are_told():
    """The first request is sized to the assumed Tier 1 (8,000 output tokens: 4,000 at
    effort medium); the key's own limit (64,000) then gives the next one all it asked."""
    calls: list[dict] = []
    client = _standin(64_000, calls)
    room = Capacities(start=4, ceiling=64, lowest=lowest_tier).of(
        str(client.base_url), "claude-sonnet-5-5")
    options = {"max_tokens": 16_000, "output_config": {"effort": "medium"}}
    from adapters.claude_mind.request_plan import RequestPlan

    for _ in range(2):
        reply = await ask(client, CallPolicy(), None, capacity=room,
                          resize=lambda: RequestPlan.sized(room, "claude-sonnet-5-5", options),
                          model="claude-sonnet-5-5",
                          messages=[{"role": "user", "content": "hi"}], **options)
        assert reply.stop_reason == "end_turn"
    assert [c["max_tokens"] for c in calls] == [4_000, 16_000]


async def test_a_limit_below_one_reply_stops_the_run_in_one_line():
    calls: list[dict] = []
    client = _standin(1_000, calls)
    room = Capacities(start=4, ceiling=64, lowest=lowest_tier).of(
        str(client.base_url), "claude-sonnet-5-5")
    options = {"max_tokens": 16_000, "output_config": {"effort": "medium"}}
    from adapters.claude_mind.request_plan import RequestPlan

    with pytest.raises(Unservable) as caught:
        await ask(client, CallPolicy(), None, capacity=room,
                  resize=lambda: RequestPlan.sized(room, "claude-sonnet-5-5", options),
                  model="claude-sonnet-5-5", messages=[{"role": "user", "content": "hi"}],
                  **options)
    assert len(calls) == 1  # the refusal told the limit; nothing more was sent
    cause = halting_cause(caught.value)
    assert cause is not None and "1,000 a minute" in cause and "\n" not in cause


def test_a_cut_reply_doubles_the_room_its_model_gets():
    from adapters.claude_mind.request_plan import RequestPlan

    plan = RequestPlan()
    room = Capacity("claude-sonnet-5-5 at x", model="claude-sonnet-5-5", start=1, ceiling=1)
    room.assume_lowest({"output-tokens": 64_000})
    options = {"max_tokens": 16_000, "output_config": {"effort": "medium"}}
    assert RequestPlan.sized(room, "claude-sonnet-5-5", options)["max_tokens"] == 16_000
    room.buckets["output-tokens"].limit = 8_000  # the key's limit, as the headers said
    sent = [RequestPlan.sized(room, "claude-sonnet-5-5", options,
                              plan.scale("claude-sonnet-5-5"))["max_tokens"]]
    plan.cut("claude-sonnet-5-5")
    sent.append(RequestPlan.sized(room, "claude-sonnet-5-5", options,
                                  plan.scale("claude-sonnet-5-5"))["max_tokens"])
    assert sent == [4_000, 8_000]
    plan.cut("claude-sonnet-5-5")  # past what the bucket holds: a person must choose
    with pytest.raises(LimitTooLow):
        RequestPlan.sized(room, "claude-sonnet-5-5", options, plan.scale("claude-sonnet-5-5"))


def test_an_agents_next_request_plans_only_what_the_cache_lacks():
    from adapters.claude_mind.request_plan import CACHE_SECONDS, RequestPlan

    plan = RequestPlan()
    history = [{"role": "user", "content": "x" * 3000}]
    cold = plan.input_of("Ember", 30_000, history, now=0.0)
    assert cold == pytest.approx((30_000 + 3000 + 40) / 3, rel=0.01)
    history.append({"role": "assistant", "content": "y" * 300})
    warm = plan.input_of("Ember", 30_000, history, now=10.0)
    assert 100 <= warm <= 120
    history.append({"role": "user", "content": "z" * 300})
    assert plan.input_of("Ember", 30_000, history, now=20.0 + CACHE_SECONDS) > 11_000


async def test_a_history_no_input_bucket_holds_is_folded_and_only_that_turn_ends():
    """An agent resumed with a long history meets a key whose input limit (12,000 a
    minute) is below its cold request: the refusal tells the limit, that turn ends
    without stopping the run, and the next turn, its history folded, is served."""
    from adapters.claude_mind import ClaudeMind, ClaudeProfile
    from services.turn_loop import MIND_ERROR, run_turn
    from tests.messages_standin import StrictMessagesApi
    from tests.unit.adapters.test_claude_mind import EMBER, PERSONALITY, TOOLS, World, perception

    api = StrictMessagesApi(limits={"sonnet": (50, 12_000, 8_000)})
    rooms = Capacities(start=4, ceiling=64, lowest=lowest_tier)
    mind = ClaudeMind(api.client(), {"Ember": ClaudeProfile("claude-sonnet-5-5", PERSONALITY,
                                                            "low")}, capacities=rooms)
    said = []
    for tick in range(12):  # what an earlier run left: a long, plain history
        said += [{"role": "user", "content": [{"type": "text", "text": f"tick {tick}: "
                                               + "the meadow is wide and green. " * 150}]},
                 {"role": "assistant", "content": [{"type": "text", "text": "I rest."}]}]
    mind.set_state(EMBER, {"messages": said, "summary": ""})
    world = World()
    from services.mind import TurnStart

    first = await run_turn(mind, TurnStart(EMBER, 12, perception(12), TOOLS, 8),
                           world.execute, world.narrate)
    assert first.ended == MIND_ERROR and first.halt is None
    assert "input-token limit is 12,000" in (first.error or "")
    second = await run_turn(mind, TurnStart(EMBER, 13, perception(13), TOOLS, 8),
                            world.execute, world.narrate)
    assert second.error is None and second.halt is None
    assert len(mind.get_state(EMBER)["messages"]) < len(said)  # folded into the summary
    assert [r.kind for r in api.limited if r.never_fits] == ["input-tokens"]
