"""What a Claude agent's turn spends, and the settings that steer it (issue 42).

Each lever was measured alone and together by `python -m bench claude`; the table and
the reasons for the shipped values are in DESIGN.md ("What a day costs").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.model_catalog import EFFORTS, facts
from services.mind import ToolOutcome, ToolSpec

LIGHT_UP_TO = "high"
"""The highest effort a model's lightest thinking type is taken at (Sonnet 5.5's
between_tools, Haiku 5.5's disabled); above it, the default (adaptive) is sent."""


@dataclass(frozen=True)
class Levers:
    follow_up_effort: str | None = None
    """The effort of a request that answers tool results within a turn (None: the
    agent's own effort, as for the turn's first request). Effort is no part of the
    thinking configuration, so it may change within a tool loop."""
    results_next_turn: bool = False
    """A turn whose calls all succeeded and asked to learn nothing (Tool.informs) ends
    with them: their results open the agent's next turn, before its perception,
    instead of costing a request that would only hear them."""
    keep_thinking: bool = False
    """The model's thinking stays in the history (the 5.x default) instead of being
    taken out at each turn's start; it goes only when compaction rewrites the start.
    Needed by `results_next_turn`: an open tool loop's thinking is bound to all before
    it, so nothing older may change while it stays open."""
    thinking: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """`thinking.type` sent per model id (absent: the model's default, adaptive)."""
    hour_cache_after: float | None = None
    """Seconds: when an agent's next turn is expected further off than this (a slow
    world, a night asleep in one, batches that take their time), its requests write the
    cache for an hour (2x the input price) instead of 5 minutes (1.25x), which would be
    gone before its next turn and written again whole. None: always 5 minutes."""

    def thinking_for(self, model: str, effort: str | None) -> dict[str, str] | None:
        """The `thinking` a request carries (None: none, the model's default)."""
        kind = self.thinking.get(model)
        if kind is None or (effort in EFFORTS
                            and EFFORTS.index(effort) > EFFORTS.index(LIGHT_UP_TO)):
            return None
        return {"type": kind}

    def ttl(self, expected_wait: float | None) -> str | None:
        """The cache lifetime a turn's requests write ("1h"; None: the 5-minute default),
        given the seconds expected until the agent's next turn (None: unknown yet)."""
        if self.hour_cache_after is None or expected_wait is None:
            return None
        return "1h" if expected_wait > self.hour_cache_after else None

    def effort(self, own: str | None, follow_up: bool) -> str | None:
        if follow_up and self.follow_up_effort is not None:
            return self.follow_up_effort
        return own

    def later(self, outcomes: Sequence[ToolOutcome], tools: Sequence[ToolSpec]) -> bool:
        """Whether these results can wait for the agent's next turn."""
        if not self.results_next_turn or not outcomes:
            return False
        informing = {t.name for t in tools if t.informs}
        return all(o.success and o.name not in informing for o in outcomes)


def levers_of(settings: Any, models: Sequence[str]) -> Levers:
    """The levers settings.yaml's `claude:` section pulls, for agents on these models."""
    light: dict[str, str] = {}
    if settings.thinking == "light":
        for model in models:
            known = facts(model)
            if known is not None and known.lightest is not None:
                light[model] = known.lightest
    return Levers(hour_cache_after=settings.hour_cache_after_seconds,
                  follow_up_effort=settings.follow_up_effort,
                  results_next_turn=settings.results_next_turn,
                  keep_thinking=settings.results_next_turn,
                  thinking=MappingProxyType(light))
