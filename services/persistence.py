"""From a ChangeSet to rows: capture the changed values now, write them later.

A ChangeSet holds keys. `capture` turns them into the values the services hold
at that moment (domain values are immutable, so this is a handful of lookups),
which freezes one agent's turn exactly as it ended even while other turns go on.
Captures merge in order (the later value of a key wins) and `write_capture`
writes one merged capture with a few bulk statements inside the caller's unit of
work, so a batch of turns costs one transaction, not one per turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from core.agent import Agent, Inventory
from core.conversation import (
    Conversation,
    ConversationTurn,
    Invitation,
    InvitationStatus,
    Membership,
)
from core.objects import WorldObject
from core.places import NamedPlace
from core.structures import Structure
from core.types import AgentName, ConversationId, Position
from core.world import Cell, WorldState
from services.changes import ChangeSet

if TYPE_CHECKING:
    from services.agent_service import AgentService
    from services.conversation_service import ConversationService
    from services.gathering import Gathering
    from services.world_service import WorldService
    from storage.unit_of_work import UnitOfWork

EdgeKey = tuple[int, int, str]


class Captured(Protocol):
    """The services whose values `capture` reads: a Simulation (services/simulation.py,
    which writes through this module, so this one names the port, not it)."""

    world: WorldService
    agents: AgentService
    conversations: ConversationService
    gathering: Gathering


@dataclass(frozen=True)
class ConversationRows:
    """One conversation's rows to write: its own (None: unchanged) and the memberships
    that changed."""

    row: Conversation | None
    members: tuple[Membership, ...]

    def then(self, later: ConversationRows) -> ConversationRows:
        """These rows, then a later turn's: its words win."""
        members = {m.name: m for m in self.members}
        members.update((m.name, m) for m in later.members)
        return ConversationRows(later.row or self.row,
                                tuple(members[n] for n in sorted(members)))


@dataclass
class Capture:
    """Values to write, as they were when captured."""

    world_state: WorldState | None = None
    cells: dict[Position, Cell] = field(default_factory=dict)
    edges: dict[EdgeKey, list[tuple[str, int]]] = field(default_factory=dict)
    agents: dict[AgentName, Agent] = field(default_factory=dict)
    objects_saved: dict[str, WorldObject] = field(default_factory=dict)
    objects_deleted: set[str] = field(default_factory=set)
    places: dict[str, NamedPlace] = field(default_factory=dict)
    structures_saved: dict[str, Structure] = field(default_factory=dict)
    structures_deleted: set[str] = field(default_factory=set)
    conversations: dict[ConversationId, ConversationRows] = field(default_factory=dict)
    """What turns changed of each conversation: its row, the memberships they changed."""
    turns: list[ConversationTurn] = field(default_factory=list)
    invitations: list[Invitation] = field(default_factory=list)
    invitation_updates: list[tuple[Invitation, InvitationStatus]] = field(default_factory=list)
    spent: dict[Position, tuple[int, int]] = field(default_factory=dict)
    """Cell -> (units missing, since tick); (0, 0) forgets the cell."""

    def merge(self, later: Capture) -> None:
        """Fold a later capture into this one: its values win, its lists follow.

        A commit folds hundreds of turn captures, most holding one agent and little
        else, so empty parts are skipped rather than merged.
        """
        if later.world_state is not None:
            self.world_state = later.world_state
        if later.cells:
            self.cells.update(later.cells)
        if later.edges:
            self.edges.update(later.edges)
        if later.agents:
            self.agents.update(later.agents)
        if later.objects_deleted or later.objects_saved:
            _fold(self.objects_saved, self.objects_deleted,
                  later.objects_saved, later.objects_deleted)
        if later.places:
            self.places.update(later.places)
        if later.structures_deleted or later.structures_saved:
            _fold(self.structures_saved, self.structures_deleted,
                  later.structures_saved, later.structures_deleted)
        for cid, rows in later.conversations.items():
            kept = self.conversations.get(cid)
            self.conversations[cid] = rows if kept is None else kept.then(rows)
        if later.turns:
            self.turns += later.turns
        if later.invitations:
            self.invitations += later.invitations
        if later.invitation_updates:
            self.invitation_updates += later.invitation_updates
        if later.spent:
            self.spent.update(later.spent)


def _fold(saved: dict[str, Any], deleted: set[str],
          later_saved: Mapping[str, Any], later_deleted: set[str]) -> None:
    """Fold later saves and deletes of ids into earlier ones: the later word on an id wins."""
    for key in later_deleted:
        saved.pop(key, None)
    deleted.update(later_deleted)
    deleted.difference_update(later_saved)  # in place: the caller's set is the one kept
    saved.update(later_saved)


def capture(sim: Captured, changes: ChangeSet, spent: Iterable[Position] = ()) -> Capture:
    """The current values of everything `changes` names (and of the `spent` cells)."""
    world, agents = sim.world, sim.agents
    out = Capture()
    if changes.world_state:
        out.world_state = world.state
    for pos in changes.cells:
        out.cells[pos] = world.cell(pos)
    for key in changes.edges:
        out.edges[key] = list(world.edge_materials.get(key, []))
    for name in changes.agents:
        agent = agents.get_agent(name)
        if agent is not None:
            out.agents[name] = agent
    if changes.objects_deleted:  # (a new Capture's own sets and lists are empty)
        out.objects_deleted = set(changes.objects_deleted)
    for oid in changes.objects_saved:
        obj = world.get_object(oid)
        if obj is not None:
            out.objects_saved[oid] = obj
    for key in changes.places_saved:
        place = world.place_named(key)
        if place is not None:
            out.places[key] = place
    if changes.structures_deleted:
        out.structures_deleted = set(changes.structures_deleted)
    if changes.structures_saved:
        by_id = {s.id: s for s in world.all_structures()}
        for sid in changes.structures_saved:
            if sid in by_id:
                out.structures_saved[sid] = by_id[sid]
    for cid, change in changes.conversations.items():
        # As this turn left it, not as the service holds it now: a turn far away may
        # have changed the same conversation since, and its change is its own to write.
        out.conversations[cid] = ConversationRows(
            change.row, tuple(change.members[n] for n in sorted(change.members)))
    if changes.turns:
        out.turns = list(changes.turns)
    if changes.invitations:
        out.invitations = list(changes.invitations)
    if changes.invitation_updates:
        out.invitation_updates = list(changes.invitation_updates)
    if changes.spent or spent:
        for pos in (*changes.spent, *spent):
            record = sim.gathering.spent_at(pos)
            out.spent[pos] = (record.units, record.since_tick) if record else (0, 0)
    return out


async def write_capture(
    cap: Capture, uow: UnitOfWork, *, inventories: Mapping[str, Inventory] | None = None
) -> int:
    """Write a capture inside an open unit of work; returns how many rows it touched.

    `inventories`, if given, holds the inventory last committed for each agent:
    an agent still carrying that very object keeps its inventory rows as they are.
    """
    written = 0
    if cap.world_state is not None:
        await uow.world.save_world_state(cap.world_state)
        written += 1
    if cap.cells:
        await uow.world.set_cells(cap.cells)
        written += len(cap.cells)
    for (x, y, side), materials in sorted(cap.edges.items()):
        await uow.world.set_edge_materials(x, y, side, materials)
    written += len(cap.edges)
    if cap.agents:
        stored = () if inventories is None else {
            n for n, a in cap.agents.items() if inventories.get(n) is a.inventory
        }
        await uow.agents.save_agents(
            [cap.agents[n] for n in sorted(cap.agents)], inventory_stored=stored
        )
        written += len(cap.agents)
    await uow.objects.delete_objects(sorted(cap.objects_deleted))
    await uow.objects.save_objects([cap.objects_saved[oid] for oid in sorted(cap.objects_saved)])
    written += len(cap.objects_deleted) + len(cap.objects_saved)
    for key in sorted(cap.places):
        await uow.world.save_named_place(cap.places[key])
    written += len(cap.places)
    for sid in sorted(cap.structures_deleted):
        await uow.world.delete_structure(sid)
    for sid in sorted(cap.structures_saved):
        await uow.world.save_structure(cap.structures_saved[sid])
    written += len(cap.structures_deleted) + len(cap.structures_saved)
    await uow.conversations.save_changes(
        [(cid, cap.conversations[cid].row, cap.conversations[cid].members)
         for cid in sorted(cap.conversations)]
    )
    written += len(cap.conversations)
    await uow.conversations.add_turns(cap.turns)
    await uow.conversations.add_invitations(cap.invitations)
    await uow.conversations.set_invitation_statuses(cap.invitation_updates)
    written += len(cap.turns) + len(cap.invitations) + len(cap.invitation_updates)
    if cap.spent:
        await uow.world.set_spent_many(
            [(pos, units, since) for pos, (units, since) in sorted(cap.spent.items())]
        )
        written += len(cap.spent)
    return written
