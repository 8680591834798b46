"""An agent's conversation with its model: messages kept append-only, sent with a breakpoint.

The history is a list of Messages API messages (plain JSON values). It only ever
grows at the end, so each request begins with the bytes of the one before it and
the model's prompt cache can read that prefix back. The one thing a request adds
is a cache breakpoint on the last block of its newest message (a copy: the stored
message is never touched), which tells the API to keep everything up to there
for the next request.

A history must always be valid to send: every tool_use answered by a tool_result
in the next message, and no assistant message without content. `close_open_calls`
and `safe_assistant_content` keep it so whatever a turn ran into.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from adapters.claude_mind.prompt import cache_mark

Message = dict[str, Any]

NOT_RUN = "This was not done: the turn ended before it."
"""The tool_result given to a call that was never executed (see close_open_calls)."""
SILENCE = "(silence)"
"""Stands in for an assistant reply that said nothing, which the API refuses to take back."""


def history_problem(messages: Any) -> str | None:
    """Why a stored history cannot be sent as it is, or None if it can (a state restored
    from the database, or rebuilt from turn records: adapters/memory_rebuild.py)."""
    if not isinstance(messages, list):
        return "it is not a list of messages"
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            return f"message {i} has no user or assistant role"
        content = message.get("content")
        if not isinstance(content, list) or not content:
            return f"message {i} has no content blocks"
        if not all(isinstance(b, Mapping) and isinstance(b.get("type"), str) for b in content):
            return f"message {i} has a block without a type"
    return None


def user_text(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def add_user_text(history: list[Message], text: str) -> tuple[int, Message | None]:
    """Add text as the newest user message, keeping roles alternating: after a user
    message (tool results the model never answered) it joins that message as a new
    last block. The stored message is replaced, not changed, so what was sent stays
    as it was. Gives (where this addition starts, the message it replaced or None),
    which `undo_user_text` needs."""
    if history and history[-1]["role"] == "user":
        old = history[-1]
        history[-1] = {"role": "user", "content": [*old["content"],
                                                   {"type": "text", "text": text}]}
        return len(history) - 1, old
    history.append(user_text(text))
    return len(history) - 1, None


def undo_user_text(history: list[Message], mark: tuple[int, Message | None]) -> None:
    """Take back an `add_user_text` and everything after it."""
    at, replaced = mark
    del history[at:]
    if replaced is not None:
        history.append(replaced)


def tool_results(results: Iterable[tuple[str, str, bool]]) -> Message:
    """One user message answering a reply's tool calls: (tool_use id, text, failed)."""
    content = []
    for call_id, text, failed in results:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                                 "content": text or "(no result)"}
        if failed:
            block["is_error"] = True
        content.append(block)
    return {"role": "user", "content": content}


def assistant(content: Sequence[Mapping[str, Any]]) -> Message:
    return {"role": "assistant", "content": safe_assistant_content(content)}


def safe_assistant_content(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A reply's blocks as storable values: empty text dropped, never empty as a whole."""
    kept = [dict(b) for b in content
            if not (b.get("type") == "text" and not str(b.get("text", "")).strip())]
    return kept or [{"type": "text", "text": SILENCE}]


def without_calls(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A reply with its tool calls taken out (they will not run), never empty."""
    return safe_assistant_content([b for b in content if b.get("type") != "tool_use"])


def open_calls(history: Sequence[Message]) -> list[str]:
    """Ids of tool calls in the last message that no tool_result answers yet."""
    if not history or history[-1]["role"] != "assistant":
        return []
    return [b["id"] for b in history[-1]["content"] if b.get("type") == "tool_use"]


def close_open_calls(history: list[Message]) -> None:
    """Answer calls left open (a turn that stopped between a reply and its results)."""
    ids = open_calls(history)
    if ids:
        history.append(tool_results((i, NOT_RUN, True) for i in ids))


THINKING = frozenset({"thinking", "redacted_thinking"})


def exchange_open(history: Sequence[Message]) -> bool:
    """Whether the newest message answers tool calls: the next request goes on with
    that tool loop (a turn stopped by the action limit or a budget left it so)."""
    return bool(history) and history[-1]["role"] == "user" and any(
        b.get("type") == "tool_result" for b in history[-1]["content"])


def drop_thinking(history: list[Message], *, even_open: bool = False) -> int:
    """Take the model's thinking out of turns that are over; gives how many blocks went.

    The API needs thinking back only within a tool loop, and Hearth leaves older
    thinking out (the turn's record keeps it), so the history stays small and a turn's
    messages change once, at the next turn's start, and never again: the cached prefix
    up to there holds.

    While a tool loop is still open (the newest message answers tool calls), nothing is
    dropped: the open exchange's thinking must go back unmodified, and it is bound to
    the conversation before it, so that must not change either. It is dropped with the
    rest at the start of the first turn that finds the loop closed. (Thinking made by
    another model or under another account is left to the API, which drops blocks it
    cannot read: https://platform.claude.com/docs/en/build-with-claude/thinking.)
    `even_open`: drop it all the same."""
    if exchange_open(history) and not even_open:
        return 0
    dropped = 0
    for i, message in enumerate(history):
        if message["role"] != "assistant":
            continue
        content = message["content"]
        kept = [b for b in content if b.get("type") not in THINKING]
        if len(kept) != len(content):
            dropped += len(content) - len(kept)
            history[i] = {"role": "assistant", "content": kept or [{"type": "text",
                                                                    "text": SILENCE}]}
    return dropped


def with_breakpoint(history: Sequence[Message], settled: int | None = None,
                    ttl: str | None = None) -> list[Message]:
    """The messages to send: the history, its last block marked as a cache breakpoint,
    and the last block of message `settled - 1` too when given (the end of what earlier
    turns left, which stays as it is from now on): the next turn's request then finds
    that prefix in the cache however many blocks this turn adds."""
    if not history:
        return []
    marked = [len(history) - 1]
    if settled is not None and 0 < settled < len(history):
        marked.insert(0, settled - 1)
    out = list(history)
    for at in marked:
        message = history[at]
        blocks = [dict(b) for b in message["content"]]
        # A thinking block cannot carry a breakpoint: mark the last block that can.
        where = [i for i, b in enumerate(blocks) if b.get("type") not in THINKING]
        if where:
            blocks[where[-1]]["cache_control"] = cache_mark(ttl)
            out[at] = {"role": message["role"], "content": blocks}
    return out


def cut_off_note(stop: str, dropped: Sequence[str]) -> str:
    """What the model is told after a reply cut off by `stop`, whose calls `dropped`
    (tool names, in order) were not run."""
    if stop == "model_context_window_exceeded":
        why = "the conversation filled all the room your memory has (older parts will be " \
              "summarised)"
    else:
        why = "it reached the length one reply may have"
    if dropped:
        calls = ", ".join(dropped)
        what = (f"so its call to {calls} was not run" if len(dropped) == 1
                else f"so its calls to {calls} were not run")
        return (f"(Your last reply was cut off: {why}, {what}; nothing of it happened. "
                "Make the call again if you still want it, with fewer words before it.)")
    return (f"(Your last reply was cut off: {why}. If you meant to call a tool, it was "
            "not run.)")
