"""ObserverAPI: everything a person watching the world may read, and the few things
they may ask for, safe to use from any thread.

    api = ObserverAPI(runner, history=HistoryReader(db_path))
    api.listen(lambda update: ...)    # called on the engine thread after every tick
    api.start()                       # starts the engine thread, makes the first snapshot
    api.snapshot                      # the latest WorldSnapshot (immutable)
    api.cell(x, y)                    # what is in one cell
    api.feed(agent="Ember")           # recent narrated lines
    api.run(10); api.pause()          # commands go to the EngineRunner's queue
    api.past(120)                     # positions and lines of a stored tick

Reads never touch the engine: they read the last snapshot, made on the engine thread
right after each tick (observe/snapshot.py), or the database through a read-only
connection of their own (storage/history.py). Commands never act directly either:
they are queued for the engine thread, which takes them between ticks. The observer
watches; it has no command that moves, speaks for or changes an agent (force_turn
only lets an agent act first in its cluster, as its turn would come anyway).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from core.terrain import TERRAIN_ORDER
from core.types import AgentName
from observe.snapshot import (
    AgentView,
    FeedLine,
    SnapshotMaker,
    Spending,
    TickFigures,
    WorldSnapshot,
    feed_lines,
)
from storage.seats_file import read_states

if TYPE_CHECKING:
    from core.perception import Perception
    from engine.context import TickContext
    from engine.engine import HearthEngine
    from engine.runner import EngineRunner
    from storage.history import HistoryReader, PastTick

log = logging.getLogger("hearth.observe")

SpendSource = Callable[[], tuple[float, Mapping[str, float]]]
"""Spend so far (dollars in all, dollars per agent), read on the engine thread."""

SpendingSource = Callable[[], Spending | None]
"""The spend's rate and what paced the world (None: Claude speaks for nobody), read on
the engine thread as each snapshot is made."""


@dataclass(frozen=True, slots=True)
class Update:
    """What one finished tick changed, handed to listeners."""

    snapshot: WorldSnapshot
    lines: tuple[FeedLine, ...]


@dataclass(frozen=True, slots=True)
class RunState:
    running: bool
    """The engine thread is alive."""
    paused: bool
    remaining: int | None
    """Ticks still asked for: 0 idle, None without end."""
    ticks_per_second: float
    error: str | None = None
    watch_only: bool = False
    """This observer only watches: another process changes the world."""
    changer: str | None = None
    """Who changes the world, in words, when watching only (None: nobody says)."""
    waiting: str | None = None
    """What the world's changer waits on, in words (a Message Batch), when watching."""
    pace: float | None = None
    """The ticks a second this observer runs the world at (None: as fast as it goes)."""


@dataclass(frozen=True, slots=True)
class CellInfo:
    x: int
    y: int
    terrain: str
    walls: tuple[str, ...] = ()
    """Sides of the cell with a wall: north, south, east, west."""
    doors: tuple[str, ...] = ()
    agents: tuple[AgentView, ...] = ()
    signs: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    landmarks: tuple[str, ...] = ()
    structure: str | None = None
    """The shelter whose inside this cell is, in words."""
    extra: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


class ObserverAPI:
    watch_only = False
    """True for an observer that only watches (observe/watching.py): no command runs."""

    def __init__(
        self,
        runner: EngineRunner,
        *,
        history: HistoryReader | None = None,
        spend: SpendSource | None = None,
        spending: SpendingSource | None = None,
        feed_size: int = 5000,
    ) -> None:
        self.runner = runner
        self.history = history
        self._spend = spend
        self._spending = spending
        self._maker = SnapshotMaker()
        self._feed: deque[FeedLine] = deque(maxlen=feed_size)
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Update], object]] = []
        self._snapshot: WorldSnapshot | None = None
        self._tick_times: deque[float] = deque(maxlen=10)
        runner.on_tick(self._after_tick)

    # ------------------------------------------------------------------ lifecycle

    def listen(self, listener: Callable[[Update], object]) -> None:
        """Call `listener` on the engine thread after every tick (it should hand the
        update to its own thread, e.g. `App.post_message`, and return at once)."""
        self._listeners.append(listener)

    def start(self, timeout: float = 60.0) -> WorldSnapshot:
        """Start the engine thread and make the first snapshot."""
        self.runner.start(timeout)
        if self.runner.error is not None:
            raise RuntimeError(f"the engine could not start: {self.runner.error}")
        snapshot = self.runner.call(self._first_snapshot).result(timeout)
        self._recall_recent(snapshot.tick)
        return snapshot

    def _recall_recent(self, live_tick: int, ticks: int = 3) -> None:
        """Start the feed with the last few stored ticks' lines, so a world opened
        again does not look silent until its next tick."""
        if self.history is None:
            return
        lines: list[FeedLine] = []
        for tick in range(max(0, live_tick - ticks), live_tick):
            lines += [FeedLine.from_past(p)
                      for p in self.history.lines(tick)]
        with self._lock:
            self._feed.extendleft(reversed(lines))

    def stop(self, timeout: float = 2.0) -> bool:
        """Finish the turn in flight, commit it, close; True if done within `timeout`."""
        return self.runner.stop(timeout)

    # ------------------------------------------------------------------ reads

    @property
    def snapshot(self) -> WorldSnapshot:
        snapshot = self._snapshot
        if snapshot is None:
            raise RuntimeError("the observer has not started yet")
        return snapshot

    def run_state(self) -> RunState:
        times = list(self._tick_times)
        speed = 0.0
        if len(times) >= 2 and times[-1] > times[0]:
            speed = (len(times) - 1) / (times[-1] - times[0])
        error = self.runner.error
        halted = getattr(self.runner.engine, "halted", None)  # a plain read of a str
        said = str(error) if error is not None else halted
        return RunState(self.runner.is_running, self.runner.is_paused, self.runner.remaining,
                        speed, said, pace=self.runner.pace)

    def feed(self, agent: str | None = None, limit: int | None = None) -> list[FeedLine]:
        """Recent narrated lines, oldest first; only one agent's when `agent` is given."""
        with self._lock:
            lines = list(self._feed)
        if agent is not None:
            lines = [line for line in lines if line.agent == agent]
        return lines if limit is None else lines[-limit:]

    def cell(self, x: int, y: int) -> CellInfo | None:
        """What is at (x, y) in the latest snapshot; None outside the world."""
        return cell_info(self.snapshot, x, y)

    def agent_names(self) -> list[str]:
        return [view.name for view in self.snapshot.agents]

    def perception(self, name: str) -> Future[str]:
        """What the agent perceived at the start of its latest turn, in words ("" before
        its first turn), read on the engine thread between ticks."""
        return self.runner.call(lambda engine: _last_perception(engine, name))

    def past(self, tick: int) -> PastTick:
        """Where every agent stood and what was said at a stored tick."""
        if self.history is None:
            raise RuntimeError("no history reader was given")
        live = self.snapshot
        return self.history.at(
            tick, live.tick, {v.name: (v.position.x, v.position.y) for v in live.agents})

    # ------------------------------------------------------------------ commands

    def tick(self) -> None:
        self.runner.request_tick()

    def run(self, count: int | None = None) -> None:
        """Run `count` more ticks, or without end when None."""
        self.runner.request_run(count)

    def pause(self) -> None:
        self.runner.request_pause()

    def set_pace(self, ticks_per_second: float | None) -> None:
        """Run at this many ticks a second (None: as fast as the world goes)."""
        self.runner.request_pace(ticks_per_second)
        self.runner.pace = ticks_per_second  # what run_state says from now on

    def force_turn(self, name: str) -> None:
        if name not in self.agent_names():
            raise KeyError(f"no agent called {name!r}")
        self.runner.request_force(name)

    # ------------------------------------------------------------------ the engine side

    def _first_snapshot(self, engine: HearthEngine) -> WorldSnapshot:
        snapshot = self._maker.make(engine, spend=self._read_spend(),
                                    spending=self._read_spending(),
                                    seats=_seats(engine))
        self._snapshot = snapshot
        return snapshot

    def _after_tick(self, ctx: TickContext) -> None:
        engine = self.runner.engine
        if engine is None:
            return
        self._tick_times.append(time.monotonic())
        lines = tuple(feed_lines(ctx))
        with self._lock:
            self._feed.extend(lines)
        figures = TickFigures(ctx.tick, sum(ms for _, ms in ctx.phase_ms),
                              len(ctx.turn_results), ctx.action_count, ctx.phase_ms)
        snapshot = self._maker.make(engine, ctx, spend=self._read_spend(),
                                    spending=self._read_spending(), figures=figures,
                                    seats=_seats(engine))
        self._snapshot = snapshot
        self._publish(Update(snapshot, lines))

    def _publish(self, update: Update) -> None:
        for listener in list(self._listeners):
            try:
                listener(update)
            except Exception:
                log.exception("an observer listener failed")

    def _read_spend(self) -> tuple[float, Mapping[str, float]]:
        if self._spend is None:
            return 0.0, {}
        try:
            return self._spend()
        except Exception:
            log.exception("reading spend failed")
            return 0.0, {}

    def _read_spending(self) -> Spending | None:
        if self._spending is None:
            return None
        try:
            return self._spending()
        except Exception:
            log.exception("reading the spend's rate failed")
            return None


_SIDES = ("north", "south", "east", "west")


def cell_info(snapshot: WorldSnapshot, x: int, y: int) -> CellInfo | None:
    if not snapshot.in_bounds(x, y):
        return None
    terrain = TERRAIN_ORDER[int(snapshot.terrain[y, x])].value
    edges = {
        "north": (snapshot.wall_south, snapshot.door_south, x, y - 1),
        "south": (snapshot.wall_south, snapshot.door_south, x, y),
        "east": (snapshot.wall_east, snapshot.door_east, x, y),
        "west": (snapshot.wall_east, snapshot.door_east, x - 1, y),
    }
    walls, doors = [], []
    for side in _SIDES:
        wall, door, ex, ey = edges[side]
        if 0 <= ex < snapshot.width and 0 <= ey < snapshot.height and wall[ey, ex]:
            (doors if door[ey, ex] else walls).append(side)
    signs, items = [], []
    for obj in snapshot.objects_at(x, y):
        text = getattr(obj, "text", None)
        if text is not None:
            signs.append(text)
        else:
            item = getattr(obj, "item", None)
            resource = getattr(obj, "resource", None)
            if item is not None:
                items.append(getattr(item, "name", str(item)))
            elif resource:
                items.append(f"{getattr(obj, 'quantity', 1)} {resource}")
    structure = snapshot.structure_at(x, y)
    shelter = None
    if structure is not None:
        shelter = (f"inside {structure.name or 'a shelter'}"
                   f"{' (private)' if structure.is_private else ''}, {len(structure.interior)} "
                   f"cell{'s' if len(structure.interior) != 1 else ''}"
                   + (f", built by {structure.created_by}" if structure.created_by else ""))
    return CellInfo(
        x, y, terrain, tuple(walls), tuple(doors), snapshot.agents_at(x, y), tuple(signs),
        tuple(items), tuple(p.name for p in snapshot.places_at(x, y)),
        tuple(m.name for m in snapshot.landmarks_at(x, y)), shelter,
    )


def _last_perception(engine: HearthEngine, name: str) -> str:
    if engine.sim.agents.get_agent(AgentName(name)) is None:
        raise KeyError(f"no agent called {name!r}")
    seen = engine.last_perceptions.get(name)
    return "" if seen is None else perception_text(seen)


def perception_text(seen: Perception) -> str:
    """A perception in words: the agent's own grid and narrative when its mind reads
    text, else what the structured perception holds (offline minds skip the words)."""
    at = seen.position
    parts = [f"Tick {seen.tick}, {seen.time_text}, {seen.weather.value}; at ({at.x}, {at.y})"]
    if seen.grid_view:
        parts += ["", seen.grid_view, "", seen.narrative]
        parts += [t for t in (seen.surroundings_text, seen.inventory_text, seen.journey_text,
                              seen.visible_agents_text, seen.conversation_text,
                              seen.invitation_text) if t]
        return "\n".join(parts)
    parts.append(f"standing on {seen.standing_on.value}"
                 + (", inside a shelter" if seen.inside_structure else ""))
    if seen.agents:
        parts.append("sees " + ", ".join(
            f"{a.name} {a.distance} away" for a in seen.agents))
    if seen.landmarks:
        parts.append("landmarks: " + ", ".join(m.name for m in seen.landmarks))
    if seen.objects:
        parts.append("objects: " + ", ".join(o.kind for o in seen.objects))
    if seen.inventory:
        parts.append("carrying " + ", ".join(f"{n} {k}" for k, n in seen.inventory))
    return "\n".join(parts)


def _seats(engine: HearthEngine) -> dict[str, str]:
    """Each seat's state (the writer's note), read only for a world that has seats."""
    if not any(mind.kind == "seat" for mind in engine.minds.values()):
        return {}
    return read_states(engine.storage.db_path.parent)
