"""GridView: the world's cells, drawn a row at a time, with a cursor.

The grid is a Line API widget (`ScrollView.render_line`): the world is 250,000 cells, so
a widget per cell is out of the question, and even one row of the world (500 cells) is
more than is ever on screen. A row is built only for the columns in view, as a handful
of segments (runs of cells that share a style), and kept in a small LRU cache keyed by
(zoom, glyph set, row, first column, width, the row's generation, cursor column). A new
snapshot bumps the generation of the rows it says changed (`changed_rows`), so their old
strips can never be found again, and asks to repaint only those of them on screen; every
other row is served from the cache. Scrolling builds only the rows or columns newly in
view.

Every cell is two terminal columns (see `observe.tui.glyphs`), and the view only ever
scrolls by whole cells: `validate_scroll_x`/`_y` round each scroll position to a cell
boundary, in the direction it was moving (so a one-column nudge still moves a cell), and
the virtual size has one cell's slack so the last cell can always be scrolled fully in.

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

`GridView.ViewportChanged(x0, y0, x1, y1)` is posted whenever the cells in view change
(scrolling by any means, a resize), for the minimap's outline; `visible_cells()` gives
the same rectangle on demand.

Input: arrows and h/j/k/l move the cursor, page up/down (and ctrl+page up/down, H/L,
ctrl+left/right sideways) move it a screenful, a click puts it on the cell clicked
(and, on an agent, chooses it: `AgentChosen`); every move posts `CellChosen`. A new
size centres the view on the cursor again. The view scrolls to keep the cursor in sight. A cursor
moved by the person (keys, click, `move_cursor`, `centre_on`) ends `follow`, which
otherwise centres on its agent after every `show()`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from observe.snapshot import WorldSnapshot
from observe.tui.glyphs import ASCII, EMOJI, GlyphSet, Part
from observe.tui.messages import AgentChosen, CellChosen
from observe.tui.widgets.lines import DirectLines


@dataclass(frozen=True, slots=True)
class Zoom:
    """A way of laying cells out on screen: terminal columns and rows per cell."""

    name: str
    across: int
    down: int


WORLD = Zoom("world", 2, 1)
CLOSE = Zoom("close", 3, 2)
ZOOMS = {WORLD.name: WORLD, CLOSE.name: CLOSE}

CACHE_SIZE = 2048
"""Strips kept: a 200-row screen in two zooms and both glyph sets, with room to scroll."""


@dataclass(frozen=True, slots=True)
class _Thing:
    """What an object or landmark puts in its cell: its glyph and its one-column mark."""

    part: Part
    mark: Part


_NOTHING: dict[int, _Thing] = {}


def _snap(value: float, current: float, step: int, limit: float) -> int:
    """`value` on a multiple of `step` within [0, limit], rounded the way it moves."""
    top = int(limit) // step * step
    value = min(max(value, 0), top)
    cells = math.ceil(value / step) if value > current else math.floor(value / step)
    return min(cells * step, top)


class GridView(DirectLines, ScrollView, can_focus=True, inherit_bindings=False):
    """The world's cells with a cursor; see the module docstring."""

    DEFAULT_CSS = """
    GridView {
        scrollbar-size: 0 0;
    }
    """

    BINDINGS = [
        Binding("up,k", "move(0, -1)", "Cursor up", show=False),
        Binding("down,j", "move(0, 1)", "Cursor down", show=False),
        Binding("left,h", "move(-1, 0)", "Cursor left", show=False),
        Binding("right,l", "move(1, 0)", "Cursor right", show=False),
        Binding("pageup", "page(0, -1)", "A screen up", show=False),
        Binding("pagedown", "page(0, 1)", "A screen down", show=False),
        Binding("ctrl+pageup,H,ctrl+left", "page(-1, 0)", "A screen left", show=False),
        Binding("ctrl+pagedown,L,ctrl+right", "page(1, 0)", "A screen right", show=False),
        Binding("z", "toggle_zoom", "Zoom"),
    ]

    @dataclass
    class ViewportChanged(Message):
        """The cells in view changed: x0 <= x < x1, y0 <= y < y1 (for the minimap)."""

        x0: int
        y0: int
        x1: int
        y1: int

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        self._zoom = WORLD
        super().__init__(name=name, id=id, classes=classes)
        self._snapshot: WorldSnapshot | None = None
        self._glyphs: GlyphSet = EMOJI
        self._cursor = (0, 0)
        self._following: str | None = None
        self._highlight: str | None = None
        self._centre_pending = False
        self._generation: list[int] = []
        self._cache: OrderedDict[tuple[object, ...], Strip] = OrderedDict()
        self._landmarks: dict[int, dict[int, _Thing]] = {}
        self._east = self._south = np.zeros((0, 0), dtype=bool)
        self._walled_rows = np.zeros(0, dtype=bool)
        self._wall_source: tuple[np.ndarray, ...] = ()
        self._landmarks_glyphs: GlyphSet | None = None
        self._viewport_sent: tuple[int, int, int, int] | None = None
        self.rows_built = 0
        """Strips built so far (cache misses): for tests and measurements."""

    # ------------------------------------------------------------------ public API

    @property
    def cursor(self) -> tuple[int, int]:
        return self._cursor

    @property
    def following(self) -> str | None:
        return self._following

    @property
    def highlight(self) -> str | None:
        return self._highlight

    @property
    def glyphs(self) -> GlyphSet:
        """The symbols the grid draws with now (emoji or ASCII), for the legend."""
        return self._glyphs

    @property
    def ascii_mode(self) -> bool:
        return self._glyphs is ASCII

    @property
    def zoom(self) -> str:
        """"world" or "close"."""
        return self._zoom.name

    @property
    def snapshot(self) -> WorldSnapshot | None:
        return self._snapshot

    def visible_cells(self) -> tuple[int, int, int, int]:
        """The cells at least partly in view: x0 <= x < x1, y0 <= y < y1 (what
        `Minimap.set_viewport` takes)."""
        snap = self._snapshot
        if snap is None:
            return (0, 0, 0, 0)
        zoom, region = self._zoom, self.scrollable_content_region
        sx, sy = self.scroll_offset
        x0, y0 = sx // zoom.across, sy // zoom.down
        x1 = min(snap.width, -(-(sx + region.width) // zoom.across))
        y1 = min(snap.height, -(-(sy + region.height) // zoom.down))
        return (x0, y0, max(x0, x1), max(y0, y1))

    def show(self, snapshot: WorldSnapshot) -> None:
        """Draw `snapshot`: rebuild only the rows it changed and repaint those on screen."""
        before = self._snapshot
        self._snapshot = snapshot
        changed = snapshot.changed_rows
        if before is None or (before.width, before.height) != (snapshot.width, snapshot.height):
            self._generation = [0] * snapshot.height
            changed = None
            self._update_virtual_size()
            cx, cy = self._cursor
            self._cursor = (min(cx, snapshot.width - 1), min(cy, snapshot.height - 1))
        self._index_walls(snapshot)
        # Agents and objects come indexed by row with the snapshot (made on the
        # engine's thread); landmarks are few and all but never change.
        if before is None or snapshot.landmarks != before.landmarks:
            self._index_landmarks(snapshot)
        if changed is None:
            self._cache.clear()
        else:
            generation = self._generation
            for row in changed:
                if 0 <= row < snapshot.height:
                    generation[row] += 1
        if self._following is not None:
            view = snapshot.agent(self._following)
            if view is not None:
                self._place_cursor(view.position.x, view.position.y, centre=True)
        self._repaint_rows(changed)
        self._report_viewport()

    def move_cursor(self, dx: int, dy: int) -> None:
        """Move the cursor by (dx, dy) cells, stopping at the world's edges."""
        x, y = self._cursor
        self._stop_following()
        self._place_cursor(x + dx, y + dy)

    def centre_on(self, x: int, y: int) -> None:
        """Put the cursor on (x, y) (clamped to the world) and centre the view on it."""
        self._stop_following()
        self._place_cursor(x, y, centre=True)

    def follow(self, name: str | None) -> None:
        """Keep the view centred on agent `name` after every `show()`; None stops.
        The person moving the cursor (keys, click, `move_cursor`, `centre_on`) stops it too."""
        if name != self._following:
            self._following = name
            self._restyle()
        snap = self._snapshot
        view = snap.agent(name) if snap is not None and name is not None else None
        if view is not None:
            self._place_cursor(view.position.x, view.position.y, centre=True)

    def set_ascii(self, on: bool) -> None:
        """Draw with the ASCII glyph set (on) or the emoji one."""
        self._glyphs = ASCII if on else EMOJI
        self.refresh()

    def set_highlight(self, name: str | None) -> None:
        """Mark agent `name` as the selected one (None: no mark)."""
        if name != self._highlight:
            self._highlight = name
            self._restyle()

    def set_zoom(self, name: str) -> None:
        """Switch to the "world" or "close" view, keeping the cursor centred."""
        zoom = ZOOMS[name]
        if zoom is self._zoom:
            return
        self._zoom = zoom
        self._update_virtual_size()
        self.refresh()
        if self._snapshot is not None:
            self._place_cursor(*self._cursor, centre=True)

    # ------------------------------------------------------------------ actions

    def action_move(self, dx: int, dy: int) -> None:
        self.move_cursor(dx, dy)

    def action_page(self, dx: int, dy: int) -> None:
        across, down = self._cells_in_view()
        self.move_cursor(dx * across, dy * down)

    def action_toggle_zoom(self) -> None:
        self.set_zoom(CLOSE.name if self._zoom is WORLD else WORLD.name)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        snap = self._snapshot
        if offset is None or snap is None:
            return
        sx, sy = self.scroll_offset
        x, y = (sx + offset.x) // self._zoom.across, (sy + offset.y) // self._zoom.down
        if snap.in_bounds(x, y):
            self._stop_following()
            self._place_cursor(x, y)
            here = snap.agents_at(x, y)
            if here:  # a click on an agent chooses it, as a click in the list does
                self.post_message(AgentChosen(here[0].name))

    def on_resize(self, event: events.Resize) -> None:
        """A new size: the cursor goes back to the middle (a view kept by its top-left
        corner would leave it in a corner after the window shrinks and grows again)."""
        if self._snapshot is None:
            return
        self._place_cursor(*self._cursor, centre=True)
        self._report_viewport()

    # ------------------------------------------------------------------ scrolling

    def validate_scroll_x(self, value: float) -> float:
        return _snap(value, self.scroll_x, self._zoom.across, self.max_scroll_x)

    def validate_scroll_target_x(self, value: float) -> float:
        return _snap(value, self.scroll_target_x, self._zoom.across, self.max_scroll_x)

    def validate_scroll_y(self, value: float) -> float:
        return _snap(value, self.scroll_y, self._zoom.down, self.max_scroll_y)

    def validate_scroll_target_y(self, value: float) -> float:
        return _snap(value, self.scroll_target_y, self._zoom.down, self.max_scroll_y)

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_x(old_value, new_value)
        self._report_viewport()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._report_viewport()

    def _report_viewport(self) -> None:
        viewport = self.visible_cells()
        if viewport != self._viewport_sent and self._snapshot is not None:
            self._viewport_sent = viewport
            self.post_message(self.ViewportChanged(*viewport))

    def _update_virtual_size(self) -> None:
        snap, zoom = self._snapshot, self._zoom
        if snap is None:
            return
        # One cell's slack less a column: the last scroll position on a cell boundary
        # then still shows the last cell whole, whatever the viewport's width.
        self.virtual_size = Size(snap.width * zoom.across + zoom.across - 1,
                                 snap.height * zoom.down + zoom.down - 1)

    def _cells_in_view(self) -> tuple[int, int]:
        """Cells wholly in view across and down (at least one each)."""
        region, zoom = self.scrollable_content_region, self._zoom
        # In the close view a cell needs its two columns, not its edge slot after it.
        across = (region.width + zoom.across - 2) // zoom.across
        down = (region.height + zoom.down - 1) // zoom.down
        return max(1, across), max(1, down)

    def _place_cursor(self, x: int, y: int, *, centre: bool = False) -> None:
        """Move the cursor (clamped to the world), scroll it into view, post CellChosen."""
        snap = self._snapshot
        if snap is None:
            return
        x = min(max(x, 0), snap.width - 1)
        y = min(max(y, 0), snap.height - 1)
        old = self._cursor
        self._cursor = (x, y)
        region = self.scrollable_content_region
        if region.width <= 0 or region.height <= 0:
            self._centre_pending = self._centre_pending or centre
        else:
            self._centre_pending = False
            self._scroll_to_cell(x, y, centre)
        if old != self._cursor:
            self._repaint_rows(frozenset((old[1], y)))
            self.post_message(CellChosen(x, y))

    def _scroll_to_cell(self, x: int, y: int, centre: bool) -> None:
        snap, zoom = self._snapshot, self._zoom
        assert snap is not None
        across, down = self._cells_in_view()
        sx, sy = self.scroll_offset
        left, top = sx // zoom.across, sy // zoom.down
        if centre:
            left, top = x - across // 2, y - down // 2
        else:
            left = min(max(left, x - across + 1), x)
            top = min(max(top, y - down + 1), y)
        left = min(max(left, 0), max(0, snap.width - across))
        top = min(max(top, 0), max(0, snap.height - down))
        self.scroll_to(left * zoom.across, top * zoom.down, animate=False, force=True)

    def _stop_following(self) -> None:
        if self._following is not None:
            self._following = None
            self._restyle()

    def _restyle(self) -> None:
        """The marked agents changed: every cached strip may show the old mark."""
        self._cache.clear()
        self.refresh()

    def _repaint_rows(self, rows: frozenset[int] | None) -> None:
        """Repaint the screen lines that show world rows `rows` (None: all)."""
        if not self.is_mounted:
            return
        if rows is None:
            self.refresh()
            return
        top = self.scroll_offset.y
        bottom = top + self.scrollable_content_region.height
        lines: set[int] = set()
        if self._zoom is WORLD:
            lines.update(r for r in rows if top <= r < bottom)
        else:  # a row's cells, its edge row, and the edge row above (its corners)
            for r in rows:
                lines.update(v for v in (2 * r - 1, 2 * r, 2 * r + 1) if top <= v < bottom)
        start = count = 0
        for line in sorted(lines):
            if count and line == start + count:
                count += 1
                continue
            if count:
                self._refresh_span(start - top, count)
            start, count = line, 1
        if count:
            self._refresh_span(start - top, count)

    def _refresh_span(self, y: int, count: int) -> None:
        """Repaint `count` lines from screen line y, no wider than the widget.
        (`ScrollView.refresh_lines` marks the whole virtual width, which the screen
        clips only to the parent's region: the panels beside the grid would be
        repainted with it every tick.)"""
        self.refresh(Region(0, y, self.size.width, count))

    # ------------------------------------------------------------------ indexes

    def _index_walls(self, snap: WorldSnapshot) -> None:
        source = (snap.wall_east, snap.wall_south, snap.door_east, snap.door_south)
        if len(self._wall_source) == 4 and all(
                a is b for a, b in zip(source, self._wall_source, strict=True)):
            return
        self._wall_source = source
        self._east = np.asarray(snap.wall_east, dtype=bool) & ~np.asarray(snap.door_east, bool)
        self._south = (np.asarray(snap.wall_south, dtype=bool)
                       & ~np.asarray(snap.door_south, bool))
        self._walled_rows = self._east.any(axis=1) | self._south.any(axis=1)

    def _index_landmarks(self, snap: WorldSnapshot) -> None:
        rows: dict[int, dict[int, _Thing]] = {}
        glyphs = self._glyphs
        for landmark in snap.landmarks:
            pos = landmark.position
            rows.setdefault(pos.y, {})[pos.x] = _Thing(
                glyphs.landmark_part(landmark.kind), glyphs.marks.landmark)
        self._landmarks = rows
        self._landmarks_glyphs = glyphs

    def _things_in(self, snap: WorldSnapshot, row: int) -> dict[int, _Thing]:
        """What objects and landmarks show in `row`, by column: a sign over a placed
        item over a landmark."""
        glyphs = self._glyphs
        things = dict(self._landmarks.get(row, _NOTHING))
        items, signs = snap.item_rows.get(row), snap.sign_rows.get(row)
        if items:
            item = _Thing(glyphs.item, glyphs.marks.item)
            things.update(dict.fromkeys(items, item))
        if signs:
            sign = _Thing(glyphs.sign, glyphs.marks.sign)
            things.update(dict.fromkeys(signs, sign))
        return things

    # ------------------------------------------------------------------ drawing

    def _blank(self, width: int) -> Strip:
        """An empty line (past the world's edge), the same strip every paint until the
        style changes."""
        blanks = getattr(self, "_blanks", None)
        if blanks is None:
            blanks = self._blanks = {}
        strip = blanks.get(width)
        if strip is None:
            strip = blanks[width] = Strip.blank(width, self._base_style())
        return strip

    def notify_style_update(self) -> None:
        self._blanks = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        return self._line_renderer()(y)

    def _line_renderer(self) -> Callable[[int], Strip]:
        """Line y of the view, for one paint: the width, scroll offset, zoom and
        cursor are looked up once, not once a line."""
        snap = self._snapshot
        width = self.scrollable_content_region.width
        sx, sy = self.scroll_offset
        zoom = self._zoom
        if snap is None or width <= 0:
            blank = self._blank(max(width, 0))
            return lambda y: blank
        x0 = sx // zoom.across
        down = zoom.down
        lines = snap.height * down
        generation = self._generation
        cx, cy = self._cursor
        fixed = (zoom.name, self._glyphs.name, x0, width)
        cache = self._cache

        def line_at(y: int) -> Strip:
            line = sy + y
            if line >= lines:
                return self._blank(width)
            row, edge = (line, False) if down == 1 else divmod(line, down)
            below = generation[row + 1] if edge and row + 1 < snap.height else -1
            key = (*fixed, line, generation[row], below,
                   cx if cy == row and not edge else -1)
            strip = cache.get(key)
            if strip is not None:
                cache.move_to_end(key)
                return strip
            strip = self._build(snap, row, edge == 1, x0, width)
            self.rows_built += 1
            cache[key] = strip
            if len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
            return strip

        return line_at

    def _build(self, snap: WorldSnapshot, row: int, edge: bool, x0: int, width: int) -> Strip:
        """One screen line: the cells from x0 that fit in `width` columns (a cell cut
        by the right edge is cut whole-column, a wide glyph becoming a space)."""
        if self._landmarks_glyphs is not self._glyphs:
            self._index_landmarks(snap)
        across = self._zoom.across
        x1 = min(x0 + -(-width // across), snap.width)
        if x1 <= x0:
            return Strip.blank(width, self._base_style())
        codes = snap.terrain[row, x0:x1]
        if self._zoom is WORLD:
            units, specials = self._world_row(snap, row, x0, x1, codes)
        elif edge:
            units, specials = self._edge_row(snap, row, x0, x1, codes)
        else:
            units, specials = self._close_row(snap, row, x0, x1, codes)
        segments = _assemble(codes, units, specials)
        # Every cell takes exactly `across` columns (glyphs.py sees to it), so the
        # length is known without measuring the text.
        length = (x1 - x0) * across
        if length > width:
            _trim(segments, length - width)
            length = width
        strip = Strip(segments, length)
        if length < width:
            strip = strip.extend_cell_length(width, self._base_style())
        return strip

    def _contents(self, snap: WorldSnapshot, row: int, x0: int, x1: int, codes: np.ndarray,
                  things: dict[int, _Thing]) -> dict[int, Part]:
        """The cells of `row` (x0 <= x < x1) that show more than terrain, by index:
        an agent over an object (a sign over a placed item) over a landmark; the
        followed or selected agent marked."""
        glyphs = self._glyphs
        terrain = glyphs.terrain
        shown: dict[int, Part] = {}
        if things:
            for x, thing in things.items():
                if x0 <= x < x1:
                    text, style = thing.part
                    shown[x - x0] = (text, terrain[codes[x - x0]][1] + style)
        agents = snap.agent_rows.get(row)
        if agents:
            marked = {self._highlight, self._following}
            for x, views in agents.items():
                if x0 <= x < x1:
                    names = tuple(v.name for v in views)
                    text, style = glyphs.agent_part(names, views[0].state)
                    style = terrain[codes[x - x0]][1] + style
                    if not marked.isdisjoint(names):
                        style += glyphs.selected
                    shown[x - x0] = (text, style)
        return shown

    def _mark(self, snap: WorldSnapshot, x: int, row: int, code: int,
              things: dict[int, _Thing]) -> Part:
        """The one-column stand-in for what cell (x, row) shows."""
        glyphs = self._glyphs
        ground = glyphs.terrain[code][1]
        agents = snap.agent_rows.get(row)
        if agents and x in agents:
            text, style = glyphs.marks.agent
            names = {v.name for v in agents[x]}
            if self._highlight in names or self._following in names:
                style += glyphs.selected
            return text, ground + style
        if x in things:
            text, style = things[x].mark
            return text, ground + style
        text, style = glyphs.marks.terrain[code]
        return text, ground + style

    def _put_cursor(self, row: int, x0: int, x1: int, codes: np.ndarray,
                    specials: dict[int, list[Part]]) -> None:
        """Add the cursor's style to its cell, if the cursor is in this stretch: the
        whole cell in the world view, the cell but not its edge slot in the close view."""
        cx, cy = self._cursor
        if cy != row or not x0 <= cx < x1:
            return
        i = cx - x0
        cursor = self._glyphs.cursor
        parts = specials.get(i)
        if parts is None:
            part = self._glyphs.terrain[codes[i]]
            parts = [part] if self._zoom is WORLD else [part, (" ", part[1])]
        if self._zoom is WORLD:
            specials[i] = [(text, style + cursor) for text, style in parts]
        else:
            (text, style), *slot = parts
            specials[i] = [(text, style + cursor), *slot]

    def _world_row(self, snap: WorldSnapshot, row: int, x0: int, x1: int,
                   codes: np.ndarray) -> tuple[tuple[Part, ...], dict[int, list[Part]]]:
        """The world view: a cell's walls folded into its own two columns (see the
        module docstring)."""
        glyphs = self._glyphs
        units = glyphs.terrain
        things = self._things_in(snap, row)
        shown = self._contents(snap, row, x0, x1, codes, things)
        specials = {i: [part] for i, part in shown.items()}
        if self._walled_rows[row]:
            n = x1 - x0
            east = self._east[row, x0:x1]
            south = self._south[row, x0:x1]
            south_right = np.zeros(n, dtype=bool)
            right = self._south[row, x0 + 1:x1 + 1]
            south_right[: len(right)] = right
            below = (self._east[row + 1, x0:x1] if row + 1 < snap.height
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
                    first = self._mark(snap, x0 + i, row, code, things)
                specials[i] = [first, (corner, wall_style)]
        self._put_cursor(row, x0, x1, codes, specials)
        return units, specials

    def _close_row(self, snap: WorldSnapshot, row: int, x0: int, x1: int,
                   codes: np.ndarray) -> tuple[tuple[Part, ...], dict[int, list[Part]]]:
        """The close view's cell line: each cell, then its east edge slot ('│' a wall)."""
        glyphs = self._glyphs
        units = self._slot_units(glyphs)
        terrain = glyphs.terrain
        specials = {i: [part, (" ", terrain[codes[i]][1])]
                    for i, part in self._contents(
                        snap, row, x0, x1, codes, self._things_in(snap, row)).items()}
        if self._walled_rows[row]:
            wall = glyphs.walls.vertical
            for i in np.flatnonzero(self._east[row, x0:x1]).tolist():
                ground = terrain[codes[i]][1]
                first = specials[i][0] if i in specials else terrain[codes[i]]
                specials[i] = [first, (wall, ground + glyphs.walls.style)]
        self._put_cursor(row, x0, x1, codes, specials)
        return units, specials

    def _edge_row(self, snap: WorldSnapshot, row: int, x0: int, x1: int,
                  codes: np.ndarray) -> tuple[tuple[Part, ...], dict[int, list[Part]]]:
        """The close view's edge line under `row`: '──' under a cell with a south wall
        and, at each corner, the junction of the walls meeting there (a door: a gap)."""
        glyphs = self._glyphs
        units = tuple((" " * 3, style) for _, style in glyphs.terrain)
        specials: dict[int, list[Part]] = {}
        lower = row + 1 < snap.height
        if not (self._walled_rows[row] or (lower and self._walled_rows[row + 1])):
            return units, specials
        n = x1 - x0
        walls = glyphs.walls
        east = self._east[row, x0:x1]
        below = self._east[row + 1, x0:x1] if lower else np.zeros(n, dtype=bool)
        south = self._south[row, x0:x1]
        south_right = np.zeros(n, dtype=bool)
        right = self._south[row, x0 + 1:x1 + 1]
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
