"""examine and sense_others: what an agent learns by looking; looking changes nothing.
"""

from __future__ import annotations

from core.actions import ActionResult, ExamineAction, SenseOthersAction
from core.agent import Agent
from core.objects import PlacedItem, Sign
from core.types import CARDINALS, Direction
from services.action_families.base import ActionFamily


class PerceptionActions(ActionFamily):
    def _examine(self, agent: Agent, action: ExamineAction, tick: int) -> ActionResult:
        pos = self._aimed_cell(agent, action.direction)
        world = self.world
        terrain = world.terrain_at(pos)
        parts = [f"{terrain.value}"]
        resource = world.gatherable_at(pos)
        if resource:
            left = self.gathering.available(pos, tick)
            parts.append(
                f"{resource} can be gathered here ({left} left)" if left
                else f"the {resource} here is spent for now; it grows back with time"
            )
        things = []
        for obj in world.objects_at(pos):
            if isinstance(obj, Sign):
                things.append("a sign")
            elif isinstance(obj, PlacedItem):
                things.append(
                    f"{obj.quantity} {obj.label}" if obj.resource else f"a {obj.label}"
                )
        marks = world.landmarks_at(pos)
        places = world.places_at(pos)
        walls = [d.value for d in CARDINALS if world.has_wall(pos, d)]
        doors = [d.value for d in CARDINALS if world.has_door(pos, d)]
        structure = world.structure_at(pos)
        people = [a.name for a in self.agents.agents_at(pos) if a.name != agent.name]
        text = f"{'here' if pos == agent.position else action.direction.value}: " + "; ".join(
            parts
        )
        if things:
            text += "; lying here: " + ", ".join(things)
        for mark in marks:
            text += f"; {mark.name}: {mark.description.strip()}"
        if places:
            text += "; this place is called " + ", ".join(p.name for p in places)
        if walls:
            text += "; walls on the " + ", ".join(walls) + " side"
            if doors:
                text += " (a door on the " + ", ".join(doors) + ")"
        if structure:
            text += "; inside a shelter" + (f" called {structure.name}" if structure.name else "")
        if people:
            text += "; " + ", ".join(people) + " " + ("is" if len(people) == 1 else "are") + " here"
        return ActionResult.ok(text, (), {
            "position": [pos.x, pos.y], "terrain": terrain.value, "resource": resource,
            "objects": things, "landmarks": [m.name for m in marks], "walls": walls,
            "doors": doors, "agents": people,
        })

    def _sense_others(self, agent: Agent, action: SenseOthersAction, tick: int) -> ActionResult:
        sensed = self.agents.sense_others(agent.name)
        if not sensed:
            return ActionResult.ok(
                "you sense no one you know; you can only sense those you have met", (),
                {"sensed": []},
            )
        lines = [
            f"{s.name}: {s.distance_category}"
            + ("" if s.direction is Direction.DOWN else f", to the {s.direction.value}")
            for s in sensed
        ]
        return ActionResult.ok("you sense " + "; ".join(lines), (), {
            "sensed": [
                {"name": s.name, "direction": s.direction.value, "distance": s.distance_category}
                for s in sensed
            ]
        })
