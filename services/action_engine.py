"""ActionEngine: validate and execute every action an agent can take.

    result = await engine.execute(AgentName("Ember"), WalkAction(Direction.NORTH), tick=1)
    result = await engine.execute_tool(AgentName("Ember"), "walk", {"direction": "north"}, 1)

Each handler first checks everything that could make the action fail and only
then changes the world, so a failed action changes nothing. Failures are
ActionResults whose message says what went wrong and what would work; no
exception escapes `execute` (an unexpected one is logged and reported as a
failure). Results carry the domain events that happened; the world's ChangeSet
carries what the storage layer must write.

Everything runs in memory: walking, gathering and speaking take microseconds
(`python -m bench actions`).
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable
from typing import Any

from config.models import BuildingSettings
from core.actions import (
    AcceptInviteAction,
    Action,
    ActionResult,
    ApplyAction,
    ApproachAction,
    BuildShelterAction,
    CombineAction,
    DeclineInviteAction,
    DropAction,
    ExamineAction,
    GatherAction,
    GiveAction,
    InviteAction,
    JoinConversationAction,
    JourneyAction,
    LeaveConversationAction,
    NamePlaceAction,
    PlaceDoorAction,
    PlaceItemAction,
    PlaceWallAction,
    ReadSignAction,
    RemoveWallAction,
    SenseOthersAction,
    SleepAction,
    SpeakAction,
    TakeAction,
    WalkAction,
    WorkAction,
    WriteSignAction,
)
from core.agent import Agent, InventoryError
from core.constants import MAX_PLACE_NAME_LENGTH, MAX_SIGN_LENGTH
from core.events import (
    AgentMovedEvent,
    AgentSleptEvent,
    ConversationEndedEvent,
    ConversationJoinedEvent,
    ConversationLeftEvent,
    ConversationStartedEvent,
    ConversationTurnEvent,
    DoorPlacedEvent,
    InvitationAcceptedEvent,
    InvitationDeclinedEvent,
    InvitationSentEvent,
    ItemCraftedEvent,
    ItemDroppedEvent,
    ItemGivenEvent,
    ItemPlacedEvent,
    ItemTakenEvent,
    JourneyStartedEvent,
    PlaceNamedEvent,
    ResourceGatheredEvent,
    SignWrittenEvent,
    StructureDetectedEvent,
    StructureRemovedEvent,
    WallPlacedEvent,
    WallRemovedEvent,
)
from core.failures import FailureReason
from core.objects import Item, PlacedItem, Sign
from core.places import NamedPlace
from core.structures import Structure
from core.text import clean_text
from core.types import CARDINALS, AgentName, Direction, Position
from services.agent_service import AgentRuleError, AgentService, direction_towards
from services.conversation_service import ConversationError, ConversationService
from services.crafting import CraftingService
from services.enclosure import enclosed_regions, still_joined
from services.gathering import Gathering
from services.tool_input import ToolInputError, parse_action
from services.world_service import WorldRuleError, WorldService

log = logging.getLogger("hearth.actions")

MAX_STRUCTURE_AREA = 400
"""The largest interior a set of walls can enclose and still count as a structure."""

MAX_NAME_LENGTH = 100
"""No item, technique, agent or landmark name is longer; longer input is refused early,
so a huge argument is never echoed back."""

NAME_FIELDS = ("target", "item", "recipient", "technique", "tool", "invitee", "participant")

BUSY_WHILE_TRAVELLING = frozenset({
    "walk", "approach", "journey", "take", "drop", "give", "gather", "combine", "work",
    "apply", "build_shelter", "place_wall", "place_door", "place_item", "remove_wall",
    "write_sign", "name_place", "sleep",
})
"""Actions that need hands and feet: refused while a journey is under way."""

R = FailureReason
"""Short for the many `reason=` arguments below."""

_DELTAS = {d: d.delta for d in Direction}
"""Direction -> (dx, dy), without the property call."""

_DOWN = Direction.DOWN
"""Read once: an enum member read through its class is a descriptor call."""


class Refusal(AgentRuleError):
    """A rule error raised by the engine's own checks, which know why they refuse."""

    def __init__(self, message: str, reason: FailureReason) -> None:
        super().__init__(message)
        self.reason = reason


_RULE_PHRASES: dict[type[Exception], tuple[tuple[str, FailureReason], ...]] = {
    # The services raise plain rule errors; a phrase of the message says which rule.
    # First match wins, so a phrase that contains another comes before it.
    ConversationError: (
        ("nobody called", R.NO_SUCH_AGENT),
        ("no longer lives here", R.NO_SUCH_AGENT),
        ("yourself", R.YOURSELF),
        ("not within sight", R.NOT_VISIBLE),
        ("already invited", R.ALREADY_INVITED),
        ("pending invitation from", R.ALREADY_INVITED),
        ("no pending invitation", R.NO_INVITATION),
        ("has lapsed", R.NO_INVITATION),
        ("invited you to has ended", R.INVITATION_STALE),
        ("has left the conversation they invited", R.INVITATION_STALE),
        ("has since begun a", R.INVITATION_STALE),
        ("that conversation is private", R.PRIVATE_CONVERSATION),
        ("already in", R.IN_CONVERSATION),
        ("not in a conversation", R.NOT_IN_CONVERSATION),
        ("the limit is", R.TOO_LONG),
        ("message is empty", R.BAD_INPUT),
        ("must be text", R.BAD_INPUT),
        ("privacy must be", R.BAD_INPUT),
    ),
    AgentRuleError: (
        ("nobody called", R.NO_SUCH_AGENT),
        ("outside the", R.OUT_OF_BOUNDS),
        ("you are already there", R.ALREADY_THERE),
        ("no way there", R.NO_PATH),
        ("cannot be stood on", R.BLOCKED),
        ("cannot be crossed", R.BLOCKED),
        ("the world ends", R.WORLD_EDGE),
        ("a wall stands", R.WALL_IN_WAY),
        ("down is where you already stand", R.BAD_INPUT),
    ),
    WorldRuleError: (
        ("already a wall", R.WALL_EXISTS),
        ("already a door", R.DOOR_EXISTS),
        ("no wall", R.NO_WALL),
        ("already the name of a place", R.NAME_TAKEN),
    ),
}


def refusal_reason(exc: Exception) -> FailureReason:
    """Why a rule error refused an action: the engine's own say so, a service's message
    is matched against its known phrases, and anything else is a plain refusal."""
    if isinstance(exc, Refusal):
        return exc.reason
    if isinstance(exc, InventoryError):
        return R.NOT_CARRYING
    message = str(exc)
    for kind, phrases in _RULE_PHRASES.items():
        if isinstance(exc, kind):
            for phrase, reason in phrases:
                if phrase in message:
                    return reason
    return R.NOT_ALLOWED


def _crafting_reason(message: str) -> FailureReason:
    """Why crafting refused: its message starts with the reason, then any hints."""
    if message.startswith("missing "):
        return R.NOT_CARRYING
    if message.startswith("nothing comes of"):
        return R.NO_RECIPE
    if message.startswith("could not make"):
        return R.UNEXPECTED
    return R.BAD_INPUT


_NAMED: dict[type, tuple[tuple[str, ...], bool]] = {}
"""Action type -> (its NAME_FIELDS, in that order; whether it has `items`)."""


def _named(kind: type) -> tuple[tuple[str, ...], bool]:
    """Which name arguments an action type has, worked out once per type: most actions
    (a walk, a gather) have none, and asking each instance for seven missing
    attributes cost more than the checks."""
    found = _NAMED.get(kind)
    if found is None:
        found = _NAMED[kind] = (tuple(f for f in NAME_FIELDS if hasattr(kind, f)),
                                hasattr(kind, "items"))
    return found


def _overlong_name(action: Action) -> str | None:
    """A refusal for a name argument no real name could match, or None."""
    fields, has_items = _named(type(action))
    for field in fields:
        value = getattr(action, field, None)
        if isinstance(value, str) and len(value) > MAX_NAME_LENGTH:
            return (f"{field} is {len(value)} characters long; no name here is longer than "
                    f"{MAX_NAME_LENGTH}")
    if not has_items:
        return None
    items = getattr(action, "items", None)
    if isinstance(items, tuple):
        if len(items) > 20:
            return f"combine takes at most 20 things, not {len(items)}"
        for value in items:
            if len(value) > MAX_NAME_LENGTH:
                return (f"an item name of {len(value)} characters; no name here is longer "
                        f"than {MAX_NAME_LENGTH}")
    return None


_NO_NAMES: tuple[tuple[str, ...], bool] = ((), False)
"""What `_named` says of an action with no name arguments, which needs no check."""


class IdSource:
    """Fresh ids for objects, items and structures: seeded, so runs can be replayed."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)
        """Used until the first `reseed` (worlds being set up, tests)."""
        self._parts: tuple[object, ...] | None = None
        self._key = b""
        self._count = 0

    def reseed(self, *parts: object) -> None:
        """Start a fresh, reproducible sequence for one turn or phase.

        The engine reseeds from (world seed, tick, agent) before each turn, so an id
        depends only on where it was made, never on how many were made before: a
        run resumed after a crash mints exactly the ids the uninterrupted run did.
        This is called for every turn and most turns mint nothing, so the parts are
        only joined when the first id is asked for.
        """
        self._parts = parts
        self._count = 0

    def __call__(self, prefix: str) -> str:
        parts = self._parts
        if parts is None:
            return f"{prefix}-{self._rng.getrandbits(48):012x}"
        if self._count == 0:
            self._key = ":".join(str(p) for p in parts).encode()
        self._count += 1
        # A keyed hash of (parts, n): 48 bits as before, without seeding a random.Random
        # from a string (12 µs) for the first id of a turn.
        digest = hashlib.blake2b(b"%s:%d" % (self._key, self._count), digest_size=6)
        return f"{prefix}-{digest.hexdigest()}"


class ActionEngine:
    def __init__(
        self,
        world: WorldService,
        agents: AgentService,
        crafting: CraftingService,
        conversations: ConversationService,
        *,
        gathering: Gathering | None = None,
        building: BuildingSettings | None = None,
        ids: Callable[[str], str] | None = None,
    ) -> None:
        self.world = world
        self.agents = agents
        self.crafting = crafting
        self.conversations = conversations
        self.gathering = gathering or Gathering()
        self.building = building or BuildingSettings()
        self.new_id = ids or IdSource()
        self._handlers: dict[type[Action], Callable[[Agent, Any, int], ActionResult]] = {
            WalkAction: self._walk,
            ApproachAction: self._approach,
            JourneyAction: self._journey,
            ExamineAction: self._examine,
            SenseOthersAction: self._sense_others,
            TakeAction: self._take,
            DropAction: self._drop,
            GiveAction: self._give,
            GatherAction: self._gather,
            CombineAction: self._combine,
            WorkAction: self._work,
            ApplyAction: self._apply,
            BuildShelterAction: self._build_shelter,
            PlaceWallAction: self._place_wall,
            PlaceDoorAction: self._place_door,
            PlaceItemAction: self._place_item,
            RemoveWallAction: self._remove_wall,
            WriteSignAction: self._write_sign,
            ReadSignAction: self._read_sign,
            NamePlaceAction: self._name_place,
            SleepAction: self._sleep,
            SpeakAction: self._speak,
            InviteAction: self._invite,
            AcceptInviteAction: self._accept_invite,
            DeclineInviteAction: self._decline_invite,
            JoinConversationAction: self._join_conversation,
            LeaveConversationAction: self._leave_conversation,
        }
        self._plans: dict[type[Action], tuple[Callable[[Agent, Any, int], ActionResult], bool,
                                              bool]] = {}
        """Action type -> (its handler, whether it has name arguments to check, whether it
        is refused while travelling): what `execute_now` asks of every action, worked out
        once per type instead of in three look-ups per call."""

    # ------------------------------------------------------------------ entry points

    async def execute(self, name: AgentName | str, action: Action, tick: int) -> ActionResult:
        return self.execute_now(name, action, tick)

    async def execute_tool(
        self, name: AgentName | str, tool: Any, arguments: Any, tick: int
    ) -> ActionResult:
        """Run a model's tool call: bad arguments are a failed result, never an error."""
        try:
            action = parse_action(tool, arguments)
        except ToolInputError as exc:
            return ActionResult.fail(str(exc), reason=R.BAD_INPUT)
        return self.execute_now(name, action, tick)

    def execute_now(self, name: AgentName | str, action: Action, tick: int) -> ActionResult:
        """The synchronous core of `execute`, for callers already off the event loop."""
        agent = self.agents.get_agent(str(name)) if isinstance(name, str) else None
        if agent is None:
            return ActionResult.fail(f"nobody called {name!r} lives here",
                                     reason=R.NO_SUCH_AGENT)
        kind = type(action)
        plan = self._plans.get(kind)
        if plan is None:
            handler = self._handlers.get(kind)
            if handler is None:
                return ActionResult.fail(f"{getattr(action, 'name', action)!r} is not an action",
                                         reason=R.BAD_INPUT)
            plan = self._plans[kind] = (handler, _named(kind) != _NO_NAMES,
                                        action.name in BUSY_WHILE_TRAVELLING)
        handler, has_names, busy = plan
        if has_names:
            too_long = _overlong_name(action)
            if too_long:
                return ActionResult.fail(too_long, reason=R.TOO_LONG)
        if agent.is_sleeping:
            return ActionResult.fail("you are asleep; you will wake in the morning",
                                     reason=R.ASLEEP)
        if busy and agent.journey is not None:
            dest = agent.journey.destination
            return ActionResult.fail(
                f"you are on a journey to ({dest.x}, {dest.y}), {agent.journey.remaining} steps "
                "to go; it carries you one step each tick from the next. For the rest of this "
                "turn you can still look around, sense others and talk.", reason=R.TRAVELLING,
            )
        try:
            return handler(agent, action, tick)
        except (AgentRuleError, WorldRuleError, ConversationError, InventoryError) as exc:
            return ActionResult.fail(str(exc), reason=refusal_reason(exc))
        except Exception:  # a bug: report it to the agent as a failure, keep the world
            log.exception("action %s by %s failed unexpectedly", action.name, agent.name)
            return ActionResult.fail(f"{action.name} could not be done just now",
                                     reason=R.UNEXPECTED)

    # ------------------------------------------------------------------ movement

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

    # ------------------------------------------------------------------ perception

    def _target_cell(self, agent: Agent, direction: Direction) -> Position | None:
        pos = agent.position if direction is _DOWN else agent.position.step(direction)
        return pos if self.world.in_bounds(pos) else None

    def _examine(self, agent: Agent, action: ExamineAction, tick: int) -> ActionResult:
        pos = self._target_cell(agent, action.direction)
        if pos is None:
            return ActionResult.fail(f"the world ends to the {action.direction.value}",
                                     reason=R.WORLD_EDGE)
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

    # ------------------------------------------------------------------ things

    def _take(self, agent: Agent, action: TakeAction, tick: int) -> ActionResult:
        pos = self._target_cell(agent, action.direction)
        if pos is None:
            return ActionResult.fail(f"the world ends to the {action.direction.value}",
                                     reason=R.WORLD_EDGE)
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
        pos = self._target_cell(agent, action.direction)
        if pos is None:
            return ActionResult.fail(f"the world ends to the {action.direction.value}",
                                     reason=R.WORLD_EDGE)
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
        pos = self._target_cell(agent, action.direction)
        if pos is None:
            return ActionResult.fail(f"the world ends to the {action.direction.value}",
                                     reason=R.WORLD_EDGE)
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

    # ------------------------------------------------------------------ crafting

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

    # ------------------------------------------------------------------ building

    def _pay(self, agent: Agent, materials: list[str], cost: int, what: str):
        """(inventory after paying, material) or AgentRuleError listing what would do."""
        if cost == 0:
            return agent.inventory, None
        for material in materials:
            if agent.inventory.has(material, cost):
                return agent.inventory.remove_resource(material, cost), material
        raise Refusal(
            f"{what} takes {cost} of one of: {', '.join(materials)}; you have none in that amount",
            R.CANNOT_AFFORD,
        )

    def _wall_checks(self, agent: Agent, direction: Direction) -> None:
        if not self.world.edge_inside(agent.position, direction):
            raise Refusal(f"the {direction.value} side of this cell is the world's edge",
                          R.WORLD_EDGE)

    def _place_wall(self, agent: Agent, action: PlaceWallAction, tick: int) -> ActionResult:
        d = action.direction
        self._wall_checks(agent, d)
        if self.world.has_wall(agent.position, d):
            return ActionResult.fail(f"there is already a wall on the {d.value} side",
                                     reason=R.WALL_EXISTS)
        inventory, material = self._pay(
            agent, self.building.wall_materials, self.building.wall_cost, "a wall"
        )
        self.agents.set_inventory(agent.name, inventory)
        self.world.place_wall(agent.position, d, material, self.building.wall_cost)
        events: list = [WallPlacedEvent(tick, agent.name, agent.position, d)]
        beyond = agent.position.step(d)
        # Structures are always exactly the enclosed areas: a wall whose two sides are
        # still joined changed no area, so it needs no flood (see `still_joined`).
        changed = [] if still_joined(self.world.wall_east, self.world.wall_south,
                                     agent.position, beyond) else (
            self._refresh_structures(agent, [agent.position, beyond], tick))
        events += changed
        found = [e for e in changed if isinstance(e, StructureDetectedEvent)]
        text = f"you raise a wall of {material or 'nothing'} on the {d.value} side"
        if found:
            text += "; the walls now close a space: a shelter"
        return ActionResult.ok(text, events, {"material": material, "structure": bool(found)})

    def _place_door(self, agent: Agent, action: PlaceDoorAction, tick: int) -> ActionResult:
        d = action.direction
        self._wall_checks(agent, d)
        if not self.world.has_wall(agent.position, d):
            return ActionResult.fail(
                f"a door goes into a wall, and there is no wall on the {d.value} side; "
                "place_wall first", reason=R.NO_WALL,
            )
        if self.world.has_door(agent.position, d):
            return ActionResult.fail(f"there is already a door on the {d.value} side",
                                     reason=R.DOOR_EXISTS)
        inventory, material = self._pay(
            agent, self.building.door_materials, self.building.door_cost, "a door"
        )
        self.agents.set_inventory(agent.name, inventory)
        self.world.place_door(agent.position, d, material, self.building.door_cost)
        return ActionResult.ok(
            f"you fit a door into the {d.value} wall",
            [DoorPlacedEvent(tick, agent.name, agent.position, d)],
            {"material": material},
        )

    def _remove_wall(self, agent: Agent, action: RemoveWallAction, tick: int) -> ActionResult:
        d = action.direction
        self._wall_checks(agent, d)
        if not self.world.has_wall(agent.position, d):
            return ActionResult.fail(f"there is no wall on the {d.value} side",
                                     reason=R.NO_WALL)
        returned = self.world.remove_wall(agent.position, d)
        inventory = agent.inventory
        for material, quantity in returned:
            inventory = inventory.add_resource(material, quantity)
        self.agents.set_inventory(agent.name, inventory)
        events: list = [WallRemovedEvent(tick, agent.name, agent.position, d)]
        events += self._refresh_structures(agent, [agent.position, agent.position.step(d)], tick)
        back = ", ".join(f"{q} {m}" for m, q in returned) or "nothing"
        return ActionResult.ok(
            f"you take down the {d.value} wall and keep its {back}", events,
            {"returned": [[m, q] for m, q in returned]},
        )

    def _build_shelter(self, agent: Agent, action: BuildShelterAction, tick: int) -> ActionResult:
        """Walls on every open side of this cell and a door in the south wall: a one-cell
        hut its builder can walk out of."""
        pos = agent.position
        if any(not self.world.edge_inside(pos, d) for d in CARDINALS):
            return ActionResult.fail("a shelter cannot stand against the world's edge",
                                     reason=R.WORLD_EDGE)
        missing = [d for d in CARDINALS if not self.world.has_wall(pos, d)]
        needs_door = not any(self.world.has_door(pos, d) for d in CARDINALS)
        if not missing and not needs_door:
            return ActionResult.fail("you are already inside a shelter",
                                     reason=R.ALREADY_SHELTERED)
        cost = self.building.wall_cost
        inventory = agent.inventory
        spend: list[tuple[Direction, str | None]] = []
        for d in missing:
            choice = next((m for m in self.building.wall_materials
                           if cost == 0 or inventory.has(m, cost)), None)
            if choice is None:
                need = len(missing) * cost
                return ActionResult.fail(
                    f"a shelter here needs {len(missing)} more walls: {need} units of "
                    f"{', '.join(self.building.wall_materials)} (any mix, {cost} per wall), "
                    f"and a door of {self.building.door_cost} "
                    f"{' or '.join(self.building.door_materials)}",
                    reason=R.CANNOT_AFFORD,
                )
            if cost:
                inventory = inventory.remove_resource(choice, cost)
            spend.append((d, choice if cost else None))
        door_material = None
        if needs_door and self.building.door_cost:
            door_material = next((m for m in self.building.door_materials
                                  if inventory.has(m, self.building.door_cost)), None)
            if door_material is None:
                return ActionResult.fail(
                    f"a shelter needs a door of {self.building.door_cost} "
                    f"{' or '.join(self.building.door_materials)} once its walls are paid for",
                    reason=R.CANNOT_AFFORD,
                )
            inventory = inventory.remove_resource(door_material, self.building.door_cost)
        self.agents.set_inventory(agent.name, inventory)
        events: list = []
        for d, material in spend:
            self.world.place_wall(pos, d, material, cost)
            events.append(WallPlacedEvent(tick, agent.name, pos, d))
        if needs_door:
            self.world.place_door(pos, Direction.SOUTH, door_material,
                                  self.building.door_cost if door_material else 0)
            events.append(DoorPlacedEvent(tick, agent.name, pos, Direction.SOUTH))
        cells = [pos, *(pos.step(d) for d in CARDINALS)]
        events += self._refresh_structures(agent, cells, tick)
        return ActionResult.ok(
            f"you build walls on {len(spend)} sides"
            + (" and a door to the south" if needs_door else "")
            + "; this cell is a shelter now", events,
            {"walls": [d.value for d, _ in spend], "door": needs_door},
        )

    def _refresh_structures(self, agent: Agent, cells: list[Position], tick: int) -> list:
        """Make the structures around changed walls true again.

        The enclosed regions containing `cells` are recomputed; a structure whose
        interior is still exactly one of them stays (same id), any other structure
        touching those cells is removed (opened, merged or split), and every new
        enclosed region becomes a structure.
        """
        world = self.world
        walls = (world.wall_east, world.wall_south)
        cells = [c for c in cells if world.in_bounds(c)]
        regions = enclosed_regions(*walls, cells, max_area=MAX_STRUCTURE_AREA)
        touched: dict[str, Structure] = {}
        for cell in [*cells, *(p for r in regions for p in r)]:
            found = world.structure_at(cell)
            if found is not None:
                touched[found.id] = found
        events: list = []
        kept = set()
        for sid, structure in sorted(touched.items()):
            if structure.interior in regions:
                kept.add(structure.interior)
                continue
            world.remove_structure(sid)
            events.append(StructureRemovedEvent(tick, sid, agent.name))
        for region in regions:
            if region in kept or any(world.structure_at(p) for p in region):
                continue
            structure = Structure(self.new_id("structure"), region, agent.name, tick)
            world.add_structure(structure)
            events.append(StructureDetectedEvent(tick, structure.id, len(region), agent.name))
        return events

    # ------------------------------------------------------------------ expression

    def _write_sign(self, agent: Agent, action: WriteSignAction, tick: int) -> ActionResult:
        pos = self._target_cell(agent, action.direction)
        if pos is None:
            return ActionResult.fail(f"the world ends to the {action.direction.value}",
                                     reason=R.WORLD_EDGE)
        if pos != agent.position and not self.world.is_passable(pos):
            return ActionResult.fail("a sign needs ground to stand on", reason=R.BLOCKED)
        if pos != agent.position and self.world.edge_blocked(agent.position, action.direction):
            return ActionResult.fail(f"a wall stands to the {action.direction.value}",
                                     reason=R.WALL_IN_WAY)
        text = clean_text(action.text)
        if not text:
            return ActionResult.fail("the sign would be blank once unprintable characters go",
                                     reason=R.BAD_INPUT)
        if len(text) > MAX_SIGN_LENGTH:
            return ActionResult.fail(
                f"the sign's text is {len(text)} characters once normalised; the limit is "
                f"{MAX_SIGN_LENGTH}", reason=R.TOO_LONG,
            )
        existing = self.world.sign_at(pos)
        sign = Sign(existing.id if existing else self.new_id("sign"), pos, agent.name, tick,
                    text=text)
        if existing:
            self.world.replace_object(sign)
        else:
            self.world.add_object(sign)
        return ActionResult.ok(
            ("you rewrite the sign" if existing else "you write a sign") + f": {text!r}",
            [SignWrittenEvent(tick, agent.name, pos, text)], {"text": text},
        )

    def _read_sign(self, agent: Agent, action: ReadSignAction, tick: int) -> ActionResult:
        pos = self._target_cell(agent, action.direction)
        if pos is not None and pos != agent.position and self.world.edge_blocked(
            agent.position, action.direction
        ):
            return ActionResult.fail(
                f"a wall stands to the {action.direction.value}; you cannot read past it",
                reason=R.WALL_IN_WAY,
            )
        sign = self.world.sign_at(pos) if pos is not None else None
        if sign is None:
            where = "here" if action.direction is Direction.DOWN else (
                f"to the {action.direction.value}")
            return ActionResult.fail(f"there is no sign {where}", reason=R.NO_SIGN)
        by = f" (written by {sign.created_by})" if sign.created_by else ""
        return ActionResult.ok(f"the sign reads: {sign.text!r}{by}", (),
                               {"text": sign.text, "author": sign.created_by})

    def _name_place(self, agent: Agent, action: NamePlaceAction, tick: int) -> ActionResult:
        name = " ".join(clean_text(action.place_name).split())
        if not name:
            return ActionResult.fail("a place name needs some letters", reason=R.BAD_INPUT)
        if len(name) > MAX_PLACE_NAME_LENGTH:
            return ActionResult.fail(
                f"the place name is {len(name)} characters once normalised; the limit is "
                f"{MAX_PLACE_NAME_LENGTH}", reason=R.TOO_LONG,
            )
        taken = self.world.place_named(name) or self.world.landmark_named(name)
        if taken is not None:
            p = taken.position
            return ActionResult.fail(f"{name!r} already names the place at ({p.x}, {p.y})",
                                     reason=R.NAME_TAKEN)
        place = NamedPlace(name, agent.position, agent.name, tick)
        self.world.name_place(place)
        return ActionResult.ok(
            f"you name this place {place.name!r}",
            [PlaceNamedEvent(tick, agent.name, agent.position, place.name)], {"name": place.name},
        )

    # ------------------------------------------------------------------ rest

    def _sleep(self, agent: Agent, action: SleepAction, tick: int) -> ActionResult:
        self.agents.set_sleeping(agent.name, True)
        return ActionResult.ok(
            "you lie down and sleep; you will wake in the morning",
            [AgentSleptEvent(tick, agent.name)],
        )

    # ------------------------------------------------------------------ talk

    def _speak(self, agent: Agent, action: SpeakAction, tick: int) -> ActionResult:
        message = clean_text(action.message, keep_newlines=True)
        if not message:
            return ActionResult.fail(
                "there is nothing left to say once unprintable characters are gone",
                reason=R.BAD_INPUT,
            )
        conversation, turn = self.conversations.add_turn(agent.name, message, tick)
        others = sorted(conversation.participants - {agent.name})
        return ActionResult.ok(
            f"you say: {turn.message!r}" + (f" (to {', '.join(others)})" if others else ""),
            [ConversationTurnEvent(tick, conversation.id, agent.name, turn.message)],
            {"conversation": conversation.id},
        )

    def _invite(self, agent: Agent, action: InviteAction, tick: int) -> ActionResult:
        invitation = self.conversations.create_invite(
            agent.name, AgentName(str(action.invitee).strip()), action.privacy, tick
        )
        return ActionResult.ok(
            f"you invite {invitation.invitee} to a {invitation.privacy.value} conversation; "
            "they may accept within 2 ticks",
            [InvitationSentEvent(tick, agent.name, invitation.invitee, invitation.privacy)],
            {"invitee": invitation.invitee},
        )

    def _accept_invite(self, agent: Agent, action: AcceptInviteAction, tick: int) -> ActionResult:
        conversation, invitation = self.conversations.accept_invite(agent.name, tick)
        events: list = [InvitationAcceptedEvent(tick, agent.name, invitation.inviter,
                                                conversation.id)]
        if len(conversation.participants) == 2 and conversation.started_tick == tick:
            events.append(ConversationStartedEvent(tick, conversation.id,
                                                   conversation.participants,
                                                   conversation.privacy))
        else:
            events.append(ConversationJoinedEvent(tick, conversation.id, agent.name))
        return ActionResult.ok(
            f"you accept {invitation.inviter}'s invitation; you are talking with "
            + ", ".join(sorted(conversation.participants - {agent.name})),
            events, {"conversation": conversation.id},
        )

    def _decline_invite(
        self, agent: Agent, action: DeclineInviteAction, tick: int
    ) -> ActionResult:
        invitation = self.conversations.decline_invite(agent.name, tick)
        return ActionResult.ok(
            f"you decline {invitation.inviter}'s invitation",
            [InvitationDeclinedEvent(tick, agent.name, invitation.inviter)],
        )

    def _join_conversation(
        self, agent: Agent, action: JoinConversationAction, tick: int
    ) -> ActionResult:
        conversation = self.conversations.join_conversation(
            agent.name, AgentName(str(action.participant).strip()), tick
        )
        return ActionResult.ok(
            "you join the conversation of " + ", ".join(
                sorted(conversation.participants - {agent.name})),
            [ConversationJoinedEvent(tick, conversation.id, agent.name)],
            {"conversation": conversation.id},
        )

    def _leave_conversation(
        self, agent: Agent, action: LeaveConversationAction, tick: int
    ) -> ActionResult:
        conversation, ended = self.conversations.leave_conversation(agent.name, tick)
        events: list = [ConversationLeftEvent(tick, conversation.id, agent.name)]
        if ended:
            events.append(ConversationEndedEvent(tick, conversation.id))
        return ActionResult.ok(
            "you leave the conversation" + ("; it ends" if ended else ""), events,
            {"conversation": conversation.id, "ended": ended},
        )
