"""EngineRunner: the engine in its own thread with its own event loop, driven by commands.

    runner = EngineRunner(lambda: make_engine())   # builds the engine on the runner's loop
    runner.on_tick(lambda ctx: print(ctx.tick))     # called on the runner thread
    runner.start()
    runner.request_run(10)                          # or request_tick(), request_run()
    runner.request_pause()
    runner.request_force("Ember")                   # Ember acts first in its cluster
    future = runner.call(lambda engine: engine.tick) # run on the engine thread, between ticks
    runner.stop()                                   # turn in flight finishes, then commit

The UI thread never touches the engine: it sends commands through a thread-safe
queue and receives each finished TickContext through the callbacks (which should
hand it on, e.g. `App.call_from_thread`, and return quickly). The engine, its
database connection and its minds all live on the runner's loop, built there by
the factory, because an asyncio connection belongs to the loop that made it.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from engine.context import TickContext
    from engine.engine import HearthEngine

log = logging.getLogger("hearth.runner")

EngineFactory = Callable[[], Awaitable["HearthEngine"]]
T = TypeVar("T")


class EngineRunner:
    def __init__(self, factory: EngineFactory, pace: float | None = None) -> None:
        self._factory = factory
        self.pace = pace
        """Ticks a second the runner keeps to while running (None: as fast as it goes):
        a person watching can follow the world. Set through `request_pace`."""
        self._due = 0.0
        """When the next tick may begin (time.monotonic), at the pace."""
        self._commands: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._callbacks: list[Callable[[TickContext], object]] = []
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._remaining: int | None = 0
        """Ticks still to run: 0 idle, None without end."""
        self._paused = True
        self.engine: HearthEngine | None = None
        self.error: BaseException | None = None
        self.ticks_run = 0
        self.seconds_ticking = 0.0
        """Seconds spent running ticks (not waiting for a command, paused or idle);
        like `ticks_run`, updated before the tick's callbacks are called."""

    # ------------------------------------------------------------------ state

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def is_paused(self) -> bool:
        with self._lock:
            return self._paused

    @property
    def remaining(self) -> int | None:
        """Ticks still to run: 0 when idle, None when running without end."""
        with self._lock:
            return 0 if self._paused else self._remaining

    def on_tick(self, callback: Callable[[TickContext], object]) -> None:
        self._callbacks.append(callback)

    # ------------------------------------------------------------------ commands

    def start(self, timeout: float = 30.0) -> None:
        """Start the thread and wait until the engine is loaded (or failed to load)."""
        if self.is_running:
            return
        self._thread = threading.Thread(target=self._main, name="hearth-engine", daemon=True)
        self._thread.start()
        self._ready.wait(timeout)
        if self.error is not None:
            raise RuntimeError(f"the engine could not start: {self.error}") from self.error

    def request_tick(self) -> None:
        self._commands.put(("run", 1))

    def request_run(self, count: int | None = None) -> None:
        """Run `count` ticks, or without end when None (until paused)."""
        if count is not None and count < 1:
            raise ValueError(f"count must be at least 1, not {count}")
        self._commands.put(("run", count))

    def request_pause(self) -> None:
        self._commands.put(("pause", None))

    def request_pace(self, ticks_per_second: float | None) -> None:
        """Keep to this many ticks a second from the next tick on (None: no pace)."""
        if ticks_per_second is not None and not ticks_per_second > 0:
            raise ValueError(f"a pace must be above 0, not {ticks_per_second}")
        self._commands.put(("pace", ticks_per_second))

    def request_force(self, name: str) -> None:
        """Let this agent act first in its cluster at the next tick."""
        self._commands.put(("force", name))

    def call(self, fn: Callable[[HearthEngine], T]) -> Future[T]:
        """Run `fn(engine)` on the engine thread between ticks; its result comes back
        through the future. For reads of live state that no snapshot holds (an agent's
        perception now): `fn` must be quick and must not change the world."""
        future: Future[T] = Future()
        if not self.is_running:
            future.set_exception(RuntimeError("the engine is not running"))
        else:
            self._commands.put(("call", (fn, future)))
        return future

    def stop(self, timeout: float = 5.0) -> bool:
        """Finish the turn in flight, commit, close; True if the thread ended in time."""
        if self.engine is not None:
            self.engine.request_stop()  # a plain flag: safe to set from any thread
        self._commands.put(("stop", None))
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # ------------------------------------------------------------------ the thread

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported through `error`, never lost
            self.error = exc
            log.exception("the engine thread failed")
        finally:
            self._ready.set()
            self._refuse_calls()

    async def _serve(self) -> None:
        try:
            engine = await self._factory()
        except Exception as exc:  # `start` hands it on; whoever started says it in a line
            self.error = exc
            log.debug("the engine could not start", exc_info=True)
            return
        self.engine = engine
        self._ready.set()
        try:
            while True:
                # Idle, or early for the pace: wait for a command off the loop (a pause,
                # a call) rather than sleep, so the observer is answered at once.
                wait = 0.25 if self._idle() else min(0.25, self._due - time.monotonic())
                try:
                    if wait > 0:
                        command, arg = await asyncio.to_thread(self._commands.get, True, wait)
                    else:
                        command, arg = self._commands.get_nowait()
                except queue.Empty:
                    command, arg = "", None
                if command == "stop":
                    return
                if command == "call":
                    _answer(engine, *arg)
                elif command == "force":
                    engine.force_turn(arg)
                elif command == "pace":
                    self.pace, self._due = arg, 0.0
                else:
                    self._apply(command, arg)
                if not self._idle() and time.monotonic() >= self._due:
                    self._due = time.monotonic() + (1.0 / self.pace if self.pace else 0.0)
                    await self._one_tick(engine)
        finally:
            await engine.close()

    def _refuse_calls(self) -> None:
        """Calls still queued when the engine stopped get an error, not a hang."""
        while True:
            try:
                command, arg = self._commands.get_nowait()
            except queue.Empty:
                return
            if command == "call":
                arg[1].set_exception(RuntimeError("the engine has stopped"))

    def _idle(self) -> bool:
        with self._lock:
            return self._paused or self._remaining == 0

    def _apply(self, command: str, arg: Any) -> None:
        with self._lock:
            if command == "run":
                self._remaining = arg if arg is None else (self._remaining or 0) + arg
                self._paused = False
            elif command == "pause":
                self._paused = True
                self._remaining = 0

    async def _one_tick(self, engine: HearthEngine) -> None:
        if engine.stop_requested:  # stopping: no new tick is begun
            with self._lock:
                self._paused, self._remaining = True, 0
            return
        started = time.monotonic()
        ctx = await engine.tick_once()
        self.seconds_ticking += time.monotonic() - started
        self.ticks_run += 1
        with self._lock:
            if self._remaining is not None:
                self._remaining = max(0, self._remaining - 1)
                if self._remaining == 0:
                    self._paused = True
            if engine.halted is not None:  # nothing can go on until a person fixes it
                self._paused, self._remaining = True, 0
        for callback in list(self._callbacks):
            try:
                callback(ctx)
            except Exception:
                log.exception("an on_tick callback failed")


def _answer(engine: HearthEngine, fn: Callable[[HearthEngine], Any], future: Future[Any]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(fn(engine))
    except Exception as exc:  # handed to the caller, who asked
        future.set_exception(exc)
