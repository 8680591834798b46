"""PerceptionBuilder: what one agent perceives at the start of its turn.

One builder serves both kinds of mind. The structured part of a `Perception`
(cells, agents, objects, landmarks, inventory, conversation) is always built;
the prose part (grid view, narrative, who is in sight) only with `text=True`, so
a mind that reads structure pays nothing for text it never reads. The prose is
made from the structure, so the two can never disagree.

    builder = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering)
    perception = builder.build("Ember", tick)
    print(perception.as_text())

Decisions worth knowing:

- **What is seen.** The vision square is every in-bounds cell within
  `world.vision_radius()` (Chebyshev) of the agent: the world's clock decides the
  radius, exactly as for every sight check an action makes, so whoever appears
  here can also be invited. `tick` dates the texts and decides regrowth and
  lapsed invitations; the engine passes the world's own tick.
- **Landmarks stand tall.** Landmarks within `horizon` cells are seen even when
  far outside the vision square, day or night: this is how an agent learns one
  exists and can journey to it by name.
- **Seeing is meeting.** Every agent in view is recorded as met, both ways, so
  `sense_others` can find them later. This is the builder's one side effect.
- **The words** (map, key, the four steps around, exact offsets; the layout is in
  `adapters.perception_text`, whose docstring states what the text promises, and the
  legend every Claude mind is given once is in `adapters/claude_mind/prompt.py`)
  are made from the structure the build found, plus the world's wall arrays.
- **Speed.** The structured path is the hot one (every agent, every turn: ~15-20 µs
  at radius 3 in `python -m bench perception`, roughly twice that inside a real
  tick, where the rest of each turn has pushed the builder's data out of the
  processor's caches, so what counts is how little memory a build touches), and
  nothing in it is done per cell. Cells come from `adapters.perception_cells`: made
  once (a world that fits is kept whole, a row at a time; a bigger one slides each
  agent's last window) and handed out as slices; an agent that has not moved gets
  last time's tuple back. Everything else an agent was shown last time is kept in
  one record per agent (`_Seen`: its window, landmarks, inventory sentence and
  conversation text), given back while what decides it is the same. What could
  make a kept cell wrong is asked every build: `world.terrain_version` (a terrain
  change remakes only the squares it touched) and `gathering.bare_in` (the few
  cells gathered bare at this tick are shown bare). Objects and named places come
  from window queries on the world (`objects_in`, `places_in`), a few dictionary
  look-ups when nothing is near; landmarks are indexed in coarse buckets, the clock
  is worked out once per tick. Walls
  and doors between two cells of the window (`Perception.walls`, `.doors`, what the
  map draws) cost two counts over the window's wall arrays when it holds none (the
  common case: ~1-2 µs in the bench, more than anything else per build, as the world
  keeps no wall version or index by region to ask instead); a window with walls has
  them read out, and last build's tuples given back while the arrays there are the
  same. The
  text path reuses the structure and draws a window without walls in one join
  (~30-40 µs at radius 3 with the key and the four steps around).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from numpy import count_nonzero, nonzero

from adapters.perception_cells import CellStore
from adapters.perception_text import (
    Feature,
    Window,
    describe_conversation,
    describe_invitation,
    display_width,
    journey_text,
    narrate,
    pile_label,
    view_text,
    wall_junction,
)
from core.agent import Agent, Inventory
from core.clock import TimeOfDay
from core.conversation import Invitation
from core.landmarks import Landmark
from core.objects import PlacedItem, WorldObject
from core.perception import (
    Perception,
    SeenAgent,
    SeenCell,
    SeenLandmark,
    SeenObject,
    SeenPlace,
)
from core.places import NamedPlace
from core.types import AgentName, Position
from services.agent_service import AgentService, direction_towards
from services.conversation_service import ConversationService
from services.gathering import Gathering
from services.world_service import WorldService

DEFAULT_HORIZON = 40
"""Cells (Chebyshev) within which a landmark stands out on the horizon."""

_CELL_CACHE_LIMIT = 1 << 18
"""Cells a world may have and still be kept whole (~135 bytes each with their Position,
~35 MB in all; a 512x512 world fits); a bigger world keeps each agent's last window
instead (see adapters.perception_cells)."""

__all__ = ["DEFAULT_HORIZON", "Feature", "PerceptionBuilder", "display_width",
           "narrate", "wall_junction"]
"""Feature, narrate, display_width and wall_junction live in adapters.perception_text."""

# ---------------------------------------------------------------------- the builder


class _Seen:
    """What one agent was shown at its last build, kept to give back what has not
    changed (one record per agent, so a build reads one object for all of it)."""

    __slots__ = ("key", "pos", "radius", "window", "cells", "reach", "marks", "landmarks",
                 "inventory", "pairs", "inventory_text", "talk", "talk_text", "edges",
                 "walls", "doors")

    def __init__(self) -> None:
        self.key: object = None
        """The cell store's key when `cells` were made (a terrain change makes new ones)."""
        self.pos: Position | None = None
        self.radius = -1
        self.window: tuple[int, int, int, int] | None = None
        self.cells: tuple[SeenCell, ...] = ()
        """The window's cells as the terrain makes them, before gathering."""
        self.reach = -1
        self.marks: object = None
        """The world's landmarks `landmarks` were found among."""
        self.landmarks: tuple[SeenLandmark, ...] = ()
        self.inventory: Inventory | None = None
        self.pairs: tuple[tuple[str, int], ...] = ()
        self.inventory_text = ""
        self.talk: tuple[object, ...] = ()
        """(conversation, participants, unseen turns) `talk_text` describes."""
        self.talk_text = ""
        self.edges: bytes | None = None
        """The window's wall and door arrays, as bytes, when `walls` and `doors` were read
        from them (None: not read since the window last held no wall)."""
        self.walls: tuple[tuple[int, int, str], ...] = ()
        self.doors: tuple[tuple[int, int, str], ...] = ()


class PerceptionBuilder:
    def __init__(
        self,
        world: WorldService,
        agents: AgentService,
        conversations: ConversationService,
        gathering: Gathering,
        *,
        horizon: int = DEFAULT_HORIZON,
    ) -> None:
        if not isinstance(horizon, int) or horizon < 0:
            raise ValueError(f"horizon must be a whole number of cells >= 0, got {horizon!r}")
        self.world = world
        self.agents = agents
        self.conversations = conversations
        self.gathering = gathering
        self.horizon = horizon
        self._store = CellStore(_CELL_CACHE_LIMIT)
        self._width = self._height = 0
        self._seen: dict[AgentName, _Seen] = {}
        self._moment_key: tuple[object, object, int] | None = None
        """(world state, clock, tick) the three values below were worked out for: both
        are immutable values replaced on every change (a new tick, new weather), so
        comparing identities is enough to know the answers still hold."""
        self._radius = 0
        self._clock_text: tuple[str, str] = ("", "")
        self._marks_source: Sequence[Landmark] | None = None
        self._marks: dict[tuple[int, int], list[Landmark]] = {}
        self._mark_bucket = 1
        self._marks_reach = -1
        self._carried: dict[tuple[tuple[str, int], ...], str] = {}
        """(type, count) pairs -> the sentence saying them: many agents carry the same."""

    # ------------------------------------------------------------------ build

    def build(self, name: AgentName | str, tick: int, *, text: bool = True) -> Perception:
        """What `name` perceives at `tick`; AgentRuleError if nobody has that name.

        `text=False` leaves grid_view, narrative and visible_agents_text empty (the
        structured fields are the same either way).

        The hot path of a whole tick (every agent, every turn), so it is written out
        flat, with what the agent was shown last time in one record (`_Seen`): each
        helper called and each separate table read costs, the more so as the rest of
        a turn pushes the builder's data out of the processor's caches between builds.
        """
        world = self.world
        store = self._store
        key = store.key
        if (key is None or key[2] != world.terrain_version or key[0] is not world
                or key[1] is not world.rules):
            store.sync(world)
            key = store.key
            self._width, self._height = world.width, world.height
        me = self.agents.require(name)
        me_name = me.name
        pos = me.position
        px, py = pos.x, pos.y
        moment = self._moment_key
        state, clock = world.state, world.clock
        if moment is None or moment[2] != tick or moment[0] is not state or moment[1] is not clock:
            self._moment(tick)
        r = self._radius
        x0 = px - r if px > r else 0
        y0 = py - r if py > r else 0
        x1, y1 = px + r + 1, py + r + 1
        if x1 > self._width:
            x1 = self._width
        if y1 > self._height:
            y1 = self._height

        seen = self._seen.get(me_name)
        if seen is None:
            seen = self._seen[me_name] = _Seen()
        last = seen.pos
        stayed = last is pos or (last is not None and last.x == px and last.y == py)
        if stayed and seen.key is key and seen.radius == r:
            cells = seen.cells  # the window has not moved: the same tuple
        else:
            cells = seen.cells = store.window(
                world, store.reusable(world, seen.key, seen.window), seen.cells,
                x0, y0, x1, y1)
            seen.window, seen.key, seen.radius = (x0, y0, x1, y1), key, r
        gathering = self.gathering
        if gathering.capacity < 1:  # nothing can be gathered anywhere
            cells = tuple(store.bare_cell(c) if c.gatherable else c for c in cells)
        else:
            bare = gathering.bare_in(x0, y0, x1, y1, tick)
            if bare:
                cells = self._spent(cells, bare, x0, y0, x1)

        found = world.objects_in(x0, y0, x1, y1)
        objects = _seen_objects(pos, found) if found else ()
        nearby = self.agents.get_nearby_agents(pos, r)
        seen_agents = self._agents_in_view(me, nearby) if len(nearby) > 1 else ()
        reach = r if r > self.horizon else self.horizon
        marks = world.landmarks
        if stayed and seen.reach == reach and seen.marks is marks:
            landmarks = seen.landmarks
        else:
            landmarks = seen.landmarks = self._landmarks_near(pos, reach)
            seen.reach, seen.marks = reach, marks
        seen.pos = pos
        if seen.inventory is not me.inventory:
            self._inventory(me, seen)
        conversations = self.conversations
        if conversations.is_talking(me_name) or conversations.has_farewell(me_name):
            talk_text, talking_with = self._talk(me_name, seen)
        else:
            talk_text, talking_with = None, ()
        invitation = conversations.pending_invitation_for(me_name)
        if invitation is not None and invitation.is_expired(tick):
            invitation = None  # lapsed: it can no longer be answered
        standing_on = cells[(py - y0) * (x1 - x0) + px - x0].terrain
        structure = world.structure_at(pos)

        named = world.places_in(x0, y0, x1, y1)
        places = _seen_places(pos, named) if named else ()
        # Walls and doors on the edges between two cells of the window: two counts when
        # it holds none (the common case; a door stands only in a wall).
        if (count_nonzero(world.wall_east[y0:y1, x0:x1 - 1])
                or count_nonzero(world.wall_south[y0:y1 - 1, x0:x1])):
            walls, doors = _edges(world, seen, x0, y0, x1, y1)
        else:
            walls = doors = ()
            seen.edges = None

        grid_view = narrative = visible_agents_text = surroundings = ""
        if text:
            grid_view, visible_agents_text, surroundings = view_text(world, Window(
                pos, r, self._clock_text[1] == "night", x0, y0, x1, y1, cells,
                seen_agents, objects, landmarks, places,
            ))
            features = []
            here = cells[(py - y0) * (x1 - x0) + px - x0]
            if here.gatherable:
                features.append(Feature("gatherable", here.gatherable))
            if structure is not None:
                features.append(Feature("shelter", structure.name or ""))
            features.extend(Feature("place", p.name) for p in places if p.distance == 0)
            narrative = narrate(features)

        journey = me.journey
        time_text, period = self._clock_text
        return Perception(
            agent=me_name,
            tick=tick,
            position=pos,
            time_text=time_text,
            period=period,
            weather=state.weather,
            vision_radius=r,
            grid_view=grid_view,
            narrative=narrative,
            inventory_text=seen.inventory_text,
            journey_text=None if journey is None else journey_text(journey),
            visible_agents_text=visible_agents_text,
            conversation_text=talk_text,
            invitation_text=(None if invitation is None
                             else self._describe_invitation(invitation, tick)),
            cells=cells,
            agents=seen_agents,
            landmarks=landmarks,
            objects=objects,
            inventory=seen.pairs,
            standing_on=standing_on,
            inside_structure=structure is not None,
            on_journey=journey is not None,
            in_conversation_with=talking_with,
            pending_invitation_from=None if invitation is None else invitation.inviter,
            notices=(),  # the engine adds the Gardener's (engine/stewardship.py)
            places=places,
            surroundings_text=surroundings,
            walls=walls,
            doors=doors,
        )

    # ------------------------------------------------------------------ clock

    def _moment(self, tick: int) -> None:
        """The vision radius (from the world's own clock) and the time texts of `tick`,
        worked out once per tick, world state and clock."""
        world = self.world
        self._radius = world.vision_radius()
        when: TimeOfDay = world.time_of_day(tick)
        self._clock_text = (str(when), when.period)
        self._moment_key = (world.state, world.clock, tick)

    # ------------------------------------------------------------------ cells

    def _spent(self, cells: tuple[SeenCell, ...], bare: Iterable[Position],
               x0: int, y0: int, x1: int) -> tuple[SeenCell, ...]:
        """The window's cells with those gathered bare (`bare`, at this tick) shown bare:
        asked on every build, as gathering changes no kept cell."""
        found = list(cells)
        columns = x1 - x0
        for there in bare:
            i = (there.y - y0) * columns + there.x - x0
            if found[i].gatherable is not None:
                found[i] = self._store.bare_cell(found[i])
        return tuple(found)

    # ------------------------------------------------------------------ agents

    def _agents_in_view(self, me: Agent, nearby: Sequence[Agent]) -> tuple[SeenAgent, ...]:
        """Others in `nearby` (everyone within the vision square, `me` too, nearest first
        then by name: `get_nearby_agents` sorts them so, as they are to be listed); each
        is met."""
        pos = me.position
        px, py = pos.x, pos.y
        talking = self.conversations.is_talking
        me_name, known = me.name, me.known_agents
        seen = []
        for other in nearby:
            other_name = other.name
            if other_name == me_name:
                continue
            if other_name not in known or me_name not in other.known_agents:
                self.agents.record_meeting(me_name, other_name)
            there = other.position
            dx, dy = there.x - px, there.y - py
            seen.append(SeenAgent(
                name=other_name, position=there, direction=direction_towards(pos, there),
                distance=(dx if dx > 0 else -dx) + (dy if dy > 0 else -dy),
                is_sleeping=other.is_sleeping, in_conversation=talking(other_name),
            ))
        return tuple(seen)

    # ------------------------------------------------------------------ landmarks

    def _landmarks_near(self, pos: Position, reach: int) -> tuple[SeenLandmark, ...]:
        """Landmarks within `reach` cells (Chebyshev), nearest first then by name."""
        marks = self.world.landmarks
        if marks is not self._marks_source or reach > self._marks_reach:
            self._index_landmarks(marks, reach)
        size = self._mark_bucket
        px, py = pos.x, pos.y
        candidates = self._marks.get((px // size, py // size))
        if not candidates:
            return ()
        found = []
        for mark in candidates:
            there = mark.position
            dx, dy = abs(there.x - px), abs(there.y - py)
            if dx <= reach and dy <= reach:
                found.append(SeenLandmark(
                    name=mark.name, kind=mark.kind, position=there,
                    direction=direction_towards(pos, there), distance=dx + dy,
                ))
        if len(found) > 1:
            found.sort(key=lambda m: (m.distance, m.name))
        return tuple(found)

    def _index_landmarks(self, marks: Sequence[Landmark], reach: int) -> None:
        """Bucket the world's landmarks (fixed when the world is made) so one lookup finds
        every candidate: each is filed in every bucket that holds a cell within `reach`."""
        reach = max(reach, self.horizon, self.world.clock.vision_radius)
        size = max(16, reach)
        index: dict[tuple[int, int], list[Landmark]] = {}
        for mark in marks:
            x, y = mark.position.x, mark.position.y
            for by in range((y - reach) // size, (y + reach) // size + 1):
                for bx in range((x - reach) // size, (x + reach) // size + 1):
                    index.setdefault((bx, by), []).append(mark)
        self._marks, self._mark_bucket, self._marks_reach = index, size, reach
        self._marks_source = marks

    # ------------------------------------------------------------------ inventory

    def _inventory(self, agent: Agent, seen: _Seen) -> None:
        """Note in `seen` the agent's inventory, its sorted (type, count) pairs and the
        sentence saying them, made again only when the inventory changes."""
        inv = agent.inventory
        if inv.items:
            counts = dict(inv.stacks)
            for item in inv.items:
                counts[item.item_type] = counts.get(item.item_type, 0) + 1
            pairs = tuple(sorted(counts.items()))
        else:
            pairs = tuple(sorted(inv.stacks.items()))
        sentence = self._carried.get(pairs)
        if sentence is None:
            if len(self._carried) > 4096:  # stay bounded
                self._carried.clear()
            sentence = self._carried[pairs] = (
                "You carry: " + ", ".join(f"{kind} ({n})" for kind, n in pairs) + "."
                if pairs else "You carry nothing."
            )
        seen.inventory, seen.pairs, seen.inventory_text = inv, pairs, sentence

    # ------------------------------------------------------------------ conversation

    def _talk(self, name: AgentName, seen: _Seen) -> tuple[str, tuple[AgentName, ...]]:
        """(conversation_text, who else is in it) for an agent that is talking; the text
        is made again only when the conversation, its people or the unseen turns change."""
        context = self.conversations.get_conversation_context(name)
        talk = seen.talk
        if (not talk or talk[0] is not context.conversation or talk[1] != context.participants
                or talk[2] != context.unseen_turns
                or talk[4] != (context.left, context.earlier)):
            seen.talk = (context.conversation, context.participants, context.unseen_turns,
                         context.others, (context.left, context.earlier))
            seen.talk_text = describe_conversation(context)
        return seen.talk_text, seen.talk[3]  # type: ignore[return-value]

    def _describe_invitation(self, invitation: Invitation, tick: int) -> str:
        """The invitation and what accepting it would do, or why accepting would fail."""
        return describe_invitation(invitation, tick, self.conversations, self.agents)


# ---------------------------------------------------------------------- helpers


def _edges(world: WorldService, seen: _Seen, x0: int, y0: int, x1: int, y1: int,
           ) -> tuple[tuple[tuple[int, int, str], ...], tuple[tuple[int, int, str], ...]]:
    """(walls without a door, doors) on the edges between two cells of the window, each
    sorted: last build's tuples again while the window and its edges are the same."""
    east = world.wall_east[y0:y1, x0:x1 - 1]
    south = world.wall_south[y0:y1 - 1, x0:x1]
    east_door = world.door_east[y0:y1, x0:x1 - 1]
    south_door = world.door_south[y0:y1 - 1, x0:x1]
    state = (x0.to_bytes(4, "little", signed=True) + y0.to_bytes(4, "little", signed=True)
             + x1.to_bytes(4, "little") + y1.to_bytes(4, "little") + east.tobytes()
             + south.tobytes() + east_door.tobytes() + south_door.tobytes())
    if state == seen.edges:
        return seen.walls, seen.doors
    walls: list[tuple[int, int, str]] = []
    doors: list[tuple[int, int, str]] = []
    for array, door_array, side in ((east, east_door, "e"), (south, south_door, "s")):
        ys, xs = nonzero(array)
        for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
            (doors if door_array[y, x] else walls).append((x + x0, y + y0, side))
    walls.sort()
    doors.sort()
    seen.edges, seen.walls, seen.doors = state, tuple(walls), tuple(doors)
    return seen.walls, seen.doors


def _seen_places(me: Position, found: Sequence[NamedPlace]) -> tuple[SeenPlace, ...]:
    """Named places in view, nearest first then by name."""
    seen = [SeenPlace(name=p.name, position=p.position,
                      direction=direction_towards(me, p.position),
                      distance=abs(p.position.x - me.x) + abs(p.position.y - me.y))
            for p in found]
    if len(seen) > 1:
        seen.sort(key=lambda p: (p.distance, p.name, p.position.y, p.position.x))
    return tuple(seen)


def _seen_objects(me: Position, found: Sequence[WorldObject]) -> tuple[SeenObject, ...]:
    if not found:
        return ()
    seen = []
    for obj in found:
        there = obj.position
        label = pile_label(obj) if isinstance(obj, PlacedItem) else ""
        seen.append(SeenObject(
            kind=obj.object_type, position=there, direction=direction_towards(me, there),
            distance=abs(there.x - me.x) + abs(there.y - me.y), label=label,
        ))
    if len(seen) > 1:
        seen.sort(key=lambda o: (o.distance, o.position.y, o.position.x))
    return tuple(seen)
