"""Which tick the observer is looking at, and the world drawn as it stood then.

`Timeline` is the UI's position on the time line, plain state with no drawing in it,
so it can be tested without a terminal: live (following each new tick) or a stored
tick in [first_tick, live_tick - 1]. `past_snapshot` turns the live snapshot and a
`PastTick` from storage/history.py into a snapshot of that tick for the map to draw.
Where the agents stood and the weather are known per tick; terrain, walls and
objects are drawn as they are now.
"""

from __future__ import annotations

import dataclasses

from core.clock import time_of_day
from core.types import Position
from observe.snapshot import AgentView, FeedLine, WorldSnapshot
from services.world_service import Clock
from storage.history import PastTick


class Timeline:
    """Live, or viewing one stored tick; every move is clamped to the stored range.

    The live tick can be given with each move (`back(1, snapshot.tick)`) or once per
    update (`follow`); where history starts comes from `HistoryReader.first_tick`, and
    should be given again (`follow(live, first_tick=...)`) if it was None, since a new
    world stores its first tick only after starting. A viewed tick stays put while the
    world goes on: the past does not change.
    """

    def __init__(self, first_tick: int | None = None, live_tick: int = 0) -> None:
        self.viewing: int | None = None
        """The stored tick shown, or None when showing the live world."""
        self.first_tick = first_tick
        """The earliest stored tick (None: nothing stored yet, so nothing to view)."""
        self.live_tick = live_tick
        """The live snapshot's tick: stored ticks end just before it."""

    def follow(self, live_tick: int, first_tick: int | None = None) -> None:
        """Take a new live tick (and where history starts, once it is known)."""
        self.live_tick = live_tick
        if first_tick is not None:
            self.first_tick = first_tick
        self._clamp()

    @property
    def is_live(self) -> bool:
        return self.viewing is None

    @property
    def newest(self) -> int:
        """The newest stored tick: the live one is still being made."""
        return self.live_tick - 1

    @property
    def has_history(self) -> bool:
        return self.first_tick is not None and self.first_tick <= self.newest

    def back(self, steps: int = 1, live_tick: int | None = None) -> int | None:
        """Go `steps` ticks back (from live, one step back is the newest stored tick);
        stops at the first stored tick. Returns what is viewed now."""
        self._take(live_tick)
        start = self.live_tick if self.viewing is None else self.viewing
        return self._view(start - max(steps, 0))

    def forward(self, steps: int = 1, live_tick: int | None = None) -> int | None:
        """Go `steps` ticks on; past the newest stored tick is live again."""
        self._take(live_tick)
        if self.viewing is None:
            return None
        target = self.viewing + max(steps, 0)
        if target > self.newest:
            self.to_live()
            return None
        return self._view(target)

    def to_live(self) -> None:
        self.viewing = None

    def jump(self, tick: int, live_tick: int | None = None) -> int | None:
        """View `tick`, clamped into the stored range (live if nothing is stored)."""
        self._take(live_tick)
        return self._view(tick)

    def label(self, live_tick: int | None = None) -> str:
        """The header's words: "live, tick 123" or "viewing tick 80 of 123"."""
        live = self.live_tick if live_tick is None else live_tick
        if self.viewing is None:
            return f"live, tick {live}"
        return f"viewing tick {self.viewing} of {live}"

    def _view(self, tick: int) -> int | None:
        if not self.has_history:
            self.viewing = None
        else:
            assert self.first_tick is not None
            self.viewing = min(max(tick, self.first_tick), self.newest)
        return self.viewing

    def _take(self, live_tick: int | None) -> None:
        if live_tick is not None:
            self.follow(live_tick)

    def _clamp(self) -> None:
        """Keep a viewed tick inside the range should the range shrink (a new world)."""
        if self.viewing is not None:
            self._view(self.viewing)


def past_snapshot(live: WorldSnapshot, past: PastTick, *, clock: Clock | None = None
                  ) -> WorldSnapshot:
    """The live snapshot with its agents where they stood at the end of `past.tick`.

    The weather is the tick's own (read from its `weather_changed` events). Terrain,
    walls, objects and conversations are the live ones (the past of those is not
    stored per tick). An agent's activity is its last action of that tick, in a few
    words ("" if it did not act then); agents `past` does not know stay where they are. With the
    world's `clock` the time is worded for that tick; without it, "tick N".
    Everything is redrawn (`changed_rows=None`): rows changed since the live one say
    nothing about the tick shown.
    """
    said: dict[str, str] = {}
    for line in past.lines:
        if line.agent is not None and line.args is not None:  # an action, not a happening
            said[line.agent] = FeedLine.from_past(line).deed
    agents = tuple(_moved(view, past.positions.get(view.name), said.get(view.name, ""))
                   for view in live.agents)
    if clock is not None:
        when = time_of_day(past.tick, clock.ticks_per_day, clock.start_hour)
        time_text, period = str(when), when.period
    else:
        time_text, period = f"tick {past.tick}", live.period
    # The per-cell indexes must be new dicts: `replace` would otherwise hand the live
    # snapshot's own dicts to __post_init__, which fills them with the past agents.
    weather = past.weather if past.weather is not None else live.weather
    return dataclasses.replace(
        live, tick=past.tick, time_text=time_text, period=period, weather=weather,
        agents=agents, changed_rows=None,
    )


def _moved(view: AgentView, cell: tuple[int, int] | None, activity: str) -> AgentView:
    if cell is None or (cell[0] == view.position.x and cell[1] == view.position.y):
        position, agent = view.position, view.agent
    else:
        position = Position(cell[0], cell[1])
        agent = view.agent.with_position(position)
    return dataclasses.replace(view, position=position, agent=agent, activity=activity)
