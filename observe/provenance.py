"""Provenance: one stored turn read back, to show where a line of the feed came from.

A turn's row (storage/history.StoredTurn) holds what the engine did (each action's
tool, arguments, success and narration, and an error if the turn ended early), the
mind's own record, which differs per kind of mind, and what a model narrator spent:

- offline: {"mind": "offline", "focus", "calls", "ended"}: no perception, reply,
  thinking, tokens or cost (it is a script, and costs nothing);
- claude: {"mind": "claude", "model", "stop", "requests": [{"usage", "usd", ...}],
  "messages": [...]} in the Messages API's shape (content blocks: text, thinking,
  tool_use, tool_result); the first user message is the perception;
- local: {"mind": "local", ...} the same keys, messages in the chat-completions shape
  (content strings, tool_calls); usage in prompt/completion tokens, and no cost;
- seat: {"mind": "seat", "ended", "shown"}: an outside agent's turn over MCP; the
  calls are the actions, and nothing was spent.

Everything here is plain data, read from JSON that agents' words are part of: the
screen that shows it must treat every string as literal text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.privacy import shown_action
from storage.history import NARRATED_EVENTS, StoredTurn

_HIDDEN = ("tick", "agent", "category")
"""Event fields every event has, left out of the world change's words."""


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call the engine ran, and its outcome as narrated."""

    tool: str
    args: str
    """The call's input, as compact JSON."""
    ok: bool
    narration: str


@dataclass(frozen=True, slots=True)
class Provenance:
    """What one agent's turn at one tick was made of, as far as its record tells."""

    tick: int
    agent: str
    mind: str
    ended: str
    model: str | None = None
    perception: str | None = None
    thinking: tuple[str, ...] = ()
    replies: tuple[str, ...] = ()
    actions: tuple[Action, ...] = ()
    error: str | None = None
    changes: tuple[str, ...] = ()
    """The events of the turn's tick under the agent's name, one line each."""
    tokens: Mapping[str, int] | None = None
    """Summed over the turn's requests (None: the mind records no usage)."""
    cost: float | None = None
    """US dollars (None: no cost recorded)."""
    narrator_tokens: Mapping[str, int] | None = None
    narrator_cost: float | None = None
    notes: tuple[str, ...] = ()
    """Plain words for what this kind of mind does not record, or what is odd."""

    @classmethod
    def of(cls, turn: StoredTurn) -> Provenance:
        try:
            record = json.loads(turn.record)
        except ValueError:
            record = {}
        if not isinstance(record, dict):
            record = {}
        mind = record.get("mind") if isinstance(record.get("mind"), dict) else {}
        narration = record.get("narration") if isinstance(record.get("narration"), dict) else {}
        base: dict[str, Any] = {
            "tick": turn.tick, "agent": turn.agent, "mind": turn.mind, "ended": turn.ended,
            "actions": tuple(_actions(record.get("actions"))),
            "error": str(record["error"]) if record.get("error") else None,
            "changes": tuple(_change(kind, data) for kind, data in turn.events),
        }
        if narration:
            base["narrator_tokens"], base["narrator_cost"] = _spend(narration.get("requests"))
        if "messages" in mind:
            return cls(**base, **_conversation(mind, turn.mind))
        if turn.mind == "offline" or mind.get("mind") == "offline":
            focus = mind.get("focus")
            return cls(**base, notes=(
                "The offline mind is a script: it records no perception, no thinking, no "
                "reply text, and no tokens or cost (it spends nothing).",
                f"Its focus this turn: {focus}." if focus else "It recorded no focus.",
            ))
        if turn.mind == "seat" or mind.get("mind") == "seat":
            how = _SEAT_ENDS.get(str(mind.get("ended", "")), "The turn ended.")
            return cls(**base, notes=(
                "An outside agent took this turn in its seat, over MCP: its calls are shown; "
                "what it thought is its own, and it cost this world nothing.", how))
        return cls(**base, notes=(
            f"A {turn.mind} mind's record holds no perception, reply, thinking or usage "
            "that this screen can read.",))


_SEAT_ENDS = {
    "end_turn": "Its client ended the turn.",
    "time": "No further call came within the seat's turn_seconds: the turn passed.",
    "empty": "Nobody held the seat: the turn passed.",
    "stopping": "The run was stopping: the turn ended.",
    "engine": "The turn ended at the action limit.",
}


def _actions(raw: object) -> list[Action]:
    found = []
    for action in raw if isinstance(raw, list) else ():
        if isinstance(action, dict):
            tool, args = str(action.get("tool", "")), action.get("args")
            args, text = shown_action(tool, args if isinstance(args, dict) else {},
                                      str(action.get("text", "")))  # core/privacy.py
            found.append(Action(tool, _compact(args), bool(action.get("ok")), text))
    return found


def _conversation(mind: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """Perception, thinking, replies, tokens and cost from a model mind's record."""
    messages = [m for m in mind.get("messages") or () if isinstance(m, dict)]
    perception = None
    if messages and messages[0].get("role") == "user":
        perception = "\n\n".join(_texts(messages[0].get("content"))) or None
    thinking: list[str] = []
    replies: list[str] = []
    hidden = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        replies += _texts(content)
        for key in ("reasoning_content", "reasoning"):  # local servers that return it
            if isinstance(message.get(key), str) and message[key].strip():
                thinking.append(message[key])
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "thinking":
                if str(block.get("thinking") or "").strip():
                    thinking.append(str(block["thinking"]))
                else:
                    hidden += 1
            elif block.get("type") == "redacted_thinking":
                hidden += 1
    tokens, cost = _spend(mind.get("requests"))
    notes = []
    if perception is None:
        notes.append("The record does not begin with the perception (its start was folded "
                     "away or the turn began otherwise).")
    if hidden:
        notes.append(f"{hidden} thinking block(s) were kept without their words (the API "
                     "returns thinking summarised or withheld).")
    elif not thinking:
        notes.append("No thinking was recorded this turn.")
    if not replies:
        notes.append("The model wrote no reply text this turn.")
    if cost is None:
        notes.append("A local model records no cost." if kind == "local"
                     else "No cost was recorded for this turn (no price meter).")
    if mind.get("folded"):
        notes.append("Earlier messages were folded into a summary during this turn.")
    return {"model": str(mind["model"]) if mind.get("model") else None,
            "perception": perception, "thinking": tuple(thinking), "replies": tuple(replies),
            "tokens": tokens, "cost": cost, "notes": tuple(notes)}


def _texts(content: object) -> list[str]:
    """The text of a message: a string (chat completions) or its text blocks (Messages)."""
    if isinstance(content, str):
        return [content] if content.strip() else []
    return [str(b["text"]) for b in content if isinstance(b, dict) and b.get("type") == "text"
            and str(b.get("text") or "").strip()] if isinstance(content, list) else []


def _spend(requests: object) -> tuple[dict[str, int] | None, float | None]:
    """Summed usage and dollars of a list of request summaries (None where none said)."""
    tokens: dict[str, int] = {}
    cost = None
    for request in requests if isinstance(requests, Sequence) else ():
        if not isinstance(request, dict):
            continue
        usage = request.get("usage")
        for key, value in (usage.items() if isinstance(usage, dict) else ()):
            if isinstance(value, int) and not isinstance(value, bool):
                tokens[str(key)] = tokens.get(str(key), 0) + value
        if isinstance(request.get("usd"), int | float):
            cost = (cost or 0.0) + float(request["usd"])
    return (tokens or None), cost


def _change(kind: str, data: str) -> str:
    try:
        fields = json.loads(data)
    except ValueError:
        return kind
    if not isinstance(fields, dict):
        return kind
    shown = {k: v for k, v in fields.items() if k not in _HIDDEN}
    return f"{kind} {_compact(shown)}" if shown else kind


def _compact(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def turns_in(lines: Sequence[Any]) -> list[tuple[int, str]]:
    """The distinct (tick, agent) turns behind feed lines, in order: lines with an agent
    whose kind is an action or an error (happenings such as waking have no turn)."""
    seen: dict[tuple[int, str], None] = {}
    for line in lines:
        if line.agent is not None and line.kind not in NARRATED_EVENTS:
            seen.setdefault((line.tick, line.agent), None)
    return list(seen)


def chosen_turn(lines: Sequence[Any], row: int | None,
                selected: str | None) -> tuple[list[tuple[int, str]], int, str | None]:
    """The feed's turns (`turns_in`), the one to open first, and a word when that is not
    exactly the line asked for.

    With a chosen line (`row`, its place in `lines`): its turn; a happening has none, so
    the nearest turn before it (else after it). With none: the newest turn of the
    `selected` agent, else the newest turn of all."""
    turns = turns_in(lines)
    if not turns:
        return turns, 0, None
    if row is None or not 0 <= row < len(lines):
        mine = [i for i, (_, agent) in enumerate(turns) if agent == selected]
        return turns, (mine[-1] if mine else len(turns) - 1), None
    where = {turn: i for i, turn in enumerate(turns)}
    line = lines[row]
    own = where.get((line.tick, line.agent)) if line.agent is not None else None
    if own is not None and line.kind not in NARRATED_EVENTS:
        return turns, own, None
    near = [*range(row - 1, -1, -1), *range(row + 1, len(lines))]
    for other in near:
        found = lines[other]
        turn = where.get((found.tick, found.agent)) if found.agent is not None else None
        if turn is not None and found.kind not in NARRATED_EVENTS:
            return turns, turn, (f"The chosen line ({line.kind} at tick {line.tick}) is a "
                                 "happening, not a turn: showing the nearest turn.")
    return turns, len(turns) - 1, None
