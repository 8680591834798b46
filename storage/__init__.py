"""Persistence: SQLite (the truth), JSONL (audit trail and traces), snapshots.

    async with Storage(data_dir) as storage:
        agent = await storage.agents.get_agent(AgentName("Ember"))
        async with storage.unit_of_work() as uow:
            await uow.agents.save_agent(agent.with_position(Position(3, 4)))
            await uow.commit()

Layout of a data folder: world.db (+ -wal/-shm), events.jsonl, traces/NAME.jsonl,
snapshots/snapshot_TICK.db, backups/ (automatic copies taken before migrations).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import TracebackType

from storage.database import Database, header_version
from storage.errors import (
    CorruptDatabaseError,
    MigrationError,
    NewerSchemaError,
    NotAWorldError,
    StorageError,
    WorldNotFoundError,
)
from storage.event_log import EventLog
from storage.repositories import (
    AgentRepository,
    ConversationRepository,
    EngineRepository,
    GardenerRepository,
    ObjectRepository,
    WorldRepository,
)
from storage.schema import LATEST_VERSION
from storage.snapshots import SnapshotManager
from storage.traces import TraceWriter
from storage.unit_of_work import UnitOfWork
from storage.world_files import recover
from storage.world_lock import WorldBusyError, WorldLock
from storage.writer import BackgroundWriter

DB_FILENAME = "world.db"

__all__ = [
    "DB_FILENAME",
    "LATEST_VERSION",
    "CorruptDatabaseError",
    "Database",
    "EventLog",
    "MigrationError",
    "NewerSchemaError",
    "NotAWorldError",
    "SnapshotManager",
    "Storage",
    "StorageError",
    "TraceWriter",
    "UnitOfWork",
    "WorldBusyError",
    "WorldLock",
    "WorldNotFoundError",
]


log = logging.getLogger("hearth.storage")


class Storage:
    """Everything persistent about one world, opened as an async context manager.

    `create=False` refuses to make a new world.db (for commands that only read);
    `read_only=True` opens the database without the ability to write at all.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        create: bool = True,
        read_only: bool = False,
        synchronous: str = "NORMAL",
    ) -> None:
        self.data_dir = Path(data_dir)
        self.db_path = self.data_dir / DB_FILENAME
        self._create = create
        self._read_only = read_only
        self._synchronous = synchronous
        self.event_log = EventLog(self.data_dir / "events.jsonl")
        self.snapshots = SnapshotManager(self.data_dir / "snapshots")
        self.traces = TraceWriter(self.data_dir / "traces")
        self._db: Database | None = None
        self._writer: BackgroundWriter | None = None
        self._lock: WorldLock | None = None
        self.world_id: str | None = None
        """Which world this is (read at open): its side files are checked against it."""

    @staticmethod
    def world_exists(data_dir: Path) -> bool:
        return (Path(data_dir) / DB_FILENAME).exists()

    @property
    def is_open(self) -> bool:
        return self._db is not None

    @property
    def db(self) -> Database:
        if self._db is None:
            raise StorageError("storage is not open; use `async with Storage(...)`")
        return self._db

    async def open(self) -> Storage:
        exists = self.db_path.exists()
        if exists:
            header_version(self.db_path)  # a file that is no world: refused, nothing made
        if not self._read_only and (exists or self._create):
            # one writer per world (storage/world_lock.py)
            self._lock = WorldLock(self.data_dir).acquire()
            for line in recover(self.data_dir):  # what a killed --init left here
                log.warning("%s", line)
            self.snapshots.tidy()  # side files older snapshots left (`--status` names them)
        try:
            self._db = await Database.open(
                self.db_path,
                create=self._create,
                read_only=self._read_only,
                synchronous=self._synchronous,
                backups_dir=self.data_dir / "backups",
            )
        except BaseException:
            self._release_lock()
            raise
        self.world = WorldRepository(self._db)
        self.agents = AgentRepository(self._db)
        self.objects = ObjectRepository(self._db)
        self.conversations = ConversationRepository(self._db)
        self.engine = EngineRepository(self._db)
        self.gardener = GardenerRepository(self._db)
        self.world_id = await self.world.world_id()
        self.snapshots.world_id = self.world_id
        return self

    def writer(self) -> BackgroundWriter:
        """The background writer on this world's file (started on first use, stopped
        by `close`): where the engine's commits run while its turns go on."""
        if self._read_only:
            raise StorageError(f"{self.db_path}: opened read-only; nothing can be written")
        _ = self.db  # raises if the storage is not open
        if self._writer is None:
            writer = BackgroundWriter(self.db_path, synchronous=self._synchronous)
            writer.start()
            self._writer = writer
        return self._writer

    async def close(self) -> None:
        self.traces.flush_logged()
        if self._writer is not None:
            writer, self._writer = self._writer, None
            await asyncio.to_thread(writer.close)
        if self._db is not None:
            await self._db.close()
            self._db = None
        self._release_lock()

    def _release_lock(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    async def __aenter__(self) -> Storage:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def unit_of_work(self, *, savepoints: bool = True) -> UnitOfWork:
        """A unit of work; `savepoints=False` for writers that never continue after a
        failed statement (see `Database.begin`)."""
        return UnitOfWork(self, savepoints=savepoints)
