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

from adapters.perception_text import (
    AGENT_MARKS,
    EDGE_SLOT,
    LANDMARK_MARKS,
    MORE_AGENTS,
    MORE_LANDMARKS,
    MORE_PLACES,
    PLACE_MARKS,
)
from core.terrain import OBJECT_EMOJI, SELF_EMOJI, TERRAIN_EMOJI, Terrain
from services.mind import ToolSpec

EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}
"""The cache_control value that marks a cache breakpoint."""

def _legend() -> str:
    ground = ", ".join(f"{TERRAIN_EMOJI[t]} {t.value}" for t in Terrain)
    return f"""\
How to read the map you are shown each turn:
- North is at the top, east to the right. Positions are (x, y): x grows to the east, \
y grows to the south. A line above the map says which columns (x) and rows (y) it shows.
- Each cell is one symbol. Ground: {ground}.
- {SELF_EMOJI} is you. Other agents are capital letters ({AGENT_MARKS[0]}, \
{AGENT_MARKS[1]}, ...; {MORE_AGENTS} once the letters run out), landmarks are digits \
({LANDMARK_MARKS[0]}, {LANDMARK_MARKS[1]}, ...; {MORE_LANDMARKS} after 9), places \
someone named are small letters ({PLACE_MARKS[0]}, {PLACE_MARKS[1]}, ...; {MORE_PLACES} \
after z), {OBJECT_EMOJI["sign"]} is a sign and {OBJECT_EMOJI["placed_item"]} something \
left on the ground. A cell shows only its first mark in that order; the key under the \
map names every marked thing with its offset from you ("2 north, 1 west"), its \
position and the ground under it.
- Walls run between cells: │ between two cells of a row, ─ and corners (┌ ┐ └ ┘ ├ ┤ \
┬ ┴ ┼) on a line of their own between two rows. A door is a dashed stretch of wall \
(╎ or ╌╌): you can pass through it. Lines between rows are shown only where a wall is.
- {EDGE_SLOT} is the edge of the world: nothing lies beyond it.
- Under the key: one line for each step north, east, south and west (the ground \
there and whether you can step there), the nearest ground of each kind you can see, \
and the landmarks farther off, each with its offset and position."""


MAP_LEGEND = _legend()
"""What every symbol of the map means: the same for every agent and every turn."""

WORLD_RULES = """\
You live in Hearth, a world of grass, woods, hills, water and stone laid out on a grid \
of cells. You act only through your tools; each tool call is one thing you do, and \
you hear back what came of it. Nothing else you write changes the world.

How the world works:
- Each turn you are told the time, the weather, where you are, what you can see \
around you and what you carry (the map is explained below).
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
{turn_ends}

""" + MAP_LEGEND

TURN_ENDS = "- A turn ends when you stop calling tools. You may end a turn without acting."
"""How a turn ends when every result is answered within it."""


def turn_ends_later(informing: Sequence[str]) -> str:
    """How a turn ends when results that ask for nothing wait for the next turn
    (Levers.results_next_turn), naming the tools whose results come back at once."""
    return ("- A turn ends when you stop calling tools. It may also end once all you did "
            "worked and asked to learn nothing (a step, a gathering, a sign written): then "
            "how it went opens your next turn. What you asked to learn ("
            + ", ".join(informing) + "), and anything that could not be done, always comes "
            "back at once, and you may go on. You may make several calls in one reply, "
            "and end a turn without acting.")


def system_prompt(name: str, personality: str, turn_ends: str = TURN_ENDS) -> str:
    """The agent's system prompt: who it is (its own words), then the world's rules (with
    how its turn ends) and the map's legend."""
    rules = WORLD_RULES.replace("{turn_ends}", turn_ends)
    return f"You are {name}.\n\n{personality.strip()}\n\n{rules}"


def cache_mark(ttl: str | None = None) -> dict[str, str]:
    """A breakpoint's cache_control: the 5-minute default, or `ttl` ("1h")."""
    return {**EPHEMERAL, "ttl": ttl} if ttl else dict(EPHEMERAL)


def system_blocks(name: str, personality: str, turn_ends: str = TURN_ENDS,
                  ttl: str | None = None) -> list[dict[str, Any]]:
    """The system prompt as one text block carrying a cache breakpoint.

    The breakpoint covers tools and system together (tools come first in the cached
    prefix), so one is enough for both."""
    return [{"type": "text", "text": system_prompt(name, personality, turn_ends),
             "cache_control": cache_mark(ttl)}]


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
