"""The `recall` tool: an agent searches its own past (services/recall.py, core/recall.py).

Like the file tools it never touches the world and its result goes back to the mind
as it is, without narration. It reads only what is committed, so a turn never finds
itself half-remembered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.tools.registry import Narration, Tool, ToolUse
from core.actions import ActionResult
from core.recall import rank
from services.recall import memories_of
from services.tool_input import ToolInputError

MAX_QUESTION = 300
MAX_RESULTS = 10


def _parse(arguments: Any) -> tuple[str, int]:
    """(query, limit) of a call; bad input says what is wrong."""
    if not isinstance(arguments, Mapping):
        raise ToolInputError("recall needs its arguments as an object with a query")
    query = arguments.get("query", "")
    limit = arguments.get("limit", 5)
    if not isinstance(query, str):
        raise ToolInputError("recall's query must be text")
    if len(query) > MAX_QUESTION:
        raise ToolInputError(f"recall's query is too long (at most {MAX_QUESTION} characters)")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        raise ToolInputError(f"recall's limit must be a whole number from 1 to {MAX_RESULTS}")
    return query, limit


async def _recall(use: ToolUse, agent: str, tick: int, asked: tuple[str, int]) -> ActionResult:
    """The agent's best-matching memories, each with the hour it was made."""
    query, limit = asked
    found = rank(await memories_of(use.storage, agent), query, tick, limit=limit)
    if not found:
        return ActionResult.ok(
            "Nothing comes back to you about that." if query.strip()
            else "You have no memories yet.")
    lines = ["You remember (best match first):"]
    lines += [f"- [{use.time_of_day(m.tick)}] {m.text}" for _, m in found]
    return ActionResult.ok("\n".join(lines))


RECALL_TOOL = Tool(
    "recall",
    "Search your own memories: what you did and what came of it, what you saw, and what "
    "was said in conversations you were part of. The best matches come first, weighing "
    "how well they match your words, how recent they are and how much they mattered. "
    "An empty query gives your most recent important memories.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for, like "
                      "'stone near the spring' or 'what Sage told me'."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": 5,
                      "description": f"How many memories to bring back (1-{MAX_RESULTS})."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    _parse,
    _recall,
    Narration.AS_IS,
    informs=True,
)
