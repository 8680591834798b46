"""Cleaning text that agents write (signs, speech, place names) before it enters the world.

Agent text is shown to other agents and to people in a terminal, so it must not
carry terminal escape sequences or invisible control characters. Cleaning keeps
every printable character of every script (it is not censorship) and
normalises to NFC so that look-alike compositions compare equal.
"""

from __future__ import annotations

import re
import unicodedata

_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
"""ANSI CSI sequences, OSC strings and two-character escapes."""


def clean_text(text: str, *, keep_newlines: bool = False) -> str:
    """`text` without escape sequences and control or format characters, NFC, trimmed.

    Newlines and tabs survive only with keep_newlines (speech may have paragraphs;
    a sign or a place name may not: there they become spaces). CR LF and lone CR
    count as a newline.

    Text that is printable throughout (`str.isprintable`: no character of the Unicode
    categories Other or Separator but the plain space, so no control or format
    character, no line break, no escape) and already NFC would come out of the steps
    below only trimmed, so it is just trimmed: that is most of what agents write, and
    the loop asks `unicodedata` about every character.
    """
    if text.isprintable() and (text.isascii() or unicodedata.is_normalized("NFC", text)):
        return text.strip()
    return clean_text_fully(text, keep_newlines=keep_newlines)


def clean_text_fully(text: str, *, keep_newlines: bool = False) -> str:
    """`clean_text` by its definition, every step on every character (no shortcut):
    what the shortcut must always agree with."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFC", _ESCAPES.sub("", text))
    out = []
    for ch in text:
        if ch in "\n\t" and keep_newlines:
            out.append(ch)
        elif ch in "\t\n\r":
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    return "".join(out).strip()
