"""The stand-in's limits mode keeps the Messages API's rate limits rule by rule.

Every test drives the stand-in through the real anthropic SDK over httpx2.MockTransport
(`client()`), on an injected clock so that time is exact. The rules, with their quotes,
are in tests/standin/limits.py; each test's docstring names the rule and quotes it from
https://platform.claude.com/docs/en/api/rate-limits (RATE_LIMITS below).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import time
from typing import Any

import anthropic
import pytest

from tests.messages_standin import CATALOG, Plan, StrictMessagesApi
from tests.standin.limits import TokenBucket

RATE_LIMITS = "https://platform.claude.com/docs/en/api/rate-limits"
USER = [{"role": "user", "content": [{"type": "text", "text": "You stand in a meadow."}]}]
WALL = datetime.datetime(2026, 11, 26, 12, 0, 0, tzinfo=datetime.UTC)
HEADERS = [f"anthropic-ratelimit-{kind}-{part}"
           for kind in ("requests", "input-tokens", "output-tokens", "tokens")
           for part in ("limit", "remaining", "reset")]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def standin(clock: Clock, **kw: Any) -> StrictMessagesApi:
    return StrictMessagesApi(clock=clock, wall=lambda: WALL, **kw)


async def send(api: StrictMessagesApi, key: str = "test-key", **kw: Any) -> Any:
    """The answer's headers and its Message."""
    body = {"model": "claude-sonnet-5-5", "max_tokens": 4000, "messages": USER, **kw}
    raw = await api.client(api_key=key).messages.with_raw_response.create(**body)
    return raw.headers, await raw.parse()


async def limited(api: StrictMessagesApi, key: str = "test-key", **kw: Any) -> Any:
    """The 429's headers and message (it must be one)."""
    with pytest.raises(anthropic.RateLimitError) as caught:
        await send(api, key, **kw)
    error = caught.value
    body = error.body["error"]  # {"type": "error", "error": {"type", "message"}}
    assert error.status_code == 429 and body["type"] == "rate_limit_error"
    return error.response.headers, body["message"]


def writes(tokens: int, rule: str = "claude-sonnet-5-5") -> Plan:
    """A reply of exactly `tokens` output tokens (the stand-in counts ceil(chars / 4 x
    the model's token factor)), no thinking."""
    factor = CATALOG[rule].token_factor
    chars = max(c for c in range(1, 8 * tokens + 8) if math.ceil(c / 4 * factor) <= tokens)
    assert math.ceil(chars / 4 * factor) == tokens
    return Plan(0, "x" * chars)


async def test_buckets_refill_continuously_up_to_their_limit():
    """RATE_LIMITS, token bucket: "your capacity is continuously replenished up to your
    maximum limit, rather than being reset at fixed intervals"; a 429 has retry-after,
    "Earlier retries will fail"."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (2, None, None)})
    assert (await send(api))[0]["anthropic-ratelimit-requests-remaining"] == "1"
    await send(api)
    headers, said = await limited(api)
    assert headers["retry-after"] == "30"  # 2 a minute: one back every 30 s
    assert "rate limit of 2 requests per minute" in said
    clock.now = 29.0
    await limited(api)
    clock.now = 30.0
    await send(api)
    clock.now = 10_000.0  # a long rest fills the bucket to its limit, no further
    await send(api)
    assert (await send(api))[0]["anthropic-ratelimit-requests-remaining"] == "0"
    await limited(api)


@pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5' is deprecated")
async def test_models_of_a_class_share_its_buckets_and_each_class_has_its_own():
    """RATE_LIMITS: limits "for each model class"; "Sonnet 4.x rate limit is a total limit
    that applies to combined traffic across Sonnet 4.6 and Sonnet 4.5. Claude Sonnet 5 has
    a separate rate limit and is not part of this combined bucket" (a table each for Sonnet
    5.5, Sonnet 5, Sonnet 4.x, Haiku 5.5, Haiku 4.5, ...); "Limits are set at the
    organization level". A key like "sonnet" sets the limits of every Sonnet class."""
    clock = Clock()
    api = standin(clock, today=datetime.date(2026, 5, 1), rpm=1,
                  keys={"k1": "org-1", "k2": "org-2"},
                  limits={"sonnet": (1, None, None), "sonnet-5-5": (3, None, None),
                          "haiku": (1, None, None)})
    await send(api, "k1", model="claude-sonnet-4-5")
    await limited(api, "k1", model="claude-sonnet-4")  # Sonnet 4.x: one bucket
    await send(api, "k2", model="claude-sonnet-4")  # another organization's own
    await send(api, "k1", model="claude-sonnet-5")  # Sonnet 5: a class of its own
    for _ in range(3):  # Sonnet 5.5: its own entry, 3 a minute
        await send(api, "k1", model="claude-sonnet-5-5")
    await limited(api, "k1", model="claude-sonnet-5-5")
    await send(api, "k1", model="claude-haiku-5-5")
    await send(api, "k1", model="claude-haiku-4-5")
    await send(api, "k1", model="claude-opus-5-5")  # no entry: rpm=1 for it
    await limited(api, "k1", model="claude-opus-5-5")
    figures = api.figures()
    assert figures["sonnet-4"].served == 2 and figures["sonnet-4"].limited["requests"] == 1
    assert figures["sonnet-5-5"].served == 3 and figures["opus-5-5"].refused == 1
    with pytest.raises(ValueError, match="names no model class"):
        StrictMessagesApi(limits={"gpt": (1, 1, 1)})


async def test_itpm_counts_uncached_input_and_cache_writes_but_not_cache_reads():
    """RATE_LIMITS, cache-aware ITPM: `input_tokens` and `cache_creation_input_tokens`
    "Count toward ITPM", `cache_read_input_tokens` "Do NOT count toward ITPM for most
    models"; "Claude Haiku 3.5 (marked with †...) also counts `cache_read_input_tokens`
    toward ITPM rate limits"."""
    system = [{"type": "text", "text": "The rules of the world. " * 800,
               "cache_control": {"type": "ephemeral"}}]
    probe = (await send(StrictMessagesApi(), system=system))[1].usage
    first = probe.input_tokens + probe.cache_creation_input_tokens
    assert probe.cache_creation_input_tokens > 4_000
    # Room for the first request and half of it again: the second fits only if its
    # cache reads are free.
    clock = Clock()
    api = standin(clock, limits={"sonnet": (None, first + first // 2, None)})
    await send(api, system=system)
    reading = (await send(api, system=system))[1].usage
    assert reading.cache_read_input_tokens == probe.cache_creation_input_tokens
    assert api.figures()["sonnet-5-5"].input_counted == first + reading.input_tokens
    # A † model counts the reads: the same second request is refused.
    dagger = dataclasses.replace(CATALOG["claude-sonnet-4-5"], id="claude-haiku-3-5",
                                 rate_class="haiku-3-5", cache_reads_count=True, retires=None)
    models = {**CATALOG, dagger.id: dagger}
    probe = (await send(StrictMessagesApi(models=models), model=dagger.id,
                        system=system))[1].usage
    first = probe.input_tokens + probe.cache_creation_input_tokens
    api = standin(clock, models=models, limits={"haiku-3-5": (None, first + first // 2, None)})
    await send(api, model=dagger.id, system=system)
    headers, said = await limited(api, model=dagger.id, system=system)
    assert "input tokens per minute" in said and api.limited[-1].kind == "input-tokens"
    assert not api.limited[-1].never_fits


async def test_otpm_counts_the_output_written_and_max_tokens_costs_nothing():
    """RATE_LIMITS: "OTPM rate limits are evaluated in real time as output tokens are
    produced, counting only the actual tokens generated. The `max_tokens` parameter does
    not factor into OTPM rate limit calculations". A reply that has not begun costs no
    output, so 16,000 max_tokens against 8,000 OTPM is served; once the replies written
    exceed the bucket, requests wait until it holds a token again (ASSUMED threshold)."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (None, None, 8_000)},
                  behaviour=lambda r: writes(3_000))
    left = []
    for _ in range(3):
        headers, reply = await send(api, max_tokens=16_000)
        assert reply.usage.output_tokens == 3_000 and reply.stop_reason == "end_turn"
        left.append(headers["anthropic-ratelimit-output-tokens-remaining"])
    assert left == ["8000", "5000", "2000"]  # counted as written, after each header
    headers, said = await limited(api, max_tokens=16_000)  # 8,000 - 9,000: below zero
    assert "8,000 output tokens per minute" in said and headers[
        "anthropic-ratelimit-output-tokens-remaining"] == "0"
    assert headers["retry-after"] == "8"  # 1,001 tokens at 8,000 a minute: 7.5 s
    assert api.limited[-1].kind == "output-tokens" and not api.limited[-1].never_fits
    clock.now = 7.0
    await limited(api, max_tokens=16_000)
    clock.now = 8.0
    await send(api, max_tokens=16_000)


async def test_output_leaves_the_bucket_while_the_reply_is_written():
    """RATE_LIMITS: OTPM "evaluated in real time as output tokens are produced": a reply
    that takes `latency` seconds of the stand-in's clock writes its tokens over them."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (None, None, 8_000)}, latency=10.0,
                  behaviour=lambda r: writes(6_000 if "meadow" in str(r.last) else 1))
    await send(api, max_tokens=16_000)  # 6,000 tokens from t=0 to t=10
    quick = [{"role": "user", "content": [{"type": "text", "text": "Quick."}]}]
    remaining = []
    for at in (5.0, 10.0, 40.0):
        clock.now = at
        headers = (await send(api, messages=quick))[0]
        remaining.append(headers["anthropic-ratelimit-output-tokens-remaining"])
    # t=5: 8,000 - 3,000 + 5 s x 133.3 = 5,667; t=10: 8,000 - 6,000 + 1,333 = 3,333;
    # t=40: 3,333 + 30 s x 133.3 = 7,333 (the 1-token replies are lost in the rounding).
    assert remaining == ["6000", "3000", "7000"]


async def test_with_the_older_rule_max_tokens_is_held_until_the_reply_ends():
    """RATE_LIMITS before mid-2026 (still in its docs.anthropic.com translations): "OTPM
    rate limits are estimated based on max_tokens at the beginning of each request, and
    the estimate is adjusted at the end of the request" (`reserve_max_tokens=True`).
    Then max_tokens above the whole OTPM limit can never start."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (None, None, 8_000)}, latency=10.0,
                  reserve_max_tokens=True, behaviour=lambda r: writes(1_000))
    first = (await send(api, max_tokens=6_000))[0]
    assert first["anthropic-ratelimit-output-tokens-remaining"] == "2000"  # 6,000 held
    await limited(api, max_tokens=6_000)  # still held at t=0
    clock.now = 9.0  # 2,000 + 9 s x 133.3 = 3,200: still short
    await limited(api, max_tokens=6_000)
    clock.now = 10.0  # the reply ended: 5,000 unused came back (2,000 + 1,333 + 5,000)
    again = (await send(api, max_tokens=6_000))[0]
    assert again["anthropic-ratelimit-output-tokens-remaining"] == "2000"  # 8,000 - 6,000
    headers, said = await limited(api, max_tokens=16_000)
    assert api.limited[-1].never_fits and api.limited[-1].kind == "output-tokens"
    clock.now = 10_000.0
    await limited(api, max_tokens=16_000)
    assert api.figures()["sonnet-5-5"].never_fits["output-tokens"] == 2


async def test_a_request_that_never_fits_is_refused_however_long_it_waits():
    """RATE_LIMITS: a bucket is "replenished up to your maximum limit", so a request whose
    uncached input exceeds the ITPM limit never fits; it is answered like any rate limit
    (429 rate_limit_error "describing which rate limit was exceeded, along with a
    `retry-after` header"), and counted apart."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (50, 100, 8_000)})
    long = [{"role": "user", "content": [{"type": "text", "text": "A long look. " * 60}]}]
    for at in (0.0, 60.0, 3_600.0):
        clock.now = at
        headers, said = await limited(api, messages=long)
        assert headers["retry-after"] == "1"  # the bucket is full; a retry fails again
        assert "rate limit of 100 input tokens per minute" in said
    await send(api)  # a short one fits
    assert [(x.kind, x.never_fits) for x in api.limited] == [("input-tokens", True)] * 3
    figures = api.figures()["sonnet-5-5"]
    assert figures.never_fits == {"input-tokens": 3} and not figures.limited
    assert figures.served == 1


async def test_every_answer_and_every_429_carries_the_rate_limit_headers():
    """RATE_LIMITS, response headers: anthropic-ratelimit-{requests,tokens,input-tokens,
    output-tokens}-{limit,remaining,reset}; tokens "rounded to the nearest thousand"; reset
    "The time when the ... rate limit will be fully replenished, provided in RFC 3339
    format"; the tokens-* ones, without workspace limits, "the total tokens remaining,
    where total is the sum of input and output tokens"; retry-after on a 429."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (50, 30_000, 8_000)},
                  behaviour=lambda r: writes(2_600))
    headers, _ = await send(api)
    said = {name: headers[name] for name in HEADERS}
    counted = api.figures()["sonnet-5-5"].input_counted  # a few dozen tokens
    assert said == {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": "2026-11-26T12:00:02Z",  # 1.2 s, rounded up
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "30000",
        "anthropic-ratelimit-input-tokens-reset": "2026-11-26T12:00:01Z",  # 0.1 s or so
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-remaining": "8000",
        "anthropic-ratelimit-output-tokens-reset": "2026-11-26T12:00:00Z",
        "anthropic-ratelimit-tokens-limit": "38000",
        "anthropic-ratelimit-tokens-remaining": "38000",
        "anthropic-ratelimit-tokens-reset": "2026-11-26T12:00:01Z",
    } and 0 < counted < 100
    second = (await send(api))[0]  # the first reply's 2,600 tokens are out now
    assert second["anthropic-ratelimit-output-tokens-remaining"] == "5000"  # 5,400
    assert second["anthropic-ratelimit-tokens-remaining"] == "35000"  # ~29,950 + 5,400
    assert second["anthropic-ratelimit-output-tokens-reset"] == "2026-11-26T12:00:20Z"
    assert not [name for name in second if name.startswith("anthropic-priority")]
    api = standin(clock, limits={"sonnet": (1, None, None)})
    await send(api)
    refused, _ = await limited(api)
    assert refused["retry-after"] == "60" and refused[
        "anthropic-ratelimit-requests-remaining"] == "0"
    assert "anthropic-ratelimit-tokens-limit" not in refused  # no token limits set


async def test_replies_take_their_latency_and_a_stream_opens_with_its_headers():
    """RATE_LIMITS headers come with every answer; STREAMING
    (https://platform.claude.com/docs/en/build-with-claude/streaming): a stream's headers
    come as it opens, before its events. `latency` seconds of the stand-in's clock a reply,
    slept through the injected `sleep`."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (50, 30_000, 8_000)}, latency=2.5,
                  sleep=clock.sleep)
    client = api.client()
    async with client.messages.stream(model="claude-sonnet-5-5", max_tokens=4000,
                                      messages=USER) as stream:
        opened = (clock.now, list(clock.slept))
        assert stream.response.headers["anthropic-ratelimit-requests-remaining"] == "49"
        message = await stream.get_final_message()
    assert opened == (0.0, []) and clock.slept == [2.5] and message.content
    assert api.served[-1].body.get("stream") is True and api.served[-1].at == 0.0
    headers, _ = await send(api)  # whole: after its latency
    assert clock.slept == [2.5, 2.5] and api.served[-1].at == 2.5 and clock.now == 5.0
    clock.slept.clear()
    api.rpm, api.limits = 1, {}
    await send(api)
    await limited(api)  # a 429 comes at once
    assert clock.slept == [2.5]


def test_the_served_stand_in_takes_its_latency_over_http():
    """The same over a real socket with the real clock (serve(), for ANTHROPIC_BASE_URL
    subprocesses): a stream opens at once, its events come after the latency."""
    api = StrictMessagesApi(latency=1.0, limits={"sonnet": (50, 30_000, 8_000)})
    with api.serve() as url:
        client = anthropic.Anthropic(api_key="test-key", base_url=url, max_retries=0)
        began = time.monotonic()
        with client.messages.stream(model="claude-sonnet-5-5", max_tokens=4000,
                                    messages=USER) as stream:
            opened = time.monotonic() - began
            assert stream.response.headers["anthropic-ratelimit-requests-limit"] == "50"
            stream.get_final_message()
        took = time.monotonic() - began
        client.messages.create(model="claude-sonnet-5-5", max_tokens=4000, messages=USER)
        whole = time.monotonic() - began - took
    assert opened < 0.9 and took >= 1.0 and whole >= 1.0


async def test_figures_count_429s_by_bucket_never_fits_cut_replies_and_classes():
    """What a test or bench may assert: 429s by bucket (RATE_LIMITS: "describing which rate
    limit was exceeded"), those that never fit apart, replies stopped by max_tokens
    (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons), and
    per-class totals."""
    clock = Clock()
    api = standin(clock, limits={"sonnet": (1, None, None), "haiku": (50, 100, None)},
                  behaviour=lambda r: writes(300, r.model.id))
    await send(api, max_tokens=200)  # cut at 200
    await limited(api)
    long = [{"role": "user", "content": [{"type": "text", "text": "A long look. " * 60}]}]
    await limited(api, model="claude-haiku-5-5", messages=long)
    await send(api, model="claude-haiku-5-5")
    figures = api.figures()
    sonnet, haiku = figures["sonnet-5-5"], figures["haiku-5-5"]
    assert (sonnet.served, sonnet.cut, sonnet.output, sonnet.max_tokens) == (1, 1, 200, 200)
    assert sonnet.limited == {"requests": 1} and not sonnet.never_fits
    assert (haiku.served, haiku.cut, haiku.output) == (1, 0, 300)
    assert haiku.never_fits == {"input-tokens": 1} and haiku.refused == 1
    assert [r.status for r in api.refused] == [429, 429]


def test_a_bucket_with_replies_being_written_knows_when_it_will_hold_a_cost():
    """limits.py TOKEN BUCKET with flows (OTPM "in real time"): the wait a 429's
    retry-after names counts the tokens still to be written."""
    bucket = TokenBucket(6_000, 6_000, 0.0)  # 100 a second
    bucket.take(0)
    bucket.flow(0.0, 10.0, 4_000)  # 400 a second for 10 s: net -300 a second
    assert bucket.advance(5.0) == pytest.approx(4_500)
    # Level 3,000 at t=10, then +100 a second: 5,000 at t=30.
    assert bucket.wait_for(5_000, 5.0) == pytest.approx(25.0)
    assert bucket.wait_for(6_001, 5.0) == math.inf
    assert bucket.full_in(5.0) == pytest.approx(35.0)
    bucket.flow(12.0, 12.0, -1_000)  # given back at once at t=12
    assert bucket.wait_for(5_000, 5.0) == pytest.approx(15.0)  # 3,200 + 1,000 at 12
