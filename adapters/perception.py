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
- **Speed.** The structured path is the hot one (every agent, every tick: 20-25 µs
  at radius 3, `python -m bench perception`), and nothing in it is done per cell.
  A cell's `SeenCell` is made once (a square of cells at a time) and kept in a grid
  of rows, so a window is a few list slices, and an agent that has not moved gets
  last tick's tuple back. What could make a kept cell wrong is asked every build:
  `world.terrain_version` (a terrain change forgets only the squares it touched)
  and `gathering.bare_in` (the few cells gathered bare at this tick are shown
  bare). Objects and named places come from window queries on the world
  (`objects_in`, `places_in`), a few dictionary look-ups when nothing is near;
  landmarks are indexed in coarse buckets, the clock is worked out once per tick,
  and the Perception is made by `fast_constructor`. Kept cells are bounded
  (`_CELL_CACHE_LIMIT`). The text path reuses the structure and draws a window
  without walls in one join.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from numpy import count_nonzero

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

T = TypeVar("T")

DEFAULT_HORIZON = 40
"""Cells (Chebyshev) within which a landmark stands out on the horizon."""

_CELL_CACHE_LIMIT = 1 << 18
"""SeenCells kept for reuse at least (~135 bytes each with their Position, ~35 MB in
all); past the limit the store starts afresh, so memory stays bounded. A 500x500 world
fits whole."""

_CELLS_PER_AGENT = 64
"""...and more in a crowded world: room for each agent's window (49 cells by day) and
some of the cells it walks into next."""

_FILL_TILE = 16
"""While the store is less than half full (or the whole world fits in it), cells are
made a square of this side at a time (the squares a window touches), so a walk rarely
meets a missing cell; past half, only the window's own cells are made, so a crowded
big world's store lasts longer before it starts afresh."""

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


def _junction(up: bool, down: bool, left: bool, right: bool) -> str:
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
    (u, d, lt, rt): _junction(u, d, lt, rt)
    for u in (False, True) for d in (False, True) for lt in (False, True) for rt in (False, True)
}
"""(up, down, left, right) -> character; a lone segment runs on to the corner it reaches."""


# ---------------------------------------------------------------------- making a Perception


def fast_constructor(cls: type[T]) -> Callable[..., T]:
    """A maker of `cls` values from positional field values, in field order.

    For a frozen slots dataclass whose every field is set by `__init__` and that has no
    `__post_init__` (nothing to validate or derive), the maker fills the slots directly,
    one descriptor call per field: about half the cost of the generated `__init__`,
    which goes through `object.__setattr__` once per field. Like that `__init__`, the
    maker is generated code (straight-line, no loop). Any other class gets its own
    constructor.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = tuple(f.name for f in fields)
    if (hasattr(cls, "__post_init__") or tuple(getattr(cls, "__slots__", ())) != names
            or not all(f.init for f in fields)):
        return cls
    scope: dict[str, object] = {"new": object.__new__, "cls": cls}
    values = [f"v{i}" for i in range(len(names))]
    lines = [f"def make({', '.join(values)}, /):", "    made = new(cls)"]
    for i, name in enumerate(names):
        scope[f"set{i}"] = getattr(cls, name).__set__  # the slot's own descriptor
        lines.append(f"    set{i}(made, v{i})")
    lines.append("    return made")
    exec("\n".join(lines), scope)  # the code is made of numbered names only
    make = scope["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"  # type: ignore[attr-defined]
    return make  # type: ignore[return-value]


_PERCEPTION_FIELDS = (
    "agent", "tick", "position", "time_text", "period", "weather", "vision_radius",
    "grid_view", "narrative", "inventory_text", "journey_text", "visible_agents_text",
    "conversation_text", "invitation_text", "cells", "agents", "landmarks", "objects",
    "inventory", "standing_on", "inside_structure", "on_journey", "in_conversation_with",
    "pending_invitation_from",
)
"""The order `build` passes a Perception's values in: checked against the class below."""

if tuple(f.name for f in dataclasses.fields(Perception)) != _PERCEPTION_FIELDS:
    raise ImportError("core.perception.Perception's fields changed: update _PERCEPTION_FIELDS "
                      "and PerceptionBuilder.build to the new order")

_new_perception = fast_constructor(Perception)
_new_seen_cell = fast_constructor(SeenCell)
_new_position = fast_constructor(Position)


# ---------------------------------------------------------------------- the builder


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
        self._rows: list[list[SeenCell | None] | None] = []
        """rows[y][x] -> the SeenCell of (x, y) as its terrain makes it (an unspent
        gatherable), None until first seen; rows are made as they come into view."""
        self._filled = 0
        self._fill_limit = _CELL_CACHE_LIMIT
        self._rows_key: tuple[object, object, int] | None = None
        """(world, its rules, its terrain_version) the rows were made for."""
        self._bare: dict[tuple[int, int], SeenCell] = {}
        """(x, y) -> the cell as it looks gathered bare (made on first need)."""
        self._width = self._height = 0
        self._last_marks: dict[AgentName, tuple[Position, int, object,
                                                tuple[SeenLandmark, ...]]] = {}
        """name -> (position, reach, the world's landmarks, what was seen) at the last build."""
        self._last_window: dict[AgentName, tuple[tuple[int, int, int, int], object,
                                                 tuple[SeenCell, ...]]] = {}
        """name -> (window, `_rows_key`, its cells before gathering) at the last build."""
        self._clock_key: tuple[object, int] | None = None
        self._clock_text: tuple[str, str] = ("", "")
        self._radius_key: tuple[object, object] | None = None
        self._radius = 0
        self._marks_source: Sequence[Landmark] | None = None
        self._marks: dict[tuple[int, int], list[Landmark]] = {}
        self._mark_bucket = 1
        self._marks_reach = -1
        self._inventories: dict[AgentName, tuple[Inventory, tuple[tuple[str, int], ...], str]] = {}

    # ------------------------------------------------------------------ build

    def build(self, name: AgentName | str, tick: int, *, text: bool = True) -> Perception:
        """What `name` perceives at `tick`; AgentRuleError if nobody has that name.

        `text=False` leaves grid_view, narrative and visible_agents_text empty (the
        structured fields are the same either way).
        """
        world = self.world
        key = self._rows_key
        if (key is None or key[2] != world.terrain_version or key[0] is not world
                or key[1] is not world.rules):
            self._forget_changed_cells()
        me = self.agents.require(name)
        pos = me.position
        px, py = pos.x, pos.y
        r = self._vision_radius()
        x0 = px - r if px > r else 0
        y0 = py - r if py > r else 0
        x1, y1 = px + r + 1, py + r + 1
        if x1 > self._width:
            x1 = self._width
        if y1 > self._height:
            y1 = self._height

        cells = self._cells(me.name, tick, x0, y0, x1, y1)
        objects = _seen_objects(pos, world.objects_in(x0, y0, x1, y1))
        seen_agents = self._agents_in_view(me, r)
        landmarks = self._landmarks_for(me.name, pos, r if r > self.horizon else self.horizon)
        inventory, inventory_text = self._inventory(me)

        conversation = (
            self.conversations.get_conversation_context(me.name)
            if self.conversations.is_talking(me.name) else None
        )
        invitation = self.conversations.pending_invitation_for(me.name)
        if invitation is not None and invitation.is_expired(tick):
            invitation = None  # lapsed: it can no longer be answered
        time_text, period = self._clock(tick)
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
        return _new_perception(  # positional, in _PERCEPTION_FIELDS order
            me.name,  # agent
            tick,
            pos,  # position
            time_text,
            period,
            world.weather,
            r,  # vision_radius
            grid_view,
            narrative,
            inventory_text,
            None if journey is None else journey_text(journey),
            visible_agents_text,
            None if conversation is None else describe_conversation(conversation),
            None if invitation is None else self._describe_invitation(invitation, tick),
            cells,
            seen_agents,  # agents
            landmarks,
            objects,
            inventory,
            standing_on,
            structure is not None,  # inside_structure
            journey is not None,  # on_journey
            () if conversation is None else conversation.others,  # in_conversation_with
            None if invitation is None else invitation.inviter,  # pending_invitation_from
        )

    # ------------------------------------------------------------------ clock

    def _clock(self, tick: int) -> tuple[str, str]:
        """(time text, period) of a tick, worked out once per tick and clock."""
        clock = self.world.clock
        key = self._clock_key
        if key is None or key[0] is not clock or key[1] != tick:
            when: TimeOfDay = self.world.time_of_day(tick)
            self._clock_text = (str(when), when.period)
            self._clock_key = (clock, tick)
        return self._clock_text

    def _vision_radius(self) -> int:
        """The world's vision radius, asked again only when its state or clock changed.

        Both are immutable values replaced on every change (a new tick, new weather),
        so comparing identities is enough to know the answer still holds.
        """
        world = self.world
        state, clock = world.state, world.clock
        key = self._radius_key
        if key is None or key[0] is not state or key[1] is not clock:
            self._radius = world.vision_radius()
            self._radius_key = (state, clock)
        return self._radius

    # ------------------------------------------------------------------ cells and objects

    def _cells(
        self, name: AgentName, tick: int, x0: int, y0: int, x1: int, y1: int,
    ) -> tuple[SeenCell, ...]:
        """Every cell of the window, row by row.

        A cell's SeenCell is made once and kept in `_rows`, so a window is a few list
        slices, and an agent that has not moved gets last time's tuple back. What can
        change a kept cell is checked on every build: a terrain change
        (`world.terrain_version`; only the changed squares are forgotten) and gathering
        (`gathering.bare_in`, at this tick: the few cells gathered bare are shown bare).
        """
        world = self.world
        key = self._rows_key  # up to date: `build` checked it
        window = (x0, y0, x1, y1)
        last = self._last_window.get(name)
        if last is not None and last[0] == window and last[1] is key:
            base = last[2]
        elif world.width * world.height > self._fill_limit:
            # A world too big to keep every cell: slide the agent's own last window.
            base = self._slide(last if last is not None and last[1] is key else None,
                               x0, y0, x1, y1)
            self._last_window[name] = (window, key, base)
        else:
            rows = self._rows
            found: list[SeenCell | None] = []
            for y in range(y0, y1):
                row = rows[y]
                if row is None:
                    row = rows[y] = [None] * world.width
                found += row[x0:x1]
            base = tuple(found) if all(found) else tuple(self._fill(x0, y0, x1, y1))
            self._last_window[name] = (window, key, base)
        gathering = self.gathering
        if gathering.capacity < 1:  # nothing can be gathered anywhere
            return tuple(self._bare_cell(c) if c.gatherable else c for c in base)
        bare = gathering.bare_in(x0, y0, x1, y1, tick)
        if not bare:
            return base
        cells = list(base)
        columns = x1 - x0
        for there in bare:
            i = (there.y - y0) * columns + there.x - x0
            if cells[i].gatherable is not None:
                cells[i] = self._bare_cell(cells[i])
        return tuple(cells)

    def _slide(self, last, x0: int, y0: int, x1: int, y1: int) -> tuple[SeenCell, ...]:
        """The window's cells, reusing those it shares with the agent's last window.

        For worlds with more cells than the shared store may keep: an agent that moved
        one step needs one new row or column of cells, not a refilled 16x16 square
        (which, with thousands of agents spread out, thrashed the store every tick).
        """
        world = self.world
        codes = world.codes[y0:y1, x0:x1].tolist()
        passable = world.passable[y0:y1, x0:x1].tolist()
        gather, terrains = world.rules.gather, TERRAIN_ORDER
        new_cell, new_position = _new_seen_cell, _new_position
        if last is not None:
            lx0, ly0, lx1, ly1 = last[0]
            old, columns = last[2], lx1 - lx0
        else:
            lx0 = ly0 = lx1 = ly1 = columns = 0
            old = ()
        cells: list[SeenCell] = []
        for y, row_codes, row_passable in zip(range(y0, y1), codes, passable, strict=True):
            shared_row = ly0 <= y < ly1
            for x, code, can_pass in zip(range(x0, x1), row_codes, row_passable, strict=True):
                if shared_row and lx0 <= x < lx1:
                    cells.append(old[(y - ly0) * columns + x - lx0])
                else:
                    cells.append(new_cell(new_position(x, y), terrains[code], gather[code],
                                          can_pass))
        return tuple(cells)

    def _fill(self, x0: int, y0: int, x1: int, y1: int) -> list[SeenCell]:
        """Make the window's missing SeenCells (and more, see _FILL_TILE), then list the
        window's cells, row by row."""
        world = self.world
        if self._filled > self._fill_limit:  # grown past its room: more agents, or start afresh
            self._fill_limit = max(_CELL_CACHE_LIMIT, _CELLS_PER_AGENT * len(self.agents.names()))
            if self._filled > self._fill_limit:
                self._rows = [None] * world.height
                self._bare.clear()
                self._filled = 0
        rows = self._rows
        width = world.width
        fx0, fy0, fx1, fy1 = x0, y0, x1, y1
        if 2 * self._filled < self._fill_limit or world.width * world.height <= self._fill_limit:
            size = _FILL_TILE
            fx0, fy0 = x0 - x0 % size, y0 - y0 % size
            fx1, fy1 = min(width, x1 + (-x1) % size), min(world.height, y1 + (-y1) % size)
        codes = world.codes[fy0:fy1, fx0:fx1].tolist()
        passable = world.passable[fy0:fy1, fx0:fx1].tolist()
        gather = world.rules.gather
        terrains = TERRAIN_ORDER
        new_cell, new_position = _new_seen_cell, _new_position
        made = 0
        for y, row_codes, row_passable in zip(range(fy0, fy1), codes, passable, strict=True):
            row = rows[y]
            if row is None:
                row = rows[y] = [None] * width
            for x, code, can_pass in zip(range(fx0, fx1), row_codes, row_passable, strict=True):
                if row[x] is None:
                    row[x] = new_cell(new_position(x, y), terrains[code], gather[code], can_pass)
                    made += 1
        self._filled += made
        cells: list[SeenCell] = []
        for y in range(y0, y1):
            cells += rows[y][x0:x1]
        return cells

    def _forget_changed_cells(self) -> None:
        """Drop the kept cells whose terrain may have changed (all of them for a new world
        or new terrain rules)."""
        world = self.world
        key = self._rows_key
        if key is None or key[0] is not world or key[1] is not world.rules:
            self._rows = [None] * world.height
            self._bare.clear()
            self._filled = 0
        else:
            rows = self._rows
            for x0, y0, x1, y1 in world.terrain_changed_since(key[2]):
                blank = [None] * (x1 - x0)
                for y in range(y0, y1):
                    row = rows[y]
                    if row is not None:
                        row[x0:x1] = blank
        self._rows_key = (world, world.rules, world.terrain_version)
        self._width, self._height = world.width, world.height

    def _bare_cell(self, cell: SeenCell) -> SeenCell:
        """`cell` with nothing left to gather."""
        where = (cell.position.x, cell.position.y)
        bare = self._bare.get(where)
        if bare is None or bare.terrain is not cell.terrain or bare.passable is not cell.passable:
            bare = self._bare[where] = SeenCell(cell.position, cell.terrain, None, cell.passable)
        return bare

    # ------------------------------------------------------------------ agents

    def _agents_in_view(self, me: Agent, radius: int) -> tuple[SeenAgent, ...]:
        """Others within the vision square, nearest first then by name; each is met."""
        pos = me.position
        talking = self.conversations.is_talking
        seen = []
        for other in self.agents.get_nearby_agents(pos, radius):
            if other.name == me.name:
                continue
            if other.name not in me.known_agents or me.name not in other.known_agents:
                self.agents.record_meeting(me.name, other.name)
            there = other.position
            seen.append(SeenAgent(
                name=other.name,
                position=there,
                direction=direction_towards(pos, there),
                distance=abs(there.x - pos.x) + abs(there.y - pos.y),
                is_sleeping=other.is_sleeping,
                in_conversation=talking(other.name),
            ))
        if len(seen) > 1:
            seen.sort(key=lambda a: (a.distance, a.name))
        return tuple(seen)

    # ------------------------------------------------------------------ landmarks

    def _landmarks_for(self, name: AgentName, pos: Position, reach: int
                       ) -> tuple[SeenLandmark, ...]:
        """`_landmarks_near`, given back unchanged to an agent that has not moved."""
        marks = self.world.landmarks
        last = self._last_marks.get(name)
        if last is not None and last[0] == pos and last[1] == reach and last[2] is marks:
            return last[3]
        seen = self._landmarks_near(pos, reach)
        self._last_marks[name] = (pos, reach, marks, seen)
        return seen

    def _landmarks_near(self, pos: Position, reach: int) -> tuple[SeenLandmark, ...]:
        """Landmarks within `reach` cells (Chebyshev), nearest first then by name."""
        marks = self.world.landmarks
        if marks is not self._marks_source or reach > self._marks_reach:
            self._index_landmarks(marks, reach)
        size = self._mark_bucket
        px, py = pos.x, pos.y
        found = []
        for mark in self._marks.get((px // size, py // size), ()):
            there = mark.position
            dx, dy = abs(there.x - px), abs(there.y - py)
            if dx <= reach and dy <= reach:
                found.append(SeenLandmark(
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

    def _inventory(self, agent: Agent) -> tuple[tuple[tuple[str, int], ...], str]:
        """(sorted (type, count) pairs, the sentence), reused while the inventory is the same."""
        inv = agent.inventory
        held = self._inventories.get(agent.name)
        if held is not None and held[0] is inv:
            return held[1], held[2]
        counts = dict(inv.stacks)
        for item in inv.items:
            counts[item.item_type] = counts.get(item.item_type, 0) + 1
        pairs = tuple(sorted(counts.items()))
        sentence = (
            "You carry: " + ", ".join(f"{kind} ({n})" for kind, n in pairs) + "."
            if pairs else "You carry nothing."
        )
        self._inventories[agent.name] = (inv, pairs, sentence)
        return pairs, sentence

    # ------------------------------------------------------------------ conversation

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
        seen.append(SeenObject(
            kind=obj.object_type,
            position=there,
            direction=direction_towards(me, there),
            distance=abs(there.x - me.x) + abs(there.y - me.y),
            label=label,
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
