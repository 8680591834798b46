"""An outside agent in a seat, as the official MCP client (the `mcp` SDK) drives one.

Used by tests/e2e/test_seats_cli.py in its own process, and run as a script by the
test that kills a client mid-turn:

    python tests/e2e/seat_client.py URL TOKEN hold   # takes a turn, prints TURN, waits
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

NOT_YET = "has not come yet"
STOPPED = "the world has stopped"
Plan = Callable[[int], Sequence[tuple[str, dict[str, Any]]]]


@asynccontextmanager
async def seat_client(url: str, token: str | None, mode: str = "auto",
                      sessions: list[str] | None = None) -> AsyncIterator[Client]:
    """An MCP client on `url` sending `token` (None: no Authorization header); the
    session ids the server gives it are added to `sessions`."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}

    async def session_of(response: httpx2.Response) -> None:
        if sessions is not None and (given := response.headers.get("mcp-session-id")):
            sessions.append(given)

    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120),
                                  event_hooks={"response": [session_of]}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


async def listening(url: str, seconds: float = 60) -> None:
    """Until the world serves `url` (any HTTP answer will do)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    async with httpx2.AsyncClient() as http:
        while True:
            try:
                await http.get(url)
                return
            except httpx2.TransportError:
                if loop.time() > until:
                    raise
                await asyncio.sleep(0.05)


def tick_of(texts: Sequence[str]) -> int:
    for text in texts:
        if found := re.match(r"Tick (\d+): your turn", text):
            return int(found.group(1))
    raise AssertionError(f"no turn line in {texts!r}")


async def play(url: str, token: str, plan: Plan, over: Callable[[], bool],
               mode: str = "auto") -> list[dict[str, Any]]:
    """Take every turn the seat is given until `over()`: the calls `plan(tick)` names,
    then end_turn. Returns what each call came back with."""
    heard: list[dict[str, Any]] = []
    ended = False
    try:
        async with seat_client(url, token, mode) as client:
            while not over():
                try:
                    got = await client.call_tool("wait_for_turn", {})
                except Exception as exc:  # noqa: BLE001 - the world stopped serving
                    if over() or STOPPED in str(exc):
                        break
                    raise
                texts = [block.text for block in got.content]
                if NOT_YET in texts[0]:
                    continue
                tick = tick_of(texts)
                for name, args in plan(tick):
                    result = await client.call_tool(name, args)
                    heard.append({"tick": tick, "tool": name, "args": args,
                                  "ok": not result.is_error,
                                  "text": result.content[0].text, "perception": texts[-1]})
                await client.call_tool("end_turn", {})
            ended = True
    except Exception:  # noqa: BLE001 - the world ended, and its server with it
        for _ in range(100):
            if ended or over():
                break
            await asyncio.sleep(0.1)
        else:
            raise
    return heard


async def _hold(url: str, token: str) -> None:
    """Take one turn, say so, and then do nothing until killed."""
    await listening(url)
    async with seat_client(url, token, "legacy") as client:
        while True:
            got = await client.call_tool("wait_for_turn", {})
            texts = [block.text for block in got.content]
            if NOT_YET not in texts[0]:
                break
        await client.call_tool("examine", {})
        print(f"TURN {tick_of(texts)}", flush=True)
        await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(_hold(sys.argv[1], sys.argv[2]))
