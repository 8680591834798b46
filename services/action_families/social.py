"""speak, invite, accept_invite, decline_invite, join_conversation and
leave_conversation: talk by consent, through the ConversationService.
"""

from __future__ import annotations

from core.actions import (
    AcceptInviteAction,
    ActionResult,
    DeclineInviteAction,
    InviteAction,
    JoinConversationAction,
    LeaveConversationAction,
    SpeakAction,
)
from core.agent import Agent
from core.events import (
    ConversationEndedEvent,
    ConversationJoinedEvent,
    ConversationLeftEvent,
    ConversationStartedEvent,
    ConversationTurnEvent,
    InvitationAcceptedEvent,
    InvitationDeclinedEvent,
    InvitationSentEvent,
)
from core.text import clean_text
from core.types import AgentName
from services.action_families.base import ActionFamily, R


class SocialActions(ActionFamily):
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
