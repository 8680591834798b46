"""Keeping what is sent bounded however long an agent lives: older turns become a summary.

    history, summary = compact(history, summary, keep_chars=30_000, summary_chars=8_000)

When an agent's history grows past a limit, the oldest whole turns leave the
context and are folded into a summary that opens the first message that stays.
Nothing is lost: every turn's messages are in its record in the database, and only
what the model is sent shrinks. The summary is made here, without a model, so
compaction works offline and costs nothing: an entry per in-world day (where the
agent went, what it made, built and wrote, whom it met, what was said to it and
what it said; `day_summary.py`), older days shortened first once the summary
reaches its own limit, and the oldest left out whole last.

Compaction changes the start of the prompt, so the prompt cache starts afresh once
each time it runs; it runs rarely (the history must grow by the difference between
the two limits first), so the cache is read back on almost every request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from adapters.claude_mind.day_summary import (
    SUMMARY_MARK,
    fit,
    merge,
    newest_lines,
    parse,
    read_days,
)

SUMMARY_HEAD = ("What you remember from before (a summary of your earlier turns, day by "
                "day; everything you did is still on record, and recall searches it):\n")
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
    rest = [dict(m) for m in history[cut:]]
    first = rest[0]
    # A turn may open with the results of the last one's calls (Levers.results_next_turn):
    # they answer calls that are folded, so they are folded with them.
    answers = [b for b in first["content"] if b.get("type") == "tool_result"]
    folding = [*history[:cut], {"role": "user", "content": answers}] if answers \
        else history[:cut]
    new_summary = fold_into(summary, folding, summary_chars)
    blocks = [b for b in first["content"]
              if not _is_summary(b) and b.get("type") != "tool_result"]
    rest[0] = {"role": first["role"],
               "content": [{"type": "text", "text": SUMMARY_HEAD + new_summary}, *blocks]}
    return rest, new_summary, cut


def fold_all(
    history: list[dict[str, Any]], summary: str, *, summary_chars: int,
) -> tuple[list[dict[str, Any]], str, int]:
    """Fold every message into the summary, which then stands alone as a user message
    (the next perception joins it). For a tool loop left open when the start had to
    change: its thinking is bound to that start, and cannot go back without it."""
    new_summary = fold_into(summary, history, summary_chars)
    opening = {"role": "user", "content": [{"type": "text", "text": SUMMARY_HEAD + new_summary}]}
    return [opening], new_summary, len(history)


def fold_into(summary: str, messages: Sequence[Mapping[str, Any]], most: int) -> str:
    """The summary with `messages` added to its days, within `most` characters."""
    before, days = parse(summary)
    last = next((d.day for d in reversed(days) if d.day is not None), None)
    return fit(before, merge(days, read_days(messages, last)), most)


def summary_lines(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """The day entries the messages alone would give, as lines."""
    return "\n".join(d.render() for d in read_days(messages)).splitlines()


def _turn_starts(history: Sequence[Mapping[str, Any]]) -> list[int]:
    """Where whole turns begin (index > 0): user messages that say something new, not
    only answer tool calls (a turn's perception may follow the last turn's results)."""
    return [i for i, m in enumerate(history) if i > 0 and m["role"] == "user"
            and any(b.get("type") != "tool_result" for b in m["content"])]


assert SUMMARY_HEAD.startswith(SUMMARY_MARK)
__all__ = ["SUMMARY_HEAD", "compact", "fold_all", "history_chars", "newest_lines", "short",
           "summary_lines"]


def _is_summary(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).startswith(SUMMARY_HEAD)


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    return str(content)


def short(text: str, most: int = LINE_CHARS) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


