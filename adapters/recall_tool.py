"""The `recall` tool: an agent searches its own past (services/recall.py, core/recall.py).

Like the file tools it never touches the world and its result goes back to the mind
as it is, without narration. It reads only what is committed, so a turn never finds
itself half-remembered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.actions import ActionResult
from core.recall import rank
from services.mind import ToolSpec
from services.recall import memories_of
from storage import Storage

MAX_QUESTION = 300
MAX_RESULTS = 10

RECALL_SPEC = ToolSpec(
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
)
RECALL_TOOLS = frozenset({RECALL_SPEC.name})


async def run_recall(
    storage: Storage, agent: str, now: int, arguments: Any, when: Callable[[int], str],
) -> ActionResult:
    """Answer one recall call; bad arguments are a failed result, never an exception."""
    if not isinstance(arguments, Mapping):
        return ActionResult.fail("recall needs its arguments as an object with a query")
    query = arguments.get("query", "")
    limit = arguments.get("limit", 5)
    if not isinstance(query, str):
        return ActionResult.fail("recall's query must be text")
    if len(query) > MAX_QUESTION:
        return ActionResult.fail(f"recall's query is too long (at most {MAX_QUESTION} "
                                 "characters)")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        return ActionResult.fail(f"recall's limit must be a whole number from 1 to "
                                 f"{MAX_RESULTS}")
    found = rank(await memories_of(storage, agent), query, now, limit=limit)
    if not found:
        return ActionResult.ok(
            "Nothing comes back to you about that." if query.strip()
            else "You have no memories yet.")
    lines = ["You remember (best match first):"]
    lines += [f"- [{when(m.tick)}] {m.text}" for _, m in found]
    return ActionResult.ok("\n".join(lines))
