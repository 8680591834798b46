"""What `hearth` suggests and shows, taken at its word (issue 29, items 9 and 10).

A hint is only useful if copying it as printed reaches the same world: every
command Hearth prints is run here exactly as printed (its words split as a shell
would, from another working folder) and must answer about the world it came from.
`--status` says which mind spoke for each agent, and shows a Gardener request in
words cut at a word, not as JSON cut mid-word.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.processes import PROJECT, clean_env

HINT = re.compile(r"`(hearth(?: [^`]*)?)`")


def hearth(*words: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(PROJECT / "main.py"), *words],
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=clean_env())


def as_printed(hint: str, cwd: Path) -> subprocess.CompletedProcess:
    words = shlex.split(hint)
    assert words[0] == "hearth"
    return hearth(*words[1:], cwd=cwd)


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """A world in a folder whose name needs quoting, made from another folder."""
    where = tmp_path / "my worlds"
    done = hearth("--init", "--data-dir", str(where / "data"), "--agents-dir",
                  str(where / "agents"), "--seed", "5", "--size", "40x40", "--agents", "3",
                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (where / "said.txt").write_text(done.stdout)
    return where


def test_every_hint_after_init_reaches_the_same_world(world: Path, tmp_path: Path) -> None:
    hints = HINT.findall((world / "said.txt").read_text())
    assert any("--status" in h for h in hints) and any("--map" in h for h in hints), hints
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for hint in hints:
        if "world.png" in hint:
            done = as_printed(hint, elsewhere)
            assert done.returncode == 0, (hint, done.stderr)
            assert (elsewhere / "world.png").stat().st_size > 0
            continue
        done = as_printed(hint + " --json" if "--status" in hint else hint, elsewhere)
        assert done.returncode == 0, (hint, done.stderr)
        if "--status" in hint:
            assert json.loads(done.stdout)["seed"] == 5
    assert not (elsewhere / "data").exists(), "a hint made a world of its own"


def test_the_hint_for_a_missing_world_makes_it_where_it_was_looked_for(tmp_path: Path) -> None:
    missing = tmp_path / "not yet"
    said = hearth("--status", "--data-dir", str(missing / "data"), "--agents-dir",
                  str(missing / "agents"), cwd=tmp_path)
    assert said.returncode == 1
    init = next(h for h in HINT.findall(said.stdout) if "--init" in h)
    made = as_printed(init + " --size 40x40 --agents 2", tmp_path / "..")
    assert made.returncode == 0, made.stderr
    assert (missing / "data" / "world.db").is_file()


def test_status_names_the_mind_not_only_the_model(world: Path, tmp_path: Path) -> None:
    where = ("--data-dir", str(world / "data"), "--agents-dir", str(world / "agents"))
    before = hearth("--status", *where, cwd=tmp_path)
    assert before.stdout.count("no turn yet (configured: claude-") == 3, before.stdout
    assert hearth("--run", "2", "--quiet", *where, cwd=tmp_path).returncode == 0
    after = hearth("--status", *where, cwd=tmp_path)
    rows = [line for line in after.stdout.splitlines() if "offline mind" in line]
    assert len(rows) == 3, after.stdout
    assert not any("claude-" in line for line in rows), rows
    agents = json.loads(hearth("--status", "--json", *where, cwd=tmp_path).stdout)["agents"]
    assert {a["mind"] for a in agents} == {"offline"}


def test_a_gardener_request_is_shown_in_words_cut_at_a_word(world: Path, tmp_path: Path) -> None:
    words = " ".join(["starlings"] * 30)
    params = json.dumps({"kind_of_bird": "starling", "note": words, "x": 3})
    conn = sqlite3.connect(world / "data" / "world.db")
    with conn:
        conn.execute("INSERT INTO gardener_cycles (id, tick, made_at, level, reasons, figures, "
                     "decided_by, decision, rationale) VALUES (1, 0, '2026-11-26T00:00:00', "
                     "'WATCH', '[]', '{}', 'rules', 'act', 'birds')")
        conn.execute("INSERT INTO gardener_requests (cycle, kind, params, made_at) "
                     "VALUES (1, 'flock', ?, '2026-11-26T00:00:00')", (params,))
    conn.close()
    said = hearth("--status", "--data-dir", str(world / "data"), "--agents-dir",
                  str(world / "agents"), cwd=tmp_path)
    assert said.returncode == 0, said.stderr
    line = next(x for x in said.stdout.splitlines() if "flock" in x)
    assert "{" not in line and '"' not in line, line
    assert "kind_of_bird starling, note starlings" in line, line
    assert line.endswith("starlings…"), line
