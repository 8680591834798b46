"""`hearth --run` with offline minds: no walk under the sky is told as done within walls.

Issue 29 (item 14): a newcomer read "Within your walls tonight, ... you walk north onto
sand" for an agent walking home across open sand. The real CLI makes and runs a world;
the stored turns, moves and structures are then read back, and every walk that ended
in a shelter is checked against where it set out from.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from services.narrator import COLOUR

PROJECT = Path(__file__).resolve().parents[2]
INDOORS = tuple(sorted({f"{clause}, " for (_, _, inside), clauses in COLOUR.items()
                        if inside for clause in clauses}))
MOVES = frozenset({"walk", "approach"})


def _hearth(tmp: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(tmp / "data"),
         "--agents-dir", str(tmp / "agents"), *args],
        capture_output=True, text=True, timeout=180, env=env, cwd=PROJECT)
    assert done.returncode == 0, done.stderr


def test_walks_home_are_told_under_the_sky_and_time_at_home_within_walls(
    tmp_path: Path,
) -> None:
    _hearth(tmp_path, "--init", "--seed", "7", "--size", "64x48", "--agents", "12")
    _hearth(tmp_path, "--run", "120")
    conn = sqlite3.connect(tmp_path / "data" / "world.db")
    try:
        inside = {(x, y) for (interior,) in conn.execute("SELECT interior FROM structures")
                  for x, y in json.loads(interior)}
        moves: dict[tuple[int, str], list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        for tick, agent, data in conn.execute(
                "SELECT tick, agent, data FROM events WHERE kind = 'agent_moved' ORDER BY seq"):
            event = json.loads(data)
            moves.setdefault((tick, agent), []).append(
                ((event["from_position"]["x"], event["from_position"]["y"]),
                 (event["to_position"]["x"], event["to_position"]["y"])))
        turns = [(tick, agent, json.loads(record)["actions"]) for tick, agent, record
                 in conn.execute("SELECT tick, agent, record FROM turns")]
    finally:
        conn.close()
    assert inside, "no shelter was built: the run shows nothing"
    walked_home, wrong = 0, []
    for tick, agent, actions in turns:
        moving = [a for a in actions if a["tool"] in MOVES and a["ok"]]
        steps = moves.get((tick, agent), [])
        if len(moving) != 1 or not steps or actions[0] is not moving[0]:
            continue  # one move, told first (so coloured): where it began and ended is known
        start, end = steps[0][0], steps[-1][1]
        if end not in inside:
            continue
        if start not in inside:
            walked_home += 1
            if moving[0]["text"].startswith(INDOORS):
                wrong.append((tick, agent, moving[0]["text"]))
    assert walked_home >= 3, "too few walks home: the run shows nothing"
    assert wrong == []
    # and a turn spent at home is still told as within walls
    at_home = [a["text"] for _, _, actions in turns for a in actions[:1]
               if a["tool"] in ("sleep", "speak", "invite") and a["text"].startswith(INDOORS)]
    assert at_home, "no turn at home was told as indoors"
