"""The observer on a world another process is changing: it opens to watch only.

One process at a time may change a world (storage/world_lock.py). While `hearth --run`
holds one, the observer cannot run an engine there, but it can still show it:

    api = WatchingAPI(data_dir, config, history=HistoryReader(data_dir / "world.db"))
    api.start()          # loads the world read-only and makes the first snapshot
    api.snapshot         # the world as the database has it, as for a live engine
    api.run_state()      # watch_only=True, and who changes the world (`changer`)

`WorldFollower` stands where the EngineRunner would: a thread of its own (with its own
event loop, since an aiosqlite connection belongs to the loop that made it) asks the
database twice a second, through a read-only connection, whether anyone committed
since it last looked (`PRAGMA data_version`: a look at the shared memory, nothing
read). When someone did, it loads the world afresh (`load_simulation`, as the engine
does at start) inside one read transaction, so the world it gets is one committed
moment, and `WatchingAPI` makes the snapshot from it just as the engine's observer
does after a tick (observe/snapshot.py compares the arrays of a world loaded afresh).
The feed comes from the stored turns and events (storage/history.py): every finished
tick once, and the tick in progress turn by turn as its turns are committed.

It never writes, never takes the writer lock, and opens the world file only through
SQLite (storage/database.py `header_version` says why). Commands that would run an
engine do nothing here; the app says so. A loaded world may hold some turns of its
own tick (the other process commits them as they end), which `past` allows for.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from observe.api import ObserverAPI, RunState, Update
from observe.snapshot import FeedLine, WorldSnapshot
from services.simulation import Simulation, load_simulation
from storage import DB_FILENAME, Storage, StorageError
from storage.batch_file import BatchWait, read_pending
from storage.seats_file import read_states
from storage.world_lock import holder

if TYPE_CHECKING:
    from config import HearthConfig
    from storage.history import HistoryReader, PastTick

log = logging.getLogger("hearth.observe")

T = TypeVar("T")

POLL_SECONDS = 0.5
"""How often the follower asks whether the world changed."""

SPEED_WINDOW = 5.0
"""Seconds of loads the ticks-per-second figure is taken over."""

WATCH_ONLY = "this observer only watches: another process changes the world"

ELSEWHERE = ("(not known here: this observer only watches, and what an agent perceived "
             "is kept by the process changing the world)")
"""The agent detail's perception, which only the engine that ran the turn keeps."""


@dataclass(frozen=True, slots=True)
class MindKind:
    kind: str


NO_TURN_YET = MindKind("not known yet (no turn stored)")


class LoadedWorld:
    """The world as the database had it at one moment: what a `SnapshotMaker` reads of
    an engine (`sim`, `mind_for(name).kind`), and nothing that could run it."""

    halted = None

    def __init__(self, sim: Simulation, kinds: Mapping[str, str]) -> None:
        self.sim = sim
        self._kinds = {name: MindKind(kind) for name, kind in kinds.items()}

    @property
    def tick(self) -> int:
        return self.sim.world.tick

    def mind_for(self, name: str) -> MindKind:
        return self._kinds.get(name, NO_TURN_YET)


async def load_world(storage: Storage, config: HearthConfig) -> LoadedWorld:
    """The world and each agent's mind kind, read in one read transaction (one
    committed moment, however the writer goes on meanwhile)."""
    db = storage.db
    async with db.one_moment():
        sim = await load_simulation(storage, config)
        kinds = {str(agent): str(kind)
                 for agent, kind in await db.fetchall("SELECT agent, kind FROM minds")}
    return LoadedWorld(sim, kinds)


def changer(data_dir: Path) -> str | None:
    """Who holds the world's writer lock, as "process 1234 (hearth --run 1000)"."""
    who = holder(data_dir)
    return None if who is None else who.rpartition(" since ")[0] or who


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` names now, from a stat (which opens nothing)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class WorldFollower:
    """Where the EngineRunner stands for an observer that only watches: its thread
    loads the world read-only whenever the database changed, and tells its listeners
    (on that thread). It runs no tick; the runner's commands do nothing."""

    def __init__(self, data_dir: Path, config: HearthConfig, *,
                 poll_seconds: float = POLL_SECONDS) -> None:
        self.data_dir = Path(data_dir)
        self.db_path = self.data_dir / DB_FILENAME
        self.config = config
        self.poll_seconds = poll_seconds
        self.engine: LoadedWorld | None = None
        """The world last loaded (named as the runner's engine is)."""
        self.error: BaseException | None = None
        """Why the thread ended, if it failed."""
        self.trouble: str | None = None
        """Why the world cannot be followed now, in words; None while all is well."""
        self.changer: str | None = None
        """Who changes the world, as its lock says (None: nobody says so now)."""
        self.waiting: BatchWait | None = None
        """The Message Batch that changer says it waits on (storage/batch_file.py)."""
        self.loads = 0
        self._listeners: list[Callable[[LoadedWorld], object]] = []
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the runner's face

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def is_paused(self) -> bool:
        return True

    @property
    def remaining(self) -> int | None:
        return 0

    def on_tick(self, callback: Callable[..., object]) -> None:
        """No tick runs here: see `on_load`."""

    def on_load(self, listener: Callable[[LoadedWorld], object]) -> None:
        """Call `listener` with every world loaded (on the follower's thread)."""
        self._listeners.append(listener)

    def request_tick(self) -> None:
        log.debug("ignored a tick: %s", WATCH_ONLY)

    def request_run(self, count: int | None = None) -> None:
        log.debug("ignored a run: %s", WATCH_ONLY)

    def request_pause(self) -> None:
        pass

    def request_force(self, name: str) -> None:
        log.debug("ignored a forced turn: %s", WATCH_ONLY)

    def call(self, fn: Callable[[Any], T]) -> Future[T]:
        future: Future[T] = Future()
        future.set_exception(RuntimeError(WATCH_ONLY))
        return future

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> None:
        """Load the world a first time and follow it; a world that cannot be read
        raises its StorageError (one line for the person)."""
        if self.is_running:
            return
        self._thread = threading.Thread(target=self._main, name="hearth-watch", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise StorageError(f"{self.db_path}: the world could not be read within "
                               f"{timeout:g} s")
        if isinstance(self.error, StorageError):
            raise self.error
        if self.error is not None:
            raise RuntimeError(f"the world could not be read: {self.error}") from self.error

    def stop(self, timeout: float = 5.0) -> bool:
        self._stopping.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # ------------------------------------------------------------------ the thread

    def _main(self) -> None:
        try:
            asyncio.run(self._follow())
        except BaseException as exc:  # reported through `error`, never lost
            self.error = exc
            if not isinstance(exc, StorageError):
                log.exception("following the world failed")
        finally:
            self._ready.set()

    async def _follow(self) -> None:
        storage = Storage(self.data_dir, create=False, read_only=True)
        await storage.open()
        try:
            followed = _identity(self.db_path)
            self.changer = changer(self.data_dir)
            self.waiting = read_pending(self.data_dir) if self.changer else None
            seen = await _data_version(storage)
            self._tell(await load_world(storage, self.config))
            self._ready.set()
            while not await asyncio.to_thread(self._stopping.wait, self.poll_seconds):
                self.changer = changer(self.data_dir)
                self.waiting = read_pending(self.data_dir) if self.changer else None
                if _identity(self.db_path) != followed:
                    self.trouble = (f"the world in {self.data_dir} was replaced or moved; "
                                    "open the observer again to see it")
                    return
                now = await _data_version(storage)
                if now == seen:
                    continue
                try:
                    world = await load_world(storage, self.config)
                    self._tell(world)
                except Exception as exc:  # said in the header; the next look tries again
                    log.debug("reading the world failed", exc_info=True)
                    self.trouble = f"cannot read the world now ({exc})"
                    continue
                seen, self.trouble = now, None
        finally:
            await storage.close()

    def _tell(self, world: LoadedWorld) -> None:
        self.engine = world
        self.loads += 1
        for listener in list(self._listeners):
            listener(world)


async def _data_version(storage: Storage) -> int:
    """Changes whenever another connection commits (SQLite's `PRAGMA data_version`)."""
    row = await storage.db.fetchone("PRAGMA data_version")
    return int(row[0]) if row else 0


class StoredLines:
    """The feed of a world followed from its database: each stored tick's lines once,
    and those of the tick in progress as its turns are committed (stored lines never
    change, so what is new is what was not shown before)."""

    def __init__(self, history: HistoryReader, *, recall: int = 3, most: int = 50) -> None:
        self.history = history
        self.recall = recall
        """Ticks before the first one seen whose lines start the feed."""
        self.most = most
        """Ticks read at one look at most (the feed keeps only so much)."""
        self._next: int | None = None
        """The first tick not yet read whole."""
        self._shown: Counter[FeedLine] = Counter()
        """Lines of tick `_next` shown already."""

    def take(self, live_tick: int) -> list[FeedLine]:
        """Lines not shown yet, up to those committed so far of `live_tick`."""
        start = max(0, live_tick - self.recall) if self._next is None else self._next
        shown = self._shown
        if start < live_tick - self.most:
            start, shown = live_tick - self.most, Counter()
        fresh: list[FeedLine] = []
        for tick in range(start, live_tick + 1):
            stored = [FeedLine.from_past(p)
                      for p in self.history.lines(tick)]
            left = shown.copy()
            for line in stored:
                if left[line] > 0:
                    left[line] -= 1
                else:
                    fresh.append(line)
            shown = Counter(stored) if tick == live_tick else Counter()
        if start <= live_tick:  # a tick that went back (a world replaced) reads nothing
            self._next, self._shown = live_tick, shown
        return fresh


class WatchingAPI(ObserverAPI):
    """The ObserverAPI of a world another process changes: the same reads, from the
    database; no command runs anything."""

    watch_only = True

    def __init__(self, data_dir: Path, config: HearthConfig, *,
                 history: HistoryReader | None = None, poll_seconds: float = POLL_SECONDS,
                 feed_size: int = 5000) -> None:
        self.follower = WorldFollower(data_dir, config, poll_seconds=poll_seconds)
        super().__init__(self.follower, history=history,  # type: ignore[arg-type]
                         feed_size=feed_size)
        self._stored = StoredLines(history) if history is not None else None
        self._loaded_at: deque[tuple[float, int]] = deque(maxlen=32)
        self.follower.on_load(self._after_load)

    def start(self, timeout: float = 60.0) -> WorldSnapshot:
        self.follower.start(timeout)
        return self.snapshot

    def run_state(self) -> RunState:
        now = time.monotonic()
        recent = [(at, tick) for at, tick in list(self._loaded_at) if now - at <= SPEED_WINDOW]
        speed = 0.0
        if len(recent) >= 2 and recent[-1][0] > recent[0][0]:
            speed = (recent[-1][1] - recent[0][1]) / (recent[-1][0] - recent[0][0])
        follower = self.follower
        wait = follower.waiting if follower.changer is not None else None
        return RunState(follower.is_running, True, 0, speed, follower.trouble,
                        watch_only=True, changer=follower.changer,
                        waiting=None if wait is None else wait.words(time.time()))

    def perception(self, name: str) -> Future[str]:
        future: Future[str] = Future()
        future.set_result(ELSEWHERE)
        return future

    def past(self, tick: int) -> PastTick:
        """As for a live engine, but the live positions may already hold steps of the
        live tick (turns commit as they end), so those are undone too: an agent's
        first step after `tick` starts where it stood then, whenever it was taken."""
        if self.history is None:
            raise RuntimeError("no history reader was given")
        live = self.snapshot
        if tick >= live.tick:
            raise ValueError(f"tick {tick} is not past yet: the live world is at tick "
                             f"{live.tick}, so the newest stored tick is {live.tick - 1}")
        return self.history.at(
            tick, live.tick + 1, {v.name: (v.position.x, v.position.y) for v in live.agents})

    def _after_load(self, world: LoadedWorld) -> None:
        """On the follower's thread, as `_after_tick` is on the engine's."""
        lines = tuple(self._stored.take(world.tick)) if self._stored is not None else ()
        with self._lock:
            self._feed.extend(lines)
        self._maker.note_activity(lines)
        snapshot = self._maker.make(
            world, seats=read_states(self.follower.data_dir))  # type: ignore[arg-type]
        self._snapshot = snapshot
        self._loaded_at.append((time.monotonic(), world.tick))
        self._publish(Update(snapshot, lines))
