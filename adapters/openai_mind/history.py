"""An agent's conversation in chat-completions form: plain JSON messages, append-only.

    {"role": "user", "content": "It is day 1, morning. ..."}
    {"role": "assistant", "content": "North.", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "walk", "arguments": "{\\"direction\\": \\"north\\"}"}}]}
    {"role": "tool", "tool_call_id": "c1", "content": "You walk north."}

The system message is not kept here: it is built once per agent and sent first.
A history must always be valid to send: every tool call answered by a tool message
before the next user or assistant message, every call's arguments a JSON object
(servers such as vLLM parse them back), and no assistant message without either
words or calls. `close_open_calls` and `assistant` keep it so whatever a turn ran into.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from adapters.claude_mind.history import NOT_RUN as _NOT_RUN
from adapters.claude_mind.history import SILENCE

Message = dict[str, Any]

ERROR = "Error: "
"""Opens the text of a failed call's tool message (this API has no is_error flag)."""
NOT_RUN = ERROR + _NOT_RUN
"""The tool message given to a call that was never executed."""

__all__ = ["ERROR", "NOT_RUN", "SILENCE", "Message", "add_user_text", "assistant",
           "close_open_calls", "history_problem", "open_calls", "tool_message",
           "tool_messages", "undo_user_text"]


def add_user_text(history: list[Message], text: str) -> tuple[int, Message | None]:
    """Add text as the newest user message. After a user message (which only a restored
    history can end with) it joins that message instead, so user turns never repeat;
    the stored message is replaced, not changed. Gives what `undo_user_text` needs."""
    if history and history[-1]["role"] == "user":
        old = history[-1]
        history[-1] = {"role": "user", "content": f"{old['content']}\n\n{text}"}
        return len(history) - 1, old
    history.append({"role": "user", "content": text})
    return len(history) - 1, None


def undo_user_text(history: list[Message], mark: tuple[int, Message | None]) -> None:
    """Take back an `add_user_text` and everything after it."""
    at, replaced = mark
    del history[at:]
    if replaced is not None:
        history.append(replaced)


def assistant(text: str | None, calls: Sequence[Mapping[str, Any]] = ()) -> Message:
    """A reply as stored: words (or None beside calls), never empty as a whole."""
    words = text if text and text.strip() else None
    message: Message = {"role": "assistant", "content": words}
    if calls:
        message["tool_calls"] = [dict(c) for c in calls]
    elif words is None:
        message["content"] = SILENCE
    return message


def tool_message(call_id: str, text: str, failed: bool) -> Message:
    """One call's answer; a failure's text opens with "Error: "."""
    text = text or "(no result)"
    if failed and not text.startswith(ERROR):
        text = ERROR + text
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def open_calls(history: Sequence[Message]) -> list[str]:
    """Ids of the newest assistant message's calls that no tool message answers yet."""
    answered: set[str] = set()
    for message in reversed(history):
        if message["role"] == "tool":
            answered.add(message["tool_call_id"])
            continue
        if message["role"] != "assistant":
            return []
        return [c["id"] for c in message.get("tool_calls") or () if c["id"] not in answered]
    return []


def close_open_calls(history: list[Message]) -> None:
    """Answer calls left open (a turn that stopped between a reply and its results)."""
    history.extend(tool_message(i, NOT_RUN, True) for i in open_calls(history))


def history_problem(messages: Any) -> str | None:
    """Why a stored history cannot be sent as it is, or None if it can."""
    if not isinstance(messages, list):
        return "it is not a list of messages"
    waiting: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, Mapping) else None
        if role not in ("user", "assistant", "tool"):
            return f"message {i} has no user, assistant or tool role"
        if role == "tool":
            if m.get("tool_call_id") not in waiting or not isinstance(m.get("content"), str):
                return f"message {i} answers no open tool call"
            waiting.discard(m["tool_call_id"])
            continue
        if waiting:
            return f"message {i} comes before every tool call is answered"
        content, calls = m.get("content"), m.get("tool_calls")
        if role == "user" and not isinstance(content, str):
            return f"message {i} has no text"
        if role == "assistant":
            if not (isinstance(content, str) or (content is None and calls)):
                return f"message {i} has neither text nor calls"
            if calls is not None and not _calls_ok(calls):
                return f"message {i} has a malformed tool call"
            waiting = {c["id"] for c in calls or ()}
    return None


def _calls_ok(calls: Any) -> bool:
    return isinstance(calls, list) and all(
        isinstance(c, Mapping) and isinstance(c.get("id"), str)
        and isinstance(c.get("function"), Mapping)
        and isinstance(c["function"].get("name"), str)
        and isinstance(c["function"].get("arguments"), str) for c in calls)


def tool_messages(answers: Iterable[tuple[str, str, bool]]) -> list[Message]:
    """Tool messages for (call id, text, failed) in order."""
    return [tool_message(i, text, failed) for i, text, failed in answers]
