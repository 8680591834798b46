"""The provenance screen (p): where a feed line came from, read from the stored turn.

It shows, for one agent's turn at one tick, what the agent perceived, what it thought
and replied, each tool call with its input and its outcome as narrated, the world
change (the events of that turn), and the tokens and cost, from the turn's record in
the database (observe/provenance.py), for the live world and a past tick alike. Left
and right step to the turn of the previous or next feed line.

Every word from a record (perceptions quote agents' signs and speech; replies are a
model's) goes through the safe-text helpers: shown literally, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from observe.provenance import Provenance
from observe.tui.safe_text import clean, literal
from storage.history import StoredTurn

Reader = Callable[[int, str], StoredTurn | None]
"""(tick, agent) -> the stored turn, or None if it is not stored (yet)."""


def provenance_text(found: Provenance) -> Text:
    """The whole account as one Text, every record string cleaned."""
    out = Text()

    def head(words: str) -> None:
        out.append(f"\n{words}\n", style="bold underline")

    def body(words: object, style: str = "") -> None:
        out.append_text(literal(words, style, one_line=False))
        out.append("\n")

    model = f", model {clean(found.model)}" if found.model else ""
    out.append(f"{clean(found.agent)} at tick {found.tick}", style="bold")
    out.append(f" ({clean(found.mind)} mind{model}; turn ended: {clean(found.ended)})\n")
    head("Perceived")
    body(found.perception if found.perception is not None else "(not recorded)",
         "" if found.perception is not None else "dim italic")
    head("Thought")
    for thought in found.thinking or ("(not recorded)",):
        body(thought, "" if found.thinking else "dim italic")
    head("Said (reply)")
    for reply in found.replies or ("(not recorded)",):
        body(reply, "" if found.replies else "dim italic")
    head("Tool calls and outcomes")
    if not found.actions:
        body("(no action was taken)", "dim italic")
    for number, action in enumerate(found.actions, 1):
        out.append(f"{number}. ", style="bold")
        out.append("✓ " if action.ok else "✗ ", style="green" if action.ok else "red")
        out.append(clean(action.tool), style="bold cyan")
        out.append(" ")
        out.append(clean(action.args), style="italic")
        out.append("\n   ")
        body(action.narration)
    if found.error:
        body(f"The turn ended early: {found.error}", "red")
    head("World change")
    for change in found.changes or ("(no event under this agent's name)",):
        body(change, "" if found.changes else "dim italic")
    head("Tokens and cost")
    body(_spend("Mind", found.tokens, found.cost))
    if found.narrator_tokens is not None or found.narrator_cost is not None:
        body(_spend("Narrator", found.narrator_tokens, found.narrator_cost))
    if found.notes:
        head("Not recorded")
        for note in found.notes:
            body(note, "dim")
    return out


def _spend(who: str, tokens: Mapping[str, int] | None, cost: float | None) -> str:
    used = (", ".join(f"{k} {v}" for k, v in sorted(tokens.items())) if tokens
            else "no tokens recorded")
    paid = f"${cost:.6f}" if cost is not None else "no cost recorded"
    return f"{who}: {used}; {paid}"


class ProvenanceScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ProvenanceScreen { align: center middle; }
    ProvenanceScreen > VerticalScroll {
        width: 110; max-width: 95%; height: 90%;
        border: thick $accent; background: $surface; padding: 0 2;
    }
    """
    BINDINGS = [
        Binding("escape,q,p", "dismiss", "Close"),
        Binding("left", "step(-1)", "Previous turn"),
        Binding("right", "step(1)", "Next turn"),
        Binding("r", "reread", "Read again"),
    ]

    def __init__(self, turns: Sequence[tuple[int, str]], index: int, read: Reader) -> None:
        super().__init__()
        self.turns = list(turns)
        self.index = max(0, min(index, len(self.turns) - 1))
        self._read = read
        self.shown: Provenance | None = None
        self.text = Text()
        """What the screen shows now."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="provenance")

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        self.shown = None
        self.text = self._account()
        self.query_one("#provenance", Static).update(self.text)
        self.query_one(VerticalScroll).scroll_home(animate=False)

    def _account(self) -> Text:
        if not self.turns:
            return Text("No agent's turn is in the feed to trace. (escape closes)")
        tick, agent = self.turns[self.index]
        place = f"Turn {self.index + 1} of {len(self.turns)} in the feed (left/right step, " \
                "r reads again, escape closes)\n"
        try:
            stored = self._read(tick, agent)
        except Exception as exc:  # a damaged or closed file: say so
            return Text(place + f"Could not read {clean(agent)}'s turn at tick {tick}: "
                        f"{clean(exc)}")
        if stored is None:
            return Text(place + f"{clean(agent)}'s turn at tick {tick} is not stored yet "
                        "(the engine writes turns just after the tick); r reads again.")
        self.shown = Provenance.of(stored)
        return Text(place, style="dim") + provenance_text(self.shown)

    def action_step(self, by: int) -> None:
        if self.turns:
            self.index = max(0, min(self.index + by, len(self.turns) - 1))
            self._show()

    def action_reread(self) -> None:
        self._show()

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
