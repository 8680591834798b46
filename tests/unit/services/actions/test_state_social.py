"""sleep, and talk by consent: speak, invite, accept, decline, join and leave."""

from __future__ import annotations

import pytest

from core.actions import (
    ACTION_TYPES,
    AcceptInviteAction,
    DeclineInviteAction,
    InviteAction,
    JoinConversationAction,
    LeaveConversationAction,
    SleepAction,
    SpeakAction,
)
from core.conversation import InvitationStatus, Privacy
from core.events import (
    AgentSleptEvent,
    ConversationEndedEvent,
    ConversationJoinedEvent,
    ConversationLeftEvent,
    ConversationStartedEvent,
    ConversationTurnEvent,
    InvitationAcceptedEvent,
    InvitationDeclinedEvent,
    InvitationSentEvent,
)
from core.types import Position
from tests.tool_calls import call_tool
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    CEDAR,
    DUSK,
    SAMPLE_ACTIONS,
    agent,
    fails,
    fails_tool,
    put,
    succeeds,
)


def talking(sim, a=ASH, b=BIRCH, privacy=Privacy.PUBLIC, tick=0) -> str:
    """a invites b, b accepts: the conversation's id."""
    succeeds(sim, a, InviteAction(b, privacy), tick)
    return succeeds(sim, b, AcceptInviteAction(), tick).data["conversation"]


# ------------------------------------------------------------------ sleep


def test_sleep(sim):
    result = succeeds(sim, ASH, SleepAction(), tick=14)
    assert agent(sim, ASH).is_sleeping
    assert result.events == (AgentSleptEvent(14, ASH),)
    assert ASH in sim.changes.agents


def test_the_sample_actions_cover_every_action():
    assert set(SAMPLE_ACTIONS) == set(ACTION_TYPES)


@pytest.mark.parametrize("name", sorted(ACTION_TYPES))
def test_every_action_is_refused_while_asleep(sim, name):
    succeeds(sim, ASH, SleepAction())
    result = fails(sim, ASH, SAMPLE_ACTIONS[name])
    assert result.message == "you are asleep; you will wake in the morning"


async def test_tool_calls_are_refused_while_asleep(sim):
    succeeds(sim, ASH, SleepAction())
    result = await fails_tool(sim, ASH, "walk", {"direction": "north"})
    assert "asleep" in result.message


def test_an_unknown_agent_cannot_act(sim):
    result = fails(sim, "Nobody", SleepAction())
    assert result.message == "nobody called 'Nobody' lives here"


# ------------------------------------------------------------------ speak


def test_speak_outside_a_conversation_is_refused(sim):
    result = fails(sim, ASH, SpeakAction("hello?"))
    assert "you are not in a conversation" in result.message


def test_speak_in_a_conversation(sim):
    cid = talking(sim)
    result = succeeds(sim, ASH, SpeakAction("hello \x1b[2Jthere\nfriend"), tick=1)
    assert result.events == (ConversationTurnEvent(1, cid, ASH, "hello there\nfriend"),)
    assert result.message.endswith("(to Birch)")
    (turn,) = sim.conversations.turns(cid)
    assert (turn.speaker, turn.message, turn.tick) == (ASH, "hello there\nfriend", 1)
    assert sim.changes.turns == [turn]


def test_speak_nothing_but_control_characters_is_refused(sim):
    talking(sim)
    result = fails(sim, ASH, SpeakAction("\x07\x1b[0m\u200b"))
    assert "nothing left to say" in result.message


# ------------------------------------------------------------------ invite


def test_invite_someone_in_sight(sim):
    result = succeeds(sim, ASH, InviteAction(CEDAR, Privacy.PRIVATE), tick=3)
    assert result.events == (InvitationSentEvent(3, ASH, CEDAR, Privacy.PRIVATE),)
    pending = sim.conversations.pending_invitation_for(CEDAR)
    assert (pending.inviter, pending.privacy, pending.created_tick) == (ASH, Privacy.PRIVATE, 3)
    assert sim.changes.invitations == [pending]
    assert not sim.conversations.is_talking(ASH)


def test_invite_someone_out_of_sight_is_refused(sim):
    result = fails(sim, ASH, InviteAction(DUSK))
    assert "not within sight" in result.message


def test_invite_yourself_is_refused(sim):
    assert fails(sim, ASH, InviteAction(ASH)).message == "you cannot invite yourself"


def test_invite_someone_unknown_is_refused(sim):
    assert "nobody called 'Nobody'" in fails(sim, ASH, InviteAction("Nobody")).message


def test_invite_twice_is_refused(sim):
    succeeds(sim, ASH, InviteAction(BIRCH))
    result = fails(sim, ASH, InviteAction(BIRCH))
    assert "already invited Birch" in result.message


def test_invite_someone_invited_by_another_is_refused(sim):
    succeeds(sim, ASH, InviteAction(BIRCH))
    result = fails(sim, CEDAR, InviteAction(BIRCH))
    assert "already has a pending invitation from Ash" in result.message


def test_invite_someone_already_talking_is_refused(sim):
    talking(sim)
    result = fails(sim, CEDAR, InviteAction(BIRCH))
    assert result.message == "Birch is already in a conversation"


def test_invite_a_third_into_a_private_conversation(sim):
    cid = talking(sim, privacy=Privacy.PRIVATE)
    succeeds(sim, ASH, InviteAction(CEDAR, Privacy.PRIVATE), tick=1)
    result = succeeds(sim, CEDAR, AcceptInviteAction(), tick=1)
    assert result.data["conversation"] == cid
    assert [type(e) for e in result.events] == [InvitationAcceptedEvent, ConversationJoinedEvent]
    assert sim.conversations.participants(cid) == [ASH, BIRCH, CEDAR]


def test_invite_into_a_private_conversation_as_public_is_refused(sim):
    talking(sim, privacy=Privacy.PRIVATE)
    result = fails(sim, ASH, InviteAction(CEDAR, Privacy.PUBLIC))
    assert "private conversation" in result.message


async def test_invite_without_privacy_from_a_private_conversation_takes_its_privacy(sim):
    talking(sim, privacy=Privacy.PRIVATE)
    result = await call_tool(sim.engine, ASH, "invite", {"invitee": "Cedar"}, 0)
    assert result.success, result.message
    assert sim.conversations.pending_invitation_for(CEDAR).privacy is Privacy.PRIVATE


# ------------------------------------------------------------------ accept and decline


def test_accept_starts_a_conversation_of_two(sim):
    succeeds(sim, ASH, InviteAction(BIRCH), tick=0)
    result = succeeds(sim, BIRCH, AcceptInviteAction(), tick=1)
    cid = result.data["conversation"]
    assert result.events == (
        InvitationAcceptedEvent(1, BIRCH, ASH, cid),
        ConversationStartedEvent(1, cid, frozenset({ASH, BIRCH}), Privacy.PUBLIC),
    )
    assert sim.conversations.get_conversation_for_agent(ASH).id == cid
    assert sim.conversations.get_conversation_for_agent(BIRCH).id == cid
    assert not sim.conversations.has_pending_invitation(BIRCH)
    assert sim.changes.invitations[0].status is InvitationStatus.ACCEPTED


def test_decline(sim):
    succeeds(sim, ASH, InviteAction(BIRCH), tick=0)
    result = succeeds(sim, BIRCH, DeclineInviteAction(), tick=1)
    assert result.events == (InvitationDeclinedEvent(1, BIRCH, ASH),)
    assert not sim.conversations.has_pending_invitation(BIRCH)
    assert not sim.conversations.is_talking(BIRCH)
    assert sim.changes.invitations[0].status is InvitationStatus.DECLINED


@pytest.mark.parametrize("answer", [AcceptInviteAction(), DeclineInviteAction()])
def test_an_invitation_lapses_after_two_ticks(sim, answer):
    succeeds(sim, ASH, InviteAction(BIRCH), tick=5)
    result = fails(sim, BIRCH, answer, tick=7)
    assert "the invitation has lapsed" in result.message
    assert sim.conversations.has_pending_invitation(BIRCH)


@pytest.mark.parametrize("answer", [AcceptInviteAction(), DeclineInviteAction()])
def test_answering_without_an_invitation_is_refused(sim, answer):
    result = fails(sim, BIRCH, answer)
    assert "you have no pending invitation" in result.message


def test_accept_while_already_talking_changes_nothing(sim):
    talking(sim)
    put(sim, DUSK, Position(11, 11))
    succeeds(sim, DUSK, InviteAction(CEDAR))
    succeeds(sim, CEDAR, JoinConversationAction(ASH))
    result = fails(sim, CEDAR, AcceptInviteAction())
    assert "already in a conversation" in result.message


def test_accept_after_the_inviter_began_a_conversation_of_other_privacy_changes_nothing(sim):
    succeeds(sim, ASH, InviteAction(CEDAR, Privacy.PUBLIC))
    talking(sim, ASH, BIRCH, Privacy.PRIVATE)
    result = fails(sim, CEDAR, AcceptInviteAction())
    assert "has since begun a private conversation" in result.message


# ------------------------------------------------------------------ join


def test_join_a_public_conversation_of_someone_in_sight(sim):
    cid = talking(sim)
    result = succeeds(sim, CEDAR, JoinConversationAction(ASH), tick=1)
    assert result.events == (ConversationJoinedEvent(1, cid, CEDAR),)
    assert sim.conversations.participants(cid) == [ASH, BIRCH, CEDAR]
    assert result.message == "you join the conversation of Ash, Birch"


def test_join_a_private_conversation_is_refused(sim):
    talking(sim, privacy=Privacy.PRIVATE)
    result = fails(sim, CEDAR, JoinConversationAction(ASH))
    assert "private" in result.message


def test_join_out_of_sight_is_refused(sim):
    talking(sim)
    result = fails(sim, DUSK, JoinConversationAction(ASH))
    assert "not within sight" in result.message


def test_join_someone_who_is_not_talking_is_refused(sim):
    result = fails(sim, CEDAR, JoinConversationAction(ASH))
    assert result.message == "Ash is not in a conversation"


def test_join_yourself_is_refused(sim):
    talking(sim)
    fails(sim, ASH, JoinConversationAction(ASH))


def test_join_someone_unknown_is_refused(sim):
    fails(sim, CEDAR, JoinConversationAction("Nobody"))


def test_join_while_in_another_conversation_is_refused(sim):
    talking(sim)
    put(sim, DUSK, Position(11, 11))
    talking(sim, CEDAR, DUSK)
    result = fails(sim, CEDAR, JoinConversationAction(ASH))
    assert "already in a conversation" in result.message


# ------------------------------------------------------------------ leave


def test_leaving_a_conversation_of_two_ends_it(sim):
    cid = talking(sim)
    result = succeeds(sim, BIRCH, LeaveConversationAction(), tick=4)
    assert result.events == (ConversationLeftEvent(4, cid, BIRCH), ConversationEndedEvent(4, cid))
    assert result.data == {"conversation": cid, "ended": True}
    assert not sim.conversations.is_talking(ASH)
    assert not sim.conversations.is_talking(BIRCH)
    assert sim.conversations.get_conversation(cid).ended_tick == 4
    fails(sim, ASH, SpeakAction("still there?"))


def test_leaving_a_conversation_of_three_keeps_it_going(sim):
    cid = talking(sim)
    succeeds(sim, CEDAR, JoinConversationAction(BIRCH))
    result = succeeds(sim, ASH, LeaveConversationAction())
    assert result.events == (ConversationLeftEvent(0, cid, ASH),)
    assert sim.conversations.participants(cid) == [BIRCH, CEDAR]
    succeeds(sim, BIRCH, SpeakAction("just us"))


def test_leave_outside_a_conversation_is_refused(sim):
    result = fails(sim, ASH, LeaveConversationAction())
    assert result.message == "you are not in a conversation"
