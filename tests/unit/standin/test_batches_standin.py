"""The stand-in's Message Batches API, through the real SDK (tests/standin/batches.py).

Each test drives `client.messages.batches` over httpx2.MockTransport (or real HTTP for
`serve()`), on an injected clock where time matters, and its docstring names the page the
rule comes from. BATCHES is the guide; the reference pages are named in batches.py.
"""

from __future__ import annotations

import datetime
from typing import Any

import anthropic
import httpx2
import pytest

from tests.messages_standin import StrictMessagesApi

DOCS = "https://platform.claude.com/docs/en"
BATCHES = f"{DOCS}/build-with-claude/batch-processing"
MODEL = "claude-sonnet-5-5"
WALL = datetime.datetime(2026, 11, 26, 12, 0, 0, tzinfo=datetime.UTC)


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 4000,
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            **params}


def cached_system(ttl: str | None = None) -> list[dict[str, Any]]:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return [{"type": "text", "text": "You are Ember. " + "The meadow is wide and quiet. " * 500,
             "cache_control": mark}]


def timed(seconds: float, **kw: Any) -> tuple[StrictMessagesApi, list[float]]:
    now = [0.0]
    return StrictMessagesApi(clock=lambda: now[0], wall=lambda: WALL, batch_seconds=seconds,
                             **kw), now


async def results_of(client: anthropic.AsyncAnthropic, batch_id: str) -> list[Any]:
    return [line async for line in await client.messages.batches.results(batch_id)]


async def test_a_batch_is_in_progress_until_it_ends_and_results_match_by_custom_id():
    """https://platform.claude.com/docs/en/build-with-claude/batch-processing: a new batch is
    `in_progress` with every request `processing`, expires 24 hours after creation, and gets
    a `results_url` once ended; results "can be returned in any order" (match them by
    custom_id); usage is reported, at the batch tier."""
    api, now = timed(600)
    client = api.client()
    asked = {f"walk-{i}": f"Walk {i} steps north." for i in range(3)}
    batch = await client.messages.batches.create(
        requests=[{"custom_id": c, "params": ask(t)} for c, t in asked.items()])
    assert batch.id.startswith("msgbatch_") and batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 3 and batch.request_counts.succeeded == 0
    assert batch.results_url is None and batch.ended_at is None
    assert batch.expires_at - batch.created_at == datetime.timedelta(hours=24)
    now[0] = 599.0
    still = await client.messages.batches.retrieve(batch.id)
    assert still.processing_status == "in_progress" and not api.served
    now[0] = 600.0
    ended = await client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.request_counts.succeeded == 3
    assert ended.request_counts.processing == 0
    assert ended.ended_at - ended.created_at == datetime.timedelta(seconds=600)
    assert ended.results_url == f"https://api.anthropic.com/v1/messages/batches/{batch.id}/results"
    lines = await results_of(client, batch.id)
    assert [line.custom_id for line in lines] != list(asked)  # not in the requests' order
    assert sorted(line.custom_id for line in lines) == sorted(asked)
    for line in lines:
        assert line.result.type == "succeeded"
        usage = line.result.message.usage
        assert usage.input_tokens > 0 and usage.output_tokens > 0
        assert usage.service_tier == "batch"
    assert [s.batch for s in api.served] == [True] * 3
    assert [s.at for s in api.served] == [600.0] * 3
    by_id = {line.custom_id: line.result.message.id for line in lines}
    assert [s.reply["id"] for s in api.served] == [by_id[c] for c in asked]  # asked in order


async def test_a_request_the_messages_api_refuses_is_errored_and_the_others_succeed():
    """https://platform.claude.com/docs/en/build-with-claude/batch-processing: params are
    validated asynchronously; a failed request is `errored` with the standard error shape
    and does not affect the others; `stream: true` is not supported in a batch."""
    api, _ = timed(0)
    client = api.client()
    batch = await client.messages.batches.create(requests=[
        {"custom_id": "good", "params": ask("Look around.")},
        {"custom_id": "no-max", "params": {k: v for k, v in ask("Hi.").items()
                                            if k != "max_tokens"}},
        {"custom_id": "streamed", "params": ask("Hi.", stream=True)},
        {"custom_id": "unknown-model", "params": ask("Hi.", model="claude-nonesuch-1")}])
    assert batch.processing_status == "in_progress"  # nothing refused at creation
    ended = await client.messages.batches.retrieve(batch.id)
    assert (ended.request_counts.succeeded, ended.request_counts.errored) == (1, 3)
    results = {line.custom_id: line.result for line in await results_of(client, batch.id)}
    assert results["good"].type == "succeeded"
    for custom_id in ("no-max", "streamed"):
        assert results[custom_id].type == "errored"
        assert results[custom_id].error.type == "error"
        assert results[custom_id].error.error.type == "invalid_request_error"
    assert "max_tokens" in results["no-max"].error.error.message
    assert results["unknown-model"].error.error.type == "not_found_error"
    assert [s.body["messages"][0]["content"][0]["text"] for s in api.served] == ["Look around."]
    assert sorted(r.path.rsplit("#", 1)[1] for r in api.refused) == [
        "no-max", "streamed", "unknown-model"]


@pytest.mark.parametrize("requests, extra", [
    ([{"custom_id": "same", "params": ask("a")}, {"custom_id": "same", "params": ask("b")}],
     None),
    ([{"custom_id": "has space", "params": ask("a")}], None),
    ([{"custom_id": "x" * 65, "params": ask("a")}], None),
    ([{"custom_id": "", "params": ask("a")}], None),
    ([], None),
    ([{"custom_id": "one", "params": ask("a")}], {"priority": "high"}),
], ids=["duplicate", "pattern", "too-long", "empty-id", "no-requests", "unknown-field"])
async def test_what_the_batch_itself_breaks_refuses_it_with_400(requests, extra):
    """https://platform.claude.com/docs/en/api/creating-message-batches: 1 to 100,000
    requests, each custom_id unique and matching ^[a-zA-Z0-9_-]{1,64}$, the body
    `requests` alone; a batch that breaks these is refused whole (400)."""
    api, _ = timed(0)
    client = api.client()
    with pytest.raises(anthropic.BadRequestError):
        await client.messages.batches.create(requests=requests, extra_body=extra)
    assert api.refused[-1].status == 400 and not api.batches.made
    ok = await client.messages.batches.create(
        requests=[{"custom_id": "a_B-9" + "x" * 59, "params": ask("a")}])
    assert ok.processing_status == "in_progress"


async def test_results_wait_for_the_batch_to_end():
    """https://platform.claude.com/docs/en/api/retrieving-message-batches: `results_url` is
    "Specified only once processing ends", so the SDK's results() refuses before then; the
    results path itself answers 4XX (400 here, the stand-in's choice)."""
    api, now = timed(60)
    client = api.client()
    batch = await client.messages.batches.create(
        requests=[{"custom_id": "one", "params": ask("Hi.")}])
    with pytest.raises(anthropic.AnthropicError, match="results_url"):
        await client.messages.batches.results(batch.id)
    with pytest.raises(anthropic.BadRequestError):
        await client.get(f"/v1/messages/batches/{batch.id}/results", cast_to=httpx2.Response)
    now[0] = 60.0
    assert [line.custom_id for line in await results_of(client, batch.id)] == ["one"]


async def test_unknown_batches_and_keys_are_refused():
    """https://platform.claude.com/docs/en/api/errors: 404 not_found_error for an unknown
    batch (batches are per Workspace: another account's is unknown), 401 for a bad key."""
    api, _ = timed(0, keys={"mine": "acct-1", "theirs": "acct-2"})
    batch = await api.client(api_key="mine").messages.batches.create(
        requests=[{"custom_id": "one", "params": ask("Hi.")}])
    with pytest.raises(anthropic.NotFoundError):
        await api.client(api_key="mine").messages.batches.retrieve("msgbatch_01nonesuch")
    with pytest.raises(anthropic.NotFoundError):
        await api.client(api_key="theirs").messages.batches.retrieve(batch.id)
    with pytest.raises(anthropic.AuthenticationError):
        await api.client(api_key="bad").messages.batches.retrieve(batch.id)
    assert (await api.client(api_key="mine").messages.batches.retrieve(batch.id)).id == batch.id


async def test_a_canceled_batch_is_canceling_then_ends_with_its_requests_canceled():
    """https://platform.claude.com/docs/en/api/canceling-message-batches: a cancel leaves the
    batch `canceling` (cancel_initiated_at set), then `ended`; requests not yet sent are
    `canceled` (and not billed: nothing is served)."""
    api, now = timed(600)
    client = api.client()
    batch = await client.messages.batches.create(
        requests=[{"custom_id": c, "params": ask("Hi.")} for c in ("a", "b")])
    now[0] = 10.0
    canceling = await client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling"
    assert canceling.cancel_initiated_at - canceling.created_at == datetime.timedelta(seconds=10)
    assert canceling.request_counts.processing == 2 and canceling.results_url is None
    now[0] = 700.0
    ended = await client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.request_counts.canceled == 2
    assert {line.result.type for line in await results_of(client, batch.id)} == {"canceled"}
    assert not api.served
    with pytest.raises(anthropic.BadRequestError):  # ended: nothing left to cancel
        await client.messages.batches.cancel(batch.id)


async def test_a_later_batch_reads_the_prompt_cache_an_earlier_one_wrote():
    """https://platform.claude.com/docs/en/build-with-claude/batch-processing: batches support
    prompt caching (best effort); an entry lives 5 minutes
    (https://platform.claude.com/docs/en/build-with-claude/prompt-caching)."""
    api, now = timed(60)
    client = api.client()

    async def run(custom_id: str, at: float) -> Any:
        now[0] = at
        batch = await client.messages.batches.create(requests=[
            {"custom_id": custom_id, "params": ask("Walk north.", system=cached_system())}])
        now[0] = at + 60
        return (await results_of(client, batch.id))[0].result.message.usage

    first = await run("first", 0.0)  # written at 60
    assert first.cache_creation_input_tokens > 1024 and first.cache_read_input_tokens == 0
    second = await run("second", 200.0)  # read at 260, inside the 5 minutes
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    third = await run("third", 600.0)  # at 660: the entry, last read at 260, is gone
    assert third.cache_read_input_tokens == 0 and third.cache_creation_input_tokens > 0


async def test_batch_requests_draw_nothing_from_the_messages_rate_limits():
    """https://platform.claude.com/docs/en/build-with-claude/batch-processing: "Usage of the
    Batches API does not affect rate limits in the Messages API"."""
    api, _ = timed(0, rpm=1)
    client = api.client()
    batch = await client.messages.batches.create(
        requests=[{"custom_id": f"r{i}", "params": ask("Hi.")} for i in range(3)])
    assert (await client.messages.batches.retrieve(batch.id)).request_counts.succeeded == 3
    assert not api.limited
    await client.messages.create(**ask("Now."))  # the one request a minute is still there
    with pytest.raises(anthropic.RateLimitError):
        await client.messages.create(**ask("Again."))


async def test_a_batch_past_24_hours_expires_and_list_shows_newest_first():
    """https://platform.claude.com/docs/en/build-with-claude/batch-processing: a batch not
    done within 24 hours expires (`expired`, not billed);
    https://platform.claude.com/docs/en/api/listing-message-batches: newest first."""
    api, now = timed(25 * 3600)
    client = api.client()
    old = await client.messages.batches.create(requests=[{"custom_id": "a", "params": ask("Hi.")}])
    now[0] = 1.0
    new = await client.messages.batches.create(requests=[{"custom_id": "b", "params": ask("Hi.")}])
    now[0] = 24 * 3600 + 1.0
    listed = [b async for b in client.messages.batches.list(limit=1)]
    assert [b.id for b in listed] == [new.id, old.id]
    assert [b.processing_status for b in listed] == ["ended", "ended"]
    assert listed[1].request_counts.expired == 1 and listed[1].ended_at == listed[1].expires_at
    assert [line.result.type for line in await results_of(client, old.id)] == ["expired"]
    assert not api.served


def test_the_sync_client_and_the_served_stand_in_read_results_at_their_results_url():
    """https://platform.claude.com/docs/en/api/retrieving-message-batch-results: results are
    JSONL (application/x-jsonl) at the batch's `results_url`, which names the host asked
    (the SDK GETs it as given)."""
    api = StrictMessagesApi()
    client = api.sync_client()
    batch = client.messages.batches.create(requests=[{"custom_id": "s", "params": ask("Hi.")}])
    assert [line.custom_id for line in client.messages.batches.results(batch.id)] == ["s"]
    with api.serve() as base_url:
        http = anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0)
        made = http.messages.batches.create(requests=[{"custom_id": "h", "params": ask("Hi.")}])
        ended = http.messages.batches.retrieve(made.id)
        assert ended.results_url == f"{base_url}/v1/messages/batches/{made.id}/results"
        raw = http.messages.batches.with_raw_response.retrieve(made.id)
        assert raw.http_response.status_code == 200
        lines = list(http.messages.batches.results(made.id))
        assert [(line.custom_id, line.result.type) for line in lines] == [("h", "succeeded")]
        got = httpx2.get(ended.results_url, headers={"x-api-key": "test-key"})
        assert got.headers["content-type"] == "application/x-jsonl"
        http.close()
    assert [s.batch for s in api.served] == [True, True]
