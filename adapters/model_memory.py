"""What a language-model mind keeps per agent between turns: its history and its summary.

Claude minds and local-model minds keep the same things the same way; only the
shape of a message, how to check a stored history and how to fold old turns into a
summary differ, and those are handed in. The minds hold one of these each.

- `state`/`restore` are the mind's `get_state`/`set_state`: a stored history that
  cannot be sent is dropped (it stays in the database) and the agent starts afresh.
- `compact` runs as a turn begins: when the history has passed its limit, or the
  model said its context was full (`squeeze_next`, which keeps half as much).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("hearth.minds")

Message = dict[str, Any]
Trace = Callable[[str, Mapping[str, Any]], None]
Compact = Callable[..., tuple[list[Message], str, int]]
"""compact(history, summary, *, keep_chars, summary_chars) -> (kept, summary, folded)."""


def write_trace(trace: Trace | None, agent: str, record: Mapping[str, Any]) -> None:
    """Write a trace record if there is a trace; a failure is logged, never raised (a
    trace is for reading later, and never stops a turn)."""
    if trace is None:
        return
    try:
        trace(agent, record)
    except Exception:
        log.exception("a trace record for %s could not be written", agent)


class ModelMemory:
    def __init__(
        self,
        *,
        compact: Compact,
        size: Callable[[list[Message]], int],
        problem: Callable[[Any], str | None],
        compact_above_chars: int,
        keep_recent_chars: int,
        summary_max_chars: int,
        trace: Trace | None = None,
    ) -> None:
        self._compact = compact
        self._size = size
        self.size = size
        """How big a history is as sent (characters), as compaction measures it."""
        self._problem = problem
        self.compact_above_chars = compact_above_chars
        self.keep_recent_chars = keep_recent_chars
        self.summary_max_chars = summary_max_chars
        self.trace = trace
        self._histories: dict[str, list[Message]] = {}
        self._summaries: dict[str, str] = {}
        self._too_long: set[str] = set()
        """Agents whose last request overflowed the model's context: compacted next turn."""

    def history(self, name: str) -> list[Message]:
        found = self._histories.get(name)
        if found is None:
            found = self._histories[name] = []
        return found

    def state(self, agent: str) -> Mapping[str, Any]:
        return {"messages": self._histories.get(agent, []),
                "summary": self._summaries.get(agent, "")}

    def restore(self, agent: str, state: Mapping[str, Any]) -> None:
        messages = state.get("messages") if isinstance(state, Mapping) else None
        problem = self._problem(messages)
        if problem is not None:
            # The stored state stays in the database (and every turn's messages in its
            # record); this agent's model starts from a blank page rather than crash.
            log.warning("the stored history of %s cannot be used (%s); starting afresh",
                        agent, problem)
            self._histories[agent] = []
            self._summaries[agent] = ""
            return
        self._histories[agent] = [dict(m) for m in messages]  # type: ignore[union-attr]
        summary = state.get("summary", "")
        self._summaries[agent] = summary if isinstance(summary, str) else ""

    def squeeze_next(self, agent: str) -> None:
        """The model said the context is full: compact before the agent's next turn."""
        self._too_long.add(agent)

    def compact(self, name: str, *, wait: bool = False, room: int | None = None) -> int:
        """Fold the oldest turns into the summary if due; gives how many messages went.
        `wait`: not now unless the model said its context is full (a mind may have a
        reason to keep the start as it is for another turn). `room`: the most history
        a request can carry at all (its model's input limit: adapters/request_sizing.py);
        past it, the history is folded as if the context were full, to half of it."""
        history = self.history(name)
        before = self._size(history)
        squeeze = name in self._too_long or (room is not None and before > room)
        if not squeeze and (wait or before <= self.compact_above_chars):
            return 0
        self._too_long.discard(name)
        # After the model said its context was full, keep half as much as usual.
        keep = self.keep_recent_chars // 2 if squeeze else self.keep_recent_chars
        if room is not None:
            keep = min(keep, room // 2)
        kept, summary, folded = self._compact(
            history, self._summaries.get(name, ""),
            keep_chars=keep, summary_chars=self.summary_max_chars)
        if folded:
            self._histories[name] = kept
            self._summaries[name] = summary
            write_trace(self.trace, name, {"type": "compacted", "messages_folded": folded,
                                           "chars_before": before,
                                           "chars_after": self._size(kept)})
        return folded
