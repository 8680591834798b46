"""Copying the write-ahead log into world.db from a thread of its own.

In WAL mode SQLite normally checkpoints inside the commit that pushes the log past
`wal_autocheckpoint` pages, and with `synchronous = NORMAL` that checkpoint is the
only place anything is flushed to disk. So every few ticks one commit paid for
copying megabytes and two fsyncs: measured with 1,000 agents, 6-11 ms a tick on
average, and seconds when the disk stalled, all of it inside a tick.

Here a separate connection runs a PASSIVE checkpoint every `every_s` seconds. A
passive checkpoint never takes the write lock and never waits for readers, and the
whole of it (copying and fsync) runs inside one SQLite call, which releases the GIL,
so it overlaps the engine's turns. The writer keeps a high `wal_autocheckpoint`
(`SAFETY_PAGES`) only as a net: should this thread fall behind or fail, the log
still cannot grow without bound. Durability is unchanged: committed transactions
are in the log either way; the checkpoint only moves them.

When the writer stops (`stop`, from `Database.close`, after the last commit), one
TRUNCATE checkpoint folds the rest of the log in and empties world.db-wal. SQLite
would do that itself when the last connection closes, but only the last: a reader
beside the world (`--watch`, `--gardener`, the observer's own history reader) that
closes after the writer cannot, being read-only, and a passive checkpoint never
shrinks the file, so the log stayed at its high-water mark (66 MB after a run, beside
a 4.7 MB world). A reader still inside a read transaction keeps the log from being
emptied; the checkpoint then waits at most `SETTLE_PATIENCE_S` and leaves it, quietly:
the next writer folds it in, and `--status` says so meanwhile.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

log = logging.getLogger("hearth.storage")

SAFETY_PAGES = 16_000
"""The writer's own `wal_autocheckpoint` while this thread runs (about 64 MB of log)."""

SETTLE_PATIENCE_S = 0.5
"""How long the checkpoint at stop waits for readers to leave the log, at most."""


class WalCheckpointer:
    """A daemon thread that checkpoints `path`'s WAL every `every_s` seconds until stopped."""

    def __init__(self, path: Path, *, every_s: float = 1.0, synchronous: str = "NORMAL") -> None:
        if every_s <= 0:
            raise ValueError(f"every_s must be a positive number of seconds, got {every_s!r}")
        self.path = Path(path)
        self.every_s = every_s
        self.synchronous = synchronous
        self.checkpoints = 0
        """Checkpoints run so far (for tests and status)."""
        self.failure: str | None = None
        """Why the last checkpoint failed, if it did (the next one is tried anyway)."""
        self.settled: bool | None = None
        """Whether the checkpoint at stop emptied the log (None: it has not run)."""
        self.settle_ms: float | None = None
        """How long that checkpoint took."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, name=f"hearth-wal-{self.path.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread, once it has folded the log into the file (see the module)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
        except sqlite3.Error as exc:
            self.failure = f"cannot open {self.path}: {exc}"
            log.warning("WAL checkpoints fall back to the writer: %s", self.failure)
            return
        try:
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            while not self._stop.wait(self.every_s):
                self._checkpoint(conn)
            self._settle(conn)
        finally:
            conn.close()

    def _settle(self, conn: sqlite3.Connection) -> None:
        """Fold the whole log into the file and empty it, waiting only briefly for a
        reader to leave it; a busy or failing checkpoint leaves the log as it is (every
        committed transaction is in it either way)."""
        started = time.perf_counter()
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(SETTLE_PATIENCE_S * 1000)}")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as exc:  # a full disk, say: the log stays, whole
            log.debug("the log was not folded into %s at close: %s", self.path.name, exc)
            busy = 1
        self.settled = not busy
        self.settle_ms = (time.perf_counter() - started) * 1000
        log.debug("checkpoint at close of %s: %s in %.1f ms", self.path.name,
                  "log emptied" if self.settled else "a reader holds the log; left",
                  self.settle_ms)

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        """One passive checkpoint. A failure is logged when it starts (or changes) and
        when it clears, not every second while it lasts."""
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:  # e.g. the disk is full: the writer's net still holds
            if str(exc) != self.failure:
                log.warning("background WAL checkpoints are failing: %s", exc)
            self.failure = str(exc)
            return
        if self.failure is not None:
            log.warning("background WAL checkpoints work again")
        self.failure = None
        self.checkpoints += 1
