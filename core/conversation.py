"""Consent-based conversation: invitations, conversations and their turns.

Nobody is pulled into talk: a conversation starts only when an invitation is
accepted, and an unanswered invitation lapses after INVITE_EXPIRY_TICKS.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from core.constants import MAX_SPEECH_LENGTH
from core.types import AgentName, ConversationId

INVITE_EXPIRY_TICKS = 2


class Privacy(StrEnum):
    PUBLIC = "public"
    """Anyone who can see a participant may join."""
    PRIVATE = "private"
    """Only by invitation."""


class InvitationStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class Invitation:
    inviter: AgentName
    invitee: AgentName
    privacy: Privacy
    created_tick: int
    status: InvitationStatus = InvitationStatus.PENDING
    conversation_id: ConversationId | None = None
    """Set when the inviter is already talking: accepting joins that conversation."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "privacy", Privacy(self.privacy))
        object.__setattr__(self, "status", InvitationStatus(self.status))
        if self.inviter == self.invitee:
            raise ValueError("an agent cannot invite itself")

    @property
    def expires_at_tick(self) -> int:
        return self.created_tick + INVITE_EXPIRY_TICKS

    def is_expired(self, tick: int) -> bool:
        return tick >= self.expires_at_tick

    def with_status(self, status: InvitationStatus) -> Invitation:
        return replace(self, status=InvitationStatus(status))


@dataclass(frozen=True, slots=True)
class Membership:
    """One agent's place in a conversation's record: when it (last) joined, and when it
    left (None while it is in it, and for those still there when it ended)."""

    name: AgentName
    joined_tick: int
    left_tick: int | None = None

    def __post_init__(self) -> None:
        if self.left_tick is not None and self.left_tick < self.joined_tick:
            raise ValueError(
                f"{self.name} left at tick {self.left_tick}, before joining at "
                f"{self.joined_tick}; leaving comes at or after joining"
            )


@dataclass(frozen=True, slots=True)
class Conversation:
    id: ConversationId
    participants: frozenset[AgentName]
    privacy: Privacy
    started_tick: int
    created_by: AgentName
    ended_tick: int | None = None
    members: tuple[Membership, ...] = ()
    """Everyone who was ever in it, by name, one each (a rejoin keeps the latest joining):
    the participants with no `left_tick`, those who left with theirs. Left empty, it is
    the participants, each joined at `started_tick`."""

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a conversation needs an id")
        participants = frozenset(self.participants)
        object.__setattr__(self, "participants", participants)
        object.__setattr__(self, "privacy", Privacy(self.privacy))
        if not self.members:
            object.__setattr__(self, "members", tuple(
                Membership(n, self.started_tick) for n in sorted(participants)))
            return
        members = tuple(sorted(self.members, key=lambda m: m.name))
        object.__setattr__(self, "members", members)
        present = frozenset(m.name for m in members if m.left_tick is None)
        if present != participants or len({m.name for m in members}) != len(members):
            raise ValueError(
                "a conversation's members must list each agent once, and those without a "
                f"left_tick must be its participants ({sorted(participants)}), "
                f"not {sorted(present)}"
            )

    @property
    def is_active(self) -> bool:
        return self.ended_tick is None

    def with_participant(self, name: AgentName, tick: int | None = None) -> Conversation:
        """`name` joins at `tick` (None: the start tick); a rejoin replaces its record."""
        if name in self.participants:
            return self
        at = self.started_tick if tick is None else tick
        members = tuple(m for m in self.members if m.name != name) + (Membership(name, at),)
        return replace(self, participants=self.participants | {name}, members=members)

    def without_participant(self, name: AgentName, tick: int | None = None) -> Conversation:
        """`name` leaves at `tick` (None: the start tick), and stays in `members`."""
        if name not in self.participants:
            return self
        at = self.started_tick if tick is None else tick
        members = tuple(m if m.name != name else replace(m, left_tick=max(at, m.joined_tick))
                        for m in self.members)
        return replace(self, participants=self.participants - {name}, members=members)

    def ended(self, tick: int) -> Conversation:
        return replace(self, ended_tick=tick)


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    conversation_id: ConversationId
    speaker: AgentName
    message: str
    tick: int

    def __post_init__(self) -> None:
        if not self.message.strip():
            raise ValueError("an empty turn says nothing")
        if len(self.message) > MAX_SPEECH_LENGTH:
            raise ValueError(
                f"speech is {len(self.message)} characters; the limit is {MAX_SPEECH_LENGTH}"
            )
