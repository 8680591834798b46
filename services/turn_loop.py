"""One agent's turn: the mind calls tools, each call is executed and narrated, until it stops.

    log = await run_turn(mind, start, execute, narrate)

The loop knows minds only through the `Mind` port and the world only through two
callables, so it is the same for the offline mind and a language model, and for
world actions and the agent's own file tools. A turn ends when the mind asks for
nothing more, when `max_actions` calls have run (the rest are answered "not this
turn"), or when the mind fails; the actions it already took stand either way,
and the failure is recorded instead of spreading to the tick. Once no more than
`LOW_ACTIONS` calls are left, each result the mind hears says how many (the
turn's record keeps the narration alone).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from core.actions import ActionResult
from core.events import DomainEvent
from services.mind import (
    Mind,
    MindError,
    MindHalt,
    ToolCall,
    ToolOutcome,
    TurnNotBegun,
    TurnStart,
)
from storage.errors import is_storage_fault

log = logging.getLogger("hearth.turns")

Execute = Callable[[ToolCall], Awaitable[ActionResult]]
Narrate = Callable[[ActionResult, ToolCall], Awaitable[str]]

LIMIT_TEXT = ("Not done: you have made every call this turn allows; that will have to wait for "
              "your next turn.")
"""The result of a call past the per-turn action limit (it is not run)."""

LOW_ACTIONS = 3
"""From this many calls left in a turn, each result says how many are left."""


def actions_left_text(left: int, max_actions: int) -> str:
    """What is added to a call's result once the turn's calls run low: how many are left."""
    if left <= 0:
        return (f"(That was the last of the {max_actions} tool calls you may make this turn; "
                "anything more must wait for your next turn.)")
    calls = "call" if left == 1 else "calls"
    return f"({left} of your {max_actions} tool {calls} this turn left.)"

class TurnEnded(StrEnum):
    """How a turn ended, stored with it (the `turns` table's `ended`)."""

    ENDED = "ended"
    """The mind asked for nothing more."""
    ACTION_LIMIT = "action_limit"
    ERROR = "error"
    """The mind failed or could not go on; what it did stands."""


ENDED, ACTION_LIMIT, MIND_ERROR = TurnEnded.ENDED, TurnEnded.ACTION_LIMIT, TurnEnded.ERROR


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One executed call: what was asked, whether it worked, what the agent heard."""

    tool: str
    arguments: Mapping[str, Any]
    success: bool
    narration: str
    events: tuple[DomainEvent, ...] = ()
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": dict(self.arguments), "ok": self.success,
                "text": self.narration}


@dataclass(frozen=True, slots=True)
class TurnLog:
    actions: tuple[ActionRecord, ...]
    ended: TurnEnded
    record: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The mind's own account of the turn."""
    error: str | None = None
    halt: str | None = None
    """Set when the mind can go on no more (MindHalt): what a person must fix."""
    not_begun: bool = False
    """The run stopped before the mind sent anything (TurnNotBegun): give the turn back."""

    @property
    def events(self) -> tuple[DomainEvent, ...]:
        actions = self.actions
        if len(actions) == 1:  # most turns: one call, whose events are a tuple already
            return actions[0].events
        return tuple(e for a in actions for e in a.events)


async def run_turn(mind: Mind, start: TurnStart, execute: Execute, narrate: Narrate) -> TurnLog:
    actions: list[ActionRecord] = []
    outcomes: Sequence[ToolOutcome] = ()
    ended: TurnEnded = ENDED
    error: str | None = None
    halt: str | None = None
    turn = None
    try:
        turn = mind.begin(start)
        calls = await turn.next_calls(())
        while calls:
            outcomes, ended = await _run_calls(calls, start.max_actions, actions, execute, narrate)
            if ended == ACTION_LIMIT:
                break
            calls = await turn.next_calls(outcomes)
        await turn.finish(outcomes, ended)
    except TurnNotBegun as exc:  # stopping before anything was sent: as if never begun
        ended, error = MIND_ERROR, str(exc)[:500]
        if not actions:
            return TurnLog(actions=(), ended=ended, error=error, not_begun=True)
    except MindHalt as exc:  # nothing more can work: the run stops (one line, from main)
        ended, error, halt = MIND_ERROR, str(exc)[:500], str(exc)[:500]
    except MindError as exc:  # expected trouble (an API down): one line, the tick goes on
        log.warning("turn of %s at tick %s ended early: %s", start.agent, start.tick, exc)
        ended, error = MIND_ERROR, str(exc)[:500]
    except Exception as exc:  # the mind failed: its actions stand, the tick goes on
        if is_storage_fault(exc):  # the disk, not the mind: the run stops, the turn is lost
            raise
        log.exception("turn of %s at tick %s failed", start.agent, start.tick)
        ended, error = MIND_ERROR, f"{type(exc).__name__}: {exc}"[:500]
    return TurnLog(actions=tuple(actions), ended=ended, record=_safe_record(turn),
                   error=error, halt=halt)


async def _run_calls(
    calls: Sequence[ToolCall],
    max_actions: int,
    actions: list[ActionRecord],
    execute: Execute,
    narrate: Narrate,
) -> tuple[list[ToolOutcome], TurnEnded]:
    outcomes: list[ToolOutcome] = []
    ended = ENDED
    for call in calls:
        if len(actions) >= max_actions:
            outcomes.append(ToolOutcome(call_id=call.id, name=call.name, success=False,
                                        text=LIMIT_TEXT))
            ended = ACTION_LIMIT
            continue
        result = await execute(call)
        text = await narrate(result, call)
        actions.append(ActionRecord(
            tool=call.name, arguments=call.arguments, success=result.success,
            narration=text, events=result.events, reason=result.reason,
        ))
        left = max_actions - len(actions)
        heard = text if left > LOW_ACTIONS else f"{text}\n\n{actions_left_text(left, max_actions)}"
        outcomes.append(ToolOutcome(call_id=call.id, name=call.name, success=result.success,
                                    text=heard, data=result.data, reason=str(result.reason)))
    if len(actions) >= max_actions and ended == ENDED:
        ended = ACTION_LIMIT
    return outcomes, ended


def _safe_record(turn: object) -> Mapping[str, Any]:
    if turn is None:
        return MappingProxyType({})
    try:
        return turn.record()  # type: ignore[attr-defined]
    except Exception:
        log.exception("a mind's turn record could not be read")
        return MappingProxyType({})
