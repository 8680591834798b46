"""Every action an agent can take, as a frozen value, and the result of taking it.

Actions are data, not behaviour: the ActionEngine in services validates and
executes them. Targets are directions ("north", ..., "down" for here) or names,
never object ids, because agents never see ids in what they perceive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from core.constants import (
    MAX_PLACE_NAME_LENGTH,
    MAX_SIGN_LENGTH,
    MAX_SPEECH_LENGTH,
    MAX_WALK_STEPS,
)
from core.conversation import Privacy
from core.events import DomainEvent
from core.failures import FailureReason
from core.types import AgentName, Direction, Position


@dataclass(frozen=True, slots=True)
class Action:
    name: ClassVar[str] = "action"


def _direction(action: Action, attr: str = "direction") -> None:
    value = getattr(action, attr)
    if type(value) is not Direction:  # the parser already hands over a Direction
        object.__setattr__(action, attr, Direction.parse(value))


def _cardinal(action: Action, attr: str = "direction") -> None:
    _direction(action, attr)
    if getattr(action, attr) is Direction.DOWN:
        raise ValueError(f"{action.name} needs north, south, east or west, not 'down'")


def _text(value: str, what: str, limit: int | None = None) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} cannot be empty")
    if limit is not None and len(value) > limit:
        raise ValueError(f"{what} is {len(value)} characters; the limit is {limit}")


def _positive(value: int, what: str) -> None:
    if value < 1:
        raise ValueError(f"{what} must be at least 1, got {value}")


# --- movement -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkAction(Action):
    """Step one to MAX_WALK_STEPS cells in one direction, stopping early if blocked or
    when someone comes into view."""

    name: ClassVar[str] = "walk"
    direction: Direction
    steps: int = 1

    def __post_init__(self) -> None:
        _cardinal(self)
        _positive(self.steps, "steps")
        if self.steps > MAX_WALK_STEPS:
            raise ValueError(f"walk takes at most {MAX_WALK_STEPS} steps at a time, "
                             f"not {self.steps}; use journey to go further")


@dataclass(frozen=True, slots=True)
class ApproachAction(Action):
    """Walk toward something visible: an agent's name or a kind of thing."""

    name: ClassVar[str] = "approach"
    target: str

    def __post_init__(self) -> None:
        _text(self.target, "approach's target")


@dataclass(frozen=True, slots=True)
class JourneyAction(Action):
    """Travel over many ticks to a position or to a named place."""

    name: ClassVar[str] = "journey"
    destination: Position | None = None
    place_name: str | None = None

    def __post_init__(self) -> None:
        if (self.destination is None) == (self.place_name is None):
            raise ValueError("journey needs exactly one of a destination or a place name")
        if self.place_name is not None:
            _text(self.place_name, "the place name", MAX_PLACE_NAME_LENGTH)


# --- perception ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExamineAction(Action):
    name: ClassVar[str] = "examine"
    direction: Direction = Direction.DOWN

    def __post_init__(self) -> None:
        _direction(self)


@dataclass(frozen=True, slots=True)
class SenseOthersAction(Action):
    name: ClassVar[str] = "sense_others"


# --- interaction --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TakeAction(Action):
    name: ClassVar[str] = "take"
    direction: Direction = Direction.DOWN
    item: str | None = None
    """Which thing, when several lie there; None takes the first."""

    def __post_init__(self) -> None:
        _direction(self)


@dataclass(frozen=True, slots=True)
class DropAction(Action):
    name: ClassVar[str] = "drop"
    item: str
    quantity: int = 1

    def __post_init__(self) -> None:
        _positive(self.quantity, "quantity")


@dataclass(frozen=True, slots=True)
class GiveAction(Action):
    name: ClassVar[str] = "give"
    recipient: AgentName
    item: str
    quantity: int = 1

    def __post_init__(self) -> None:
        _positive(self.quantity, "quantity")


@dataclass(frozen=True, slots=True)
class GatherAction(Action):
    name: ClassVar[str] = "gather"
    direction: Direction = Direction.DOWN

    def __post_init__(self) -> None:
        _direction(self)


# --- material -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CombineAction(Action):
    name: ClassVar[str] = "combine"
    items: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        if len(self.items) < 2:
            raise ValueError("combine needs at least two things")


@dataclass(frozen=True, slots=True)
class WorkAction(Action):
    name: ClassVar[str] = "work"
    item: str
    technique: str


@dataclass(frozen=True, slots=True)
class ApplyAction(Action):
    name: ClassVar[str] = "apply"
    tool: str
    target: str


# --- building -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuildShelterAction(Action):
    name: ClassVar[str] = "build_shelter"


@dataclass(frozen=True, slots=True)
class PlaceWallAction(Action):
    name: ClassVar[str] = "place_wall"
    direction: Direction

    def __post_init__(self) -> None:
        _cardinal(self)


@dataclass(frozen=True, slots=True)
class PlaceDoorAction(Action):
    name: ClassVar[str] = "place_door"
    direction: Direction

    def __post_init__(self) -> None:
        _cardinal(self)


@dataclass(frozen=True, slots=True)
class PlaceItemAction(Action):
    name: ClassVar[str] = "place_item"
    item: str
    direction: Direction = Direction.DOWN

    def __post_init__(self) -> None:
        _direction(self)


@dataclass(frozen=True, slots=True)
class RemoveWallAction(Action):
    name: ClassVar[str] = "remove_wall"
    direction: Direction

    def __post_init__(self) -> None:
        _cardinal(self)


# --- expression ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteSignAction(Action):
    name: ClassVar[str] = "write_sign"
    text: str
    direction: Direction = Direction.DOWN

    def __post_init__(self) -> None:
        _direction(self)
        _text(self.text, "the sign's text", MAX_SIGN_LENGTH)


@dataclass(frozen=True, slots=True)
class ReadSignAction(Action):
    name: ClassVar[str] = "read_sign"
    direction: Direction = Direction.DOWN

    def __post_init__(self) -> None:
        _direction(self)


@dataclass(frozen=True, slots=True)
class NamePlaceAction(Action):
    name: ClassVar[str] = "name_place"
    place_name: str

    def __post_init__(self) -> None:
        _text(self.place_name, "the place name", MAX_PLACE_NAME_LENGTH)


# --- state --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SleepAction(Action):
    name: ClassVar[str] = "sleep"


# --- social -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpeakAction(Action):
    name: ClassVar[str] = "speak"
    message: str

    def __post_init__(self) -> None:
        _text(self.message, "what you say", MAX_SPEECH_LENGTH)


@dataclass(frozen=True, slots=True)
class InviteAction(Action):
    name: ClassVar[str] = "invite"
    invitee: AgentName
    privacy: Privacy | None = None
    """None: the privacy of the inviter's current conversation, or public."""

    def __post_init__(self) -> None:
        if self.privacy is not None:
            object.__setattr__(self, "privacy", Privacy(self.privacy))


@dataclass(frozen=True, slots=True)
class AcceptInviteAction(Action):
    name: ClassVar[str] = "accept_invite"


@dataclass(frozen=True, slots=True)
class DeclineInviteAction(Action):
    name: ClassVar[str] = "decline_invite"


@dataclass(frozen=True, slots=True)
class JoinConversationAction(Action):
    """Join a public conversation by naming someone visible who is in it."""

    name: ClassVar[str] = "join_conversation"
    participant: AgentName


@dataclass(frozen=True, slots=True)
class LeaveConversationAction(Action):
    name: ClassVar[str] = "leave_conversation"


ACTION_TYPES: Mapping[str, type[Action]] = MappingProxyType(
    {
        cls.name: cls
        for cls in (
            WalkAction,
            ApproachAction,
            JourneyAction,
            ExamineAction,
            SenseOthersAction,
            TakeAction,
            DropAction,
            GiveAction,
            GatherAction,
            CombineAction,
            WorkAction,
            ApplyAction,
            BuildShelterAction,
            PlaceWallAction,
            PlaceDoorAction,
            PlaceItemAction,
            RemoveWallAction,
            WriteSignAction,
            ReadSignAction,
            NamePlaceAction,
            SleepAction,
            SpeakAction,
            InviteAction,
            AcceptInviteAction,
            DeclineInviteAction,
            JoinConversationAction,
            LeaveConversationAction,
        )
    }
)
"""Action name -> action type: the one list every other layer derives from."""


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What happened when an action ran: the narrator's input and the events to log.

    `message` is plain and complete: on failure it says why, and what would work.
    `reason` names the kind of failure (a FailureReason) so nobody has to parse the
    message; a success has none.
    """

    success: bool
    message: str
    events: tuple[DomainEvent, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(self.events))
        object.__setattr__(self, "data", MappingProxyType(dict(self.data or {})))
        if self.success:
            if self.reason:
                raise ValueError(f"a successful result has no failure reason, not {self.reason!r}")
        elif not isinstance(self.reason, FailureReason):
            object.__setattr__(self, "reason", _failure_reason(self.reason))

    @classmethod
    def ok(
        cls,
        message: str,
        events: tuple[DomainEvent, ...] | list[DomainEvent] = (),
        data: Mapping[str, Any] | None = None,
    ) -> ActionResult:
        return cls(True, message, tuple(events), data or {})

    @classmethod
    def fail(
        cls,
        message: str,
        data: Mapping[str, Any] | None = None,
        *,
        reason: FailureReason = FailureReason.NOT_ALLOWED,
    ) -> ActionResult:
        return cls(False, message, (), data or {}, reason)


def _failure_reason(raw: object) -> FailureReason:
    """A failure's reason as the enum; a missing or unknown one is a bug, so it raises."""
    try:
        return FailureReason(raw)
    except ValueError:
        raise ValueError(
            f"a failed result needs a reason, one of: {', '.join(FailureReason)}; got {raw!r}"
        ) from None
