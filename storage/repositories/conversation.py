"""Conversations, who is in them, what was said, and invitations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.conversation import (
    Conversation,
    ConversationTurn,
    Invitation,
    InvitationStatus,
    Membership,
    Privacy,
)
from core.types import AgentName, ConversationId
from storage.repositories.base import Repository

_SAVE_CONVERSATION = """
    INSERT INTO conversations (id, privacy, created_by, started_tick, ended_tick)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET privacy = excluded.privacy,
        created_by = excluded.created_by, started_tick = excluded.started_tick,
        ended_tick = excluded.ended_tick
"""
_SAVE_MEMBER = """
    INSERT INTO conversation_participants (conversation_id, agent_name, joined_tick, left_tick)
    VALUES (?, ?, ?, ?)
    ON CONFLICT (conversation_id, agent_name)
    DO UPDATE SET joined_tick = excluded.joined_tick, left_tick = excluded.left_tick
"""


@dataclass(frozen=True)
class StoredTurn:
    """A turn with its storage sequence number, which orders turns globally."""

    id: int
    turn: ConversationTurn


class ConversationRepository(Repository):
    # --- conversations -------------------------------------------------------------

    async def save_conversation(self, conv: Conversation, tick: int | None = None) -> None:
        """Insert or update a conversation and its participant rows.

        Every member the value records (`Conversation.members`, everyone who was ever
        in it, even for a moment between two saves) has a row with its joined and left
        ticks. A stored participant the value does not list at all gets `left_tick` =
        `tick` (the start tick when None); history is kept.
        """
        await self.save_conversations([(conv, tick)])

    async def save_conversations(
        self, convs: Sequence[tuple[Conversation, int | None]]
    ) -> None:
        """`save_conversation` for many at once, in a handful of statements.

        A busy tick changes a hundred conversations; one round trip per row (and a
        query for each one's members) cost more than all the turns that made them.
        Each pair is (conversation, tick of the change or None for its start tick),
        applied in the order given.
        """
        if not convs:
            return
        async with self.db.transaction():
            await self.db.executemany(
                _SAVE_CONVERSATION,
                [(c.id, c.privacy.value, c.created_by, c.started_tick, c.ended_tick)
                 for c, _ in convs],
            )
            stored: dict[str, dict[str, tuple[int, int | None]]] = {c.id: {} for c, _ in convs}
            ids = list(stored)
            for start in range(0, len(ids), _IN_CHUNK):
                chunk = ids[start:start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = await self.db.fetchall(
                    "SELECT conversation_id, agent_name, joined_tick, left_tick "
                    f"FROM conversation_participants WHERE conversation_id IN ({marks})",
                    chunk,
                )
                for cid, name, joined, left in rows:
                    stored[cid][name] = (joined, left)
            rows_now: list[tuple[str, str, int, int | None]] = []
            for conv, tick in convs:
                at = conv.started_tick if tick is None else tick
                had = stored[conv.id]
                want = {m.name: (m.joined_tick, m.left_tick) for m in conv.members}
                # A stored member the value does not list (one made without its record)
                # left when this change was made.
                for name in sorted(had.keys() - want.keys()):
                    joined, left = had[name]
                    if left is None:
                        want[name] = (joined, max(at, joined))
                changed = sorted((n, w) for n, w in want.items() if had.get(n) != w)
                rows_now.extend((conv.id, n, joined, left) for n, (joined, left) in changed)
                had.update(changed)
            if rows_now:
                await self.db.executemany(
                    _SAVE_MEMBER,
                    rows_now,
                )

    async def save_changes(
        self, changes: Sequence[tuple[str, Conversation | None, Sequence[Membership]]]
    ) -> None:
        """What turns changed of conversations, each (id, its row or None when the row
        did not change, the memberships that changed), in a few statements: only those
        rows, so a turn never writes what another turn changed of the same conversation."""
        rows = [(c.id, c.privacy.value, c.created_by, c.started_tick, c.ended_tick)
                for _, c, _ in changes if c is not None]
        members = [(cid, m.name, m.joined_tick, m.left_tick)
                   for cid, _, changed in changes for m in changed]
        if not rows and not members:
            return
        async with self.db.transaction():
            if rows:
                await self.db.executemany(
                    _SAVE_CONVERSATION, rows)
            if members:
                await self.db.executemany(
                    _SAVE_MEMBER, members)

    async def get_conversation(self, conv_id: ConversationId | str) -> Conversation | None:
        row = await self.db.fetchone(
            "SELECT id, privacy, created_by, started_tick, ended_tick FROM conversations "
            "WHERE id = ?",
            (conv_id,),
        )
        if row is None:
            return None
        cid, privacy, created_by, started, ended = row
        rows = await self.db.fetchall(
            "SELECT agent_name, joined_tick, left_tick FROM conversation_participants "
            "WHERE conversation_id = ? ORDER BY agent_name",
            (cid,),
        )
        members = tuple(Membership(AgentName(n), j, lt) for n, j, lt in rows)
        return Conversation(
            id=ConversationId(cid),
            participants=frozenset(m.name for m in members if m.left_tick is None),
            privacy=Privacy(privacy),
            started_tick=started,
            created_by=AgentName(created_by),
            ended_tick=ended,
            members=members,
        )

    async def get_conversation_for_agent(self, name: AgentName) -> Conversation | None:
        """The active conversation the agent is in now (there is at most one)."""
        row = await self.db.fetchone(
            """
            SELECT c.id FROM conversations c
            JOIN conversation_participants p ON p.conversation_id = c.id
            WHERE p.agent_name = ? AND p.left_tick IS NULL AND c.ended_tick IS NULL
            ORDER BY c.started_tick DESC LIMIT 1
            """,
            (name,),
        )
        return None if row is None else await self.get_conversation(row[0])

    async def get_active_conversations(self) -> list[Conversation]:
        rows = await self.db.fetchall(
            "SELECT id FROM conversations WHERE ended_tick IS NULL ORDER BY started_tick, id"
        )
        return [c for r in rows if (c := await self.get_conversation(r[0])) is not None]

    async def count_conversations(self) -> int:
        return await self._count("conversations")

    # --- turns -------------------------------------------------------------------------

    async def add_turn(self, turn: ConversationTurn) -> StoredTurn:
        async with self.db.transaction():
            turn_id = await self.db.execute_insert(
                "INSERT INTO conversation_turns (conversation_id, speaker, message, tick) "
                "VALUES (?, ?, ?, ?)",
                (turn.conversation_id, turn.speaker, turn.message, turn.tick),
            )
        return StoredTurn(turn_id, turn)

    async def add_turns(self, turns: Sequence[ConversationTurn]) -> None:
        """Append many turns in one statement; their ids follow the order given."""
        if not turns:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "INSERT INTO conversation_turns (conversation_id, speaker, message, tick) "
                "VALUES (?, ?, ?, ?)",
                [(t.conversation_id, t.speaker, t.message, t.tick) for t in turns],
            )

    async def get_turns(
        self, conv_id: ConversationId, after_id: int = 0, limit: int | None = None
    ) -> list[StoredTurn]:
        """Turns in order, optionally only those after a known turn id."""
        sql = (
            "SELECT id, conversation_id, speaker, message, tick FROM conversation_turns "
            "WHERE conversation_id = ? AND id > ? ORDER BY id"
        )
        params: tuple = (conv_id, after_id)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        rows = await self.db.fetchall(sql, params)
        return [
            StoredTurn(i, ConversationTurn(ConversationId(c), AgentName(s), m, t))
            for i, c, s, m, t in rows
        ]

    async def lines_with(self, agent: str, limit: int = 2000) -> list[tuple[int, str, str]]:
        """(tick, speaker, message) said in conversations `agent` took part in, while it
        was there, newest first."""
        rows = await self.db.fetchall(
            "SELECT t.tick, t.speaker, t.message FROM conversation_turns t "
            "JOIN conversation_participants p ON p.conversation_id = t.conversation_id "
            "WHERE p.agent_name = ? AND t.tick >= p.joined_tick "
            "AND (p.left_tick IS NULL OR t.tick <= p.left_tick) "
            "ORDER BY t.id DESC LIMIT ?", (agent, limit))
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def last_turn_id_by(self, conv_id: ConversationId, speaker: AgentName) -> int:
        """The id of the speaker's last turn in the conversation (0 if none)."""
        row = await self.db.fetchone(
            "SELECT MAX(id) FROM conversation_turns WHERE conversation_id = ? AND speaker = ?",
            (conv_id, speaker),
        )
        return int(row[0]) if row and row[0] is not None else 0

    # --- invitations ---------------------------------------------------------------------

    async def add_invitation(self, inv: Invitation) -> int:
        async with self.db.transaction():
            return await self.db.execute_insert(
                """
                INSERT INTO invitations (inviter, invitee, privacy, created_tick,
                                         expires_at_tick, status, conversation_id)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                (inv.inviter, inv.invitee, inv.privacy.value, inv.created_tick,
                 inv.expires_at_tick, inv.status.value, inv.conversation_id),
            )

    async def add_invitations(self, invitations: Sequence[Invitation]) -> None:
        """Insert many invitations in one statement, in the order given."""
        if not invitations:
            return
        async with self.db.transaction():
            await self.db.executemany(
                """
                INSERT INTO invitations (inviter, invitee, privacy, created_tick,
                                         expires_at_tick, status, conversation_id)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [(i.inviter, i.invitee, i.privacy.value, i.created_tick, i.expires_at_tick,
                  i.status.value, i.conversation_id) for i in invitations],
            )

    async def set_invitation_statuses(
        self, updates: Sequence[tuple[Invitation, InvitationStatus]]
    ) -> None:
        """`set_invitation_status` for many, applied in order (no longer pending: skipped)."""
        if not updates:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "UPDATE invitations SET status = ? WHERE inviter = ? AND invitee = ? "
                "AND created_tick = ? AND status = 'pending'",
                [(InvitationStatus(s).value, i.inviter, i.invitee, i.created_tick)
                 for i, s in updates],
            )

    async def get_pending_invitation(self, invitee: AgentName) -> Invitation | None:
        """The newest pending invitation addressed to the agent."""
        row = await self.db.fetchone(
            f"{_INVITE_SELECT} WHERE invitee = ? AND status = 'pending' "
            "ORDER BY created_tick DESC, id DESC LIMIT 1",
            (invitee,),
        )
        return None if row is None else _invitation(row)

    async def get_pending_invitations(self) -> list[Invitation]:
        rows = await self.db.fetchall(
            f"{_INVITE_SELECT} WHERE status = 'pending' ORDER BY created_tick, id"
        )
        return [_invitation(r) for r in rows]

    async def set_invitation_status(self, inv: Invitation, status: InvitationStatus) -> bool:
        """Resolve a pending invitation; returns False if it was no longer pending."""
        async with self.db.transaction():
            changed = await self.db.execute(
                "UPDATE invitations SET status = ? WHERE inviter = ? AND invitee = ? "
                "AND created_tick = ? AND status = 'pending'",
                (InvitationStatus(status).value, inv.inviter, inv.invitee, inv.created_tick),
            )
        return changed > 0

    async def expire_invitations(self, tick: int) -> list[Invitation]:
        """Mark every pending invitation that lapsed by `tick` expired; returns them."""
        async with self.db.transaction():
            rows = await self.db.fetchall(
                f"{_INVITE_SELECT} WHERE status = 'pending' AND expires_at_tick <= ? "
                "ORDER BY created_tick, id",
                (tick,),
            )
            await self.db.execute(
                "UPDATE invitations SET status = 'expired' "
                "WHERE status = 'pending' AND expires_at_tick <= ?",
                (tick,),
            )
        return [_invitation(r).with_status(InvitationStatus.EXPIRED) for r in rows]


_IN_CHUNK = 500
"""Ids per `IN (...)` list, far below SQLite's limit on bound parameters."""

_INVITE_SELECT = (
    "SELECT inviter, invitee, privacy, created_tick, status, conversation_id FROM invitations"
)


def _invitation(row: tuple) -> Invitation:
    inviter, invitee, privacy, created, status, conv_id = row
    return Invitation(
        inviter=AgentName(inviter),
        invitee=AgentName(invitee),
        privacy=Privacy(privacy),
        created_tick=created,
        status=InvitationStatus(status),
        conversation_id=ConversationId(conv_id) if conv_id else None,
    )
