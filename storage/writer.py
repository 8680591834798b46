"""The engine's writes, in a thread and on a connection of their own.

A commit of a 1,000-agent tick is mostly SQLite's own work (tens of ms), which
releases the GIL. Run in this thread, it overlaps the next tick's turns on a
second core instead of stopping the engine until it is done. Jobs are the
repositories' ordinary code over a `DirectDatabase` (storage/direct_db.py), run
one at a time in the order they were handed in, each inside one unit of work
that commits only if the job returns.

    writer = storage.writer()                  # started on first use
    future = writer.submit(job)                # job(unit_storage) -> coroutine
    result = await asyncio.wrap_future(future)

`DirectStorage` is what a job gets: the same repositories as `Storage`, bound to
the writer's connection, and `unit_of_work()`. A job must not await anything but
them (it runs without an event loop); one that does fails with a StorageError.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from storage import direct_db
from storage.direct_db import CACHED_STATEMENTS, DirectDatabase, run_to_end
from storage.errors import StorageError
from storage.repositories import (
    AgentRepository,
    ConversationRepository,
    EngineRepository,
    GardenerRepository,
    ObjectRepository,
    WorldRepository,
)
from storage.unit_of_work import UnitOfWork
from storage.wal_checkpointer import SAFETY_PAGES

log = logging.getLogger("hearth.storage")

T = TypeVar("T")
Job = Callable[["DirectStorage"], Coroutine[Any, Any, T]]


class DirectStorage:
    """The repositories on the writer's connection (the writer thread only)."""

    def __init__(self, db: DirectDatabase) -> None:
        self.db = db
        self.world = WorldRepository(db)  # type: ignore[arg-type]
        self.agents = AgentRepository(db)  # type: ignore[arg-type]
        self.objects = ObjectRepository(db)  # type: ignore[arg-type]
        self.conversations = ConversationRepository(db)  # type: ignore[arg-type]
        self.engine = EngineRepository(db)  # type: ignore[arg-type]
        self.gardener = GardenerRepository(db)  # type: ignore[arg-type]

    def unit_of_work(self, *, savepoints: bool = False) -> UnitOfWork:
        return UnitOfWork(self, savepoints=savepoints)  # type: ignore[arg-type]


class BackgroundWriter:
    """One daemon thread with one connection to `path`, running jobs in order."""

    def __init__(self, path: Path, *, synchronous: str = "NORMAL") -> None:
        self.path = Path(path)
        self.synchronous = synchronous
        self._jobs: queue.SimpleQueue[
            tuple[Job[Any], concurrent.futures.Future[Any]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._opened = threading.Event()
        self._open_error: BaseException | None = None
        self.jobs_run = 0

    def start(self) -> None:
        """Start the thread and open its connection (an error opening it is raised here)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, name=f"hearth-writer-{self.path.name}", daemon=True)
        self._thread.start()
        self._opened.wait()
        if self._open_error is not None:
            self._thread.join()
            self._thread = None
            raise StorageError(f"{self.path}: cannot open the writer ({self._open_error})")

    @property
    def running(self) -> bool:
        return self._thread is not None

    def submit(self, job: Job[T]) -> concurrent.futures.Future[T]:
        """Queue `job`; its future holds what it returned, or what it raised (its
        writes then rolled back)."""
        if self._thread is None:
            raise StorageError("the writer is not running")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((job, future))
        return future

    def close(self) -> None:
        """Finish the jobs already queued, then stop the thread and close the connection."""
        if self._thread is None:
            return
        self._jobs.put(None)
        self._thread.join()
        self._thread = None

    # --- the thread --------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # A lock another program holds is waited for in spells of at most 5 s, between
        # which `DirectDatabase.begin` says it waits; never longer than the patience.
        conn = sqlite3.connect(self.path, isolation_level=None,
                               timeout=min(5.0, direct_db.LOCK_PATIENCE),
                               cached_statements=CACHED_STATEMENTS)
        try:
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
            # Checkpoints are the checkpointer thread's; as for the main connection,
            # a commit here moves the log only if it has grown past the net.
            conn.execute(f"PRAGMA wal_autocheckpoint = {SAFETY_PAGES}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self) -> None:
        try:
            conn = self._connect()
        except (sqlite3.Error, OSError) as exc:
            self._open_error = exc
            self._opened.set()
            return
        self._opened.set()
        storage = DirectStorage(DirectDatabase(conn))
        try:
            while (item := self._jobs.get()) is not None:
                job, future = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    result = run_to_end(job(storage))
                except BaseException as exc:  # handed to whoever waits on the job
                    if conn.in_transaction:
                        try:
                            conn.execute("ROLLBACK")
                        except sqlite3.Error:
                            log.exception("the writer could not roll back a failed job")
                    future.set_exception(exc)
                else:
                    self.jobs_run += 1
                    future.set_result(result)
        finally:
            conn.close()
