"""A model mind's memory rebuilt turn by turn from the turns' records (issue 30: a fork).

    limits = MemoryLimits.of(config.settings.claude)
    state = after_turn("claude", state, record["mind"], limits)   # or raises CannotRebuild

A Claude or local-model mind keeps `{"messages": [...], "summary": "..."}` per agent
(adapters/model_memory.py) and stores it only as of the agent's latest turn, but every
turn's record holds what the turn added (`messages`: the history from where the turn's
opening message stands) and how many messages its start folded into the summary
(`folded`, absent when none). So the state after a turn follows from the state before
it and the record, as the mind's own turn start makes it (ClaudeMind.begin and
ClaudeTurn.next_calls; OpenAIMind.begin and OpenAITurn.next_calls):

1. The state as `ModelMemory.restore` takes it: a history that cannot be sent is
   dropped (no state at all: an empty history and summary).
2. Compaction, only when the record says it folded F > 0 messages: the mind folded
   exactly the first F (its oldest whole turns, whichever limit chose them), so the
   same compaction with the cut at F is done again. One case is chosen by a limit the
   record does not hold: a Claude history whose tool loop was still open (the newest
   message answers tool calls) compacts only because the model said its context was
   full, keeping half of `keep_recent_chars`, and then folds all that is left into the
   summary (F is then the whole history's length, which is checked).
3. Claude only: thinking is dropped from turns that are over (`history.drop_thinking`),
   unless the record says it was kept (`"thinking": "kept"`) and nothing was folded.
4. Calls left open are answered "not run" (`close_open_calls`), and the turn's opening
   message (the perception) is added: after a user message it joins it (that message
   is then the first of the turn's record), else it is a new message.
5. After = the history before where the opening stands + the record's messages (a turn
   whose first request failed or was refused puts back what it replaced, which its
   record then holds). The summary is the one after step 2. A record of a turn the mind
   never began (`{}`: no profile, say) leaves the memory as it was.

Each step is checked against the record where it can be (F must end a whole turn, the
record's first message must continue the one it joined); what cannot be rebuilt raises
`CannotRebuild`, whose message ends a sentence about the turn ("... holds no messages").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adapters.claude_mind import compaction as claude_compaction
from adapters.claude_mind import history as claude_history
from adapters.openai_mind import compaction as local_compaction
from adapters.openai_mind import history as local_history

Message = dict[str, Any]
KINDS = frozenset({"claude", "local"})
"""The kinds of mind whose memory a record rebuilds (ClaudeMind.kind, OpenAIMind.kind)."""


class CannotRebuild(Exception):
    """The record does not say exactly what the memory became; the message says why."""


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """What of settings.yaml's `claude:` section a rebuild needs (both minds use it)."""

    keep_recent_chars: int
    summary_max_chars: int

    @classmethod
    def of(cls, settings: Any) -> MemoryLimits:
        """From config.ClaudeSettings (anything with the two fields)."""
        return cls(int(settings.keep_recent_chars), int(settings.summary_max_chars))


def after_turn(kind: str, state: Mapping[str, Any] | None, record: Any,
               limits: MemoryLimits) -> dict[str, Any]:
    """The memory of a mind of `kind` after a turn, from the memory before it (None: none
    stored) and the turn's record (the `mind` part of a stored turn record)."""
    if kind not in KINDS:
        raise CannotRebuild(f"was taken by a mind of kind {kind!r}, whose memory no "
                            "record holds")
    if not isinstance(record, Mapping):
        raise CannotRebuild("holds no record of its mind")
    if not record:
        # The mind never began the turn (no profile, say): its memory did not change.
        return _unchanged(kind, state)
    if record.get("mind") != kind:
        raise CannotRebuild(f"was taken by a mind of kind {record.get('mind')!r}, not "
                            f"{kind!r}")
    added = record.get("messages")
    if not isinstance(added, list) or not all(isinstance(m, Mapping) for m in added):
        raise CannotRebuild("holds no messages to rebuild the memory from (a record "
                            "older than them, or damaged)")
    folded = record.get("folded", 0)
    if not isinstance(folded, int) or isinstance(folded, bool) or folded < 0:
        raise CannotRebuild(f"says {folded!r} messages were folded")
    history, summary = _restored(state, _problem_of(kind))
    if kind == "claude":
        history, summary = _claude_start(history, summary, folded, limits,
                                         kept=record.get("thinking") == "kept")
    else:
        if folded:
            history, summary = _fold_at(local_compaction.compact, history, summary,
                                        folded, limits)
        local_history.close_open_calls(history)
    first = _opening_at(kind, history, added)
    return {"messages": [*history[:first], *(dict(m) for m in added)], "summary": summary}


def _unchanged(kind: str, state: Mapping[str, Any] | None) -> dict[str, Any]:
    history, summary = _restored(state, _problem_of(kind))
    return {"messages": history, "summary": summary}


def _claude_start(history: list[Message], summary: str, folded: int,
                  limits: MemoryLimits, *, kept: bool = False) -> tuple[list[Message], str]:
    """What ClaudeMind.begin and the first request leave before the perception is added."""
    if folded:
        if claude_history.exchange_open(history):
            # Only a full context compacts under an open loop (ModelMemory.squeeze_next:
            # half the usual keep), and the loop left then folds whole (_fold_open_loop).
            kept, summary, cut = claude_compaction.compact(
                history, summary, keep_chars=limits.keep_recent_chars // 2,
                summary_chars=limits.summary_max_chars)
            if not cut:
                raise CannotRebuild(f"folded {folded} messages where the limits fold none")
            history, summary, rest = claude_compaction.fold_all(
                kept, summary, summary_chars=limits.summary_max_chars)
            if cut + rest != folded:
                raise CannotRebuild(f"folded {folded} messages where the limits fold "
                                    f"{cut + rest}")
        else:
            history, summary = _fold_at(claude_compaction.compact, history, summary,
                                        folded, limits)
    if folded or not kept:  # the record says when thinking stays (Levers.keep_thinking)
        claude_history.drop_thinking(history)
    claude_history.close_open_calls(history)
    return history, summary


def _fold_at(compact: Callable[..., tuple[list[Message], str, int]], history: list[Message],
             summary: str, folded: int, limits: MemoryLimits) -> tuple[list[Message], str]:
    """The compaction that folded the first `folded` messages: the mind's own `compact`,
    told to keep exactly what came after them (it cuts only where a whole turn begins)."""
    if folded >= len(history):
        raise CannotRebuild(f"folded {folded} of the {len(history)} messages the memory held")
    keep = sum(len(json.dumps(m, ensure_ascii=False)) for m in history[folded:])
    kept, new_summary, cut = compact(history, summary, keep_chars=keep,
                                     summary_chars=limits.summary_max_chars)
    if cut != folded:
        raise CannotRebuild(f"folded {folded} messages, which do not end a whole turn of "
                            "the memory it began with")
    return [dict(m) for m in kept], new_summary


def _opening_at(kind: str, history: list[Message], added: list[Any]) -> int:
    """Where the turn's record begins in the history: a perception after a user message
    joined it (add_user_text), so the record's first message must continue that one."""
    if not history or history[-1].get("role") != "user":
        if added and added[0].get("role") != "user":
            raise CannotRebuild("does not open with the agent's perception")
        return len(history)
    last = history[-1]
    head = added[0] if added else None
    if head is None or head.get("role") != "user" or not _continues(
            kind, last.get("content"), head.get("content")):
        raise CannotRebuild("does not continue the message its perception joined: the "
                            "memory it began with is not the one the turn had")
    return len(history) - 1


def _continues(kind: str, before: Any, after: Any) -> bool:
    if kind == "claude":
        return isinstance(before, list) and isinstance(after, list) \
            and after[:len(before)] == before
    return isinstance(before, str) and isinstance(after, str) and (
        after == before or after.startswith(before + "\n\n"))


def _restored(state: Mapping[str, Any] | None,
              problem: Callable[[Any], str | None]) -> tuple[list[Message], str]:
    """The history and summary as ModelMemory.restore takes them (fresh copies)."""
    if not isinstance(state, Mapping):
        return [], ""
    messages = state.get("messages")
    if problem(messages) is not None:
        return [], ""
    summary = state.get("summary", "")
    return [dict(m) for m in messages], summary if isinstance(summary, str) else ""


def _problem_of(kind: str) -> Callable[[Any], str | None]:
    return claude_history.history_problem if kind == "claude" else local_history.history_problem
