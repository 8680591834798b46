"""A unit of work: one transaction that rolls back unless explicitly committed.

    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(agent)
        await uow.world.save_world_state(state)
        await uow.commit()

Leaving the block without `commit()` (an exception, a forgotten call, a
cancelled task) rolls back everything since the last commit. A process killed
mid-unit leaves nothing of it behind: SQLite discards the uncommitted WAL frames.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from storage import repositories as repos


class Transactions(Protocol):
    """A connection a unit runs on (storage.database.Database, or the writer thread's
    storage.direct_db.DirectDatabase)."""

    async def begin(self, *, savepoints: bool = True) -> None: ...

    async def commit_and_continue(self) -> None: ...

    async def rollback_and_continue(self) -> None: ...

    async def end(self, *, commit: bool) -> None: ...


class Repositories(Protocol):
    """What a unit is opened on: a `storage.Storage`, or the writer thread's
    `storage.writer.DirectStorage` (both make their units here, so this module names
    the port, not them)."""

    @property
    def db(self) -> Transactions: ...

    world: repos.WorldRepository
    agents: repos.AgentRepository
    objects: repos.ObjectRepository
    conversations: repos.ConversationRepository
    engine: repos.EngineRepository
    gardener: repos.GardenerRepository


class UnitOfWork:
    def __init__(self, storage: Repositories, *, savepoints: bool = True) -> None:
        self._db = storage.db
        self._savepoints = savepoints
        self.world = storage.world
        self.agents = storage.agents
        self.objects = storage.objects
        self.conversations = storage.conversations
        self.engine = storage.engine
        self.gardener = storage.gardener
        self.commits = 0

    async def __aenter__(self) -> UnitOfWork:
        await self._db.begin(savepoints=self._savepoints)
        return self

    async def commit(self) -> None:
        """Make everything so far durable; the unit stays open for more work."""
        await self._db.commit_and_continue()
        self.commits += 1

    async def rollback(self) -> None:
        """Discard everything since the last commit; the unit stays open."""
        await self._db.rollback_and_continue()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._db.end(commit=False)
