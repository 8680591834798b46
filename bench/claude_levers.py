"""Issue 42: what a lived agent-day costs against its goal, and what each lever gave.

    python -m bench claude      (these figures come last)

Every figure is bench/claude_cost.py's `measure` over four in-world days (`DAYS`), its
stand-in agent asleep from 22:00 to 06:00 unless said otherwise (tests/standin/agent.py
`sleepy_agent`; the engine wakes a sleeper in the morning, at 05:00 or, if it went back
to sleep then, 07:00), with THINKING_TOKENS and the agent's choices as they are.

- *Goal*: every agent's every day of the four, on the shipped settings (the figure is
  each day's dearest agent): at most $0.10 on Sonnet 5.5 and $0.008 on Haiku 5.5 live,
  half of that with `--economy` (every step's requests in one Message Batch, which the
  stand-in ends after BATCH_SECONDS).
- *Levers*: each alone against none (the settings before issue 42), then all together;
  the value is the four days' figures, dearest last in brackets. The hour-long cache
  (`hour_cache_after_seconds`) is measured apart, in a world of a tick every 10 minutes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from bench import Figure
from bench.claude_cost import Measured, measure

DAYS = 4
GOALS: Mapping[str, float] = {"claude-sonnet-5-5": 0.10, "claude-haiku-5-5": 0.008}
"""Dollars per agent-day, live (issue 42); `--economy` must cost at most half."""
BEFORE: Mapping[str, Any] = {"effort": "medium", "follow_up_effort": None,
                             "thinking": "adaptive", "results_next_turn": False,
                             "compact_above_chars": 120_000, "keep_recent_chars": 40_000,
                             "summary_max_chars": 8_000}
"""settings.yaml's `claude:` before issue 42."""
LEVERS: Mapping[str, Mapping[str, Any]] = {
    "follow-ups at effort low": {"follow_up_effort": "low"},
    "light thinking (Sonnet between_tools, Haiku disabled)": {"thinking": "light"},
    "results of deeds open the next turn (thinking kept)": {"results_next_turn": True},
    "compaction 48,000 / keep 8,000 / summary 6,000 chars": {
        "compact_above_chars": 48_000, "keep_recent_chars": 8_000, "summary_max_chars": 6_000},
}
"""Each lever as the settings pull it (adapters/claude_mind/levers.py levers_of)."""
SLOW_TICK = 600.0
"""Seconds a tick takes in the slow world the hour-long cache is measured in."""


def _days(r: Measured) -> list[float]:
    return [d.per_agent for d in r.days]


def _said(days: Sequence[float], digits: int) -> str:
    return " ".join(f"${d:.{digits}f}" for d in days) + f" [{max(days):.{digits}f}]"


def _dearest(r: Measured) -> list[float]:
    """Each day's spend of the agent who spent most that day."""
    return [d.dearest for d in r.days]


def _measure(model: str, ticks: int, **kw: Any) -> Measured:
    return asyncio.run(measure(model, ticks, days=DAYS, **kw))


def goal_figures(ticks: int) -> list[Figure]:
    out = []
    for model, goal in GOALS.items():
        digits = 3 if goal >= 0.05 else 4
        lived = _measure(model, ticks, sleeps=True)
        awake = _days(_measure(model, ticks))
        batched = _measure(model, ticks, sleeps=True, economy=True)
        live, cheap = _dearest(lived), _dearest(batched)
        out += [
            Figure(f"$ per agent-day, {model}, shipped settings, asleep 22-06, days 1-{DAYS}",
                   _said(_days(lived), digits)),
            Figure(f"$ the dearest agent's day, {model}, shipped settings, asleep 22-06",
                   _said(live, digits), f"<= ${goal}", max(live) <= goal),
            Figure(f"$ per agent-day, {model}, shipped settings, never asleep",
                   _said(awake, digits)),
            Figure(f"$ the dearest agent's day, {model}, --economy (Message Batches), "
                   "asleep 22-06", _said(cheap, digits), f"<= ${goal / 2}",
                   max(cheap) <= goal / 2),
        ]
    return out


def lever_figures(ticks: int) -> list[Figure]:
    out = []
    for model, goal in GOALS.items():
        digits = 3 if goal >= 0.05 else 4
        before = _measure(model, ticks, sleeps=True, claude=BEFORE)
        out.append(Figure(f"lever table, {model}: none (before)", _said(_days(before), digits)))
        together: dict[str, Any] = dict(BEFORE)
        for name, change in LEVERS.items():
            alone = _measure(model, ticks, sleeps=True, claude={**BEFORE, **change})
            out.append(Figure(f"lever table, {model}: {name}, alone",
                              _said(_days(alone), digits)))
            together.update(change)
        both = _measure(model, ticks, sleeps=True, claude=together)
        out.append(Figure(f"lever table, {model}: all together", _said(_days(both), digits)))
        # The hour-long cache matters only where turns are minutes apart: a slow world.
        for hour, said in ((None, "off"), (240.0, "on (shipped)")):
            slow = _measure(model, ticks, sleeps=True, tick_seconds=SLOW_TICK,
                            claude={"hour_cache_after_seconds": hour})
            out.append(Figure(f"lever table, {model}: a tick every {SLOW_TICK / 60:.0f} "
                              f"minutes, 1-hour cache {said}", _said(_days(slow), digits)))
    return out


def run(ticks: int = 24) -> list[Figure]:
    return goal_figures(ticks) + lever_figures(ticks)


if __name__ == "__main__":  # python -m bench.claude_levers: just these figures
    for f in run():
        print(f"{f.name}: {f.value}" + (f"   (target {f.target})" if f.target else ""))
