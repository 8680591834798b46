"""The app's side of the engine thread: ticks arriving, the summaries' pace, the run
keys, answers fetched from the engine, and quitting.

Threads: the ObserverAPI's listener runs on the engine thread after every tick and
only posts a `WorldAdvanced` message (thread-safe); everything else happens on the UI
thread, reading immutable snapshots. Commands (step, run, pause, force a turn) are
queued for the engine thread, which takes them between ticks. A read no snapshot
holds (an agent's last perception) is answered through a future and comes back as a
`PerceptionReady` message.

Watching only: when another process changes the world, the API is a WatchingAPI
(observe/watching.py) whose updates come from a thread that follows the database;
the keys that would run an engine say that this observer only watches.

`EngineLink` is a mixin of `HearthApp` (observe/tui/app.py, which lays the panels out
and owns the state named below); it is kept apart because the engine thread's life
(when a tick's frame is painted, when the summaries may catch up, how a quit lets
the tick in flight finish) is one concern, read and changed together.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.app import App
from textual.message import Message

from observe.api import ObserverAPI, Update
from observe.snapshot import WorldSnapshot
from observe.timeline import Timeline
from observe.tui.messages import WorldAdvanced
from observe.tui.widgets.feed import EventFeed
from observe.tui.widgets.grid import GridView
from observe.tui.widgets.header import run_pace_words

SUMMARY_SECONDS = 0.5
"""How often the agent list, minimap and open tabs catch up with the ticks."""

SUMMARY_RETRY = 0.02
"""How soon the summaries try again when a tick's frame was still to come."""

QUIT_WITHIN = 2.0
"""Seconds quitting waits for the turn in flight; after that it is left to roll back."""

WATCH_NOTICE_SECONDS = 3.0
"""How long the notice that this observer only watches stays (a key pressed again
meanwhile does not say it again)."""
PACES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
"""The paces `<` and `>` step through, ticks a second; past the last, as fast as it goes."""
DEFAULT_PACE = 2.0
"""settings.yaml `observer.ticks_per_second`'s default: an in-world day of 24 ticks in 12
seconds, the feed slow enough to read."""


@dataclass
class PerceptionReady(Message):
    """An agent's last perception, fetched from the engine thread."""

    name: str
    text: str


if TYPE_CHECKING:
    _Base = App[int]
else:  # a plain mixin, before App among HearthApp's bases
    _Base = object


class EngineLink(_Base):
    """HearthApp's dealings with the engine thread (see the module docstring).

    It reads the app's `api`, `live`, `current` and `timeline`, calls its `say`,
    `selected`, `_refresh_header`, `_draw_summaries` and `_show_detail`, and stops
    the `_beat_timer` its `on_mount` starts (`_beat`, every SUMMARY_SECONDS)."""

    api: ObserverAPI
    live: WorldSnapshot
    current: WorldSnapshot
    timeline: Timeline

    def _start_engine_link(self) -> None:
        """The state below, set once as the app is made."""
        self.ticks_seen = 0
        self.quit_seconds: float | None = None
        self._summaries_due = False
        """A tick changed what the summaries show since they were drawn."""
        self._ticked = False
        """A tick came since the last beat."""
        self._frames_due = 0
        """Ticks taken whose frame has not been painted yet."""
        self._told_watch_only = float("-inf")
        """When the person was last told that this observer only watches."""
        self._kept_pace: float | None = None
        """The pace before `m` let the world go as fast as it goes."""

    # ------------------------------------------------------------------ ticks

    def _from_engine(self, update: Update) -> None:
        """On the engine thread: hand the tick over and return at once (posting a
        message never waits for the UI, so quitting can never deadlock with a tick)."""
        self.post_message(WorldAdvanced(update))

    def on_world_advanced(self, message: WorldAdvanced) -> None:
        update = message.update
        self.ticks_seen += 1
        self._ticked = True
        self.live = update.snapshot
        first = self.timeline.first_tick
        if first is None and self.api.history is not None:
            first = self.api.history.first_tick()  # a new world's history starts now
        self.timeline.follow(self.live.tick, first)
        if self.timeline.is_live:
            self.current = update.snapshot
            self.query_one(GridView).show(update.snapshot)
            self.query_one(EventFeed).add(update.lines)
            self._summaries_due = True
        self._refresh_header()
        self._frames_due += 1
        self.call_after_refresh(self._tick_painted)

    def _tick_painted(self) -> None:
        self._frames_due -= 1

    def _beat(self) -> None:
        """Twice a second: the summaries if a tick came since (nobody reads a thousand
        activity lines faster), and the header if no tick did (ticks refresh it).

        Each in a frame of its own: the summaries' column and a tick's column painted
        in one frame would make it the whole screen. So while a tick's frame is still
        to come, the summaries wait for a frame after it."""
        if not self.is_running:
            return  # closing: the panels may be gone
        if not self._ticked:
            self._refresh_header()  # paused or idle: the run state and speed change
        self._ticked = False
        if self._summaries_due:
            self._summaries_in_own_frame()

    def _summaries_in_own_frame(self) -> None:
        if self._frames_due > 0:
            self.set_timer(SUMMARY_RETRY, self._summaries_in_own_frame)
            return
        if self._summaries_due:
            self._draw_summaries()

    def _perception_ready(self, name: str, future) -> None:
        try:
            text = future.result()
        except Exception as exc:  # the engine stopped, or the agent is gone
            text = f"(no perception: {exc})"
        self.post_message(PerceptionReady(name, text))

    def on_perception_ready(self, message: PerceptionReady) -> None:
        if self.selected == message.name:
            self._show_detail(perception=message.text, fetch=False)

    # ------------------------------------------------------------------ run keys

    def watching_only(self) -> bool:
        """True if another process changes the world, so no key may run an engine
        here; says so once (not again while the notice is still up)."""
        if not self.api.watch_only:
            return False
        now = time.monotonic()
        if now - self._told_watch_only >= WATCH_NOTICE_SECONDS:
            self._told_watch_only = now
            who = self.api.run_state().changer or "another process"
            self.say(f"This observer only watches: {who} changes this world, so it cannot "
                     "run here.", warning=True)
        return True

    def action_toggle_run(self) -> None:
        if self.watching_only():
            return
        if self.api.run_state().paused:
            self.api.run()
        else:
            self.api.pause()
        self._refresh_header()

    def action_step(self) -> None:
        if not self.watching_only():
            self.api.tick()

    def action_run_ten(self) -> None:
        self.run_ticks(10)

    def run_ticks(self, count: int) -> None:
        if self.watching_only():
            return
        self.api.run(count)
        self._refresh_header()

    def action_faster(self) -> None:
        self._pace_step(+1)

    def action_slower(self) -> None:
        self._pace_step(-1)

    def action_full_speed(self) -> None:
        """As fast as the world goes, and back to the pace it had."""
        if self.watching_only():
            return
        pace = self.api.run_state().pace
        if pace is None:
            self._set_pace(self._kept_pace or DEFAULT_PACE)
        else:
            self._kept_pace = pace
            self._set_pace(None)

    def _pace_step(self, way: int) -> None:
        if self.watching_only():
            return
        pace = self.api.run_state().pace
        chosen: float | None
        if pace is None:  # from full speed, slower is the fastest pace
            chosen = PACES[-1] if way < 0 else None
        elif way < 0:  # the next pace below, the slowest at least
            chosen = max((p for p in PACES if p < pace), default=PACES[0])
        else:  # the next above; past the fastest, full speed
            chosen = min((p for p in PACES if p > pace), default=None)
        self._set_pace(chosen)

    def _set_pace(self, pace: float | None) -> None:
        self.api.set_pace(pace)
        self.say(f"The world now runs at {run_pace_words(pace)}" + (
            " (as fast as it goes; m goes back)." if pace is None else " (< slower, > faster)."))
        self._refresh_header()

    def action_force_turn(self) -> None:
        if self.selected is not None and not self.watching_only():
            self.api.force_turn(self.selected)
            self.say(f"{self.selected} acts first in its group next tick.")

    # ------------------------------------------------------------------ quitting

    async def action_quit(self) -> None:
        """Let the tick in flight finish (within half of QUIT_WITHIN), then stop: a
        clean quit leaves no tick begun and half done for the next run to go on with.
        A slower tick (slow minds) is stopped after its turns in flight, as before, in
        what is left of QUIT_WITHIN."""
        started = time.monotonic()
        if not self.api.watch_only and self.api.runner.is_running:
            self.api.pause()  # taken between ticks: no new tick is begun after this one
            between = self.api.runner.call(lambda engine: engine.tick)  # answered after it
            with contextlib.suppress(Exception):  # too slow, or the engine has stopped
                await asyncio.wait_for(asyncio.wrap_future(between), QUIT_WITHIN / 2)
        self.api.stop(max(0.1, QUIT_WITHIN - (time.monotonic() - started)))
        self.quit_seconds = time.monotonic() - started
        self._beat_timer.stop()  # the panels go with the screen: nothing to catch up
        self.exit(0)
