"""The Gardener's tables on a real world file: the migration that makes them, the
engine's repository over them, and the Gardener's own store beside a running engine.

Worlds are made by the real `create_world` in a real Storage; what reached the file
is always checked through a connection of the test's own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from config import HearthConfig, load_config
from core.conversation import Conversation, ConversationTurn, Privacy
from core.gardener import Applied
from core.places import NamedPlace
from core.types import AgentName, ConversationId, Position
from services.world_setup import create_world
from storage import (
    LATEST_VERSION,
    NewerSchemaError,
    NotAWorldError,
    Storage,
    StorageError,
    WorldNotFoundError,
)
from storage.gardener_db import CycleRecord, GardenerStore
from storage.repositories.engine import EventRow
from storage.repositories.gardener import GardenerRecord, PendingRequest, RequestOutcome
from storage.schema import HEARTH_TABLES, MIGRATIONS

GARDENER_TABLES = ("gardener_cycles", "gardener_requests")
REASONS = json.dumps([{"level": "WARNING", "measure": "alone", "agent": "Ash",
                       "text": "Ash has seen no one for 130 ticks"}])


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


async def _make_world(data_dir: Path, config: HearthConfig) -> Path:
    """A small real world with rows in many tables, closed again."""
    async with Storage(data_dir) as storage:
        await create_world(storage, config, seed=5, size=(32, 24), agent_count=3)
        names = sorted(a.name for a in await storage.agents.get_all_agents())
        ash = AgentName(names[0])
        conv = Conversation(ConversationId("c1"), frozenset({ash}), Privacy.PUBLIC, 2, ash)
        await storage.conversations.save_conversation(conv)
        await storage.conversations.add_turn(ConversationTurn(conv.id, ash, "hello", 2))
        await storage.world.save_named_place(NamedPlace("Pond", Position(3, 3), ash, 2))
        await storage.engine.add_events([
            EventRow(2, ash, "agent_slept", '{"type":"agent_slept"}'),
            EventRow(3, None, "weather_changed", '{"weather":"rainy"}'),
        ])
    return data_dir / "world.db"


def _ro(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)


def _digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def _all_but_gardener(db: Path) -> dict[str, str]:
    """A checksum of every row of every table but the Gardener's, of the schema and of
    the version: whatever the Gardener might have changed besides its own rows."""
    conn = _ro(db)
    try:
        found = {"user_version": str(conn.execute("PRAGMA user_version").fetchone()[0]),
                 "schema": repr(sorted(conn.execute(
                     "SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()))}
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            if table in GARDENER_TABLES or table == "world_identity":  # made by migrating
                continue
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            if table == "sqlite_sequence":  # AUTOINCREMENT's counters: the Gardener's move
                rows = [r for r in rows if r[0] not in GARDENER_TABLES]
            found[table] = hashlib.sha256(repr(sorted(rows, key=repr)).encode()).hexdigest()
        return found
    finally:
        conn.close()


def _downgrade_to_v6(db: Path) -> None:
    """Take migration 7 back out of a current file: what a v6 Hearth left behind."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("DROP INDEX idx_gardener_requests_status")
        for table in GARDENER_TABLES:
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DROP TABLE world_identity")  # migration 8's, which came later
        conn.execute("PRAGMA user_version = 6")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _insert_request(db: Path, cycle: object, kind: object, params: object,
                    status: str = "pending") -> int:
    """A request as anyone with the file could write it, past the Gardener."""
    conn = sqlite3.connect(db, timeout=5)
    try:
        cursor = conn.execute(
            "INSERT INTO gardener_requests (cycle, kind, params, status, made_at) "
            "VALUES (?, ?, ?, ?, 'now')", (cycle, kind, params, status))
        conn.commit()
        return int(cursor.lastrowid or 0)
    finally:
        conn.close()


@pytest.fixture
def world(tmp_path: Path, config: HearthConfig) -> Path:
    return asyncio.run(_make_world(tmp_path / "data", config))


@pytest.fixture
def store(world: Path) -> Iterator[GardenerStore]:
    with GardenerStore(world) as gardener:
        yield gardener


# --------------------------------------------------------------------------- schema


def test_the_gardener_tables_are_hearth_tables_of_migration_7() -> None:
    assert [m.version for m in MIGRATIONS if "gardener" in m.description] == [7]
    assert LATEST_VERSION >= 7
    assert set(GARDENER_TABLES) <= HEARTH_TABLES


async def test_a_v6_world_migrates_to_v7_and_keeps_every_row(
    tmp_path: Path, config: HearthConfig
) -> None:
    data = tmp_path / "data"
    db = await _make_world(data, config)
    conn = _ro(db)
    fresh_schema = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
    conn.close()
    _downgrade_to_v6(db)
    before = _all_but_gardener(db)
    assert before["user_version"] == "6"

    async with Storage(data) as storage:
        assert storage.db.migrated_from == 6
        assert await storage.db.user_version() == LATEST_VERSION
        assert await storage.gardener.pending() == []
        assert await storage.gardener.recent(10) == []
        backup = storage.db.backup_path
    after = _all_but_gardener(db)
    assert after.pop("user_version") == str(LATEST_VERSION)
    assert before.pop("user_version") == "6"
    assert after.pop("schema") != before.pop("schema")
    assert after == before, "every table of v6 holds the same rows after the migration"
    conn = _ro(db)
    try:
        assert sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()) \
            == fresh_schema, "a migrated file has the schema of a fresh one"
        for table in GARDENER_TABLES:
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,)
    finally:
        conn.close()
    assert backup is not None and backup.is_file()
    old = sqlite3.connect(backup)
    assert old.execute("PRAGMA user_version").fetchone() == (6,)
    old.close()


async def test_a_v6_file_as_the_v6_migrations_wrote_it_gains_the_tables(tmp_path: Path) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(tmp_path / "world.db")
    for migration in MIGRATIONS[:6]:
        for statement in migration.statements:
            conn.execute(statement)
    conn.execute("INSERT INTO world_state (id, width, height, seed, tick, weather, created_at) "
                 "VALUES (1, 40, 30, 7, 12, 'clear', 'then')")
    conn.execute("INSERT INTO events (tick, agent, kind, data) VALUES (11, 'Ember', 'x', '{}')")
    conn.execute("PRAGMA user_version = 6")
    conn.commit()
    conn.close()
    async with Storage(tmp_path) as storage:
        assert storage.db.migrated_from == 6
        indexes = {r[0] for r in await storage.db.fetchall(
            "SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "idx_gardener_requests_status" in indexes
        assert (await storage.world.get_world_state()).tick == 12
        assert await storage.engine.next_event_seq() == 2
        # The CHECKs hold on the new tables.
        with pytest.raises(sqlite3.IntegrityError):
            await storage.db.execute(
                "INSERT INTO gardener_cycles (tick, made_at, level, reasons, figures, "
                "decided_by, decision, rationale) VALUES (1, 'now', 'FINE', '[]', '{}', "
                "'rules', '{}', '')")
        with pytest.raises(sqlite3.IntegrityError):
            await storage.db.execute(
                "INSERT INTO gardener_requests (cycle, kind, params, status, made_at) "
                "VALUES (1, 'none', '{}', 'maybe', 'now')")


# --------------------------------------------------------------------------- repository


async def test_pending_requests_come_in_order_with_their_cycles_level(world: Path) -> None:
    with GardenerStore(world) as gardener:
        first = gardener.add_cycle(7, "WARNING", REASONS, "{}", "rules", "{}", "lonely",
                                   None, [("weather", '{"weather":"rainy"}'),
                                          ("none", "{}")])
        second = gardener.add_cycle(8, "WATCH", "[]", "{}", "model-x", '{"a":1}', "quiet",
                                    "a note", [("regrowth", '{"radius":2,"x":3,"y":4}')])
    orphan = _insert_request(world, 99_999, "event", '{"x":1}')
    async with Storage(world.parent) as storage:
        pending = await storage.gardener.pending()
    assert [p.id for p in pending] == sorted(p.id for p in pending)
    assert pending == [
        PendingRequest(pending[0].id, first, "WARNING", "weather", '{"weather":"rainy"}'),
        PendingRequest(pending[1].id, first, "WARNING", "none", "{}"),
        PendingRequest(pending[2].id, second, "WATCH", "regrowth", '{"radius":2,"x":3,"y":4}'),
        PendingRequest(orphan, 99_999, None, "event", '{"x":1}'),
    ]


async def test_rows_nobody_sane_would_write_still_read_as_requests(world: Path) -> None:
    with GardenerStore(world) as gardener:
        cycle = gardener.add_cycle(1, "CRITICAL", "[]", "{}", "rules", "{}", "", None, [])
    conn = sqlite3.connect(world)
    conn.execute("INSERT INTO gardener_requests (cycle, kind, params, made_at) "
                 "VALUES ('not a cycle', CAST(x'ff6576656e74' AS TEXT), x'00ff', 'now')")
    conn.execute("INSERT INTO gardener_requests (cycle, kind, params, made_at) "
                 "VALUES (?, 'none', 'null', 'now')", (cycle,))
    conn.commit()
    conn.close()
    async with Storage(world.parent) as storage:
        odd, fine = await storage.gardener.pending()
        recent = await storage.gardener.recent(5)
    assert (odd.cycle, odd.level, odd.kind, odd.params) == (0, None, "\ufffdevent", "\x00\ufffd")
    assert (fine.cycle, fine.level, fine.params) == (cycle, "CRITICAL", "null")
    assert [r.kind for r in recent] == ["none", "\ufffdevent"]


async def test_outcomes_change_only_pending_requests(world: Path) -> None:
    with GardenerStore(world) as gardener:
        cycle = gardener.add_cycle(3, "WARNING", "[]", "{}", "rules", "{}", "r", None,
                                   [("weather", '{"weather":"foggy"}'),
                                    ("event", '{"radius":3,"text":"A bell","x":5,"y":6}'),
                                    ("none", "{}")])
    async with Storage(world.parent) as storage:
        weather, event, nothing = await storage.gardener.pending()
        async with storage.unit_of_work(savepoints=False) as uow:
            assert uow.gardener is storage.gardener
            await uow.gardener.record_outcomes([
                RequestOutcome(weather.id, False, "too soon", 4, None),
                RequestOutcome(event.id, True, "A bell rings.", 4, Position(5, 6)),
            ])
            await uow.commit()
        async with storage.unit_of_work() as uow:  # not committed: nothing of it stays
            await uow.gardener.record_outcomes(
                [RequestOutcome(nothing.id, True, "let be", 4, None)])
        async with storage.unit_of_work() as uow:  # a second judgement changes nothing
            await uow.gardener.record_outcomes([
                RequestOutcome(weather.id, True, "changed its mind", 9, None),
                RequestOutcome(event.id, False, "refused after all", 9, Position(1, 1)),
            ])
            await uow.commit()
        await storage.gardener.record_outcomes([])
        assert await storage.gardener.pending() == [
            PendingRequest(nothing.id, cycle, "WARNING", "none", "{}")]
    conn = _ro(world)
    rows = conn.execute("SELECT id, status, reason, done_tick, x, y FROM gardener_requests "
                        "ORDER BY id").fetchall()
    conn.close()
    assert rows == [(weather.id, "refused", "too soon", 4, None, None),
                    (event.id, "applied", "A bell rings.", 4, 5, 6),
                    (nothing.id, "pending", None, None, None, None)]


async def test_applied_since_and_recent(world: Path) -> None:
    with GardenerStore(world) as gardener:
        early = gardener.add_cycle(2, "WATCH", "[]", "{}", "rules", "{}", "early", None,
                                   [("weather", '{"weather":"rainy"}')])
        late = gardener.add_cycle(8, "CRITICAL", "[]", "{}", "model-y", "{}", "late", None,
                                  [("regrowth", '{"radius":2,"x":7,"y":8}'),
                                   ("reveal_landmark",
                                    '{"landmark":"Nowhere","radius":5,"x":1,"y":1}'),
                                   ("none", "{}")])
    orphan = _insert_request(world, 4242, "none", "{}")
    async with Storage(world.parent) as storage:
        rain, grow, reveal, rest, lost = await storage.gardener.pending()
        await storage.gardener.record_outcomes([
            RequestOutcome(rain.id, True, "The weather turns rainy.", 3, None),
            RequestOutcome(grow.id, True, "Plants grow back.", 9, Position(7, 8)),
            RequestOutcome(reveal.id, False, "there is no landmark called 'Nowhere'", 9, None),
            RequestOutcome(lost.id, False, "its cycle is not in the database", 9, None),
        ])
        assert await storage.gardener.applied_since(0) == [
            Applied(3, early, "weather", None), Applied(9, late, "regrowth", Position(7, 8))]
        assert await storage.gardener.applied_since(4) == [
            Applied(9, late, "regrowth", Position(7, 8))]
        assert await storage.gardener.applied_since(3) == await storage.gardener.applied_since(0)
        assert await storage.gardener.applied_since(9) == [
            Applied(9, late, "regrowth", Position(7, 8))]
        assert await storage.gardener.applied_since(10) == []

        recent = await storage.gardener.recent(3)
        assert recent == [
            GardenerRecord(orphan, 4242, "none", "{}", "refused",
                           "its cycle is not in the database", 9, None, None),
            GardenerRecord(rest.id, late, "none", "{}", "pending", None, None, "CRITICAL",
                           "late"),
            GardenerRecord(reveal.id, late, "reveal_landmark",
                           '{"landmark":"Nowhere","radius":5,"x":1,"y":1}', "refused",
                           "there is no landmark called 'Nowhere'", 9, "CRITICAL", "late"),
        ]
        assert len(await storage.gardener.recent(100)) == 5
        assert await storage.gardener.recent(0) == []
        assert await storage.gardener.recent(-1) == []


async def test_notice_events_are_the_interventions_from_a_tick_on(world: Path) -> None:
    def told(tick: int, text: str) -> EventRow:
        return EventRow(tick, None, "gardener_intervention",
                        json.dumps({"type": "gardener_intervention", "text": text,
                                    "until_tick": tick + 6}))

    async with Storage(world.parent) as storage:
        await storage.engine.add_events([
            told(4, "early"), EventRow(6, None, "gardener_refused", '{"reason":"no"}'),
            told(6, "on time"), told(9, "late"),
        ])
        found = await storage.gardener.notice_events(6)
    assert [data["text"] for data in found] == ["on time", "late"]


# --------------------------------------------------------------------------- the store


def test_add_cycle_and_recent_cycles_are_the_gardeners_memory(
    world: Path, store: GardenerStore
) -> None:
    ids = [store.add_cycle(10 + n, "WATCH", REASONS, '{"tick":1}', "rules",
                           json.dumps({"interventions": [], "rationale": f"cycle {n}"}),
                           f"cycle {n}", None,
                           [("none", "{}")] * n)
           for n in range(3)]
    assert ids == sorted(ids) and len(set(ids)) == 3
    _insert_request(world, ids[2], "event", "nonsense", status="refused")
    _insert_request(world, ids[0] - 1, "none", "{}")  # a cycle outside the memory

    memory = store.recent_cycles(2)
    assert memory == [
        CycleRecord(ids[1], 11, "WATCH", json.loads(REASONS), "rules", "cycle 1",
                    [("none", {}, "pending", None)]),
        CycleRecord(ids[2], 12, "WATCH", json.loads(REASONS), "rules", "cycle 2",
                    [("none", {}, "pending", None), ("none", {}, "pending", None),
                     ("event", {}, "refused", None)]),
    ]
    assert [c.id for c in store.recent_cycles(50)] == ids
    assert store.recent_cycles(0) == [] and store.recent_cycles(-3) == []

    conn = _ro(world)
    row = conn.execute("SELECT tick, level, reasons, figures, decided_by, decision, rationale, "
                       "note, made_at FROM gardener_cycles WHERE id = ?", (ids[0],)).fetchone()
    stamp = conn.execute("SELECT made_at FROM gardener_cycles WHERE id = ?", (ids[2],)
                         ).fetchone()[0]
    made = conn.execute("SELECT made_at FROM gardener_requests WHERE cycle = ? AND kind = "
                        "'none'", (ids[2],)).fetchall()
    conn.close()
    assert row[:8] == (10, "WATCH", REASONS, '{"tick":1}', "rules",
                       '{"interventions": [], "rationale": "cycle 0"}', "cycle 0", None)
    assert row[8].endswith("Z") and made == [(stamp,), (stamp,)]  # one transaction, one time


async def test_the_memory_shows_what_the_engine_made_of_each_request(
    world: Path, store: GardenerStore
) -> None:
    cycle = store.add_cycle(5, "WARNING", "[]", "{}", "model-z", "{}", "why", "kept one",
                            [("weather", '{"weather":"clear"}'),
                             ("regrowth", '{"radius":1,"x":2,"y":2}')])
    async with Storage(world.parent) as storage:
        weather, grow = await storage.gardener.pending()
        async with storage.unit_of_work() as uow:
            await uow.gardener.record_outcomes([
                RequestOutcome(weather.id, True, "The weather turns clear.", 6, None),
                RequestOutcome(grow.id, False, "this area had an intervention", 6, None)])
            await uow.commit()
        (memory,) = store.recent_cycles(1)  # while the engine's connection is open
    assert memory.id == cycle and memory.decided_by == "model-z"
    assert memory.requests == [
        ("weather", {"weather": "clear"}, "applied", "The weather turns clear."),
        ("regrowth", {"radius": 1, "x": 2, "y": 2}, "refused",
         "this area had an intervention")]


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        ({"tick": -1}, "tick"),
        ({"tick": 2.0}, "tick"),
        ({"level": "FINE"}, "level"),
        ({"level": "warning"}, "level"),
        ({"reasons_json": "{}"}, "reasons_json"),
        ({"reasons_json": "not json"}, "reasons_json"),
        ({"figures_json": "[]"}, "figures_json"),
        ({"decision_json": "{"}, "decision_json"),
        ({"decided_by": ""}, "decided_by"),
        ({"requests": [("none", "[]")]}, "params"),
        ({"requests": [("none", "{}"), ("", "{}")]}, "kind"),
    ],
)
def test_add_cycle_refuses_what_the_tables_should_not_hold(
    world: Path, store: GardenerStore, change: dict[str, object], phrase: str
) -> None:
    args: dict[str, object] = {
        "tick": 1, "level": "WATCH", "reasons_json": "[]", "figures_json": "{}",
        "decided_by": "rules", "decision_json": "{}", "rationale": "", "note": None,
        "requests": [("none", "{}")]}
    args.update(change)
    with pytest.raises(ValueError, match=phrase):
        store.add_cycle(**args)  # type: ignore[arg-type]
    assert store.recent_cycles(10) == []
    conn = _ro(world)
    assert conn.execute("SELECT COUNT(*) FROM gardener_requests").fetchone() == (0,)
    conn.close()


def test_a_closed_store_says_so(world: Path) -> None:
    gardener = GardenerStore(world)
    gardener.close()
    gardener.close()
    with pytest.raises(StorageError, match="closed"):
        gardener.recent_cycles(1)
    with pytest.raises(StorageError, match="closed"):
        gardener.add_cycle(1, "WATCH", "[]", "{}", "rules", "{}", "", None, [])


# --------------------------------------------------------------------------- refusals


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_missing_world_is_refused_and_not_created(tmp_path: Path) -> None:
    db = tmp_path / "data" / "world.db"
    with pytest.raises(WorldNotFoundError) as err:
        GardenerStore(db)
    assert str(db) in str(err.value) and "hearth" in str(err.value)
    assert not db.parent.exists()
    tmp_path.joinpath("data").mkdir()
    with pytest.raises(WorldNotFoundError):
        GardenerStore(db)
    assert _listing(tmp_path / "data") == []


@pytest.mark.parametrize(
    ("content", "phrase"),
    [(b"this is a text file, not a database\n" * 20, "not an SQLite database"),
     (b"", "empty"),
     (b"SQLite format 3\x00" + bytes(200), "not an SQLite database")],
)
def test_a_file_that_is_not_sqlite_is_refused_untouched(
    tmp_path: Path, content: bytes, phrase: str
) -> None:
    db = tmp_path / "world.db"
    db.write_bytes(content)
    with pytest.raises(NotAWorldError) as err:
        GardenerStore(db)
    message = str(err.value)
    assert phrase in message and str(db) in message and "\n" not in message
    assert db.read_bytes() == content
    assert _listing(tmp_path) == ["world.db"]


def test_someone_elses_sqlite_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "world.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    before = _digest(db)
    with pytest.raises(NotAWorldError, match="invoices"):
        GardenerStore(db)
    bare = tmp_path / "bare.db"  # SQLite, but with nothing in it
    conn = sqlite3.connect(bare)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("DROP TABLE t")
    conn.close()
    with pytest.raises(NotAWorldError, match="no tables"):
        GardenerStore(bare)
    assert _digest(db) == before


def test_a_newer_world_is_refused_and_left_byte_identical(world: Path) -> None:
    conn = sqlite3.connect(world)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 3}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before, listing = _digest(world), _listing(world.parent)
    with pytest.raises(NewerSchemaError) as err:
        GardenerStore(world)
    message = str(err.value)
    assert "newer Hearth" in message and f"v{LATEST_VERSION + 3}" in message
    assert "upgrade" in message and "\n" not in message
    assert _digest(world) == before and _listing(world.parent) == listing


def test_a_world_from_before_the_gardener_is_refused_not_migrated(world: Path) -> None:
    _downgrade_to_v6(world)
    before = _digest(world)
    with pytest.raises(StorageError) as err:
        GardenerStore(world)
    message = str(err.value)
    assert "v6" in message and "migrate" in message and "`hearth`" in message
    assert "\n" not in message
    assert _digest(world) == before
    conn = _ro(world)
    assert conn.execute("PRAGMA user_version").fetchone() == (6,)
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'gardener_cycles'"
                        ).fetchone() == (0,)
    conn.close()


def test_a_file_that_only_claims_the_version_is_refused(world: Path) -> None:
    conn = sqlite3.connect(world)
    conn.execute("DROP TABLE gardener_requests")
    conn.commit()
    conn.close()
    with pytest.raises(NotAWorldError, match="gardener_requests"):
        GardenerStore(world)


# --------------------------------------------------------------------------- write nothing else


def test_the_store_writes_nothing_but_its_own_rows(world: Path) -> None:
    before = _all_but_gardener(world)
    with GardenerStore(world) as gardener:
        for n in range(5):
            gardener.add_cycle(n, "CRITICAL", REASONS, '{"agents":[]}', "rules", "{}", "r",
                               None, [("weather", '{"weather":"rainy"}'), ("none", "{}")])
            gardener.recent_cycles(3)
        # Its reads go through a connection that cannot write at all.
        reader = gardener._reader
        assert reader is not None
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.execute("DELETE FROM agents")
    assert _all_but_gardener(world) == before
    conn = _ro(world)
    counts = [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in GARDENER_TABLES]
    conn.close()
    assert counts == [5, 10]


async def test_the_store_works_beside_an_open_engine_connection(world: Path) -> None:
    async with Storage(world.parent) as storage:
        mode = await storage.db.fetchone("PRAGMA journal_mode")
        assert mode is not None and mode[0] == "wal"
        before = _all_but_gardener(world)
        with GardenerStore(world) as gardener:
            cycle = gardener.add_cycle(1, "WATCH", "[]", "{}", "rules", "{}", "r", None,
                                       [("none", "{}")])
            (seen,) = await storage.gardener.pending()
            assert seen.cycle == cycle and seen.level == "WATCH"

            # While the engine holds the write lock, the Gardener's write waits for it
            # (busy_timeout) instead of failing, and lands once the engine commits.
            async with storage.unit_of_work() as uow:
                await uow.engine.add_events([EventRow(1, None, "weather_changed", "{}")])
                waiting = asyncio.create_task(asyncio.to_thread(
                    gardener.add_cycle, 2, "WARNING", "[]", "{}", "rules", "{}", "r", None,
                    [("weather", '{"weather":"rainy"}')]))
                await asyncio.sleep(0.4)
                assert not waiting.done()
                assert [c.id for c in gardener.recent_cycles(5)] == [cycle]  # reads go on
                await uow.commit()
            second = await asyncio.wait_for(waiting, 5)
            assert [p.cycle for p in await storage.gardener.pending()] == [cycle, second]
            assert [c.level for c in gardener.recent_cycles(5)] == ["WATCH", "WARNING"]
        after = _all_but_gardener(world)
        assert await storage.engine.count_events() == 3
    for table in ("events", "sqlite_sequence"):  # the engine's own write, above
        assert after.pop(table) != before.pop(table)
    assert after == before
