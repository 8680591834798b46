"""The words of a perception: the map with its key, the four steps around, the nearest
ground of each kind, landmarks farther off, and the short prose about where one stands.

Everything here is made from values the builder already found (the window's cells,
the agents, objects, landmarks and places in it) plus the world's wall and door
arrays, so the text states the same facts as the structured `Perception` and only
costs anything when a mind reads words (`PerceptionBuilder.build(text=True)`).

What the text promises, checked by an independent reader in the tests
(`tests/unit/adapters/perception_reader.py`), which rebuilds the window from the text
alone and compares it with the world:

- **The map.** North is up. A header names the window's exact x and y ranges. Every
  cell is a two-column slot; between two cells of a row sits one column, `│` for a
  wall without a door; between two rows sits a line of walls (`─` and the
  box-drawing corners), left out when it holds no wall, so no line of the map is
  blank. A door is a dashed stretch of wall (`╎` between two cells of a row, `╌╌`
  between two rows) that joins no corner. Where the vision square reaches past the world,
  one row or column of `▓▓` marks the world's edge.
- **Marks.** `@` is the viewer; other agents are capital letters (A, B, ... nearest
  first; 👤 past Z), landmarks digits (1-9, then ▲), named places small letters
  (a-z, then ⚑), then 📜 a sign and ✨ a placed item. A cell shows its first mark in
  that order, else its terrain. The key under the map names every marked thing with
  its exact offset, its coordinates and the ground under it, so nothing a mark hides
  is lost.
- **Offsets** are exact: "2 north, 1 west" (north or south first), "here".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

from numpy import count_nonzero

from core.agent import Journey
from core.conversation import Invitation
from core.objects import PlacedItem
from core.perception import SeenAgent, SeenCell, SeenLandmark, SeenObject, SeenPlace
from core.terrain import OBJECT_EMOJI, SELF_EMOJI, TERRAIN_EMOJI, TERRAIN_ORDER, Terrain
from core.types import Direction, Position
from services.agent_service import AgentService
from services.conversation_service import ConversationContext, ConversationService
from services.world_service import WorldService

# ---------------------------------------------------------------------- grid symbols


def display_width(symbol: str) -> int:
    """Terminal columns a symbol takes: 2 for wide or emoji-presented characters, else 1."""
    if "\ufe0f" in symbol:
        return 2
    return 2 if any(unicodedata.east_asian_width(c) in "WF" for c in symbol) else 1


def _slot(symbol: str) -> str:
    """A symbol padded to a two-column cell slot."""
    return symbol + " " * (2 - display_width(symbol))


TERRAIN_SLOTS: tuple[str, ...] = tuple(_slot(TERRAIN_EMOJI[t]) for t in TERRAIN_ORDER)
SELF_SLOT = _slot(SELF_EMOJI)
EDGE_SLOT = "▓▓"
"""Beyond the world's edge (two columns: "▓" is one)."""
AGENT_MARKS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LANDMARK_MARKS = "123456789"
PLACE_MARKS = "abcdefghijklmnopqrstuvwxyz"
MORE_AGENTS, MORE_LANDMARKS, MORE_PLACES = "👤", "▲", "⚑"
"""The marks once the letters or digits run out (the key still names each)."""
OBJECT_SLOTS = {kind: _slot(symbol) for kind, symbol in OBJECT_EMOJI.items()}
OBJECT_RANK = {"sign": 0, "placed_item": 1}
"""Which object shows when a cell holds several: a sign before a placed item."""

_WALL_SLOT = "─" * 2
_DOOR_SLOT = "╌" * 2
_DOOR_BETWEEN = "╎"
"""A door: a dashed stretch of wall (it joins no corner)."""


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


# ---------------------------------------------------------------------- words for places


def offset_words(dx: int, dy: int) -> str:
    """An exact offset: "2 north, 1 west", "3 east", "here"."""
    parts = []
    if dy:
        parts.append(f"{-dy} north" if dy < 0 else f"{dy} south")
    if dx:
        parts.append(f"{-dx} west" if dx < 0 else f"{dx} east")
    return ", ".join(parts) or "here"


def _where(me: Position, there: Position) -> str:
    return f"{offset_words(there.x - me.x, there.y - me.y)}, at ({there.x}, {there.y})"


def and_words(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def object_phrase(obj: SeenObject) -> str:
    if obj.kind == "sign":
        return "a sign"
    if obj.label and obj.label[0].isdigit():
        return f"a pile of {obj.label}"
    return f"a {obj.label or obj.kind}"


def agent_state(agent: SeenAgent) -> str:
    if agent.is_sleeping:
        return "asleep"
    return "talking" if agent.in_conversation else ""


# ---------------------------------------------------------------------- the view


@dataclass(frozen=True, slots=True)
class Window:
    """The vision window and what the builder found in it."""

    me: Position
    radius: int
    night: bool
    x0: int
    y0: int
    x1: int
    y1: int
    cells: Sequence[SeenCell]
    agents: Sequence[SeenAgent]
    objects: Sequence[SeenObject]
    landmarks: Sequence[SeenLandmark]
    places: Sequence[SeenPlace]

    def cell(self, x: int, y: int) -> SeenCell:
        return self.cells[(y - self.y0) * (self.x1 - self.x0) + x - self.x0]

    def holds(self, pos: Position) -> bool:
        return self.x0 <= pos.x < self.x1 and self.y0 <= pos.y < self.y1


def view_text(world: WorldService, w: Window) -> tuple[str, str, str]:
    """(grid_view, visible_agents_text, surroundings_text) of one window.

    grid_view is the header, the map and the key of every marked thing but agents;
    visible_agents_text the key of the agents (it follows the map); surroundings_text
    the four steps around, the nearest ground of each kind and the landmarks beyond
    the view."""
    me = w.me
    marks: dict[tuple[int, int], str] = {}
    """(x, y) -> the mark drawn there: the first written wins."""
    key: list[str] = []
    agent_lines: list[str] = []
    drawn = (me.x, me.y)
    marks[drawn] = SELF_SLOT
    for i, a in enumerate(w.agents):
        mark = AGENT_MARKS[i] if i < len(AGENT_MARKS) else MORE_AGENTS
        state = agent_state(a)
        name = f"{a.name} ({state})" if state else str(a.name)
        agent_lines.append(f"{mark} {name}: " + _thing_where(w, a.position, "here with you"))
        marks.setdefault((a.position.x, a.position.y), _slot(mark))
    seen_marks = [m for m in w.landmarks if w.holds(m.position)]
    for i, m in enumerate(seen_marks):
        mark = LANDMARK_MARKS[i] if i < len(LANDMARK_MARKS) else MORE_LANDMARKS
        key.append(f"{mark} {m.name} (landmark): " + _thing_where(w, m.position))
        marks.setdefault((m.position.x, m.position.y), _slot(mark))
    for i, p in enumerate(w.places):
        mark = PLACE_MARKS[i] if i < len(PLACE_MARKS) else MORE_PLACES
        key.append(f"{mark} {p.name} (named place): " + _thing_where(w, p.position))
        marks.setdefault((p.position.x, p.position.y), _slot(mark))
    for rank in (0, 1):
        for obj in w.objects:
            if OBJECT_RANK.get(obj.kind, 1) != rank:
                continue
            slot = OBJECT_SLOTS.get(obj.kind, OBJECT_SLOTS["placed_item"])
            key.append(f"{slot.strip()} {object_phrase(obj)}: " + _thing_where(w, obj.position))
            marks.setdefault((obj.position.x, obj.position.y), slot)
    grid = "\n".join([_header(world, w), _map(world, w, marks), *key])
    agents_text = "\n".join(agent_lines) if agent_lines else "Nobody else is in sight."
    return grid, agents_text, _surroundings(world, w)


def _thing_where(w: Window, there: Position, here: str = "here") -> str:
    if there == w.me:
        return here + "."
    terrain = w.cell(there.x, there.y).terrain.value
    return f"{_where(w.me, there)}, on {terrain}."


def _edges(world: WorldService, w: Window) -> tuple[bool, bool, bool, bool]:
    """Whether the world's edge falls inside the vision square: north, east, south, west."""
    me, r = w.me, w.radius
    return me.y - r < 0, me.x + r >= world.width, me.y + r >= world.height, me.x - r < 0


_SIDES = ("north", "east", "south", "west")


def _header(world: WorldService, w: Window) -> str:
    cells = "cell" if w.radius == 1 else "cells"
    text = (f"Map, north at the top: by {'night' if w.night else 'day'} you see {w.radius} "
            f"{cells} each way; columns x {w.x0} to {w.x1 - 1} from west to east, rows y "
            f"{w.y0} to {w.y1 - 1} from north to south.")
    ends = [side for side, edge in zip(_SIDES, _edges(world, w), strict=True) if edge]
    if ends:
        text += f" {EDGE_SLOT} is the world's edge, to the {and_words(ends)}."
    return text


def _map(world: WorldService, w: Window, marks: dict[tuple[int, int], str]) -> str:
    x0, y0, x1, y1 = w.x0, w.y0, w.x1, w.y1
    terrain_slot = TERRAIN_SLOTS.__getitem__
    slots = [list(map(terrain_slot, row)) for row in world.codes[y0:y1, x0:x1].tolist()]
    for (x, y), slot in marks.items():
        slots[y - y0][x - x0] = slot
    north, east, south, west = _edges(world, w)
    before = EDGE_SLOT + " " if west else ""
    after = " " + EDGE_SLOT if east else ""
    columns = x1 - x0
    border = " ".join([EDGE_SLOT] * (columns + west + east))
    if not (count_nonzero(world.wall_east[y0:y1, x0:x1 - 1])
            or count_nonzero(world.wall_south[y0:y1 - 1, x0:x1])):  # the common case
        lines = [before + " ".join(row) + after for row in slots]
    else:
        lines = _walled(world, w, slots, before, after)
    if north:
        lines.insert(0, border)
    if south:
        lines.append(border)
    return "\n".join(lines)


def _walled(world: WorldService, w: Window, slots: list[list[str]], before: str,
            after: str) -> list[str]:
    """The map's lines where the window holds walls: a line of walls between two rows
    only where it holds one. The same facts as has_wall/has_door, read a window at a
    time from the edge arrays (DESIGN "Walls are one fact")."""
    window = (slice(w.y0, w.y1), slice(w.x0, w.x1))
    east_door = world.door_east[window]
    south_door = world.door_south[window]
    east = (world.wall_east[window] & ~east_door).tolist()
    south = (world.wall_south[window] & ~south_door).tolist()
    east_door, south_door = east_door.tolist(), south_door.tolist()
    columns = w.x1 - w.x0
    lines = []
    for j, row in enumerate(slots):
        line = [before, row[0]]
        for i in range(1, columns):
            line.append("│" if east[j][i - 1] else _DOOR_BETWEEN if east_door[j][i - 1] else " ")
            line.append(row[i])
        line.append(after)
        lines.append("".join(line))
        if j == len(slots) - 1:
            break
        doors = south_door[j]
        edge = [_WALL_SLOT if south[j][0] else _DOOR_SLOT if doors[0] else "  "]
        for i in range(1, columns):
            edge.append(_JUNCTIONS[
                (east[j][i - 1], east[j + 1][i - 1], south[j][i - 1], south[j][i])
            ])
            edge.append(_WALL_SLOT if south[j][i] else _DOOR_SLOT if doors[i] else "  ")
        walls = "".join(edge)
        if walls.strip():  # a line without a wall is left out: no line of the map is blank
            lines.append(before + walls + after)
    return lines


_STEPS = ((Direction.NORTH, 0, -1), (Direction.EAST, 1, 0), (Direction.SOUTH, 0, 1),
          (Direction.WEST, -1, 0))


def _surroundings(world: WorldService, w: Window) -> str:
    me = w.me
    px, py = me.x, me.y
    width, height = world.width, world.height
    lines = []
    for way, dx, dy in _STEPS:
        x, y = px + dx, py + dy
        if not (0 <= x < width and 0 <= y < height):
            lines.append(f"One step {way.value}: the world's edge; nobody goes that way.")
            continue
        if w.x0 <= x < w.x1 and w.y0 <= y < w.y1:
            cell = w.cell(x, y)
            terrain, passable = cell.terrain, cell.passable
        else:  # a window of radius 0
            terrain = world.terrain_at(Position(x, y))
            passable = world.is_passable(Position(x, y))
        # The edge between the two cells: east of the western one, south of the northern
        # (the arrays has_wall and has_door read, read straight).
        if dy:
            ey = py if dy > 0 else y
            wall, door = world.wall_south[ey, px], world.door_south[ey, px]
        else:
            ex = px if dx > 0 else x
            wall, door = world.wall_east[py, ex], world.door_east[py, ex]
        if wall and not door:
            verdict = "a wall without a door stands in the way"
            if not passable:
                verdict += ", and the cell cannot be entered"
        elif wall:
            verdict = ("through a door in a wall, you can step there" if passable
                       else "a door in a wall leads there, but the cell cannot be entered")
        else:
            verdict = "you can step there" if passable else "it cannot be entered"
        lines.append(f"One step {way.value}, ({x}, {y}): {terrain.value}; {verdict}.")
    nearest = _nearest_ground(w)
    if nearest:
        lines.append("Nearest of each ground in view: " + "; ".join(
            f"{terrain.value} {_where(me, there)}" for terrain, there in nearest) + ".")
    far = [m for m in w.landmarks if not w.holds(m.position)]
    if far:
        lines.append("Landmarks beyond your view: " + "; ".join(
            f"{m.name}, {_where(me, m.position)}" for m in far) + ".")
    return "\n".join(lines)


_DISTANCES: dict[tuple[int, int, int, int], tuple[int, ...]] = {}
"""(viewer's column, row, columns, rows) -> each cell's Manhattan distance from the
viewer, row by row: one per shape of window (a handful, more at the world's edges)."""


def _nearest_ground(w: Window) -> list[tuple[Terrain, Position]]:
    """Each terrain in view but the one underfoot with its nearest cell (the first in
    row order among the nearest), nearest first then by name."""
    me = w.me
    mx, my, columns, rows = me.x - w.x0, me.y - w.y0, w.x1 - w.x0, w.y1 - w.y0
    shape = (mx, my, columns, rows)
    distances = _DISTANCES.get(shape)
    if distances is None:
        if len(_DISTANCES) > 4096:  # many radii in one process (tests): stay bounded
            _DISTANCES.clear()
        distances = _DISTANCES[shape] = tuple(
            abs(i - mx) + abs(j - my) for j in range(rows) for i in range(columns))
    here = w.cells[my * columns + mx].terrain
    best: dict[Terrain, tuple[int, SeenCell]] = {}
    for cell, distance in zip(w.cells, distances, strict=True):
        terrain = cell.terrain
        if terrain is here:
            continue
        known = best.get(terrain)
        if known is None or distance < known[0]:
            best[terrain] = (distance, cell)
    ranked = sorted(best.items(), key=lambda kv: (kv[1][0], kv[0].value))
    return [(terrain, cell.position) for terrain, (_, cell) in ranked]


# ---------------------------------------------------------------------- prose


@dataclass(frozen=True, slots=True)
class Feature:
    """One thing worth saying about where the agent stands: the narrative is made from
    these alone (kept apart from the wording so a narrator can be given the list)."""

    kind: str
    """gatherable, shelter or place."""
    what: str
    direction: Direction = Direction.DOWN
    distance: int = 0
    detail: str = ""


def narrate(features: Sequence[Feature]) -> str:
    """The template narrative: what is special about the cell underfoot, in plain
    sentences, or "" when nothing is (the ground itself is said with the position)."""
    sentences = []
    for f in features:
        if f.kind == "gatherable":
            sentences.append(f"{f.what[:1].upper()}{f.what[1:]} can be gathered here.")
        elif f.kind == "shelter":
            sentences.append("You are inside a shelter"
                             + (f" called {f.what}." if f.what else "."))
    here = [f.what for f in features if f.kind == "place"]
    if here:
        sentences.append(f"This place is called {and_words(here)}.")
    return " ".join(sentences)


def describe_places(places: Sequence[SeenPlace]) -> list[Feature]:
    return [Feature("place", p.name) for p in places if p.distance == 0]


def journey_text(journey: Journey | None) -> str | None:
    if journey is None:
        return None
    steps = journey.remaining
    return (f"Travelling to ({journey.destination.x}, {journey.destination.y}), "
            f"{steps} step{'' if steps == 1 else 's'} to go.")


def describe_conversation(context: ConversationContext) -> str:
    """Who the agent is talking with, each turn it has not seen yet, who left since, and
    (`context.ended`) that the conversation ended under it: "Ember left; the conversation
    ended." (adapters/perception.py asks for it while `has_farewell`). One that ended
    under it before it was drawn into this one (`context.earlier`) is told first."""
    if context.earlier is not None:
        return describe_conversation(context.earlier) + "\n" + describe_conversation(
            replace(context, earlier=None))
    conv = context.conversation
    privacy = f"a {conv.privacy} conversation" if conv is not None else "a conversation"
    left = f"{and_words(list(context.left))} left" if context.left else ""
    if context.ended:  # it ended under the agent: what it had not heard, then the end
        text = f"You were in {privacy}."
        end = (left + "; the conversation ended.") if left else "The conversation ended."
    else:
        text = f"You are in {privacy} with {and_words(list(context.others))}."
        end = left + "." if left else ""
    if not context.unseen_turns:
        if context.ended:
            return f"{text} {end}"
        return text + " Nothing new has been said since your last turn." + (
            f" {end}" if end else "")
    lines = [text, "Since your last turn:"]
    for turn in context.unseen_turns:
        speaker = "You" if turn.speaker == context.agent else turn.speaker
        message = turn.message.replace("\n", "\n    ")
        lines.append(f"  {speaker}: {message}")
    if end:
        lines.append(end)
    return "\n".join(lines)


def describe_invitation(invitation: Invitation, tick: int, talk: ConversationService,
                        agents: AgentService) -> str:
    """The invitation and what accepting it would do, or why accepting would fail
    now: the checks of `ConversationService.accept_invite`, asked without acting."""
    inviter, privacy = invitation.inviter, invitation.privacy
    left = invitation.expires_at_tick - tick
    lapse = ("It lapses after this tick." if left <= 1
             else f"It lapses in {left} ticks.")
    target = None
    why = ""
    if talk.is_talking(invitation.invitee):
        why = "you are already in a conversation; leave it first (leave_conversation)"
    elif agents.get_agent(inviter) is None:
        why = f"{inviter} no longer lives here"
    elif invitation.conversation_id is not None:
        target = talk.get_conversation(invitation.conversation_id)
        if target is None or not target.is_active:
            why = f"the conversation {inviter} invited you to has ended"
        elif inviter not in target.participants:
            why = f"{inviter} has left the conversation they invited you to"
    else:
        target = talk.get_conversation_for_agent(inviter)
        if target is not None and target.privacy is not privacy:
            why = (f"{inviter} has since begun a {target.privacy} conversation, and "
                   f"this invitation was to a {privacy} one")
    if why:
        return (f"{inviter} invited you to a {privacy} conversation, but accepting "
                f"would fail now: {why}. You may decline it (decline_invite). {lapse}")
    if target is None:
        what = f"start a {privacy} conversation between you and {inviter}"
    else:
        others = sorted(n for n in target.participants if n != invitation.invitee)
        what = (f"join {inviter}'s {privacy} conversation, with "
                f"{and_words(others)} in it")
    return (f"{inviter} invites you to talk. Accepting (accept_invite) would {what}; "
            f"or decline it (decline_invite). {lapse}")


def pile_label(obj: PlacedItem) -> str:
    return f"{obj.quantity} {obj.resource}" if obj.resource else obj.label
