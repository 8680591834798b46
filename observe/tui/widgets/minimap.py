"""Minimap: the whole world in a small box, with the agents and the grid's view on it.

Each character is an upper half block '▀' whose foreground is one pixel and whose
background the pixel below it, as `hearth --map` draws (observe/worldmap.py), so a box
of w x h characters is a picture of w x 2h pixels. The world is stretched to fill the
box: the app gives the box its shape. Shrinking, a pixel shows the most common terrain
of the cells it covers (ties to the lower code, as in `worldmap.majority_terrain`);
growing (a world smaller than the box), a pixel shows the cell under it.

What it costs: the terrain picture is made once (a few milliseconds for 500 x 500) and
made again only when the box is resized or the snapshot's terrain array is another
object (the snapshot maker shares the array while no terrain changed). A `show()`
copies that picture (a few kilobytes), paints the viewport outline and one bright pixel
per agent with numpy, and compares it with the last picture: only the text rows whose
pixels changed are rebuilt and repainted, each as a few segments (runs of one colour
pair), with the styles kept per colour pair.

A click posts `CentreOn` with the world cell under it (the middle of the cells the
character covers).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from core.terrain import TERRAIN_ORDER
from observe.snapshot import WorldSnapshot
from observe.tui.messages import CentreOn
from observe.worldmap import AGENT_COLOR, PALETTE

HALF_BLOCK = "\u2580"
VIEWPORT_COLOR = (255, 255, 255)


def _packed(rgb: NDArray[np.uint8]) -> NDArray[np.int32]:
    """RGB triples as one int each (0xRRGGBB): cheap to compare and to use as keys."""
    channels = rgb.astype(np.int32)
    return (channels[..., 0] << 16) | (channels[..., 1] << 8) | channels[..., 2]


_PALETTE = _packed(PALETTE)
_AGENT = int(_packed(np.array(AGENT_COLOR, dtype=np.uint8)))
_VIEWPORT = int(_packed(np.array(VIEWPORT_COLOR, dtype=np.uint8)))


class _Axis:
    """How one axis of the world (`cells` long) maps onto `pixels` pixels and back."""

    def __init__(self, cells: int, pixels: int) -> None:
        self.cells, self.pixels = cells, pixels
        self.shrinks = pixels <= cells
        if self.shrinks:
            self.pixel_of = np.arange(cells) * pixels // cells
            index = np.arange(pixels)
            first = np.searchsorted(self.pixel_of, index, side="left")
            last = np.searchsorted(self.pixel_of, index, side="right") - 1
            self.cell_of = (first + last) // 2
        else:
            self.cell_of = np.arange(pixels) * cells // pixels
            self.pixel_of = np.searchsorted(self.cell_of, np.arange(cells), side="left")

    @property
    def groups(self) -> tuple[NDArray[np.int64], int]:
        """Each cell's group for the majority vote, and the number of groups."""
        if self.shrinks:
            return self.pixel_of, self.pixels
        return np.arange(self.cells), self.cells


def terrain_picture(terrain: NDArray[np.integer], columns: int, rows: int,
                    ) -> NDArray[np.int32]:
    """The terrain as `rows` x `columns` packed colours (see the module docstring)."""
    height, width = terrain.shape
    across, down = _Axis(width, columns), _Axis(height, rows)
    col_group, col_groups = across.groups
    row_group, row_groups = down.groups
    kinds = len(TERRAIN_ORDER)
    keys = (row_group[:, None] * col_groups + col_group[None, :]) * kinds + terrain
    counts = np.bincount(keys.ravel(), minlength=row_groups * col_groups * kinds)
    codes = counts.reshape(row_groups, col_groups, kinds).argmax(axis=2)
    if not across.shrinks:
        codes = codes[:, across.cell_of]
    if not down.shrinks:
        codes = codes[down.cell_of, :]
    return _PALETTE[codes]


class Minimap(Widget):
    """The whole world downsampled; see the module docstring."""

    DEFAULT_CSS = """
    Minimap {
        width: 1fr;
        height: 12;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._snapshot: WorldSnapshot | None = None
        self._viewport: tuple[int, int, int, int] | None = None
        self._terrain_source: NDArray[np.integer] | None = None
        self._base: NDArray[np.int32] | None = None
        self._picture: NDArray[np.int32] | None = None
        self._across: _Axis | None = None
        self._down: _Axis | None = None
        self._strips: dict[int, Strip] = {}
        self._styles: dict[int, Style] = {}
        self.terrain_builds = 0
        """Terrain pictures made so far: for tests and measurements."""
        self.rows_built = 0
        """Text rows built so far: for tests and measurements."""

    # ------------------------------------------------------------------ public API

    def show(self, snapshot: WorldSnapshot) -> None:
        """Draw `snapshot`'s terrain and agents (the terrain picture only if it changed)."""
        self._snapshot = snapshot
        self._redraw()

    def set_viewport(self, x0: int, y0: int, x1: int, y1: int) -> None:
        """Outline the cells x0 <= x < x1, y0 <= y < y1 (what the grid shows)."""
        viewport = (x0, y0, x1, y1)
        if viewport != self._viewport:
            self._viewport = viewport
            self._redraw()

    @property
    def viewport(self) -> tuple[int, int, int, int] | None:
        return self._viewport

    def cell_at(self, column: int, row: int) -> tuple[int, int] | None:
        """The world cell under character (column, row) of the box, if any."""
        across, down = self._across, self._down
        if across is None or down is None:
            return None
        if not (0 <= column < across.pixels and 0 <= 2 * row < down.pixels):
            return None
        top = int(down.cell_of[2 * row])
        bottom = int(down.cell_of[min(2 * row + 1, down.pixels - 1)])
        return int(across.cell_of[column]), (top + bottom) // 2

    # ------------------------------------------------------------------ events

    def on_resize(self, event: events.Resize) -> None:
        self._redraw()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        cell = self.cell_at(offset.x, offset.y)
        if cell is not None:
            self.post_message(CentreOn(*cell))

    # ------------------------------------------------------------------ drawing

    def _redraw(self) -> None:
        """Bring the picture up to date and repaint the text rows that changed."""
        snap = self._snapshot
        width, height = self.size
        if snap is None or width <= 0 or height <= 0:
            return
        rows = 2 * height
        if (self._base is None or snap.terrain is not self._terrain_source
                or self._base.shape != (rows, width)):
            self._terrain_source = snap.terrain
            self._base = terrain_picture(snap.terrain, width, rows)
            self._across, self._down = _Axis(snap.width, width), _Axis(snap.height, rows)
            self._picture = None
            self.terrain_builds += 1
        picture = self._base.copy()
        self._paint_viewport(picture)
        self._paint_agents(picture, snap)
        before = self._picture
        self._picture = picture
        if before is None or before.shape != picture.shape:
            self._strips.clear()
            self.refresh()
            return
        changed = np.flatnonzero((picture != before).reshape(height, 2 * width).any(axis=1))
        for row in changed.tolist():
            self._strips.pop(row, None)
            self.refresh(Region(0, row, width, 1))

    def _paint_viewport(self, picture: NDArray[np.int32]) -> None:
        across, down, viewport = self._across, self._down, self._viewport
        if across is None or down is None or viewport is None:
            return
        x0, y0, x1, y1 = viewport
        x0, x1 = max(0, x0), min(across.cells, x1)
        y0, y1 = max(0, y0), min(down.cells, y1)
        if x1 <= x0 or y1 <= y0:
            return
        left, right = int(across.pixel_of[x0]), int(across.pixel_of[x1 - 1])
        top, bottom = int(down.pixel_of[y0]), int(down.pixel_of[y1 - 1])
        picture[top, left:right + 1] = _VIEWPORT
        picture[bottom, left:right + 1] = _VIEWPORT
        picture[top:bottom + 1, left] = _VIEWPORT
        picture[top:bottom + 1, right] = _VIEWPORT

    def _paint_agents(self, picture: NDArray[np.int32], snap: WorldSnapshot) -> None:
        across, down = self._across, self._down
        if across is None or down is None or not snap.agents:
            return
        xs = np.array([v.position.x for v in snap.agents], dtype=np.int64)
        ys = np.array([v.position.y for v in snap.agents], dtype=np.int64)
        inside = (xs >= 0) & (xs < across.cells) & (ys >= 0) & (ys < down.cells)
        picture[down.pixel_of[ys[inside]], across.pixel_of[xs[inside]]] = _AGENT

    def render_line(self, y: int) -> Strip:
        picture = self._picture
        width = self.size.width
        if picture is None or not 0 <= 2 * y < picture.shape[0]:
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(y)
        if strip is None:
            strip = self._build_row(picture, y)
            self._strips[y] = strip
            self.rows_built += 1
        return strip

    def _build_row(self, picture: NDArray[np.int32], y: int) -> Strip:
        """One text row: a segment per run of one (top, bottom) colour pair."""
        top = picture[2 * y].astype(np.int64)
        bottom = picture[2 * y + 1] if 2 * y + 1 < picture.shape[0] else picture[2 * y]
        pairs = (top << 24) | bottom
        cuts = (np.flatnonzero(pairs[1:] != pairs[:-1]) + 1).tolist()
        starts = [0, *cuts]
        ends = [*cuts, len(pairs)]
        segments = [Segment(HALF_BLOCK * (end - start), self._style(pair))
                    for start, end, pair in zip(starts, ends, pairs[starts].tolist(),
                                                strict=True)]
        return Strip(segments, len(pairs))

    def _style(self, pair: int) -> Style:
        """The style for a (top << 24 | bottom) colour pair, made once per pair."""
        style = self._styles.get(pair)
        if style is None:
            top, bottom = pair >> 24, pair & 0xFFFFFF
            style = Style(color=Color.from_rgb(top >> 16, (top >> 8) & 255, top & 255),
                          bgcolor=Color.from_rgb(bottom >> 16, (bottom >> 8) & 255,
                                                 bottom & 255))
            self._styles[pair] = style
        return style
