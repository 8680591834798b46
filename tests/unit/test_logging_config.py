"""The log Hearth prints to stderr: words from outside (a seat client's Host header,
say) can never reach the terminal as escape sequences or control characters."""

from __future__ import annotations

import io
import logging

import pytest

import logging_config


def test_a_logged_escape_sequence_reaches_the_terminal_as_plain_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    logging_config.setup_logging()
    try:
        logging.getLogger("mcp.server").warning(
            "Invalid Host header: evil\x1b[2J\x9b2J\x07done\nsecond line")
        said = err.getvalue()
    finally:
        logging_config.setup_logging()  # a handler on the real stderr again
    assert "Invalid Host header: evil" in said and "done" in said
    assert not any(ch in said for ch in "\x1b\x9b\x07")
    assert "second line" in said  # a line break stays a line break


def test_setting_up_twice_keeps_one_handler() -> None:
    logging_config.setup_logging()
    logging_config.setup_logging()
    ours = [h for h in logging.getLogger().handlers if getattr(h, "_hearth", False)]
    assert len(ours) == 1
