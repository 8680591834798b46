"""take, drop, give, place_item and gather: things move between the ground and hands,
and nothing appears or vanishes.
"""

from __future__ import annotations

from core.actions import (
    ActionResult,
    DropAction,
    GatherAction,
    GiveAction,
    PlaceItemAction,
    TakeAction,
)
from core.agent import Agent
from core.events import (
    ItemDroppedEvent,
    ItemGivenEvent,
    ItemPlacedEvent,
    ItemTakenEvent,
    ResourceGatheredEvent,
)
from core.objects import Item, PlacedItem
from core.types import Position
from services.action_families.base import ActionFamily, R, Refusal
from services.agent_service import direction_towards


class ThingActions(ActionFamily):
    def _take(self, agent: Agent, action: TakeAction, tick: int) -> ActionResult:
        pos = self._aimed_cell(agent, action.direction)
        if pos != agent.position and self.world.edge_blocked(agent.position, action.direction):
            return ActionResult.fail(
                f"a wall stands between you and the {action.direction.value}",
                reason=R.WALL_IN_WAY,
            )
        piles = [o for o in self.world.objects_at(pos) if isinstance(o, PlacedItem)]
        if action.item is not None:
            want = action.item.strip().casefold()
            piles = [o for o in piles if o.label.casefold() == want]
        if not piles:
            what = f"no {action.item}" if action.item else "nothing to take"
            where = "here" if pos == agent.position else f"to the {action.direction.value}"
            return ActionResult.fail(f"there is {what} {where}", reason=R.NOTHING_HERE)
        pile = piles[0]
        inventory = agent.inventory
        if pile.item is not None:
            inventory = inventory.add_item(pile.item)
            quantity = 1
        else:
            inventory = inventory.add_resource(pile.resource or "", pile.quantity)
            quantity = pile.quantity
        self.world.remove_object(pile.id)
        self.agents.set_inventory(agent.name, inventory)
        return ActionResult.ok(
            f"you pick up {quantity} {pile.label}",
            [ItemTakenEvent(tick, agent.name, pos, pile.label, quantity)],
            {"item": pile.label, "quantity": quantity},
        )

    def _remove_from_inventory(self, agent: Agent, item: str, quantity: int):
        """(new inventory, removed unique item or None) or AgentRuleError saying what is short."""
        inv = agent.inventory
        name = item.strip()
        if inv.has(name, quantity):
            return inv.remove_resource(name, quantity), None
        found = inv.find_item(name)
        if found is not None:
            if quantity != 1:
                raise Refusal(f"you have one {name} (it is one of a kind); quantity 1",
                              R.NOT_CARRYING)
            return inv.remove_item(found.id), found
        have = inv.count(name)
        if have:
            raise Refusal(f"you have only {have} {name}", R.NOT_CARRYING)
        carried = ", ".join(sorted(inv.stacks)) or "nothing"
        raise Refusal(f"you carry no {name!r} (you have: {carried})", R.NOT_CARRYING)

    def _drop(self, agent: Agent, action: DropAction, tick: int) -> ActionResult:
        inventory, unique = self._remove_from_inventory(agent, action.item, action.quantity)
        pos = agent.position
        pile = self._pile(agent, pos, tick, unique, action.item.strip(), action.quantity)
        self.agents.set_inventory(agent.name, inventory)
        self._put_pile(pile)
        return ActionResult.ok(
            f"you set down {action.quantity} {pile.label}",
            [ItemDroppedEvent(tick, agent.name, pos, pile.label, action.quantity)],
            {"item": pile.label, "quantity": action.quantity},
        )

    def _pile(
        self, agent: Agent, pos: Position, tick: int, unique: Item | None, name: str, qty: int
    ) -> PlacedItem:
        if unique is not None:
            return PlacedItem(self.new_id("obj"), pos, agent.name, tick, item=unique)
        for obj in self.world.objects_at(pos):
            if isinstance(obj, PlacedItem) and obj.resource == name:
                return PlacedItem(obj.id, pos, obj.created_by, obj.created_tick,
                                  resource=name, quantity=obj.quantity + qty)
        return PlacedItem(self.new_id("obj"), pos, agent.name, tick, resource=name, quantity=qty)

    def _put_pile(self, pile: PlacedItem) -> None:
        if self.world.get_object(pile.id) is not None:
            self.world.replace_object(pile)
        else:
            self.world.add_object(pile)

    def _place_item(self, agent: Agent, action: PlaceItemAction, tick: int) -> ActionResult:
        pos = self._aimed_cell(agent, action.direction)
        if pos != agent.position:
            if self.world.edge_blocked(agent.position, action.direction):
                return ActionResult.fail(f"a wall stands to the {action.direction.value}",
                                         reason=R.WALL_IN_WAY)
            if not self.world.is_passable(pos):
                return ActionResult.fail(
                    f"{self.world.terrain_at(pos).value} to the {action.direction.value} "
                    "cannot hold anything", reason=R.BLOCKED,
                )
        inventory, unique = self._remove_from_inventory(agent, action.item, 1)
        pile = self._pile(agent, pos, tick, unique, action.item.strip(), 1)
        self.agents.set_inventory(agent.name, inventory)
        self._put_pile(pile)
        return ActionResult.ok(
            f"you place the {pile.label} "
            + ("at your feet" if pos == agent.position else f"to the {action.direction.value}"),
            [ItemPlacedEvent(tick, agent.name, pos, pile.label)],
            {"item": pile.label},
        )

    def _give(self, agent: Agent, action: GiveAction, tick: int) -> ActionResult:
        other = self.agents.get_agent(str(action.recipient).strip())
        if other is None or other.name == agent.name:
            return ActionResult.fail(
                "you cannot give to yourself" if other is not None
                else f"nobody called {action.recipient!r} is here",
                reason=R.YOURSELF if other is not None else R.NO_SUCH_AGENT,
            )
        if agent.position.manhattan(other.position) > 1:
            return ActionResult.fail(
                f"{other.name} is too far away to hand anything to; stand next to them first",
                reason=R.TOO_FAR,
            )
        if other.position != agent.position and self.world.edge_blocked(
            agent.position, direction_towards(agent.position, other.position)
        ):
            return ActionResult.fail(f"a wall stands between you and {other.name}",
                                     reason=R.WALL_IN_WAY)
        inventory, unique = self._remove_from_inventory(agent, action.item, action.quantity)
        theirs = other.inventory
        theirs = (theirs.add_item(unique) if unique is not None
                  else theirs.add_resource(action.item.strip(), action.quantity))
        self.agents.set_inventory(agent.name, inventory)
        self.agents.set_inventory(other.name, theirs)
        label = unique.item_type if unique else action.item.strip()
        return ActionResult.ok(
            f"you give {action.quantity} {label} to {other.name}",
            [ItemGivenEvent(tick, agent.name, other.name, label, action.quantity)],
            {"recipient": other.name, "item": label, "quantity": action.quantity},
        )

    def _gather(self, agent: Agent, action: GatherAction, tick: int) -> ActionResult:
        pos = self._aimed_cell(agent, action.direction)
        here = agent.position
        if pos is not here and pos != here and self.world.edge_blocked(here, action.direction):
            return ActionResult.fail(f"a wall stands to the {action.direction.value}",
                                     reason=R.WALL_IN_WAY)
        resource = self.world.gatherable_at(pos)
        terrain = self.world.terrain_name_at(pos)
        if resource is None:
            return ActionResult.fail(
                f"there is nothing to gather from {terrain}; forests give wood, stone gives "
                "stone, sand gives clay, grass gives grass", reason=R.NOTHING_TO_GATHER,
            )
        got = self.gathering.take(pos, tick)
        if not got:
            return ActionResult.fail(
                f"the {resource} here is spent for now; it grows back with time, or try "
                "another cell", reason=R.DEPLETED,
            )
        self.agents.add_resource(agent.name, resource, got)
        return ActionResult.ok(
            f"you gather {got} {resource} from the {terrain}",
            [ResourceGatheredEvent(tick, agent.name, pos, resource, got)],
            {"resource": resource, "quantity": got,
             "left": self.gathering.available(pos, tick)},
        )
