"""Conversations: the words of public ones, and only the existence of private ones.

A private conversation's words stay between its participants; the snapshot never
carries them, and this panel does not even look at `lines` of a private conversation,
so a mistake upstream could still not put private words on screen. Everything said is
agent-written and goes through `literal`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from observe.snapshot import ConversationView
from observe.tui.safe_text import clean, literal

WORDS_SHOWN = 20
"""Most recent lines shown per public conversation (older ones are counted)."""


def names_in_words(names: Sequence[str]) -> str:
    """ "Ember", "Ember and Sage", "Ash, Ember and Sage"."""
    names = [clean(name) for name in names]
    if len(names) <= 1:
        return "".join(names) or "nobody"
    return ", ".join(names[:-1]) + " and " + names[-1]


def newest_first(conversations: Sequence[ConversationView]) -> list[ConversationView]:
    """Going conversations first (latest started first), then ended ones (latest
    ended first)."""
    going = [c for c in conversations if c.ended_tick is None]
    ended = [c for c in conversations if c.ended_tick is not None]
    going.sort(key=lambda c: c.started_tick, reverse=True)
    ended.sort(key=lambda c: (c.ended_tick, c.started_tick), reverse=True)
    return going + ended


def conversation_text(conversations: Sequence[ConversationView]) -> Text:
    text = Text(end="")
    if not conversations:
        text.append("No conversations.", "dim italic")
        return text
    for n, conv in enumerate(newest_first(conversations)):
        if n:
            text.append("\n\n")
        who = names_in_words(conv.participants)
        ended = "" if conv.ended_tick is None else f" (ended at tick {conv.ended_tick})"
        if not conv.public:
            text.append("a private conversation between ", "italic")
            text.append_text(literal(who, "italic cyan"))
            text.append(f", since tick {conv.started_tick}", "italic")
            text.append(ended, "dim")
            continue
        text.append_text(literal(who, "bold cyan"))
        text.append(f" since tick {conv.started_tick}", "dim")
        if ended:
            text.append(ended, "bold dim")
        lines = conv.lines[-WORDS_SHOWN:]
        if len(conv.lines) > len(lines):
            text.append(f"\n  … {len(conv.lines) - len(lines)} earlier lines", "dim")
        for tick, speaker, words in lines:
            text.append(f"\n  t{tick} ", "dim")
            text.append_text(literal(speaker, "bold"))
            text.append(": ")
            text.append_text(literal(words))
        if not conv.lines:
            text.append("\n  (nothing said yet)", "dim")
    return text


class ConversationPanel(VerticalScroll):
    """All conversations, newest first, in a scrolling panel."""

    DEFAULT_CSS = """
    ConversationPanel {
        height: 1fr;
    }
    ConversationPanel > Static {
        width: 1fr;
        padding: 0 1;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._text = conversation_text(())
        self._body = Static(self._text)

    def compose(self) -> ComposeResult:
        yield self._body

    @property
    def text(self) -> Text:
        """The content last shown."""
        return self._text

    def show(self, conversations: Sequence[ConversationView]) -> None:
        text = conversation_text(conversations)
        if text == self._text:
            return  # most ticks change no conversation: skip the layout pass
        self._text = text
        self._body.update(text)
