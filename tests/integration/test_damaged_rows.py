"""Stored state is checked as it loads (issue 26, build item 2).

A real world is made with `hearth --init` and lived in for a few ticks; each case then
damages one row of one table with sqlite3 (as a hand at the sqlite3 shell, or a bad
disk, would) and runs the real CLI in this process. `--check` names the damage in one
line and exits 1; `--run 1`, `--status` and `--map` refuse in one line, exit 1, and
leave world.db's bytes as they were; nothing prints a traceback.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

import main

pytestmark = pytest.mark.hostile

FIRST = "Ember"
"""The first agent of the shipped agents.yaml, present in every world `--init` makes."""

# (case, SQL that damages one row, what `--check` must say about it)
DAMAGES: list[tuple[str, str, str]] = [
    ("weather", "UPDATE world_state SET weather = 'tornado'",
     "world_state 1: weather 'tornado' is not one of"),
    ("tick set back", "UPDATE world_state SET tick = 1",
     "world_state 1: tick 1 is behind the world's own"),
    ("world width", "UPDATE world_state SET width = 0",
     "world_state 1: width 0 is not a positive whole number"),
    ("agent out of bounds", f"UPDATE agents SET x = 600 WHERE name = '{FIRST}'",
     f"agents '{FIRST}': position (600, "),
    ("agent position not a number", f"UPDATE agents SET y = 'north' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': position ("),
    ("journey not JSON", f"UPDATE agents SET journey = '{{oops' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': journey is not valid JSON"),
    ("journey unknown shape", f"UPDATE agents SET journey = '[1, 2]' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': journey is not an object with destination, path and progress"),
    ("journey out of bounds",
     "UPDATE agents SET journey = '{\"destination\":[900,1],\"path\":[[900,1]],"
     f"\"progress\":0}}' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': journey goes to position (900, 1) lies outside"),
    ("journey that jumps",
     "UPDATE agents SET journey = '{\"destination\":[5,5],\"path\":[[1,1],[5,5]],"
     f"\"progress\":0}}' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': journey breaks a rule: path jumps"),
    ("known_agents not JSON", f"UPDATE agents SET known_agents = 'Sage' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': known_agents is not valid JSON"),
    ("known_agents dangling",
     f"UPDATE agents SET known_agents = '[\"Ghost\"]' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': known_agents names 'Ghost', who is no agent"),
    ("model_id empty", f"UPDATE agents SET model_id = '' WHERE name = '{FIRST}'",
     f"agents '{FIRST}': model_id '' is empty"),
    ("negative stack",
     f"INSERT OR REPLACE INTO inventory_stacks VALUES ('{FIRST}', 'wood', -3)",
     f"inventory_stacks '{FIRST}' 'wood': quantity -3 is not positive"),
    ("stack of no one", "INSERT INTO inventory_stacks VALUES ('Ghost', 'wood', 2)",
     "inventory_stacks 'Ghost' 'wood': belongs to 'Ghost', who is no agent"),
    ("stack of no thing",
     f"INSERT OR REPLACE INTO inventory_stacks VALUES ('{FIRST}', 'Wood Logs!', 2)",
     f"inventory_stacks '{FIRST}' 'Wood Logs!': resource 'Wood Logs!' is not a name"),
    ("item properties not JSON",
     f"INSERT INTO inventory_items VALUES ('item-x', '{FIRST}', 0, 'axe', '[oops')",
     "inventory_items 'item-x': properties is not valid JSON"),
    ("terrain unknown", "INSERT OR REPLACE INTO cells VALUES (3, 4, 'lava', '', '')",
     "cells (3, 4): terrain 'lava' is not one of"),
    ("walls unknown", "INSERT OR REPLACE INTO cells VALUES (3, 4, 'grass', 'up', '')",
     "cells (3, 4): walls: 'up' is not an edge"),
    ("door without a wall", "INSERT OR REPLACE INTO cells VALUES (3, 4, 'grass', '', 'east')",
     "cells (3, 4): a door on the east edge has no wall"),
    ("cell out of bounds", "INSERT OR REPLACE INTO cells VALUES (31, 4, 'grass', 'north', '')",
     "cells (31, 4): position (31, 4) lies outside"),
    ("terrain raster damaged", "UPDATE terrain_raster SET data = x'00ff00ff'",
     "terrain_raster 1: the terrain is damaged"),
    ("landmark out of bounds",
     "UPDATE landmarks SET x = -1 WHERE id = (SELECT MIN(id) FROM landmarks)",
     ": position (-1, "),
    ("object out of bounds",
     f"INSERT INTO objects VALUES ('sign-x', 'sign', 99, 1, '{FIRST}', 0, '{{\"text\":\"hi\"}}')",
     "objects 'sign-x': position (99, 1) lies outside"),
    ("object extras not JSON",
     f"INSERT INTO objects VALUES ('sign-y', 'sign', 1, 1, '{FIRST}', 0, 'hi')",
     "objects 'sign-y': extras is not valid JSON"),
    ("object of unknown type",
     f"INSERT INTO objects VALUES ('obj-z', 'dragon', 1, 1, '{FIRST}', 0, '{{}}')",
     "objects 'obj-z': object_type 'dragon' is not sign or placed_item"),
    ("place out of bounds",
     f"INSERT INTO named_places VALUES ('the far shore', 'The Far Shore', 5, 77, '{FIRST}', 0)",
     "named_places 'the far shore': position (5, 77) lies outside"),
    ("place named by no one",
     "INSERT INTO named_places VALUES ('nook', 'Nook', 5, 7, 'Ghost', 0)",
     "named_places 'nook': named by 'Ghost', who is no agent"),
    ("structure out of bounds",
     "INSERT INTO structures VALUES ('structure-x', NULL, NULL, 0, 0, '[[40,40]]', 40, 40, 40, 40)",
     "structures 'structure-x': interior: position (40, 40) lies outside"),
    ("structure interior not JSON",
     "INSERT INTO structures VALUES ('structure-y', NULL, NULL, 0, 0, 'x', 1, 1, 1, 1)",
     "structures 'structure-y': interior is not valid JSON"),
    ("conversation by no one",
     "INSERT INTO conversations VALUES ('conv-x', 'public', 'Ghost', 1, NULL)",
     "conversations 'conv-x': started by 'Ghost', who is no agent"),
    ("participant missing",
     f"INSERT INTO conversations VALUES ('conv-y', 'public', '{FIRST}', 1, NULL);"
     f"INSERT INTO conversation_participants VALUES ('conv-y', '{FIRST}', 1, NULL);"
     "INSERT INTO conversation_participants VALUES ('conv-y', 'Ghost', 1, NULL)",
     "conversation_participants 'conv-y' 'Ghost': 'Ghost' is no agent"),
    ("participant of no conversation",
     f"INSERT INTO conversation_participants VALUES ('conv-gone', '{FIRST}', 1, NULL)",
     f"conversation_participants 'conv-gone' '{FIRST}': conversation 'conv-gone' does not exist"),
    ("line of no conversation",
     f"INSERT INTO conversation_turns (conversation_id, speaker, message, tick) "
     f"VALUES ('conv-gone', '{FIRST}', 'hello', 1)",
     "conversation 'conv-gone' does not exist"),
    ("invitation to no one",
     f"INSERT INTO invitations (inviter, invitee, privacy, created_tick, expires_at_tick) "
     f"VALUES ('{FIRST}', 'Ghost', 'public', 1, 3)",
     "is no agent"),
    ("edge material worth nothing",
     "INSERT INTO edge_materials VALUES (2, 2, 'e', 0, 'wood', 0)",
     "edge_materials (2, 2) 'e' 0: quantity 0 is not positive"),
    ("spent cell out of bounds", "INSERT INTO spent_cells VALUES (2, 300, 1, 0)",
     "spent_cells (2, 300): position (2, 300) lies outside"),
    ("mind state not JSON", f"UPDATE minds SET state = '{{\"v\": ' WHERE agent = '{FIRST}'",
     f"minds '{FIRST}': state is not valid JSON"),
    ("mind state not an object", f"UPDATE minds SET state = '[1]' WHERE agent = '{FIRST}'",
     f"minds '{FIRST}': state [1] is not a JSON object"),
    ("mind of no one", "INSERT INTO minds VALUES ('Ghost', 'offline', '{}', 1)",
     "minds 'Ghost': the mind of 'Ghost', who is no agent"),
    ("tick progress not JSON",
     "INSERT OR REPLACE INTO tick_progress VALUES (1, 8, '[[', '2024-01-01')",
     "tick_progress 1: schedule is not valid JSON"),
    ("tick progress names no one",
     "INSERT OR REPLACE INTO tick_progress VALUES (1, 8, '[[\"Ghost\"]]', '2024-01-01')",
     "tick_progress 1: schedule names 'Ghost', who is no agent"),
]


@pytest.fixture(scope="module")
def lived_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 30x30 world with four agents, eight ticks old: minds, turns and events stored."""
    root = tmp_path_factory.mktemp("lived_in")
    flags = ["--data-dir", str(root / "data"), "--agents-dir", str(root / "agents")]
    assert main.main([*flags, "--init", "--size", "30x30", "--agents", "4", "--seed", "2"]) == 0
    assert main.main([*flags, "--run", "8", "--quiet", "--mind", "offline"]) == 0
    return root


@pytest.fixture
def world(lived_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.delenv("HEARTH_AGENTS_DIR", raising=False)
    shutil.copytree(lived_in / "data", tmp_path / "data")
    shutil.copytree(lived_in / "agents", tmp_path / "agents")
    return tmp_path


def damage(world: Path, sql: str) -> None:
    conn = sqlite3.connect(world / "data" / "world.db")
    try:
        conn.execute("PRAGMA ignore_check_constraints = ON")  # as a hand or a bad disk would
        conn.executescript(sql)
        conn.commit()
    finally:
        conn.close()  # the last connection folds the WAL into the file


def digest(world: Path) -> str:
    return hashlib.sha256((world / "data" / "world.db").read_bytes()).hexdigest()


def hearth(capsys: pytest.CaptureFixture[str], world: Path, *args: str) -> tuple[int, str, str]:
    code = main.main(["--data-dir", str(world / "data"), "--agents-dir",
                      str(world / "agents"), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_sound_world_has_no_problems(capsys, world: Path) -> None:
    before = digest(world)
    code, out, err = hearth(capsys, world, "--check")
    assert (code, err) == (0, ""), out
    assert out.strip().endswith("no problems found")
    assert digest(world) == before


@pytest.mark.parametrize(("sql", "said"), [d[1:] for d in DAMAGES], ids=[d[0] for d in DAMAGES])
def test_a_damaged_row_is_named_in_one_line_and_nothing_runs(
        capsys, world: Path, sql: str, said: str) -> None:
    damage(world, sql)
    before = digest(world)

    code, out, err = hearth(capsys, world, "--check")
    assert code == 1, out
    assert "Traceback" not in out + err
    named = [line for line in out.splitlines() if said in line]
    assert len(named) == 1, f"{said!r} not in:\n{out}"
    assert out.splitlines()[-1].endswith("problem(s)")
    assert digest(world) == before

    for command in (["--run", "1", "--mind", "offline"], ["--status"], ["--map"]):
        code, out, err = hearth(capsys, world, *command)
        assert code == 1, (command, out, err)
        assert "Traceback" not in out + err
        lines = err.strip().splitlines()
        assert len(lines) == 1, (command, err)
        assert "is damaged:" in lines[0] and "(hearth --check lists them all" in lines[0]
        assert digest(world) == before, command


def test_every_table_the_engine_loads_has_a_damage_here() -> None:
    tables = {said.split()[0] for _, _, said in DAMAGES if not said.startswith(":")}
    tables |= {"landmarks", "conversation_turns", "invitations", "turns", "events",
               "tick_metrics"}  # named by position or covered by the tick counter
    assert tables >= {
        "world_state", "agents", "inventory_stacks", "inventory_items", "cells",
        "terrain_raster", "objects", "named_places", "structures", "conversations",
        "conversation_participants", "edge_materials", "spent_cells", "minds",
        "tick_progress"}


def test_status_json_marks_the_damage(capsys, world: Path) -> None:
    damage(world, "UPDATE world_state SET weather = 'tornado'")
    code, out, _ = hearth(capsys, world, "--status", "--json")
    assert code == 1
    assert '"error": "damaged"' in out and "tornado" in out


def test_check_lists_every_problem_not_only_the_first(capsys, world: Path) -> None:
    damage(world, f"UPDATE world_state SET weather = 'tornado';"
                  f"UPDATE agents SET x = 600 WHERE name = '{FIRST}';"
                  f"INSERT OR REPLACE INTO inventory_stacks VALUES ('{FIRST}', 'wood', -3)")
    code, out, _ = hearth(capsys, world, "--check")
    assert code == 1
    assert out.splitlines()[-1].endswith(": 3 problem(s)")
    code, _, err = hearth(capsys, world, "--run", "1", "--mind", "offline")
    assert code == 1 and "2 more" in err
