"""Messages between the TUI's parts, as dataclasses (Textual's `Message` subclasses).

`WorldAdvanced` is the only one that crosses threads: the engine thread posts it after
every tick (Textual's `post_message` is safe to call from another thread) and the app
hands its snapshot to the widgets on the UI thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from observe.api import Update


@dataclass
class WorldAdvanced(Message):
    """A tick finished: the new snapshot and the tick's narrated lines."""

    update: Update


@dataclass
class CellChosen(Message):
    """The grid's cursor is on a new cell."""

    x: int
    y: int


@dataclass
class AgentChosen(Message):
    """The person picked an agent (in the list, the grid or the palette)."""

    name: str


@dataclass
class CentreOn(Message):
    """Move the grid so this cell is in the middle (from the minimap or a landmark)."""

    x: int
    y: int
