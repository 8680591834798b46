"""What changed in memory since the last write: the write-behind journal of the services.

Services keep the world in memory so an action costs microseconds, not a database
round trip. Every change they make is noted here by key; the engine's commit
phase writes the noted keys in one unit of work (`services.persist.flush`) and
clears the journal. Keys, not values, are kept: the value written is whatever the
service holds at flush time, so ten moves of one agent are one row written.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from core.conversation import (
    Conversation,
    ConversationTurn,
    Invitation,
    InvitationStatus,
    Membership,
)
from core.events import DomainEvent
from core.types import AgentName, ConversationId, Position


@dataclass
class ConversationChange:
    """What one turn changed of one conversation, as that turn left it: the
    conversation's own row when the turn began or ended it, and each membership the
    turn changed. A conversation spans any distance, so turns far apart change it at
    once; each writes only its own part, never the whole value another unfinished turn
    has changed too."""

    row: Conversation | None = None
    members: dict[AgentName, Membership] = field(default_factory=dict)

    def note(self, before: Conversation | None, after: Conversation) -> None:
        if before is None or (before.privacy, before.created_by, before.started_tick,
                              before.ended_tick) != (after.privacy, after.created_by,
                                                     after.started_tick, after.ended_tick):
            self.row = after
        was = {} if before is None else {m.name: m for m in before.members}
        for member in after.members:
            if was.get(member.name) != member:
                self.members[member.name] = member


@dataclass
class ChangeSet:
    world_state: bool = False
    cells: set[Position] = field(default_factory=set)
    edges: set[tuple[int, int, str]] = field(default_factory=set)
    """Wall edges whose materials changed: (x, y, "e" or "s")."""
    agents: set[AgentName] = field(default_factory=set)
    objects_saved: set[str] = field(default_factory=set)
    objects_deleted: set[str] = field(default_factory=set)
    places_saved: set[str] = field(default_factory=set)
    places_deleted: set[str] = field(default_factory=set)
    structures_saved: set[str] = field(default_factory=set)
    structures_deleted: set[str] = field(default_factory=set)
    conversations: dict[ConversationId, ConversationChange] = field(default_factory=dict)
    turns: list[ConversationTurn] = field(default_factory=list)
    invitations: list[Invitation] = field(default_factory=list)
    invitation_updates: list[tuple[Invitation, InvitationStatus]] = field(default_factory=list)
    events: list[DomainEvent] = field(default_factory=list)
    spent: set[Position] = field(default_factory=set)
    """Cells whose gathered-from record changed."""

    def note_conversation(self, before: Conversation | None, after: Conversation) -> None:
        """`after` replaced `before` (None: it is new): keep what this turn changed."""
        self.conversations.setdefault(after.id, ConversationChange()).note(before, after)

    def save_object(self, object_id: str) -> None:
        self.objects_deleted.discard(object_id)
        self.objects_saved.add(object_id)

    def delete_object(self, object_id: str) -> None:
        self.objects_saved.discard(object_id)
        self.objects_deleted.add(object_id)

    def save_place(self, key: str) -> None:
        self.places_deleted.discard(key)
        self.places_saved.add(key)

    def save_structure(self, structure_id: str) -> None:
        self.structures_deleted.discard(structure_id)
        self.structures_saved.add(structure_id)

    def delete_structure(self, structure_id: str) -> None:
        self.structures_saved.discard(structure_id)
        self.structures_deleted.add(structure_id)

    @property
    def empty(self) -> bool:
        return not (
            self.world_state or self.cells or self.edges or self.agents or self.objects_saved
            or self.objects_deleted or self.places_saved or self.places_deleted
            or self.structures_saved or self.structures_deleted or self.conversations
            or self.turns or self.invitations or self.invitation_updates or self.events
            or self.spent
        )


_collecting: ContextVar[ChangeSet | None] = ContextVar("hearth_changes", default=None)


class collecting:  # noqa: N801 - used as a function: `with collecting(changes):`
    """Note every change made by this task (and only this task) in `changes`.

    An agent's turn runs inside one of these, so the engine can write exactly that
    turn's changes, atomically, while turns of other clusters run concurrently in
    other tasks (a ContextVar is per task). Outside any block, changes go to the
    world's own journal. A class rather than a generator: every turn enters one.
    """

    __slots__ = ("changes", "_token")

    def __init__(self, changes: ChangeSet) -> None:
        self.changes = changes

    def __enter__(self) -> ChangeSet:
        self._token = _collecting.set(self.changes)
        return self.changes

    def __exit__(self, *exc: object) -> None:
        _collecting.reset(self._token)


def collecting_now() -> ChangeSet | None:
    """The journal of the turn running in this task, or None outside any turn."""
    return _collecting.get()
