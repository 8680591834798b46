"""Stored state is checked as it loads (issue 26, build item 2).

A real world is made with `hearth --init` and lived in for a few ticks; each case then
damages one row of one table with sqlite3 (as a hand at the sqlite3 shell, or a bad
disk, would) and runs the real CLI in this process. `--check` names the damage in one
line and exits 1; `--run 1`, `--status` and `--map` refuse in one line, exit 1, and
leave world.db's bytes as they were; nothing prints a traceback. Every table of a
world has such a case, or is named in HARMLESS with a test that shows why: a damaged
Gardener row is judged (refused with its reason) or left as written, and the world runs
on. An event older than a start checks is refused, in one line, by the reader that meets it.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import main
from services.status import RECENT_TICKS
from storage import Storage, world_check_records
from storage.world_check import check_world

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
    ("landmark out of bounds", "UPDATE landmarks SET x = -1 WHERE id = 1",
     "landmarks 1: position (-1, "),
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
    ("participant leaving before joining",
     f"INSERT INTO conversations VALUES ('conv-z', 'public', '{FIRST}', 1, NULL);"
     f"INSERT INTO conversation_participants VALUES ('conv-z', '{FIRST}', 5, 3)",
     f"conversation_participants 'conv-z' '{FIRST}': joined at 5, left at 3: ticks must be "
     "whole numbers, leaving at or after joining"),
    ("participant of no conversation",
     f"INSERT INTO conversation_participants VALUES ('conv-gone', '{FIRST}', 1, NULL)",
     f"conversation_participants 'conv-gone' '{FIRST}': conversation 'conv-gone' does not exist"),
    ("line of no conversation",
     f"INSERT INTO conversation_turns (id, conversation_id, speaker, message, tick) "
     f"VALUES (900, 'conv-gone', '{FIRST}', 'hello', 1)",
     "conversation_turns 900: conversation 'conv-gone' does not exist"),
    ("invitation to no one",
     f"INSERT INTO invitations (id, inviter, invitee, privacy, created_tick, expires_at_tick) "
     f"VALUES (900, '{FIRST}', 'Ghost', 'public', 1, 3)",
     "invitations 900: 'Ghost' is no agent"),
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
    # Events and turns are checked as far as a start reads them (world_check_records.py):
    # the first event, the last ticks' narrated events and turns, every tick (by index).
    ("first event not JSON", "UPDATE events SET data = '{oops' WHERE seq = 1",
     "events 1: data is not valid JSON"),
    ("latest event not an object",
     f"INSERT INTO events VALUES (900, 7, '{FIRST}', 'journey_completed', '[1]')",
     "events 900: data [1] is not a JSON object"),
    ("event at a negative tick", "UPDATE events SET tick = -5 WHERE seq = 3",
     "events 3: tick -5 is not a whole number from 0"),
    ("latest turn not JSON",
     f"INSERT OR REPLACE INTO turns VALUES (7, '{FIRST}', 'offline', 1, 'ended', '{{oops')",
     f"turns 7 '{FIRST}': record is not valid JSON"),
    ("turn at no tick",
     f"INSERT INTO turns VALUES ('soon', '{FIRST}', 'offline', 0, 'ended', '{{}}')",
     f"turns 'soon' '{FIRST}': tick 'soon' is not a whole number from 0"),
    ("metrics phases not JSON", "UPDATE tick_metrics SET phases = '[[' WHERE tick = 5",
     "tick_metrics 5: phases is not valid JSON"),
    ("metrics phases not pairs", "UPDATE tick_metrics SET phases = '[1, 2]' WHERE tick = 7",
     "tick_metrics 7: phases [1, 2] is not a list of [phase, milliseconds] pairs"),
    ("metrics duration not a number", "UPDATE tick_metrics SET duration_ms = 'slow' WHERE tick = 6",
     "tick_metrics 6: duration_ms 'slow' is not a number"),
    ("identity missing", "DELETE FROM world_identity",
     "world_identity 1: no row: the world has no identity"),
    ("identity malformed", "UPDATE world_identity SET world_id = ''",
     "world_identity 1: world_id '' is not the 32 hex digits a world is given"),
    ("identity twice", "INSERT INTO world_identity VALUES (2, 'abc')",
     "world_identity 2: a second identity"),
    ("event numbers set back", "UPDATE sqlite_sequence SET seq = 1 WHERE name = 'events'",
     "sqlite_sequence 'events': seq 1, behind the last event's seq"),
]

HARMLESS = {
    # Anyone may write the Gardener's rows (CLAUDE.md): the engine judges each request as it
    # applies it, refusing with the reason what it cannot read, so refusing the world over
    # one would let any writer stop it. test_a_damaged_gardener_row_is_judged_not_fatal.
    "gardener_cycles", "gardener_requests",
}
"""Tables of a world with no damage case in DAMAGES, each proven harmless below."""


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
        assert "is damaged:" in lines[0] and "--check lists them all" in lines[0]
        # the hint names this world, so it works when copied as printed
        assert f"(hearth --data-dir {world / 'data'} " in lines[0], lines[0]
        assert digest(world) == before, command


def test_every_table_of_a_world_has_a_damage_here(lived_in: Path) -> None:
    """A table a new migration adds fails here until a case damages it (or HARMLESS names
    it, with a test): which table a case damages is the one its problem line names."""
    conn = sqlite3.connect(f"{(lived_in / 'data' / 'world.db').as_uri()}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    damaged = {said.split()[0] for _, _, said in DAMAGES}
    assert damaged <= tables, damaged - tables
    assert not damaged & HARMLESS
    assert tables - damaged - HARMLESS == set(), "add a case to DAMAGES, or prove it harmless"


def test_the_check_reads_what_status_reads_of_the_metrics() -> None:
    assert world_check_records.METRICS_READ >= RECENT_TICKS


def _cycle(level: str = "HEALTHY", reasons: str = "[]", json_text: str = "{}") -> str:
    return ("INSERT INTO gardener_cycles (id, tick, made_at, level, reasons, figures, "
            f"decided_by, decision, rationale) VALUES (1, 8, 'x', '{level}', '{reasons}', "
            f"'{json_text}', 'rules', '{json_text}', 'calm');")


def _request(kind: str = "'none'", params: str = "'{}'", cycle: int = 1,
             status: str = "pending") -> str:
    return ("INSERT INTO gardener_requests (id, cycle, kind, params, made_at, status) "
            f"VALUES (7, {cycle}, {kind}, {params}, 'x', '{status}')")


# (case, SQL, what request 7 is after a tick: its status and the start of its reason)
GARDENER_DAMAGES: list[tuple[str, str, str, str | None]] = [
    ("params not JSON", _cycle() + _request("'weather'", "'{oops'"), "refused",
     "its parameters are not JSON"),
    ("kind unknown", _cycle() + _request("'dragon'"), "refused", "unknown intervention 'dragon'"),
    ("kind not text", _cycle() + _request("x'ff00fe'"), "refused", "unknown intervention"),
    ("cycle missing", _request(cycle=99), "refused", "its cycle is not in the database"),
    ("cycle's level unknown", _cycle("PANIC") + _request(), "refused",
     "its cycle's level 'PANIC' is not a level"),
    ("cycle's records not JSON", _cycle(reasons="{oops", json_text="x") + _request(),
     "applied", "The Gardener lets the world be."),  # the engine reads a cycle's level only
    ("status unknown", _cycle() + _request(status="bogus"), "bogus", None),  # never judged
]


def _gardener_rows(world: Path) -> tuple[list[tuple], list[tuple]]:
    conn = sqlite3.connect(world / "data" / "world.db")
    try:
        return (conn.execute("SELECT * FROM gardener_cycles ORDER BY id").fetchall(),
                conn.execute("SELECT id, cycle, kind, params, made_at, status, reason "
                             "FROM gardener_requests ORDER BY id").fetchall())
    finally:
        conn.close()


@pytest.mark.parametrize(("sql", "status", "reason"), [d[1:] for d in GARDENER_DAMAGES],
                         ids=[d[0] for d in GARDENER_DAMAGES])
def test_a_damaged_gardener_row_is_judged_not_fatal(
        capsys, world: Path, monkeypatch: pytest.MonkeyPatch, sql: str, status: str,
        reason: str | None) -> None:
    """HARMLESS: a request the engine cannot read is refused with the reason, which
    --status shows in its line; one whose status it does not know stays as it is, shown
    as stored. The world runs on, and nothing of the row but its outcome changes."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the Gardener's rules decide
    damage(world, sql)
    cycles, [request] = _gardener_rows(world)

    code, out, err = hearth(capsys, world, "--check")
    assert (code, err) == (0, "") and out.strip().endswith("no problems found"), out
    code, out, err = hearth(capsys, world, "--run", "1", "--mind", "offline", "--quiet")
    assert code == 0 and "Traceback" not in out + err, err
    after_cycles, [judged] = _gardener_rows(world)
    assert after_cycles == cycles
    assert judged[:5] == request[:5]  # id, cycle, kind, params, made_at: kept as written
    assert judged[5] == status
    assert judged[6] is None if reason is None else judged[6].startswith(reason)

    code, out, err = hearth(capsys, world, "--status")
    assert code == 0 and "Traceback" not in out + err, err
    shown = [line for line in out.splitlines() if f" {status} " in line]
    assert len(shown) == 1 and (reason is None or reason[:20] in shown[0]), out
    code, out, err = hearth(capsys, world, "--gardener", "--once")  # the Gardener's own reads
    assert code == 0 and "Traceback" not in out + err, err


@pytest.mark.parametrize(("sql", "log_lost"), [
    ("UPDATE events SET data = '[1]' WHERE seq = 3", True),  # the log is written anew
    # a happening agents still perceive, read back at start (GardenerRepository)
    ("UPDATE events SET kind = 'gardener_intervention', data = '[1]' "
     "WHERE seq = (SELECT MIN(seq) FROM events WHERE tick = 3)", False),
], ids=["rebuilt event log", "happening still perceived"])
def test_an_old_damaged_event_is_refused_by_the_reader_that_meets_it(
        capsys, world: Path, sql: str, log_lost: bool) -> None:
    """A start checks the first and the latest events only (world_check_records.py); an
    older one, met by a reader, is refused in one line naming it, before anything is
    written."""
    damage(world, sql)
    if log_lost:
        (world / "data" / "events.jsonl").unlink()
    before = digest(world)
    code, out, _ = hearth(capsys, world, "--check")
    assert code == 0, out
    code, out, err = hearth(capsys, world, "--run", "1", "--mind", "offline")
    assert code == 1 and "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.search(r"is damaged: events \d+: data '\[1\]' is not a JSON "
                                         "object", lines[0]), err
    assert digest(world) == before


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


def test_a_writer_committing_between_the_checks_reads_is_not_damage(world: Path) -> None:
    """A world being lived in is checked by readers (`--status`, `--map`, an observer).
    Another process commits a conversation with its participant in one transaction,
    just after the check has read the conversations and before it reads who takes part:
    a check whose statements each saw their own moment would call the new participant's
    conversation missing. Read at one moment, the world is sound, and the new rows
    are there for the next look."""
    db_path = world / "data" / "world.db"
    adds = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
            "c.executescript(\"BEGIN IMMEDIATE;"
            " INSERT INTO conversations VALUES ('conv-new', 'public', 'Ember', 1, NULL);"
            " INSERT INTO conversation_participants VALUES ('conv-new', 'Ember', 1, NULL);"
            " COMMIT;\"); c.close()")
    committed = []

    async def check() -> list[str]:
        async with Storage(world / "data", create=False, read_only=True) as storage:
            fetchall = storage.db.fetchall

            async def writer_commits_before_participants(sql: str, params=()):  # noqa: ANN001
                if "FROM conversation_participants" in sql and not committed:
                    subprocess.run([sys.executable, "-c", adds, str(db_path)], check=True,
                                   timeout=60)
                    committed.append(sql)
                return await fetchall(sql, params)

            storage.db.fetchall = writer_commits_before_participants  # type: ignore[method-assign]
            problems = await check_world(storage.db)
            storage.db.fetchall = fetchall  # type: ignore[method-assign]
            seen = await storage.db.fetchone("SELECT count(*) FROM conversation_participants "
                                             "WHERE conversation_id = 'conv-new'")
            assert seen is not None and seen[0] == 1  # the next look sees the new rows
        return problems

    assert asyncio.run(check()) == []
    assert committed, "the other process's commit was never made between the reads"
