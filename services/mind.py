"""The Mind port: the one thing the turn loop knows about whoever decides an agent's actions.

A mind is given the agent's perception and the tools, answers with tool calls,
hears each call's narrated outcome, and answers again until it has nothing more
to do this turn. The offline mind and a language-model mind implement the same
protocol (adapters/), so the engine never cares which one speaks for an agent.

    turn = mind.begin(TurnStart(agent, tick, perception, tools, max_actions))
    calls = await turn.next_calls(())
    while calls:
        outcomes = [... execute and narrate each call ...]
        calls = await turn.next_calls(outcomes)
    await turn.finish(outcomes, "ended")
    record = turn.record()       # stored with the turn, atomically

`get_state`/`set_state` carry what a mind remembers between turns: the engine
stores it with each committed turn and hands it back after a restart, so a
resumed run continues from exactly what was committed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from core.perception import Perception
from core.types import AgentName


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as a language model sees it: name, description, JSON schema of its input."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    informs: bool = False
    """Its result is what the agent asked to learn (examine, read_file, ...): a mind that
    can leave a result for the next turn answers this one at once (ClaudeMind)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A mind asking for one action; `arguments` is untrusted until the engine parses it."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one call came to, as the mind hears it."""

    call_id: str
    name: str
    success: bool
    text: str
    """Narrated prose: what happened, or why it could not."""
    data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The action's structured result (for minds that read structure, not prose)."""
    reason: str = ""
    """Why it failed (a core.failures.FailureReason value; "" when it worked or no reason
    was given): what a mind reads instead of matching words in `text`."""


@dataclass(frozen=True, slots=True)
class TurnStart:
    agent: AgentName
    tick: int
    perception: Perception
    tools: tuple[ToolSpec, ...]
    max_actions: int
    night_left: int = 0
    """Ticks to the morning when the turn falls at night (0 by day): how long an agent
    that goes to sleep now would be away (core/clock.py night_left)."""


class MindError(RuntimeError):
    """A mind cannot go on with a turn for a reason outside the program (a language
    model's API still failing after its client's retries, say). The turn loop records
    the message as the turn's error and logs one line, not a traceback: it is news, not
    a bug."""


class MindHalt(MindError):
    """A mind can take no turn at all until a person changes something (a key the API
    refuses, a model that no longer exists). The run stops after the turns in flight
    instead of letting the world move on without its agents; a turn that had done
    nothing yet is left undone, so the next run gives it back to the agent. The
    message says what to fix, in one line."""


class TurnNotBegun(MindError):
    """The run began to stop while the turn's first request waited for room at the
    model's endpoint: nothing was sent and nothing happened, so the turn is left
    undone and the next run gives it back to the agent."""


@runtime_checkable
class MindTurn(Protocol):
    """One agent's turn in progress."""

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        """The next calls, given the outcomes of the previous ones; empty ends the turn."""
        ...

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        """The turn is over (`reason`: ended, action_limit, error); last outcomes included."""
        ...

    def record(self) -> Mapping[str, Any]:
        """A JSON-able account of the turn, stored with it (never parsed by the engine)."""
        ...


@runtime_checkable
class Mind(Protocol):
    """Decides actions for the agents it speaks for."""

    kind: str
    """A short name stored with each turn, like "offline" or "claude"."""

    reads_text: bool
    """False: it reads only the Perception's structured fields, so the grid view and
    narrative need not be written for it."""
    answers_at_once: bool
    """True: its turns never wait on anything outside the process (the offline mind);
    the engine then runs such turns one after another, in schedule order."""

    def state_json(self, agent: AgentName) -> str:
        """`get_state(agent)` as canonical JSON (sorted keys, no spaces): a mind may keep
        that text while its memory is unchanged."""
        ...

    def begin(self, start: TurnStart) -> MindTurn: ...

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        """What this mind remembers about `agent` between turns, JSON-able."""
        ...

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        """Restore what `get_state` returned (after a restart)."""
        ...


CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
"""The one JSON a mind's state is stored as (engine/committer.py writes records alike)."""


class MindDefaults:
    """What most minds say of themselves: they read the perception's words, may wait on
    something outside the process, and give their state as canonical JSON afresh.
    A mind inherits these and overrides what differs."""

    reads_text: bool = True
    answers_at_once: bool = False

    def state_json(self, agent: AgentName) -> str:
        return CANONICAL.encode(dict(self.get_state(agent)))  # type: ignore[attr-defined]
