"""What every family of actions may use: the services a handler reads and changes, the
engine's own refusal, and the cell an action points at.

A handler is a method `(self, agent, action, tick) -> ActionResult` of a family class
(services/action_families/movement.py, ...). It checks everything that could make the
action fail and only then changes the world, so a failed action changes nothing; a rule
broken deep in a helper raises `Refusal` (or a service's rule error), which the
ActionEngine turns into a failed result.
"""

from __future__ import annotations

from collections.abc import Callable

from config.settings import BuildingSettings
from core.agent import Agent
from core.failures import FailureReason
from core.types import Direction, Position
from services.agent_service import AgentRuleError, AgentService
from services.conversation_service import ConversationService
from services.crafting import CraftingService
from services.gathering import Gathering
from services.world_service import WorldService

R = FailureReason
"""Short for the many `reason=` arguments of the handlers."""

_DOWN = Direction.DOWN
"""Read once: an enum member read through its class is a descriptor call."""


class Refusal(AgentRuleError):
    """A rule error raised by the engine's own checks, which know why they refuse."""

    def __init__(self, message: str, reason: FailureReason) -> None:
        super().__init__(message)
        self.reason = reason


class ActionFamily:
    """The services every handler works with; `ActionEngine.__init__` sets them."""

    world: WorldService
    agents: AgentService
    crafting: CraftingService
    conversations: ConversationService
    gathering: Gathering
    building: BuildingSettings
    new_id: Callable[[str], str]
    """Fresh ids for objects, items and structures (an `IdSource`, reseeded each turn)."""

    def _target_cell(self, agent: Agent, direction: Direction) -> Position | None:
        """The cell an action points at (`down`: the agent's own), or None past the edge."""
        pos = agent.position if direction is _DOWN else agent.position.step(direction)
        return pos if self.world.in_bounds(pos) else None

    def _aimed_cell(self, agent: Agent, direction: Direction) -> Position:
        """The cell an action points at, or a refusal: the world ends that way."""
        pos = agent.position if direction is _DOWN else agent.position.step(direction)
        if self.world.in_bounds(pos):
            return pos
        raise Refusal(f"the world ends to the {direction.value}", R.WORLD_EDGE)
