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
- **Grid layout.** Double resolution: cells at even offsets, the edges between
  them at odd offsets. Every cell slot is two terminal columns wide: emoji are two
  wide already (an emoji with the U+FE0F presentation selector counts as two, as
  modern terminals draw it) and one-column symbols get a trailing space, so rows
  line up in a terminal and every row has the same display width. Edge slots are
  one column between cells and two under them; a wall is a box-drawing line that
  joins its neighbours at corners (a lone wall runs on to the corners it reaches),
  a door is a gap in it. Edges on the window's outer border have no slot and are
  not drawn. The view is clipped at the map's edges, never padded.
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
  is worked out once per tick, and the values are made by `fast_constructor`. The
  text path reuses the structure and draws a window without walls in one join.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from numpy import count_nonzero

from adapters.perception_cells import CellStore, fast_constructor
from core.agent import Agent, Inventory, Journey
from core.clock import TimeOfDay
from core.conversation import Invitation
from core.landmarks import Landmark
from core.objects import PlacedItem, WorldObject
from core.perception import Perception, SeenAgent, SeenCell, SeenLandmark, SeenObject
from core.structures import Structure
from core.terrain import (
    AGENT_EMOJI,
    OBJECT_EMOJI,
    SELF_EMOJI,
    TERRAIN_EMOJI,
    TERRAIN_ORDER,
    Terrain,
)
from core.types import AgentName, Direction, Position
from services.agent_service import AgentService, direction_towards
from services.conversation_service import ConversationContext, ConversationService
from services.gathering import Gathering
from services.world_service import WorldService

DEFAULT_HORIZON = 40
"""Cells (Chebyshev) within which a landmark stands out on the horizon."""

_CELL_CACHE_LIMIT = 1 << 18
"""Cells a world may have and still be kept whole (~135 bytes each with their Position,
~35 MB in all; a 512x512 world fits); a bigger world keeps each agent's last window
instead (see adapters.perception_cells)."""

_COMPASS = (Direction.NORTH, Direction.EAST, Direction.SOUTH, Direction.WEST, Direction.DOWN)
"""Tie order when a terrain lies equally in two directions."""

_MAX_LISTED = 4
"""Things named in one narrative sentence before the rest become "and N more"."""


# ---------------------------------------------------------------------- features


@dataclass(frozen=True, slots=True)
class Feature:
    """One thing worth saying about the view: the narrative is made from these alone.

    Kept apart from the wording so a language-model narrator can be given the same
    list instead of the raw grid.
    """

    kind: str
    """ground, gatherable, shelter, place, terrain, object, agent, landmark or horizon."""
    what: str
    direction: Direction = Direction.DOWN
    distance: int = 0
    detail: str = ""


# ---------------------------------------------------------------------- grid symbols


def display_width(symbol: str) -> int:
    """Terminal columns a symbol takes: 2 for wide or emoji-presented characters, else 1."""
    if "\ufe0f" in symbol:
        return 2
    return 2 if any(unicodedata.east_asian_width(c) in "WF" for c in symbol) else 1


def _slot(symbol: str) -> str:
    """A symbol padded to a two-column cell slot."""
    return symbol + " " * (2 - display_width(symbol))


_TERRAIN_SLOTS: tuple[str, ...] = tuple(_slot(TERRAIN_EMOJI[t]) for t in TERRAIN_ORDER)
_SELF_SLOT = _slot(SELF_EMOJI)
_AGENT_SLOT = _slot(AGENT_EMOJI)
_OBJECT_SLOTS = {kind: _slot(symbol) for kind, symbol in OBJECT_EMOJI.items()}
_OBJECT_RANK = {"sign": 0, "placed_item": 1}
"""Which object shows when a cell holds several: a sign before a placed item."""

_WALL_SLOT = "─" * 2


def wall_junction(up: bool, down: bool, left: bool, right: bool) -> str:
    """The box-drawing character where up to four wall segments meet."""
    vertical, horizontal = up or down, left or right
    if not horizontal:
        return "│" if vertical else " "
    if not vertical:
        return "─"
    if up and down:
        return "┼" if left and right else ("├" if right else "┤")
    if left and right:
        return "┴" if up else "┬"
    if down:
        return "┌" if right else "┐"
    return "└" if right else "┘"


_JUNCTIONS: dict[tuple[bool, bool, bool, bool], str] = {
    (u, d, lt, rt): wall_junction(u, d, lt, rt)
    for u in (False, True) for d in (False, True) for lt in (False, True) for rt in (False, True)
}
"""(up, down, left, right) -> character; a lone segment runs on to the corner it reaches."""


# ---------------------------------------------------------------------- making a Perception


_PERCEPTION_FIELDS = (
    "agent", "tick", "position", "time_text", "period", "weather", "vision_radius",
    "grid_view", "narrative", "inventory_text", "journey_text", "visible_agents_text",
    "conversation_text", "invitation_text", "cells", "agents", "landmarks", "objects",
    "inventory", "standing_on", "inside_structure", "on_journey", "in_conversation_with",
    "pending_invitation_from", "notices",
)
"""The order `build` passes a Perception's values in: checked against the class below."""

if tuple(f.name for f in dataclasses.fields(Perception)) != _PERCEPTION_FIELDS:
    raise ImportError("core.perception.Perception's fields changed: update _PERCEPTION_FIELDS "
                      "and PerceptionBuilder.build to the new order")

_new_perception = fast_constructor(Perception)
_new_seen_agent = fast_constructor(SeenAgent)
_new_seen_landmark = fast_constructor(SeenLandmark)
_new_seen_object = fast_constructor(SeenObject)


# ---------------------------------------------------------------------- the builder


class _Seen:
    """What one agent was shown at its last build, kept to give back what has not
    changed (one record per agent, so a build reads one object for all of it)."""

    __slots__ = ("key", "pos", "radius", "window", "cells", "reach", "marks", "landmarks",
                 "inventory", "pairs", "inventory_text", "talk", "talk_text")

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
        if conversations.is_talking(me_name):
            talk_text, talking_with = self._talk(me_name, seen)
        else:
            talk_text, talking_with = None, ()
        invitation = conversations.pending_invitation_for(me_name)
        if invitation is not None and invitation.is_expired(tick):
            invitation = None  # lapsed: it can no longer be answered
        standing_on = cells[(py - y0) * (x1 - x0) + px - x0].terrain
        structure = world.structure_at(pos)

        grid_view = narrative = visible_agents_text = ""
        if text:
            grid_view = self._grid(pos, x0, y0, x1, y1, seen_agents, objects)
            narrative = narrate(self._features(
                me, r, standing_on, structure, cells, seen_agents, objects, landmarks,
                x0, y0, x1, y1,
            ))
            visible_agents_text = describe_agents(seen_agents)

        journey = me.journey
        time_text, period = self._clock_text
        return _new_perception(  # positional, in _PERCEPTION_FIELDS order
            me_name,  # agent
            tick,
            pos,  # position
            time_text,
            period,
            state.weather,
            r,  # vision_radius
            grid_view,
            narrative,
            seen.inventory_text,
            None if journey is None else journey_text(journey),
            visible_agents_text,
            talk_text,  # conversation_text
            None if invitation is None else self._describe_invitation(invitation, tick),
            cells,
            seen_agents,  # agents
            landmarks,
            objects,
            seen.pairs,  # inventory
            standing_on,
            structure is not None,  # inside_structure
            journey is not None,  # on_journey
            talking_with,  # in_conversation_with
            None if invitation is None else invitation.inviter,  # pending_invitation_from
            (),  # notices: the engine adds the Gardener's (engine/stewardship.py)
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
            seen.append(_new_seen_agent(
                other_name, there, direction_towards(pos, there),
                (dx if dx > 0 else -dx) + (dy if dy > 0 else -dy),
                other.is_sleeping, talking(other_name),
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
                found.append(_new_seen_landmark(
                    mark.name, mark.kind, there, direction_towards(pos, there), dx + dy,
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
                or talk[2] != context.unseen_turns):
            seen.talk = (context.conversation, context.participants, context.unseen_turns,
                         context.others)
            seen.talk_text = describe_conversation(context)
        return seen.talk_text, seen.talk[3]  # type: ignore[return-value]

    def _describe_invitation(self, invitation: Invitation, tick: int) -> str:
        """The invitation and what it would lead to, in words."""
        left = invitation.expires_at_tick - tick
        lapse = "it lapses after this tick" if left <= 1 else f"it lapses in {left} ticks"
        others = [
            n for n in self.conversations.participants(invitation.conversation_id)
            if n != invitation.inviter
        ] if invitation.conversation_id else []
        what = f"a {invitation.privacy} conversation"
        if others:
            what = f"join their {invitation.privacy} conversation with {_and(others)}"
        return (f"{invitation.inviter} invites you to {what}; accept or decline ({lapse}).")

    # ------------------------------------------------------------------ grid

    def _grid(
        self, me: Position, x0: int, y0: int, x1: int, y1: int,
        seen_agents: Iterable[SeenAgent], objects: Iterable[SeenObject],
    ) -> str:
        """The window at double resolution (see the module docstring)."""
        world = self.world
        terrain_slot = _TERRAIN_SLOTS.__getitem__
        slots = [list(map(terrain_slot, row)) for row in world.codes[y0:y1, x0:x1].tolist()]
        ranked = sorted(objects, key=lambda o: _OBJECT_RANK.get(o.kind, 9), reverse=True)
        for obj in ranked:  # the highest-ranked object is written last and shows
            slots[obj.position.y - y0][obj.position.x - x0] = _OBJECT_SLOTS.get(
                obj.kind, _OBJECT_SLOTS["placed_item"]
            )
        for other in seen_agents:
            slots[other.position.y - y0][other.position.x - x0] = _AGENT_SLOT
        slots[me.y - y0][me.x - x0] = _SELF_SLOT

        # The edge arrays, a window at a time (DESIGN "Walls are one fact"): the same
        # facts as has_wall/has_door, at one array read per window instead of per edge.
        # Only edges between two cells of the window are drawn: east of every column
        # but the last, south of every row but the last.
        if not (count_nonzero(world.wall_east[y0:y1, x0:x1 - 1])
                or count_nonzero(world.wall_south[y0:y1 - 1, x0:x1])):  # the common case
            gap = " " * (3 * (x1 - x0) - 1)
            return ("\n" + gap + "\n").join([" ".join(row) for row in slots])
        window = (slice(y0, y1), slice(x0, x1))
        east = (world.wall_east[window] & ~world.door_east[window]).tolist()
        south = (world.wall_south[window] & ~world.door_south[window]).tolist()
        columns = x1 - x0
        lines = []
        for j, row in enumerate(slots):
            line = [row[0]]
            for i in range(1, columns):
                line.append("│" if east[j][i - 1] else " ")
                line.append(row[i])
            lines.append("".join(line))
            if j == len(slots) - 1:
                break
            edge = [_WALL_SLOT if south[j][0] else "  "]
            for i in range(1, columns):
                edge.append(_JUNCTIONS[
                    (east[j][i - 1], east[j + 1][i - 1], south[j][i - 1], south[j][i])
                ])
                edge.append(_WALL_SLOT if south[j][i] else "  ")
            lines.append("".join(edge))
        return "\n".join(lines)

    # ------------------------------------------------------------------ narrative

    def _features(
        self, me: Agent, radius: int, standing_on: Terrain, structure: Structure | None,
        cells: Sequence[SeenCell], seen_agents: Sequence[SeenAgent],
        objects: Sequence[SeenObject], landmarks: Sequence[SeenLandmark],
        x0: int, y0: int, x1: int, y1: int,
    ) -> list[Feature]:
        """What is worth saying about the view, nearest first within each kind."""
        pos = me.position
        features = [Feature("ground", standing_on.value)]
        here = cells[(pos.y - y0) * (x1 - x0) + (pos.x - x0)]
        if here.gatherable:
            features.append(Feature("gatherable", here.gatherable))
        if structure is not None:
            features.append(Feature("shelter", structure.name or ""))
        for place in sorted(self.world.places_in(x0, y0, x1, y1),
                            key=lambda p: (p.position, p.key)):
            there = place.position
            features.append(Feature(
                "place", place.name, direction_towards(pos, there), pos.manhattan(there)
            ))
        features.extend(_terrain_features(pos, standing_on, cells, x0, y0, x1, y1))
        features.extend(
            Feature("object", _object_phrase(obj), obj.direction, obj.distance) for obj in objects
        )
        features.extend(
            Feature("agent", a.name, a.direction, a.distance, _agent_state(a))
            for a in seen_agents
        )
        for mark in landmarks:
            far = max(abs(mark.position.x - pos.x), abs(mark.position.y - pos.y)) > radius
            features.append(Feature(
                "horizon" if far else "landmark", mark.name, mark.direction, mark.distance
            ))
        return features


# ---------------------------------------------------------------------- helpers


def _seen_objects(me: Position, found: Sequence[WorldObject]) -> tuple[SeenObject, ...]:
    if not found:
        return ()
    seen = []
    for obj in found:
        there = obj.position
        label = ""
        if isinstance(obj, PlacedItem):
            label = f"{obj.quantity} {obj.resource}" if obj.resource else obj.label
        seen.append(_new_seen_object(
            obj.object_type, there, direction_towards(me, there),
            abs(there.x - me.x) + abs(there.y - me.y), label,
        ))
    if len(seen) > 1:
        seen.sort(key=lambda o: (o.distance, o.position.y, o.position.x))
    return tuple(seen)


def _terrain_features(
    me: Position, standing_on: Terrain, cells: Sequence[SeenCell],
    x0: int, y0: int, x1: int, y1: int,
) -> list[Feature]:
    """For each other terrain in view: the direction most of it lies in, and how near it
    comes in that direction. `cells` is the window x0 <= x < x1, y0 <= y < y1, row by row."""
    # Keyed by id(): an Enum's hash is a Python-level call, and this runs per cell.
    spread: dict[int, tuple[Terrain, list[int], list[int]]] = {}
    """id(terrain) -> (terrain, cells in each _COMPASS direction, the nearest of them)"""
    layout = _layout(me.x - x0, me.y - y0, x1 - x0, y1 - y0)
    for cell, (way, distance) in zip(cells, layout, strict=True):
        terrain = cell.terrain
        if terrain is standing_on:
            continue
        tally = spread.get(id(terrain))
        if tally is None:
            tally = spread[id(terrain)] = (terrain, [0] * len(_COMPASS), [_FAR] * len(_COMPASS))
        tally[1][way] += 1
        if distance < tally[2][way]:
            tally[2][way] = distance
    features = []
    for terrain, counts, nearest in spread.values():
        # Most cells, then the nearer, then the first in _COMPASS order.
        way = max(
            (w for w, n in enumerate(counts) if n),
            key=lambda w: (counts[w], -nearest[w], -w),
        )
        features.append(Feature("terrain", terrain.value, _COMPASS[way], nearest[way]))
    features.sort(key=lambda f: (f.distance, f.what))
    return features


_FAR = 1 << 62


_LAYOUTS: dict[tuple[int, int, int, int], tuple[tuple[int, int], ...]] = {}
"""(viewer's column, row, columns, rows) -> each cell's (direction, distance) from the
viewer, row by row: one per shape of window (a handful, more at the map's edges)."""


def _layout(mx: int, my: int, columns: int, rows: int) -> tuple[tuple[int, int], ...]:
    """`direction_towards` (as its index in _COMPASS) and the Manhattan distance from
    cell (mx, my) of a window to each of its cells, row by row."""
    key = (mx, my, columns, rows)
    layout = _LAYOUTS.get(key)
    if layout is None:
        if len(_LAYOUTS) > 4096:  # many radii in one process (tests): stay bounded
            _LAYOUTS.clear()
        viewer = Position(mx, my)
        layout = _LAYOUTS[key] = tuple(
            (_COMPASS.index(direction_towards(viewer, Position(i, j))),
             abs(i - mx) + abs(j - my))
            for j in range(rows) for i in range(columns)
        )
    return layout


def _object_phrase(obj: SeenObject) -> str:
    if obj.kind == "sign":
        return "a sign"
    if obj.label and obj.label[0].isdigit():
        return f"a pile of {obj.label}"
    return f"a {obj.label or obj.kind}"


def _agent_state(agent: SeenAgent) -> str:
    if agent.is_sleeping:
        return "asleep"
    return "talking" if agent.in_conversation else ""


def _where(direction: Direction, distance: int) -> str:
    if distance == 0 or direction is Direction.DOWN:
        return "right here"
    if distance == 1:
        return f"just to the {direction.value}"
    return f"{distance} cells to the {direction.value}"


def _and(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _listed(phrases: Sequence[str]) -> str:
    shown = list(phrases[:_MAX_LISTED])
    if len(phrases) > _MAX_LISTED:
        shown.append(f"{len(phrases) - _MAX_LISTED} more")
    return _and(shown)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def narrate(features: Sequence[Feature]) -> str:
    """The template narrative: two to four plain sentences from the features alone."""
    by_kind: dict[str, list[Feature]] = {}
    for f in features:
        by_kind.setdefault(f.kind, []).append(f)
    ground = by_kind.get("ground", [Feature("ground", "the ground")])[0].what
    sentence = f"You stand on {ground}"
    here_places = [f.what for f in by_kind.get("place", []) if f.distance == 0]
    if here_places:
        sentence += f", at {_and(here_places)}"
    for shelter in by_kind.get("shelter", []):
        sentence += ", inside a shelter" + (f" called {shelter.what}" if shelter.what else "")
    for res in by_kind.get("gatherable", []):
        sentence += f"; {res.what} can be gathered here"
    sentences = [sentence + "."]

    around = [f"{f.what} {_where(f.direction, f.distance)}" for f in by_kind.get("terrain", [])]
    sentences.append(
        f"Around you: {_listed(around)}." if around else f"{_capital(ground)} stretches all around."
    )

    nearby = [f"{f.what} {_where(f.direction, f.distance)}" for f in by_kind.get("object", [])]
    nearby += [
        f"{f.what}{' (' + f.detail + ')' if f.detail else ''} {_where(f.direction, f.distance)}"
        for f in by_kind.get("agent", [])
    ]
    nearby += [
        f"the place called {f.what} {_where(f.direction, f.distance)}"
        for f in by_kind.get("place", []) if f.distance
    ]
    if nearby:
        sentences.append(f"Nearby you see {_listed(nearby)}.")

    near = [f"{f.what} {_where(f.direction, f.distance)}" for f in by_kind.get("landmark", [])]
    far = [f"{f.what}, {_where(f.direction, f.distance)}" for f in by_kind.get("horizon", [])]
    if near and far:
        sentences.append(f"You can see {_listed(near)}; farther off, {_listed(far)}.")
    elif near:
        sentences.append(f"You can see {_listed(near)}.")
    elif far:
        sentences.append(f"Farther off you can make out {_listed(far)}.")
    return " ".join(sentences)


def describe_agents(seen: Sequence[SeenAgent]) -> str:
    """One sentence per agent in view, nearest first."""
    if not seen:
        return "Nobody is in sight."
    lines = []
    for a in seen:
        if a.distance == 0:
            where = "here with you"
        else:
            cells = "cell" if a.distance == 1 else "cells"
            where = f"to the {a.direction.value}, {a.distance} {cells} away"
        state = _agent_state(a)
        lines.append(f"{a.name} is {where}" + (f" ({state})" if state else "") + ".")
    return " ".join(lines)


def journey_text(journey: Journey | None) -> str | None:
    if journey is None:
        return None
    steps = journey.remaining
    return (f"Travelling to ({journey.destination.x}, {journey.destination.y}), "
            f"{steps} step{'' if steps == 1 else 's'} to go.")


def describe_conversation(context: ConversationContext) -> str:
    """Who the agent is talking with, and each turn it has not seen yet."""
    conv = context.conversation
    privacy = f"a {conv.privacy} conversation" if conv is not None else "a conversation"
    text = f"You are in {privacy} with {_and(list(context.others))}."
    if not context.unseen_turns:
        return text + " Nothing new has been said since your last turn."
    lines = [text, "Since your last turn:"]
    for turn in context.unseen_turns:
        speaker = "You" if turn.speaker == context.agent else turn.speaker
        message = turn.message.replace("\n", "\n    ")
        lines.append(f"  {speaker}: {message}")
    return "\n".join(lines)
