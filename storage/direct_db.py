"""The repositories' database, on a plain sqlite3 connection in the calling thread.

`BackgroundWriter` (storage/writer.py) runs the engine's commits in a thread of
its own while the next turns run. Its jobs are the same repository code the
engine uses everywhere else (one source of every statement), so this class
offers `Database`'s statement and transaction methods with the same names; they
are coroutines only in form: each does its work at once and never suspends, so
the writer can run a job to its end without an event loop (`run_to_end`).

Why `executemany` is rewritten here. Python's sqlite3 releases the GIL around
every row's step; a thread that must win it back from the busy engine waits up
to the interpreter's switch interval (5 ms) each time, so a commit of 5,000 rows
written row by row took longer than the tick it overlapped. A plain
`INSERT ... VALUES (?, ...)` is therefore sent as multi-row statements (up to
1,024 rows each, in sizes that repeat, so they stay prepared: `_chunk`), a
`DELETE ... WHERE a = ? [AND b = ?]` as `IN` lists, and an
`UPDATE ... SET a = ? WHERE k = ? [AND ...]` whose rows name distinct keys as
`UPDATE ... FROM (VALUES ...)`, so a batch gives up the GIL a few times, not
once per row. Rows go in the order given, so the result is
exactly that of `executemany`.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from contextlib import asynccontextmanager
from itertools import chain
from typing import Any, TypeVar

from storage.errors import StorageError

log = logging.getLogger("hearth.storage")

LOCK_PATIENCE = 60.0
"""Seconds the writer waits for a lock another program holds on world.db (an sqlite3
shell in a transaction, a backup tool) before it stops the run with a line."""

T = TypeVar("T")

_INSERT = re.compile(
    r"^(?P<head>\s*(?:INSERT|REPLACE)\b[^()]*(?:\([^()]*\))?\s*VALUES\s*)"
    r"(?P<row>\([^()'\"]*\))(?P<tail>[^;]*)$",
    re.IGNORECASE | re.DOTALL,
)
"""An insert of one row of values (`?`, NULL, numbers), with an optional tail (an upsert)."""

_DELETE = re.compile(
    r"^\s*DELETE\s+FROM\s+(?P<table>\w+)\s+WHERE\s+"
    r"(?P<keys>\w+\s*=\s*\?(?:\s+AND\s+\w+\s*=\s*\?)*)\s*$",
    re.IGNORECASE,
)
"""A delete of the rows whose key columns equal the parameters."""

_KEY = re.compile(r"(\w+)\s*=\s*\?")

_UPDATE = re.compile(
    r"^\s*UPDATE\s+(?P<table>\w+)\s+SET\s+(?P<sets>[^()'\"]+?)\s+WHERE\s+(?P<where>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
"""An update of the rows whose key columns equal parameters (and, maybe, literals)."""

_SET = re.compile(r"\s*(\w+)\s*=\s*\?\s*")
_CONDITION = re.compile(r"\s*(\w+)\s*=\s*(\?|'[^']*'|-?\d+)\s*")
_AND = re.compile(r"\s+AND\s+", re.IGNORECASE)

UPDATE_FROM = sqlite3.sqlite_version_info >= (3, 33, 0)
"""`UPDATE ... FROM` came with SQLite 3.33; before it, updates run row by row."""

_PLAIN_ROWS = frozenset({tuple, list})


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (one that awaits only this module's
    methods) to its result, without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise StorageError("a writer job waited on something other than its own database")


class _Batched:
    """How one `executemany` statement is written as multi-row statements."""

    __slots__ = ("build", "keys_from", "width")

    def __init__(self, build: Any, width: int, keys_from: int | None = None) -> None:
        self.build = build
        """rows in one statement -> that statement's SQL"""
        self.width = width
        """parameters a row takes"""
        self.keys_from = keys_from
        """For an update: where a row's key values start. Rows must then name
        distinct keys (row by row, a later update of a key follows an earlier one)."""


def _batched(sql: str) -> _Batched | None:
    """The multi-row form of `sql`, or None when it has none (it runs row by row)."""
    found = _INSERT.match(sql)
    if found is not None:
        head, row, tail = found["head"], found["row"], found["tail"]
        return _Batched(lambda n: head + ",".join([row] * n) + tail, row.count("?"))
    found = _DELETE.match(sql)
    if found is not None:
        keys = _KEY.findall(found["keys"])
        start = f"DELETE FROM {found['table']} WHERE "
        if len(keys) == 1:
            return _Batched(lambda n: f"{start}{keys[0]} IN ({','.join('?' * n)})", 1)
        group = "(" + ",".join("?" * len(keys)) + ")"
        columns = "(" + ", ".join(keys) + ")"
        return _Batched(
            lambda n: f"{start}{columns} IN (VALUES {','.join([group] * n)})", len(keys))
    found = _UPDATE.match(sql)
    if found is not None and UPDATE_FROM:
        return _batched_update(found["table"], found["sets"], found["where"])
    return None


def _batched_update(table: str, sets: str, where: str) -> _Batched | None:
    """`UPDATE t SET a = v.column1 FROM (VALUES (?, ?, ?), ...) AS v WHERE t.k = v.column2 ...`"""
    assigned = [_SET.fullmatch(part) for part in sets.split(",")]
    conditions = [_CONDITION.fullmatch(part) for part in _AND.split(where)]
    if not all(assigned) or not all(conditions):
        return None
    width = 0
    parts = []
    for found in assigned:
        width += 1
        parts.append(f"{found[1]} = v.column{width}")  # type: ignore[index]
    keys_from = width
    tests = []
    for found in conditions:
        column, value = found[1], found[2]  # type: ignore[index]
        if value == "?":
            width += 1
            value = f"v.column{width}"
        tests.append(f"{table}.{column} = {value}")
    if width == keys_from:
        return None
    head = f"UPDATE {table} SET {', '.join(parts)} FROM (VALUES "
    group = "(" + ",".join("?" * width) + ")"
    tail = f") AS v WHERE {' AND '.join(tests)}"
    return _Batched(lambda n: head + ",".join([group] * n) + tail, width, keys_from)


MAX_CHUNK_ROWS = 1024
"""The most rows one multi-row statement carries (see `_chunk`)."""

CACHED_STATEMENTS = 512
"""Statements the writer's connection keeps prepared: each batched form comes in up
to eleven sizes (`_chunk`), and a commit writes a dozen or so tables."""


def _largest_chunk(max_variables: int, width: int) -> int:
    """The largest power of two of rows, at most MAX_CHUNK_ROWS, whose values fit
    in one statement's `max_variables` variables."""
    fits = max(1, max_variables // max(width, 1))
    size = 1
    while size * 2 <= min(fits, MAX_CHUNK_ROWS):
        size *= 2
    return size


def _chunk(remaining: int, largest: int) -> int:
    """How many of `remaining` rows the next statement takes: the largest power of
    two that is at most both.

    Why powers of two: a statement's text depends on its count of rows, and SQLite
    parses and plans every text it has not prepared before. A commit's counts of
    rows vary from tick to tick, so one statement per batch meant a new text
    nearly every time: on the 1,000-agent bench preparing them cost more
    instructions than running them (7% of the whole tick, under callgrind). Sizes
    from a short ladder repeat, and the connection keeps them prepared
    (`CACHED_STATEMENTS`), at the price of a few statements a batch instead of one.
    """
    size = largest
    while size > remaining:
        size //= 2
    return size


class DirectDatabase:
    """`Database`'s statements and transactions on `conn`, run at once in this thread.

    Only the form used inside a unit of work without savepoints is offered (that
    is how the engine's commit writes): a failure fails the whole job, which the
    writer rolls back.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.read_only = False
        self._plans: dict[str, _Batched | None] = {}
        self._begin_before_next = False
        """A unit committed and stays open: the next statement opens its transaction."""
        self.max_variables = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)

    # --- statements ------------------------------------------------------------

    def _ready(self) -> None:
        if self._begin_before_next:
            self._begin_before_next = False
            self.conn.execute("BEGIN IMMEDIATE")

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._ready()
        return self.conn.execute(sql, params).rowcount

    async def execute_insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._ready()
        return int(self.conn.execute(sql, params).lastrowid or 0)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._ready()
        rows = rows if isinstance(rows, list) else list(rows)
        if not rows:
            return
        if sql not in self._plans:
            self._plans[sql] = _batched(sql)
        plan = self._plans[sql]
        # Flattened rows must be plain rows of the statement's width, or values
        # would shift between them; anything else runs row by row (checked in C).
        if (plan is None or len(rows) == 1 or not set(map(type, rows)) <= _PLAIN_ROWS
                or set(map(len, rows)) != {plan.width}):
            self.conn.executemany(sql, rows)
            return
        if plan.keys_from is not None:
            start = plan.keys_from
            if len({tuple(row[start:]) for row in rows}) != len(rows):
                self.conn.executemany(sql, rows)
                return
        largest = _largest_chunk(self.max_variables, plan.width)
        start, total = 0, len(rows)
        while start < total:
            size = _chunk(total - start, largest)
            chunk = rows[start:start + size]
            self.conn.execute(plan.build(size), list(chain.from_iterable(chunk)))
            start += size

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        self._ready()
        row: tuple | None = self.conn.execute(sql, params).fetchone()
        return row

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        self._ready()
        return list(self.conn.execute(sql, params).fetchall())

    # --- transactions ----------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction or self._begin_before_next

    async def begin(self, *, savepoints: bool = True) -> None:
        if self.in_transaction:
            raise StorageError("a unit of work is already open on the writer")
        said = False
        waited = 0.0
        while True:
            started = time.monotonic()
            try:
                self.conn.execute("BEGIN IMMEDIATE")  # waits the connection's busy timeout
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
            waited += time.monotonic() - started
            if waited >= LOCK_PATIENCE:
                raise StorageError(
                    f"world.db stayed locked by another program for {waited:.0f} s (an sqlite3 "
                    "shell in a transaction?); stopped, everything committed is saved: close "
                    "what holds it and run again")
            if not said:
                said = True
                log.warning("world.db is locked by another program; waiting for it (up to "
                            "%.0f s)", LOCK_PATIENCE)

    async def commit_and_continue(self) -> None:
        """Commit; the unit stays open, but its next transaction begins only when
        something is written (a unit that ends here costs no empty transaction)."""
        self.conn.execute("COMMIT")
        self._begin_before_next = True

    async def rollback_and_continue(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self._begin_before_next = True

    async def end(self, *, commit: bool) -> None:
        self._begin_before_next = False
        if self.conn.in_transaction:
            self.conn.execute("COMMIT" if commit else "ROLLBACK")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Inside a unit: nothing of its own (the unit fails whole). Outside one: a
        transaction of its own."""
        if self.in_transaction:
            yield
            return
        await self.begin()
        ok = False
        try:
            yield
            ok = True
        finally:
            await self.end(commit=ok)
