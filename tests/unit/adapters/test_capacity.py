"""The room at one model's endpoint (adapters/capacity.py), on a real event loop.

The headers and their meaning come from https://platform.claude.com/docs/en/api/rate-limits:
`anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}` on
every answer, limits per minute refilled continuously (a token bucket), output tokens
counted from max_tokens as a request starts, and 429 with `retry-after` past a limit.
Times here are tenths of a second: limits of 600 a minute refill 10 a second.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from adapters.capacity import Capacities, Capacity, CapacityClosed


def told(requests: tuple[int, int] | None = None, output: tuple[int, int] | None = None,
         inputs: tuple[int, int] | None = None) -> dict[str, str]:
    """Rate-limit headers: (limit, remaining) per kind given."""
    headers = {}
    for kind, pair in (("requests", requests), ("output-tokens", output),
                       ("input-tokens", inputs)):
        if pair is not None:
            headers[f"anthropic-ratelimit-{kind}-limit"] = str(pair[0])
            headers[f"anthropic-ratelimit-{kind}-remaining"] = str(pair[1])
    return headers


async def test_it_starts_with_the_window_it_was_given_and_queues_the_rest():
    room = Capacity("m", start=2, ceiling=10)
    first = await room.admit()
    second = await room.admit()
    third = asyncio.ensure_future(room.admit())
    await asyncio.sleep(0.05)
    assert not third.done() and room.in_flight == 2
    room.failed(first)
    ticket = await asyncio.wait_for(third, 1)
    assert room.in_flight == 2 and ticket.waited > 0.0
    room.failed(second)
    room.failed(ticket)
    room.failed(ticket)  # settling twice gives back one place, not two
    assert room.in_flight == 0


async def test_waiting_requests_go_first_in_first_out():
    room = Capacity("m", start=1, ceiling=1)
    held = await room.admit()
    order: list[int] = []

    async def one(i: int) -> None:
        ticket = await room.admit()
        order.append(i)
        await asyncio.sleep(0)
        room.failed(ticket)

    tasks = [asyncio.ensure_future(one(i)) for i in range(6)]
    await asyncio.sleep(0.01)
    room.failed(held)
    await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert order == list(range(6))


async def test_headers_with_room_open_the_window_to_the_ceiling_at_once():
    room = Capacity("m", start=2, ceiling=50)
    ticket = await room.admit()
    room.answered(ticket, told(requests=(4000, 3999)))
    assert room.window == 50
    tickets = [await asyncio.wait_for(room.admit(), 1) for _ in range(50)]
    assert room.in_flight == 50 and room.figures.peak_in_flight == 50
    for t in tickets:
        room.failed(t)


async def test_an_empty_request_bucket_paces_requests_at_its_refill_rate():
    """600 a minute refill one request every 0.1 s; with none left, five more take
    about half a second, not a burst of 429s."""
    room = Capacity("m", start=1, ceiling=100)
    ticket = await room.admit()
    room.answered(ticket, told(requests=(600, 0)))
    started = time.monotonic()
    for _ in range(5):
        room.failed(await asyncio.wait_for(room.admit(), 2))
    took = time.monotonic() - started
    assert 0.45 <= took <= 0.9, took


async def test_requests_admitted_after_an_answered_one_are_counted_against_its_headers():
    """The headers count what the API had taken when it took that request; what was sent
    after it is still to come out of the bucket."""
    room = Capacity("m", start=10, ceiling=10)
    first = await room.admit()
    later = [await room.admit() for _ in range(5)]
    room.answered(first, told(requests=(600, 5)))
    assert room.buckets["requests"].level == pytest.approx(0.0, abs=0.2)
    for t in later:
        room.failed(t)


async def test_output_tokens_count_as_written_not_by_max_tokens():
    """RATE_LIMITS: "OTPM rate limits are evaluated in real time as output tokens are
    produced, counting only the actual tokens generated. The max_tokens parameter does
    not factor into OTPM rate limit calculations." A request is planned at what replies
    have been writing; headers sent with a whole reply have counted it already."""
    room = Capacity("m", start=64, ceiling=64)
    ticket = await room.admit(output_tokens=16_000)
    assert ticket.output_tokens < 16_000  # planned at a guess, not at max_tokens
    room.answered(ticket, told(output=(40_000, 39_000)), output_used=1_000)
    assert room.buckets["output-tokens"].level == pytest.approx(39_000, abs=50)
    started = time.monotonic()
    planned = [await room.admit(output_tokens=16_000) for _ in range(30)]
    assert time.monotonic() - started < 0.1  # 30 replies of ~1,000 fit 39,000 at once
    assert all(t.output_tokens == pytest.approx(1_000) for t in planned)
    # A stream's headers come before its reply: what it wrote is taken as it ends.
    room.answered(planned[0], told(output=(40_000, 9_000)), output_used=2_000,
                  after_reply=False)
    assert room.buckets["output-tokens"].level == pytest.approx(
        9_000 - 29 * 1_000 - 2_000, abs=60)  # the 29 still out are counted too
    # With no headers at all, the copy settles its own plan against the reply.
    bare = Capacity("m", start=10, ceiling=10)
    bare.buckets["output-tokens"] = type(room.buckets["output-tokens"])(
        40_000, 40_000, time.monotonic())
    one = await bare.admit(output_tokens=16_000)
    bare.answered(one, {"anthropic-ratelimit-output-tokens-limit": "40000",
                        "anthropic-ratelimit-output-tokens-remaining": "40000"},
                  output_used=3_000, after_reply=False)
    assert bare.buckets["output-tokens"].level == pytest.approx(37_000, abs=50)
    for t in planned[1:]:
        room.failed(t)


async def test_a_429_pauses_everyone_until_the_retry_after_and_halves_the_window():
    room = Capacity("m", start=8, ceiling=8)
    tickets = [await room.admit() for _ in range(8)]
    room.refused(tickets[0], 429, told(requests=(600, 0)), retry_after=0.3)
    assert room.window == 4 and room.figures.rate_limited == 1
    for t in tickets[1:]:
        room.failed(t)
    started = time.monotonic()
    again = await asyncio.wait_for(room.admit(), 2)
    assert time.monotonic() - started >= 0.28
    # After a 429 the window grows back one answer at a time, not all at once.
    room.answered(again, told(requests=(600, 300)))
    assert room.window == 5


async def test_a_429_without_retry_after_waits_for_the_reset_it_names():
    room = Capacity("m", start=4, ceiling=4, wall=lambda: 1_000_000.0)
    ticket = await room.admit()
    headers = {**told(requests=(600, 0)),
               "anthropic-ratelimit-requests-reset": "1970-01-12T13:46:40.5Z"}  # +0.5 s
    room.refused(ticket, 429, headers)
    assert room.paused_until - time.monotonic() == pytest.approx(0.5, abs=0.1)


async def test_a_529_halves_the_window_without_pausing():
    room = Capacity("m", start=8, ceiling=8)
    tickets = [await room.admit() for _ in range(4)]
    room.refused(tickets[0], 529)
    assert room.window == 2 and room.paused_until == 0.0 and room.figures.overloaded == 1
    for t in tickets[1:]:
        room.failed(t)


async def test_stopping_ends_a_wait_without_losing_the_place():
    room = Capacity("m", start=1, ceiling=1)
    held = await room.admit()
    stop = [False]
    waiting = asyncio.ensure_future(room.admit(stopping=lambda: stop[0]))
    await asyncio.sleep(0.05)
    stop[0] = True
    with pytest.raises(CapacityClosed):
        await asyncio.wait_for(waiting, 2)
    room.failed(held)
    assert room.in_flight == 0
    room.failed(await asyncio.wait_for(room.admit(), 1))  # the room still works


async def test_a_cancelled_wait_leaves_nothing_behind():
    room = Capacity("m", start=1, ceiling=1)
    held = await room.admit()
    waiting = asyncio.ensure_future(room.admit())
    await asyncio.sleep(0.01)
    waiting.cancel()
    await asyncio.sleep(0.01)
    room.failed(held)
    assert room.in_flight == 0 and not room._queue


async def test_without_limits_the_window_grows_while_answers_come_faster_then_settles():
    """A batching server: an answer takes 10 ms x (1 + in flight / 4), so answers a
    second grow with the window, by less and less: the window doubles while a doubling
    pays more than a tenth, then stays."""
    room = Capacity("m", start=2, ceiling=1024)
    in_flight = 0

    async def request() -> None:
        nonlocal in_flight
        ticket = await room.admit()
        in_flight += 1
        await asyncio.sleep(0.01 * (1 + in_flight / 4))
        in_flight -= 1
        room.answered(ticket)

    async def agent() -> None:
        for _ in range(10):
            await request()

    await asyncio.wait_for(asyncio.gather(*(agent() for _ in range(100))), 60)
    sizes = room.figures.windows
    # Doubled while it paid (from 2 to 16 each doubling pays 50% or more here), and
    # stopped before the ceiling where it no longer did: the exact size depends on how
    # busy the machine is, since answers a second are measured, not told.
    assert sizes[:3] == [2, 4, 8], sizes
    assert 8 <= room.window <= 256, sizes
    assert room._settled


async def test_one_capacity_per_endpoint_and_model():
    rooms = Capacities(start=3, ceiling=9)
    a = rooms.of("https://api.anthropic.com/", "claude-sonnet-5-5")
    assert rooms.of("https://api.anthropic.com", "claude-sonnet-5-5") is a
    assert rooms.of("https://api.anthropic.com", "claude-haiku-5-5") is not a
    assert rooms.of("http://localhost:8000/v1", "claude-sonnet-5-5") is not a
    assert a.window == 3 and a.ceiling == 9
    with pytest.raises(ValueError, match="between 1 and ceiling"):
        Capacity("m", start=10, ceiling=9)


async def test_a_pause_is_never_longer_than_a_minute_whatever_the_api_says():
    """Limits are per minute: a retry-after of an hour, or a reset a year off, is a limit
    that will not lift soon, and the world does not stand still for it."""
    room = Capacity("m", start=4, ceiling=4, wall=lambda: 1_000_000.0)
    first, second = await room.admit(), await room.admit()
    room.refused(first, 429, told(requests=(50, 0)), retry_after=3600.0)
    assert room.paused_until - time.monotonic() <= 60.0
    far = {**told(requests=(50, 0)), "anthropic-ratelimit-requests-reset": "2999-01-01T00:00:00Z"}
    room.refused(second, 429, far)
    assert room.paused_until - time.monotonic() <= 60.0


async def test_a_rate_limit_that_will_not_lift_soon_ends_the_request_at_once():
    """A 429 asking for an hour is not waited out (the turn ends in one line; the agent
    acts next tick); one asking for a second is, costing no attempt."""
    from adapters.claude_calls import CallPolicy, GaveUp, ask
    from tests.fake_anthropic import ScriptedApi, error, reply, text

    def limited(seconds: str):
        return error(429, "rate_limit_error", "Rate limited", **{"retry-after": seconds})

    user = [{"role": "user", "content": [{"type": "text", "text": "Hello."}]}]
    api = ScriptedApi([limited("3600")])
    with pytest.raises(GaveUp, match="3600 s"):
        await ask(api.client(), CallPolicy(retries=4), None, capacity=Capacity(
            "m", start=2, ceiling=2), model="claude-sonnet-5-5", max_tokens=50, messages=user)
    assert len(api.requests) == 1
    api = ScriptedApi([limited("0.2"), limited("0.2"), reply(text("Here."))])
    room = Capacity("m", start=2, ceiling=2)
    answer = await ask(api.client(), CallPolicy(retries=0), None, capacity=room,
                       model="claude-sonnet-5-5", max_tokens=50, messages=user)
    assert answer.content[0].text == "Here." and room.figures.rate_limited == 2
