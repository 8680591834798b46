"""One Messages API request, made the way Hearth needs: retried within limits, and judged.

    policy = CallPolicy(retries=4, timeout=120, retry_after_max=30)
    reply = await ask(client, policy, deadline, model=..., max_tokens=..., messages=...)

Every client Hearth builds has the SDK's own retries off (`max_retries=0`), because
the SDK waits out any `retry-after` in full, however long, and knows no deadline.
Here a request is retried after 429, 529, 5xx, 408, 409, a timeout or a dropped
connection, waiting what the API asks when it asks for no more than
`retry_after_max` seconds (else the request gives up at once: the agent acts next
tick rather than hold the world), and never past the caller's deadline.

Every request is the SDK's own: `messages.create` (through `with_raw_response`, for
the rate-limit headers), or `messages.stream` while a model's limits are unknown. An
agent's tools and system prompt are kept as `Prepared` (serialized once, so a request
can be sized before it is sent: adapters/claude_mind/request_plan.py) and handed to
the SDK as the values they hold.

What is not worth retrying is sorted by `halting_cause`: a wrong key (401), a key
without access (403), a model that does not exist or retired (404) and a request
the API refuses as malformed (400, except a prompt too long for the context) can
only be fixed by a person, so a run must stop on them rather than go on without
its agents.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2

from adapters.capacity import LONGEST_PAUSE, Capacity, Ticket
from adapters.request_sizing import LimitTooLow

log = logging.getLogger("hearth.claude")

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class CallPolicy:
    retries: int = 4
    """Further attempts after the first, for trouble that passes."""
    timeout: float = 120.0
    """One attempt's limit, in seconds."""
    retry_after_max: float = 30.0
    """The longest `retry-after` waited out; longer, and the request gives up."""
    backoff: float = 0.5
    """The first wait when the API names none; it doubles each time, up to 8 s."""


class GaveUp(Exception):
    """A request that could not be made within the policy; `cause` is one line why."""

    def __init__(self, cause: str, error: BaseException | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.error = error


class Unservable(GaveUp):
    """A request no wait can admit: a limit of the key is below what it needs
    (adapters/request_sizing.py). Unless the caller can make it smaller (a history
    folded), only a person can mend it, so the run stops. `kind`: the bucket."""

    def __init__(self, cause: str, kind: str) -> None:
        super().__init__(cause)
        self.kind = kind


class Prepared:
    """A part of a request body that many requests send unchanged, serialized once."""

    __slots__ = ("json", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.json = _dumps(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Prepared) and other.json == self.json

    def __hash__(self) -> int:
        return hash(self.json)


def _dumps(value: Any) -> str:
    """JSON as the SDK encodes a body (anthropic/_utils/_json.py)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    """The params with each Prepared part as its value, for the SDK's own call."""
    return {k: v.value if isinstance(v, Prepared) else v for k, v in params.items()}


async def _send(client: anthropic.AsyncAnthropic, timeout: float,
                params: Mapping[str, Any]) -> tuple[anthropic.types.Message, httpx2.Headers]:
    """One request through the SDK's `messages.create`; the reply and its headers."""
    raw = await client.messages.with_raw_response.create(timeout=timeout, **_plain(params))
    return await raw.parse(), raw.headers


async def _streamed(client: anthropic.AsyncAnthropic, timeout: float,
                    params: Mapping[str, Any], capacity: Capacity, ticket: Ticket,
                    ) -> tuple[anthropic.types.Message, httpx2.Headers]:
    """One request streamed through the SDK, its headers told to `capacity` as the
    stream opens: while an endpoint's limits are unknown, only a few requests go
    (`scheduling.model_requests_start`) and the rest wait for the first headers, which
    a whole answer brings only after the model's latency (seconds; a thinking model's,
    tens of seconds). The answer is the SDK's own accumulation of the stream, the same
    `Message` a whole answer gives."""
    async with client.messages.stream(timeout=timeout, **_plain(params)) as stream:
        capacity.opened(ticket, stream.response.headers)
        message = await stream.get_final_message()
    return message, stream.response.headers


RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


STREAM_ERRORS = {"invalid_request_error": 400, "authentication_error": 401,
                 "billing_error": 402, "permission_error": 403, "not_found_error": 404,
                 "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
                 "timeout_error": 504, "overloaded_error": 529}
"""An error event inside a stream (its HTTP status was 200), as the status its type has
in a whole answer (https://platform.claude.com/docs/en/api/errors): "during periods
of high usage, you may receive an overloaded_error, which would normally correspond
to an HTTP 529 in a non-streaming context" (.../build-with-claude/streaming). A type
not known here is taken as a 500: trouble that may pass."""


def status_of(exc: BaseException) -> int | None:
    """The HTTP status a failure stands for (an error event in a stream: its kind's)."""
    status = getattr(exc, "status_code", None)
    if status == 200 and isinstance(exc, anthropic.APIStatusError):
        return STREAM_ERRORS.get(str(_error_of(exc).get("type")), 500)
    return status if isinstance(status, int) else None


def passing(exc: BaseException) -> bool:
    """Whether a failure may pass if asked again (the SDK's own rule, less its waiting)."""
    if isinstance(exc, (anthropic.APITimeoutError, anthropic.APIConnectionError)):
        return True
    if isinstance(exc, anthropic.APIStatusError):
        told = exc.response.headers.get("x-should-retry")
        if told in ("true", "false") and exc.status_code != 200:
            return told == "true"
        status = status_of(exc) or exc.status_code
        return status in RETRIED_STATUSES or status >= 500
    return False


def retry_after(exc: BaseException) -> float | None:
    """Seconds the API asked to wait (`retry-after-ms`, else `retry-after`), if it did."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue
        if value >= 0:
            return value
    return None


RATE_LIMIT_PATIENCE = 20
"""429s in a row one request waits out before giving up: paced by the headers, a
request meets one only when another program shares the key; twenty in a row is a
limit that will not lift (a spend limit, say)."""


async def ask(
    client: anthropic.AsyncAnthropic,
    policy: CallPolicy,
    deadline: float | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
    clock: Clock = time.monotonic,
    capacity: Capacity | None = None,
    stopping: Callable[[], bool] | None = None,
    on_wait: Callable[[float], None] | None = None,
    wait_moves_deadline: bool = True,
    input_tokens: float | None = None,
    resize: Callable[[], Mapping[str, Any]] | None = None,
    **params: Any,
) -> anthropic.types.Message:
    """`client.messages.create(**params)` under `policy`, by `deadline` (a `clock()`
    value; None: none). Raises the API's error when it is not worth retrying, and
    `GaveUp` when retrying could not help in time.

    With a `capacity` (adapters/capacity.py), each attempt first waits for room at the
    model's endpoint; time spent so waiting moves the deadline on (and is told to
    `on_wait`), because it is not the API failing (unless `wait_moves_deadline` is
    false: then the caller's `stopping` says when to give up waiting). A 429 then
    costs no attempt: the capacity pauses every request until the API takes them
    again, and the request waits its turn. `stopping()` true while it waits raises
    CapacityClosed.

    `input_tokens`: the uncached input the request is planned to send (None: the
    capacity's running guess). `resize()`, called before each attempt, gives options
    (`max_tokens`) sized to the limits as they are now known: the first answer, a 429's
    included, may have told other limits than were assumed. A request that no wait
    could admit raises `Unservable`."""
    attempt = limited = 0
    while True:
        ticket = None
        if capacity is not None:
            try:
                if resize is not None:
                    params.update(resize())
                ticket = await capacity.admit(
                    output_tokens=float(params.get("max_tokens") or 0),
                    input_tokens=input_tokens, stopping=stopping)
            except LimitTooLow as exc:
                raise Unservable(str(exc), exc.kind) from None
            if ticket.waited > 0:
                if deadline is not None and wait_moves_deadline:
                    deadline += ticket.waited
                if on_wait is not None:
                    on_wait(ticket.waited)
        try:
            timeout = policy.timeout
            if deadline is not None:
                timeout = min(timeout, deadline - clock())
                if timeout <= 0:
                    raise GaveUp("the turn's time with the API ran out")
            if ticket is None:
                return await client.messages.create(timeout=timeout, **_plain(params))
            streamed = capacity.learning  # type: ignore[union-attr]
            if streamed:
                message, headers = await _streamed(client, timeout, params, capacity, ticket)
            else:
                message, headers = await _send(client, timeout, params)
            usage = message.usage
            capacity.answered(  # type: ignore[union-attr]
                ticket, headers,
                input_used=float((usage.input_tokens or 0)
                                 + (usage.cache_creation_input_tokens or 0)),
                output_used=float(usage.output_tokens or 0), after_reply=not streamed)
            return message
        except anthropic.APIError as exc:
            status = status_of(exc)
            asked = retry_after(exc)
            if ticket is not None and status in (429, 503, 529):
                capacity.refused(ticket, status, exc.response.headers,  # type: ignore[union-attr]
                                 asked)
            if not passing(exc):
                raise
            if ticket is not None and status == 429 and limited < RATE_LIMIT_PATIENCE \
                    and (asked is None or asked <= LONGEST_PAUSE):
                limited += 1  # waits at admit() until the API takes requests again
                log.info("request to %s rate limited; waiting for room", params.get("model"))
                continue
            if attempt >= policy.retries:
                raise GaveUp(f"{describe(exc)} (after {attempt + 1} attempts)", exc) from None
            if asked is not None and asked > policy.retry_after_max:
                raise GaveUp(f"{describe(exc)}; it asked to wait {asked:.0f} s, more than "
                             f"the {policy.retry_after_max:.0f} s a request waits", exc) from None
            wait = asked if asked is not None else _backoff(policy.backoff, attempt)
            if deadline is not None and clock() + wait >= deadline:
                raise GaveUp(f"{describe(exc)}; no time left to try again", exc) from None
            attempt += 1
            log.info("request to %s failed (%s); attempt %d in %.1f s",
                     params.get("model"), describe(exc), attempt + 1, wait)
            await sleep(wait)
        finally:
            if ticket is not None:
                capacity.failed(ticket)  # type: ignore[union-attr]  # a no-op once settled


def _backoff(first: float, attempt: int) -> float:
    """Doubling waits with a little jitter, so many agents do not come back at once."""
    return min(first * 2 ** attempt, 8.0) * (0.75 + random.random() / 4)


def describe(exc: BaseException) -> str:
    """One line on why a request failed, for the trace, the turn's record and the user."""
    if isinstance(exc, GaveUp):
        return exc.cause
    if isinstance(exc, anthropic.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, anthropic.APIConnectionError):
        return "could not reach the API"
    if isinstance(exc, anthropic.APIStatusError):
        kind = _error_of(exc).get("type") or ""
        kind = f" {kind}" if isinstance(kind, str) and kind else ""
        if exc.status_code == 200:  # an error event inside a stream
            return f"the API's answer broke off with{kind}: {message_of(exc)}"[:300]
        return f"the API answered {exc.status_code}{kind}: {message_of(exc)}"[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


def _error_of(exc: anthropic.APIStatusError) -> Mapping[str, Any]:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping):
            return error
    return {}


def message_of(exc: anthropic.APIStatusError) -> str:
    said = _error_of(exc).get("message")
    return str(said) if said else str(exc.message)


def prompt_too_long(exc: BaseException) -> bool:
    """A refusal saying the prompt does not fit: 413, or a 400 about the context."""
    if isinstance(exc, anthropic.APIStatusError) and exc.status_code == 413:
        return True
    if not isinstance(exc, anthropic.BadRequestError):
        return False
    words = message_of(exc).lower()
    return "prompt is too long" in words or ("too long" in words and "token" in words) or (
        "context window" in words and "exceed" in words)


FIXES = {
    401: "the API refused the key: check ANTHROPIC_API_KEY",
    403: "the key may not use this (its organisation or workspace lacks access)",
    404: "the API does not know this model (retired or misspelt): change model_id in "
         "config/agents.yaml, or the model in settings.yaml",
    400: "the API refused Hearth's request as invalid",
}


def halting_cause(exc: BaseException) -> str | None:
    """What a person must fix, in one line, when `exc` means no later request can
    succeed either; None for trouble that may pass or a prompt that is too long."""
    if isinstance(exc, Unservable):
        return exc.cause
    if not isinstance(exc, anthropic.APIStatusError) or prompt_too_long(exc):
        return None
    fix = FIXES.get(status_of(exc) or exc.status_code)
    if fix is None:
        return None
    return f"{fix} ({describe(exc)})"[:400]
