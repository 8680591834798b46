"""The world's actions as tools: one per action in core.actions, in ACTION_TYPES order.

Their prose and input schemas come from services/tool_specs.py (derived from the action
dataclasses), their parsing from services/tool_input.py, and a call runs through the
action engine (services/action_engine.py), which checks what every action shares. The
narrator frames every result.
"""

from __future__ import annotations

from functools import partial

from adapters.tools.registry import Tool, ToolUse
from core.actions import ACTION_TYPES, Action, ActionResult
from services.tool_input import parse_action
from services.tool_specs import LOOKING, TOOL_DESCRIPTIONS, input_schema


def _act(use: ToolUse, agent: str, tick: int, action: Action) -> ActionResult:
    return use.act(agent, action, tick)


def world_action_tools() -> tuple[Tool, ...]:
    """A Tool for every world action."""
    return tuple(
        Tool(name, TOOL_DESCRIPTIONS[name], input_schema(cls), partial(parse_action, name), _act,
             informs=name in LOOKING)
        for name, cls in ACTION_TYPES.items()
    )
