"""The Gardener's model: a small Claude model that reads the cycle and answers JSON.

It is shown the triage (level and reasons), the figures that matter (the agents the
reasons name, not a thousand rows, each with the ground within its sight), where most
agents are and the ground there, the weather and the time of day, the landmarks, its
values and the interventions it may ask for with their limits, and its last cycles;
an event's words must fit its place (services/gardener/fitting.py holds them to it,
in the cycle, whoever decided); it answers one JSON object
that `services.gardener.decision.read_decision` reads strictly. An answer that is
not one means no intervention this cycle; an API that fails, or a spent budget, means
the rules decide (`DeciderUnavailable`). It retries once, briefly (adapters/claude_calls.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from adapters.capacity import Capacity
from adapters.claude_calls import CallPolicy, GaveUp, ask, describe
from adapters.claude_mind.request_plan import RequestPlan
from core.gardener import Caps, HealthFigures, Triage
from core.spend import Price, Usage, cost
from core.types import Position
from services.gardener.cycle import DeciderUnavailable
from services.gardener.decision import Decision, read_decision
from services.gardener.rules import gathering_spot

VALUES = """You are the Gardener of Hearth, a grid world where AI agents live as they choose.
You are a steward, not a god. You never command, move or speak for an agent; you may
only change the world around them, gently, and only when something is wrong.
Your values, in order:
1. Respect for emergence: in a healthy world do nothing. Use the lightest touch.
2. No one stranded: an agent alone for very long may be shown a way toward others.
3. No stagnation: a world where nothing changes may be given something to notice.
4. No exhaustion: where the land is bare, it may grow back.
Interventions you may ask for (JSON objects, "type" plus exactly these fields):
- {"type": "none"}
- {"type": "weather", "weather": "clear" | "cloudy" | "rainy" | "foggy"}
- {"type": "event", "x": int, "y": int, "radius": int <= %(event_radius)d, "text": "what \
happens, in at most %(event_text_chars)d characters"}
- {"type": "regrowth", "x": int, "y": int, "radius": int <= %(regrowth_radius)d}
- {"type": "reveal_landmark", "landmark": "exact landmark name", "x": int, "y": int, \
"radius": int <= %(reveal_radius)d}  (the landmark stands out to agents within radius of x,y)
At most %(healthy)d at HEALTHY, %(watch)d at WATCH, %(warning)d at WARNING, \
%(critical)d at CRITICAL. No intervention may name an agent.
An event's text is shown to the agents within its radius, so it must fit that place: \
name no ground but the "ground" listed near those agents (the terrain within their \
sight), and no weather or time of day but the "weather" and "time_of_day" given. No \
trees on a shore, no rain under a clear sky, no stars by day. A text that does not fit \
is replaced by a plain one.
Answer with ONE JSON object and nothing else:
{"rationale": "why, in a sentence or two", "interventions": [ ... ]}"""


def _prompt(triage: Triage, figures: HealthFigures, landmarks: Sequence[tuple[str, Position]],
            memory: Sequence[Any], reach: int) -> str:
    """The cycle as JSON; `reach`, an event's largest radius, bounds the ground listed
    where most agents are (what an event there may name)."""
    named = {r.agent for r in triage.reasons if r.agent}
    agents = [{"name": a.name, "x": a.position.x, "y": a.position.y,
               "ticks_alone": a.ticks_alone, "actions": a.actions, "failures": a.failures,
               "resources_near": a.resources_near, "ground": list(a.ground)}
              for a in figures.agents if a.name in named][:20]
    past = []
    for cycle in memory:
        past.append({"tick": getattr(cycle, "tick", None), "level": getattr(cycle, "level", None),
                     "rationale": getattr(cycle, "rationale", None),
                     "requests": [list(r[:2]) + [r[2]] for r in getattr(cycle, "requests", [])
                                  if isinstance(r, (list, tuple)) and len(r) >= 3]})
    body = {
        "tick": figures.tick,
        "level": str(triage.level),
        "reasons": [r.text for r in triage.reasons][:30],
        "agents_count": len(figures.agents),
        "agents_named_by_reasons": agents,
        "ticks_since_conversation": figures.ticks_since_conversation,
        "lasting_changes_in_window": figures.changes,
        "window_ticks": figures.window,
        "landmarks": [{"name": n, "x": p.x, "y": p.y} for n, p in landmarks][:40],
        "last_cycles": past,
        "weather": figures.weather or "unknown",
        "time_of_day": figures.period or "unknown",
    }
    if figures.agents:  # where the rules would put a happening, and what is around
        spot = gathering_spot(figures)
        body["where_most_agents_are"] = {
            "x": spot.x, "y": spot.y,
            "ground": sorted({k for a in figures.agents for k in a.ground
                              if a.position.chebyshev(spot) <= reach})}
    return json.dumps(body, sort_keys=True)


class ClaudeGardener:
    """The Decider a cycle asks when a key is set (services.gardener.cycle.Decider)."""

    def __init__(self, client: Any, model: str, price: Price, caps: Caps, size: tuple[int, int],
                 *, max_tokens: int, budget: float | None,
                 options: dict[str, Any] | None = None,
                 policy: CallPolicy | None = None,
                 capacity: Capacity | None = None) -> None:
        self.client = client
        self.capacity = capacity
        """Room at the endpoint for its model (adapters/capacity.py). The Gardener runs in
        a process of its own: it shares the key's limits with the run through the
        headers, which count every program on the key."""
        self.model = model
        self.name = model
        self.price = price
        self.caps = caps
        self.size = size
        self.max_tokens = max_tokens
        self.budget = budget
        self.spent = 0.0
        self.options = dict(options or {})
        """Added to every request (adapters/claude_models.py: max_tokens, the effort)."""
        self.policy = policy or CallPolicy(retries=1, timeout=30.0, retry_after_max=10.0)
        """The Gardener is never urgent: one retry, then the rules decide this cycle."""

    def system(self) -> str:
        caps = self.caps
        return VALUES % {
            "event_radius": caps.event_radius, "event_text_chars": caps.event_text_chars,
            "regrowth_radius": caps.regrowth_radius, "reveal_radius": caps.reveal_radius,
            "healthy": caps.per_cycle[0], "watch": caps.per_cycle[1],
            "warning": caps.per_cycle[2],
            "critical": caps.per_cycle[3]}

    async def decide(self, triage: Triage, figures: HealthFigures,
                     landmarks: Sequence[tuple[str, Position]],
                     memory: Sequence[Any]) -> Decision:
        import anthropic  # only when a key is set and the model is asked

        if self.budget is not None and self.spent >= self.budget:
            raise DeciderUnavailable(f"its budget of ${self.budget:.2f} for this run is spent")
        try:
            options = {"max_tokens": self.max_tokens, **self.options}
            reply = await ask(
                self.client, self.policy, None, capacity=self.capacity,
                resize=lambda: RequestPlan.sized(self.capacity, self.model, options),
                **options,
                model=self.model, system=self.system(),
                messages=[{"role": "user",
                           "content": _prompt(triage, figures, landmarks, memory,
                                              self.caps.event_radius)}])
        except (anthropic.APIError, GaveUp) as exc:
            raise DeciderUnavailable(f"the API failed: {describe(exc)}") from None
        self.spent += cost(Usage.of_reply(getattr(reply, "usage", None)), self.price)
        text = "".join(getattr(block, "text", "") for block in getattr(reply, "content", ())
                       if getattr(block, "type", "") == "text")
        return read_decision(text, self.size)
