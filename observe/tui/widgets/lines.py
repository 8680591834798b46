"""Handing a Line API widget's strips to the screen as they are, without redoing them.

Textual's own `Widget.render_lines` passes every line a widget draws through its styles
cache, which wraps the line in the widget's padding, border, outline, tint and opacity
and then runs the app's line filters over it. When a line is dirty (and on a list that
scrolls, after every new line all of them are) that is a new `Strip` per line, and the
filters run again over every segment of it, even though the widget's own cache handed
back the very same strip as last time. For a widget that has none of those decorations
the result is the widget's strip, filtered: `DirectLines.render_lines` returns exactly
that, applying the filters through the strip's own filter cache, so a strip the widget
kept costs nothing to show again. A widget that does have decorations (a theme or a
stylesheet may give it some) goes the usual way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.style import Style as RichStyle
from textual.color import Color
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


def _undecorated(widget: Widget) -> bool:
    """True if the styles cache would add nothing to the widget's lines."""
    styles = widget.styles
    if any(styles.padding) or styles.tint.a or styles.text_opacity != 1.0:
        return False
    if any(edge for edge, _ in styles.border) or any(edge for edge, _ in styles.outline):
        return False
    if styles.has_rule("hatch") and styles.hatch != "none":
        return False
    return widget.opacity == 1.0 and not widget._border_title and not widget._border_subtitle


if TYPE_CHECKING:
    _Base = Widget
else:  # a plain mixin: Textual follows a widget's first base for its CSS
    _Base = object


class DirectLines(_Base):
    """Mixin for Line API widgets (first among the bases): their `render_line`
    strips go to the screen unchanged but for the app's filters (see the module
    docstring). A strip narrower or wider than the widget (a scroll view's strips
    stop at its scrollbar) is padded or cut to its width, as Textual does. A widget
    whose `render_line` works out the same things for every line (its width, its
    scroll offset) can give `_line_renderer` a function that works them out once per
    paint."""

    def _line_renderer(self) -> Callable[[int], Strip]:
        """What draws line y of the widget this paint (by default `render_line`)."""
        return self.render_line

    def _base_style(self) -> RichStyle:
        """The widget's own style, worked out once until the styles change: asking
        `rich_style` walks every ancestor, and every line drawn asks."""
        style = getattr(self, "_style_cache", None)
        if style is None:
            style = self._style_cache = self.rich_style
        return style

    def _backgrounds(self) -> tuple[Color, Color]:
        """`background_colors` (which walks every ancestor too), kept like the style."""
        colors = getattr(self, "_background_cache", None)
        if colors is None:
            colors = self._background_cache = self.background_colors
        return colors

    def notify_style_update(self) -> None:
        self._style_cache = None
        self._background_cache = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        if not _undecorated(self):
            return super().render_lines(crop)
        width, height = self.size
        base_background, background = self._backgrounds()
        filters = self.get_line_filters()
        render_line = self._line_renderer()
        # The line is padded (or cut) to the widget's width, scrollbars included: they
        # are drawn over it, as with Textual's own rendering.
        pad = Style(background=base_background + background).rich_style
        strips: list[Strip] = []
        add = strips.append
        for y in crop.line_range:
            strip = render_line(y) if y < height else Strip.blank(width, pad)
            if strip.cell_length != width:
                strip = strip.adjust_cell_length(width, pad)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            add(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips
