"""Shared pieces for the TUI panel tests: tiny snapshots, a one-widget app, and reading
back what is really on the screen."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from textual.app import App, ComposeResult
from textual.widget import Widget

from core.agent import Agent, Inventory, Journey
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Position
from observe.snapshot import AgentView, FeedLine, WorldSnapshot
from observe.tui.messages import AgentChosen

NASTY = (
    "[bold]x[/bold] [/] [@click=app.quit]click[/] [red] "
    "\x1b[2Jcleared \x1b]0;title\x07 bell\x07 cr\r tab\tend"
)
"""Agent-written text that would do harm if it were read as markup or sent raw."""

NASTY_VISIBLE = ("[bold]x[/bold]", "[/]", "[@click=app.quit]click[/]", "[red]")
"""What must stay on screen, character for character."""

CONTROL_CHARACTERS = ("\x1b", "\x07", "\r", "\t")


def agent_view(name: str, x: int = 0, y: int = 0, *, state: str = "awake",
               activity: str = "", inventory: Inventory | None = None,
               journey: Journey | None = None, mind: str = "offline") -> AgentView:
    agent = Agent(AgentName(name), "offline", "calm", Position(x, y),
                  inventory=inventory or Inventory(), journey=journey,
                  is_sleeping=state == "asleep")
    return AgentView(name, Position(x, y), state, activity, agent, mind)


def snapshot(agents: Iterable[AgentView] = (), *, tick: int = 7, width: int = 6,
             height: int = 4, weather: str = "rainy", spend: float = 0.0,
             **more: object) -> WorldSnapshot:
    """A small all-grass world, without walls unless wall arrays are given in `more`."""
    flat = np.zeros((height, width), dtype=bool)
    fields: dict[str, object] = {
        "wall_east": flat, "wall_south": flat, "door_east": flat, "door_south": flat}
    fields.update(more)
    return WorldSnapshot(
        tick=tick, time_text="day 1, 08:00 (morning)", period="morning", weather=weather,
        width=width, height=height,
        terrain=np.full((height, width), TERRAIN_CODE[Terrain.GRASS], dtype=np.uint8),
        agents=tuple(sorted(agents, key=lambda v: v.name)), spend_usd=spend,
        **fields,  # type: ignore[arg-type]
    )


def feed_line(tick: int, agent: str | None, text: str, *, kind: str = "walk",
              ok: bool = True) -> FeedLine:
    return FeedLine(tick, agent, kind, text, ok)


class OneWidget(App[None]):
    """An app holding one widget (filling the screen) and recording AgentChosen."""

    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_agent_chosen(self, message: AgentChosen) -> None:
        self.chosen.append(message.name)


def screen_lines(app: App[object]) -> list[str]:
    """The characters on the whole screen, row by row, as the compositor draws them
    (what a terminal would show, with styles dropped)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: App[object]) -> str:
    return "\n".join(screen_lines(app))


def screen_segment_texts(app: App[object]) -> list[str]:
    """The text of every segment on screen, for checks that no raw control
    character reaches the terminal."""
    return [seg.text for strip in app.screen._compositor.render_strips() for seg in strip]
