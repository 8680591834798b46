"""Many minds at once: how close a tick comes to its slowest agent's chain of requests.

    python -m bench minds                        (minutes: the rate limits take their time)
    BENCH_MINDS=unlimited python -m bench minds  (only the cases without a rate limit)

A tick waits on language models, so what matters is how close it comes to the
slowest agent's own chain of requests, and how well a run uses what its key allows.
The real engine runs real minds over the real SDKs; only the network is replaced:

- **Claude** (`claude-sonnet-5-5`): tests/messages_standin.py (StrictMessagesApi),
  every request checked against the API's documented rules, behind a transport that
  answers each request `LATENCY` seconds after it arrives. Its rate limits are token
  buckets on requests, input and output tokens per minute, with the API's
  `anthropic-ratelimit-*` headers on every answer and 429 + `retry-after` past them
  (https://platform.claude.com/docs/en/api/rate-limits). The narrator is off, so an
  agent's chain is its mind's requests alone: `requests in its turn x LATENCY`. Each
  request is traced to the agent's traces/NAME.jsonl as a run traces it (the spend
  meter is left out).
  Agents stand far apart (each a cluster of its own) on a 500x500 world.
  - *No limit*: limits so high they never bind (the headers still come, as they
    always do): 24 and 240 agents. Target (issue 41): each tick within 1.1x of the
    slowest chain, but 240 agents with 1 s replies at most 1.35x; the first tick also
  opens every agent's connection and waits for the
    first headers to say how much room there is (requests made while the limits are
    unknown are streamed, and the stand-in opens a stream at once and ends it after
    the latency, as the API's headers come before its answer), so the figure is
    given for it and for the ticks after.
    Hearth's own CPU per tick is shown beside, and the stand-in's (its process, read
    from /proc): a turn costs the engine and the SDKs some milliseconds, so 240 turns
    of 1 s replies take most of a core (about 1 s a tick), and the stand-in, which
    checks every request, about half as much on the other core of a 2-core machine.
    A tick then ends about one round of Hearth's own work after the chain: the last
    agent's first request goes only after the others' were made. 240 agents are
    therefore also measured at 3 s a reply, nearer a thinking model's time, where the
    chain and not the CPU sets the pace.
  - *120 and 50 requests a minute* (24 agents): turns lost (target 0), and the run's
    time against the least the limit allows for the requests it made: a bucket of
    `rpm` requests, refilled at rpm/60 a second, admits N requests no sooner than
    (N - rpm) / (rpm/60) s after the first, and the last answer comes LATENCY later
    (or the chains' own time, if longer). Target: at most 1.25x.
- **A local model** (OpenAI-compatible, as vLLM, Ollama or llama.cpp serve): a
  stand-in that sends no rate limits and answers more slowly the more requests it
  holds, as a batching server does (`BASE_LATENCY x (1 + in flight / BATCH)`).
  1,000 agents (placed as a new world places them): ticks a minute, agent-turns a
  second, and the number in flight Hearth settled on.

Where it stands: adapters/capacity.py (one per endpoint and model), used by
adapters/claude_calls.py and adapters/openai_mind/mind.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import itertools
import json
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import Figure
from config import load_config
from core.agent import Agent
from core.types import AgentName, Position
from services.world_service import TerrainRules
from services.world_setup import plan_world, write_world

LATENCY = 1.0
MODEL = "claude-sonnet-5-5"
TODAY = dt.date(2026, 11, 26)
NO_LIMIT = {"rpm": 1_000_000, "itpm": 1_000_000_000, "otpm": 1_000_000_000}
BASE_LATENCY = 1.0
BATCH = 64
"""A batching server's latency doubles with this many requests in flight."""


@dataclass
class Run:
    """One measured run: per-tick seconds and slowest chains, requests, turns lost."""

    ticks: list[float]
    chains: list[float]
    cpu: list[float]
    """Hearth's own CPU seconds per tick (this process, all threads)."""
    served_cpu: list[float | None]
    """The stand-in's CPU seconds per tick (its process; None where it cannot be read)."""
    requests: int
    rate_limited: int
    lost: int
    turns: int
    window: int
    peak: int


def _far_apart(config: Any, count: int, side: int) -> Any:
    """A new world whose `count` agents stand far out of each other's sight (each a
    cluster of its own), on open ground spread over the map."""
    plan = plan_world(config, seed=11, size=(side, side), agent_count=1)
    passable = TerrainRules.from_traits(config.terrain.terrains).passable[plan.terrain.codes]
    apart = 2 * (config.settings.vision.radius + 2) + 2
    chosen: list[tuple[int, int]] = []
    step = max(apart, int((side - 10) / math.sqrt(count * 1.5)))
    for y in range(5, side - 5, step):
        for x in range(5, side - 5, step):
            spot = _open_near(passable, x, y, step // 2)
            if spot is not None and all(max(abs(spot[0] - a), abs(spot[1] - b)) >= apart
                                        for a, b in chosen):
                chosen.append(spot)
    if len(chosen) < count:
        raise RuntimeError(f"only {len(chosen)} far-apart open spots for {count} agents")
    base = plan.agents[0]
    agents = tuple(Agent(AgentName(f"A{i:03d}"), MODEL, base.personality, Position(x, y))
                   for i, (x, y) in enumerate(chosen[:count]))
    return dataclasses.replace(plan, agents=agents)


def _open_near(passable: Any, x: int, y: int, reach: int) -> tuple[int, int] | None:
    """The open cell nearest (x, y) within `reach` cells, or None."""
    height, width = passable.shape
    for r in range(reach + 1):
        for yy in range(max(0, y - r), min(height, y + r + 1)):
            for xx in range(max(0, x - r), min(width, x + r + 1)):
                if max(abs(xx - x), abs(yy - y)) == r and passable[yy, xx]:
                    return xx, yy
    return None


def _lost_and_chains(db: Path, latency: float) -> tuple[int, int, dict[int, float]]:
    """Turns that ended in an error, all turns, and each tick's slowest chain (s)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT tick, ended, record FROM turns").fetchall()
    chains: dict[int, float] = {}
    for tick, _ended, record in rows:
        asked = len(json.loads(record).get("mind", {}).get("requests", []))
        chains[tick] = max(chains.get(tick, 0.0), asked * latency)
    return sum(1 for r in rows if r[1] == "error"), len(rows), chains


@contextlib.contextmanager
def _served(limits: Mapping[str, int],
            latency: float = LATENCY) -> Iterator[tuple[str, dict[str, Any]]]:
    """The stand-in in a process of its own (the API's work is not Hearth's: in this
    process it would take the engine's CPU), answering each request LATENCY seconds
    after it arrived. Yields its URL and, once it has stopped, what it served."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.minds", "--serve", json.dumps(dict(limits)),
         str(latency)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parent.parent)
    assert child.stdin is not None and child.stdout is not None
    seen: dict[str, Any] = {"pid": child.pid}
    try:
        yield child.stdout.readline().strip(), seen
    finally:
        child.stdin.close()
        out = child.stdout.read()
        child.wait(timeout=60)
        seen.update(json.loads(out.strip().splitlines()[-1]) if out.strip() else {})


def _cpu_of(pid: int) -> float | None:
    """CPU seconds process `pid` has used (Linux's /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _serve(limits: Mapping[str, int], latency: float) -> None:
    """`python -m bench.minds --serve LIMITS`: the stand-in on 127.0.0.1 until stdin
    closes; prints its URL, then (at the end) one JSON line of what it served.

    An event loop, HTTP/1.1 with keep-alive, reads each request and notes when the
    whole of it has arrived; its checks (every request held to the API's rules, about
    a millisecond each) run one request at a time in a thread of their own, as they
    would under the API's lock, and each answer is sent LATENCY seconds after its
    request arrived (the checks count in that time), while the others wait
    concurrently. Checked on the loop itself, 240 requests arriving together were
    each noted only once the checks of those before it were done: the stand-in's own
    queue, which the API (many servers) does not have, counted as Hearth's time.

    It keeps every request it served (`api.served`), which soon makes hundreds of
    thousands of objects: after each answer they are frozen out of the cycle
    collector's way, which would otherwise walk them all again and again (a fifth of
    the stand-in's CPU, measured on the 240-agent run)."""
    import gc

    import httpx2

    from tests.messages_standin import StrictMessagesApi

    api = StrictMessagesApi(today=TODAY, **limits)
    busy = [0.0]
    checker = concurrent.futures.ThreadPoolExecutor(1)  # one request checked at a time
    sys.setswitchinterval(0.0005)  # the loop reads and stamps while the checker works
    loop = asyncio.new_event_loop()

    def check(method: str, path: str, headers: list, body: bytes) -> Any:
        began = time.monotonic()
        response = api.handler(httpx2.Request(
            method, f"http://127.0.0.1{path}", headers=headers, content=body))
        busy[0] += time.monotonic() - began
        gc.freeze()
        return response

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = [tuple(part.strip() for part in line.split(":", 1))
                           for line in lines[1:] if ":" in line]
                size = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
                body = await reader.readexactly(size) if size else b""
                arrived = time.monotonic()  # the whole request is in
                response = await loop.run_in_executor(checker, check, method, path, headers,
                                                      body)
                out = response.content
                reply = [f"HTTP/1.1 {response.status_code} X"]
                reply += [f"{k}: {v}" for k, v in response.headers.items()
                          if k.lower() not in ("content-length", "transfer-encoding",
                                               "connection")]
                reply.append(f"content-length: {len(out)}")
                head = ("\r\n".join(reply) + "\r\n\r\n").encode("latin-1")
                if response.headers.get("content-type") == "text/event-stream":
                    writer.write(head)  # a stream opens at once; its events take the time
                    head = b""
                if response.status_code == 200:
                    await asyncio.sleep(max(0.0, arrived + latency - time.monotonic()))
                writer.write(head + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=4096)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        server.close()

    loop.run_until_complete(main())
    loop.close()
    checker.shutdown()
    print(json.dumps({"served": len(api.served), "busy": busy[0],
                      "refused": [r.status for r in api.refused]}), flush=True)


async def _claude_run(count: int, ticks: int, limits: Mapping[str, int],
                      latency: float = LATENCY) -> Run:
    import anthropic

    from adapters.capacity import Capacities
    from adapters.claude_setup import Speaker, claude_parts, new_client
    from engine import HearthEngine
    from storage import Storage

    config = load_config(None)
    settings = config.settings.model_copy(update={
        "claude": config.settings.claude.model_copy(update={"narrator_model": None})})
    config = dataclasses.replace(config, settings=settings)
    world = _far_apart(config, count, 500)
    scheduling = settings.scheduling
    capacities = Capacities(start=scheduling.model_requests_start,
                            ceiling=scheduling.model_requests_max)
    took: list[float] = []
    cpu: list[float] = []
    served_cpu: list[float | None] = []
    with _served(limits, latency) as (url, seen), tempfile.TemporaryDirectory() as tmp:

        def client(api_key: str, timeout: float) -> anthropic.AsyncAnthropic:
            return new_client(api_key, timeout, base_url=url)  # as a run makes them

        async with Storage(Path(tmp) / "data") as storage:
            await write_world(storage, world, config)
            speakers = [Speaker(a.name, MODEL, a.personality) for a in world.agents]
            parts = await claude_parts(speakers, settings.claude, "test-key", today=TODAY,
                                       make_client=client, capacities=capacities,
                                       trace=storage.traces.write_now)  # as a run traces
            engine = await HearthEngine.open(storage, config, mind=parts.mind,
                                  agents_dir=Path(tmp) / "agents")
            engine.on_close += [c.close for c in parts.clients]
            try:
                for _ in range(ticks):
                    started, used = time.perf_counter(), time.process_time()
                    before = _cpu_of(seen["pid"])
                    ctx = await engine.tick_once()
                    took.append(time.perf_counter() - started)
                    cpu.append(time.process_time() - used)
                    after = _cpu_of(seen["pid"])
                    served_cpu.append(None if before is None or after is None
                                      else after - before)
                    if len(ctx.clusters) != count:  # the chain measured is one agent's
                        raise RuntimeError(f"{count} agents stood in {len(ctx.clusters)} "
                                           "clusters, not one each")
            finally:
                await engine.close()
        lost, turns, chains = _lost_and_chains(Path(tmp) / "data" / "world.db", latency)
    if os.environ.get("BENCH_MINDS_SERVER"):
        print(f"   (the stand-in was busy {seen.get('busy', 0):.1f} s answering)", flush=True)
    if any(status != 429 for status in seen.get("refused", [])):
        raise RuntimeError(f"the stand-in refused requests: {seen['refused'][:5]}")
    room = capacities.of(url, MODEL)
    return Run(took, [chains.get(t, 0.0) for t in sorted(chains)], cpu, served_cpu,
               int(seen.get("served", 0)),
               sum(1 for status in seen.get("refused", []) if status == 429), lost, turns,
               room.window, room.figures.peak_in_flight)


class BatchingServer:
    """An OpenAI-compatible chat-completions stand-in whose answers slow as it holds
    more requests at once; it sends no rate-limit headers, as local servers do not."""

    def __init__(self) -> None:
        self.in_flight = self.peak = self.served = 0
        self._ids = itertools.count(1)

    async def handler(self, request: Any) -> Any:
        import httpx2

        from tests.fake_openai import reply, tool_call

        body = json.loads(request.content)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(BASE_LATENCY * (1 + self.in_flight / BATCH))
        finally:
            self.in_flight -= 1
        self.served += 1
        last = body["messages"][-1]
        if last.get("role") == "tool":  # the results are in: the turn ends
            answer = reply("That will do for now.")
        else:
            way = ("north", "east", "south", "west")[next(self._ids) % 4]
            answer = reply(calls=[tool_call("walk", direction=way)])
        return httpx2.Response(200, json=answer)


async def _local_run(count: int, ticks: int) -> tuple[Run, BatchingServer]:
    import httpx2
    import openai

    from adapters.capacity import Capacities
    from adapters.offline_mind import OfflineMind
    from adapters.openai_mind import OpenAIMind, OpenAIProfile
    from engine import HearthEngine
    from services.world_setup import create_world
    from storage import Storage
    from tests.fake_openai import BASE_URL

    config = load_config(None)
    scheduling = config.settings.scheduling
    server = BatchingServer()
    client = openai.AsyncOpenAI(
        api_key="not-needed", base_url=BASE_URL, max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server.handler),
                                       timeout=600))
    capacities = Capacities(start=scheduling.model_requests_start,
                            ceiling=scheduling.model_requests_max)
    took: list[float] = []
    cpu: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp) / "data") as storage:
            await create_world(storage, config, seed=7, size=(500, 500), agent_count=count)
            residents = await storage.agents.get_all_agents()
            mind = OpenAIMind(client, {a.name: OpenAIProfile("local-test", a.personality)
                                       for a in residents},
                              max_tokens=1024, capacities=capacities)
            engine = await HearthEngine.open(storage, config, mind=OfflineMind(7, {}),
                                  agents_dir=Path(tmp) / "agents",
                                  minds={a.name: mind for a in residents})
            engine.on_close.append(client.close)
            try:
                for _ in range(ticks):
                    started, used = time.perf_counter(), time.process_time()
                    await engine.tick_once()
                    took.append(time.perf_counter() - started)
                    cpu.append(time.process_time() - used)
            finally:
                await engine.close()
            lost, turns, chains = _lost_and_chains(Path(tmp) / "data" / "world.db",
                                                   BASE_LATENCY)
    room = capacities.of(BASE_URL, "local-test")
    return Run(took, [chains.get(t, 0.0) for t in sorted(chains)], cpu, [], server.served, 0,
               lost,
               turns, room.window, room.figures.peak_in_flight), server


def _least_time(requests: int, rpm: int, chains: Sequence[float]) -> float:
    """The least time a bucket of `rpm` (full at the start) allows for `requests`."""
    paced = max(0, requests - rpm) / (rpm / 60.0) + LATENCY
    return max(paced, sum(chains))


def _unlimited(count: int, ticks: int, latency: float = LATENCY) -> list[Figure]:
    run = asyncio.run(_claude_run(count, ticks, NO_LIMIT, latency))
    first = run.ticks[0] / run.chains[0]
    later = [t / c for t, c in zip(run.ticks[1:], run.chains[1:], strict=True)]
    worst_later = max(later) if later else first
    # Issue 41: within 1.1x of the chain, but 240 agents on 1 s replies (CPU-bound on
    # two cores with the stand-in beside them) is reported against at most 1.35x.
    bound = 1.35 if count > 100 and latency < 2 else 1.1
    return [
        Figure(f"no limit, {count} far-apart agents, {latency:.0f} s a reply: tick against "
               "slowest chain",
               f"first {run.ticks[0]:.2f} s / {run.chains[0]:.1f} s = {first:.2f}x; then "
               + ", ".join(f"{t:.2f} s" for t in run.ticks[1:])
               + f" / {run.chains[-1]:.1f} s, worst {worst_later:.2f}x "
               f"(window {run.window}, peak in flight {run.peak}; Hearth's CPU a tick "
               + ", ".join(f"{c:.1f}" for c in run.cpu) + " s"
               + (", the stand-in's " + ", ".join(f"{c:.1f}" for c in run.served_cpu) + " s"
                  if run.served_cpu and None not in run.served_cpu else "") + ")",
               f"<= {bound}x", worst_later <= bound),
        Figure(f"no limit, {count} agents: turns lost", f"{run.lost} of {run.turns}", "0",
               run.lost == 0),
    ]


def _limited(rpm: int, ticks: int) -> list[Figure]:
    limits = {**NO_LIMIT, "rpm": rpm}
    run = asyncio.run(_claude_run(24, ticks, limits))
    total = sum(run.ticks)
    least = _least_time(run.requests, rpm, run.chains)
    ratio = total / least
    return [
        Figure(f"{rpm} requests a minute, 24 agents, {ticks} ticks: turns lost",
               f"{run.lost} of {run.turns} ({run.rate_limited} answered 429)", "0",
               run.lost == 0),
        Figure(f"{rpm} requests a minute: run time against the least the limit allows",
               f"{total:.1f} s / {least:.1f} s for {run.requests} requests = {ratio:.2f}x",
               "<= 1.25x", ratio <= 1.25),
    ]


def _local(count: int, ticks: int) -> list[Figure]:
    run, server = asyncio.run(_local_run(count, ticks))
    seconds = sum(run.ticks)
    return [
        Figure(f"local batching server, {count} agents, {ticks} ticks: ticks a minute",
               f"{60.0 * ticks / seconds:.2f} (ticks: "
               + ", ".join(f"{t:.1f} s" for t in run.ticks) + ")"),
        Figure("local batching server: agent-turns a second",
               f"{run.turns / seconds:.1f} ({run.turns} turns, {server.served} requests, "
               f"{run.lost} lost)"),
        Figure("local batching server: requests in flight Hearth settled on",
               f"{run.window} (peak {run.peak}; the server's answers take "
               f"{BASE_LATENCY:.0f} s x (1 + in flight / {BATCH}))"),
    ]


def run() -> list[Figure]:
    only = os.environ.get("BENCH_MINDS", "")
    figures: list[Figure] = []
    if only in ("", "unlimited"):
        figures += _unlimited(24, 3) + _unlimited(240, 3) + _unlimited(240, 3, 3.0)
    if only in ("", "limited"):
        figures += _limited(120, 4) + _limited(50, 3)
    if only in ("", "local"):
        figures += _local(1000, 3)
    return figures


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve(json.loads(sys.argv[2]), float(sys.argv[3]))
