"""BackgroundWriter: the repositories' own code, run in order in a thread, whole or not at all."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from core.types import AgentName
from storage import Storage, StorageError
from storage.repositories.engine import EventRow, TurnRow
from storage.writer import BackgroundWriter


def _count(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


async def test_jobs_run_in_order_in_the_writer_thread_and_commit(storage: Storage) -> None:
    writer = storage.writer()
    assert storage.writer() is writer  # one per storage
    threads: list[str] = []

    def job(tick: int):
        async def write(store) -> int:
            threads.append(threading.current_thread().name)
            async with store.unit_of_work() as uow:
                first = await uow.engine.next_event_seq()
                await uow.engine.add_events(
                    [EventRow(tick, "Ember", "spoke", f'{{"n":{i}}}') for i in range(3)])
                await uow.engine.save_turns([TurnRow(tick, "Ember", "test", 1, "done", "{}")])
                await uow.commit()
            return first
        return write

    futures = [writer.submit(job(t)) for t in range(5)]
    firsts = [await asyncio.wrap_future(f) for f in futures]
    assert firsts == [1, 4, 7, 10, 13]  # each saw the one before it
    assert set(threads) == {f"hearth-writer-{storage.db_path.name}"}
    assert _count(storage.db_path, "events") == 15  # durable: another connection sees them
    assert [t for (t,) in await storage.db.fetchall("SELECT tick FROM turns ORDER BY tick")] \
        == [0, 1, 2, 3, 4]


async def test_a_failing_job_leaves_nothing_and_the_next_one_runs(storage: Storage) -> None:
    writer = storage.writer()

    async def half_then_fail(store) -> None:
        async with store.unit_of_work() as uow:
            await uow.engine.add_events([EventRow(0, "Ember", "spoke", "{}")])
            await uow.engine.save_turns([TurnRow(0, "Ember", "test", 1, "done", "{}")])
            await uow.engine.save_turns([TurnRow(0, "Ember", "test", 1, "done", "{}")])  # dup key
            await uow.commit()

    async def fine(store) -> str:
        async with store.unit_of_work() as uow:
            await uow.engine.save_turns([TurnRow(1, "Sage", "test", 0, "done", "{}")])
            await uow.commit()
        return "ok"

    failed, after = writer.submit(half_then_fail), writer.submit(fine)
    with pytest.raises(sqlite3.IntegrityError):
        await asyncio.wrap_future(failed)
    assert await asyncio.wrap_future(after) == "ok"
    assert _count(storage.db_path, "events") == 0
    assert await storage.db.fetchall("SELECT tick, agent FROM turns") == [(1, "Sage")]


async def test_close_finishes_queued_jobs_and_a_closed_writer_refuses_more(
    storage: Storage,
) -> None:
    writer = storage.writer()

    def turn(tick: int):
        async def write(store) -> None:
            async with store.unit_of_work() as uow:
                await uow.engine.save_turns([TurnRow(tick, AgentName("Ember"), "t", 0, "d", "{}")])
                await uow.commit()
        return write

    futures = [writer.submit(turn(t)) for t in range(20)]
    await asyncio.to_thread(writer.close)
    assert all(f.done() and f.exception() is None for f in futures)
    assert _count(storage.db_path, "turns") == 20
    with pytest.raises(StorageError, match="not running"):
        writer.submit(turn(99))


async def test_a_writer_that_cannot_open_its_file_says_so(tmp_path: Path) -> None:
    writer = BackgroundWriter(tmp_path / "no such folder" / "world.db")
    with pytest.raises(StorageError, match="cannot open the writer"):
        writer.start()
    assert not writer.running


async def test_a_read_only_storage_has_no_writer(storage: Storage, tmp_path: Path) -> None:
    async with Storage(storage.data_dir, read_only=True) as reader:
        with pytest.raises(StorageError, match="read-only"):
            reader.writer()
