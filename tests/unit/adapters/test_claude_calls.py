"""Hearth's own retries of a Messages API request (adapters/claude_calls.py), through the
real SDK over a scripted transport, with a fake clock and sleep so nothing waits.

The API's rules: https://platform.claude.com/docs/en/api/errors (status codes, error
types, which are worth retrying) and https://platform.claude.com/docs/en/api/rate-limits
(429 with `retry-after`, in seconds).
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest

from adapters.claude_calls import (
    CallPolicy,
    GaveUp,
    ask,
    describe,
    halting_cause,
    prompt_too_long,
    retry_after,
)
from tests.fake_anthropic import ScriptedApi, error, reply, text

USER = [{"role": "user", "content": [{"type": "text", "text": "Hello."}]}]


class Time:
    """A clock that moves only when `sleep` is awaited; every wait asked is kept."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


async def call(api: ScriptedApi, policy: CallPolicy, time: Time,
               deadline: float | None = None) -> anthropic.types.Message:
    return await ask(api.client(), policy, deadline, sleep=time.sleep, clock=time.clock,
                     model="claude-sonnet-5-5", max_tokens=100, messages=USER)


def rate_limited(**headers: str) -> httpx2.Response:
    return error(429, "rate_limit_error", "Number of requests has exceeded your rate limit",
                 **headers)


# ---------------------------------------------------------------- retry-after


async def test_a_429_is_retried_after_the_seconds_it_asks():
    """https://platform.claude.com/docs/en/api/rate-limits: a 429 carries retry-after."""
    api = ScriptedApi([rate_limited(**{"retry-after": "1"}), reply(text("Here."))])
    time = Time()
    answer = await call(api, CallPolicy(retries=2), time)
    assert answer.content[0].text == "Here."
    assert time.waits == [1.0] and len(api.requests) == 2


async def test_retry_after_ms_is_honoured_before_retry_after():
    api = ScriptedApi([rate_limited(**{"retry-after-ms": "250", "retry-after": "9"}),
                       reply(text("Here."))])
    time = Time()
    await call(api, CallPolicy(retries=1), time)
    assert time.waits == [pytest.approx(0.25)] and len(api.requests) == 2


async def test_a_wait_longer_than_the_policy_allows_gives_up_at_once_naming_it():
    api = ScriptedApi([rate_limited(**{"retry-after": "120"}), reply(text("Too late."))])
    time = Time()
    with pytest.raises(GaveUp) as caught:
        await call(api, CallPolicy(retries=4, retry_after_max=30), time)
    assert "120 s" in str(caught.value) and "30 s" in str(caught.value)
    assert "429" in caught.value.cause
    assert isinstance(caught.value.error, anthropic.RateLimitError)
    assert len(api.requests) == 1 and time.waits == []
    assert describe(caught.value) == caught.value.cause


async def test_a_wait_of_exactly_the_most_allowed_is_waited_out():
    api = ScriptedApi([rate_limited(**{"retry-after": "30"}), reply(text("Here."))])
    time = Time()
    await call(api, CallPolicy(retries=1, retry_after_max=30), time)
    assert time.waits == [30.0]


def test_retry_after_reads_what_the_api_sent():
    def told(**headers: str) -> float | None:
        return retry_after(anthropic.RateLimitError(
            "slow", response=httpx2.Response(429, headers=headers,
                                             request=httpx2.Request("POST", "http://x")),
            body=None))

    assert told(**{"retry-after": "2"}) == 2.0
    assert told(**{"retry-after": "0.5"}) == 0.5
    assert told(**{"retry-after-ms": "1500"}) == 1.5
    assert told(**{"retry-after-ms": "soon", "retry-after": "3"}) == 3.0
    assert told(**{"retry-after": "-1"}) is None
    assert told() is None
    assert retry_after(ValueError("no response")) is None


# ---------------------------------------------------------------- the deadline


async def test_no_request_is_sent_once_the_deadline_has_passed():
    api = ScriptedApi([reply(text("Never sent."))])
    time = Time()
    with pytest.raises(GaveUp, match="ran out"):
        await call(api, CallPolicy(), time, deadline=time.now - 0.1)
    assert api.requests == []


async def test_a_wait_that_would_pass_the_deadline_is_not_begun():
    api = ScriptedApi([rate_limited(**{"retry-after": "10"}), reply(text("Too late."))])
    time = Time()
    with pytest.raises(GaveUp, match="no time left"):
        await call(api, CallPolicy(retries=4, retry_after_max=30), time, deadline=time.now + 5)
    assert len(api.requests) == 1 and time.waits == []


async def test_the_deadline_stops_backing_off_however_many_retries_remain():
    api = ScriptedApi(otherwise=lambda body: error(500, "api_error", "Internal server error"))
    time = Time()
    start = time.now
    with pytest.raises(GaveUp, match="no time left") as caught:
        await call(api, CallPolicy(retries=20, backoff=0.5), time, deadline=start + 6)
    assert 2 <= len(api.requests) < 21
    assert time.now < start + 6 and sum(time.waits) < 6
    assert isinstance(caught.value.error, anthropic.InternalServerError)


async def test_each_attempt_is_limited_by_the_time_left(monkeypatch):
    """The last attempt before the deadline may not take the policy's whole timeout."""
    seen: list[Any] = []
    api = ScriptedApi([reply(text("Here.")), reply(text("Again."))])
    client = api.client()
    create = client.messages.create

    async def spy(**params: Any) -> Any:
        seen.append(params["timeout"])
        return await create(**params)

    monkeypatch.setattr(client.messages, "create", spy)
    time = Time()
    for deadline in (time.now + 7.5, None):
        await ask(client, CallPolicy(timeout=120), deadline, sleep=time.sleep,
                  clock=time.clock, model="claude-sonnet-5-5", max_tokens=10, messages=USER)
    assert seen == [pytest.approx(7.5), 120]


# ---------------------------------------------------------------- what is retried


@pytest.mark.parametrize("fault", [
    error(500, "api_error", "Internal server error"),
    error(529, "overloaded_error", "Overloaded"),
    error(503, "api_error", "Service unavailable"),
    error(408, "timeout_error", "Request timed out"),
    httpx2.ConnectError("connection refused"),
    httpx2.ReadTimeout("too slow"),
])
async def test_trouble_that_passes_is_retried(fault):
    """https://platform.claude.com/docs/en/api/errors: 500 api_error, 529 overloaded_error
    and timeouts are temporary."""
    api = ScriptedApi([fault, fault, reply(text("Better."))])
    time = Time()
    answer = await call(api, CallPolicy(retries=2, backoff=0.5), time)
    assert answer.content[0].text == "Better." and len(api.requests) == 3
    # Backing off: about 0.5 s, then about 1 s (a quarter less at most, for jitter).
    assert len(time.waits) == 2
    assert 0.375 <= time.waits[0] <= 0.5 and 0.75 <= time.waits[1] <= 1.0


async def test_retries_run_out_with_the_cause_and_the_count():
    api = ScriptedApi([error(529, "overloaded_error", "Overloaded")] * 3)
    time = Time()
    with pytest.raises(GaveUp) as caught:
        await call(api, CallPolicy(retries=2), time)
    assert len(api.requests) == 3
    assert caught.value.cause == (
        "the API answered 529 overloaded_error: Overloaded (after 3 attempts)")


async def test_with_no_retries_the_first_failure_gives_up():
    api = ScriptedApi([error(500, "api_error", "boom")])
    with pytest.raises(GaveUp, match="after 1 attempts"):
        await call(api, CallPolicy(retries=0), Time())
    assert len(api.requests) == 1


async def test_x_should_retry_false_is_honoured():
    """The API may say a failure is not worth repeating (the SDK obeys x-should-retry)."""
    api = ScriptedApi([error(529, "overloaded_error", "Overloaded", **{"x-should-retry": "false"}),
                       reply(text("Never sent."))])
    time = Time()
    with pytest.raises(anthropic.OverloadedError):
        await call(api, CallPolicy(retries=3), time)
    assert len(api.requests) == 1 and time.waits == []


async def test_x_should_retry_true_is_honoured_even_on_a_status_not_retried():
    api = ScriptedApi([error(400, "invalid_request_error", "try again",
                             **{"x-should-retry": "true"}), reply(text("Fine."))])
    time = Time()
    assert (await call(api, CallPolicy(retries=1), time)).content[0].text == "Fine."
    assert len(api.requests) == 2


# ---------------------------------------------------------------- what stops a run


@pytest.mark.parametrize(("fault", "kind", "words"), [
    (error(401, "authentication_error", "invalid x-api-key"), anthropic.AuthenticationError,
     "ANTHROPIC_API_KEY"),
    (error(403, "permission_error", "Your API key does not have permission"),
     anthropic.PermissionDeniedError, "organisation or workspace"),
    (error(404, "not_found_error", "model: claude-sonnet-4"), anthropic.NotFoundError,
     "model_id in config/agents.yaml"),
    (error(400, "invalid_request_error", "messages: roles must alternate"),
     anthropic.BadRequestError, "invalid"),
])
async def test_what_only_a_person_can_fix_is_not_retried_and_halts_in_one_line(fault, kind,
                                                                              words):
    """https://platform.claude.com/docs/en/api/errors: 400 invalid_request_error, 401
    authentication_error, 403 permission_error, 404 not_found_error."""
    api = ScriptedApi([fault, reply(text("Never sent."))])
    time = Time()
    with pytest.raises(kind) as caught:
        await call(api, CallPolicy(retries=4), time)
    assert len(api.requests) == 1 and time.waits == []
    cause = halting_cause(caught.value)
    assert cause is not None and words in cause
    assert f"the API answered {fault.status_code}" in cause
    assert "\n" not in cause and "Traceback" not in cause and len(cause) <= 400
    assert not prompt_too_long(caught.value)


async def test_a_prompt_too_long_is_not_retried_and_does_not_halt():
    """https://platform.claude.com/docs/en/api/errors: a 400 for a prompt over the context
    window (the mind compacts the history and goes on)."""
    api = ScriptedApi([error(400, "invalid_request_error",
                             "prompt is too long: 210000 tokens > 200000 maximum")])
    with pytest.raises(anthropic.BadRequestError) as caught:
        await call(api, CallPolicy(retries=4), Time())
    assert len(api.requests) == 1
    assert prompt_too_long(caught.value) and halting_cause(caught.value) is None


async def test_a_413_request_too_large_is_not_retried_and_does_not_halt():
    """https://platform.claude.com/docs/en/api/errors: 413 request_too_large."""
    api = ScriptedApi([error(413, "request_too_large", "Request exceeds the maximum size")])
    with pytest.raises(anthropic.APIStatusError) as caught:
        await call(api, CallPolicy(retries=4), Time())
    assert caught.value.status_code == 413 and len(api.requests) == 1
    assert prompt_too_long(caught.value) and halting_cause(caught.value) is None


@pytest.mark.parametrize("fault", [
    error(500, "api_error", "Internal server error"),
    error(529, "overloaded_error", "Overloaded"),
    error(429, "rate_limit_error", "Slow down"),
    httpx2.ConnectError("connection refused"),
])
async def test_trouble_that_passes_never_halts(fault):
    api = ScriptedApi([fault])
    with pytest.raises(GaveUp) as caught:
        await call(api, CallPolicy(retries=0), Time())
    assert caught.value.error is not None
    assert halting_cause(caught.value.error) is None
    assert halting_cause(caught.value) is None


def test_what_is_no_api_error_never_halts():
    assert halting_cause(ValueError("not an API error")) is None


# ---------------------------------------------------------------- describe


async def test_describe_says_in_one_line_what_the_api_answered():
    api = ScriptedApi([error(404, "not_found_error", "model: claude-x")])
    with pytest.raises(anthropic.NotFoundError) as caught:
        await call(api, CallPolicy(), Time())
    assert describe(caught.value) == "the API answered 404 not_found_error: model: claude-x"


def test_describe_names_a_timeout_and_a_lost_connection():
    request = httpx2.Request("POST", "http://x")
    assert describe(anthropic.APITimeoutError(request)) == "the request timed out"
    assert describe(anthropic.APIConnectionError(request=request)) == "could not reach the API"
    assert describe(GaveUp("why")) == "why"
