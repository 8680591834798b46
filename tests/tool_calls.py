"""A model's tool call in a test, through the registry's one door (adapters/tools), as
the engine's `TurnTools.execute` runs it for a world action: looked up by name, its
arguments parsed (bad ones a failed result), then run by the action engine."""

from __future__ import annotations

from typing import Any

from adapters.tools import TOOLS
from core.actions import Action, ActionResult
from services.action_engine import ActionEngine


class _WorldOnly:
    """The part of the engine's ToolUse a world action needs: the action engine."""

    def __init__(self, actions: ActionEngine) -> None:
        self.actions = actions

    def act(self, agent: str, action: Action, tick: int) -> ActionResult:
        return self.actions.execute_now(agent, action, tick)


async def call_tool(actions: ActionEngine, agent: str, tool: Any, arguments: Any,
                    tick: int) -> ActionResult:
    found = TOOLS.tool(tool)
    if found is None:
        return TOOLS.unknown(tool)
    return await found.call(arguments, _WorldOnly(actions), agent, tick)  # type: ignore[arg-type]
