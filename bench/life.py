"""Fresh default worlds living 200 ticks: how many meet issue 5's bar for a living world.

    python -m bench life

Issue 5 asks that `--run 200` on a fresh default world sees every default agent
gather, craft, build and write something, and two agents meet and hold a
conversation. A default world's seed is random, so one seed passing says little:
this runs `hearth --init --seed N` and `hearth --run 200 --quiet` for seeds
1..SEEDS, exactly as a user would (in this process, through `main.main`), and
counts the worlds where all of it holds, and how often each part does.

`life_report` reads the finished world's database; the end-to-end test of the
issue uses the same reading, so the bench and the test can never disagree.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench import Figure

SEEDS = 30
TICKS = 200
DEEDS = (
    ("gathered", frozenset({"resource_gathered"})),
    ("crafted", frozenset({"item_crafted"})),
    ("built", frozenset({"wall_placed", "door_placed", "structure_detected"})),
    ("wrote", frozenset({"sign_written", "place_named"})),
)
"""What every agent must have done, and the events that show it."""


@dataclass(frozen=True)
class LifeReport:
    """What a world's database shows its agents did."""

    missing: tuple[str, ...]
    """"<agent> never <deed>" for each deed an agent never did."""
    conversations: int
    """Conversations in which at least two agents spoke."""
    jumps: int
    """Moves of more than one cell (there must be none: nobody is put anywhere)."""
    moves: int

    @property
    def lived(self) -> bool:
        return not self.missing and self.conversations > 0 and self.jumps == 0 and self.moves > 0

    def problems(self) -> list[str]:
        found = list(self.missing)
        if not self.conversations:
            found.append("no two agents held a conversation")
        if self.jumps:
            found.append(f"{self.jumps} moves of more than one cell")
        if not self.moves:
            found.append("nobody moved")
        return found


def life_report(db: Path, people: tuple[str, ...]) -> LifeReport:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        did: dict[str, set[str]] = {}
        for agent, kind in conn.execute("SELECT DISTINCT agent, kind FROM events"):
            did.setdefault(agent, set()).add(kind)
        missing = tuple(
            f"{name} never {deed}" for name in people for deed, kinds in DEEDS
            if not did.get(name, set()) & kinds
        )
        talks = conn.execute(
            "SELECT COUNT(*) FROM (SELECT conversation_id FROM conversation_turns "
            "GROUP BY conversation_id HAVING COUNT(DISTINCT speaker) >= 2)"
        ).fetchone()[0]
        moves = jumps = 0
        for (data,) in conn.execute("SELECT data FROM events WHERE kind = 'agent_moved'"):
            step = json.loads(data)
            a, b = step["from_position"], step["to_position"]
            moves += 1
            jumps += abs(a["x"] - b["x"]) + abs(a["y"] - b["y"]) != 1
    finally:
        conn.close()
    return LifeReport(missing, talks, jumps, moves)


def live_world(seed: int, folder: Path) -> tuple[LifeReport, tuple[str, ...]]:
    """`hearth --init --seed SEED` and `hearth --run TICKS --quiet` in `folder`; the report
    and the names of the agents who lived there."""
    import main  # the CLI itself, as a user runs it

    where = ["--data-dir", str(folder / "data"), "--agents-dir", str(folder / "agents")]
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        if main.main([*where, "--init", "--seed", str(seed)]) != 0:
            raise RuntimeError(f"seed {seed}: --init failed: {quiet.getvalue()[-500:]}")
        if main.main([*where, "--run", str(TICKS), "--quiet"]) != 0:
            raise RuntimeError(f"seed {seed}: --run failed: {quiet.getvalue()[-500:]}")
    people = tuple(sorted(p.name for p in (folder / "agents").iterdir() if p.is_dir()))
    return life_report(folder / "data" / "world.db", people), people


def run() -> list[Figure]:
    reports = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, SEEDS + 1):
            report, _ = live_world(seed, Path(tmp) / str(seed))
            reports.append((seed, report))
    lived = [s for s, r in reports if r.lived]
    figures = [Figure(
        f"default worlds (seeds 1-{SEEDS}) where all of it holds after {TICKS} ticks",
        f"{len(lived)} of {SEEDS}", f"{SEEDS} of {SEEDS}", len(lived) == SEEDS,
    )]
    for deed, _ in DEEDS:
        short = sum(1 for _, r in reports if any(m.endswith(f"never {deed}") for m in r.missing))
        figures.append(Figure(f"worlds where every agent {deed}", f"{SEEDS - short} of {SEEDS}"))
    talked = sum(1 for _, r in reports if r.conversations)
    figures.append(Figure("worlds where two agents held a conversation", f"{talked} of {SEEDS}"))
    failing = [f"{s} ({_short(r)})" for s, r in reports if not r.lived]
    if failing:
        figures.append(Figure("seeds that fell short (what was missing)", ", ".join(failing)))
    return figures


def _short(report: LifeReport) -> str:
    """What a world lacked, in a word or two: the deeds nobody or somebody missed, talk."""
    lacks = [deed for deed, _ in DEEDS if any(m.endswith(f"never {deed}") for m in report.missing)]
    if not report.conversations:
        lacks.append("talk")
    if report.jumps or not report.moves:
        lacks.append("moves")
    return "/".join(lacks)
