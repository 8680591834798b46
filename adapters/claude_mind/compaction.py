"""Keeping what is sent bounded however long an agent lives: older turns become a summary.

    history, summary = compact(history, summary, keep_chars=30_000, summary_chars=8_000)

When an agent's history grows past a limit, the oldest whole turns leave the
context and are folded into a summary that opens the first message that stays.
Nothing is lost: every turn's messages are in its record in the database, and only
what the model is sent shrinks. The summary is made here, without a model, so
compaction works offline and costs nothing: a line per moment (the time, what the
agent did and what came of it, what it said), oldest lines dropped first once the
summary reaches its own limit.

Compaction changes the start of the prompt, so the prompt cache starts afresh once
each time it runs; it runs rarely (the history must grow by the difference between
the two limits first), so the cache is read back on almost every request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

SUMMARY_HEAD = ("What you remember from before (a summary of your earlier turns; "
                "everything you did is still on record):\n")
"""Opens the summary block, and marks it so it is never summarised twice."""

LINE_CHARS = 160
"""The most of any one thing said or heard that goes into a summary line."""


def history_chars(history: Sequence[Mapping[str, Any]]) -> int:
    """Roughly how big the history is as sent (JSON characters)."""
    return len(json.dumps(history, ensure_ascii=False))


def compact(
    history: list[dict[str, Any]], summary: str, *, keep_chars: int, summary_chars: int,
) -> tuple[list[dict[str, Any]], str, int]:
    """Fold the oldest turns into the summary until at most about `keep_chars` of the
    newest whole turns remain. Gives (new history, new summary, messages folded)."""
    starts = _turn_starts(history)
    sizes = [len(json.dumps(m, ensure_ascii=False)) for m in history]
    cut, kept = 0, sum(sizes)
    for start in starts:
        if kept <= keep_chars:
            break
        cut = start
        kept = sum(sizes[start:])
    if cut == 0:
        return history, summary, 0
    lines = summary.splitlines() if summary else []
    lines += summary_lines(history[:cut])
    new_summary = newest_lines(lines, summary_chars)
    rest = [dict(m) for m in history[cut:]]
    first = rest[0]
    blocks = [b for b in first["content"] if not _is_summary(b)]
    rest[0] = {"role": first["role"],
               "content": [{"type": "text", "text": SUMMARY_HEAD + new_summary}, *blocks]}
    return rest, new_summary, cut


def fold_all(
    history: list[dict[str, Any]], summary: str, *, summary_chars: int,
) -> tuple[list[dict[str, Any]], str, int]:
    """Fold every message into the summary, which then stands alone as a user message
    (the next perception joins it). For a tool loop left open when the start had to
    change: its thinking is bound to that start, and cannot go back without it."""
    lines = summary.splitlines() if summary else []
    lines += summary_lines(history)
    new_summary = newest_lines(lines, summary_chars)
    opening = {"role": "user", "content": [{"type": "text", "text": SUMMARY_HEAD + new_summary}]}
    return [opening], new_summary, len(history)


def summary_lines(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """A line for each moment, thing done, outcome and thing said, in order."""
    lines: list[str] = []
    for message in messages:
        for block in message.get("content", ()):
            kind = block.get("type")
            if _is_summary(block):
                continue
            if kind == "text" and message.get("role") == "user":
                first = str(block.get("text", "")).split("\n", 1)[0]
                lines.append(f"* {short(first)}")
            elif kind == "text":
                said = " ".join(str(block.get("text", "")).split())
                if said:
                    lines.append(f"  you thought: {short(said)}")
            elif kind == "tool_use":
                args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
                lines.append(f"  you tried {block.get('name')} {short(args, 80)}")
            elif kind == "tool_result":
                heard = " ".join(str(_result_text(block)).split())
                mark = " (it failed)" if block.get("is_error") else ""
                lines.append(f"  -> {short(heard)}{mark}")
    return lines


def _turn_starts(history: Sequence[Mapping[str, Any]]) -> list[int]:
    """Where whole turns begin: user messages that answer no tool call (index > 0)."""
    return [i for i, m in enumerate(history) if i > 0 and m["role"] == "user"
            and not any(b.get("type") == "tool_result" for b in m["content"])]


def _is_summary(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).startswith(SUMMARY_HEAD)


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    return str(content)


def short(text: str, most: int = LINE_CHARS) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def newest_lines(lines: list[str], most: int) -> str:
    """The newest lines that fit in `most` characters (older ones dropped first)."""
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 1
        if size > most:
            break
        kept.append(line)
    return "\n".join(reversed(kept))
