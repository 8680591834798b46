"""A clean stop (Ctrl+C, the observer's q) leaves no tick the next run calls interrupted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import main

pytestmark = pytest.mark.hostile


def test_a_tick_begun_with_no_turn_is_gone_on_with_in_plain_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop during a tick's opening phases leaves it begun with no turn run (what the
    opening committed stays): the next run and --status say so without 'interrupted'."""
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.delenv("HEARTH_AGENTS_DIR", raising=False)
    flags = ["--data-dir", str(tmp_path / "data"), "--agents-dir", str(tmp_path / "agents")]
    assert main.main([*flags, "--init", "--size", "30x30", "--agents", "3", "--seed", "2"]) == 0
    assert main.main([*flags, "--run", "2", "--quiet", "--mind", "offline"]) == 0
    conn = sqlite3.connect(tmp_path / "data" / "world.db")
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM agents ORDER BY name")]
        schedule = "[" + ",".join(f'["{n}"]' for n in names) + "]"
        conn.execute("INSERT INTO tick_progress VALUES (1, 2, ?, '2026-01-01')", (schedule,))
        conn.commit()
    finally:
        conn.close()
    capsys.readouterr()
    assert main.main([*flags, "--status"]) == 0
    status = capsys.readouterr().out
    assert "tick 2 was begun and none of its turns has run yet" in status
    assert "interrupted" not in status
    assert main.main([*flags, "--run", "1", "--quiet", "--mind", "offline"]) == 0
    out = capsys.readouterr().out
    assert "Going on with tick 2, begun when the last run stopped." in out
    assert "interrupted" not in out
