"""The one-line header: which tick, what time and weather, whether the engine runs.

It is rebuilt whole on every snapshot: one short line costs nothing to redo, and a
header that only patched parts of itself could show a tick from one snapshot next to
the weather of another. When the person is looking at a past tick the line says so
first, in another colour, so nobody mistakes an old picture for the live world.
"""

from __future__ import annotations

from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from observe.api import RunState
from observe.snapshot import WorldSnapshot
from observe.tui.safe_text import literal
from observe.tui.widgets.lines import DirectLines

WEATHER_SYMBOLS = {"clear": "☀", "cloudy": "☁", "rainy": "☂", "foggy": "≋"}
"""One narrow symbol per weather word (narrow, so the line's width is predictable)."""


def money(dollars: float) -> str:
    """Dollars with cents, or with four decimals while the spend is under a dollar
    (a run of cheap turns would otherwise show "$0.00" for a long time)."""
    if dollars == 0 or dollars >= 1:
        return f"${dollars:,.2f}"
    return f"${dollars:.4f}"


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
    return f"👁 watching only: {who}", "bold cyan"


class HearthHeader(DirectLines, Widget):
    """Tick, time, weather, run state, speed and spend on one line.

    A Line API widget with its one strip kept until the words or the width change:
    the header changes with every tick, and a `Static` would lay its text out afresh
    through the whole styles machinery each time (about a millisecond a tick with a
    thousand agents running, from a 16 ms budget)."""

    DEFAULT_CSS = """
    HearthHeader {
        height: 1;
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
        self._strip: Strip | None = None

    @property
    def line(self) -> Text:
        """The line last shown (for whoever needs its words, such as tests)."""
        return self._line

    def show(self, snapshot: WorldSnapshot, state: RunState,
             past_label: str | None = None) -> None:
        """Show the live state, or, with `past_label` (like "viewing tick 80 of 123"),
        a past-tick marker in front of it."""
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        if past_label is not None:
            line.append("◀ PAST: ", "bold black on yellow")
            line.append_text(literal(past_label, "bold black on yellow"))
            line.append(" — End returns to live ", "black on yellow")
            line.append("  ")
        line.append(f"t{snapshot.tick}", "bold")
        line.append(" · ", "dim")
        line.append_text(literal(snapshot.time_text))
        line.append(" · ", "dim")
        symbol = WEATHER_SYMBOLS.get(snapshot.weather, "?")
        line.append_text(literal(f"{symbol} {snapshot.weather}", "cyan"))
        line.append(" · ", "dim")
        words, style = run_words(state)
        line.append_text(literal(words, style))
        line.append(" · ", "dim")
        line.append(f"{state.ticks_per_second:.1f} ticks/s")
        if not state.watch_only:  # the spend is counted by the process changing the world
            line.append(" · ", "dim")
            line.append(money(snapshot.spend_usd), "bold")
        self.set_class(past_label is not None, "-past")
        if line == self._line:
            return  # the header is redrawn every half second: mostly nothing changed
        self._line = line
        self._strip = None
        self.refresh()  # one line, always: no layout pass needed

    def notify_style_update(self) -> None:
        self._strip = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base_style()
        if y > 0:
            return Strip.blank(width, base)
        strip = self._strip
        if strip is None or strip.cell_length != width:
            text = self._line.copy()
            text.truncate(width, overflow="ellipsis")
            strip = Strip(list(text.render(self.app.console)))
            strip = strip.adjust_cell_length(width).apply_style(base)
            self._strip = strip
        return strip
