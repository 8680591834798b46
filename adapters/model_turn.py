"""What a language model's turn does whichever API it asks (Claude's Messages API, an
OpenAI-compatible endpoint): the one state machine both minds' turns share.

    opening -> (ask -> take the reply's calls -> the engine runs them -> answer them)*
            -> finish (open calls answered) -> record

A turn opens by closing calls a restored history left open and adding the perception
(`_open`). A first request that never went out (the run stopping while it waited for
room) takes the perception back and gives the turn back (`_not_begun`); a request that
failed for good takes it back only if nothing of the turn had happened, and is kept in
the record with its cause (`_request_failed`). `finish` answers calls the action limit
left open, and every turn is traced from `turn_start` to `turn_end`. What differs (how
a request is made, what a reply holds, the shape of a tool result) lives in each mind's
subclass: `_answer` appends the results, the rest is the subclass's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, NoReturn, Protocol

from services.mind import ToolOutcome, TurnNotBegun, TurnStart


class HistoryOps(Protocol):
    """The functions of a mind's history module (adapters/*_mind/history.py)."""

    def add_user_text(self, history: list[Any], text: str) -> tuple[int, Any]: ...
    def undo_user_text(self, history: list[Any], mark: tuple[int, Any]) -> None: ...
    def open_calls(self, history: Sequence[Any]) -> list[str]: ...
    def close_open_calls(self, history: list[Any]) -> None: ...


Trace = Callable[[str, Mapping[str, Any]], None]


class ModelTurn:
    """One agent's turn in progress with a language model (services.mind.MindTurn)."""

    kind: ClassVar[str]
    """The record's "mind": claude or local."""
    history_ops: ClassVar[HistoryOps]

    def __init__(self, start: TurnStart, model: str, history: list[Any],
                 trace: Trace) -> None:
        self.start = start
        self.model = model
        self.history = history
        self._trace_to = trace
        self.first = len(history)
        """Where this turn's messages begin in the history."""
        self.opening: tuple[int, Any] = (len(history), None)
        """What adding the perception did (add_user_text), to take it back."""
        self.requests: list[dict[str, Any]] = []
        self.folded = 0
        """Messages folded into the summary as this turn began."""
        self.stop: str | None = None
        """Why the model's latest reply ended (its API's words), or stopping or error."""
        self.ended = ""
        self.trace({"type": "turn_start", "tick": start.tick, "model": model})

    def trace(self, record: Mapping[str, Any]) -> None:
        self._trace_to(self.start.agent, record)

    # ------------------------------------------------------------------ the states

    def _open(self) -> None:
        """The turn's first request is about to go: the perception opens it."""
        ops = self.history_ops
        ops.close_open_calls(self.history)  # a history restored in mid-exchange
        self.opening = ops.add_user_text(self.history, self.start.perception.as_text())
        self.first = self.opening[0]

    def _take_back(self) -> None:
        """Nothing of this turn happened: the history is as it was before it."""
        self.history_ops.undo_user_text(self.history, self.opening)

    def _not_begun(self) -> NoReturn:
        """The run began to stop while the first request waited: none was sent."""
        self._take_back()
        self.trace({"type": "turn_end", "tick": self.start.tick, "ended": "not_begun",
                    "stop": "stopping", "requests": 0})
        raise TurnNotBegun("the run stopped before the turn's first request was sent; "
                           "the next run gives the turn back") from None

    def _request_failed(self, cause: str, first: bool, started: float) -> None:
        """A request failed for good: kept in the record; the caller raises its mind's
        error (or halt) next."""
        if first:  # nothing of this turn happened: as if it had never asked
            self._take_back()
        self.stop = "error"
        self.requests.append({"error": cause, "ms": ms_since(started)})
        self.trace({"type": "request_failed", "tick": self.start.tick, "error": cause})
        self.trace({"type": "turn_end", "tick": self.start.tick, "ended": "error",
                    "stop": "error", "requests": len(self.requests)})

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        if self.history_ops.open_calls(self.history):  # the action limit: answer them
            self._answer(outcomes)
        self.ended = reason
        self.trace({"type": "turn_end", "tick": self.start.tick, "ended": reason,
                    "stop": self.stop, "requests": len(self.requests)})

    def _answer(self, outcomes: Sequence[ToolOutcome]) -> None:
        """Append the results of the calls the last reply made (its API's shape)."""
        raise NotImplementedError

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "mind": self.kind, "model": self.model, "stop": self.stop,
            "requests": self.requests, "messages": self.history[self.first:]}
        if self.folded:
            record["folded"] = self.folded
        return record


def ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
