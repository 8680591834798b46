"""SharingAPI: an observer that holds the world only while it runs it (issue 43).

One world has one writer. An observer that kept the writer's lock while paused would
stop a `hearth --run` beside it for nothing, so this one opens the world to watch it
(observe/watching.py) and takes it, building its engine, only when a person runs it;
paused for `LET_GO_AFTER` seconds, it closes the engine and watches again. Watching, it
follows whatever another process commits, and says who that is; once nobody holds the
world, the run keys take it back. The app sees one observer throughout: updates come
from whichever side is active, and the switches happen on a thread of their own, so
the screen never waits for an engine to open or close.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from observe.api import ObserverAPI, RunState, Update
from storage import WorldBusyError

log = logging.getLogger("hearth.observer")

LET_GO_AFTER = 1.0
"""Seconds paused before the observer lets go of the world (a pause and a run at once
do not close and open the engine)."""


class SharingAPI:
    def __init__(self, make_engine_api: Callable[[], ObserverAPI],
                 make_watcher: Callable[[], ObserverAPI], *, first: ObserverAPI | None = None,
                 pace: float | None = None) -> None:
        """`first`: an engine's observer already started (the world was opened for
        running: its checks passed); None: start watching."""
        self._make_engine_api = make_engine_api
        self._make_watcher = make_watcher
        self._first = first
        self.active: ObserverAPI = first if first is not None else make_watcher()
        self._listeners: list[Callable[[Update], object]] = []
        self._switch = threading.Lock()
        self._pace = pace
        self._paused_at: float | None = None
        self._closed = False
        self.said: str | None = None
        """Why the world could not be taken, in words (None: nothing to say)."""

    # ------------------------------------------------------------------ the app's face

    def __getattr__(self, name: str) -> Any:  # snapshot, history, feed, cell, past...
        return getattr(self.__dict__["active"], name)

    @property
    def watch_only(self) -> bool:
        """Only while another process holds the world: then no key may run it here."""
        return self.active.watch_only and self.active.run_state().changer is not None

    @property
    def running_here(self) -> bool:
        return not self.active.watch_only

    def run_state(self) -> RunState:
        state = self.active.run_state()
        if self.active.watch_only and state.changer is None and state.running:
            # Watching a world nobody changes: to the person, this observer is paused.
            return RunState(True, True, 0, 0.0, self.said, pace=self._pace)
        return state

    def listen(self, listener: Callable[[Update], object]) -> None:
        self._listeners.append(listener)

    def start(self, timeout: float = 60.0) -> Any:
        self.active.listen(self._forward)
        if self._first is None:
            return self.active.start(timeout)
        # Opened paused: the world is let go of unless someone runs it soon.
        self._paused_at = time.monotonic()
        threading.Thread(target=self._let_go_later, daemon=True).start()
        return self.active.snapshot

    def stop(self, timeout: float = 2.0) -> bool:
        self._closed = True
        with self._switch:
            return self.active.stop(timeout)

    # ------------------------------------------------------------------ commands

    def run(self, count: int | None = None) -> None:
        if self.running_here:
            self._paused_at = None
            self.active.run(count)
        elif not self.watch_only:
            threading.Thread(target=self._take, args=(count,), daemon=True).start()

    def tick(self) -> None:
        self.run(1)

    def pause(self) -> None:
        if self.running_here:
            self.active.pause()
            self._paused_at = time.monotonic()
            threading.Thread(target=self._let_go_later, daemon=True).start()

    def set_pace(self, ticks_per_second: float | None) -> None:
        self._pace = ticks_per_second
        if self.running_here:
            self.active.set_pace(ticks_per_second)

    def force_turn(self, name: str) -> None:
        if self.running_here:
            self.active.force_turn(name)

    # ------------------------------------------------------------------ switching

    def _forward(self, update: Update) -> None:
        for listener in list(self._listeners):
            listener(update)

    def _swap(self, new: ObserverAPI) -> None:
        new.listen(self._forward)
        self.active = new

    def _take(self, count: int | None) -> None:
        """Build the engine (taking the world) and run it; a world taken meanwhile by
        another process is watched instead, and the header says by whom."""
        with self._switch:
            if self._closed:
                return
            if self.running_here:
                self.active.run(count)
                return
            engine_api = self._make_engine_api()
            engine_api.runner.pace = self._pace
            try:
                engine_api.start()
            except (RuntimeError, WorldBusyError) as exc:
                cause = getattr(engine_api.runner, "error", None) or exc
                self.said = f"could not run the world: {cause}"
                log.info("%s", self.said)
                return
            watcher = self.active
            self._swap(engine_api)
            watcher.stop()
            self.said, self._paused_at = None, None
            engine_api.run(count)

    def _let_go_later(self) -> None:
        time.sleep(LET_GO_AFTER)
        with self._switch:
            paused_at = self._paused_at
            if (self._closed or not self.running_here or paused_at is None
                    or time.monotonic() - paused_at < LET_GO_AFTER
                    or not self.active.run_state().paused):
                return
            engine_api = self.active
            engine_api.stop(10.0)  # the tick in flight finishes; the lock goes with it
            watcher = self._make_watcher()
            try:
                watcher.start()
            except Exception as exc:  # the world cannot be read: say so, keep what is shown
                self.said = f"cannot watch the world now ({exc})"
                return
            self._swap(watcher)
