"""One agent up close: what it carries, where it is going, what it did and perceived.

The perception is the agent's own view of the world in words: several lines, with
emoji and box-drawing characters in its grid. It keeps its line breaks (cleaned with
`one_line=False`) while everything else still goes through `literal`, so the panel is
one `Text` with nothing in it ever read as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.agent import Inventory, Journey
from observe.snapshot import AgentView, FeedLine
from observe.tui.safe_text import literal
from observe.tui.widgets.header import money

RECENT = 10
"""How many of the agent's latest lines are shown."""


def inventory_words(inventory: Inventory) -> str:
    """ "3 wood, 1 stone; axe (sharp), flute", or "nothing"."""
    stacks = ", ".join(f"{count} {kind}" for kind, count in inventory.stacks.items())
    items = ", ".join(
        item.item_type + (f" ({', '.join(item.properties)})" if item.properties else "")
        for item in inventory.items)
    return "; ".join(part for part in (stacks, items) if part) or "nothing"


def journey_words(journey: Journey | None) -> str:
    if journey is None:
        return "none"
    left = journey.remaining
    to = journey.destination
    return f"to ({to.x}, {to.y}), {left} step{'s' if left != 1 else ''} left"


def detail_text(view: AgentView | None, lines: Sequence[FeedLine], spend: float,
                perception: str | None) -> Text:
    text = Text(end="")
    if view is None:
        text.append("No agent chosen.", "dim italic")
        return text
    text.append_text(literal(view.name, "bold cyan"))
    text.append(f"  {view.state} at ({view.position.x}, {view.position.y})")
    text.append("\nmind: ", "bold")
    text.append_text(literal(view.mind))
    text.append("   cost: ", "bold")
    text.append(money(spend))
    text.append("\ncarrying: ", "bold")
    text.append_text(literal(inventory_words(view.agent.inventory)))
    text.append("\njourney: ", "bold")
    text.append(journey_words(view.agent.journey))
    text.append("\n\nrecent actions", "bold underline")
    own = [line for line in lines if line.agent == view.name][-RECENT:]
    if not own:
        text.append("\n  none yet", "dim")
    for line in own:
        text.append("\n  ")
        if not line.ok:
            text.append("✗ ", "bold red")
        text.append(f"t{line.tick} ", "dim")
        text.append_text(literal(line.kind, "italic"))
        text.append(": ")
        text.append_text(literal(line.text, "" if line.ok else "red"))
    text.append("\n\nlast perception", "bold underline")
    if perception is None:
        text.append("\n  not read yet", "dim")
    elif not perception.strip() and own:
        text.append("\n  not seen since this world was opened here; its next turn shows it",
                    "dim")
    elif not perception.strip():
        text.append("\n  none yet (it has not had a turn)", "dim")
    else:
        text.append("\n")
        flat = perception.replace("\r\n", "\n").replace("\t", "    ")
        text.append_text(literal(flat, one_line=False))
    return text


class AgentDetail(VerticalScroll):
    """The chosen agent's inventory, journey, recent actions, perception and cost."""

    DEFAULT_CSS = """
    AgentDetail {
        height: 1fr;
    }
    AgentDetail > Static {
        width: 1fr;
        padding: 0 1;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._text = detail_text(None, (), 0.0, None)
        self._body = Static(self._text)
        self._perception: str | None = None

    def compose(self) -> ComposeResult:
        yield self._body

    @property
    def text(self) -> Text:
        """The content last shown."""
        return self._text

    @property
    def perception_text(self) -> str | None:
        """The perception last shown, as given (None: not read yet): lets the app
        redraw the rest after a tick without reading the perception again."""
        return self._perception

    def show(self, view: AgentView | None, lines: Sequence[FeedLine], spend: float,
             perception: str | None) -> None:
        """Show one agent (None: nobody chosen); `lines` may hold everyone's lines,
        only `view`'s own are shown. `perception` None means not read yet."""
        self._perception = perception if view is not None else None
        text = detail_text(view, lines, spend, perception)
        if text == self._text:
            return  # unchanged (the usual case for an agent asleep or far off)
        self._text = text
        self._body.update(text)
