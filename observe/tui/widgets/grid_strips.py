"""The grid's drawn lines, kept: which strips are still good after a snapshot.

A line of the grid is a pure function of what it shows (`observe.tui.widgets.grid_rows`
draws it), so `GridStrips` keeps the strips it drew in a small LRU cache keyed by
(zoom, glyph set, first column, width, screen line, the row's generation, cursor
column). A new snapshot bumps the generation of the rows it says changed
(`changed_rows`), so their old strips can never be found again; every other row is
served from the cache, and scrolling builds only the rows or columns newly in view.
What the key leaves out (the marked agents, a new glyph set's landmarks) clears it.

`line_spans` says which screen lines show given world rows, so that `GridView` asks to
repaint only those of a snapshot's changed rows that are on screen.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable

from textual.strip import Strip

from observe.snapshot import WorldSnapshot
from observe.tui.widgets.grid_rows import WORLD, Look, RowPainter, Zoom

CACHE_SIZE = 2048
"""Strips kept: a 200-row screen in two zooms and both glyph sets, with room to scroll."""


class GridStrips:
    """The strips drawn so far, each world row's generation, and the painter."""

    def __init__(self) -> None:
        self.painter = RowPainter()
        self._generation: list[int] = []
        self._cache: OrderedDict[tuple[object, ...], Strip] = OrderedDict()
        self.built = 0
        """Strips built so far (cache misses): for tests and measurements."""

    def reset(self, height: int) -> None:
        """A world of a new size: every row starts again at generation 0."""
        self._generation = [0] * height

    def clear(self) -> None:
        """Forget every strip (the snapshot named no rows, or the marks changed)."""
        self._cache.clear()

    def changed(self, rows: Iterable[int], height: int) -> None:
        """Rows whose drawing changed: their kept strips are never found again."""
        generation = self._generation
        for row in rows:
            if 0 <= row < height:
                generation[row] += 1

    def renderer(self, snap: WorldSnapshot, look: Look, x0: int, sy: int, width: int,
                 blank: Callable[[int], Strip]) -> Callable[[int], Strip]:
        """Screen line y of a view scrolled to column x0 and line sy, `width` columns
        wide, for one paint (`blank(width)` past the world's last row)."""
        down = look.zoom.down
        lines = snap.height * down
        generation = self._generation
        cx, cy = look.cursor
        fixed = (look.zoom.name, look.glyphs.name, x0, width)
        cache = self._cache
        draw = self.painter.line

        def line_at(y: int) -> Strip:
            line = sy + y
            if line >= lines:
                return blank(width)
            row, edge = (line, False) if down == 1 else divmod(line, down)
            below = generation[row + 1] if edge and row + 1 < snap.height else -1
            key = (*fixed, line, generation[row], below,
                   cx if cy == row and not edge else -1)
            strip = cache.get(key)
            if strip is not None:
                cache.move_to_end(key)
                return strip
            strip = draw(snap, row, edge == 1, x0, width, look)
            self.built += 1
            cache[key] = strip
            if len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
            return strip

        return line_at


def line_spans(rows: Iterable[int], zoom: Zoom, top: int,
               bottom: int) -> list[tuple[int, int]]:
    """The screen lines (top <= line < bottom) that show world rows `rows`, as runs
    of (first line, count) from `top`."""
    lines: set[int] = set()
    if zoom is WORLD:
        lines.update(r for r in rows if top <= r < bottom)
    else:  # a row's cells, its edge row, and the edge row above (its corners)
        for r in rows:
            lines.update(v for v in (2 * r - 1, 2 * r, 2 * r + 1) if top <= v < bottom)
    spans: list[tuple[int, int]] = []
    start = count = 0
    for line in sorted(lines):
        if count and line == start + count:
            count += 1
            continue
        if count:
            spans.append((start - top, count))
        start, count = line, 1
    if count:
        spans.append((start - top, count))
    return spans
