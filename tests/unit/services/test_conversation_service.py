"""ConversationService: invitations, privacy, leaving, speech, expiry and invariants."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config import load_config
from core.agent import Agent
from core.constants import MAX_SPEECH_LENGTH
from core.conversation import (
    Conversation,
    ConversationTurn,
    Invitation,
    InvitationStatus,
    Privacy,
)
from core.types import AgentName, ConversationId, Position
from core.world import WorldState
from services.agent_service import AgentService
from services.changes import ChangeSet
from services.conversation_service import (
    Admission,
    ConversationContext,
    ConversationError,
    ConversationService,
    clean_speech,
)
from services.world_service import TerrainRules, WorldService

ASH, BIRCH, CEDAR, DUSK = (AgentName(n) for n in ("Ash", "Birch", "Cedar", "Dusk"))
PLACES = {
    ASH: Position(5, 5),
    BIRCH: Position(6, 5),  # 1 from Ash
    CEDAR: Position(7, 7),  # 2 from Ash and Birch (vision is 3 by day)
    DUSK: Position(18, 18),  # sees nobody
}
RULES = TerrainRules.from_traits(load_config(None).terrain.terrains)


def make_agents() -> AgentService:
    world = WorldService(WorldState(20, 20, 1), np.full((20, 20), 3, np.uint8), RULES)
    agents = [
        Agent(name=name, model_id="m", personality="p", position=pos)
        for name, pos in PLACES.items()
    ]
    service = AgentService(world, agents)
    world.changes = ChangeSet()
    return service


def ids():
    counter = itertools.count(1)
    return lambda: f"c{next(counter)}"


@pytest.fixture
def agents() -> AgentService:
    return make_agents()


@pytest.fixture
def svc(agents: AgentService) -> ConversationService:
    return ConversationService(agents, new_id=ids())


def talking(svc: ConversationService, a: AgentName, b: AgentName, privacy="public", tick=0):
    svc.create_invite(a, b, privacy, tick)
    conv, _ = svc.accept_invite(b, tick)
    return conv


def snapshot(svc: ConversationService):
    """Everything a command could change: public answers, private tables, the ChangeSet."""
    public = (
        svc.active_conversations(),
        svc.pending_invitations(),
        [svc.get_conversation_context(n) for n in PLACES],
        {c.id: (svc.get_conversation(c.id), svc.turns(c.id)) for c in svc.active_conversations()},
    )
    # Values are frozen, so copying the containers one level down is a full copy.
    private = {
        k: {key: copy.copy(value) for key, value in v.items()}
        for k, v in vars(svc).items() if k not in ("agents", "_new_id")
    }
    changes = svc.agents.changes
    return public, private, {k: copy.copy(v) for k, v in vars(changes).items()}


def refused(svc: ConversationService, match: str, command, *args):
    before = snapshot(svc)
    with pytest.raises(ConversationError, match=match):
        command(*args)
    assert snapshot(svc) == before
    assert svc.check_invariants() == []


# --- create_invite ----------------------------------------------------------------


def test_invite_someone_you_see(svc: ConversationService) -> None:
    inv = svc.create_invite(ASH, BIRCH, "private", 4)
    assert inv == Invitation(ASH, BIRCH, Privacy.PRIVATE, 4)
    assert svc.has_pending_invitation(BIRCH) and not svc.has_pending_invitation(ASH)
    assert svc.pending_invitation_for(BIRCH) == inv
    assert svc.agents.changes.invitations == [inv]
    assert svc.get_conversation_for_agent(ASH) is None


def test_invite_privacy_defaults_to_public(svc: ConversationService) -> None:
    assert svc.create_invite(ASH, BIRCH, None, 0).privacy is Privacy.PUBLIC
    assert svc.create_invite(ASH, CEDAR, " PRIVATE ", 0).privacy is Privacy.PRIVATE


def test_invite_from_a_conversation_carries_it(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH, "private")
    inv = svc.create_invite(BIRCH, CEDAR, None, 1)
    assert inv.conversation_id == conv.id
    assert inv.privacy is Privacy.PRIVATE


def test_invite_failures(svc: ConversationService) -> None:
    refused(svc, "cannot invite yourself", svc.create_invite, ASH, ASH, "public", 0)
    refused(svc, "nobody called 'Nobody'", svc.create_invite, "Nobody", BIRCH, "public", 0)
    refused(svc, "nobody called 'Nobody'", svc.create_invite, ASH, "Nobody", "public", 0)
    refused(svc, "Dusk is not within sight", svc.create_invite, ASH, DUSK, "public", 0)
    refused(svc, "privacy must be 'public' or 'private'", svc.create_invite, ASH, BIRCH,
            "secret", 0)


def test_invitee_with_a_pending_invitation_is_refused_naming_the_inviter(
    svc: ConversationService,
) -> None:
    svc.create_invite(ASH, CEDAR, "public", 0)
    refused(svc, "Cedar already has a pending invitation from Ash", svc.create_invite,
            BIRCH, CEDAR, "public", 0)
    refused(svc, "you have already invited Cedar", svc.create_invite, ASH, CEDAR, "public", 0)


def test_invitee_already_talking_is_refused(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    refused(svc, "Birch is already in a conversation", svc.create_invite, CEDAR, BIRCH,
            "public", 1)
    refused(svc, "Birch is already in your conversation", svc.create_invite, ASH, BIRCH,
            "public", 1)


def test_invite_privacy_must_match_your_conversation(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH, "public")
    refused(svc, "you are in a public conversation.*not private", svc.create_invite,
            ASH, CEDAR, "private", 1)


# --- accept_invite ----------------------------------------------------------------


def test_accept_starts_a_conversation(svc: ConversationService) -> None:
    inv = svc.create_invite(ASH, BIRCH, "private", 3)
    conv, accepted = svc.accept_invite(BIRCH, 4)
    assert conv == Conversation(ConversationId("c1"), frozenset({ASH, BIRCH}), Privacy.PRIVATE,
                                4, ASH)
    assert accepted == inv.with_status(InvitationStatus.ACCEPTED)
    assert svc.get_conversation_for_agent(ASH) == conv == svc.get_conversation_for_agent(BIRCH)
    assert not svc.has_pending_invitation(BIRCH)
    assert svc.active_conversations() == [conv]
    assert svc.participants(conv.id) == [ASH, BIRCH]
    changes = svc.agents.changes
    assert set(changes.conversations) == {conv.id}
    # Created and accepted before a flush: the row goes in once, already accepted.
    assert changes.invitations == [accepted]
    assert changes.invitation_updates == []


def test_accept_after_a_flush_is_noted_as_an_update(svc: ConversationService) -> None:
    inv = svc.create_invite(ASH, BIRCH, "public", 0)
    svc.agents.world.changes = ChangeSet()
    svc.accept_invite(BIRCH, 1)
    assert svc.agents.changes.invitations == []
    assert svc.agents.changes.invitation_updates == [(inv, InvitationStatus.ACCEPTED)]


def test_accept_joins_the_conversation_the_invitation_carries(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH, "private")
    svc.create_invite(BIRCH, CEDAR, "private", 1)
    joined, accepted = svc.accept_invite(CEDAR, 2)
    assert joined.id == conv.id
    assert joined.participants == {ASH, BIRCH, CEDAR}
    assert accepted.status is InvitationStatus.ACCEPTED
    assert svc.check_invariants() == []


def test_accept_with_no_invitation(svc: ConversationService) -> None:
    refused(svc, "no pending invitation to accept", svc.accept_invite, BIRCH, 0)


def test_invitation_lapses_after_exactly_two_ticks(svc: ConversationService) -> None:
    svc.create_invite(ASH, BIRCH, "public", 10)
    refused(svc, "the invitation has lapsed", svc.accept_invite, BIRCH, 12)
    refused(svc, "the invitation has lapsed", svc.decline_invite, BIRCH, 12)
    conv, _ = svc.accept_invite(BIRCH, 11)
    assert conv.participants == {ASH, BIRCH}


def test_accept_while_already_talking(svc: ConversationService) -> None:
    svc.create_invite(ASH, CEDAR, "public", 0)
    talking(svc, BIRCH, ASH, "public")  # Birch and Ash now talk
    svc.join_conversation(CEDAR, BIRCH, 0)  # Cedar joins them meanwhile
    refused(svc, "already in a conversation; leave it", svc.accept_invite, CEDAR, 1)


def test_accept_when_the_invited_conversation_has_ended(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    svc.create_invite(ASH, CEDAR, "public", 0)
    svc.leave_conversation(BIRCH, 1)
    refused(svc, "the conversation Ash invited you to has ended", svc.accept_invite, CEDAR, 1)


def test_accept_when_the_inviter_left_the_conversation(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    svc.create_invite(ASH, CEDAR, "public", 0)
    svc.agents.update_position(DUSK, Position(6, 6))
    svc.join_conversation(DUSK, BIRCH, 0)
    svc.leave_conversation(ASH, 1)
    assert svc.get_conversation_for_agent(BIRCH).participants == {BIRCH, DUSK}
    refused(svc, "Ash has left the conversation they invited you to", svc.accept_invite,
            CEDAR, 1)


def test_accept_joins_a_free_inviters_new_conversation_of_the_same_privacy(
    svc: ConversationService,
) -> None:
    svc.create_invite(ASH, BIRCH, "public", 0)
    svc.create_invite(ASH, CEDAR, "public", 0)
    first, _ = svc.accept_invite(BIRCH, 0)
    second, _ = svc.accept_invite(CEDAR, 1)
    assert second.id == first.id
    assert second.participants == {ASH, BIRCH, CEDAR}


def test_accept_refused_when_the_inviter_began_another_kind_of_conversation(
    svc: ConversationService,
) -> None:
    svc.create_invite(ASH, BIRCH, "private", 0)
    svc.create_invite(ASH, CEDAR, "public", 0)
    svc.accept_invite(BIRCH, 0)
    refused(svc, "Ash has since begun a private conversation.*public one", svc.accept_invite,
            CEDAR, 1)


def test_accept_refused_when_the_new_id_is_taken(agents: AgentService) -> None:
    svc = ConversationService(agents, new_id=lambda: "same")
    talking(svc, ASH, BIRCH)
    svc.agents.update_position(DUSK, Position(8, 8))
    svc.create_invite(CEDAR, DUSK, "public", 0)
    refused(svc, "'same' is already in use", svc.accept_invite, DUSK, 0)


# --- decline_invite -----------------------------------------------------------------


def test_decline(svc: ConversationService) -> None:
    inv = svc.create_invite(ASH, BIRCH, "public", 0)
    svc.agents.world.changes = ChangeSet()
    declined = svc.decline_invite(BIRCH, 1)
    assert declined == inv.with_status(InvitationStatus.DECLINED)
    assert not svc.has_pending_invitation(BIRCH)
    assert svc.get_conversation_for_agent(BIRCH) is None
    assert svc.agents.changes.invitation_updates == [(inv, InvitationStatus.DECLINED)]
    # Declined, Birch may be invited again, by anyone.
    assert svc.create_invite(CEDAR, BIRCH, "public", 1).inviter == CEDAR


def test_decline_with_no_invitation(svc: ConversationService) -> None:
    refused(svc, "no pending invitation to decline", svc.decline_invite, BIRCH, 0)


# --- join_conversation --------------------------------------------------------------


def test_join_a_public_conversation_you_see(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH)
    svc.agents.world.changes = ChangeSet()
    joined = svc.join_conversation(CEDAR, ASH, 2)
    assert joined.id == conv.id and joined.participants == {ASH, BIRCH, CEDAR}
    assert svc.get_conversation_for_agent(CEDAR) == joined
    assert set(svc.agents.changes.conversations) == {conv.id}


def test_join_a_private_conversation_is_refused(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH, "private")
    refused(svc, "^that conversation is private; you would need an invitation$",
            svc.join_conversation, CEDAR, ASH, 1)


def test_join_failures(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    refused(svc, "cannot join yourself", svc.join_conversation, CEDAR, CEDAR, 1)
    refused(svc, "nobody called 'Nobody'", svc.join_conversation, "Nobody", ASH, 1)
    refused(svc, "nobody called 'Nobody'", svc.join_conversation, CEDAR, "Nobody", 1)
    refused(svc, "Ash is not within sight", svc.join_conversation, DUSK, ASH, 1)
    refused(svc, "already in a conversation; leave it", svc.join_conversation, BIRCH, ASH, 1)
    svc.agents.update_position(DUSK, Position(8, 8))
    refused(svc, "Cedar is not in a conversation", svc.join_conversation, DUSK, CEDAR, 1)


def test_sight_is_checked_before_anything_about_the_other_is_revealed(
    svc: ConversationService,
) -> None:
    talking(svc, ASH, BIRCH, "private")
    svc.agents.update_position(CEDAR, Position(15, 15))
    refused(svc, "Ash is not within sight", svc.join_conversation, CEDAR, ASH, 1)
    refused(svc, "Birch is not within sight", svc.create_invite, CEDAR, BIRCH, "public", 1)


def test_a_conversation_continues_at_any_distance(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    svc.agents.update_position(BIRCH, Position(19, 0))
    _, turn = svc.add_turn(BIRCH, "still here", 1)
    assert svc.get_conversation_context(ASH).unseen_turns == (turn,)


# --- leave_conversation -------------------------------------------------------------


def test_leaving_a_two_person_conversation_ends_it(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH)
    svc.agents.world.changes = ChangeSet()
    after, ended = svc.leave_conversation(ASH, 5)
    assert ended
    assert after.ended_tick == 5 and not after.is_active
    assert after.participants == {BIRCH}  # kept as history: who was there at the end
    assert svc.get_conversation_for_agent(ASH) is None
    assert svc.get_conversation_for_agent(BIRCH) is None
    assert svc.active_conversations() == []
    assert svc.get_conversation(conv.id) == after
    assert set(svc.agents.changes.conversations) == {conv.id}
    refused(svc, "you are not in a conversation", svc.leave_conversation, BIRCH, 5)
    refused(svc, "you are not in a conversation", svc.add_turn, BIRCH, "hello?", 5)
    # Both are free to talk again, in a new conversation.
    again = talking(svc, BIRCH, ASH, tick=6)
    assert again.id != conv.id


def test_leaving_a_larger_conversation_keeps_it_going(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    svc.join_conversation(CEDAR, ASH, 1)
    after, ended = svc.leave_conversation(ASH, 2)
    assert not ended and after.is_active
    assert after.participants == {BIRCH, CEDAR}
    assert svc.get_conversation_for_agent(ASH) is None
    after, ended = svc.leave_conversation(CEDAR, 3)
    assert ended and after.participants == {BIRCH}


def test_leave_when_not_talking(svc: ConversationService) -> None:
    refused(svc, "you are not in a conversation", svc.leave_conversation, ASH, 0)


# --- add_turn -----------------------------------------------------------------------


def test_add_turn(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH)
    said_in, turn = svc.add_turn(ASH, "  Hello,\r\n\tBirch!  ", 1)
    assert said_in == conv
    assert turn == ConversationTurn(conv.id, ASH, "Hello,\n\tBirch!", 1)
    assert svc.turns(conv.id) == [turn]
    assert svc.agents.changes.turns == [turn]


def test_add_turn_failures(svc: ConversationService) -> None:
    refused(svc, "you are not in a conversation", svc.add_turn, ASH, "hi", 0)
    talking(svc, ASH, BIRCH)
    refused(svc, "the message is empty", svc.add_turn, ASH, "", 1)
    refused(svc, "the message is empty", svc.add_turn, ASH, " \n\t ", 1)
    refused(svc, "the message is empty", svc.add_turn, ASH, "\x00\x07\x1b[31m", 1)
    refused(svc, f"{MAX_SPEECH_LENGTH + 1} characters; the limit is {MAX_SPEECH_LENGTH}",
            svc.add_turn, ASH, "a" * (MAX_SPEECH_LENGTH + 1), 1)
    refused(svc, "a message must be text", svc.add_turn, ASH, None, 1)
    _, turn = svc.add_turn(ASH, "a" * MAX_SPEECH_LENGTH, 1)
    assert len(turn.message) == MAX_SPEECH_LENGTH


def test_speech_keeps_newlines_and_tabs_and_drops_other_controls() -> None:
    assert clean_speech("a\tb\nc") == "a\tb\nc"
    assert clean_speech("one\rtwo\r\nthree\u2028four") == "one\ntwo\nthree\nfour"
    assert clean_speech("\x1b[1;31mred\x1b[0m bell\x07 nul\x00 del\x7f c1\x85") == (
        "red bell nul del c1"
    )
    assert clean_speech("\x1b]0;title\x07hi") == "hi"
    assert clean_speech("abc\u202edef") == "abcdef"
    assert clean_speech("emoji 👩\u200d🌾 stays") == "emoji 👩\u200d🌾 stays"
    # Length is measured after cleaning: controls do not count against the limit.
    assert len(clean_speech("a" * MAX_SPEECH_LENGTH + "\x00" * 10)) == MAX_SPEECH_LENGTH


# --- unseen turns -------------------------------------------------------------------


def test_unseen_turns_are_those_since_your_own_last_turn(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH)
    _, a1 = svc.add_turn(ASH, "one", 1)
    _, b1 = svc.add_turn(BIRCH, "two", 1)
    _, b2 = svc.add_turn(BIRCH, "three", 2)
    ctx = svc.get_conversation_context(ASH)
    assert ctx == ConversationContext(ASH, conv, (ASH, BIRCH), (b1, b2), None)
    assert ctx.others == (BIRCH,)
    assert svc.get_conversation_context(BIRCH).unseen_turns == ()
    _, a2 = svc.add_turn(ASH, "four", 3)
    assert svc.get_conversation_context(ASH).unseen_turns == ()
    assert svc.get_conversation_context(BIRCH).unseen_turns == (a2,)


def test_a_newcomer_sees_only_turns_since_joining(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    svc.add_turn(ASH, "before Cedar came", 1)
    svc.join_conversation(CEDAR, ASH, 1)
    _, after = svc.add_turn(BIRCH, "welcome", 1)
    assert svc.get_conversation_context(CEDAR).unseen_turns == (after,)


def test_rejoining_starts_afresh(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH)
    svc.join_conversation(CEDAR, ASH, 1)
    svc.add_turn(CEDAR, "bye", 1)
    svc.leave_conversation(CEDAR, 1)
    svc.add_turn(ASH, "while Cedar was away", 2)
    svc.join_conversation(CEDAR, BIRCH, 3)
    assert svc.get_conversation_context(CEDAR).unseen_turns == ()
    _, turn = svc.add_turn(BIRCH, "back again", 3)
    assert svc.get_conversation_context(CEDAR).unseen_turns == (turn,)


def test_context_without_a_conversation_shows_the_invitation(svc: ConversationService) -> None:
    inv = svc.create_invite(ASH, BIRCH, "public", 0)
    assert svc.get_conversation_context(BIRCH) == ConversationContext(BIRCH, None, (), (), inv)
    assert svc.get_conversation_context(DUSK) == ConversationContext(DUSK, None, (), (), None)


# --- expire_invitations -------------------------------------------------------------


def test_expire_invitations_at_exactly_two_ticks(svc: ConversationService) -> None:
    first = svc.create_invite(ASH, BIRCH, "public", 10)
    second = svc.create_invite(ASH, CEDAR, "public", 11)
    svc.agents.world.changes = ChangeSet()
    assert svc.expire_invitations(11) == []
    assert svc.expire_invitations(12) == [first.with_status(InvitationStatus.EXPIRED)]
    assert not svc.has_pending_invitation(BIRCH) and svc.has_pending_invitation(CEDAR)
    assert svc.agents.changes.invitation_updates == [(first, InvitationStatus.EXPIRED)]
    assert svc.expire_invitations(12) == []
    assert svc.expire_invitations(20) == [second.with_status(InvitationStatus.EXPIRED)]
    assert svc.pending_invitations() == []


def test_expired_within_one_flush_is_written_once_as_expired(svc: ConversationService) -> None:
    inv = svc.create_invite(ASH, BIRCH, "public", 0)
    svc.expire_invitations(2)
    assert svc.agents.changes.invitations == [inv.with_status(InvitationStatus.EXPIRED)]
    assert svc.agents.changes.invitation_updates == []


# --- restoring state ----------------------------------------------------------------


def test_state_restores_from_what_storage_holds(agents: AgentService) -> None:
    svc = ConversationService(agents, new_id=ids())
    conv = talking(svc, ASH, BIRCH, "private")
    svc.add_turn(ASH, "one", 1)
    _, b1 = svc.add_turn(BIRCH, "two", 1)
    svc.agents.update_position(DUSK, Position(8, 8))
    inv = svc.create_invite(CEDAR, DUSK, "public", 1)

    restored = ConversationService(
        agents, new_id=lambda: "c9",
        conversations=[svc.get_conversation(conv.id)],
        turns=svc.turns(conv.id),
        invitations=[inv, Invitation(ASH, CEDAR, Privacy.PUBLIC, 0, InvitationStatus.DECLINED)],
    )
    assert restored.check_invariants() == []
    assert restored.active_conversations() == [conv]
    assert restored.pending_invitations() == [inv]
    assert restored.get_conversation_context(ASH).unseen_turns == (b1,)
    conv2, _ = restored.accept_invite(DUSK, 2)
    assert conv2.id == "c9"


@pytest.mark.parametrize(
    ("conversations", "turns", "invitations", "match"),
    [
        ([Conversation(ConversationId("x"), {ASH, BIRCH}, Privacy.PUBLIC, 0, ASH)] * 2, [], [],
         "appears twice"),
        ([Conversation(ConversationId("x"), {ASH, BIRCH}, Privacy.PUBLIC, 0, ASH),
          Conversation(ConversationId("y"), {ASH, CEDAR}, Privacy.PUBLIC, 0, ASH)], [], [],
         "Ash in two active conversations"),
        ([], [ConversationTurn(ConversationId("x"), ASH, "hi", 0)], [], "unknown conversation"),
        ([], [], [Invitation(ASH, BIRCH, Privacy.PUBLIC, 0),
                  Invitation(CEDAR, BIRCH, Privacy.PUBLIC, 0)], "two pending invitations"),
        ([Conversation(ConversationId("x"), {ASH}, Privacy.PUBLIC, 0, ASH)], [], [],
         "has 1 participant"),
        ([Conversation(ConversationId("x"), {ASH, AgentName("Ghost")}, Privacy.PUBLIC, 0, ASH)],
         [], [], "Ghost, in 'x', is not an agent"),
    ],
)
def test_contradictory_stored_state_is_refused(
    agents: AgentService, conversations, turns, invitations, match: str
) -> None:
    with pytest.raises(ConversationError, match=match):
        ConversationService(agents, new_id=ids(), conversations=conversations, turns=turns,
                            invitations=invitations)


# --- invariants ---------------------------------------------------------------------


def test_check_invariants_reports_broken_state(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH, "private")
    assert svc.check_invariants() == []
    # Smuggle Cedar in as if it had joined without an invitation.
    svc._conversations[conv.id] = conv.with_participant(CEDAR)
    svc._active[CEDAR] = conv.id
    svc._admitted[(conv.id, CEDAR)] = Admission.JOINED
    problems = svc.check_invariants()
    assert problems == [f"Cedar is in private conversation {conv.id!r} without an invitation"]
    # And a second active conversation holding Ash.
    other = Conversation(ConversationId("zz"), {ASH, DUSK}, Privacy.PUBLIC, 0, ASH)
    svc._conversations[other.id] = other
    problems = svc.check_invariants()
    assert any("Ash is in two active conversations" in p for p in problems)
    assert any("Dusk is in 'zz' but not indexed there" in p for p in problems)


EVERYONE = [ASH, BIRCH, CEDAR, DUSK]
OP_WEIGHTS = {
    "invite": 6, "accept": 5, "decline": 1, "join": 3, "leave": 2, "say": 4,
    "expire": 1, "tick": 2, "move": 2, "flush": 1,
}


def random_op(rnd, svc: ConversationService) -> tuple:
    """One command with arguments; names are often the ones that make it succeed."""
    kind = rnd.choices(list(OP_WEIGHTS), weights=list(OP_WEIGHTS.values()))[0]
    a, b = rnd.choice(EVERYONE), rnd.choice(EVERYONE)
    pending = svc.pending_invitations()
    if kind in ("accept", "decline") and pending and rnd.random() < 0.8:
        a = rnd.choice(pending).invitee
    if kind in ("join", "say") and svc.active_conversations() and rnd.random() < 0.7:
        b = rnd.choice(sorted(rnd.choice(svc.active_conversations()).participants))
        if kind == "say":
            a = b
    if kind == "invite":
        return (kind, a, b, rnd.choice(["public", "private", None]))
    if kind in ("accept", "decline", "leave"):
        return (kind, a)
    if kind == "join":
        return (kind, a, b)
    if kind == "say":
        return (kind, a, rnd.choice(["hi", "", " \t", "a\x00b", "x" * (MAX_SPEECH_LENGTH + 1)]))
    if kind == "move":
        near = rnd.random() < 0.8
        return (kind, a, rnd.randint(3, 8) if near else rnd.randint(0, 19),
                rnd.randint(3, 8) if near else rnd.randint(0, 19))
    return (kind,)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(10, 80))
def test_random_commands_never_break_the_invariants(rnd, steps: int) -> None:
    agents = make_agents()
    svc = ConversationService(agents, new_id=ids())
    tick = 0
    done: list[tuple] = []
    for _ in range(steps):
        op = random_op(rnd, svc)
        done.append(op)
        kind, args = op[0], op[1:]
        if kind == "tick":
            tick += 1
            continue
        if kind == "move":
            agents.update_position(args[0], Position(args[1], args[2]))
            continue
        if kind == "flush":
            agents.world.changes = ChangeSet()
            continue
        command = {
            "invite": svc.create_invite,
            "accept": svc.accept_invite,
            "decline": svc.decline_invite,
            "join": svc.join_conversation,
            "leave": svc.leave_conversation,
            "say": svc.add_turn,
            "expire": svc.expire_invitations,
        }[kind]
        before = snapshot(svc)
        try:
            command(*args, tick)
        except ConversationError:
            assert snapshot(svc) == before, f"{op} failed but changed something, after {done}"
        assert svc.check_invariants() == [], done
        talkers = [n for c in svc.active_conversations() for n in c.participants]
        assert len(talkers) == len(set(talkers)), done
        for inv in svc.pending_invitations():
            assert inv.status is InvitationStatus.PENDING


# --- no word lost: speaking, then leaving (issue 27) -----------------------------------


def test_the_last_words_and_the_end_reach_the_one_left_behind(
    svc: ConversationService, agents: AgentService
) -> None:
    conv = talking(svc, ASH, BIRCH, "private", tick=3)
    agents.set_last_active(BIRCH, 3)  # Birch's turn this tick is over
    svc.add_turn(ASH, "I must go. Farewell!", 4)
    svc.leave_conversation(ASH, 4)

    assert not svc.is_talking(BIRCH) and svc.has_farewell(BIRCH)
    told = svc.get_conversation_context(BIRCH)
    assert told.ended and told.left == (ASH,) and told.participants == () and told.others == ()
    assert [t.message for t in told.unseen_turns] == ["I must go. Farewell!"]
    assert told.conversation is not None and told.conversation.id == conv.id
    assert told.conversation.ended_tick == 4
    assert not svc.has_farewell(ASH) and not svc.get_conversation_context(ASH).ended
    assert not svc.has_farewell(CEDAR)  # never in it: told nothing
    assert svc.check_invariants() == []

    agents.set_last_active(BIRCH, 4)  # Birch's next turn came and went: told once
    assert not svc.has_farewell(BIRCH)
    assert svc.get_conversation_context(BIRCH) == ConversationContext(BIRCH, None, (), (), None)


def test_a_farewell_holds_only_what_was_not_yet_heard(
    svc: ConversationService, agents: AgentService
) -> None:
    talking(svc, ASH, BIRCH, tick=1)
    svc.add_turn(ASH, "one", 1)
    svc.add_turn(BIRCH, "two", 1)  # Birch has heard "one"
    svc.leave_conversation(ASH, 2)  # leaving without a word
    told = svc.get_conversation_context(BIRCH)
    assert told.ended and told.unseen_turns == () and told.left == (ASH,)
    # In a new conversation, the farewell comes first until Birch's turn is over.
    svc.create_invite(CEDAR, BIRCH, None, 3)
    svc.accept_invite(BIRCH, 3)
    now = svc.get_conversation_context(BIRCH)
    assert not now.ended and now.left == () and now.earlier == told
    svc.agents.set_last_active(BIRCH, 3)
    assert svc.get_conversation_context(BIRCH).earlier is None


def test_those_who_remain_hear_the_last_words_then_who_left(svc: ConversationService) -> None:
    conv = talking(svc, ASH, BIRCH, tick=1)
    svc.join_conversation(CEDAR, ASH, 1)
    svc.add_turn(BIRCH, "hello all", 2)
    svc.add_turn(ASH, "bye now", 2)
    after, ended = svc.leave_conversation(ASH, 2)
    assert not ended
    for name in (BIRCH, CEDAR):
        context = svc.get_conversation_context(name)
        assert context.left == (ASH,) and not context.ended
        assert context.unseen_turns[-1].message == "bye now"
    svc.add_turn(BIRCH, "so long", 3)  # Birch spoke after: the leaving is behind it
    assert svc.get_conversation_context(BIRCH).left == ()
    assert svc.get_conversation_context(CEDAR).left == (ASH,)
    # Whoever comes in later is not told of a leaving before its time.
    svc.join_conversation(ASH, BIRCH, 4)
    assert svc.get_conversation_context(ASH).left == ()
    assert [m.name for m in after.members] == [ASH, BIRCH, CEDAR] and conv.id == after.id


def test_members_record_everyone_who_was_ever_in_it(svc: ConversationService) -> None:
    talking(svc, ASH, BIRCH, tick=1)
    svc.join_conversation(CEDAR, ASH, 2)
    svc.leave_conversation(CEDAR, 2)  # in and out within one tick
    svc.leave_conversation(ASH, 3)
    conv = svc.get_conversation("c1")
    assert conv is not None and conv.ended_tick == 3
    assert {m.name: (m.joined_tick, m.left_tick) for m in conv.members} == {
        ASH: (1, 3), BIRCH: (1, None), CEDAR: (2, 2)}


def test_a_farewell_is_still_told_when_an_old_invitation_starts_a_new_talk(
    svc: ConversationService,
) -> None:
    svc.create_invite(ASH, CEDAR, "public", 1)  # Ash asks Cedar while free ...
    talking(svc, BIRCH, ASH, tick=1)  # ... then talks with Birch
    svc.add_turn(BIRCH, "Goodbye, Ash.", 2)
    svc.leave_conversation(BIRCH, 2)
    svc.accept_invite(CEDAR, 2)  # before Ash's next turn, Cedar says yes
    context = svc.get_conversation_context(ASH)
    assert context.others == (CEDAR,) and not context.ended
    earlier = context.earlier
    assert earlier is not None and earlier.ended and earlier.left == (BIRCH,)
    assert [t.message for t in earlier.unseen_turns] == ["Goodbye, Ash."]
    svc.agents.set_last_active(ASH, 2)
    assert svc.get_conversation_context(ASH).earlier is None
