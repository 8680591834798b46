"""The model's part: what it thinks, says and calls, given an accepted request.

`behaviour(request) -> Plan` decides; the stand-in then builds the reply (thinking blocks,
signatures, truncation at max_tokens, usage). `simple_agent` is the default: it walks or
gathers on a fresh perception, ends its turn after hearing the results, retells for the
narrator keeping every fact, and answers the Gardener with a valid "no intervention".
Everything is drawn from a seed made of the request's content, so the same request gets
the same answer in every process.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.standin.catalog import ModelRule

THINKING_TOKENS: Mapping[str, tuple[int, int, int]] = {
    "low": (40, 150, 500),
    "medium": (150, 600, 2_000),
    "high": (400, 1_500, 5_000),
    "xhigh": (800, 3_000, 10_000),
    "max": (1_500, 6_000, 20_000),
}
"""(shortest, median, longest) thinking per effort on a fresh decision. ASSUMPTIONS, not
documented figures: the docs say only that higher effort thinks more (and that Opus 5.5
thinks more than Opus 5 at the same level). Draws are log-normal around the median."""


@dataclass(frozen=True)
class Plan:
    thinking: int = 0
    """Tokens of thinking the model would spend (used only where thinking is on)."""
    text: str = ""
    calls: Sequence[tuple[str, Mapping[str, Any]]] = ()


@dataclass(frozen=True)
class Request:
    """An accepted /v1/messages request, as the behaviour sees it."""

    model: ModelRule
    body: Mapping[str, Any]
    account: str
    effort: str | None
    thinking: str | None
    """"adaptive", "between_tools", "enabled", or None when the model will not think."""
    seed: int = field(default=0)

    @property
    def tools(self) -> list[Mapping[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def last(self) -> Mapping[str, Any]:
        return self.body["messages"][-1]

    @property
    def last_blocks(self) -> list[Any]:
        content = self.last.get("content")
        return [{"type": "text", "text": content}] if isinstance(content, str) else content

    @property
    def fresh(self) -> bool:
        """The newest user message ends with text: something new to react to."""
        blocks = self.last_blocks
        return self.last.get("role") == "user" and bool(blocks) and blocks[-1]["type"] == "text"

    @property
    def after_results(self) -> bool:
        blocks = self.last_blocks
        return bool(blocks) and blocks[0].get("type") == "tool_result"

    def rng(self, salt: str = "") -> random.Random:
        return random.Random(f"{self.seed}:{salt}")


def seed_of(body: Mapping[str, Any]) -> int:
    newest = json.dumps(body.get("messages", [])[-1:], sort_keys=True, default=str)
    key = f"{body.get('model')}|{newest}|{len(body.get('messages', []))}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)


def thinking_length(request: Request, scale: float = 1.0) -> int:
    low, median, high = THINKING_TOKENS[request.effort or "medium"]
    drawn = median * math.exp(request.rng("think").gauss(0.0, 0.6)) * scale
    return max(1, int(min(max(drawn, low * scale), high * scale)))


DIRECTIONS = ("north", "south", "east", "west")
KNOWN_TOOLS = {"walk": 4, "gather": 1, "examine": 1, "sense_others": 1}
"""Tools the simple agent knows valid input for (services/tool_specs.py), and how often
it picks each."""


def _arguments(name: str, request: Request) -> dict[str, Any]:
    if name == "walk":
        return {"direction": request.rng("dir").choice(DIRECTIONS)}
    return {}  # gather, examine, sense_others: every property is optional


NIGHT_HOURS = frozenset({22, 23, 0, 1, 2, 3, 4, 5})
"""When `sleepy_agent` goes to sleep: from 22:00 to 06:00."""
_CLOCK = re.compile(r"It is day \d+, (\d\d):\d\d")


def sleepy_agent(request: Request) -> Plan:
    """`simple_agent`, who sleeps through the night: on a fresh perception whose time
    (core/perception.py: "It is day D, HH:MM ...") falls from 22:00 to 06:00 it calls
    `sleep` (the engine wakes it in the morning); at any other time it does as
    `simple_agent` does, thinking as long."""
    if request.tools and request.fresh and any(t.get("name") == "sleep" for t in request.tools):
        seen = _CLOCK.search(str(request.last_blocks[-1].get("text", "")))
        if seen is not None and int(seen.group(1)) in NIGHT_HOURS:
            return Plan(thinking_length(request), "Time to sleep.", [("sleep", {})])
    return simple_agent(request)


def simple_agent(request: Request) -> Plan:
    body = request.body
    if request.tools:
        if request.fresh:
            offered = [t["name"] for t in request.tools if t.get("name") in KNOWN_TOOLS]
            if not offered:
                offered = [t["name"] for t in request.tools
                           if t.get("name") and not (t.get("input_schema") or {}).get("required")]
            if offered:
                weights = [KNOWN_TOOLS.get(n, 1) for n in offered]
                name = request.rng("tool").choices(offered, weights)[0]
                args = _arguments(name, request)
                words = f"I'll {name.replace('_', ' ')}" + (
                    f" {args['direction']}." if "direction" in args else ".")
                return Plan(thinking_length(request), words, [(name, args)])
        return Plan(thinking_length(request, 0.2), "That will do for now.")
    system = body.get("system")
    system_text = system if isinstance(system, str) else " ".join(
        b.get("text", "") for b in system or [] if isinstance(b, Mapping))
    asked = " ".join(b.get("text", "") for b in request.last_blocks if b.get("type") == "text")
    if "Gardener of Hearth" in system_text:  # adapters/gardener_model.py: one JSON object
        answer = {"rationale": "The world looks well; the lightest touch is none.",
                  "interventions": [{"type": "none"}]}
        return Plan(thinking_length(request, 0.3), json.dumps(answer))
    for marker in ("What happened: ", "What is seen: "):  # adapters/claude_mind/narrator.py
        if marker in asked:  # retold with every fact kept, which its keeps_facts checks
            return Plan(thinking_length(request, 0.1), "Softly: " + asked.split(marker, 1)[1])
    return Plan(thinking_length(request, 0.2), "Understood.")
