"""ActionEngine: validate and execute every action an agent can take.

    result = await engine.execute(AgentName("Ember"), WalkAction(Direction.NORTH), tick=1)

A model's tool call reaches it through the tool registry (adapters/tools), which
parses the arguments (services/tool_input.py) into an Action first.

This module holds the dispatch and the checks every action shares (a known agent,
name arguments of a sane length, awake, not on a journey for the actions that need
hands and feet), and turns a rule error into a failed result. The handlers live by
family in services/action_families/ (movement, perception, things, crafting, building,
expression, state, social); ActionEngine is built from all of them.

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

import logging
from collections.abc import Callable
from typing import Any

from config.settings import BuildingSettings
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
from core.failures import FailureReason
from core.types import AgentName
from services.action_families.base import R, Refusal
from services.action_families.building import BuildingActions
from services.action_families.crafting import CraftingActions
from services.action_families.expression import ExpressionActions
from services.action_families.movement import MovementActions
from services.action_families.perception import PerceptionActions
from services.action_families.social import SocialActions
from services.action_families.state import StateActions
from services.action_families.things import ThingActions
from services.agent_service import AgentRuleError, AgentService
from services.conversation_service import ConversationError, ConversationService
from services.crafting import CraftingService
from services.gathering import Gathering
from services.ids import IdSource
from services.world_cells import WorldRuleError
from services.world_service import WorldService

log = logging.getLogger("hearth.actions")

__all__ = ["BUSY_WHILE_TRAVELLING", "MAX_NAME_LENGTH", "ActionEngine", "IdSource", "Refusal",
           "refusal_reason"]

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


class ActionEngine(
    MovementActions, PerceptionActions, ThingActions, CraftingActions, BuildingActions,
    ExpressionActions, StateActions, SocialActions,
):
    """Every action, dispatched by its type to its family's handler after the shared
    checks (`execute_now`)."""

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
