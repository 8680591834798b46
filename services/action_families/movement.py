"""walk, approach and journey: an agent moving through the world, a step, a line of
steps or a journey planned with A*.
"""

from __future__ import annotations

from core.actions import ActionResult, ApproachAction, JourneyAction, WalkAction
from core.agent import Agent
from core.events import AgentMovedEvent, JourneyStartedEvent
from core.failures import FailureReason
from core.types import CARDINALS, AgentName, Direction, Position
from services.action_families.base import ActionFamily, R
from services.agent_service import direction_towards

_DELTAS = {d: d.delta for d in Direction}
"""Direction -> (dx, dy), without the property call."""


class MovementActions(ActionFamily):
    def _walk(self, agent: Agent, action: WalkAction, tick: int) -> ActionResult:
        direction = action.direction
        agents = self.agents
        start = agent.position
        steps = action.steps
        open_steps = self.world.open_steps(start, direction, steps)
        if not open_steps:
            reason = agents.step_blocker(start, direction)  # the words for why not
            return ActionResult.fail(
                f"you cannot walk {direction.value}: {reason}",
                reason=self._step_reason(start, direction),
            )
        name = agent.name
        here_pos = start.step(direction)
        events = [AgentMovedEvent(tick, name, start, here_pos)]
        stopped = None
        if steps > 1:
            here_pos, stopped = self._walk_on(start, here_pos, name, direction, steps,
                                              open_steps, tick, events)
        agents.walked_to(agent, here_pos)
        here = self.world.terrain_name_at(here_pos)
        count = len(events)
        word = direction._value_  # not .value, an enum property: a Python call
        if count == 1 and steps == 1:
            text = f"you walk {word} onto {here}"
        else:
            text = f"you walk {count} step{'s' if count != 1 else ''} {word} onto {here}"
            if stopped:
                text += f", and stop: {stopped}"
        return ActionResult.ok(
            text, events,
            {"position": [here_pos.x, here_pos.y], "terrain": here,
             "steps": count, "from": [start.x, start.y], "stopped": stopped},
        )

    def _walk_on(
        self, start: Position, here: Position, name: AgentName, direction: Direction,
        steps: int, open_steps: int, tick: int, events: list,
    ) -> tuple[Position, str | None]:
        """The steps of a walk after its first, from `here`: (where the walker ends, why it
        stopped early or None). `events` gets one AgentMovedEvent per step. The world
        allows the first `open_steps` steps from `start` (`WorldService.open_steps`).

        The walk stops on a cell from which someone is in view who was not in view
        from where it started, or when the next step is blocked. Nobody else moves
        while a walk runs, so everyone who could come into view along it is found with
        one look before the second step: views are checked from the cells after steps
        1 .. steps - 1, which all share the start's columns (or rows), so a newcomer
        stands in the strip of `steps - 1` rows (columns) just beyond the start's own
        view, ahead. Each step then only checks that short list (almost always empty)
        instead of asking who is near. What blocks a step is the world (terrain, edge,
        walls), never another agent, so which steps are open is known before setting
        off, and the walker is stored once, where it ends.
        """
        agents = self.agents
        radius = self.world.vision_radius()
        dx, dy = _DELTAS[direction]
        sx, sy = start.x, start.y
        near, far = radius + 1, radius + steps - 1
        if dx:
            x0, x1 = (sx + near, sx + far) if dx > 0 else (sx - far, sx - near)
            y0, y1 = sy - radius, sy + radius
        else:
            x0, x1 = sx - radius, sx + radius
            y0, y1 = (sy + near, sy + far) if dy > 0 else (sy - far, sy - near)
        ahead = agents.agents_in_box(x0, y0, x1, y1) if radius >= 0 else ()
        unseen = sorted(  # by name: the first in view is the one to name
            (a.name, a.position.x, a.position.y) for a in ahead if a.name != name
        ) if ahead else ()
        for taken in range(1, steps):
            hx, hy = here.x, here.y
            for other, ox, oy in unseen:
                if abs(ox - hx) <= radius and abs(oy - hy) <= radius:
                    return here, f"{other} came into view"
            if taken == open_steps:
                return here, agents.step_blocker(here, direction)  # why the next is not
            after = Position(hx + dx, hy + dy)
            events.append(AgentMovedEvent(tick, name, here, after))
            here = after
        return here, None

    def _step_reason(self, pos: Position, direction: Direction) -> FailureReason:
        """Which of step_blocker's rules refused a step (a failure changed nothing, so
        asking the world again gives the same answer)."""
        if direction is Direction.DOWN:
            return R.BAD_INPUT
        target = pos.step(direction)
        if not self.world.in_bounds(target):
            return R.WORLD_EDGE
        if not self.world.is_passable(target):
            return R.BLOCKED
        return R.WALL_IN_WAY

    def _approach(self, agent: Agent, action: ApproachAction, tick: int) -> ActionResult:
        found = self._find_visible(agent, action.target)
        target, is_agent = found if found else (None, False)
        if target is None:
            return ActionResult.fail(
                f"you see no {action.target!r} nearby; approach works on someone or something "
                "you can see (an agent's name, a sign, a landmark, a kind of terrain)",
                reason=R.NOT_VISIBLE,
            )
        if target == agent.position or (is_agent and target.manhattan(agent.position) == 1):
            return ActionResult.fail(f"{action.target} is already right beside you",
                                     reason=R.ALREADY_THERE)
        # Someone is approached until beside them; a thing or a kind of ground until
        # standing on it (or beside it, when it cannot be stood on).
        path = self.agents.plan_path(agent.position, target)
        if path is None:
            # Aim for a free cell beside the target (it may be water or occupied).
            for d in CARDINALS:
                near = target.step(d)
                if self.world.is_passable(near):
                    path = self.agents.plan_path(agent.position, near)
                    if path:
                        break
        if not path:
            return ActionResult.fail(f"there is no way to reach {action.target} from here",
                                     reason=R.NO_PATH)
        step = path[0]
        direction = direction_towards(agent.position, step)
        moved = self.agents.move_agent(agent.name, direction)
        # Steps still needed: onto a thing's cell, or to beside an agent.
        left = max(0, len(path) - 1 - (1 if is_agent and path[-1] == target else 0))
        return ActionResult.ok(
            f"you step {direction.value} toward {action.target}"
            + (f"; {left} more steps" if left else ""),
            [AgentMovedEvent(tick, agent.name, agent.position, moved.position)],
            {"position": [moved.position.x, moved.position.y], "remaining": left},
        )

    def _find_visible(self, agent: Agent, target: str) -> tuple[Position, bool] | None:
        """The nearest visible thing matching a name (agent, landmark, place, sign,
        terrain), and whether it is an agent."""
        key = target.strip().casefold()
        other = self.agents.get_agent(target.strip())
        if other is not None and other.name != agent.name and self.world.visible(
            agent.position, other.position
        ):
            return other.position, True
        radius = self.world.vision_radius()
        best: tuple[int, Position] | None = None
        for pos in self.world.cells_around(agent.position, radius):
            names = [m.name.casefold() for m in self.world.landmarks_at(pos)]
            names += [p.name.casefold() for p in self.world.places_at(pos)]
            names += [o.object_type for o in self.world.objects_at(pos)]
            names.append(self.world.terrain_at(pos).value)
            for found in self.agents.agents_at(pos):
                if found.name != agent.name:
                    names.append(found.name.casefold())
            if key in names or key.removeprefix("the ") in {
                n.removeprefix("the ") for n in names
            }:
                d = pos.manhattan(agent.position)
                if d and (best is None or d < best[0]):
                    best = (d, pos)
        return None if best is None else (best[1], False)

    def _journey(self, agent: Agent, action: JourneyAction, tick: int) -> ActionResult:
        destination = action.destination
        label = None
        if action.place_name is not None:
            place = self.world.place_named(action.place_name)
            mark = None if place else self.world.landmark_named(action.place_name)
            if place is None and mark is None:
                known = [p.name for p in self.world.all_places()][:5]
                hint = f" Named places include: {', '.join(known)}." if known else ""
                return ActionResult.fail(f"no place is called {action.place_name!r}.{hint}",
                                         reason=R.NO_SUCH_PLACE)
            destination = place.position if place else mark.position  # type: ignore[union-attr]
            label = place.name if place else mark.name  # type: ignore[union-attr]
        assert destination is not None
        journey = self.agents.start_journey(agent.name, destination)
        where = label or f"({destination.x}, {destination.y})"
        return ActionResult.ok(
            f"you set out for {where}: {journey.remaining} steps; you will walk one step each "
            "tick, and stop if you meet someone",
            [JourneyStartedEvent(tick, agent.name, destination, journey.remaining)],
            {"destination": [destination.x, destination.y], "steps": journey.remaining},
        )
