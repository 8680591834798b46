"""What `hearth --run N` prints: one line per action, a JSON object per tick, a summary.

Kept apart from the engine (measurement apart from dynamics): the engine hands
over each finished TickContext and this module only reads it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.privacy import shown_action
from engine.context import TickContext
from storage.history import happening_text

_FAILED = "✗"


def _one_line(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"



def tick_lines(ctx: TickContext) -> list[str]:
    """Readable lines for a tick: its happenings, then each agent's actions in turn order."""
    stamp = f"[t{ctx.tick} {ctx.time_text}]"
    lines = []
    for event in ctx.events:
        data = event.to_dict()
        kind = data.pop("type")
        who = data.get("agent", "")
        if kind == "weather_changed":
            lines.append(f"{stamp} the weather turns {data['weather']}")
        elif kind == "agent_woke":
            lines.append(f"{stamp} {who} wakes")
        elif kind in ("journey_completed", "journey_interrupted"):
            how = "arrives" if kind == "journey_completed" else f"stops: {data['reason']}"
            lines.append(f"{stamp} {who} {how}")
        elif kind in ("gardener_intervention", "gardener_refused"):
            data["type"] = kind
            mark = f" {_FAILED}" if kind == "gardener_refused" else ""
            lines.append(f"{stamp} gardener{mark}: {_one_line(happening_text(kind, None, data))}")
    for name, result in ctx.turn_results.items():
        for action in result.actions:
            mark = "" if action.success else f" {_FAILED}"
            told = shown_action(action.tool, action.arguments, action.narration)[1]
            lines.append(f"{stamp} {name} {action.tool}{mark}: {_one_line(told)}")
        if result.error:
            lines.append(f"{stamp} {name}'s turn ended early: {_one_line(result.error)}")
    if ctx.stopped:
        lines.append(f"{stamp} stopped before every agent had acted; the next run finishes it")
    return lines


def tick_json(ctx: TickContext) -> dict[str, Any]:
    return {
        "tick": ctx.tick,
        "time": ctx.time_text,
        "weather": ctx.weather.value,
        "completed": ctx.completed,
        "resumed": ctx.resumed,
        "events": [e.to_dict() for e in ctx.events],
        "turns": [
            {
                "agent": name,
                "mind": r.mind,
                "ended": r.ended,
                "error": r.error,
                "actions": [
                    {"tool": a.tool, "ok": a.success,
                     "text": shown_action(a.tool, a.arguments, a.narration)[1],
                     "events": [e.to_dict() for e in a.events]}
                    for a in r.actions
                ],
            }
            for name, r in ctx.turn_results.items()
        ],
        "phase_ms": dict(ctx.phase_ms),
    }


@dataclass
class RunSummary:
    ticks: int = 0
    turns: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    failed: int = 0
    conversations: int = 0
    structures: int = 0
    tick_ms: list[float] = field(default_factory=list)

    def add(self, ctx: TickContext, ms: float) -> None:
        self.ticks += int(ctx.completed)
        self.turns += len(ctx.turn_results)
        self.tick_ms.append(ms)
        for result in ctx.turn_results.values():
            for action in result.actions:
                self.actions[action.tool] += 1
                self.failed += not action.success
                for event in action.events:
                    self.conversations += event.event_type == "conversation_started"
                    self.structures += event.event_type == "structure_detected"

    def lines(self) -> list[str]:
        total = sum(self.actions.values())
        out = [f"{self.ticks} ticks, {self.turns} turns, {total} actions ({self.failed} failed)"]
        if self.actions:
            out.append("actions: " + ", ".join(f"{k} {v}" for k, v in self.actions.most_common()))
        out.append(f"conversations started: {self.conversations}   "
                   f"structures raised: {self.structures}")
        if self.tick_ms:
            ordered = sorted(self.tick_ms)
            mean = sum(ordered) / len(ordered)
            out.append(f"time per tick: mean {mean:.1f} ms, median "
                       f"{ordered[len(ordered) // 2]:.1f} ms, max {ordered[-1]:.1f} ms")
        return out
