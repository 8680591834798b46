"""TickContext: what one tick knows, handed from phase to phase and never mutated.

Each phase returns a new context through a `with_*` method, so what a phase saw
and what it produced can be told apart afterwards (the metrics, the `--run`
printout and the observer all read the final context).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from core.events import DomainEvent
from core.terrain import Weather
from core.types import AgentName
from services.turn_loop import ActionRecord


@dataclass(frozen=True, slots=True)
class TurnResult:
    """One agent's finished turn."""

    agent: AgentName
    tick: int
    mind: str
    actions: tuple[ActionRecord, ...]
    ended: str
    """ended, action_limit or error."""
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def events(self) -> tuple[DomainEvent, ...]:
        return tuple(e for a in self.actions for e in a.events)


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class TickContext:
    tick: int
    time_text: str
    period: str
    weather: Weather
    resumed: bool = False
    """The tick was interrupted by a crash and is being finished: opening phases are skipped."""
    woke: tuple[AgentName, ...] = ()
    moved: tuple[AgentName, ...] = ()
    """Agents carried one step by their journey."""
    interrupted: tuple[AgentName, ...] = ()
    """Agents whose journey stopped because someone came into view (they act this tick)."""
    agents_to_act: tuple[AgentName, ...] = ()
    clusters: tuple[tuple[AgentName, ...], ...] = ()
    already_done: frozenset[AgentName] = frozenset()
    """Agents whose turn this tick was committed before a crash."""
    events: tuple[DomainEvent, ...] = ()
    """Events of the tick's own phases (turn events live in turn_results)."""
    turn_results: Mapping[AgentName, TurnResult] = field(
        default_factory=lambda: MappingProxyType({})
    )
    phase_ms: tuple[tuple[str, float], ...] = ()
    errors: tuple[tuple[str, str], ...] = ()
    """(phase, message) for phases that failed and were skipped."""
    stopped: bool = False
    """A stop was requested mid-tick: the tick is left open for the next run to finish."""
    completed: bool = False
    """The commit phase advanced the tick counter."""

    # ------------------------------------------------------------------ with_*

    def with_woke(self, names: Iterable[AgentName]) -> TickContext:
        return replace(self, woke=tuple(names))

    def with_moved(
        self, moved: Iterable[AgentName], interrupted: Iterable[AgentName]
    ) -> TickContext:
        return replace(self, moved=tuple(moved), interrupted=tuple(interrupted))

    def with_agents_to_act(self, names: Iterable[AgentName]) -> TickContext:
        return replace(self, agents_to_act=tuple(names))

    def with_clusters(self, clusters: Iterable[Iterable[AgentName]]) -> TickContext:
        return replace(self, clusters=tuple(tuple(c) for c in clusters))

    def with_already_done(self, names: Iterable[AgentName]) -> TickContext:
        return replace(self, already_done=frozenset(names))

    def with_weather(self, weather: Weather) -> TickContext:
        return replace(self, weather=weather)

    def append_events(self, events: Iterable[DomainEvent]) -> TickContext:
        return replace(self, events=self.events + tuple(events))

    def with_turn_results(self, results: Mapping[AgentName, TurnResult]) -> TickContext:
        return replace(self, turn_results=_frozen({**self.turn_results, **results}))

    def with_phase_time(self, phase: str, ms: float) -> TickContext:
        return replace(self, phase_ms=self.phase_ms + ((phase, ms),))

    def with_error(self, phase: str, message: str) -> TickContext:
        return replace(self, errors=self.errors + ((phase, message),))

    def with_stopped(self) -> TickContext:
        return replace(self, stopped=True)

    def with_completed(self) -> TickContext:
        return replace(self, completed=True)

    # ------------------------------------------------------------------ reading

    @property
    def action_count(self) -> int:
        return sum(len(r.actions) for r in self.turn_results.values())

    @property
    def all_events(self) -> tuple[DomainEvent, ...]:
        """The tick's phase events, then every turn's, in turn order."""
        out = list(self.events)
        for result in self.turn_results.values():
            out.extend(result.events)
        return tuple(out)
