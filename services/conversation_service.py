"""ConversationService: consent-based talk, held in memory.

Nobody is pulled into a conversation. It starts only when an invitation is
accepted; after that anyone who can see a participant may join a *public*
conversation, while a *private* one admits only by invitation. Privacy is chosen
when the first invitation is sent and never changes. An agent is in at most one
conversation at a time, and a conversation continues at any distance once begun
(seeing someone matters only to invite or join).

Everything is in memory, so a command costs microseconds; every change is noted
in the world's ChangeSet (`agents.changes`) and written later by the commit phase:

- `conversations`: ids of conversations created, joined, left or ended;
- `turns`: each new ConversationTurn;
- `invitations`: each new Invitation. If it is resolved (accepted, declined,
  expired) before the ChangeSet is flushed, the listed value is replaced by the
  resolved one, so the row is inserted once with its final status;
- `invitation_updates`: `(pending invitation, new status)` for an invitation
  resolved after it was flushed.

A command either returns its result or raises ConversationError with a message
meant for the acting agent ("you ..."), and a command that raises has changed
nothing: every check runs before the first change.

Decisions worth knowing:

- **Invitations lapse** at `created_tick + INVITE_EXPIRY_TICKS` (two ticks):
  accepting or declining at that tick or later is refused ("the invitation has
  lapsed"), and `expire_invitations(tick)` marks them EXPIRED. Only that sweep
  changes a lapsed invitation, so it is never resolved twice.
- **An invitation from someone already talking** carries their conversation's id
  and its privacy (an explicit, different privacy is refused; None takes the
  conversation's). Accepting joins that conversation, and is refused if it has
  ended or the inviter has left it.
- **An invitation from someone who was free** starts a new conversation of the
  two. If the inviter has meanwhile entered a conversation, accepting joins it
  when its privacy matches the invitation's (an inviter may have asked several
  people at once), and is refused when it does not.
- **Ending.** When a leave leaves fewer than two participants, the conversation
  ends (`ended_tick`) and the last participant is no longer in it either. An ended
  conversation keeps, as history, the participants present when it ended (so the
  engine can tell them); only active conversations count for "who is talking".
  `Conversation.members` records everyone who was ever in it, with ticks, so one who
  came and went between two writes is stored too.
- **No word lost.** Those who remain hear who left (`ConversationContext.left`) after
  the lines said before it. The one an ending leaves behind is told at its next turn
  (`has_farewell`; until its `last_active_tick` moves on) what it had not heard, who left
  and that it ended, even if an old invitation has meanwhile drawn it into a new
  conversation (`ConversationContext.earlier`). Farewells are in memory only: a restart
  between the ending and that turn loses the notice (the lines stay stored).
- **Speech is cleaned, not refused, for stray control characters**
  (`clean_speech`): line endings become "\\n", ANSI escape sequences, other
  control characters (C0, DEL, C1) and bidirectional overrides are removed,
  surrounding whitespace is trimmed. What remains must be non-empty and at most
  MAX_SPEECH_LENGTH characters; a longer message is refused, never cut.
- **Unseen turns** are a participant's conversation turns after the later of its
  own last turn and the moment it (re)joined, counted by position in the turn
  list, so turns spoken earlier in the same tick are ordered correctly. State
  restored from storage does not carry join positions: a restored participant
  who has not spoken since sees every restored turn of its conversation.
- **Restored state** (`conversations`, `turns`, `invitations`): participants of
  restored active conversations are trusted as admitted; only PENDING invitations
  are kept (others are history); turns may be given for any subset of the
  restored conversations, in the order they were spoken. Contradictory state (an
  agent in two active conversations, two pending invitations for one agent, a turn
  of an unknown conversation, ...) raises ConversationError naming the problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from core.agent import Agent
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
from services.agent_service import AgentService


class ConversationError(ValueError):
    """A conversation command the rules refuse; the message says why. Nothing changed."""


@dataclass(frozen=True)
class ConversationContext:
    """What an agent needs to know about its talk at the start of its turn."""

    agent: AgentName
    conversation: Conversation | None
    """The active conversation the agent is in, or None."""
    participants: tuple[AgentName, ...]
    """Everyone in it, the agent included, sorted; empty when not talking."""
    unseen_turns: tuple[ConversationTurn, ...]
    """Turns since the agent's own last turn there (or since it joined), oldest first."""
    pending_invitation: Invitation | None
    left: tuple[AgentName, ...] = ()
    """Who left the conversation since then (after the unseen turns they spoke), in order."""
    ended: bool = False
    """The conversation ended since the agent's last turn (the last one left it): then
    `conversation` is the ended one, `participants` is empty, and `unseen_turns` and
    `left` are what the agent had not heard when it ended. Told at its next turn only."""
    earlier: ConversationContext | None = None
    """Such an ended conversation (`ended` set) when the agent has since been drawn into
    this one (someone accepted its invitation before its next turn): told first."""

    @property
    def others(self) -> tuple[AgentName, ...]:
        return tuple(n for n in self.participants if n != self.agent)


class Admission(StrEnum):
    """How a participant came into a conversation (kept for the invariants)."""

    CREATED = "created"
    INVITED = "invited"
    JOINED = "joined"
    RESTORED = "restored"


# --- speech -----------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"\r\n|[\r\u2028\u2029]")


def clean_speech(message: object) -> str:
    """The message as it will be heard, or ConversationError if nothing fit remains.

    Newlines and tabs stay; other control characters, ANSI escape sequences and
    bidirectional overrides are removed; line endings become "\\n"; surrounding
    whitespace is trimmed. The result must be 1..MAX_SPEECH_LENGTH characters.

    A message printable throughout (`str.isprintable`) holds nothing the patterns
    match (line breaks, escapes, controls and overrides are all unprintable), so it
    is only trimmed, without three regular-expression passes.
    """
    if not isinstance(message, str):
        raise ConversationError("a message must be text")
    if message.isprintable():
        text = message.strip()
    else:
        text = _LINE_BREAKS.sub("\n", message)
        text = _CONTROL.sub("", _ANSI.sub("", text)).strip()
    if not text:
        raise ConversationError("the message is empty: say something")
    if len(text) > MAX_SPEECH_LENGTH:
        raise ConversationError(
            f"the message is {len(text)} characters; the limit is {MAX_SPEECH_LENGTH}"
        )
    return text


def _privacy(raw: Privacy | str | None) -> Privacy | None:
    if raw is None:
        return None
    try:
        return Privacy(str(raw).strip().lower())
    except ValueError:
        raise ConversationError(
            f"privacy must be 'public' or 'private', not {raw!r}"
        ) from None


# --- the service --------------------------------------------------------------------


class ConversationService:
    def __init__(
        self,
        agents: AgentService,
        *,
        new_id: Callable[[], str],
        conversations: Iterable[Conversation] = (),
        turns: Iterable[ConversationTurn] = (),
        invitations: Iterable[Invitation] = (),
    ) -> None:
        self.agents = agents
        self._new_id = new_id
        self._conversations: dict[ConversationId, Conversation] = {}
        self._active: dict[AgentName, ConversationId] = {}
        """agent -> the active conversation it is in"""
        self._turns: dict[ConversationId, list[ConversationTurn]] = {}
        self._pending: dict[AgentName, Invitation] = {}
        """invitee -> its one pending invitation"""
        self._admitted: dict[tuple[ConversationId, AgentName], Admission] = {}
        self._seen_from: dict[tuple[ConversationId, AgentName], int] = {}
        """index of the first turn a participant can have missed: where it (re)joined"""
        self._last_spoke: dict[tuple[ConversationId, AgentName], int] = {}
        """index of a participant's own last turn"""
        self._departures: dict[ConversationId, list[tuple[int, AgentName]]] = {}
        """(number of turns said by then, who left), in order of leaving"""
        self._departures_from: dict[tuple[ConversationId, AgentName], int] = {}
        """index of the first departure a participant can have missed (where it joined)"""
        self._farewells: dict[AgentName, tuple[ConversationContext, int]] = {}
        """agent -> (what it had not heard when its conversation ended under it, its
        `last_active_tick` then): told until it has taken a turn since"""
        self._restore(conversations, turns, invitations)

    def _restore(
        self,
        conversations: Iterable[Conversation],
        turns: Iterable[ConversationTurn],
        invitations: Iterable[Invitation],
    ) -> None:
        for conv in conversations:
            if conv.id in self._conversations:
                raise ConversationError(f"stored conversation {conv.id!r} appears twice")
            self._conversations[conv.id] = conv
            self._turns[conv.id] = []
            if not conv.is_active:
                continue
            for name in sorted(conv.participants):
                other = self._active.get(name)
                if other is not None:
                    raise ConversationError(
                        f"stored state puts {name} in two active conversations "
                        f"({other!r} and {conv.id!r})"
                    )
                self._active[name] = conv.id
                self._admitted[(conv.id, name)] = Admission.RESTORED
                self._seen_from[(conv.id, name)] = 0
        for turn in turns:
            said = self._turns.get(turn.conversation_id)
            if said is None:
                raise ConversationError(
                    f"a stored turn by {turn.speaker} belongs to unknown conversation "
                    f"{turn.conversation_id!r}"
                )
            self._last_spoke[(turn.conversation_id, turn.speaker)] = len(said)
            said.append(turn)
        for inv in invitations:
            if inv.status is not InvitationStatus.PENDING:
                continue
            held = self._pending.get(inv.invitee)
            if held is not None:
                raise ConversationError(
                    f"stored state has two pending invitations for {inv.invitee} "
                    f"(from {held.inviter} and {inv.inviter})"
                )
            self._pending[inv.invitee] = inv
        problems = self.check_invariants()
        if problems:
            raise ConversationError("stored conversations do not add up: " + "; ".join(problems))

    # ------------------------------------------------------------------ queries

    def get_conversation(self, conversation_id: str) -> Conversation | None:
        """Any conversation this service knows, active or ended."""
        return self._conversations.get(ConversationId(conversation_id))

    def get_conversation_for_agent(self, name: str) -> Conversation | None:
        """The active conversation the agent is in, or None."""
        cid = self._active.get(AgentName(name))
        return None if cid is None else self._conversations[cid]

    def is_talking(self, name: str) -> bool:
        return AgentName(name) in self._active

    def active_conversations(self) -> list[Conversation]:
        """Active conversations, oldest first."""
        return sorted(
            (c for c in self._conversations.values() if c.is_active),
            key=lambda c: (c.started_tick, c.id),
        )

    def participants(self, conversation_id: str) -> list[AgentName]:
        """Participants, sorted (for an ended one, those present when it ended)."""
        conv = self._conversations.get(ConversationId(conversation_id))
        return [] if conv is None else sorted(conv.participants)

    def turns(self, conversation_id: str) -> list[ConversationTurn]:
        """Every known turn of the conversation, oldest first (a copy)."""
        return list(self._turns.get(ConversationId(conversation_id), ()))

    def has_pending_invitation(self, name: str) -> bool:
        return AgentName(name) in self._pending

    def pending_invitation_for(self, name: str) -> Invitation | None:
        return self._pending.get(AgentName(name))

    def pending_invitations(self) -> list[Invitation]:
        """Every pending invitation, oldest first."""
        return sorted(self._pending.values(), key=lambda i: (i.created_tick, i.invitee))

    def has_farewell(self, name: str) -> bool:
        """Whether the agent is to be told, at its next turn, of a conversation that ended
        under it (`get_conversation_context` then says what it had not heard, as the
        context itself, or as its `earlier` if the agent is talking again)."""
        return name in self._farewells and self._farewell(AgentName(name)) is not None

    def get_conversation_context(self, name: str) -> ConversationContext:
        me = AgentName(name)
        invitation = self._pending.get(me)
        cid = self._active.get(me)
        if cid is None:
            told = self._farewell(me) if me in self._farewells else None
            if told is not None:
                return replace(told, pending_invitation=invitation)
            return ConversationContext(me, None, (), (), invitation)
        conv = self._conversations[cid]
        start = self._seen_from.get((cid, me), 0)
        last = self._last_spoke.get((cid, me))
        if last is not None:
            start = max(start, last + 1)
        left: tuple[AgentName, ...] = ()
        departures = self._departures.get(cid)
        if departures:
            first = self._departures_from.get((cid, me), 0)
            left = tuple(who for said, who in departures[first:] if said >= start)
        earlier = self._farewell(me) if me in self._farewells else None
        return ConversationContext(
            me, conv, tuple(sorted(conv.participants)), tuple(self._turns[cid][start:]),
            invitation, left, earlier=earlier,
        )

    def _farewell(self, name: AgentName) -> ConversationContext | None:
        """The farewell still due to `name`: none once it has taken a turn since."""
        told, active_then = self._farewells[name]
        agent = self.agents.get_agent(name)
        if agent is None or agent.last_active_tick != active_then:
            return None
        return told

    # ------------------------------------------------------------------ commands

    def create_invite(
        self, inviter: str, invitee: str, privacy: Privacy | str | None, tick: int
    ) -> Invitation:
        """Invite someone you can see to talk (or to join the conversation you are in).

        `privacy` None means the current conversation's privacy, or public.
        """
        wanted = _privacy(privacy)
        me = self._require(inviter)
        if AgentName(invitee) == me.name:
            raise ConversationError("you cannot invite yourself")
        them = self._require(invitee)
        if not self.agents.can_see(me.name, them.name):
            raise ConversationError(
                f"{them.name} is not within sight; you can only invite someone you can see"
            )
        current = self.get_conversation_for_agent(me.name)
        held = self._pending.get(them.name)
        if held is not None:
            if held.inviter == me.name:
                raise ConversationError(
                    f"you have already invited {them.name}; wait for an answer"
                )
            raise ConversationError(
                f"{them.name} already has a pending invitation from {held.inviter}"
            )
        if them.name in self._active:
            if current is not None and them.name in current.participants:
                raise ConversationError(f"{them.name} is already in your conversation")
            raise ConversationError(f"{them.name} is already in a conversation")
        if current is not None:
            if wanted is not None and wanted is not current.privacy:
                raise ConversationError(
                    f"you are in a {current.privacy} conversation, so an invitation to it "
                    f"is {current.privacy} too, not {wanted}"
                )
            wanted = current.privacy
        invitation = Invitation(
            inviter=me.name,
            invitee=them.name,
            privacy=wanted or Privacy.PUBLIC,
            created_tick=tick,
            conversation_id=None if current is None else current.id,
        )
        self._pending[them.name] = invitation
        self.agents.changes.invitations.append(invitation)
        return invitation

    def accept_invite(self, invitee: str, tick: int) -> tuple[Conversation, Invitation]:
        """Accept your pending invitation: (the conversation you are now in, the
        invitation marked ACCEPTED).

        The conversation has exactly two participants when this started it; joining
        an existing one always leaves three or more.
        """
        me = AgentName(invitee)
        inv = self._usable_invitation(me, tick, "accept")
        if me in self._active:
            raise ConversationError(
                "you are already in a conversation; leave it before accepting another"
            )
        inviter = inv.inviter
        if self.agents.get_agent(inviter) is None:
            raise ConversationError(f"{inviter} no longer lives here")
        target: Conversation | None
        if inv.conversation_id is not None:
            target = self._conversations.get(inv.conversation_id)
            if target is None or not target.is_active:
                raise ConversationError(f"the conversation {inviter} invited you to has ended")
            if inviter not in target.participants:
                raise ConversationError(
                    f"{inviter} has left the conversation they invited you to"
                )
        else:
            cid = self._active.get(inviter)
            target = None if cid is None else self._conversations[cid]
            if target is not None and target.privacy is not inv.privacy:
                raise ConversationError(
                    f"{inviter} has since begun a {target.privacy} conversation, and this "
                    f"invitation was to a {inv.privacy} one; ask {inviter} again"
                )
        if target is None:
            cid = self._fresh_id()
            conv = Conversation(cid, frozenset({inviter, me}), inv.privacy, tick, inviter)
            self._turns[cid] = []
            self._enter(conv, inviter, Admission.CREATED)
        else:
            conv = target.with_participant(me, tick)
        self._enter(conv, me, Admission.INVITED)
        del self._pending[me]
        return conv, self._resolve(inv, InvitationStatus.ACCEPTED)

    def decline_invite(self, invitee: str, tick: int) -> Invitation:
        """Decline your pending invitation: the invitation marked DECLINED."""
        me = AgentName(invitee)
        inv = self._usable_invitation(me, tick, "decline")
        del self._pending[me]
        return self._resolve(inv, InvitationStatus.DECLINED)

    def join_conversation(self, agent: str, participant: str, tick: int) -> Conversation:
        """Join the public conversation of someone you can see."""
        me = self._require(agent)
        if AgentName(participant) == me.name:
            raise ConversationError("you cannot join yourself; name someone who is talking")
        them = self._require(participant)
        if me.name in self._active:
            raise ConversationError(
                "you are already in a conversation; leave it before joining another"
            )
        if not self.agents.can_see(me.name, them.name):
            raise ConversationError(
                f"{them.name} is not within sight; you can only join a conversation you can see"
            )
        cid = self._active.get(them.name)
        if cid is None:
            raise ConversationError(f"{them.name} is not in a conversation")
        conv = self._conversations[cid]
        if conv.privacy is Privacy.PRIVATE:
            raise ConversationError("that conversation is private; you would need an invitation")
        conv = conv.with_participant(me.name, tick)
        self._enter(conv, me.name, Admission.JOINED)
        return conv

    def leave_conversation(self, agent: str, tick: int) -> tuple[Conversation, bool]:
        """Leave your conversation: (the conversation after you left, whether it ended).

        Fewer than two left means it ends at `tick`; the one remaining participant
        is then out of it too, but stays listed in the ended conversation, and is told
        at its next turn what it had not yet heard, that you left, and that it ended.
        Those who remain hear of your leaving after what you said before it.
        """
        me = AgentName(agent)
        cid = self._active.get(me)
        if cid is None:
            raise ConversationError("you are not in a conversation")
        conv = self._conversations[cid].without_participant(me, tick)
        self._exit(cid, me)
        self._departures.setdefault(cid, []).append((len(self._turns[cid]), me))
        ended = len(conv.participants) < 2
        if ended:
            conv = conv.ended(tick)
            for name in conv.participants:
                heard = self.get_conversation_context(name)
                agent_now = self.agents.get_agent(name)
                self._farewells[name] = (
                    ConversationContext(name, conv, (), heard.unseen_turns, None, heard.left,
                                        ended=True, earlier=heard.earlier),
                    -1 if agent_now is None else agent_now.last_active_tick,
                )
                self._exit(cid, name)
            self._departures.pop(cid, None)
        self._store(conv)
        return conv, ended

    def add_turn(
        self, speaker: str, message: str, tick: int
    ) -> tuple[Conversation, ConversationTurn]:
        """Say something in your conversation (see `clean_speech` for what is heard)."""
        me = speaker  # already a name; AgentName(...) would only cost a call, every remark
        cid = self._active.get(me)
        if cid is None:
            raise ConversationError(
                "you are not in a conversation; invite someone you can see to talk first"
            )
        turn = ConversationTurn(cid, me, clean_speech(message), tick)
        said = self._turns[cid]
        self._last_spoke[(cid, me)] = len(said)
        said.append(turn)
        self.agents.changes.turns.append(turn)
        return self._conversations[cid], turn

    def expire_invitations(self, tick: int) -> list[Invitation]:
        """Mark every pending invitation lapsed by `tick` EXPIRED; returns them, oldest first."""
        lapsed = [inv for inv in self.pending_invitations() if inv.is_expired(tick)]
        for inv in lapsed:
            del self._pending[inv.invitee]
        return [self._resolve(inv, InvitationStatus.EXPIRED) for inv in lapsed]

    # ------------------------------------------------------------------ invariants

    def check_invariants(self) -> list[str]:
        """Every broken rule, in words (an empty list when all is well)."""
        problems: list[str] = []
        seen: dict[AgentName, ConversationId] = {}
        for conv in self._conversations.values():
            if not conv.is_active:
                problems.extend(
                    f"{name} still counts as in ended conversation {conv.id!r}"
                    for name in sorted(conv.participants)
                    if self._active.get(name) == conv.id
                )
                continue
            if len(conv.participants) < 2:
                problems.append(
                    f"active conversation {conv.id!r} has {len(conv.participants)} "
                    "participant(s)"
                )
            for name in sorted(conv.participants):
                if name in seen:
                    problems.append(
                        f"{name} is in two active conversations ({seen[name]!r} and "
                        f"{conv.id!r})"
                    )
                    continue
                seen[name] = conv.id
                if self._active.get(name) != conv.id:
                    problems.append(f"{name} is in {conv.id!r} but not indexed there")
                if self.agents.get_agent(name) is None:
                    problems.append(f"{name}, in {conv.id!r}, is not an agent here")
                how = self._admitted.get((conv.id, name))
                if how is None:
                    problems.append(f"{name} is in {conv.id!r} without having been admitted")
                elif how == Admission.CREATED and name != conv.created_by:
                    problems.append(f"{name} is recorded as creator of {conv.id!r} but is not")
                elif how == Admission.JOINED and conv.privacy is Privacy.PRIVATE:
                    problems.append(
                        f"{name} is in private conversation {conv.id!r} without an invitation"
                    )
        for name, cid in self._active.items():
            conv = self._conversations.get(cid)
            if conv is None or not conv.is_active or name not in conv.participants:
                problems.append(f"{name} is indexed in {cid!r} but is not an active participant")
        for name, inv in self._pending.items():
            if inv.invitee != name or inv.status is not InvitationStatus.PENDING:
                problems.append(f"the pending invitation held for {name} is {inv}")
        return problems

    # ------------------------------------------------------------------ internals

    def _require(self, name: str) -> Agent:
        agent = self.agents.get_agent(name)
        if agent is None:
            raise ConversationError(f"nobody called {name!r} lives here")
        return agent

    def _usable_invitation(self, invitee: AgentName, tick: int, verb: str) -> Invitation:
        inv = self._pending.get(invitee)
        if inv is None:
            raise ConversationError(f"you have no pending invitation to {verb}")
        if inv.is_expired(tick):
            raise ConversationError(
                f"the invitation has lapsed: {inv.inviter} invited you at tick "
                f"{inv.created_tick}, and invitations last {INVITE_EXPIRY_TICKS} ticks"
            )
        return inv

    def _fresh_id(self) -> ConversationId:
        cid = ConversationId(str(self._new_id()))
        if not cid or cid in self._conversations:
            raise ConversationError(f"the new conversation id {cid!r} is already in use")
        return cid

    def _store(self, conv: Conversation) -> None:
        self.agents.changes.note_conversation(self._conversations.get(conv.id), conv)
        self._conversations[conv.id] = conv

    def _enter(self, conv: Conversation, name: AgentName, how: Admission) -> None:
        self._store(conv)
        self._active[name] = conv.id
        self._admitted[(conv.id, name)] = how
        self._seen_from[(conv.id, name)] = len(self._turns[conv.id])
        self._departures_from[(conv.id, name)] = len(self._departures.get(conv.id, ()))
        self._last_spoke.pop((conv.id, name), None)

    def _exit(self, cid: ConversationId, name: AgentName) -> None:
        del self._active[name]
        for table in (self._admitted, self._seen_from, self._last_spoke,
                      self._departures_from):
            table.pop((cid, name), None)

    def _resolve(self, inv: Invitation, status: InvitationStatus) -> Invitation:
        resolved = inv.with_status(status)
        noted = self.agents.changes.invitations
        for i, new in enumerate(noted):
            if new is inv:
                noted[i] = resolved
                break
        else:
            self.agents.changes.invitation_updates.append((inv, status))
        return resolved
