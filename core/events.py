"""Domain events: facts about what happened, for the audit log and observers.

Events are never replayed (SQLite is the truth); they exist so people can see
what happened and when. `to_dict` gives JSON-ready primitives and
`event_from_dict` reads them back, so a log line always round-trips.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar

from core.conversation import Privacy
from core.terrain import Weather
from core.types import AgentName, ConversationId, Direction, Position


@dataclass(frozen=True, slots=True)
class DomainEvent:
    event_type: ClassVar[str] = "event"
    category: ClassVar[str] = "world"

    tick: int

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-ready primitives: type, category, then each field in order.

        Every event of every turn is written, so this is on the commit's hot path: the
        field names come from a per-class table (`dataclasses.fields` rebuilt a tuple
        each call), and the common values (text, whole numbers, positions, sets of
        names) are made plain inline; anything else goes through `_plain`, as before.
        """
        cls = type(self)
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
        out: dict[str, Any] = {"type": self.event_type, "category": self.category}
        for name in names:
            value = getattr(self, name)
            kind = type(value)
            if kind is str or kind is int or value is None:
                out[name] = value
            elif kind is Position:
                out[name] = {"x": value.x, "y": value.y}
            elif kind is frozenset and all(type(v) is str for v in value):
                out[name] = sorted(value)  # names: each already plain
            else:
                out[name] = _plain(value)
        return out


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""Event class -> its dataclass field names, in declaration order."""


def _plain(value: Any) -> Any:
    if isinstance(value, Position):
        return {"x": value.x, "y": value.y}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (frozenset, set)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


# --- agents and movement ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgentMovedEvent(DomainEvent):
    event_type: ClassVar[str] = "agent_moved"
    agent: AgentName
    from_position: Position
    to_position: Position


@dataclass(frozen=True, slots=True)
class AgentSleptEvent(DomainEvent):
    event_type: ClassVar[str] = "agent_slept"
    agent: AgentName


@dataclass(frozen=True, slots=True)
class AgentWokeEvent(DomainEvent):
    event_type: ClassVar[str] = "agent_woke"
    agent: AgentName
    reason: str


@dataclass(frozen=True, slots=True)
class AgentsMetEvent(DomainEvent):
    event_type: ClassVar[str] = "agents_met"
    category: ClassVar[str] = "social"
    agent: AgentName
    other: AgentName


@dataclass(frozen=True, slots=True)
class JourneyStartedEvent(DomainEvent):
    event_type: ClassVar[str] = "journey_started"
    agent: AgentName
    destination: Position
    path_length: int


@dataclass(frozen=True, slots=True)
class JourneyInterruptedEvent(DomainEvent):
    event_type: ClassVar[str] = "journey_interrupted"
    agent: AgentName
    position: Position
    reason: str


@dataclass(frozen=True, slots=True)
class JourneyCompletedEvent(DomainEvent):
    event_type: ClassVar[str] = "journey_completed"
    agent: AgentName
    destination: Position


# --- things -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceGatheredEvent(DomainEvent):
    event_type: ClassVar[str] = "resource_gathered"
    agent: AgentName
    position: Position
    resource: str
    quantity: int


@dataclass(frozen=True, slots=True)
class ItemCraftedEvent(DomainEvent):
    event_type: ClassVar[str] = "item_crafted"
    agent: AgentName
    method: str
    inputs: tuple[str, ...]
    output: str
    quantity: int


@dataclass(frozen=True, slots=True)
class ItemGivenEvent(DomainEvent):
    event_type: ClassVar[str] = "item_given"
    category: ClassVar[str] = "social"
    agent: AgentName
    recipient: AgentName
    item: str
    quantity: int


@dataclass(frozen=True, slots=True)
class ItemTakenEvent(DomainEvent):
    event_type: ClassVar[str] = "item_taken"
    agent: AgentName
    position: Position
    item: str
    quantity: int


@dataclass(frozen=True, slots=True)
class ItemDroppedEvent(DomainEvent):
    event_type: ClassVar[str] = "item_dropped"
    agent: AgentName
    position: Position
    item: str
    quantity: int


@dataclass(frozen=True, slots=True)
class ItemPlacedEvent(DomainEvent):
    event_type: ClassVar[str] = "item_placed"
    agent: AgentName
    position: Position
    item: str


# --- building and expression -------------------------------------------------


@dataclass(frozen=True, slots=True)
class WallPlacedEvent(DomainEvent):
    event_type: ClassVar[str] = "wall_placed"
    agent: AgentName
    position: Position
    direction: Direction


@dataclass(frozen=True, slots=True)
class WallRemovedEvent(DomainEvent):
    event_type: ClassVar[str] = "wall_removed"
    agent: AgentName
    position: Position
    direction: Direction


@dataclass(frozen=True, slots=True)
class DoorPlacedEvent(DomainEvent):
    event_type: ClassVar[str] = "door_placed"
    agent: AgentName
    position: Position
    direction: Direction


@dataclass(frozen=True, slots=True)
class StructureDetectedEvent(DomainEvent):
    event_type: ClassVar[str] = "structure_detected"
    structure_id: str
    size: int
    agent: AgentName | None = None


@dataclass(frozen=True, slots=True)
class StructureRemovedEvent(DomainEvent):
    event_type: ClassVar[str] = "structure_removed"
    structure_id: str
    agent: AgentName | None = None


@dataclass(frozen=True, slots=True)
class SignWrittenEvent(DomainEvent):
    event_type: ClassVar[str] = "sign_written"
    agent: AgentName
    position: Position
    text: str


@dataclass(frozen=True, slots=True)
class PlaceNamedEvent(DomainEvent):
    event_type: ClassVar[str] = "place_named"
    agent: AgentName
    position: Position
    name: str


@dataclass(frozen=True, slots=True)
class WeatherChangedEvent(DomainEvent):
    event_type: ClassVar[str] = "weather_changed"
    weather: Weather


# --- conversation --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InvitationSentEvent(DomainEvent):
    event_type: ClassVar[str] = "invitation_sent"
    category: ClassVar[str] = "social"
    agent: AgentName
    invitee: AgentName
    privacy: Privacy


@dataclass(frozen=True, slots=True)
class InvitationAcceptedEvent(DomainEvent):
    event_type: ClassVar[str] = "invitation_accepted"
    category: ClassVar[str] = "social"
    agent: AgentName
    inviter: AgentName
    conversation_id: ConversationId


@dataclass(frozen=True, slots=True)
class InvitationDeclinedEvent(DomainEvent):
    event_type: ClassVar[str] = "invitation_declined"
    category: ClassVar[str] = "social"
    agent: AgentName
    inviter: AgentName


@dataclass(frozen=True, slots=True)
class InvitationExpiredEvent(DomainEvent):
    event_type: ClassVar[str] = "invitation_expired"
    category: ClassVar[str] = "social"
    inviter: AgentName
    invitee: AgentName


@dataclass(frozen=True, slots=True)
class ConversationStartedEvent(DomainEvent):
    event_type: ClassVar[str] = "conversation_started"
    category: ClassVar[str] = "social"
    conversation_id: ConversationId
    participants: frozenset[AgentName]
    privacy: Privacy


@dataclass(frozen=True, slots=True)
class ConversationJoinedEvent(DomainEvent):
    event_type: ClassVar[str] = "conversation_joined"
    category: ClassVar[str] = "social"
    conversation_id: ConversationId
    agent: AgentName


@dataclass(frozen=True, slots=True)
class ConversationLeftEvent(DomainEvent):
    event_type: ClassVar[str] = "conversation_left"
    category: ClassVar[str] = "social"
    conversation_id: ConversationId
    agent: AgentName


@dataclass(frozen=True, slots=True)
class ConversationEndedEvent(DomainEvent):
    event_type: ClassVar[str] = "conversation_ended"
    category: ClassVar[str] = "social"
    conversation_id: ConversationId


@dataclass(frozen=True, slots=True)
class ConversationTurnEvent(DomainEvent):
    event_type: ClassVar[str] = "conversation_turn"
    category: ClassVar[str] = "social"
    conversation_id: ConversationId
    agent: AgentName
    message: str


# --- the Gardener -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GardenerInterventionEvent(DomainEvent):
    """The engine applied one of the Gardener's requests to the world."""

    event_type: ClassVar[str] = "gardener_intervention"
    category: ClassVar[str] = "gardener"
    request: int
    cycle: int
    kind: str
    text: str
    """What happened, in words (for the log and the observer)."""
    position: Position | None = None
    radius: int | None = None
    landmark: str | None = None
    until_tick: int | None = None
    """Happenings and revealed landmarks are perceived until (not including) this tick."""


@dataclass(frozen=True, slots=True)
class GardenerRefusedEvent(DomainEvent):
    """The engine refused one of the Gardener's requests; the world is unchanged."""

    event_type: ClassVar[str] = "gardener_refused"
    category: ClassVar[str] = "gardener"
    request: int
    cycle: int
    kind: str
    reason: str


EVENT_TYPES: Mapping[str, type[DomainEvent]] = MappingProxyType(
    {
        cls.event_type: cls
        for cls in (
            AgentMovedEvent,
            AgentSleptEvent,
            AgentWokeEvent,
            AgentsMetEvent,
            JourneyStartedEvent,
            JourneyInterruptedEvent,
            JourneyCompletedEvent,
            ResourceGatheredEvent,
            ItemCraftedEvent,
            ItemGivenEvent,
            ItemTakenEvent,
            ItemDroppedEvent,
            ItemPlacedEvent,
            WallPlacedEvent,
            WallRemovedEvent,
            DoorPlacedEvent,
            StructureDetectedEvent,
            StructureRemovedEvent,
            SignWrittenEvent,
            PlaceNamedEvent,
            WeatherChangedEvent,
            InvitationSentEvent,
            InvitationAcceptedEvent,
            InvitationDeclinedEvent,
            InvitationExpiredEvent,
            ConversationStartedEvent,
            ConversationJoinedEvent,
            ConversationLeftEvent,
            ConversationEndedEvent,
            ConversationTurnEvent,
            GardenerInterventionEvent,
            GardenerRefusedEvent,
        )
    }
)


def event_from_dict(data: Mapping[str, Any]) -> DomainEvent:
    """Rebuild an event from `to_dict` output; unknown types raise ValueError."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        kwargs[f.name] = _typed(hints[f.name], data[f.name])
    return cls(**kwargs)


def _typed(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if origin in (typing.Union, types.UnionType) and args:
        return _typed(args[0], value)
    if hint is Position:
        return Position(int(value["x"]), int(value["y"]))
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if origin is frozenset:
        return frozenset(_typed(args[0], v) for v in value) if args else frozenset(value)
    if origin is tuple:
        return tuple(_typed(args[0], v) for v in value) if args else tuple(value)
    return value
