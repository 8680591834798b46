"""Invitations that lapse, conversations that change hands, turns that say something."""

from __future__ import annotations

import dataclasses

import pytest

from core.constants import MAX_SPEECH_LENGTH
from core.conversation import (
    INVITE_EXPIRY_TICKS,
    Conversation,
    ConversationTurn,
    Invitation,
    InvitationStatus,
    Privacy,
)
from core.types import AgentName, ConversationId

EMBER = AgentName("Ember")
RIVER = AgentName("River")
MOSS = AgentName("Moss")
CID = ConversationId("c1")


# --- Invitation -----------------------------------------------------------------


def test_invitation_defaults() -> None:
    inv = Invitation(EMBER, RIVER, Privacy.PUBLIC, 10)
    assert inv.status is InvitationStatus.PENDING
    assert inv.conversation_id is None


def test_invitation_expires_after_two_ticks() -> None:
    assert INVITE_EXPIRY_TICKS == 2
    inv = Invitation(EMBER, RIVER, Privacy.PRIVATE, 10)
    assert inv.expires_at_tick == 12
    assert not inv.is_expired(9)
    assert not inv.is_expired(10)
    assert not inv.is_expired(11)
    assert inv.is_expired(12)
    assert inv.is_expired(13)


def test_self_invite_rejected() -> None:
    with pytest.raises(ValueError, match="itself"):
        Invitation(EMBER, EMBER, Privacy.PUBLIC, 0)


def test_invitation_coerces_enums() -> None:
    inv = Invitation(EMBER, RIVER, "private", 0, status="declined")  # type: ignore[arg-type]
    assert inv.privacy is Privacy.PRIVATE
    assert inv.status is InvitationStatus.DECLINED
    with pytest.raises(ValueError):
        Invitation(EMBER, RIVER, "secret", 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Invitation(EMBER, RIVER, Privacy.PUBLIC, 0, status="maybe")  # type: ignore[arg-type]


def test_with_status() -> None:
    inv = Invitation(EMBER, RIVER, Privacy.PUBLIC, 0, conversation_id=CID)
    accepted = inv.with_status(InvitationStatus.ACCEPTED)
    assert accepted.status is InvitationStatus.ACCEPTED
    assert inv.status is InvitationStatus.PENDING
    assert accepted.conversation_id == CID
    assert inv.with_status("expired").status is InvitationStatus.EXPIRED  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        inv.with_status("lost")  # type: ignore[arg-type]


def test_invitation_is_frozen() -> None:
    inv = Invitation(EMBER, RIVER, Privacy.PUBLIC, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        inv.status = InvitationStatus.ACCEPTED  # type: ignore[misc]


# --- Conversation ---------------------------------------------------------------


def make_conversation() -> Conversation:
    return Conversation(CID, frozenset({EMBER, RIVER}), Privacy.PUBLIC, 5, EMBER)


def test_conversation_participants_change() -> None:
    c = make_conversation()
    assert c.is_active and c.ended_tick is None
    joined = c.with_participant(MOSS)
    assert joined.participants == frozenset({EMBER, RIVER, MOSS})
    assert c.participants == frozenset({EMBER, RIVER})
    left = joined.without_participant(EMBER)
    assert left.participants == frozenset({RIVER, MOSS})
    assert left.created_by == EMBER  # who started it is history
    assert joined.with_participant(MOSS) == joined
    assert c.without_participant(MOSS) == c


def test_conversation_ended() -> None:
    c = make_conversation()
    done = c.ended(9)
    assert done.ended_tick == 9
    assert not done.is_active
    assert c.is_active
    assert done.participants == c.participants


def test_conversation_validation_and_coercion() -> None:
    with pytest.raises(ValueError, match="needs an id"):
        Conversation(ConversationId(""), frozenset({EMBER}), Privacy.PUBLIC, 0, EMBER)
    c = Conversation(CID, [EMBER, RIVER], "private", 0, EMBER)  # type: ignore[arg-type]
    assert isinstance(c.participants, frozenset)
    assert c.privacy is Privacy.PRIVATE


# --- ConversationTurn -----------------------------------------------------------


def test_turn() -> None:
    t = ConversationTurn(CID, EMBER, "Hello, River.", 6)
    assert (t.conversation_id, t.speaker, t.message, t.tick) == (CID, EMBER, "Hello, River.", 6)


@pytest.mark.parametrize("message", ["", "   ", "\n"])
def test_empty_turn_rejected(message: str) -> None:
    with pytest.raises(ValueError, match="says nothing"):
        ConversationTurn(CID, EMBER, message, 0)


def test_turn_length_limit() -> None:
    assert len(ConversationTurn(CID, EMBER, "a" * MAX_SPEECH_LENGTH, 0).message) == 2000
    with pytest.raises(ValueError, match=str(MAX_SPEECH_LENGTH)):
        ConversationTurn(CID, EMBER, "a" * (MAX_SPEECH_LENGTH + 1), 0)


def test_enum_values() -> None:
    assert {p.value for p in Privacy} == {"public", "private"}
    assert {s.value for s in InvitationStatus} == {"pending", "accepted", "declined", "expired"}


def test_enums_format_as_their_value() -> None:
    for kind in [*Privacy, *InvitationStatus]:
        assert str(kind) == kind.value
        assert f"{kind}" == kind.value
