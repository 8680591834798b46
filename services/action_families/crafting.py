"""combine, work and apply: making things through the CraftingService (services/crafting.py).
"""

from __future__ import annotations

from core.actions import ActionResult, ApplyAction, CombineAction, WorkAction
from core.agent import Agent
from core.events import ItemCraftedEvent
from core.failures import FailureReason
from services.action_families.base import ActionFamily, R


def _crafting_reason(message: str) -> FailureReason:
    """Why crafting refused: its message starts with the reason, then any hints."""
    if message.startswith("missing "):
        return R.NOT_CARRYING
    if message.startswith("nothing comes of"):
        return R.NO_RECIPE
    if message.startswith("could not make"):
        return R.UNEXPECTED
    return R.BAD_INPUT


class CraftingActions(ActionFamily):
    def _crafted(self, agent: Agent, tick: int, method: str, outcome, inventory) -> ActionResult:
        if not outcome.success:
            return ActionResult.fail(outcome.message, {"hints": list(outcome.hints)},
                                     reason=_crafting_reason(outcome.message))
        self.agents.set_inventory(agent.name, inventory)
        inputs = tuple(name for name, count in outcome.consumed_inputs for _ in range(count))
        text = f"you make {outcome.output_quantity} {outcome.output_type}"
        if outcome.discoveries:
            text += "; it gives you ideas: " + "; ".join(outcome.discoveries)
        return ActionResult.ok(
            text,
            [ItemCraftedEvent(tick, agent.name, method, inputs, outcome.output_type,
                              outcome.output_quantity)],
            {"output": outcome.output_type, "quantity": outcome.output_quantity,
             "discoveries": list(outcome.discoveries)},
        )

    def _combine(self, agent: Agent, action: CombineAction, tick: int) -> ActionResult:
        inventory, outcome = self.crafting.craft_into(
            agent.inventory, "combine", list(action.items), None,
            new_item_id=lambda: self.new_id("item"),
        )
        return self._crafted(agent, tick, "combine", outcome, inventory)

    def _work(self, agent: Agent, action: WorkAction, tick: int) -> ActionResult:
        inventory, outcome = self.crafting.craft_into(
            agent.inventory, "work", [action.item], action.technique,
            new_item_id=lambda: self.new_id("item"),
        )
        return self._crafted(agent, tick, "work", outcome, inventory)

    def _apply(self, agent: Agent, action: ApplyAction, tick: int) -> ActionResult:
        inventory, outcome = self.crafting.apply_into(
            agent.inventory, action.tool, action.target, new_item_id=lambda: self.new_id("item")
        )
        return self._crafted(agent, tick, "apply", outcome, inventory)
