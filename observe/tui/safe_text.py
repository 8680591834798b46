"""Agent-written text, made safe to show: shown literally, never interpreted.

Agents write signs, speech, place names and journals, and a language model can write
anything: `[bold]`, `[@click=app.quit]`, an ANSI escape that clears the screen or
retitles the terminal. Two rules keep all of it plain text on screen:

- it is cleaned first: escape sequences (CSI, OSC, and lone ESC pairs) and every other
  control character are removed, tabs and line breaks become spaces (a feed line is one
  line), and what is left is what the agent wrote, character for character;
- it only ever reaches a widget inside a `rich.text.Text` (which Textual never parses
  for markup), never as a markup string.
"""

from __future__ import annotations

import re
import unicodedata

from rich.text import Text

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI: colours, cursor moves, clears
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks (to BEL or ST)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"     # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"                    # two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"            # CSI as one C1 character
)
_SPACES = re.compile(r"[\t\n\r\v\f\u2028\u2029]+")


def clean(text: object, *, one_line: bool = True) -> str:
    """`text` without escape sequences or control characters (format characters that
    change how text flows, like bidi overrides, go too)."""
    raw = str(text)
    # `isprintable` is False for every control, format and surrogate character, and
    # every escape sequence starts with one (ESC or CSI): a printable string has
    # nothing to remove, and most text is, so the character walk below is skipped.
    if raw.isprintable():
        return raw
    raw = _ESCAPES.sub("", raw)
    if one_line:
        raw = _SPACES.sub(" ", raw)
    kept = []
    for ch in raw:
        if ch == "\n" and not one_line:
            kept.append(ch)
            continue
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs") or (category == "Cf" and ch not in "\u200d"):
            continue
        kept.append(ch)
    return "".join(kept)


def literal(text: object, style: str = "", *, one_line: bool = True) -> Text:
    """Cleaned text as a Text: safe to hand to any widget."""
    return Text(clean(text, one_line=one_line), style=style, no_wrap=False, end="")


def short(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def short_words(text: str, limit: int) -> str:
    """Like `short`, but cut between words where a word boundary is near (never in
    the middle of one unless a single word fills the line)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: max(0, limit - 1)]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space].rstrip(" ,;:.-")
    return cut + "…"
