"""What is in the cell under the grid's cursor: ground, walls, who stands there, signs.

Signs, place names, shelter names and agent names are written by agents, so every one
goes in through `literal` and the panel's content is a single `Text`: a sign reading
"[@click=app.quit]" shows those characters and does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.widgets import Static

from observe.api import CellInfo
from observe.tui.safe_text import literal

_LABEL = "bold"


def _listed(text: Text, label: str, values: Iterable[str], style: str = "") -> None:
    """Append "label: a, b, c" as one line when there is anything to list."""
    values = list(values)
    if not values:
        return
    text.append(f"\n{label}: ", _LABEL)
    for i, value in enumerate(values):
        if i:
            text.append(", ", "dim")
        text.append_text(literal(value, style))


class CellPanel(Static):
    """The contents of one cell, or "outside the world"."""

    DEFAULT_CSS = """
    CellPanel {
        height: auto;
        width: 1fr;
        padding: 0 1;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__("", name=name, id=id, classes=classes)
        self._text = Text()

    @property
    def text(self) -> Text:
        """The content last shown."""
        return self._text

    def show(self, info: CellInfo | None, past: bool = False) -> None:
        """Show one cell; `past` marks it as seen at a past tick, not now."""
        text = Text(end="")
        if info is None:
            text.append("outside the world", "dim italic")
            self._set(text)
            return
        text.append(f"({info.x}, {info.y}) ", "bold")
        text.append_text(literal(info.terrain, "green"))
        if past:
            text.append("  ◀ past tick", "black on yellow")
        if info.walls or info.doors:
            text.append("\nwalls: ", _LABEL)
            text.append(", ".join(info.walls) or "none")
            text.append("  doors: ", _LABEL)
            text.append(", ".join(info.doors) or "none")
        _listed(text, "agents", (f"{view.name} ({view.state})" for view in info.agents), "cyan")
        for sign in info.signs:
            text.append("\nsign: ", _LABEL)
            text.append("“", "dim")
            text.append_text(literal(sign, "italic"))
            text.append("”", "dim")
        _listed(text, "items", info.items)
        _listed(text, "named", info.places, "magenta")
        _listed(text, "landmarks", info.landmarks, "yellow")
        if info.structure is not None:
            text.append("\nshelter: ", _LABEL)
            text.append_text(literal(info.structure))
        for key, value in info.extra.items():
            text.append("\n")
            text.append_text(literal(key, _LABEL))
            text.append(": ", _LABEL)
            text.append_text(literal(value))
        self._set(text)

    def _set(self, text: Text) -> None:
        if text == self._text:
            return  # the cursor's cell rarely changes between ticks: no layout pass
        self._text = text
        self.update(text)
