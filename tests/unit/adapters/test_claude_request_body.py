"""A request that waits at a Capacity is the SDK's own (adapters/claude_calls.py): its
tools and system prompt held as `Prepared` go as the values they hold, the bytes are
what `messages.create` sends, and while a model's limits are unknown it is streamed."""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx2
import pytest

from adapters.capacity import Capacity
from adapters.claude_calls import CallPolicy, Prepared, ask
from tests.messages_standin import StrictMessagesApi

REPLY = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
    "content": [{"type": "thinking", "thinking": "Where to?", "signature": "sig"},
                {"type": "text", "text": "North it is ☀"},
                {"type": "tool_use", "id": "toolu_01", "name": "walk",
                 "input": {"direction": "north"}}],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 7, "cache_creation_input_tokens": 11,
              "cache_read_input_tokens": 3, "service_tier": "standard",
              "cache_creation": {"ephemeral_5m_input_tokens": 11,
                                 "ephemeral_1h_input_tokens": 0},
              "a_field_the_sdk_does_not_know": 1},
}

TOOLS = [{"name": "walk", "description": "Walk one cell. \"Quoted\", ünïcode, 🌲",
          "input_schema": {"type": "object", "properties": {
              "direction": {"type": "string", "enum": ["north", "south"]}},
              "required": ["direction"]}}]
SYSTEM = [{"type": "text", "text": "You are Ember.\n\n🌲 woods, 🌊 water \u2028 \\ end",
           "cache_control": {"type": "ephemeral"}}]
PARAMS: dict[str, Any] = {
    "model": "claude-sonnet-5-5", "max_tokens": 1024, "system": SYSTEM, "tools": TOOLS,
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "You see: grass ☘"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_00", "name": "walk",
             "input": {"direction": "south"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_00",
                                      "content": "You walked.", "is_error": False,
                                      "cache_control": {"type": "ephemeral"}}]}],
    "output_config": {"effort": "low"}, "thinking": {"type": "adaptive"},
    "tool_choice": {"type": "auto"}, "stop_sequences": ["THE END"], "metadata": {},
}


def _recording() -> tuple[anthropic.AsyncAnthropic, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=REPLY, headers={
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49"})

    client = anthropic.AsyncAnthropic(
        api_key="test-key", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    return client, seen


def _room() -> Capacity:
    """A room that knows its endpoint's limits (as after a first answer, or a run that
    remembered them): its requests go whole, through `client.post`."""
    room = Capacity("test", start=4, ceiling=4)
    room.assume({"at": time.time(), "buckets": {"requests": [1000.0, 1000.0]}})
    assert not room.learning
    return room


@pytest.mark.parametrize("prepared", [False, True])
async def test_the_body_headers_and_reply_are_the_sdks_own(prepared: bool) -> None:
    client, seen = _recording()
    sdk = await client.messages.create(timeout=120.0, **PARAMS)
    params = {**PARAMS, "tools": Prepared(TOOLS), "system": Prepared(SYSTEM)} \
        if prepared else PARAMS
    room = _room()
    ours = await ask(client, CallPolicy(timeout=120.0), None, capacity=room, **params)
    assert len(seen) == 2
    assert seen[1].content == seen[0].content  # byte for byte
    assert json.loads(seen[1].content)["tools"] == TOOLS
    assert seen[1].method == seen[0].method and seen[1].url == seen[0].url
    # with_raw_response (the SDK's way to read the rate-limit headers) marks itself.
    varying = {"x-stainless-retry-count", "idempotency-key", "x-stainless-raw-response"}
    assert {k: v for k, v in seen[1].headers.items() if k not in varying} == \
        {k: v for k, v in seen[0].headers.items() if k not in varying}
    assert seen[1].headers["content-type"] == "application/json"
    assert ours.model_dump() == sdk.model_dump()
    assert [type(b) for b in ours.content] == [type(b) for b in sdk.content]
    assert isinstance(ours, anthropic.types.Message)
    assert ours.usage.cache_read_input_tokens == 3
    assert room.buckets["requests"].limit == 50  # the headers reached the capacity


async def test_refusals_come_back_as_the_sdks_errors() -> None:
    """The strict stand-in refuses a malformed request (400) through the post path as
    through messages.create: the same exception, which claude_calls judges."""
    api = StrictMessagesApi()
    client = api.client()
    bad = {**PARAMS, "messages": [{"role": "assistant", "content": "first"}],
           "thinking": {"type": "enabled"}}
    with pytest.raises(anthropic.BadRequestError) as sdk:
        await client.messages.create(**bad)
    with pytest.raises(anthropic.BadRequestError) as ours:
        await ask(client, CallPolicy(), None, capacity=_room(), **bad)
    assert ours.value.status_code == sdk.value.status_code == 400
    assert ours.value.body == {**sdk.value.body, "request_id": ours.value.body["request_id"]}


def _variant(**changes: Any) -> dict[str, Any]:
    return {**REPLY, **changes}


async def test_while_nothing_is_known_a_request_is_streamed_and_its_headers_open_the_window(
        ) -> None:
    """A room that knows nothing yet streams its requests: the rate-limit headers come
    as the stream opens, not after the model's latency; the reply is the same Message
    the whole answer gives, and once the limits are known requests go whole again."""
    api = StrictMessagesApi(rpm=600)
    client = api.client()
    room = Capacity("test", start=2, ceiling=64)
    opened: list[int] = []
    told = room.opened

    def opening(ticket: Any, headers: Any) -> None:
        told(ticket, headers)
        opened.append(room.window)  # while the request is still in flight

    room.opened = opening  # type: ignore[method-assign]
    assert room.learning
    first = await ask(client, CallPolicy(), None, capacity=room, **PARAMS)
    assert opened == [64] and room.buckets["requests"].limit == 600
    assert api.served[-1].body.get("stream") is True
    assert first.model_dump() == anthropic.types.Message.model_validate(
        api.served[-1].reply).model_dump()
    assert not room.learning
    await ask(client, CallPolicy(), None, capacity=room, **PARAMS)
    assert "stream" not in api.served[-1].body and len(opened) == 1
    assert room.in_flight == 0 and room.figures.answered == 2 and not api.refused


def _broken_stream(kind: str) -> httpx2.Response:
    """A stream that opens (200) and ends in an error event, as the API may send one
    "during periods of high usage" (STREAMING: an overloaded_error "would normally
    correspond to an HTTP 529 in a non-streaming context")."""
    started = {"type": "message_start",
               "message": {**REPLY, "content": [], "stop_reason": None}}
    broke = {"type": "error", "error": {"type": kind, "message": "Overloaded"}}
    lines = (f"event: message_start\ndata: {json.dumps(started)}\n\n"
             f"event: error\ndata: {json.dumps(broke)}\n\n")
    return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                           content=lines.encode())


async def test_a_stream_that_breaks_off_overloaded_is_asked_again_and_shrinks_the_window(
        ) -> None:
    from tests.fake_anthropic import ScriptedApi

    api = ScriptedApi([_broken_stream("overloaded_error"), REPLY])
    room = Capacity("test", start=8, ceiling=8)
    answer = await ask(api.client(), CallPolicy(retries=2, backoff=0.01), None,
                       capacity=room, **PARAMS)
    assert answer.stop_reason == "tool_use" and len(api.requests) == 2
    assert all(r.get("stream") is True for r in api.requests)  # still nothing known
    assert room.figures.overloaded == 1 and room.window < 8 and room.in_flight == 0


async def test_a_stream_that_breaks_off_with_a_lasting_error_is_not_asked_again() -> None:
    from adapters.claude_calls import describe, halting_cause
    from tests.fake_anthropic import ScriptedApi

    api = ScriptedApi([_broken_stream("invalid_request_error")])
    with pytest.raises(anthropic.APIStatusError) as broke:
        await ask(api.client(), CallPolicy(retries=2, backoff=0.01), None,
                  capacity=Capacity("test", start=8, ceiling=8), **PARAMS)
    assert len(api.requests) == 1
    assert describe(broke.value).startswith(
        "the API's answer broke off with invalid_request_error")
    assert halting_cause(broke.value) is not None  # as a whole 400 would: a person's to fix
