"""The header: which tick, what time and weather, whether the engine runs, its speed
while ticks come, the spend, and where Claude speaks for someone the spend's rate and
which rate limit paced the world.

One line when the column is wide enough; in a narrow one (an 80x24 terminal) it wraps
between its parts onto up to three lines, so the run state, speed and spend are never
cut off the end (the spend's rate and pace are left out before anything is cut). It is
rebuilt whole on every snapshot: one short line costs nothing to redo, and a header
that only patched parts of itself could show a tick from one snapshot next to the
weather of another. When the person is looking at a past tick the line says so
first, in another colour, so nobody mistakes an old picture for the live world.
"""

from __future__ import annotations

from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from observe.api import RunState
from observe.snapshot import Pace, Spending, WorldSnapshot
from observe.tui.safe_text import clean, literal
from observe.tui.widgets.lines import DirectLines
from services.budget import spend_rates

WEATHER_SYMBOLS = {"clear": "☀", "cloudy": "☁", "rainy": "☂", "foggy": "≋"}
"""One narrow symbol per weather word (narrow, so the line's width is predictable)."""


def money(dollars: float) -> str:
    """Dollars with cents, or with four decimals while the spend is under a dollar
    (a run of cheap turns would otherwise show "$0.00" for a long time)."""
    if dollars == 0 or dollars >= 1:
        return f"${dollars:,.2f}"
    return f"${dollars:.4f}"


def rate_money(dollars: float) -> str:
    """A rate in dollars: cents, or four places below a cent."""
    return f"${dollars:,.2f}" if dollars >= 0.01 or dollars == 0 else f"${dollars:.4f}"


def spend_rate_words(spent: float, seconds: float, agent_ticks: int,
                     ticks_per_day: int) -> list[str]:
    """The spend's rate, compact, as the header shows it after the spend: per hour of
    running ("$0.45/h", once a second has run) and per agent-day ("$0.38/agent-day":
    one agent living one in-world day, `ticks_per_day` of its turns, once one turn
    was lived). The long form is services/budget.py `spend_rate`."""
    per_hour, per_day = spend_rates(spent, seconds, agent_ticks, ticks_per_day)
    words = []
    if per_hour is not None:
        words.append(f"{rate_money(per_hour)}/h")
    if per_day is not None:
        words.append(f"{rate_money(per_day)}/agent-day")
    return words


def pace_words(pace: Pace) -> str:
    """Which limit paced a model, short: "paced by claude-sonnet-5-5's output tokens:
    8,000/min"."""
    return f"paced by {pace.model}'s {pace.limit_of}: {pace.per_minute:,.0f}/min"


class Spare(Text):
    """A header part left out, the last first, when the header would not fit whole."""

    __slots__ = ()


def spending_parts(spent: float, spending: Spending) -> list[Text]:
    """The spend's rate and the limits that paced the world, as spare parts."""
    parts: list[Text] = [Spare(words, end="") for words in spend_rate_words(
        spent, spending.seconds, spending.agent_ticks, spending.ticks_per_day)]
    parts += [Spare(clean(pace_words(pace)), "yellow", end="") for pace in spending.paced_by]
    return parts


def run_words(state: RunState) -> tuple[str, str]:
    """What the engine is doing, in words, and the style to show it in."""
    if state.watch_only:
        return watch_words(state)
    if state.error is not None:
        return f"✗ stopped: {state.error}", "bold red"
    if not state.running:
        return "■ stopped", "red"
    if state.paused:
        return "⏸ paused", "yellow"
    if state.remaining is None:
        return "▶ running without end", "green"
    if state.remaining == 0:
        return "● idle", "dim"
    left = state.remaining
    return f"▶ running, {left} tick{'s' if left != 1 else ''} left", "green"


def watch_words(state: RunState) -> tuple[str, str]:
    """For an observer that only watches: who changes the world, and any trouble."""
    if not state.running:
        return f"■ no longer following: {state.error or 'stopped'}", "bold red"
    who = (f"{state.changer} changes this world" if state.changer
           else "nobody changes this world now (open it again to run it)")
    if state.error is not None:
        return f"👁 watching only: {who}; {state.error}", "bold yellow"
    if state.waiting is not None:
        return f"👁 watching only: {who}, {state.waiting}", "bold cyan"
    return f"👁 watching only: {who}", "bold cyan"


SEPARATOR = " · "

MAX_LINES = 3
"""The header wraps, between its parts, onto at most this many lines (a narrow
terminal); whatever does not fit on the last is cut there with an ellipsis."""


def run_pace_words(pace: float | None) -> str:
    """"pace 2/s", "pace 1/2s", or "full speed" (as fast as the world goes)."""
    if pace is None:
        return "full speed"
    if pace >= 1:
        return f"pace {pace:g}/s"
    return f"pace 1/{1 / pace:g}s"


def moving(state: RunState) -> bool:
    """Ticks are coming: only then is there a speed to show (a paused world's last
    speed is no speed)."""
    if state.watch_only:  # only while someone changes the world: a run over has no speed
        return state.running and state.changer is not None and state.ticks_per_second > 0
    return (state.running and state.error is None and not state.paused
            and state.remaining != 0)


def past_marker(past_label: str, *, short: bool = False) -> Text:
    """The mark of a past tick, in the header's front: "◀ PAST: viewing tick 80 of 123
    — End returns to live", or for a narrow column "◀ PAST: tick 80 of 123 (End: live)"."""
    style = "bold black on yellow"
    marker = Text("◀ PAST: ", style, end="")
    if short:
        marker.append_text(literal(past_label.removeprefix("viewing "), style))
        marker.append(" (End: live)", "black on yellow")
    else:
        marker.append_text(literal(past_label, style))
        marker.append(" — End returns to live", "black on yellow")
    return marker


def header_parts(snapshot: WorldSnapshot, state: RunState, past_label: str | None = None,
                 origin: str | None = None, lived: str | None = None) -> list[Text]:
    """The header's parts in order: the past marker (when looking back) and, for a tick
    a fork's parent lived, which world lived it; tick, time, weather, run state, speed
    (while ticks come), spend, where Claude speaks for someone the spend's rate and any
    rate limit that paced the world (`Spare` parts: on a narrow terminal they are left
    out first), and for a fork where it came from (last: it is the part cut first)."""
    parts: list[Text] = []
    if past_label is not None:
        parts.append(past_marker(past_label))
        if lived is not None:
            parts.append(literal(lived, "bold magenta"))
    parts.append(Text(f"t{snapshot.tick}", "bold", end=""))
    parts.append(literal(snapshot.time_text))
    symbol = WEATHER_SYMBOLS.get(snapshot.weather, "?")
    parts.append(literal(f"{symbol} {snapshot.weather}", "cyan"))
    words, style = run_words(state)
    parts.append(literal(words, style))
    if moving(state):  # with the pace this observer keeps, if any (`<` `>` `m`)
        kept = f" ({run_pace_words(state.pace)})" if state.pace and not state.watch_only else ""
        parts.append(Text(f"{state.ticks_per_second:.1f} ticks/s{kept}", end=""))
    if not state.watch_only:  # the spend is counted by the process changing the world
        parts.append(Text(money(snapshot.spend_usd), "bold", end=""))
        if snapshot.spending is not None:
            parts += spending_parts(snapshot.spend_usd, snapshot.spending)
    if origin is not None:
        parts.append(literal(origin, "magenta"))
    return parts


def wrap_parts(parts: list[Text], width: int) -> list[Text]:
    """The parts joined by separators, wrapped between parts to `width` columns, on at
    most MAX_LINES lines; while that would cut something, `Spare` parts are left out,
    the last first; then a part wider than a line is cut with an ellipsis."""
    lines = _wrap(parts, width)
    spare = [i for i, part in enumerate(parts) if isinstance(part, Spare)]
    while spare and any(text.cell_len > width for text in lines):
        left_out = spare.pop()
        parts = parts[:left_out] + parts[left_out + 1:]
        lines = _wrap(parts, width)
    for text in lines:
        if text.cell_len > width:
            text.truncate(width, overflow="ellipsis")
    return lines or [Text("")]


def _wrap(parts: list[Text], width: int) -> list[Text]:
    """The parts wrapped between them onto at most MAX_LINES lines, the last taking
    the rest; a line may come out longer than `width` (then something must be cut)."""
    lines: list[Text] = []
    current: Text | None = None
    for index, part in enumerate(parts):
        if current is not None and current.cell_len + len(SEPARATOR) + part.cell_len <= width:
            current.append(SEPARATOR, "dim")
            current.append_text(part)
            continue
        if current is not None:
            lines.append(current)
        current = Text(no_wrap=True, overflow="ellipsis", end="")
        if len(lines) == MAX_LINES - 1:  # the last line takes the rest, cut
            rest = parts[index:]
            for i, more in enumerate(rest):
                if i:
                    current.append(SEPARATOR, "dim")
                current.append_text(more)
            break
        current.append_text(part)
    if current is not None:
        lines.append(current)
    return lines


class HearthHeader(DirectLines, Widget):
    """Tick, time, weather, run state, speed, spend (and its rate and pace) on one line.

    A Line API widget with its one strip kept until the words or the width change:
    the header changes with every tick, and a `Static` would lay its text out afresh
    through the whole styles machinery each time (about a millisecond a tick with a
    thousand agents running, from a 16 ms budget)."""

    DEFAULT_CSS = """
    HearthHeader {
        height: 1;
        max-height: 3;
        width: 1fr;
        background: $panel;
        color: $text;
    }
    HearthHeader.-past {
        background: $warning-darken-3;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._line = Text("Hearth")
        self._parts: list[Text] = [self._line]
        self._short_marker: Text | None = None
        self._strips: list[Strip] | None = None
        self._height = 1

    @property
    def line(self) -> Text:
        """The line last shown (for whoever needs its words, such as tests)."""
        return self._line

    def show(self, snapshot: WorldSnapshot, state: RunState, past_label: str | None = None,
             origin: str | None = None, lived: str | None = None) -> None:
        """Show the live state, or, with `past_label` (like "viewing tick 80 of 123"),
        a past-tick marker in front of it; `origin`: where a fork came from, `lived`:
        which world lived the past tick shown (storage/lineage.py)."""
        parts = header_parts(snapshot, state, past_label, origin, lived)
        self._short_marker = (past_marker(past_label, short=True)
                              if past_label is not None else None)
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        for i, part in enumerate(parts):
            if i:
                line.append(SEPARATOR, "dim")
            line.append_text(part)
        self.set_class(past_label is not None, "-past")
        if line == self._line:
            return  # the header is redrawn every half second: mostly nothing changed
        self._line = line
        self._parts = parts
        self._strips = None
        self._fit_height()
        self.refresh()

    @property
    def lines(self) -> list[Text]:
        """The line as shown at the present width, one Text a screen line."""
        return self._wrapped(self.size.width or 10_000)

    def _wrapped(self, width: int) -> list[Text]:
        """The parts on lines of `width`: the past marker in its short form when the
        long one would not fit on a line of its own."""
        parts = self._parts
        if self._short_marker is not None and parts and parts[0].cell_len > width:
            parts = [self._short_marker, *parts[1:]]
        return wrap_parts(parts, width)

    def on_resize(self) -> None:
        self._strips = None
        self._fit_height()

    def _fit_height(self) -> None:
        """As many screen lines as the words need at this width (a layout pass only
        when that number changes, which a tick seldom does)."""
        width = self.size.width
        count = len(self._wrapped(width)) if width > 0 else 1
        if count != self._height:
            self._height = count
            self.styles.height = count

    def notify_style_update(self) -> None:
        self._strips = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base_style()
        strips = self._strips
        if strips is None or (strips and strips[0].cell_length != width):
            strips = []
            for text in self._wrapped(width):
                strip = Strip(list(text.render(self.app.console)))
                strips.append(strip.adjust_cell_length(width).apply_style(base))
            self._strips = strips
        if y >= len(strips):
            return Strip.blank(width, base)
        return strips[y]
