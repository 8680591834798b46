"""The list of every agent: name, state, position and what it did last, one row each.

A world can hold a thousand agents and a new snapshot comes after every tick, so the
list is a Line API widget: it keeps one finished `Strip` per row and draws only the
rows on screen. `show` compares each row's shown fields with the last snapshot's and
drops only the strips of rows that changed; a tick where a handful of agents moved
rebuilds a handful of strips, not a thousand.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from observe.snapshot import AgentView, WorldSnapshot
from observe.tui.messages import AgentChosen
from observe.tui.safe_text import clean, short
from observe.tui.widgets.lines import DirectLines

STATE_STYLES = {
    "awake": Style(color="green"),
    "asleep": Style(color="blue", dim=True),
    "journeying": Style(color="yellow"),
    "talking": Style(color="magenta"),
}
_NAME = Style(bold=True)
_DIM = Style(dim=True)
_STATE_WIDTH = 10
_POSITION_WIDTH = 11
_NAME_LIMITS = (4, 16)
"""A name column at least this narrow and at most this wide (longer names are cut)."""

RowKey = tuple[str, int, int, str, str]
"""What a row shows: name, x, y, state, activity. Equal keys draw equal rows."""


def row_key(view: AgentView) -> RowKey:
    return (view.name, view.position.x, view.position.y, view.state, view.activity)


class AgentList(DirectLines, ScrollView, can_focus=True, inherit_bindings=False):
    """Every agent, one row each, with a selection the person moves.

    Up/down or k/j move the selection, page up/down move it a screen at a time, enter
    posts `AgentChosen(name)`, a click selects the row clicked and posts it too.
    Home and End are left to the app (End returns from a past tick to the live one).
    """

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("enter", "choose", "Details"),
    ]

    COMPONENT_CLASSES = {"agent-list--cursor"}

    DEFAULT_CSS = """
    AgentList {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
    }
    AgentList > .agent-list--cursor {
        background: $secondary 30%;
    }
    AgentList:focus > .agent-list--cursor {
        background: $accent 50%;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._views: list[AgentView] = []
        self._keys: list[RowKey] = []
        self._index: dict[str, int] = {}
        self._strips: dict[int, Strip] = {}
        self._strip_width = -1
        self._strips_base: object = None
        """The widget style the kept strips were made with."""
        self._name_width = _NAME_LIMITS[0]
        self._cursor = 0
        self.rebuilt_rows = 0
        """How many rows the last `show` had to draw anew (kept for tests and timing)."""

    # ------------------------------------------------------------------ reading

    @property
    def selected(self) -> str | None:
        """The name of the selected agent, None when there are no agents."""
        if 0 <= self._cursor < len(self._views):
            return self._views[self._cursor].name
        return None

    @property
    def names(self) -> list[str]:
        return [view.name for view in self._views]

    # ------------------------------------------------------------------ updating

    def show(self, snapshot: WorldSnapshot) -> None:
        """Show the snapshot's agents, keeping the selection on the same name."""
        chosen = self.selected
        views = list(snapshot.agents)
        keys = [row_key(view) for view in views]
        longest = max((len(view.name) for view in views), default=0)
        name_width = min(max(longest, _NAME_LIMITS[0]), _NAME_LIMITS[1])
        if name_width != self._name_width:
            self._name_width = name_width
            self._strips.clear()
        old = self._keys
        changed = [i for i, key in enumerate(keys) if i >= len(old) or old[i] != key]
        for i in changed:
            self._strips.pop(i, None)
        for i in range(len(keys), len(old)):
            self._strips.pop(i, None)
        self.rebuilt_rows = len(changed)
        self._views, self._keys = views, keys
        self._index = {view.name: i for i, view in enumerate(views)}
        if chosen is not None and chosen in self._index:
            self._cursor = self._index[chosen]
        else:
            self._cursor = min(self._cursor, max(0, len(views) - 1))
        if len(views) != len(old):
            self.virtual_size = Size(0, len(views))
            self.refresh()
        elif self._any_on_screen(changed):
            self.refresh()

    def select(self, name: str) -> bool:
        """Select `name` and scroll it into view (posts nothing); False if unknown."""
        row = self._index.get(name)
        if row is None:
            return False
        self._move_to(row)
        return True

    # ------------------------------------------------------------------ actions

    def action_cursor_up(self) -> None:
        self._move_to(self._cursor - 1)

    def action_cursor_down(self) -> None:
        self._move_to(self._cursor + 1)

    def action_page_up(self) -> None:
        self._move_to(self._cursor - max(1, self.scrollable_content_region.height))

    def action_page_down(self) -> None:
        self._move_to(self._cursor + max(1, self.scrollable_content_region.height))

    def action_choose(self) -> None:
        name = self.selected
        if name is not None:
            self.post_message(AgentChosen(name))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = offset.y + self.scroll_offset.y
        if 0 <= row < len(self._views):
            self.focus()
            self._move_to(row)
            self.post_message(AgentChosen(self._views[row].name))

    # ------------------------------------------------------------------ drawing

    def render_line(self, y: int) -> Strip:
        return self._line_renderer()(y)

    def _line_renderer(self) -> Callable[[int], Strip]:
        """Line y of the list, for one paint: width, scroll offset and styles are
        looked up once, not once a line."""
        width = self.scrollable_content_region.width
        if width != self._strip_width:  # new width: every cut is different
            self._strip_width = width
            self._strips.clear()
        top = self.scroll_offset.y
        views, strips, cursor = self._views, self._strips, self._cursor
        base = self._base_style()
        if base is not self._strips_base:  # kept strips carry the old widget style
            self._strips_base = base
            strips.clear()

        def line_at(y: int) -> Strip:
            row = top + y
            if not 0 <= row < len(views):
                return Strip.blank(width, base)
            if row == cursor:  # before the base style, so the cursor's background wins
                strip = self._row_strip(views[row], width)
                cursor_style = self.get_component_rich_style("agent-list--cursor")
                return strip.apply_style(cursor_style).apply_style(base)
            strip = strips.get(row)
            if strip is None:
                strip = strips[row] = self._row_strip(views[row], width).apply_style(base)
            return strip

        return line_at

    def _row_strip(self, view: AgentView, width: int) -> Strip:
        """One agent's row, cut to `width` cells; every agent-written part cleaned."""
        name = short(clean(view.name), self._name_width).ljust(self._name_width)
        state = view.state
        where = f"({view.position.x},{view.position.y})".rjust(_POSITION_WIDTH)
        room = width - (self._name_width + _STATE_WIDTH + _POSITION_WIDTH + 3)
        activity = short(clean(view.activity), room) if room > 0 else ""
        segments = [
            Segment(name, _NAME),
            Segment(" "),
            Segment(short(state, _STATE_WIDTH).ljust(_STATE_WIDTH),
                    STATE_STYLES.get(state, _DIM)),
            Segment(where, _DIM),
            Segment("  "),
            Segment(activity),
        ]
        return Strip(segments).crop_extend(0, width, None)

    def _move_to(self, row: int) -> None:
        if not self._views:
            return
        row = max(0, min(row, len(self._views) - 1))
        before, self._cursor = self._cursor, row
        self.refresh_line(before)
        self.refresh_line(row)
        height = self.scrollable_content_region.height
        top = self.scroll_offset.y
        if row < top:
            self.scroll_to(y=row, animate=False, force=True)
        elif height and row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, force=True)

    def _any_on_screen(self, rows: list[int]) -> bool:
        top = self.scroll_offset.y
        bottom = top + self.scrollable_content_region.height
        return any(top <= row < bottom for row in rows)
