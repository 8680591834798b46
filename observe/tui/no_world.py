"""What the observer shows when there is no world to watch: how to make one."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static


def no_world_text(data_dir: str) -> Text:
    text = Text()
    text.append("No world yet\n\n", style="bold")
    text.append(f"There is no world in {data_dir}.\n\n")
    text.append("Create one, then open it again:\n\n")
    text.append("    hearth --init            ", style="bold")
    text.append("a new world (add --seed N, --size WxH, --agents N)\n")
    text.append("    hearth                   ", style="bold")
    text.append("creates one on its first run, then opens it here\n\n")
    text.append("Press q to quit.")
    return text


class NoWorldApp(App[int]):
    """A one-screen app: the observer's answer when asked to watch nothing."""

    TITLE = "Hearth"
    CSS = "#no-world { width: 1fr; height: 1fr; content-align: center middle; }"
    BINDINGS = [Binding("q,escape,ctrl+c", "quit", "Quit", priority=True)]

    def __init__(self, data_dir: str) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield Static(no_world_text(self.data_dir), id="no-world")
        yield Footer()

    async def action_quit(self) -> None:
        self.exit(1)
