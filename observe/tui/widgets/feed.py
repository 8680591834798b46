"""The event feed: every narrated line, newest at the bottom, one screen row each.

A busy tick narrates a thousand actions, so the feed is a Line API widget over a
bounded deque of `FeedLine` values: adding lines only appends to the deque and grows
the scroll height, and a line becomes a `Strip` only when it is on screen (and is then
kept in a small cache, so scrolling back and forth does not redo the work).

Each line gets a sequence number when it arrives. Strips are cached by that number,
so the cache stays right when old lines fall off the front, and a filtered view (one
agent's lines) can tell which of its lines the full feed has already let go.

A line cursor (up/down on the focused feed, or a click on a line) chooses one line,
shown highlighted; `p` opens the stored turn behind it (observe/tui/app.py). While a
line is chosen the feed stays where it is as lines come; escape lets the line go and
follows the newest again.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from observe.snapshot import FeedLine
from observe.tui.safe_text import clean
from observe.tui.widgets.lines import DirectLines

_TICK = Style(dim=True)
_AGENT = Style(bold=True, color="cyan")
_KIND = Style(italic=True, color="bright_black")
_FAILED = Style(color="red")
_FAILED_MARK = Style(bold=True, color="red")
_HAPPENING = Style(color="yellow")
_HINT = Style(dim=True, italic=True)
_CURSOR = Style(bgcolor="#3a4a6a", bold=True)
"""The chosen line's highlight (under the line's own colours)."""

Entry = tuple[int, FeedLine]
"""A line and its sequence number (counting every line ever added)."""


def line_segments(line: FeedLine) -> list[Segment]:
    """One feed line as styled segments: "t123 Ember walk north: narration", failures
    marked with ✗ and shown red, happenings without an agent in yellow. An action says
    its deed (tool and arguments) before the narration, which may open by setting the
    scene: on a narrow screen what was done is what stays. All cleaned."""
    segments = []
    if not line.ok:
        segments.append(Segment("✗ ", _FAILED_MARK))
    segments.append(Segment(f"t{line.tick} ", _TICK))
    if line.agent is not None:
        segments.append(Segment(clean(line.agent) + " ", _AGENT))
    deed = line.deed.removeprefix("✗ ") if line.deed else line.kind
    segments.append(Segment(clean(deed) + ": ", _KIND))
    style = _FAILED if not line.ok else (_HAPPENING if line.agent is None else None)
    segments.append(Segment(" ".join(clean(line.text).split()), style))
    return segments


def cut(segments: list[Segment], width: int) -> Strip:
    """Segments as a strip exactly `width` cells wide, ending in "…" when cut short."""
    strip = Strip(segments)
    if strip.cell_length <= width:
        return strip.extend_cell_length(width)
    if width <= 1:
        return strip.crop(0, width)
    shortened = strip.crop(0, width - 1)
    return Strip.join([shortened, Strip([Segment("…", _TICK)])]).extend_cell_length(width)


class EventFeed(DirectLines, ScrollView, can_focus=True, inherit_bindings=False):
    """A bounded, filterable log of feed lines that follows the newest line.

    It follows the end while the view is at the end and no line is chosen; once the
    person scrolls up or chooses a line it stays where they put it, and follows again
    when they scroll back to the bottom (or let the line go). Up/down choose the line
    before or after (the first press, the newest line in view), a click chooses the
    line clicked, escape lets it go; page up/down scroll. Home and End are left to the
    app.
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Earlier line"),
        Binding("down,j", "cursor(1)", "Later line", show=False),
        Binding("escape", "let_go", "Newest line", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
    ]

    DEFAULT_CSS = """
    EventFeed {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
    }
    """

    def __init__(self, max_lines: int = 5000, *, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_lines = max_lines
        self._all: deque[Entry] = deque(maxlen=max_lines)
        self._filtered: deque[Entry] | None = None
        self._agent: str | None = None
        self._next = 0
        self._strips: LRUCache[int, Strip] = LRUCache(512)
        self._strips_base: object = None
        """The widget style the kept strips were made with."""
        self._strip_width = -1
        self.cursor: int | None = None
        """The chosen line's sequence number, or None (no line chosen)."""

    # ------------------------------------------------------------------ reading

    @property
    def filter(self) -> str | None:
        """The agent whose lines alone are shown, or None for everyone's."""
        return self._agent

    @property
    def shown(self) -> list[FeedLine]:
        """The lines the feed shows now (after the filter), oldest first."""
        return [line for _, line in self._view()]

    @property
    def chosen(self) -> FeedLine | None:
        """The line the cursor is on, if one is chosen and still shown."""
        row = self._cursor_row()
        return None if row is None else self._view()[row][1]

    @property
    def chosen_row(self) -> int | None:
        """The chosen line's place among `shown` (0 the oldest), or None."""
        return self._cursor_row()

    # ------------------------------------------------------------------ the cursor

    def choose_row(self, row: int) -> None:
        """Choose the `row`th shown line (clamped to the lines there are) and bring
        it into view."""
        view = self._view()
        if not view:
            self.cursor = None
            return
        row = max(0, min(row, len(view) - 1))
        self.cursor = view[row][0]
        top, height = self.scroll_offset.y, max(1, self.scrollable_content_region.height)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True, force=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True, force=True)
        self.refresh()

    def action_cursor(self, by: int) -> None:
        row = self._cursor_row()
        if row is None:  # the first press: the newest line in view
            bottom = self.scroll_offset.y + max(1, self.scrollable_content_region.height) - 1
            self.choose_row(min(bottom, len(self._view()) - 1))
        else:
            self.choose_row(row + by)

    def action_let_go(self) -> None:
        """No line chosen: follow the newest again."""
        if self.cursor is not None:
            self.cursor = None
            self._resized(True)

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self._view()):
            self.choose_row(row)

    def _cursor_row(self) -> int | None:
        cursor = self.cursor
        if cursor is None:
            return None
        view = self._view()
        row = bisect_left(view, cursor, key=lambda entry: entry[0])
        return row if row < len(view) and view[row][0] == cursor else None

    # ------------------------------------------------------------------ updating

    def add(self, lines: Iterable[FeedLine]) -> None:
        """Append lines; the oldest fall off past `max_lines`."""
        follow = self._at_end() and self.cursor is None
        start = self._next
        entries = list(enumerate(lines, start))
        if not entries:
            return
        self._next = entries[-1][0] + 1
        self._all.extend(entries)
        if self._filtered is not None:
            agent = self._agent
            self._filtered.extend(e for e in entries if e[1].agent == agent)
            oldest = self._all[0][0]
            while self._filtered and self._filtered[0][0] < oldest:
                self._filtered.popleft()
        if self.cursor is not None and self._cursor_row() is None:
            self.cursor = None  # the chosen line fell off the front: follow again
            follow = True
        self._resized(follow)

    def replace(self, lines: Iterable[FeedLine]) -> None:
        """Show only `lines` (a past tick's, say), under the same filter, from the end."""
        self._all.clear()
        self._strips.clear()
        self.cursor = None
        self._filtered = None if self._agent is None else deque()
        self.add(lines)
        self._resized(True)

    def set_filter(self, agent: str | None) -> None:
        """Show only `agent`'s lines (None: everyone's), scrolled to the newest."""
        self._agent = agent
        if agent is None:
            self._filtered = None
        else:
            self._filtered = deque(e for e in self._all if e[1].agent == agent)
        if self._cursor_row() is None:
            self.cursor = None
        self._resized(self.cursor is None)
        if self.cursor is not None:
            self.choose_row(self._cursor_row() or 0)

    def clear(self) -> None:
        self.replace(())

    # ------------------------------------------------------------------ drawing

    def render_line(self, y: int) -> Strip:
        return self._line_renderer()(y)

    def _line_renderer(self) -> Callable[[int], Strip]:
        """Line y of the feed, for one paint: width, scroll offset and style are looked
        up once, not once a line."""
        width = self.scrollable_content_region.width
        if width != self._strip_width:
            self._strip_width = width
            self._strips.clear()
        view = self._view()
        top = self.scroll_offset.y
        strips = self._strips
        base = self._base_style()
        if base is not self._strips_base:  # kept strips carry the old widget style
            self._strips_base = base
            strips.clear()
        if not view:
            hint = self._empty_hint(width, base)
            return lambda y: hint if y == 0 else Strip.blank(width, base)
        cursor = self.cursor

        def line_at(y: int) -> Strip:
            row = top + y
            if not 0 <= row < len(view):
                return Strip.blank(width, base)
            number, line = view[row]
            if number == cursor:  # drawn each time: one line, not worth keeping
                return cut(line_segments(line), width).apply_style(base + _CURSOR)
            strip = strips.get(number)
            if strip is None:
                strip = cut(line_segments(line), width).apply_style(base)
                strips[number] = strip
            return strip

        return line_at

    def _empty_hint(self, width: int, base: Style) -> Strip:
        """What an empty feed says, so it is never a blank box nobody can place."""
        if self._agent is None:
            words = "Events: what agents do appears here as ticks run (t steps, space runs)."
        else:
            words = f"Events: nothing from {clean(self._agent)} yet (e changes the filter)."
        return cut([Segment(words, _HINT)], width).apply_style(base)

    def _view(self) -> deque[Entry]:
        return self._all if self._filtered is None else self._filtered

    def _at_end(self) -> bool:
        return self.is_vertical_scroll_end

    def _resized(self, follow: bool) -> None:
        self.virtual_size = Size(0, len(self._view()))
        if follow:
            # forced: the scrollbar that would allow the scroll appears only at the
            # next layout, and waiting for it lets a second add think it is scrolled up
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.refresh()
