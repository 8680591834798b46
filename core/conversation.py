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
class Conversation:
    id: ConversationId
    participants: frozenset[AgentName]
    privacy: Privacy
    started_tick: int
    created_by: AgentName
    ended_tick: int | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a conversation needs an id")
        object.__setattr__(self, "participants", frozenset(self.participants))
        object.__setattr__(self, "privacy", Privacy(self.privacy))

    @property
    def is_active(self) -> bool:
        return self.ended_tick is None

    def with_participant(self, name: AgentName) -> Conversation:
        return replace(self, participants=self.participants | {name})

    def without_participant(self, name: AgentName) -> Conversation:
        return replace(self, participants=self.participants - {name})

    def ended(self, tick: int) -> Conversation:
        return replace(self, ended_tick=tick)


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    conversation_id: ConversationId
    speaker: AgentName
    message: str
    tick: int

    def __init__(self, conversation_id: ConversationId, speaker: AgentName, message: str,
                 tick: int) -> None:
        # Written out (the dataclass still gives repr, equality and the fields): one is
        # made for every remark, and the generated frozen __init__ sets each field with
        # object.__setattr__. The checks are the ones __post_init__ made.
        if not message.strip():
            raise ValueError("an empty turn says nothing")
        if len(message) > MAX_SPEECH_LENGTH:
            raise ValueError(
                f"speech is {len(message)} characters; the limit is {MAX_SPEECH_LENGTH}"
            )
        _set_conversation_id(self, conversation_id)
        _set_speaker(self, speaker)
        _set_message(self, message)
        _set_tick(self, tick)


_set_conversation_id, _set_speaker, _set_message, _set_tick = (
    ConversationTurn.__dict__[name].__set__
    for name in ("conversation_id", "speaker", "message", "tick"))
"""ConversationTurn's slot setters, which its frozen __setattr__ cannot block."""
