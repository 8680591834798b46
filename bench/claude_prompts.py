"""How much of each Claude request the prompt cache can serve, and whether requests stop growing.

    python -m bench claude

The real engine runs a small world whose agents are Claude minds; the Messages API
is scripted over httpx2.MockTransport (the real SDK sends every request), with a
model that on each turn says a line and calls one tool (walking, gathering,
writing a sign, sensing others), then ends the turn after hearing the outcome.

- *Cacheable prefix*: the prompt cache reads a request's prefix in the order tools,
  system, messages. For every request after an agent's first, the share of that
  prompt (serialised in that order) that is byte for byte a prefix of the same
  agent's previous request. Target (issue 6): median >= 90% over a 50-turn session.
- *Request size*: the prompt's size in characters at an agent's 10th, 100th and
  1,000th turn, and the largest over turns 200-1,000. Once compaction starts
  (`claude.compact_above_chars` in settings.yaml) the size must stop growing.
- *Cost*: dollars per agent per in-world day on the 5.5 models, replies cut by
  max_tokens, cache reads' share of prompt tokens (bench/claude_cost.py).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx2

from bench import Figure, claude_cost, claude_levers
from config import load_config
from engine import HearthEngine
from services.world_setup import create_world
from storage import Storage

SESSION_TURNS = 50
LONG_TURNS = 1_000
AGENTS = 2
ACTIONS = (("walk", {"direction": "north"}), ("gather", {"direction": "down"}),
           ("walk", {"direction": "east"}), ("sense_others", {}),
           ("walk", {"direction": "south"}),
           ("write_sign", {"text": "A quiet spot; the grass is soft here."}),
           ("walk", {"direction": "west"}))


def prompt_text(body: dict[str, Any]) -> str:
    """A request's prompt in the order the cache reads it: tools, system, messages."""
    return json.dumps({"tools": body.get("tools"), "system": body.get("system"),
                       "messages": body.get("messages")}, ensure_ascii=False)


class _Model:
    """A scripted model: one line and one call on seeing the world, then it rests."""

    def __init__(self) -> None:
        self.prompts: dict[str, list[str]] = {}
        self.turns: dict[str, int] = {}

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        agent = body["system"][0]["text"].split(".", 1)[0].removeprefix("You are ")
        prompt = prompt_text(body)
        earlier = self.prompts.setdefault(agent, [])
        shared = _common_prefix(earlier[-1], prompt) if earlier else 0
        earlier.append(prompt)
        last = body["messages"][-1]["content"][-1]
        if last["type"] == "text":
            n = self.turns[agent] = self.turns.get(agent, 0) + 1
            name, args = ACTIONS[n % len(ACTIONS)]
            content = [{"type": "text", "text": f"Turn {n}: I think I will {name} now."},
                       {"type": "tool_use", "id": f"toolu_{agent}_{n}", "name": name,
                        "input": args}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "That will do for now."}], "end_turn"
        return httpx2.Response(200, json={
            "id": f"msg_{agent}_{len(earlier)}", "type": "message", "role": "assistant",
            "model": body["model"], "content": content, "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": (len(prompt) - shared) // 4, "output_tokens": 40,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": shared // 4},
        })


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search on slices: fast on long texts)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


async def _live(turns: int) -> dict[str, list[str]]:
    """Every request's prompt, per agent, over `turns` ticks of Claude minds."""
    import anthropic

    from adapters.claude_mind import ClaudeMind, ClaudeProfile

    config = load_config(None)
    claude = config.settings.claude
    model = _Model()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        async with Storage(data) as storage:
            await create_world(storage, config, seed=7, size=(64, 48), agent_count=AGENTS)
            residents = await storage.agents.get_all_agents()
            client = anthropic.AsyncAnthropic(
                api_key="bench", max_retries=0,
                http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(model.handler)))
            mind = ClaudeMind(
                client, {a.name: ClaudeProfile(a.model_id, a.personality) for a in residents},
                max_tokens=claude.max_tokens, compact_above_chars=claude.compact_above_chars,
                keep_recent_chars=claude.keep_recent_chars,
                summary_max_chars=claude.summary_max_chars)
            engine = await HearthEngine.open(
                storage, config, mind=mind, agents_dir=Path(tmp) / "agents")
            for _ in range(turns):
                await engine.tick_once()
            await engine.close()
            await client.close()
    return model.prompts


def _shares(prompts: list[str]) -> list[float]:
    return [_common_prefix(a, b) / len(b) for a, b in zip(prompts, prompts[1:], strict=False)]


def _turn_sizes(prompts: list[str]) -> list[int]:
    """The size of each turn's first request (the one that carries the perception)."""
    return [len(p) for p in prompts[::2]]


def run() -> list[Figure]:
    session = asyncio.run(_live(SESSION_TURNS))
    shares = [s for prompts in session.values() for s in _shares(prompts)]
    median = statistics.median(shares)
    figures = [
        Figure(f"cacheable prefix, median over {SESSION_TURNS}-turn sessions "
               f"({len(shares)} requests, {AGENTS} agents)", f"{median:.1%}", ">= 90%",
               median >= 0.9),
        Figure("cacheable prefix, lowest request", f"{min(shares):.1%}"),
    ]
    long = asyncio.run(_live(LONG_TURNS))
    sizes = _turn_sizes(next(iter(long.values())))
    early, late = max(sizes[99:200]), max(sizes[199:LONG_TURNS])
    turn = max(b - a for a, b in zip(sizes, sizes[1:], strict=False))
    figures += [
        Figure("request size at turn 10 / 100 / 1,000 (characters)",
               f"{sizes[9]:,} / {sizes[99]:,} / {sizes[LONG_TURNS - 1]:,}"),
        Figure("largest request, turns 100-200 / 200-1,000", f"{early:,} / {late:,}",
               f"stops growing (200-1,000 <= 100-200 + a turn, {turn:,})",
               late <= early + turn),
        Figure("cacheable prefix, median over 1,000 turns (compaction included)",
               f"{statistics.median(s for p in long.values() for s in _shares(p)):.1%}"),
    ]
    return figures + claude_cost.run() + claude_levers.run()
