"""DirectDatabase: batched statements leave exactly what `executemany` row by row leaves."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

import pytest

from storage.direct_db import (
    MAX_CHUNK_ROWS,
    UPDATE_FROM,
    DirectDatabase,
    _batched,
    _chunk,
    _largest_chunk,
    run_to_end,
)
from storage.errors import StorageError

SCHEMA = """
CREATE TABLE t (a INTEGER, b TEXT, c REAL, note TEXT, PRIMARY KEY (a, b));
CREATE TABLE k (id TEXT PRIMARY KEY, n INTEGER NOT NULL, status TEXT);
"""


def _pair(tmp_path: Path, *, max_variables: int | None = None):
    """Two identical databases: one written through DirectDatabase, one row by row."""
    conns = []
    for name in ("direct.db", "plain.db"):
        conn = sqlite3.connect(tmp_path / name, isolation_level=None)
        conn.executescript(SCHEMA)
        conns.append(conn)
    if max_variables is not None:
        conns[0].setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, max_variables)
    return DirectDatabase(conns[0]), conns[1]


def _dump(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in ("t", "k")}


def _both(direct: DirectDatabase, plain: sqlite3.Connection, sql: str, rows) -> None:
    run_to_end(direct.executemany(sql, rows))
    plain.executemany(sql, rows)


def test_each_statement_form_has_a_batched_form() -> None:
    insert = _batched("INSERT INTO t (a, b, c, note) VALUES (?, ?, ?, NULL) "
                      "ON CONFLICT (a, b) DO UPDATE SET c = excluded.c")
    assert insert is not None and insert.width == 3
    assert insert.build(2).count("(?, ?, ?, NULL)") == 2
    assert insert.build(2).endswith("DO UPDATE SET c = excluded.c")
    delete = _batched("DELETE FROM t WHERE a = ? AND b = ?")
    assert delete is not None and delete.width == 2
    assert "(a, b) IN (VALUES (?,?),(?,?),(?,?))" in delete.build(3)
    assert _batched("DELETE FROM k WHERE id = ?").build(2).endswith("id IN (?,?)")
    # forms it does not know run row by row
    assert _batched("INSERT INTO k SELECT id, n, status FROM k") is None
    assert _batched("INSERT INTO k (id, n) VALUES (?, abs(?))") is None
    assert _batched("DELETE FROM t WHERE a > ?") is None
    assert _batched("UPDATE k SET n = n + ? WHERE id = ?") is None


async def _noop() -> None:
    return None


def test_inserts_upserts_and_deletes_match_row_by_row(tmp_path: Path) -> None:
    direct, plain = _pair(tmp_path, max_variables=40)  # several statements per batch
    rng = random.Random(7)
    rows = [(rng.randrange(30), rng.choice("xyz"), rng.random(), f"it's {i}")
            for i in range(300)]
    upsert = ("INSERT INTO t (a, b, c, note) VALUES (?, ?, ?, ?) "
              "ON CONFLICT (a, b) DO UPDATE SET c = excluded.c, note = excluded.note")
    _both(direct, plain, upsert, rows)  # many repeated keys: the later row wins
    _both(direct, plain, "INSERT INTO k (id, n, status) VALUES (?, ?, 'new')",
          [(f"id{i}", i) for i in range(50)])
    _both(direct, plain, "INSERT OR REPLACE INTO k (id, n, status) VALUES (?, ?, ?)",
          [("id3", 30, "again"), ("id3", 31, "twice"), ("id70", 70, None)])
    _both(direct, plain, "DELETE FROM t WHERE a = ? AND b = ?",
          [(a, b) for a in range(0, 30, 3) for b in "xz"])
    _both(direct, plain, "DELETE FROM k WHERE id = ?", [(f"id{i}",) for i in range(0, 50, 4)])
    assert _dump(direct.conn) == _dump(plain)
    assert len(_dump(plain)["t"]) > 20


def _sizes(total: int, largest: int) -> list[int]:
    sizes = []
    while total:
        sizes.append(_chunk(total, largest))
        total -= sizes[-1]
    return sizes


def test_batches_are_cut_into_sizes_from_a_short_ladder() -> None:
    assert _largest_chunk(32766, 4) == MAX_CHUNK_ROWS
    assert _largest_chunk(40, 3) == 8  # 13 rows fit; the power of two below
    assert _largest_chunk(2, 3) == 1  # a row wider than the limit still goes alone
    assert _sizes(600, 256) == [256, 256, 64, 16, 8]
    assert _sizes(7, 4) == [4, 2, 1]
    # whatever the count, the texts come from at most nine sizes
    seen = {size for total in range(1, 1200) for size in _sizes(total, 256)}
    assert seen == {2 ** i for i in range(9)}


def test_batch_sizes_that_vary_reuse_prepared_statements(tmp_path: Path) -> None:
    direct, plain = _pair(tmp_path)
    texts: list[str] = []
    direct.conn.set_trace_callback(texts.append)
    sql = "INSERT OR REPLACE INTO k (id, n, status) VALUES (?, ?, ?)"
    for count in (1000, 999, 517, 3):
        _both(direct, plain, sql, [(f"id{i}", count, None) for i in range(count)])
    direct.conn.set_trace_callback(None)
    assert _dump(direct.conn) == _dump(plain)
    assert len(_dump(plain)["k"]) == 1000
    # 1000 = 512+256+128+64+32+8, 999 = 512+256+128+64+32+4+2+1, 517 = 512+4+1,
    # 3 = 2+1: 19 statements, of only 9 sizes
    assert MAX_CHUNK_ROWS >= 512
    assert len(texts) == 19
    assert len({text.count("(") for text in texts}) == 9


@pytest.mark.skipif(not UPDATE_FROM, reason="this SQLite has no UPDATE ... FROM")
def test_updates_match_row_by_row_with_distinct_and_repeated_keys(tmp_path: Path) -> None:
    direct, plain = _pair(tmp_path)
    seed = [(f"id{i}", i, "pending") for i in range(20)]
    _both(direct, plain, "INSERT INTO k (id, n, status) VALUES (?, ?, ?)", seed)
    statement = "UPDATE k SET status = ?, n = ? WHERE id = ? AND status = 'pending'"
    _both(direct, plain, statement, [("done", 100 + i, f"id{i}") for i in range(0, 20, 2)])
    # the same key twice: the first update leaves it no longer pending, so row by row
    # the second changes nothing; a batch would pick either, so it must not batch
    _both(direct, plain, statement, [("late", 1, "id1"), ("later", 2, "id1")])
    _both(direct, plain, "UPDATE k SET n = ? WHERE id = ?", [(-1, "id5"), (-2, "nobody")])
    assert _dump(direct.conn) == _dump(plain)
    assert ("id1", 1, "late") in _dump(plain)["k"]


def test_rows_of_the_wrong_width_fail_as_they_would_row_by_row(tmp_path: Path) -> None:
    direct, plain = _pair(tmp_path)
    sql = "INSERT INTO k (id, n, status) VALUES (?, ?, ?)"
    bad = [("a", 1, "x"), ("b", 2), ("c", 3, "z", "extra")]  # would shift if flattened
    with pytest.raises(sqlite3.ProgrammingError):
        plain.executemany(sql, bad)
    with pytest.raises(sqlite3.ProgrammingError):
        run_to_end(direct.executemany(sql, bad))


def test_units_commit_or_roll_back_and_begin_only_when_written(tmp_path: Path) -> None:
    direct, _ = _pair(tmp_path)
    sql = "INSERT INTO k (id, n) VALUES (?, ?)"

    async def unit() -> None:
        await direct.begin()
        await direct.executemany(sql, [("a", 1), ("b", 2)])
        await direct.commit_and_continue()
        assert not direct.conn.in_transaction and direct.in_transaction
        await direct.executemany(sql, [("c", 3)])  # opens the next transaction
        assert direct.conn.in_transaction
        await direct.end(commit=False)

    run_to_end(unit())
    assert direct.conn.execute("SELECT id FROM k ORDER BY id").fetchall() == [("a",), ("b",)]


def test_a_job_that_waits_on_anything_else_is_refused() -> None:
    async def waits() -> None:
        await asyncio.sleep(0)

    with pytest.raises(StorageError, match="waited on something"):
        run_to_end(waits())
    assert run_to_end(_noop()) is None
