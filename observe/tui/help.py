"""The help screen (?): every key, what the panels show, what every symbol on the grid
means (the legend), and what an observer can and cannot do. Made from the bindings
and the glyph set themselves, so it cannot fall out of step with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from observe.tui.glyphs import EMOJI, GlyphSet
from observe.tui.legend import legend_text

ABOUT = (
    "You are watching Hearth: agents living in a grid world. You can step, run and "
    "pause time, follow an agent, read what was said, and look back at past ticks. "
    "You cannot command anyone: the agents choose for themselves. Private "
    "conversations show only that they are happening."
)

PANELS = (
    ("Grid", "the world; the highlighted cell is the cursor (the Cell tab describes it); "
             "click an agent to choose it; i shows the legend beside it"),
    ("Minimap", "the whole world; the box is the grid's view; click to go there"),
    ("Agents", "everyone, with what they are doing; enter shows an agent's detail"),
    ("Agent", "inventory, journey, last perception, recent actions, cost"),
    ("Events", "under the grid: what was done, as narrated; e filters it to the chosen "
               "agent; click a line, or up/down in it, to choose one (escape lets it go)"),
    ("Provenance", "p: the stored turn behind the chosen feed line (with none chosen, the "
                   "chosen agent's newest; left and right for others): perception, "
                   "thinking, reply, tool calls and outcomes, world change, tokens and cost"),
    ("Talk", "public conversations word for word; private ones only exist"),
)


def key_table(groups: Iterable[tuple[str, Iterable[Binding]]],
              display: Callable[[Binding], str] = lambda b: b.key) -> Table:
    """Every described binding, once, with its keys as the footer shows them."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for title, bindings in groups:
        table.add_row(Text(title, style="underline"), "")
        seen: set[str] = set()
        for binding in bindings:
            if not binding.description or binding.description in seen:
                continue
            seen.add(binding.description)
            keys = ", ".join(
                display(replace(binding, key=k.strip())) for k in binding.key.split(","))
            table.add_row(Text(keys), Text(binding.description))
    return table


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 84; max-width: 95%; height: 90%;
        border: thick $accent; background: $surface; padding: 1 2;
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close help")]

    def __init__(self, groups: Iterable[tuple[str, Iterable[Binding]]],
                 glyphs: GlyphSet = EMOJI) -> None:
        super().__init__()
        self._groups = [(title, list(bindings)) for title, bindings in groups]
        self._glyphs = glyphs

    def compose(self) -> ComposeResult:
        panels = Table.grid(padding=(0, 2))
        panels.add_column(style="bold")
        panels.add_column()
        for name, what in PANELS:
            panels.add_row(name, what)
        with VerticalScroll():
            yield Static(Text("Hearth: help", style="bold"), id="help-title")
            yield Static(Text(ABOUT), id="help-about")
            yield Static(key_table(self._groups, self.app.get_key_display), id="help-keys")
            yield Static(panels, id="help-panels")
            yield Static(legend_text(self._glyphs), id="help-legend")
            yield Static(Text("ctrl+p opens the command palette (follow, go to, run N "
                              "ticks, themes). Escape closes this screen."))

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
