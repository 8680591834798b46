"""Turns wait for room at the API instead of being lost to its rate limits.

The real anthropic SDK against the strict stand-in (tests/messages_standin.py), whose
limits are token buckets per minute with the `anthropic-ratelimit-*` headers on every
answer and 429 + `retry-after` past them, as
https://platform.claude.com/docs/en/api/rate-limits describes. Buckets that start empty
(a key another program just spent) make the limit bind at once: 600 requests a minute
refill ten a second.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import time
from pathlib import Path

import anthropic

from adapters.capacity import Capacities, Capacity
from adapters.claude_calls import CallPolicy, ask
from adapters.claude_setup import Speaker, claude_parts
from config import HearthConfig, load_config
from storage import Storage
from tests.messages_standin import StrictMessagesApi

SONNET = "claude-sonnet-5-5"
TODAY = dt.date(2026, 11, 26)
USER = [{"role": "user", "content": [{"type": "text", "text": "Hello."}]}]


async def test_requests_beyond_the_limit_are_paced_to_it_and_none_is_lost():
    api = StrictMessagesApi(rpm=600, full=False)
    client = api.client()
    room = Capacity(SONNET, start=8, ceiling=100)
    started = time.monotonic()
    replies = await asyncio.gather(*(
        ask(client, CallPolicy(retries=0), time.monotonic() + 30, capacity=room,
            model=SONNET, max_tokens=400, messages=USER)
        for _ in range(20)))
    took = time.monotonic() - started
    assert len(replies) == 20 and all(r.content for r in replies)
    # Twenty requests from an empty bucket refilled ten a second: two seconds at least,
    # and not much more: Hearth keeps to the limit rather than waiting past it.
    assert 1.9 <= took <= 2.0 * 1.25 + 0.5, took
    # Before the first headers it knew nothing: at most its first window was refused.
    limited = [r for r in api.refused if r.status == 429]
    assert len(limited) <= 8 and len(api.refused) == len(limited)
    assert room.figures.rate_limited == len(limited) and room.in_flight == 0


async def test_a_429_costs_no_attempt_when_the_room_waits_for_the_api():
    """With no retries at all, a rate-limited request is still answered: the wait is
    the limit's, not a failure's."""
    api = StrictMessagesApi(rpm=60, full=False)
    room = Capacity(SONNET, start=1, ceiling=1)
    reply = await ask(api.client(), CallPolicy(retries=0, retry_after_max=0.0),
                      time.monotonic() + 30, capacity=room, model=SONNET, max_tokens=400,
                      messages=USER)
    assert reply.content and [r.status for r in api.refused] == [429]
    assert room.figures.rate_limited == 1 and room.figures.answered == 1


async def _claude_engine(make_engine, world: Path, config: HearthConfig, api, rooms,
                         narrator: str | None = SONNET):
    settings = config.settings.claude.model_copy(update={"narrator_model": narrator})
    async with Storage(world) as storage:
        agents = await storage.agents.get_all_agents()
    speakers = [Speaker(a.name, SONNET, a.personality, "low") for a in agents]
    parts = await claude_parts(
        speakers, settings, "test-key", today=TODAY, capacities=rooms,
        make_client=lambda key, timeout: api.client(api_key=key, timeout=timeout))
    return parts, make_engine(parts.mind, narrator=parts.narrator,
                              scene_narrator=parts.narrator)


async def test_agents_and_narrator_share_one_room_and_no_turn_is_lost(
        make_engine, small_world: Path, config: HearthConfig):
    api = StrictMessagesApi(rpm=600, full=False)
    rooms = Capacities(start=4, ceiling=100)
    parts, engine_of = await _claude_engine(make_engine, small_world, config, api, rooms)
    async with engine_of as engine:
        for _ in range(2):
            ctx = await engine.tick_once()
            assert ctx.completed
    assert [r.status for r in api.refused if r.status != 429] == []
    with sqlite3.connect(small_world / "world.db") as db:
        ended = [row[0] for row in db.execute("SELECT ended FROM turns")]
    assert ended and "error" not in ended
    (room,) = rooms.all().values()  # one model at one endpoint: one room for all
    asked = [s for s in api.served if s.model == SONNET]
    told = [s for s in asked if not s.body.get("tools")]
    assert told, "the narrator spoke through the same model"
    assert room.figures.answered == len(asked)


async def test_a_stop_while_turns_wait_for_room_gives_those_turns_back(
        make_engine, small_world: Path, config: HearthConfig):
    """A key spent to nothing (6 a minute, empty): the first turns' requests wait; the
    run is stopped; nothing was sent for them, so they are not recorded and the next run
    gives them back."""
    api = StrictMessagesApi(rpm=6, full=False)
    rooms = Capacities(start=1, ceiling=1)
    parts, engine_of = await _claude_engine(make_engine, small_world, config, api, rooms,
                                            narrator=None)
    async with engine_of as engine:
        parts.mind.stopping = lambda: engine.stop_requested
        tick = asyncio.ensure_future(engine.tick_once())
        await asyncio.sleep(0.5)
        engine.request_stop()
        stopped = time.monotonic()
        ctx = await asyncio.wait_for(tick, 30)
        assert time.monotonic() - stopped < 2.0  # no wait for a room that will not come
    assert ctx.stopped
    with sqlite3.connect(small_world / "world.db") as db:
        recorded = [row[0] for row in db.execute("SELECT agent FROM turns")]
    async with Storage(small_world) as storage:
        everyone = {a.name for a in await storage.agents.get_all_agents()}
    assert len(recorded) < len(everyone)  # the waiting turns were given back, not lost
    assert not [s for s in api.served if s.body.get("tools")][len(recorded):]
    # The next run (a fresh key) resumes the tick and gives them their turns.
    fresh = StrictMessagesApi()
    _, engine_of = await _claude_engine(make_engine, small_world, config, fresh,
                                        Capacities(start=4, ceiling=4), narrator=None)
    async with engine_of as engine:
        resumed = await engine.tick_once()
    assert resumed.tick == ctx.tick and resumed.completed
    with sqlite3.connect(small_world / "world.db") as db:
        now = {row[0] for row in db.execute("SELECT agent FROM turns WHERE tick = ?",
                                            (ctx.tick,))}
    assert now == everyone


async def test_many_agents_spread_over_clients_each_always_on_its_own():
    """A connection pool scans every connection for each request it places (httpcore),
    so hundreds of agents share a few clients, AGENTS_PER_CLIENT each, not one."""
    from adapters.client_shards import AGENTS_PER_CLIENT

    api = StrictMessagesApi()
    made = []

    def client(key: str, timeout: float) -> anthropic.AsyncAnthropic:
        made.append(api.client(api_key=key, timeout=timeout))
        return made[-1]

    speakers = [Speaker(f"A{i:03d}", SONNET, "Kind.") for i in range(2 * AGENTS_PER_CLIENT + 1)]
    parts = await claude_parts(speakers, load_config(None).settings.claude.model_copy(
        update={"narrator_model": None}), "test-key", today=TODAY, make_client=client)
    mind = parts.mind
    clients = mind.shards.clients
    assert len(clients) == 3 and parts.clients == list(clients)
    chosen = {s.name: mind.shards.of(s.name) for s in speakers}
    assert {id(c) for c in chosen.values()} == {id(c) for c in clients}
    assert all(mind.shards.of(name) is c for name, c in chosen.items())  # stable
    assert max(sum(1 for c in chosen.values() if c is k) for k in clients) <= AGENTS_PER_CLIENT
    for c in made:
        await c.close()
