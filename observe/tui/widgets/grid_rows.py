"""Drawing the grid: one screen line of cells, from a snapshot and a `Look`.

`GridView` (`observe.tui.widgets.grid`) keeps the state (the cursor, the zoom, the
glyph set, who is marked) and answers keys and scrolling, and `GridStrips`
(`grid_strips.py`) keeps the strips drawn; what a line looks like is decided here, by
`RowPainter.line`, from nothing but the snapshot, the indexes built from it, and the
`Look` of one paint. So a line depends only on what its cache key names (and what
clears the cache), and strips can be kept and reused freely.

A line is a handful of segments: each run of one terrain is one segment, broken only
where a cell shows more (an agent, an object, a landmark, a wall, the cursor), so the
work is per run and per special cell, not per cell (`_assemble`).

Walls, two zoom levels. In the agent's own view (adapters/perception.py) walls sit in
slots *between* cells: one column between two cells, one row between two rows, joined
with box-drawing corners, and a door is a gap. Two-column cells side by side leave no
such room, so there are two views, toggled with `z`:

- "world" (the default): one terminal row per cell row, two columns per cell, so the
  most world fits on screen. The between-cells slots are folded into the cells: the
  edge slot east of a cell becomes the cell's right column, the edge slot south of it
  its own row. A cell with a wall on its east side shows it as '│' in its right column,
  a wall along its south side as '──' across it, and the right column holds the corner
  piece where walls meet (the same junctions as the agent's view: a corner is drawn
  wherever a wall of this row reaches it). Each edge is therefore drawn once, on the
  cell west of or above it, never doubled. Where a wall takes a column, the symbol
  gives way to its one-column mark ('@' an agent, '?' a sign, '.' grass...), so an
  agent by a wall is still seen. A door is a gap: its stroke is simply not drawn.
- "close": exactly the agent's view, at double resolution: each cell is two columns
  plus a one-column edge slot, with an edge row under each cell row; walls are
  box-drawing lines between cells, doors gaps. It scrolls by whole cells (3 columns,
  2 rows) and shows a quarter as much world, for looking at buildings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from observe.snapshot import WorldSnapshot
from observe.tui.glyphs import GlyphSet, Part


@dataclass(frozen=True, slots=True)
class Zoom:
    """A way of laying cells out on screen: terminal columns and rows per cell."""

    name: str
    across: int
    down: int


WORLD = Zoom("world", 2, 1)
CLOSE = Zoom("close", 3, 2)
ZOOMS = {WORLD.name: WORLD, CLOSE.name: CLOSE}


@dataclass(frozen=True, slots=True)
class Thing:
    """What an object or landmark puts in its cell: its glyph and its one-column mark."""

    part: Part
    mark: Part


_NOTHING: dict[int, Thing] = {}


@dataclass(frozen=True, slots=True)
class Look:
    """How lines are drawn this paint, besides the snapshot: the zoom, the glyph set,
    the cursor, the marked agents (selected, followed) and the widget's own style
    (for columns past the world's edge)."""

    zoom: Zoom
    glyphs: GlyphSet
    cursor: tuple[int, int]
    highlight: str | None
    following: str | None
    style: Style


class RowPainter:
    """The per-row indexes a line is drawn from, kept between snapshots, and the
    drawing of one line (`line`)."""

    def __init__(self) -> None:
        self.landmarks: dict[int, dict[int, Thing]] = {}
        self.landmarks_glyphs: GlyphSet | None = None
        self.east = self.south = np.zeros((0, 0), dtype=bool)
        """Walls without doors on each cell's east and south sides."""
        self.walled_rows = np.zeros(0, dtype=bool)
        self.wall_source: tuple[np.ndarray, ...] = ()

    def index_walls(self, snap: WorldSnapshot) -> None:
        """Index the snapshot's walls (doors left out), unless they are the same arrays."""
        source = (snap.wall_east, snap.wall_south, snap.door_east, snap.door_south)
        if len(self.wall_source) == 4 and all(
                a is b for a, b in zip(source, self.wall_source, strict=True)):
            return
        self.wall_source = source
        self.east = np.asarray(snap.wall_east, dtype=bool) & ~np.asarray(snap.door_east, bool)
        self.south = (np.asarray(snap.wall_south, dtype=bool)
                      & ~np.asarray(snap.door_south, bool))
        self.walled_rows = self.east.any(axis=1) | self.south.any(axis=1)

    def index_landmarks(self, snap: WorldSnapshot, glyphs: GlyphSet) -> None:
        """Index the snapshot's landmarks by row and column, drawn with `glyphs`."""
        rows: dict[int, dict[int, Thing]] = {}
        for landmark in snap.landmarks:
            pos = landmark.position
            rows.setdefault(pos.y, {})[pos.x] = Thing(
                glyphs.landmark_part(landmark.kind), glyphs.marks.landmark)
        self.landmarks = rows
        self.landmarks_glyphs = glyphs

    def _things_in(self, snap: WorldSnapshot, row: int, glyphs: GlyphSet) -> dict[int, Thing]:
        """What objects and landmarks show in `row`, by column: a sign over a placed
        item over a landmark."""
        things = dict(self.landmarks.get(row, _NOTHING))
        items, signs = snap.item_rows.get(row), snap.sign_rows.get(row)
        if items:
            item = Thing(glyphs.item, glyphs.marks.item)
            things.update(dict.fromkeys(items, item))
        if signs:
            sign = Thing(glyphs.sign, glyphs.marks.sign)
            things.update(dict.fromkeys(signs, sign))
        return things

    def line(self, snap: WorldSnapshot, row: int, edge: bool, x0: int, width: int,
             look: Look) -> Strip:
        """One screen line: the cells from x0 that fit in `width` columns (a cell cut
        by the right edge is cut whole-column, a wide glyph becoming a space)."""
        if self.landmarks_glyphs is not look.glyphs:
            self.index_landmarks(snap, look.glyphs)
        across = look.zoom.across
        x1 = min(x0 + -(-width // across), snap.width)
        if x1 <= x0:
            return Strip.blank(width, look.style)
        codes = snap.terrain[row, x0:x1]
        if look.zoom is WORLD:
            units, specials = self._world_row(snap, row, x0, x1, codes, look)
        elif edge:
            units, specials = self._edge_row(snap, row, x0, x1, codes, look.glyphs)
        else:
            units, specials = self._close_row(snap, row, x0, x1, codes, look)
        segments = _assemble(codes, units, specials)
        # Every cell takes exactly `across` columns (glyphs.py sees to it), so the
        # length is known without measuring the text.
        length = (x1 - x0) * across
        if length > width:
            _trim(segments, length - width)
            length = width
        strip = Strip(segments, length)
        if length < width:
            strip = strip.extend_cell_length(width, look.style)
        return strip

    @staticmethod
    def _contents(snap: WorldSnapshot, row: int, x0: int, x1: int, codes: np.ndarray,
                  things: dict[int, Thing], look: Look) -> dict[int, Part]:
        """The cells of `row` (x0 <= x < x1) that show more than terrain, by index:
        an agent over an object (a sign over a placed item) over a landmark; the
        followed or selected agent marked."""
        glyphs = look.glyphs
        terrain = glyphs.terrain
        shown: dict[int, Part] = {}
        if things:
            for x, thing in things.items():
                if x0 <= x < x1:
                    text, style = thing.part
                    shown[x - x0] = (text, terrain[codes[x - x0]][1] + style)
        agents = snap.agent_rows.get(row)
        if agents:
            marked = {look.highlight, look.following}
            for x, views in agents.items():
                if x0 <= x < x1:
                    names = tuple(v.name for v in views)
                    text, style = glyphs.agent_part(names, views[0].state)
                    style = terrain[codes[x - x0]][1] + style
                    if not marked.isdisjoint(names):
                        style += glyphs.selected
                    shown[x - x0] = (text, style)
        return shown

    @staticmethod
    def _mark(snap: WorldSnapshot, x: int, row: int, code: int, things: dict[int, Thing],
              look: Look) -> Part:
        """The one-column stand-in for what cell (x, row) shows."""
        glyphs = look.glyphs
        ground = glyphs.terrain[code][1]
        agents = snap.agent_rows.get(row)
        if agents and x in agents:
            text, style = glyphs.marks.agent
            names = {v.name for v in agents[x]}
            if look.highlight in names or look.following in names:
                style += glyphs.selected
            return text, ground + style
        if x in things:
            text, style = things[x].mark
            return text, ground + style
        text, style = glyphs.marks.terrain[code]
        return text, ground + style

    @staticmethod
    def _put_cursor(row: int, x0: int, x1: int, codes: np.ndarray,
                    specials: dict[int, list[Part]], look: Look) -> None:
        """Add the cursor's style to its cell, if the cursor is in this stretch: the
        whole cell in the world view, the cell but not its edge slot in the close view."""
        cx, cy = look.cursor
        if cy != row or not x0 <= cx < x1:
            return
        i = cx - x0
        cursor = look.glyphs.cursor
        parts = specials.get(i)
        if parts is None:
            part = look.glyphs.terrain[codes[i]]
            parts = [part] if look.zoom is WORLD else [part, (" ", part[1])]
        if look.zoom is WORLD:
            specials[i] = [(text, style + cursor) for text, style in parts]
        else:
            (text, style), *slot = parts
            specials[i] = [(text, style + cursor), *slot]

    def _world_row(self, snap: WorldSnapshot, row: int, x0: int, x1: int, codes: np.ndarray,
                   look: Look) -> tuple[tuple[Part, ...], dict[int, list[Part]]]:
        """The world view: a cell's walls folded into its own two columns (see the
        module docstring)."""
        glyphs = look.glyphs
        units = glyphs.terrain
        things = self._things_in(snap, row, glyphs)
        shown = self._contents(snap, row, x0, x1, codes, things, look)
        specials = {i: [part] for i, part in shown.items()}
        if self.walled_rows[row]:
            n = x1 - x0
            east = self.east[row, x0:x1]
            south = self.south[row, x0:x1]
            south_right = np.zeros(n, dtype=bool)
            right = self.south[row, x0 + 1:x1 + 1]
            south_right[: len(right)] = right
            below = (self.east[row + 1, x0:x1] if row + 1 < snap.height
                     else np.zeros(n, dtype=bool))
            walls = glyphs.walls
            for i in np.flatnonzero(east | south | south_right).tolist():
                code = int(codes[i])
                wall_style = units[code][1] + walls.style
                corner = walls.junction(bool(east[i]), bool(below[i]), bool(south[i]),
                                        bool(south_right[i]))
                if south[i] and i not in shown:
                    first: Part = (walls.horizontal, wall_style)
                else:  # what the cell holds outranks the stroke under it
                    first = self._mark(snap, x0 + i, row, code, things, look)
                specials[i] = [first, (corner, wall_style)]
        self._put_cursor(row, x0, x1, codes, specials, look)
        return units, specials

    def _close_row(self, snap: WorldSnapshot, row: int, x0: int, x1: int, codes: np.ndarray,
                   look: Look) -> tuple[tuple[Part, ...], dict[int, list[Part]]]:
        """The close view's cell line: each cell, then its east edge slot ('│' a wall)."""
        glyphs = look.glyphs
        units = self._slot_units(glyphs)
        terrain = glyphs.terrain
        specials = {i: [part, (" ", terrain[codes[i]][1])]
                    for i, part in self._contents(
                        snap, row, x0, x1, codes, self._things_in(snap, row, glyphs), look).items()}
        if self.walled_rows[row]:
            wall = glyphs.walls.vertical
            for i in np.flatnonzero(self.east[row, x0:x1]).tolist():
                ground = terrain[codes[i]][1]
                first = specials[i][0] if i in specials else terrain[codes[i]]
                specials[i] = [first, (wall, ground + glyphs.walls.style)]
        self._put_cursor(row, x0, x1, codes, specials, look)
        return units, specials

    def _edge_row(self, snap: WorldSnapshot, row: int, x0: int, x1: int, codes: np.ndarray,
                  glyphs: GlyphSet) -> tuple[tuple[Part, ...], dict[int, list[Part]]]:
        """The close view's edge line under `row`: '──' under a cell with a south wall
        and, at each corner, the junction of the walls meeting there (a door: a gap)."""
        units = tuple((" " * 3, style) for _, style in glyphs.terrain)
        specials: dict[int, list[Part]] = {}
        lower = row + 1 < snap.height
        if not (self.walled_rows[row] or (lower and self.walled_rows[row + 1])):
            return units, specials
        n = x1 - x0
        walls = glyphs.walls
        east = self.east[row, x0:x1]
        below = self.east[row + 1, x0:x1] if lower else np.zeros(n, dtype=bool)
        south = self.south[row, x0:x1]
        south_right = np.zeros(n, dtype=bool)
        right = self.south[row, x0 + 1:x1 + 1]
        south_right[: len(right)] = right
        for i in np.flatnonzero(east | below | south | south_right).tolist():
            ground = units[codes[i]][1]
            wall_style = ground + walls.style
            under = (walls.horizontal * 2, wall_style) if south[i] else ("  ", ground)
            corner = walls.junction(bool(east[i]), bool(below[i]), bool(south[i]),
                                    bool(south_right[i]))
            specials[i] = [under, (corner, wall_style)]
        return units, specials

    @staticmethod
    def _slot_units(glyphs: GlyphSet) -> tuple[Part, ...]:
        """Terrain glyphs with the (empty) edge slot after them, for the close view."""
        return tuple((text + " ", style) for text, style in glyphs.terrain)



def _assemble(codes: np.ndarray, units: tuple[Part, ...],
              specials: dict[int, list[Part]]) -> list[Segment]:
    """A line's segments: each run of one terrain as one segment (its unit repeated),
    broken where a special cell puts its own parts instead. The work is per run and
    per special cell, not per cell."""
    n = len(codes)
    cuts = (np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist()
    starts = [0, *cuts]
    ends = [*cuts, n]
    kinds = codes[starts].tolist()
    order = sorted(specials)
    count = len(order)
    j = 0
    segments: list[Segment] = []
    for start, end, kind in zip(starts, ends, kinds, strict=True):
        text, style = units[kind]
        at = start
        while j < count and order[j] < end:
            i = order[j]
            j += 1
            if i > at:
                segments.append(Segment(text * (i - at), style))
            segments.extend(Segment(t, s) for t, s in specials[i])
            at = i + 1
        if end > at:
            segments.append(Segment(text * (end - at), style))
    return segments


def _trim(segments: list[Segment], columns: int) -> None:
    """Drop `columns` terminal columns from the end of `segments`, in place (half of a
    wide glyph becomes a space)."""
    while columns > 0 and segments:
        text, style, _ = segments.pop()
        length = cell_len(text)
        if length > columns:
            segments.append(Segment(set_cell_size(text, length - columns), style))
        columns -= length
