"""sleep: an agent's own state.
"""

from __future__ import annotations

from core.actions import ActionResult, SleepAction
from core.agent import Agent
from core.events import AgentSleptEvent
from services.action_families.base import ActionFamily


class StateActions(ActionFamily):
    def _sleep(self, agent: Agent, action: SleepAction, tick: int) -> ActionResult:
        self.agents.set_sleeping(agent.name, True)
        return ActionResult.ok(
            "you lie down and sleep; you will wake in the morning",
            [AgentSleptEvent(tick, agent.name)],
        )
