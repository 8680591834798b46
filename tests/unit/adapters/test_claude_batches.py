"""BatchGate (adapters/claude_batches.py): agents' requests answered through one Message
Batch, by the real SDK against the strict stand-in (tests/standin/batches.py), on a clock
that moves only when the gate sleeps.

The API's rules: https://platform.claude.com/docs/en/build-with-claude/batch-processing
(custom_id, results in any order, errored / canceled / expired results) and
https://platform.claude.com/docs/en/api/errors (which statuses are worth retrying).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import httpx2
import pytest

from adapters.claude_batches import BatchClosed, BatchGate, BatchRequestFailed, Pending
from tests.messages_standin import StrictMessagesApi

MODEL = "claude-haiku-5-5"
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class Stand:
    """The stand-in, its clock, and every request the SDK sent it (method, path)."""

    def __init__(self, batch_seconds: float = 120.0, **kw: Any) -> None:
        self.now = [0.0]
        self.api = StrictMessagesApi(clock=lambda: self.now[0], batch_seconds=batch_seconds,
                                     **kw)
        self.calls: list[tuple[str, str]] = []
        self.overloads = 0
        """How many of the next batch creations answer 529."""

    async def sleep(self, seconds: float) -> None:
        self.now[0] += seconds
        await asyncio.sleep(0)

    def gate(self, **kw: Any) -> BatchGate:
        return BatchGate(sleep=self.sleep, clock=lambda: self.now[0], **kw)

    def client(self, api_key: str = "test-key") -> anthropic.AsyncAnthropic:
        async def handle(request: httpx2.Request) -> httpx2.Response:
            path = request.url.path
            self.calls.append((request.method, path))
            if (request.method, path) == ("POST", "/v1/messages/batches") and self.overloads:
                self.overloads -= 1
                return httpx2.Response(529, json=OVERLOADED)
            return self.api.handler(request)

        return anthropic.AsyncAnthropic(
            api_key=api_key, max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)))

    def count(self, method: str, ending: str) -> int:
        return sum(1 for m, p in self.calls if m == method and p.endswith(ending))


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024,
            "messages": [{"role": "user", "content": text}], **params}


async def until(condition: Any) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


async def test_concurrent_calls_share_one_batch_and_each_gets_its_own_reply():
    stand = Stand(batch_seconds=120)
    gate, client = stand.gate(poll_seconds=30), stand.client()
    texts = [f"Walk {i} steps north." for i in range(5)]
    replies = await asyncio.gather(*(gate.create(client, **ask(t)) for t in texts))
    assert gate.sent_batches == 1 and gate.sent_requests == 5
    assert len(stand.api.batches.made) == 1
    assert all(isinstance(r, anthropic.types.Message) for r in replies)
    asked_by_reply = {s.reply["id"]: s.body["messages"][0]["content"]
                      for s in stand.api.served}
    assert [asked_by_reply[r.id] for r in replies] == texts  # results came reversed
    assert [s.batch for s in stand.api.served] == [True] * 5
    # sent at 0.05; polled at 30.05, 60.05, 90.05 and 120.05, when it had ended; the
    # SDK's results() looks at the batch once more, for its results_url
    (batch_id,) = stand.api.batches.made
    assert stand.count("GET", batch_id) == 4 + 1
    assert stand.count("GET", f"{batch_id}/results") == 1
    assert stand.now[0] == pytest.approx(120.05)


async def test_a_refused_request_fails_its_caller_alone():
    stand = Stand(batch_seconds=60)
    gate, client = stand.gate(), stand.client()
    got = await asyncio.gather(
        gate.create(client, **ask("Look around.")),
        gate.create(client, **ask("Hi.", model="claude-nonesuch-1")),
        gate.create(client, **ask("Say hello.")), return_exceptions=True)
    assert isinstance(got[0], anthropic.types.Message)
    assert isinstance(got[2], anthropic.types.Message)
    assert isinstance(got[1], BatchRequestFailed) and got[1].kind == "not_found_error"
    assert str(got[1]).startswith("the batch refused this request: not_found_error: ")
    assert gate.sent_batches == 1 and len(stand.api.served) == 2


async def test_a_wrong_key_reaches_every_caller_as_the_sdk_raised_it():
    stand = Stand()
    gate, client = stand.gate(), stand.client(api_key="wrong")
    got = await asyncio.gather(*(gate.create(client, **ask(f"Hi {i}.")) for i in range(3)),
                               return_exceptions=True)
    assert all(isinstance(e, anthropic.AuthenticationError) for e in got)
    assert gate.sent_batches == 0 and stand.count("POST", "/batches") == 1  # not retried


async def test_an_overloaded_create_is_retried_after_a_short_wait():
    stand = Stand(batch_seconds=30)
    stand.overloads = 1
    gate, client = stand.gate(poll_seconds=30), stand.client()
    replies = await asyncio.gather(*(gate.create(client, **ask(f"Hi {i}.")) for i in range(2)))
    assert len(replies) == 2 and gate.sent_batches == 1
    assert stand.count("POST", "/batches") == 2
    assert stand.now[0] == pytest.approx(0.05 + 1 + 30)  # gathered, 1 s backoff, one poll


async def test_a_create_overloaded_past_the_retries_fails_every_caller_naming_it():
    stand = Stand()
    stand.overloads = 99
    gate, client = stand.gate(), stand.client()
    got = await asyncio.gather(*(gate.create(client, **ask(f"Hi {i}.")) for i in range(2)),
                               return_exceptions=True)
    for error in got:
        assert isinstance(error, BatchRequestFailed) and error.kind == "unreachable"
        assert "OverloadedError" in str(error) and "5 attempts" in str(error)
    assert stand.count("POST", "/batches") == 5 and gate.sent_batches == 0


async def test_on_pending_tells_what_is_in_flight_and_when_nothing_is():
    stand = Stand(batch_seconds=60)
    seen: list[Pending | None] = []
    gate, client = stand.gate(on_pending=seen.append), stand.client()
    await asyncio.gather(*(gate.create(client, **ask(f"Hi {i}.")) for i in range(3)))
    assert seen == [Pending(1, 3, pytest.approx(0.05)), None]


async def test_a_call_after_the_batch_went_starts_the_next_batch():
    stand = Stand(batch_seconds=300)
    seen: list[Pending | None] = []
    gate, client = stand.gate(on_pending=seen.append), stand.client()
    first = asyncio.create_task(gate.create(client, **ask("First.")))
    await until(lambda: gate.sent_batches == 1)
    second = asyncio.create_task(gate.create(client, **ask("Second.")))
    replies = await asyncio.gather(first, second)
    assert gate.sent_batches == 2 and len(stand.api.batches.made) == 2
    assert max(p.batches for p in seen if p) == 2 and seen[-1] is None
    assert [r.id for r in replies] == [s.reply["id"] for s in stand.api.served]


async def test_calls_through_different_clients_go_in_different_batches():
    stand = Stand(batch_seconds=30, keys={"k1": "acct-1", "k2": "acct-2"})
    gate = stand.gate()
    one, two = stand.client("k1"), stand.client("k2")
    await asyncio.gather(gate.create(one, **ask("a")), gate.create(two, **ask("b")),
                         gate.create(one, **ask("c")))
    assert gate.sent_batches == 2
    assert sorted(len(b.items) for b in stand.api.batches.made.values()) == [1, 2]


async def test_close_fails_the_waiting_callers_and_cancels_their_batch():
    stand = Stand(batch_seconds=3600)
    seen: list[Pending | None] = []
    gate, client = stand.gate(on_pending=seen.append), stand.client()
    calls = [asyncio.create_task(gate.create(client, **ask(f"Hi {i}."))) for i in range(2)]
    await until(lambda: gate.sent_batches == 1)
    await gate.close()
    for call in calls:
        with pytest.raises(BatchClosed):
            await call
    (batch,) = stand.api.batches.made.values()
    assert batch.canceled is not None and not stand.api.served
    assert seen[-1] is None
    with pytest.raises(BatchClosed):
        await gate.create(client, **ask("Too late."))


async def test_a_cancelled_caller_leaves_the_others_and_the_last_one_cancels_the_batch():
    stand = Stand(batch_seconds=100)
    gate, client = stand.gate(poll_seconds=30), stand.client()
    keep = asyncio.create_task(gate.create(client, **ask("Keep.")))
    drop = asyncio.create_task(gate.create(client, **ask("Drop.")))
    await until(lambda: gate.sent_batches == 1)
    drop.cancel()
    assert isinstance(await keep, anthropic.types.Message)
    assert drop.cancelled()
    alone = asyncio.create_task(gate.create(client, **ask("Alone.")))
    await until(lambda: gate.sent_batches == 2)
    alone.cancel()
    await until(lambda: stand.count("POST", "/cancel") == 1)
    assert list(stand.api.batches.made.values())[1].canceled is not None


async def test_a_batch_past_give_up_seconds_is_canceled_and_its_callers_told_expired():
    stand = Stand(batch_seconds=1000)
    gate, client = stand.gate(poll_seconds=30, give_up_seconds=100), stand.client()
    with pytest.raises(BatchRequestFailed, match="expired") as failed:
        await gate.create(client, **ask("Hi."))
    assert failed.value.kind == "expired"
    (batch,) = stand.api.batches.made.values()
    assert batch.canceled == pytest.approx(100.05) and not stand.api.served


async def test_stream_is_refused_before_anything_is_sent():
    stand = Stand()
    gate, client = stand.gate(), stand.client()
    with pytest.raises(TypeError, match="stream"):
        await gate.create(client, **ask("Hi."), stream=True)
    assert not stand.calls
