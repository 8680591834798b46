"""A clean stop (Ctrl+C, the observer's q) leaves no tick the next run calls interrupted.

Run through the real CLI, each run with a deadline, and ended with the checks every
hostile case makes (tests/integration/hostile.py): no traceback printed, nothing outside
the world's folders changed, world.db whole by SQLite's integrity check.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.integration.hostile import assert_unharmed, hearth, snapshot

pytestmark = pytest.mark.hostile


def test_a_tick_begun_with_no_turn_is_gone_on_with_in_plain_words(tmp_path: Path) -> None:
    """A stop during a tick's opening phases leaves it begun with no turn run (what the
    opening committed stays): the next run and --status say so without 'interrupted'."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("someone else's\n", encoding="utf-8")
    before = snapshot(outside)
    printed = []

    def run(*args: str) -> str:
        ran = hearth(tmp_path, *args)
        assert ran.returncode == 0, ran.stderr
        printed.append(ran.stdout + ran.stderr)
        return ran.stdout

    run("--init", "--size", "30x30", "--agents", "3", "--seed", "2")
    run("--run", "2", "--quiet", "--mind", "offline")
    db = tmp_path / "data" / "world.db"
    conn = sqlite3.connect(db)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM agents ORDER BY name")]
        schedule = "[" + ",".join(f'["{n}"]' for n in names) + "]"
        conn.execute("INSERT INTO tick_progress VALUES (1, 2, ?, '2026-01-01')", (schedule,))
        conn.commit()
    finally:
        conn.close()
    status = run("--status")
    assert "tick 2 was begun and none of its turns has run yet" in status
    assert "interrupted" not in status
    out = run("--run", "1", "--quiet", "--mind", "offline")
    assert "Going on with tick 2, begun when the last run stopped." in out
    assert "interrupted" not in out
    assert_unharmed(before, outside, db, "".join(printed))
