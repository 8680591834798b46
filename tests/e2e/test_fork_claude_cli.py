"""A Claude world forked and replayed (issue 30): no model is asked, and the replay ends
where the parent ended.

The parent lives 24 ticks with Claude minds (and Claude's narrator) through the real SDK
against the strict stand-in on a socket (tests/messages_standin.py, as in
test_run_claude_cli.py). It is forked at tick 8 (walked on from its first snapshot by
replaying the records) and replayed 16 ticks with no key at all: the stand-in serves
nothing more, and the fork equals the parent. Turns of agents in different clusters
may be committed in either order in the parent (they overlap while minds wait on
replies), so events are compared by what they say, not by their sequence numbers.

A fork between snapshots (a snapshot every 5 ticks, small compaction limits) holds each
mind's memory of its tick, rebuilt from the records: its `minds` rows equal those of
the same world lived to that tick (the stand-in drawing its ids from the requests, so
the twin's replies are the parent's byte for byte), and replayed on, the parent's.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_run_claude_cli import _hearth
from tests.e2e.worlds import minds_rows
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


class _IdsFromRequests(StrictMessagesApi):
    """The stand-in, its reply and tool_use ids drawn from the request they answer rather
    than counted (a world lived again then gets its replies back byte for byte, whatever
    order its minds' requests come in)."""

    _seed, _made = 0, 0

    def _reply(self, request: Any, shape: Any, plan: Any) -> dict[str, Any]:
        self._seed, self._made = request.seed, 0  # the handler serves one request at a time
        return super()._reply(request, shape, plan)

    def _id(self, kind: str) -> str:
        if kind == "req":
            return super()._id(kind)
        self._made += 1
        made = f"{kind}{self._seed}:{self._made}"
        return f"{kind}_01" + hashlib.sha256(made.encode()).hexdigest()[:22]


def _config(where: Path) -> Path:
    """The default configuration with a snapshot every 5 ticks and compaction limits
    small enough that histories are folded into summaries every few turns."""
    where.mkdir()
    for source in (PROJECT / "config").glob("*.yaml"):
        (where / source.name).write_text(source.read_text())
    settings = where / "settings.yaml"
    text = settings.read_text()
    for old, new in (("snapshot_every_ticks: 100", "snapshot_every_ticks: 5"),
                     ("compact_above_chars: 48000", "compact_above_chars: 9000"),
                     ("keep_recent_chars: 8000", "keep_recent_chars: 3000"),
                     ("summary_max_chars: 6000", "summary_max_chars: 900")):
        assert old in text
        text = text.replace(old, new)
    settings.write_text(text)
    return where


@pytest.mark.slow
def test_a_claude_fork_between_snapshots_holds_the_memories_of_its_tick(
        tmp_path: Path) -> None:
    """Forked at tick 8, walked on from the snapshot of tick 5: each Claude mind's memory
    (its `minds` row: kind, state, the tick it was written) is rebuilt from the records of
    ticks 5 to 7, folded summaries included, and equals that of the same world lived 8
    ticks; replayed on to 14 it equals the parent's."""
    standin = _IdsFromRequests()
    config = _config(tmp_path / "config")
    parent, twin, fork = tmp_path / "parent", tmp_path / "twin", tmp_path / "fork"
    with standin.serve() as url:
        for where, ticks in ((parent, 14), (twin, 8)):
            made = _hearth(where, "--config-dir", str(config), "--init", "--seed", "5",
                           "--size", "48x40")
            assert made.returncode == 0, made.stderr
            lived = _hearth(where, "--config-dir", str(config), "--run", str(ticks),
                            "--quiet", "--mind", "claude", ANTHROPIC_API_KEY="test-key",
                            ANTHROPIC_BASE_URL=url)
            assert lived.returncode == 0, lived.stdout + lived.stderr
        assert standin.refused == []
        asked = len(standin.served)
        forked = _hearth(parent, "--config-dir", str(config), "--fork", "8", "--into",
                         str(fork))
        assert forked.returncode == 0, forked.stdout + forked.stderr
        assert "from its snapshot of tick 5, 3 tick(s) walked again" in forked.stdout
        assert "memory is as at the snapshot" not in forked.stdout

        memories = minds_rows(fork / "data" / "world.db")
        assert {k for k, _s, _t in memories.values()} == {"claude"}
        assert memories == minds_rows(twin / "data" / "world.db")
        # The memories did change after the snapshot, compaction included.
        at_snapshot = minds_rows(fork / "data" / "snapshots" / "snapshot_5.db")
        assert all(memories[a] != at_snapshot.get(a) for a in memories)
        conn = sqlite3.connect(parent / "data" / "world.db")
        try:
            folded = conn.execute("SELECT COUNT(*) FROM turns WHERE tick >= 5 AND tick < 8 "
                                  "AND json_extract(record, '$.mind.folded') > 0").fetchone()[0]
        finally:
            conn.close()
        assert folded > 0

        # A replay stopped part way holds the memories of the tick it stopped at.
        lived_on = _hearth(twin, "--config-dir", str(config), "--run", "3", "--quiet",
                           "--mind", "claude", ANTHROPIC_API_KEY="test-key",
                           ANTHROPIC_BASE_URL=url)
        assert lived_on.returncode == 0, lived_on.stdout + lived_on.stderr
        asked = len(standin.served)
        for ticks, same_as in ((3, twin), (3, parent)):
            replayed = _hearth(fork, "--config-dir", str(config), "--run", str(ticks),
                               "--quiet", "--mind", "replay", ANTHROPIC_BASE_URL=url)
            assert replayed.returncode == 0, replayed.stdout + replayed.stderr
            assert (minds_rows(fork / "data" / "world.db")
                    == minds_rows(same_as / "data" / "world.db"))
        assert len(standin.served) == asked  # the fork asked no model anything
