"""Many agents' Messages requests sent as one Message Batch, at half the price.

    gate = BatchGate(poll_seconds=30, on_pending=show)
    reply = await gate.create(client, model=..., max_tokens=..., messages=...)

In economy mode nobody watches the world live, so an agent may wait minutes for its
answer if that halves the bill. The Message Batches API
(https://platform.claude.com/docs/en/build-with-claude/batch-processing) answers up to
100,000 requests within 24 hours, its results in any order, each named by its
`custom_id`. `create` keeps the shape of `messages.create`, so a turn need not know.

Calls gather while they keep coming (a batch goes once `gather_seconds` pass with no
new call), so the agents of one step, whose turns call at once, share a batch; each
client (key, base URL) has its own. A sent batch is polled every `poll_seconds`.

Failures stay as narrow as they are: a request the batch refused fails its caller
alone (`BatchRequestFailed`). Trouble that passes (connection, 429, 5xx, 529) on the
batch's own calls is retried a few times, then fails every caller of the batch;
anything else (401, 403, 404, a batch refused whole) reaches them as the SDK raised
it, so their own handling (a wrong key stops the run) applies.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anthropic

from adapters.claude_calls import passing

log = logging.getLogger("hearth.claude.batches")

RETRIES = 4
"""Further attempts of a batch call whose trouble may pass; waits from BACKOFF, doubling."""
BACKOFF = 1.0
MAX_REQUESTS = 100_000
"""The most requests one batch may hold (the guide's limit); more start a new batch."""


@dataclass(frozen=True, slots=True)
class Pending:
    """What is in flight, for the observer: batches sent and not yet answered."""

    batches: int
    requests: int
    since: float
    """The gate's clock when the oldest of them was sent."""


class BatchRequestFailed(anthropic.AnthropicError):
    """One caller's request got no answer from its batch. `kind`, for a caller that
    sorts failures: the API's error type, "canceled", "expired", "missing", "unreachable"."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class BatchClosed(anthropic.AnthropicError):
    """The gate closed (the run is ending) before this request was answered."""


class _Run:
    """One batch, from its first call until every caller has its answer."""

    def __init__(self, client: anthropic.AsyncAnthropic) -> None:
        self.client = client
        self.calls: list[tuple[dict[str, Any], asyncio.Future[anthropic.types.Message]]] = []
        self.sent: dict[str, asyncio.Future[anthropic.types.Message]] = {}  # by custom_id
        self.batch_id: str | None = None
        self.sent_at = 0.0
        self.settled = False  # nothing more of it at the API to wait for or cancel
        self.task: asyncio.Task[None] | None = None

    def waiting(self) -> list[asyncio.Future[anthropic.types.Message]]:
        """The callers still waiting (a cancelled caller's future is done)."""
        return [future for _, future in self.calls if not future.done()]

    def fail(self, error: BaseException) -> None:
        for future in self.waiting():
            future.set_exception(error)


class BatchGate:
    def __init__(self, *, poll_seconds: float = 30.0, gather_seconds: float = 0.05,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 clock: Callable[[], float] = time.monotonic,
                 on_pending: Callable[[Pending | None], None] | None = None,
                 give_up_seconds: float = 86_400.0) -> None:
        self.poll_seconds = poll_seconds
        self.gather_seconds = gather_seconds
        self.give_up_seconds = give_up_seconds
        """A batch not ended this long after it was sent is canceled (the API's own
        expiry is 24 hours)."""
        self._sleep = sleep
        self._clock = clock
        self._on_pending = on_pending
        self._gathering: dict[int, _Run] = {}  # id(client) -> the batch gathering its calls
        self._runs: set[_Run] = set()  # also keeps their tasks from being collected
        self._flying: list[_Run] = []  # sent, not yet done
        self._closed = False
        self.sent_batches = 0
        self.sent_requests = 0

    async def create(self, client: anthropic.AsyncAnthropic,
                     **params: Any) -> anthropic.types.Message:
        """What `client.messages.create(**params)` returns, answered through a batch."""
        if self._closed:
            raise BatchClosed("the batch gate is closed")
        body = _body(params)
        run = self._gathering.get(id(client))
        if run is None or len(run.calls) >= MAX_REQUESTS:
            run = _Run(client)
            self._gathering[id(client)] = run
            self._runs.add(run)
            run.task = asyncio.create_task(self._run(run), name="claude-batch")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        run.calls.append((body, future))
        return await future

    async def close(self) -> None:
        """Stop every batch: its callers get BatchClosed, and a batch already sent is
        canceled at the API (best effort), so no one pays for answers nobody reads."""
        self._closed = True
        runs = list(self._runs)
        for run in runs:
            if run.task is not None:
                run.task.cancel()
        await asyncio.gather(*(r.task for r in runs if r.task is not None),
                             return_exceptions=True)
        for run in runs:
            run.fail(BatchClosed("the batch gate closed before this request was answered"))
            await self._cancel(run)

    # ------------------------------------------------------------------ one batch

    async def _run(self, run: _Run) -> None:
        try:
            await self._gather(run)
            if not run.waiting():
                return
            batch_id = await self._send(run)
            if await self._until_ended(run, batch_id):
                await self._deliver(run, batch_id)
        except asyncio.CancelledError:
            run.fail(BatchClosed("the batch gate closed before this request was answered"))
            raise
        except anthropic.AnthropicError as error:  # as raised: the caller judges it
            run.fail(error)
        except Exception as error:  # a bug here must not leave callers waiting forever
            log.exception("a message batch failed")
            failed = BatchRequestFailed(f"the batch failed: {error!r}", "unreachable")
            failed.__cause__ = error
            run.fail(failed)
        finally:
            self._stop_gathering(run)
            self._runs.discard(run)
            if run in self._flying:
                self._flying.remove(run)
                self._tell()

    async def _gather(self, run: _Run) -> None:
        """Wait until `gather_seconds` pass without a new call, then stop gathering:
        later calls start the next batch."""
        while len(run.calls) < MAX_REQUESTS:
            seen = len(run.calls)
            await self._sleep(self.gather_seconds)
            if len(run.calls) == seen:
                break
        self._stop_gathering(run)

    def _stop_gathering(self, run: _Run) -> None:
        if self._gathering.get(id(run.client)) is run:
            del self._gathering[id(run.client)]

    async def _send(self, run: _Run) -> str:
        """Create the batch from the callers still waiting, each with its own id."""
        requests = []
        for body, future in run.calls:
            if not future.done():
                custom_id = f"r{len(requests)}"
                run.sent[custom_id] = future
                requests.append({"custom_id": custom_id, "params": body})
        batch = await self._call("sent", lambda: run.client.messages.batches.create(
            requests=requests))  # type: ignore[arg-type]
        run.batch_id, run.sent_at = batch.id, self._clock()
        self.sent_batches += 1
        self.sent_requests += len(requests)
        self._flying.append(run)
        self._tell()
        return batch.id

    async def _until_ended(self, run: _Run, batch_id: str) -> bool:
        """Poll until the batch has ended (True); False if it was canceled instead,
        because its callers are all gone or it took longer than `give_up_seconds`."""
        while True:
            left = run.sent_at + self.give_up_seconds - self._clock()
            if left <= 0:
                await self._cancel(run)
                run.fail(BatchRequestFailed(
                    f"the batch had not ended after {self.give_up_seconds:g} s and was "
                    "canceled: this request expired", "expired"))
                return False
            await self._sleep(min(self.poll_seconds, left))
            if not run.waiting():
                await self._cancel(run)
                return False
            batch = await self._call(
                "polled", lambda: run.client.messages.batches.retrieve(batch_id))
            if batch.processing_status == "ended":
                run.settled = True
                return True

    async def _deliver(self, run: _Run, batch_id: str) -> None:
        """Give each caller its own result, matched by custom_id (the order of the
        results is not the order of the requests)."""
        async def read() -> list[Any]:
            return [line async for line in await run.client.messages.batches.results(batch_id)]

        results = {line.custom_id: line.result for line in await self._call("read", read)}
        for custom_id, future in run.sent.items():
            if future.done():
                continue
            result = results.get(custom_id)
            if result is None:
                future.set_exception(BatchRequestFailed(
                    "the batch's results hold no answer to this request", "missing"))
            elif result.type == "succeeded":
                future.set_result(result.message)
            elif result.type == "errored":
                error = result.error.error
                future.set_exception(BatchRequestFailed(
                    f"the batch refused this request: {error.type}: {error.message}",
                    error.type))
            else:
                future.set_exception(BatchRequestFailed(
                    f"the batch ended without answering this request: it was {result.type}",
                    result.type))

    async def _call(self, what: str, make: Callable[[], Awaitable[Any]]) -> Any:
        """One of the batch's own API calls, retried while its trouble may pass."""
        attempt = 0
        while True:
            try:
                return await make()
            except anthropic.AnthropicError as error:
                if not passing(error):  # the same rule as every request (claude_calls)
                    raise
                if attempt == RETRIES:
                    raise BatchRequestFailed(
                        f"the batch could not be {what} after {RETRIES + 1} attempts: "
                        f"{_describe(error)}", "unreachable") from error
                wait = BACKOFF * 2 ** attempt
                log.info("message batch not %s (%s); again in %g s", what,
                         _describe(error), wait)
                await self._sleep(wait)
                attempt += 1

    async def _cancel(self, run: _Run) -> None:
        """Cancel a sent batch no one waits for; a failure is only logged (it ends
        within 24 hours anyway)."""
        if run.batch_id is None or run.settled:
            return
        run.settled = True
        try:
            await run.client.messages.batches.cancel(run.batch_id)
        except anthropic.AnthropicError as error:
            log.warning("message batch %s not canceled: %s", run.batch_id, _describe(error))

    def _tell(self) -> None:
        if self._on_pending is None:
            return
        flying = self._flying
        self._on_pending(Pending(len(flying), sum(len(r.sent) for r in flying),
                                 min(r.sent_at for r in flying)) if flying else None)


def _body(params: dict[str, Any]) -> dict[str, Any]:
    """`messages.create`'s arguments as a batch request's `params`. A batch answers
    as a file, so it cannot stream; a per-request timeout means nothing there and is
    dropped; extra headers or query cannot travel with one request of a batch."""
    if params.get("stream"):
        raise TypeError("a Message Batch cannot stream its answers")
    for key in ("extra_headers", "extra_query"):
        if params.get(key):
            raise TypeError(f"{key} cannot be sent with one request of a Message Batch")
    body = {k: v for k, v in params.items()
            if k not in ("stream", "timeout", "extra_headers", "extra_query", "extra_body")
            and not isinstance(v, anthropic.NotGiven | anthropic.Omit)}
    return {**body, **(params.get("extra_body") or {})}


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:300]  # the SDK's text names the status
