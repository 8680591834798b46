"""What a Claude mind sends besides the conversation: its tools and its system prompt.

Prompt caching reads a request's prefix (tools, then system, then messages) from
cache only while it is byte for byte what an earlier request sent. So both parts
are built once per agent and never change while the agent lives: tools in the
engine's order with their keys in a fixed order, the system prompt from the
agent's own words and the world's rules, nothing in either that varies by tick.
Everything that does vary (the time, what the agent sees) goes in the newest
user message instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.mind import ToolSpec

EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}
"""The cache_control value that marks a cache breakpoint."""

WORLD_RULES = """\
You live in Hearth, a world of grass, woods, hills, water and stone laid out on a grid \
of cells. You act only through your tools; each tool call is one thing you do, and \
you hear back what came of it. Nothing else you write changes the world.

How the world works:
- Each turn you are told the time, the weather, what you can see around you and \
what you carry. The map shows cells around you; @ is you.
- You can walk, set out on journeys to places you know, gather what the ground \
offers, work and combine what you carry into new things, build walls and doors, \
write signs for others to find, name places, and sleep.
- You can invite someone you can see to talk; they may accept or decline, and so \
may you. Anyone may leave a conversation at any time.
- You have a home folder of your own files (a journal, notes, discoveries). Nobody \
else reads your journal.
- Nothing here can hurt you. There is no hunger, no illness and no death, and no \
task is set for you. What you do with your days is yours to choose, and doing \
nothing at all is a fine choice too.
- A turn ends when you stop calling tools. You may end a turn without acting."""


def system_prompt(name: str, personality: str) -> str:
    """The agent's system prompt: who it is (its own words), then the world's rules."""
    return f"You are {name}.\n\n{personality.strip()}\n\n{WORLD_RULES}"


def system_blocks(name: str, personality: str) -> list[dict[str, Any]]:
    """The system prompt as one text block carrying a cache breakpoint.

    The breakpoint covers tools and system together (tools come first in the cached
    prefix), so one is enough for both."""
    return [{"type": "text", "text": system_prompt(name, personality),
             "cache_control": dict(EPHEMERAL)}]


def tool_params(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tools as the Messages API takes them, as plain JSON values in a fixed order."""
    return [{"name": spec.name, "description": spec.description,
             "input_schema": _plain(spec.input_schema)} for spec in specs]


def _plain(value: Any) -> Any:
    """A copy made of plain dicts and lists (schemas may hold read-only mappings)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
