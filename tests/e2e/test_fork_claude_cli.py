"""A Claude world forked and replayed (issue 30): no model is asked, and the replay ends
where the parent ended.

The parent lives 24 ticks with Claude minds (and Claude's narrator) through the real SDK
against the strict stand-in on a socket (tests/messages_standin.py, as in
test_run_claude_cli.py). It is forked at tick 8 (walked on from its first snapshot by
replaying the records) and replayed 16 ticks with no key at all: the stand-in serves
nothing more, and the fork equals the parent. Turns of agents in different clusters
may be committed in either order in the parent (they overlap while minds wait on
replies), so events are compared by what they say, not by their sequence numbers.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from tests.e2e.test_run_claude_cli import _hearth
from tests.messages_standin import StrictMessagesApi

PROJECT = Path(__file__).resolve().parents[2]


def _world(where: Path) -> dict[str, object]:
    conn = sqlite3.connect(f"{(where / 'data' / 'world.db').resolve().as_uri()}?mode=ro",
                           uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        out: dict[str, object] = {
            t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
            for t in tables
            if t not in ("tick_metrics", "tick_progress", "world_identity", "events")}
        out["events"] = sorted(conn.execute("SELECT tick, agent, kind, data FROM events"),
                               key=repr)
    finally:
        conn.close()
    lines = (where / "data" / "events.jsonl").read_text().splitlines()
    out["events.jsonl"] = sorted(json.dumps({k: v for k, v in json.loads(line).items()
                                             if k != "seq"}, sort_keys=True) for line in lines)
    homes = where / "agents"
    out["homes"] = {str(p.relative_to(homes)): hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in sorted(homes.rglob("*"))
                    if p.is_file() and not p.name.startswith(".status")}
    return out


@pytest.mark.slow
def test_a_claude_world_forked_and_replayed_asks_nothing_and_ends_as_the_parent(
        tmp_path: Path) -> None:
    standin = StrictMessagesApi()
    parent = tmp_path / "parent"
    with standin.serve() as url:
        made = _hearth(parent, "--init", "--seed", "5", "--size", "48x40")
        assert made.returncode == 0, made.stderr
        lived = _hearth(parent, "--run", "24", "--quiet", "--mind", "claude",
                        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
        assert lived.returncode == 0, lived.stdout + lived.stderr
        asked = len(standin.served)
        assert asked > 0 and standin.refused == []
        before = _world(parent)

        fork = tmp_path / "fork"
        forked = _hearth(parent, "--fork", "8", "--into", str(fork))
        assert forked.returncode == 0, forked.stdout + forked.stderr
        replayed = _hearth(fork, "--run", "16", "--quiet", "--mind", "replay",
                           ANTHROPIC_BASE_URL=url)
        assert replayed.returncode == 0, replayed.stdout + replayed.stderr
        assert len(standin.served) == asked  # not one request more: no model call, no spend
    assert _world(parent) == before
    after = _world(fork)
    assert {m for (_, _, m, *_rest) in after["turns"]} == {"claude"}  # type: ignore[union-attr]
    differing = [k for k in sorted(before.keys() | after.keys()) if before.get(k) != after.get(k)]
    assert differing == []
