"""GridView: the world's cells, drawn a row at a time, with a cursor.

The grid is a Line API widget (`ScrollView.render_line`): the world is 250,000 cells, so
a widget per cell is out of the question, and even one row of the world (500 cells) is
more than is ever on screen. A row is built only for the columns in view, as a handful
of segments (runs of cells that share a style), and kept (`grid_strips.GridStrips`)
until a snapshot says the row changed; a new snapshot repaints only those of its
changed rows that are on screen.

Every cell is two terminal columns (see `observe.tui.glyphs`), and the view only ever
scrolls by whole cells: `validate_scroll_x`/`_y` round each scroll position to a cell
boundary, in the direction it was moving (so a one-column nudge still moves a cell), and
the virtual size has one cell's slack so the last cell can always be scrolled fully in.

What a line shows, in either zoom ("world" and "close", toggled with `z`), is drawn by
`observe.tui.widgets.grid_rows` from the snapshot and the `Look` of one paint; this
module holds the widget's state, its keys, scrolling and messages.

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
from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from observe.snapshot import WorldSnapshot
from observe.tui.glyphs import ASCII, EMOJI, GlyphSet
from observe.tui.messages import AgentChosen, CellChosen
from observe.tui.widgets.grid_rows import CLOSE, WORLD, ZOOMS, Look
from observe.tui.widgets.grid_strips import GridStrips, line_spans
from observe.tui.widgets.lines import DirectLines


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
        self._strips = GridStrips()
        """The strips drawn and kept, and the indexes they are drawn from."""
        self._viewport_sent: tuple[int, int, int, int] | None = None

    # ------------------------------------------------------------------ public API

    @property
    def rows_built(self) -> int:
        """Strips built so far (cache misses): for tests and measurements."""
        return self._strips.built

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
            self._strips.reset(snapshot.height)
            changed = None
            self._update_virtual_size()
            cx, cy = self._cursor
            self._cursor = (min(cx, snapshot.width - 1), min(cy, snapshot.height - 1))
        self._strips.painter.index_walls(snapshot)
        # Agents and objects come indexed by row with the snapshot (made on the
        # engine's thread); landmarks are few and all but never change.
        if before is None or snapshot.landmarks != before.landmarks:
            self._strips.painter.index_landmarks(snapshot, self._glyphs)
        if changed is None:
            self._strips.clear()
        else:
            self._strips.changed(changed, snapshot.height)
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
        self._strips.clear()
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
        for y, count in line_spans(rows, self._zoom, top, bottom):
            self._refresh_span(y, count)

    def _refresh_span(self, y: int, count: int) -> None:
        """Repaint `count` lines from screen line y, no wider than the widget.
        (`ScrollView.refresh_lines` marks the whole virtual width, which the screen
        clips only to the parent's region: the panels beside the grid would be
        repainted with it every tick.)"""
        self.refresh(Region(0, y, self.size.width, count))

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
        look = Look(zoom, self._glyphs, self._cursor, self._highlight, self._following,
                    self._base_style())
        return self._strips.renderer(snap, look, sx // zoom.across, sy, width, self._blank)
