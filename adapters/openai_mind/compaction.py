"""Keeping what is sent bounded: the oldest whole turns fold into a summary (chat format).

    history, summary, folded = compact(history, summary, keep_chars=40_000, summary_chars=8_000)

The same idea as adapters/claude_mind/compaction.py, for chat-completions messages
(string contents, `tool_calls`, `tool` messages): when a history grows past a
limit, its oldest whole turns leave the context and become lines of a summary made
without a model, which opens the first user message that stays. Every turn's
messages are in its record in the database, so only what is sent shrinks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from adapters.claude_mind.compaction import (
    SUMMARY_HEAD,
    history_chars,
    newest_lines,
    short,
)
from adapters.openai_mind.history import ERROR

SUMMARY_END = "\n\n(That is all you remember from before.)\n\n"
"""Closes the summary, so the perception after it is found again when folding later."""

__all__ = ["SUMMARY_END", "SUMMARY_HEAD", "compact", "history_chars", "summary_lines"]


def compact(
    history: list[dict[str, Any]], summary: str, *, keep_chars: int, summary_chars: int,
) -> tuple[list[dict[str, Any]], str, int]:
    """Fold the oldest turns into the summary until at most about `keep_chars` of the
    newest whole turns remain. Gives (new history, new summary, messages folded)."""
    sizes = [len(json.dumps(m, ensure_ascii=False)) for m in history]
    cut, kept = 0, sum(sizes)
    for start in (i for i, m in enumerate(history) if i > 0 and m["role"] == "user"):
        if kept <= keep_chars:
            break
        cut, kept = start, sum(sizes[start:])
    if cut == 0:
        return history, summary, 0
    lines = summary.splitlines() if summary else []
    lines += summary_lines(history[:cut])
    new_summary = newest_lines(lines, summary_chars)
    rest = [dict(m) for m in history[cut:]]
    rest[0] = {"role": "user", "content": (SUMMARY_HEAD + new_summary + SUMMARY_END
                                           + without_summary(rest[0]["content"]))}
    return rest, new_summary, cut


def summary_lines(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """A line for each moment, thing said, thing tried and outcome, in order."""
    lines: list[str] = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            first = without_summary(str(m.get("content") or "")).split("\n", 1)[0]
            lines.append(f"* {short(first)}")
        elif role == "assistant":
            said = " ".join(str(m.get("content") or "").split())
            if said:
                lines.append(f"  you thought: {short(said)}")
            for call in m.get("tool_calls") or ():
                function = call.get("function", {})
                lines.append(f"  you tried {function.get('name')} "
                             f"{short(str(function.get('arguments', '')), 80)}")
        elif role == "tool":
            heard = " ".join(str(m.get("content") or "").split())
            failed = heard.startswith(ERROR)
            heard = heard.removeprefix(ERROR)
            lines.append(f"  -> {short(heard)}{' (it failed)' if failed else ''}")
    return lines


def without_summary(text: str) -> str:
    """A user message's own text, without a summary that opens it."""
    if text.startswith(SUMMARY_HEAD) and SUMMARY_END in text:
        return text.split(SUMMARY_END, 1)[1]
    return text
