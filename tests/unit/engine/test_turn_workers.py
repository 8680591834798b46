"""engine/phases/turns.py: model minds' workers are started one event-loop pass apart,
so the loop looks at its sockets between one turn's start and the next."""

from __future__ import annotations

import asyncio
import socket

import pytest

from engine.phases.turns import _started_one_by_one


async def test_the_loop_sees_its_sockets_between_one_start_and_the_next() -> None:
    """Worker 0 makes a socket readable in its first step (as a turn's first request
    opens a connection); the loop must notice before every later worker has started
    (all at once, it noticed only after the last: 240 agents, 0.3 s late)."""
    loop = asyncio.get_running_loop()
    order: list[str] = []
    mine, theirs = socket.socketpair()
    mine.setblocking(False)
    theirs.setblocking(False)
    loop.add_reader(mine.fileno(), lambda: (order.append("io"), mine.recv(16),
                                            loop.remove_reader(mine.fileno())))
    started = 0

    async def worker() -> None:
        nonlocal started
        me, started = started, started + 1
        order.append(f"start {me}")
        if me == 0:
            theirs.send(b"x")
        await asyncio.sleep(0.01)

    try:
        ended = await _started_one_by_one(worker, 20)
    finally:
        loop.remove_reader(mine.fileno())
        mine.close()
        theirs.close()
    assert ended == [None] * 20
    assert order.index("io") < order.index("start 19")
    assert [o for o in order if o != "io"] == [f"start {i}" for i in range(20)]


async def test_what_each_worker_ended_with_is_returned() -> None:
    count = 0

    async def worker() -> None:
        nonlocal count
        count += 1
        if count == 2:
            raise OSError("the disk is full")

    ended = await _started_one_by_one(worker, 3)
    assert [type(e).__name__ if e else None for e in ended] == [None, "OSError", None]


async def test_cancelling_the_starts_cancels_the_workers_already_running() -> None:
    running: list[asyncio.Task[None] | None] = []
    gate = asyncio.Event()

    async def worker() -> None:
        running.append(asyncio.current_task())
        await gate.wait()

    starting = asyncio.ensure_future(_started_one_by_one(worker, 50))
    while len(running) < 5:
        await asyncio.sleep(0)
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    assert 5 <= len(running) < 50
    assert all(t is not None and t.cancelled() for t in running)
