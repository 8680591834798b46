"""The one place logging is set up, so every entry point logs the same way."""

from __future__ import annotations

import logging
import sys

from core.text import clean_text

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(debug: bool = False) -> None:
    """Warnings and errors to stderr by default; everything with --debug.

    Idempotent: calling it again replaces Hearth's handler instead of adding one.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_hearth", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_CleanFormatter(_FORMAT, datefmt="%H:%M:%S"))
    handler._hearth = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    # Libraries are chatty at DEBUG; keep their noise out unless something is wrong.
    for noisy in ("aiosqlite", "asyncio", "httpx", "httpcore", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.INFO if debug else logging.WARNING)


class _CleanFormatter(logging.Formatter):
    """A log line without escape sequences or control characters: a message may carry
    words from outside (a seat client's Host header, a model's text, a file name), and
    the terminal it is printed on must not take them for commands."""

    def format(self, record: logging.LogRecord) -> str:
        return clean_text(super().format(record), keep_newlines=True)
