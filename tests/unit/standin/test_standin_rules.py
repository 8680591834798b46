"""The strict Messages API stand-in refuses what the real API refuses, through the real SDK.

Each test sends one offending request and expects the SDK's error class for the status
(BadRequestError 400, AuthenticationError 401, NotFoundError 404), and a correct
neighbour of it that passes. The docstrings cite the doc page each rule comes from.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

import anthropic
import pytest

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind.narrator import ModelNarrator, keeps_facts
from core.actions import ActionResult
from core.failures import FailureReason
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.gardener.decision import read_decision
from services.mind import ToolCall, TurnStart
from services.narrator import NarrationContext, TemplateNarrator
from services.tool_specs import tool_specs
from services.turn_loop import run_turn
from tests.messages_standin import Plan, StrictMessagesApi

DOCS = "https://platform.claude.com/docs/en"
USER = [{"role": "user", "content": [{"type": "text", "text": "You stand in a meadow."}]}]
WALK = {"name": "walk", "description": "Step one way.",
        "input_schema": {"type": "object", "properties": {"direction": {
            "type": "string", "enum": ["north", "south", "east", "west"]}},
            "required": ["direction"]}}


async def send(api: StrictMessagesApi, **kw: Any) -> anthropic.types.Message:
    body = {"model": "claude-sonnet-5-5", "max_tokens": 4000, "messages": USER, "timeout": 30,
            **kw}
    return await api.client().messages.create(**body)


async def refused(api: StrictMessagesApi, error: type[anthropic.APIStatusError],
                  **kw: Any) -> str:
    with pytest.raises(error) as caught:
        await send(api, **kw)
    assert api.refused[-1].status == caught.value.status_code
    assert caught.value.response.headers["request-id"].startswith("req_")
    return api.refused[-1].message


async def test_an_unknown_key_is_refused_with_401():
    """https://platform.claude.com/docs/en/api/errors: 401 authentication_error. The SDK sends the
    key as a Bearer token."""
    api = StrictMessagesApi(keys={"good": "acct-1"})
    with pytest.raises(anthropic.AuthenticationError):
        await api.client(api_key="bad").messages.create(
            model="claude-sonnet-5-5", max_tokens=100, messages=USER)
    assert api.refused[-1][:2] == (401, "authentication_error")
    assert (await api.client(api_key="good").messages.create(
        model="claude-sonnet-5-5", max_tokens=4000, messages=USER)).stop_reason == "end_turn"


async def test_an_unknown_or_retired_model_is_404():
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: requests to a retired
    model fail; Sonnet 4.5 retires on 2026-11-30
    (https://platform.claude.com/docs/en/models/sonnet-4-5/overview)."""
    api = StrictMessagesApi()
    assert "claude-mystery-9" in await refused(api, anthropic.NotFoundError,
                                               model="claude-mystery-9")
    assert (await send(api, model="claude-sonnet-4-5")).model == "claude-sonnet-4-5"
    later = StrictMessagesApi(today=datetime.date(2026, 12, 1))
    assert await refused(later, anthropic.NotFoundError,
                         model="claude-sonnet-4-5") == "model: claude-sonnet-4-5"


async def test_the_models_list_pages_newest_first_and_leaves_out_the_retired():
    """https://platform.claude.com/docs/en/api/models-list: newest first, limit,
    after_id/before_id, has_more, first_id, last_id; a retired model is listed only when asked
    for by lifecycle."""
    api = StrictMessagesApi()
    client = api.client()
    first = await client.models.list(limit=3)
    assert [m.id for m in first.data] == ["claude-haiku-5-5", "claude-sonnet-5-5",
                                          "claude-opus-5-5"]
    assert first.has_more and first.first_id == "claude-haiku-5-5"
    every = [m.id async for m in await client.models.list(limit=3)]
    assert len(every) == len(set(every)) == 9 and "claude-sonnet-4" not in every
    back = await client.models.list(limit=2, before_id="claude-opus-5-5")
    assert [m.id for m in back.data] == ["claude-haiku-5-5", "claude-sonnet-5-5"]
    assert not back.has_more
    retired = await client.models.list(lifecycle=["retired"])
    assert [m.id for m in retired.data] == ["claude-sonnet-4"]
    one = await client.models.retrieve("claude-sonnet-4-5")
    assert one.lifecycle == "deprecated" and one.retires_at is not None
    with pytest.raises(anthropic.NotFoundError):
        await client.models.retrieve("claude-mystery-9")
    with pytest.raises(anthropic.AuthenticationError):
        await api.client(api_key="nobody").models.list()


async def test_max_tokens_is_bounded_by_the_models_output_limit():
    """https://platform.claude.com/docs/en/about-claude/models/overview: max output 128K (5.x),
    64K (4.5)."""
    api = StrictMessagesApi()
    assert "128000" in await refused(api, anthropic.BadRequestError, max_tokens=128_001)
    await refused(api, anthropic.BadRequestError, max_tokens=0)
    await refused(api, anthropic.BadRequestError, model="claude-haiku-4-5", max_tokens=64_001)
    assert (await send(api, max_tokens=128_000)).stop_reason == "end_turn"


@pytest.mark.parametrize("messages", [
    [],
    [{"role": "assistant", "content": "Hello."}, *USER],
    [{"role": "user", "content": []}],
    [{"role": "user", "content": [{"type": "text", "text": ""}]}],
])
async def test_messages_must_start_with_a_user_turn_and_hold_text(messages):
    """https://platform.claude.com/docs/en/api/messages: at least one message, the first from the
    user, no empty content and no empty text block."""
    await refused(StrictMessagesApi(), anthropic.BadRequestError, messages=messages)


async def test_sampling_parameters_are_refused_on_5x_models_but_not_on_4_5():
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: non-default
    temperature, top_p, top_k return a 400 on Claude 4.7 and later; Haiku 4.5 still takes them."""
    api = StrictMessagesApi()
    for name, value in (("temperature", 0.2), ("top_p", 0.9), ("top_k", 5)):
        await refused(api, anthropic.BadRequestError, extra_body={name: value})
    assert (await send(api, extra_body={"temperature": 1.0})).stop_reason == "end_turn"
    assert (await send(api, model="claude-haiku-4-5", extra_body={"temperature": 0.2})).content


async def test_thinking_types_follow_the_per_model_table():
    """https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting (the
    per-model table) and
    https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5: Sonnet 5.5
    turns thinking off with between_tools at effort high or below; "disabled" and budgets are
    refused."""
    api = StrictMessagesApi()
    enabled = {"type": "enabled", "budget_tokens": 2000}
    await refused(api, anthropic.BadRequestError, thinking=enabled)
    assert "between_tools" in await refused(api, anthropic.BadRequestError,
                                            thinking={"type": "disabled"})
    await refused(api, anthropic.BadRequestError, thinking={"type": "between_tools"},
                  output_config={"effort": "xhigh"})
    await refused(api, anthropic.BadRequestError, model="claude-opus-5",
                  thinking={"type": "disabled"}, output_config={"effort": "max"})
    await refused(api, anthropic.BadRequestError, model="claude-haiku-4-5",
                  thinking={"type": "adaptive"})
    quiet = await send(api, thinking={"type": "between_tools"}, output_config={"effort": "low"})
    assert [b.type for b in quiet.content] == ["text"]
    assert (await send(api, model="claude-opus-5", thinking={"type": "disabled"},
                       output_config={"effort": "high"})).content[0].type == "text"
    extended = await send(api, model="claude-haiku-4-5", thinking=enabled)
    assert extended.content[0].type == "thinking" and extended.content[0].thinking


async def test_prefill_is_refused_on_5x_models():
    """https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide: a prefilled last
    assistant turn is a 400 on Sonnet 5.5; Sonnet 4.5, Haiku 4.5 and older accept one."""
    api = StrictMessagesApi()
    prefilled = [*USER, {"role": "assistant", "content": "I think"}]
    await refused(api, anthropic.BadRequestError, messages=prefilled)
    assert (await send(api, model="claude-haiku-4-5", messages=prefilled)).content


async def test_forced_tool_choice_is_refused_from_the_5_5_generation_on():
    """https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5 and
    https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5: tool_choice
    any/tool is a 400 (auto and none are fine); Opus 5 still takes it."""
    api = StrictMessagesApi()
    message = await refused(api, anthropic.BadRequestError, tools=[WALK],
                            tool_choice={"type": "any"})
    assert message == 'tool_choice: type "tool" and "any" are not supported for this model.'
    assert (await send(api, tools=[WALK], tool_choice={"type": "auto"})).stop_reason == "tool_use"
    assert (await send(api, tools=[WALK], tool_choice={"type": "none"})).stop_reason == "end_turn"
    forced = await send(api, model="claude-opus-5", tools=[WALK],
                        tool_choice={"type": "tool", "name": "walk"})
    assert forced.stop_reason == "tool_use"
    # Haiku 5.5 (its migration guide, as quoted by third parties): only with thinking off.
    await refused(api, anthropic.BadRequestError, model="claude-haiku-5-5", tools=[WALK],
                  tool_choice={"type": "any"})
    assert (await send(api, model="claude-haiku-5-5", tools=[WALK], tool_choice={"type": "any"},
                       thinking={"type": "disabled"})).stop_reason == "tool_use"


async def test_effort_must_be_one_the_model_has():
    """https://platform.claude.com/docs/en/build-with-claude/effort: Haiku 4.5 and Sonnet 4.5 take
    no effort; Opus 4.5 has low/medium/high; the 5.x models low to max."""
    api = StrictMessagesApi()
    await refused(api, anthropic.BadRequestError, model="claude-haiku-4-5",
                  output_config={"effort": "low"})
    await refused(api, anthropic.BadRequestError, model="claude-opus-4-5",
                  output_config={"effort": "xhigh"})
    assert (await send(api, output_config={"effort": "max"})).content
    assert (await send(api, model="claude-opus-4-5", output_config={"effort": "low"})).content


def marked(text: str, ttl: str | None = None) -> dict[str, Any]:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"type": "text", "text": text, "cache_control": mark}


async def test_at_most_four_cache_breakpoints_longer_ttl_first():
    """https://platform.claude.com/docs/en/build-with-claude/prompt-caching: up to 4 breakpoints
    per request; a 1h entry must come before any 5m one."""
    api = StrictMessagesApi()
    assert "Found 5" in await refused(api, anthropic.BadRequestError,
                                      system=[marked(f"part {i}") for i in range(5)])
    await refused(api, anthropic.BadRequestError, system=[marked("a"), marked("b", "1h")])
    assert (await send(api, system=[marked(f"part {i}") for i in range(4)])).content


def loop(call_id: str = "toolu_1", results_first: bool = True) -> list[dict[str, Any]]:
    result = {"type": "tool_result", "tool_use_id": call_id, "content": "You walk north."}
    note = {"type": "text", "text": "Also: the wind rises."}
    return [*USER, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "walk", "input": {"direction": "north"}}]},
        {"role": "user", "content": [result, note] if results_first else [note, result]}]


async def test_every_tool_use_is_answered_first_thing_in_the_next_message():
    """https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls: each
    tool_use gets a tool_result in the next (user) message, results before any other block, for
    a call just made."""
    api = StrictMessagesApi()
    model = {"model": "claude-haiku-4-5", "tools": [WALK]}
    unanswered = loop()[:2] + [{"role": "user", "content": "Go on."}]
    assert "without `tool_result`" in await refused(api, anthropic.BadRequestError,
                                                    messages=unanswered, **model)
    assert "at the beginning" in await refused(api, anthropic.BadRequestError,
                                               messages=loop(results_first=False), **model)
    assert "unexpected `tool_use_id`" in await refused(
        api, anthropic.BadRequestError, messages=loop("toolu_9"), **model)
    assert (await send(api, messages=loop(), **model)).content  # results, then news: acts again


def as_param(message: anthropic.types.Message) -> dict[str, Any]:
    return {"role": "assistant",
            "content": [b.model_dump(mode="json", exclude_none=True) for b in message.content]}


async def tool_loop(api: StrictMessagesApi, model: str = "claude-sonnet-5-5",
                    history: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A fresh perception answered by a walk: the history up to and with its results."""
    messages = list(history or USER)
    reply = await send(api, model=model, tools=[WALK], messages=messages)
    assert reply.stop_reason == "tool_use" and reply.content[0].type == "thinking"
    call = next(b for b in reply.content if b.type == "tool_use")
    return [*messages, as_param(reply), {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call.id, "content": "You walk."}]}]


async def test_thinking_kept_in_the_tool_loop_passes_and_a_changed_one_is_refused():
    """https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows: thinking
    blocks come back complete and unmodified with the tool results; leaving them out or
    changing them is a 400."""
    api = StrictMessagesApi()
    history = await tool_loop(api)
    assert (await send(api, tools=[WALK], messages=history)).stop_reason == "end_turn"
    for change in ("thinking", "signature"):
        altered = copy.deepcopy(history)
        altered[1]["content"][0][change] += "x"
        assert "signature" in await refused(api, anthropic.BadRequestError, tools=[WALK],
                                            messages=altered)
    missing = copy.deepcopy(history)
    del missing[1]["content"][0]
    assert "must start with a thinking block" in await refused(
        api, anthropic.BadRequestError, tools=[WALK], messages=missing)


async def test_a_thinking_block_is_bound_to_its_conversation():
    """https://platform.claude.com/docs/en/build-with-claude/preserved-thinking: a block whose
    prefix (system, tools, earlier messages) changed since it was produced is refused with a
    400."""
    api = StrictMessagesApi()
    history = await tool_loop(api)
    elsewhere = [{"role": "user", "content": "Somewhere else entirely."}, *history[1:]]
    assert "bound to a different conversation" in await refused(
        api, anthropic.BadRequestError, tools=[WALK], messages=elsewhere)
    await refused(api, anthropic.BadRequestError, tools=[WALK], messages=history,
                  system="A new system prompt.")


async def test_a_block_another_model_or_account_cannot_read_is_dropped_not_refused():
    """https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5: "No other model
    reads Claude Sonnet 5.5 thinking blocks"; a block from another account is dropped too; "the
    request succeeds, and dropped blocks aren't billed"
    (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking)."""
    api = StrictMessagesApi(keys={"test-key": "acct-1", "other": "acct-2"})
    history = await tool_loop(api)
    switched = await send(api, model="claude-opus-5-5", tools=[WALK], messages=history)
    assert switched.stop_reason == "end_turn" and api.served[-1].dropped == (
        "messages.1.content.0",)
    other = await api.client(api_key="other").messages.create(
        model="claude-sonnet-5-5", max_tokens=4000, tools=[WALK], messages=history)
    assert other.content and api.served[-1].dropped and api.served[-1].account == "acct-2"


async def test_thinking_of_finished_turns_may_be_left_out():
    """https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows: the thinking
    blocks must come back within the tool loop;
    https://platform.claude.com/docs/en/build-with-claude/preserved-thinking checks only the
    blocks sent back, so a history without the finished turns' thinking passes."""
    api = StrictMessagesApi()
    first = await tool_loop(api)
    ended = await send(api, tools=[WALK], messages=first)
    turn = [*first, as_param(ended)]
    without = [{**m, "content": [b for b in m["content"] if b.get("type") != "thinking"]}
               if m["role"] == "assistant" else m for m in turn]
    newer = [*without, {"role": "user", "content": [{"type": "text", "text": "Morning."}]}]
    second = await tool_loop(api, history=newer)
    assert (await send(api, tools=[WALK], messages=second)).stop_reason == "end_turn"
    assert not api.refused


def long_system(words: int = 3000) -> list[dict[str, Any]]:
    return [marked("You are Ember. " + "The meadow is wide and quiet. " * (words // 6))]


async def test_a_second_request_with_the_same_prefix_reads_it_from_cache():
    """https://platform.claude.com/docs/en/build-with-claude/prompt-caching: the first request
    writes the prefix up to the breakpoint, the next reads it; total = cache_read +
    cache_creation + input_tokens; an entry lives 5 minutes, refreshed by each read."""
    now = [0.0]
    api = StrictMessagesApi(clock=lambda: now[0])
    first = (await send(api, system=long_system())).usage
    assert first.cache_creation_input_tokens > 512 and first.cache_read_input_tokens == 0
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    more = [*USER, {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": [marked("Walk with me.")]}]
    second = (await send(api, system=long_system(), messages=more)).usage
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    whole = (second.cache_read_input_tokens + second.cache_creation_input_tokens
             + second.input_tokens)
    assert whole == sum(api.served[-1].usage[k] for k in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    assert whole > first.cache_creation_input_tokens + first.input_tokens
    now[0] += 301
    third = (await send(api, system=long_system())).usage
    assert third.cache_read_input_tokens == 0 and third.cache_creation_input_tokens > 0
    short = (await send(api, system=[marked("Too short to cache.")])).usage
    assert short.cache_creation_input_tokens == 0  # under the minimum: nothing written
    hour = [marked("You are Sage. " + "The hills roll on. " * 600, "1h")]
    assert (await send(api, system=hour)).usage.cache_creation.ephemeral_1h_input_tokens > 0
    now[0] += 1000
    assert (await send(api, system=hour)).usage.cache_read_input_tokens > 0


@pytest.mark.parametrize(("notes", "read"), [(18, True), (19, False)])
async def test_a_breakpoint_looks_back_at_most_20_blocks(notes, read):
    """https://platform.claude.com/docs/en/build-with-claude/prompt-caching: "The lookback
    window is 20 blocks", counting the breakpoint itself."""
    api = StrictMessagesApi()
    await send(api, system=long_system())
    plain = [{"type": "text", "text": long_system()[0]["text"]}]
    news = [{"type": "text", "text": f"note {i}"} for i in range(notes)]
    later = [{"role": "user", "content": [*news, marked("And now?")]}]
    usage = (await send(api, system=plain, messages=later)).usage
    assert (usage.cache_read_input_tokens > 0) is read


async def test_output_past_max_tokens_is_cut_and_a_cut_call_dropped():
    """https://platform.claude.com/docs/en/build-with-claude/thinking: max_tokens caps thinking
    and text together; stop_reason "max_tokens" (a call that does not fit is left out)."""
    api = StrictMessagesApi(behaviour=lambda r: Plan(50, "I will walk north now. " * 20,
                                                     [("walk", {"direction": "north"})]))
    cut = await send(api, tools=[WALK], max_tokens=120)
    assert cut.stop_reason == "max_tokens" and [b.type for b in cut.content] == [
        "thinking", "text"]
    assert cut.usage.output_tokens == 120 and cut.usage.output_tokens_details.thinking_tokens == 50


async def test_rate_limits_and_faults_answer_like_the_api():
    """https://platform.claude.com/docs/en/api/rate-limits: a token bucket ("continuously
    replenished up to your maximum limit"); over it, 429 rate_limit_error with retry-after
    and the anthropic-ratelimit-requests-* headers;
    https://platform.claude.com/docs/en/api/errors: 529 overloaded, 500 api_error."""
    now = [0.0]
    api = StrictMessagesApi(rpm=2, clock=lambda: now[0])
    await send(api)
    await send(api)
    with pytest.raises(anthropic.RateLimitError) as caught:
        await send(api)
    # 2 a minute refill one request every 30 s.
    assert caught.value.response.headers["retry-after"] == "30"
    assert caught.value.response.headers["anthropic-ratelimit-requests-remaining"] == "0"
    now[0] += 29
    with pytest.raises(anthropic.RateLimitError):
        await send(api)  # "earlier retries will fail"
    now[0] += 1
    await send(api)
    now[0] += 61
    api.rpm = None
    api.faults.extend([529, 500])
    with pytest.raises(anthropic.OverloadedError):
        await send(api)
    with pytest.raises(anthropic.InternalServerError):
        await send(api)
    assert (await send(api)).content


def test_the_served_variant_answers_a_sync_client_over_http():
    """https://platform.claude.com/docs/en/api/messages over a real socket, as for
    ANTHROPIC_BASE_URL subprocesses."""
    api = StrictMessagesApi()
    with api.serve() as url:
        client = anthropic.Anthropic(api_key="test-key", base_url=url, max_retries=0)
        reply = client.messages.create(model="claude-haiku-4-5", max_tokens=300, tools=[WALK],
                                       messages=USER)
        assert reply.stop_reason == "tool_use" and reply.content[-1].name == "walk"
        assert [m.id for m in client.models.list(limit=2).data] == [
            "claude-haiku-5-5", "claude-sonnet-5-5"]
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model="claude-haiku-4-5", max_tokens=300, messages=[])


async def test_the_narrator_and_the_gardener_get_answers_they_keep():
    """adapters/claude_mind/narrator.py keeps a retelling only if every fact survives;
    adapters/gardener_model.py reads one JSON object (services/gardener/decision.py)."""
    api = StrictMessagesApi()
    failed = ActionResult.fail("you cannot gather here: the stone is spent for 3 more ticks",
                               reason=FailureReason.NOT_ALLOWED)
    ctx = NarrationContext(AgentName("Ember"), 5, Position(1, 1), "morning", Weather.RAINY,
                           "gather")
    narrator = ModelNarrator(api.client(), "claude-haiku-5-5", speakers={"Ember"})
    told = await narrator.narrate(failed, ctx)
    assert told != TemplateNarrator().narrate_now(failed, ctx) and told.startswith("Softly")
    assert keeps_facts(failed.message, told) and narrator.told == 1
    answer = await send(api, model="claude-haiku-4-5", max_tokens=400,
                        system="You are the Gardener of Hearth, a grid world...",
                        messages=[{"role": "user", "content": '{"tick": 40}'}])
    assert read_decision(answer.content[-1].text, (48, 40)).interventions == ()


def perception(tick: int) -> Perception:
    return Perception(
        agent=AgentName("Ember"), tick=tick, position=Position(5, 5),
        time_text=f"day 1, tick {tick}", period="morning", weather=Weather.CLEAR,
        vision_radius=3, grid_view="· · @ · ·", narrative="Grass all around you.",
        inventory_text="You carry nothing.", journey_text=None, visible_agents_text="",
        conversation_text=None, invitation_text=None, cells=(), agents=(), landmarks=(),
        objects=(), inventory=(), standing_on=Terrain.GRASS, inside_structure=False,
        on_journey=False, in_conversation_with=(), pending_invitation_from=None)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-sonnet-5-5"])
async def test_claude_minds_turns_are_accepted_and_read_their_prefix_from_cache(model):
    """The mind's own requests (adapters/claude_mind/) meet every rule above, and its append-only
    history is read back from cache
    (https://platform.claude.com/docs/en/build-with-claude/prompt-caching)."""
    api = StrictMessagesApi()
    mind = ClaudeMind(api.client(), {"Ember": ClaudeProfile(model, "You are curious.")},
                      max_tokens=16_000)

    async def execute(call: ToolCall) -> ActionResult:
        return ActionResult.ok(f"you {call.name}")

    async def narrate(result: ActionResult, call: ToolCall) -> str:
        return result.message

    for tick in (1, 2, 3):
        start = TurnStart(AgentName("Ember"), tick, perception(tick), tool_specs(), 8)
        log = await run_turn(mind, start, execute, narrate)
        assert log.error is None
    assert not api.refused and len(api.served) >= 6
    assert all(s.usage["cache_read_input_tokens"] > 0 for s in api.served[1:])
