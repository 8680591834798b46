"""ConversationRepository against a real world.db: conversations, turns, invitations."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from core.conversation import (
    Conversation,
    ConversationTurn,
    Invitation,
    InvitationStatus,
    Privacy,
)
from core.types import AgentName, ConversationId
from storage import Storage

ASH, BIRCH, CEDAR, DUNE = (AgentName(n) for n in ("Ash", "Birch", "Cedar", "Dune"))
C1, C2 = ConversationId("conv-1"), ConversationId("conv-2")


def _conv(cid: ConversationId = C1, *names: AgentName, tick: int = 10) -> Conversation:
    return Conversation(
        id=cid,
        participants=frozenset(names or (ASH, BIRCH)),
        privacy=Privacy.PRIVATE,
        started_tick=tick,
        created_by=ASH,
    )


async def _membership(storage: Storage, cid: str) -> dict[str, tuple[int, int | None]]:
    rows = await storage.db.fetchall(
        "SELECT agent_name, joined_tick, left_tick FROM conversation_participants "
        "WHERE conversation_id = ?",
        (cid,),
    )
    return {name: (joined, left) for name, joined, left in rows}


# --- conversations ---------------------------------------------------------------------


async def test_conversation_round_trips(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    conv = _conv(C1, ASH, BIRCH, CEDAR)
    public = Conversation(C2, frozenset({DUNE}), Privacy.PUBLIC, 3, DUNE)
    await storage.conversations.save_conversation(conv)
    await storage.conversations.save_conversation(public)

    async with reopen() as other:
        assert await other.conversations.get_conversation(C1) == conv
        assert await other.conversations.get_conversation("conv-2") == public
        assert await other.conversations.get_conversation("conv-x") is None
        assert await other.conversations.count_conversations() == 2
    assert await _membership(storage, C1) == {
        "Ash": (10, None), "Birch": (10, None), "Cedar": (10, None)
    }


async def test_leaving_and_joining_reconcile_participants(storage: Storage) -> None:
    conv = _conv(C1, ASH, BIRCH, CEDAR)
    await storage.conversations.save_conversation(conv)
    assert await storage.conversations.get_conversation_for_agent(BIRCH) == conv

    # Birch leaves at tick 12, Dune joins at tick 12.
    later = conv.without_participant(BIRCH, 12).with_participant(DUNE, 12)
    await storage.conversations.save_conversation(later, tick=12)

    assert await _membership(storage, C1) == {
        "Ash": (10, None), "Birch": (10, 12), "Cedar": (10, None), "Dune": (12, None),
    }
    assert await storage.conversations.get_conversation(C1) == later
    assert await storage.conversations.get_conversation_for_agent(BIRCH) is None
    assert await storage.conversations.get_conversation_for_agent(DUNE) == later
    assert await storage.conversations.get_conversation_for_agent(ASH) == later

    # Birch comes back at tick 15: the row is reused, left_tick cleared.
    back = later.with_participant(BIRCH, 15)
    await storage.conversations.save_conversation(back, tick=15)
    assert (await _membership(storage, C1))["Birch"] == (15, None)
    assert await storage.conversations.get_conversation_for_agent(BIRCH) == back


async def test_ended_conversations_are_not_active(storage: Storage) -> None:
    first = _conv(C1, ASH, BIRCH, tick=10)
    second = _conv(C2, CEDAR, DUNE, tick=11)
    await storage.conversations.save_conversation(first)
    await storage.conversations.save_conversation(second)
    assert await storage.conversations.get_active_conversations() == [first, second]

    over = first.ended(20)
    await storage.conversations.save_conversation(over, tick=20)

    assert await storage.conversations.get_conversation(C1) == over
    assert await storage.conversations.get_active_conversations() == [second]
    assert await storage.conversations.get_conversation_for_agent(ASH) is None
    assert await storage.conversations.get_conversation_for_agent(BIRCH) is None
    assert await storage.conversations.get_conversation_for_agent(CEDAR) == second


async def test_agent_in_a_new_conversation_after_an_old_one_ended(storage: Storage) -> None:
    old = _conv(C1, ASH, BIRCH, tick=1).ended(5)
    new = _conv(C2, ASH, CEDAR, tick=8)
    await storage.conversations.save_conversation(old)
    await storage.conversations.save_conversation(new)
    assert await storage.conversations.get_conversation_for_agent(ASH) == new


# --- turns -------------------------------------------------------------------------------


async def test_turns_get_increasing_ids_and_read_back_in_order(storage: Storage) -> None:
    await storage.conversations.save_conversation(_conv(C1))
    await storage.conversations.save_conversation(_conv(C2, CEDAR, DUNE))
    said = [
        ConversationTurn(C1, ASH, "Hello, Birch!", 10),
        ConversationTurn(C2, CEDAR, "Anyone here?", 10),
        ConversationTurn(C1, BIRCH, "Hi Ash 👋 — how's the river?", 11),
        ConversationTurn(C1, ASH, "Cold.\nVery cold.", 12),
    ]
    stored = [await storage.conversations.add_turn(t) for t in said]

    ids = [s.id for s in stored]
    assert ids == sorted(ids) and len(set(ids)) == 4 and ids[0] > 0
    assert [s.turn for s in stored] == said

    turns = await storage.conversations.get_turns(C1)
    assert [(s.id, s.turn) for s in turns] == [
        (ids[0], said[0]), (ids[2], said[2]), (ids[3], said[3])
    ]
    assert [s.turn for s in await storage.conversations.get_turns(C1, after_id=ids[0])] == [
        said[2], said[3]
    ]
    assert await storage.conversations.get_turns(C1, after_id=ids[3]) == []
    assert [s.id for s in await storage.conversations.get_turns(C1, limit=2)] == [
        ids[0], ids[2]
    ]
    assert [s.turn for s in await storage.conversations.get_turns(C2)] == [said[1]]


async def test_last_turn_id_by_a_speaker(storage: Storage) -> None:
    await storage.conversations.save_conversation(_conv(C1))
    await storage.conversations.save_conversation(_conv(C2, ASH, CEDAR))
    a1 = await storage.conversations.add_turn(ConversationTurn(C1, ASH, "one", 1))
    await storage.conversations.add_turn(ConversationTurn(C1, BIRCH, "two", 1))
    a3 = await storage.conversations.add_turn(ConversationTurn(C1, ASH, "three", 2))
    await storage.conversations.add_turn(ConversationTurn(C2, ASH, "elsewhere", 3))

    assert a3.id > a1.id
    assert await storage.conversations.last_turn_id_by(C1, ASH) == a3.id
    assert await storage.conversations.last_turn_id_by(C1, CEDAR) == 0
    assert await storage.conversations.last_turn_id_by(ConversationId("none"), ASH) == 0


async def test_a_turn_needs_an_existing_conversation(storage: Storage) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        await storage.conversations.add_turn(ConversationTurn(C1, ASH, "into the void", 1))
    await storage.conversations.save_conversation(_conv(C1))
    assert await storage.conversations.get_turns(C1) == []


# --- invitations ---------------------------------------------------------------------------


async def test_invitation_round_trips_and_newest_pending_wins(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    older = Invitation(ASH, DUNE, Privacy.PUBLIC, created_tick=4)
    newer = Invitation(CEDAR, DUNE, Privacy.PRIVATE, created_tick=5, conversation_id=C2)
    other = Invitation(DUNE, ASH, Privacy.PRIVATE, created_tick=6)
    ids = [await storage.conversations.add_invitation(i) for i in (older, newer, other)]
    assert ids == sorted(ids) and len(set(ids)) == 3

    async with reopen() as fresh:
        assert await fresh.conversations.get_pending_invitation(DUNE) == newer
        assert await fresh.conversations.get_pending_invitation(ASH) == other
        assert await fresh.conversations.get_pending_invitation(BIRCH) is None
        assert await fresh.conversations.get_pending_invitations() == [older, newer, other]


async def test_set_invitation_status_only_resolves_pending_ones(storage: Storage) -> None:
    inv = Invitation(ASH, BIRCH, Privacy.PRIVATE, created_tick=7)
    await storage.conversations.add_invitation(inv)

    assert await storage.conversations.set_invitation_status(
        inv, InvitationStatus.ACCEPTED
    ) is True
    assert await storage.conversations.get_pending_invitation(BIRCH) is None
    assert await storage.conversations.set_invitation_status(
        inv, InvitationStatus.DECLINED
    ) is False
    (status,) = await storage.db.fetchone("SELECT status FROM invitations")
    assert status == "accepted"

    never_sent = Invitation(ASH, CEDAR, Privacy.PUBLIC, created_tick=7)
    assert await storage.conversations.set_invitation_status(
        never_sent, InvitationStatus.DECLINED
    ) is False


async def test_invitations_expire_two_ticks_after_creation(storage: Storage) -> None:
    inv = Invitation(ASH, BIRCH, Privacy.PUBLIC, created_tick=10)
    later = Invitation(CEDAR, DUNE, Privacy.PRIVATE, created_tick=11)
    answered = Invitation(DUNE, ASH, Privacy.PUBLIC, created_tick=9)
    for i in (inv, later, answered):
        await storage.conversations.add_invitation(i)
    await storage.conversations.set_invitation_status(answered, InvitationStatus.DECLINED)

    assert await storage.conversations.expire_invitations(11) == []
    assert await storage.conversations.get_pending_invitation(BIRCH) == inv

    assert await storage.conversations.expire_invitations(12) == [
        inv.with_status(InvitationStatus.EXPIRED)
    ]
    assert await storage.conversations.get_pending_invitation(BIRCH) is None
    assert await storage.conversations.get_pending_invitations() == [later]
    assert await storage.conversations.set_invitation_status(
        inv, InvitationStatus.ACCEPTED
    ) is False

    assert await storage.conversations.expire_invitations(100) == [
        later.with_status(InvitationStatus.EXPIRED)
    ]
    assert await storage.conversations.expire_invitations(100) == []
    rows = await storage.db.fetchall("SELECT inviter, status FROM invitations ORDER BY id")
    assert rows == [("Ash", "expired"), ("Cedar", "expired"), ("Dune", "declined")]


# --- many at once (the engine's group commit) ----------------------------------------------


async def test_saving_many_conversations_reconciles_each_one(storage: Storage) -> None:
    await storage.conversations.save_conversation(_conv(C1, ASH, BIRCH, CEDAR))
    later = _conv(C1, ASH, BIRCH, CEDAR).without_participant(BIRCH, 12).with_participant(
        DUNE, 12)
    fresh = _conv(C2, BIRCH, DUNE, tick=13)

    await storage.conversations.save_conversations([(later, 12), (fresh, 13)])

    assert await _membership(storage, C1) == {
        "Ash": (10, None), "Birch": (10, 12), "Cedar": (10, None), "Dune": (12, None),
    }
    assert await _membership(storage, C2) == {"Birch": (13, None), "Dune": (13, None)}
    assert await storage.conversations.get_conversation(C1) == later
    assert await storage.conversations.get_conversation(C2) == fresh


async def test_many_turns_keep_their_order(storage: Storage) -> None:
    await storage.conversations.save_conversations([(_conv(C1), 10)])
    said = [ConversationTurn(C1, ASH if i % 2 else BIRCH, f"line {i}", 10 + i) for i in range(5)]
    await storage.conversations.add_turns(said)
    stored = await storage.conversations.get_turns(C1)
    assert [s.turn for s in stored] == said
    assert [s.id for s in stored] == sorted(s.id for s in stored)


async def test_many_invitations_then_their_answers(storage: Storage) -> None:
    first = Invitation(ASH, BIRCH, Privacy.PRIVATE, created_tick=7)
    second = Invitation(CEDAR, DUNE, Privacy.PUBLIC, created_tick=7)
    await storage.conversations.add_invitations([first, second])
    await storage.conversations.set_invitation_statuses([
        (first, InvitationStatus.ACCEPTED), (first, InvitationStatus.DECLINED),
    ])
    rows = await storage.db.fetchall("SELECT inviter, status FROM invitations ORDER BY id")
    # The second answer found it no longer pending, as one at a time would.
    assert rows == [("Ash", "accepted"), ("Cedar", "pending")]


async def test_a_member_in_and_out_between_two_saves_keeps_its_row(storage: Storage) -> None:
    conv = _conv(C1, ASH, BIRCH)
    await storage.conversations.save_conversation(conv)
    # Cedar joins and leaves within tick 11, Ash leaves at 12 and it ends: one save.
    later = (conv.with_participant(CEDAR, 11).without_participant(CEDAR, 11)
             .without_participant(ASH, 12).ended(12))
    await storage.conversations.save_conversations([(later, 12)])
    assert await _membership(storage, C1) == {
        "Ash": (10, 12), "Birch": (10, None), "Cedar": (11, 11)}
    assert await storage.conversations.get_conversation(C1) == later
