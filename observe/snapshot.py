"""What the observer shows, as immutable values: one `WorldSnapshot` per finished tick.

The engine's objects live on the engine thread and change every tick; the UI runs on
another thread. So after each tick, on the engine thread, `build_snapshot` copies out
what the UI may read into frozen values (agents and world objects are already frozen
domain values, so they are shared, not copied; the wall arrays are copied only when a
wall changed). The UI then holds a reference it can read at leisure while the engine
goes on: nothing in a snapshot ever changes after it is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from core.agent import Agent
from core.landmarks import Landmark
from core.objects import Sign, WorldObject
from core.places import NamedPlace
from core.privacy import shown_action
from core.structures import Structure
from core.types import Position
from storage.history import NARRATED_EVENTS, PastLine, happening_text

if TYPE_CHECKING:
    from engine.context import TickContext
    from engine.engine import HearthEngine

_EMPTY: Mapping[Any, Any] = MappingProxyType({})

WALL_EVENTS = frozenset({"wall_placed", "wall_removed", "door_placed"})
"""Events after which the wall arrays are copied afresh."""

_NOT_ACTIONS = frozenset({*NARRATED_EVENTS, "error"})
"""Feed lines that are no agent's action."""


@dataclass(frozen=True, slots=True)
class AgentView:
    """One agent as the observer shows it."""

    name: str
    position: Position
    state: str
    """awake, asleep, journeying or talking."""
    activity: str
    """What it did last, in a few words ("walk north"; "" before it has acted)."""
    agent: Agent
    """The frozen domain value: inventory, journey, known agents."""
    mind: str = "offline"


@dataclass(frozen=True, slots=True)
class FeedLine:
    """One narrated line of the event feed."""

    tick: int
    agent: str | None
    kind: str
    """The tool used (walk, speak...) or the happening (weather_changed, agent_woke)."""
    text: str
    ok: bool = True
    deed: str = ""
    """What was done, in a few words ("walk north"), for an action; "" otherwise."""

    @classmethod
    def from_past(cls, line: PastLine) -> FeedLine:
        """A stored line as the live feed shows it."""
        args, text = shown_action(line.kind, line.args, line.text)  # core/privacy.py
        deed = deed_words(line.kind, args, line.ok) if args is not None else ""
        return cls(line.tick, line.agent, line.kind, text, line.ok, deed)


DEED_WIDTH = 60
"""A deed's arguments are cut to about this many characters."""


def deed_words(tool: str, args: Mapping[str, object] | None, ok: bool = True) -> str:
    """What an action did, from its tool and arguments, not its narration (which may
    open by setting the scene): "walk north", "speak \"hello there\"", "✗ gather wood"."""
    said: list[str] = []
    for value in (args or {}).values():
        if isinstance(value, Mapping) and {"x", "y"} <= value.keys():
            said.append(f"({value['x']}, {value['y']})")
        elif isinstance(value, str) and " " in value.strip():
            said.append(f'"{" ".join(value.split())}"')
        elif isinstance(value, list | tuple):
            said.append(", ".join(str(v) for v in value))
        elif value is not None and value != "":
            said.append(str(value))
    words = " ".join([tool.replace("_", " "), *said])
    if len(words) > DEED_WIDTH:
        words = words[: DEED_WIDTH - 1] + "…"
    return words if ok else f"✗ {words}"


@dataclass(frozen=True, slots=True)
class ConversationView:
    """A conversation: its words only when public (a private one shows that it exists)."""

    id: str
    participants: tuple[str, ...]
    public: bool
    started_tick: int
    ended_tick: int | None
    lines: tuple[tuple[int, str, str], ...] = ()
    """(tick, speaker, words), empty for a private conversation."""


@dataclass(frozen=True, slots=True)
class TickFigures:
    """How the last finished tick went."""

    tick: int
    duration_ms: float
    turns: int
    actions: int
    phases: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Pace:
    """A model's rate limit that held its requests back this session."""

    model: str
    limit_of: str
    """Which limit, in words: "requests", "input tokens" or "output tokens"."""
    per_minute: float
    waited: float
    """Seconds requests waited for room under it."""


@dataclass(frozen=True, slots=True)
class Spending:
    """How this session's spend goes, for an engine where Claude speaks for someone:
    what the header's rate is worked out from, and the limits that paced the world."""

    seconds: float
    """Seconds the engine spent running ticks this session (not paused or idle)."""
    agent_ticks: int
    """Turns the agents Claude speaks for lived this session: ticks run x agents."""
    ticks_per_day: int
    paced_by: tuple[Pace, ...] = ()
    """Longest waited first."""


@dataclass(frozen=True, eq=False)
class WorldSnapshot:
    tick: int
    """The tick that runs next (ticks before it are committed)."""
    time_text: str
    period: str
    weather: str
    width: int
    height: int
    terrain: np.ndarray
    """(height, width) terrain codes, read-only."""
    wall_east: np.ndarray
    wall_south: np.ndarray
    door_east: np.ndarray
    door_south: np.ndarray
    agents: tuple[AgentView, ...] = ()
    """Sorted by name."""
    objects: tuple[WorldObject, ...] = ()
    places: tuple[NamedPlace, ...] = ()
    structures: tuple[Structure, ...] = ()
    landmarks: tuple[Landmark, ...] = ()
    conversations: tuple[ConversationView, ...] = ()
    last_tick: TickFigures | None = None
    spend_usd: float = 0.0
    spend_by_agent: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    spending: Spending | None = None
    """The spend's rate and pacing (`spend_usd` is this session's spend); None when
    Claude speaks for nobody, or this observer only watches."""
    changed_rows: frozenset[int] | None = None
    """Rows whose drawing changed since the snapshot before; None: redraw everything."""
    version: int = 0
    # Indexes, made afresh from the fields above by every new snapshot (`replace`
    # included: they are not init fields, so no copy can carry another's).
    _agents_at: dict[tuple[int, int], tuple[AgentView, ...]] = field(
        default_factory=dict, init=False, repr=False)
    _objects_at: dict[tuple[int, int], tuple[WorldObject, ...]] = field(
        default_factory=dict, init=False, repr=False)
    agent_rows: dict[int, dict[int, tuple[AgentView, ...]]] = field(
        default_factory=dict, init=False, repr=False)
    """Row -> column -> the agents in that cell: what a row of the grid draws."""
    sign_rows: dict[int, frozenset[int]] = field(default_factory=dict, init=False, repr=False)
    """Row -> the columns holding a sign."""
    item_rows: dict[int, frozenset[int]] = field(default_factory=dict, init=False, repr=False)
    """Row -> the columns holding a placed item (and no sign)."""

    def __post_init__(self) -> None:
        # The indexes are built where the snapshot is made (the engine's thread),
        # so the observer's thread only reads them.
        by_cell: dict[tuple[int, int], list[AgentView]] = {}
        for view in self.agents:
            by_cell.setdefault((view.position.x, view.position.y), []).append(view)
        for (x, y), views in by_cell.items():
            here = self._agents_at[(x, y)] = tuple(views)
            self.agent_rows.setdefault(y, {})[x] = here
        things: dict[tuple[int, int], list[WorldObject]] = {}
        for obj in self.objects:
            things.setdefault((obj.position.x, obj.position.y), []).append(obj)
        signs: dict[int, set[int]] = {}
        items: dict[int, set[int]] = {}
        for (x, y), objs in things.items():
            self._objects_at[(x, y)] = tuple(objs)
            kind = signs if any(isinstance(o, Sign) for o in objs) else items
            kind.setdefault(y, set()).add(x)
        self.sign_rows.update({y: frozenset(xs) for y, xs in signs.items()})
        self.item_rows.update({y: frozenset(xs) for y, xs in items.items()})

    # ------------------------------------------------------------------ reading

    def agents_at(self, x: int, y: int) -> tuple[AgentView, ...]:
        return self._agents_at.get((x, y), ())

    def objects_at(self, x: int, y: int) -> tuple[WorldObject, ...]:
        return self._objects_at.get((x, y), ())

    def agent(self, name: str) -> AgentView | None:
        for view in self.agents:
            if view.name == name:
                return view
        return None

    def structure_at(self, x: int, y: int) -> Structure | None:
        spot = Position(x, y)
        for structure in self.structures:
            if spot in structure.interior:
                return structure
        return None

    def places_at(self, x: int, y: int) -> tuple[NamedPlace, ...]:
        return tuple(p for p in self.places if p.position.x == x and p.position.y == y)

    def landmarks_at(self, x: int, y: int) -> tuple[Landmark, ...]:
        return tuple(m for m in self.landmarks if m.position.x == x and m.position.y == y)

    def in_bounds(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def agent_state(agent: Agent, talking: bool) -> str:
    if agent.is_sleeping:
        return "asleep"
    if agent.journey is not None:
        return "journeying"
    return "talking" if talking else "awake"


def feed_lines(ctx: TickContext) -> list[FeedLine]:
    """The tick's happenings, then every action in turn order, as feed lines."""
    lines: list[FeedLine] = []
    for event in ctx.events:
        data = event.to_dict()
        kind = data["type"]
        if kind in NARRATED_EVENTS:
            who = data.get("agent")
            lines.append(FeedLine(ctx.tick, who if isinstance(who, str) else None, kind,
                                  happening_text(kind, who, data), kind != "gardener_refused"))
    for name, result in ctx.turn_results.items():
        for action in result.actions:
            args, text = shown_action(action.tool, action.arguments, action.narration)
            lines.append(FeedLine(ctx.tick, name, action.tool, text, action.success,
                                  deed_words(action.tool, args, action.success)))
        if result.error:
            lines.append(FeedLine(ctx.tick, name, "error",
                                  f"{name}'s turn ended early: {result.error}", False))
    return lines


class SnapshotMaker:
    """Makes each tick's snapshot from the engine, on the engine thread.

    Keeps what the previous snapshot held so the next one shares what did not change
    (terrain and wall arrays) and can say which rows to redraw. An observer that only
    watches (observe/watching.py) hands it a world loaded afresh from the database
    each time instead: the arrays are then compared to tell what changed.
    """

    def __init__(self, conversations_kept: int = 50) -> None:
        self._previous: WorldSnapshot | None = None
        self._activity: dict[str, str] = {}
        self._ended: dict[str, ConversationView] = {}
        self._kept = conversations_kept
        self._terrain_version: int | None = None
        self._world: object | None = None
        """The world the last snapshot was made from: another one was loaded afresh."""
        self._version = 0

    def note_activity(self, lines: Iterable[FeedLine]) -> None:
        """Take each agent's latest action from feed lines, for makers that see no
        TickContext (an observer that only watches reads the lines from the database)."""
        for line in lines:
            if line.agent is not None and line.kind not in _NOT_ACTIONS:
                self._activity[line.agent] = line.deed or " ".join(line.text.split())

    def make(
        self,
        engine: HearthEngine,
        ctx: TickContext | None = None,
        *,
        spend: tuple[float, Mapping[str, float]] = (0.0, _EMPTY),
        spending: Spending | None = None,
        figures: TickFigures | None = None,
        seats: Mapping[str, str] = _EMPTY,
    ) -> WorldSnapshot:
        """`seats`: each seat's state (data/seats_now.json), shown before what it did."""
        sim = engine.sim
        world = sim.world
        before = self._previous
        changed: set[int] | None = set()
        if ctx is not None:
            for name, result in ctx.turn_results.items():
                if result.actions:
                    last = result.actions[-1]
                    self._activity[name] = deed_words(last.tool, last.arguments, last.success)
        talking = {n for c in sim.conversations.active_conversations() for n in c.participants}
        agents = tuple(
            AgentView(a.name, a.position, agent_state(a, a.name in talking),
                      _with_seat(seats.get(a.name), self._activity.get(a.name, "")), a,
                      engine.mind_for(a.name).kind)
            for a in sorted(sim.agents.get_all_agents(), key=lambda a: a.name)
        )
        terrain_version = world.terrain_version
        walls_changed = ctx is None or any(
            e.event_type in WALL_EVENTS for e in ctx.all_events)
        reloaded = before is not None and world is not self._world
        if before is None:
            terrain = _read_only(world.codes.copy())
            changed = None
        elif reloaded:  # loaded afresh from the database: its versions say nothing
            terrain = before.terrain
            if not np.array_equal(terrain, world.codes):
                terrain = _read_only(world.codes.copy())
                changed.update(_differing_rows(before.terrain, terrain))  # type: ignore[union-attr]
        elif terrain_version != self._terrain_version:
            terrain = _read_only(world.codes.copy())
            for _x0, y0, _x1, y1 in world.terrain_changed_since(self._terrain_version or 0):
                changed.update(range(y0, y1))  # type: ignore[union-attr]
        else:
            terrain = before.terrain
        now = (world.wall_east, world.wall_south, world.door_east, world.door_south)
        if before is None or (walls_changed and not reloaded):
            walls = tuple(_read_only(a.copy()) for a in now)
        else:
            walls = (before.wall_east, before.wall_south, before.door_east, before.door_south)
            if reloaded and not all(map(np.array_equal, walls, now)):
                fresh = tuple(_read_only(a.copy()) for a in now)
                for old_array, new_array in zip(walls, fresh, strict=True):
                    changed.update(  # type: ignore[union-attr]
                        y + d for y in _differing_rows(old_array, new_array) for d in (-1, 0, 1))
                walls = fresh
        self._terrain_version = terrain_version
        self._world = world
        objects = tuple(world.all_objects())
        places = tuple(world.all_places())
        structures = tuple(world.all_structures())
        if changed is not None and before is not None:
            changed.update(_moved_rows(before.agents, agents))
            if ctx is not None:
                changed.update(_event_rows(ctx))
            if objects != before.objects or structures != before.structures:
                changed.update(_rows_of(before.objects, objects))
                changed.update(_structure_rows(before.structures, structures))
            if places != before.places:
                changed.update(_rows_of(before.places, places))
        self._version += 1
        snapshot = WorldSnapshot(
            tick=world.tick,
            time_text=str(world.time_of_day(world.tick)),
            period=world.time_of_day(world.tick).period,
            weather=world.weather.value,
            width=world.width,
            height=world.height,
            terrain=terrain,
            wall_east=walls[0], wall_south=walls[1], door_east=walls[2], door_south=walls[3],
            agents=agents,
            objects=objects,
            places=places,
            structures=structures,
            landmarks=tuple(world.landmarks),
            conversations=self._conversations(engine),
            last_tick=figures,
            spend_usd=spend[0],
            spend_by_agent=MappingProxyType(dict(spend[1])),
            spending=spending,
            changed_rows=None if changed is None else frozenset(changed),
            version=self._version,
        )
        self._previous = snapshot
        return snapshot

    def _conversations(self, engine: HearthEngine) -> tuple[ConversationView, ...]:
        service = engine.sim.conversations
        live: dict[str, ConversationView] = {}
        for conv in service.active_conversations():
            live[conv.id] = _conversation_view(conv, service.turns(conv.id) if
                                               conv.privacy.value == "public" else ())
        previous = self._previous.conversations if self._previous is not None else ()
        for view in previous:  # ended since the last snapshot: keep the last words seen
            if view.ended_tick is None and view.id not in live:
                self._ended[view.id] = ConversationView(
                    view.id, view.participants, view.public, view.started_tick,
                    engine.sim.world.tick, view.lines)
        while len(self._ended) > self._kept:
            self._ended.pop(next(iter(self._ended)))
        ordered = sorted(live.values(), key=lambda v: v.started_tick, reverse=True)
        return tuple(ordered) + tuple(reversed(list(self._ended.values())))


def _conversation_view(conv: Any, turns: Iterable[Any]) -> ConversationView:
    public = conv.privacy.value == "public"
    return ConversationView(
        str(conv.id), tuple(sorted(conv.participants)), public, conv.started_tick,
        conv.ended_tick,
        tuple((t.tick, str(t.speaker), t.message) for t in turns) if public else (),
    )


def _moved_rows(before: tuple[AgentView, ...], after: tuple[AgentView, ...]) -> set[int]:
    rows: set[int] = set()
    old = {v.name: v for v in before}
    for view in after:
        was = old.pop(view.name, None)
        if was is None:
            rows.add(view.position.y)
        elif was.position != view.position or was.state != view.state:
            rows.add(was.position.y)
            rows.add(view.position.y)
    rows.update(v.position.y for v in old.values())  # agents gone
    return rows


def _event_rows(ctx: TickContext) -> set[int]:
    rows: set[int] = set()
    for event in ctx.all_events:
        pos = getattr(event, "position", None)
        if isinstance(pos, Position):
            rows.update((pos.y - 1, pos.y, pos.y + 1))
    return rows


def _differing_rows(before: np.ndarray, after: np.ndarray) -> set[int]:
    return {int(y) for y in np.flatnonzero((before != after).any(axis=1))}


def _rows_of(before: Iterable[Any], after: Iterable[Any]) -> set[int]:
    return {x.position.y for x in set(before) ^ set(after)}


def _structure_rows(before: Iterable[Structure], after: Iterable[Structure]) -> set[int]:
    return {p.y for s in set(before) ^ set(after) for p in s.interior}


def _with_seat(seat: str | None, activity: str) -> str:
    """A seat's activity says first whether its outside client is there."""
    if seat is None:
        return activity
    return f"({seat} seat) {activity}".rstrip()
