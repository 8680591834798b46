"""Looking back: stored ticks, an agent's earlier lines and the turn behind a line.

`[` and `]` (and `{`, `}` by ten) step through stored ticks (positions and narrated
lines from the database, storage/history.py) while the live world keeps going
underneath; the header says so plainly, and `end` returns to live. In a fork a past
tick its parent lived says so (observe/lineage.py). An agent's recent lines, when
this observer saw too few of them (a world opened again), are read from its stored
turns when it is chosen, and kept; `p` opens the stored turn behind the feed's chosen
line (observe/provenance.py).

`LookingBack` is a mixin of `HearthApp` (observe/tui/app.py): what is read from the
stored history, rather than from the live engine, is kept apart from the layout.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual.app import App

from observe.api import ObserverAPI
from observe.provenance import chosen_turn
from observe.snapshot import FeedLine, WorldSnapshot
from observe.timeline import Timeline, past_snapshot
from observe.tui.provenance_screen import ProvenanceScreen
from observe.tui.widgets.detail import RECENT
from observe.tui.widgets.feed import EventFeed

if TYPE_CHECKING:
    from services.world_service import Clock

    _Base = App[int]
else:  # a plain mixin, before App among HearthApp's bases
    _Base = object


class LookingBack(_Base):
    """HearthApp's reading of the stored past (see the module docstring).

    It reads the app's `api`, `clock`, `live` and `timeline`, and calls its `say`,
    `selected` and `_draw`."""

    api: ObserverAPI
    clock: Clock | None
    live: WorldSnapshot
    timeline: Timeline

    def _start_looking_back(self) -> None:
        """The state below, set once as the app is made."""
        self._stored_lines: dict[str, tuple[int, list[FeedLine]]] = {}
        """Per agent: its stored lines before the feed's first tick (that tick, lines)."""

    # ------------------------------------------------------------------ past ticks

    def action_back(self) -> None:
        self._look(self.timeline.back(1, self.live.tick))

    def action_back_ten(self) -> None:
        self._look(self.timeline.back(10, self.live.tick))

    def action_forward(self) -> None:
        self._look(self.timeline.forward(1, self.live.tick))

    def action_forward_ten(self) -> None:
        self._look(self.timeline.forward(10, self.live.tick))

    def action_live(self) -> None:
        self.timeline.to_live()
        self._look(None)

    def _look(self, tick: int | None) -> None:
        feed = self.query_one(EventFeed)
        if tick is None:
            self._draw(replace(self.live, changed_rows=None))
            feed.replace(self.api.feed())
            return
        try:
            past = self.api.past(tick)
        except (ValueError, RuntimeError) as exc:
            self.say(str(exc), warning=True)
            return
        self._draw(past_snapshot(self.live, past, clock=self.clock))
        feed.replace([FeedLine.from_past(p) for p in past.lines])

    # ------------------------------------------------------------------ stored turns

    def _recent_lines(self, name: str, fetch: bool) -> list[FeedLine]:
        """The agent's latest lines: those this observer saw, and before them, when
        they are too few (a world opened again), its stored turns (read when the agent
        is chosen, then kept: the past does not change)."""
        lines = self.api.feed(agent=name, limit=RECENT)
        history = self.api.history
        if len(lines) >= RECENT or history is None:
            return lines
        everyone = self.api.feed(limit=None)
        start = everyone[0].tick if everyone else self.live.tick
        kept = self._stored_lines.get(name)
        if kept is None or kept[0] != start:
            if not fetch and kept is None:
                return lines
            try:
                stored = [FeedLine.from_past(p) for p in history.agent_lines(name, start, RECENT)]
            except Exception as exc:  # a damaged or closed file: say so, keep going
                self.say(f"Could not read {name}'s earlier actions: {exc}", warning=True)
                stored = []
            kept = self._stored_lines[name] = (start, stored)
        return [*kept[1], *lines][-RECENT:]

    def action_provenance(self) -> None:
        """The stored turn behind the feed's chosen line (else the chosen agent's newest,
        else the newest); left and right step through the feed's turns."""
        if self.api.history is None:
            self.say("No stored history to read turns from.", warning=True)
            return
        feed = self.query_one(EventFeed)
        turns, index, note = chosen_turn(feed.shown, feed.chosen_row, self.selected)
        if note:
            self.say(note)
        self.push_screen(ProvenanceScreen(turns, index, self.api.history.turn))
