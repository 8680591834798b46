"""Writing behind: each tick's commit lands while the next tick runs, and nothing differs.

The write in flight is held back on purpose in some tests (another connection takes
SQLite's write lock and lets go a little later), so the engine really does run
its next tick before the last one is on disk.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

from adapters.offline_mind import OfflineMind
from engine import HearthEngine
from storage import Storage
from storage.gardener_db import GardenerStore
from storage.schema import HEARTH_TABLES


def _dump(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in sorted(HEARTH_TABLES - {"tick_metrics"})}  # timings differ
    finally:
        conn.close()


@contextmanager
def _write_lock_for(db: Path, seconds: float):
    """Hold SQLite's write lock from another connection for `seconds` once the block
    has been left, so a write handed over inside the block is still waiting then."""
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def release() -> None:
        conn.execute("ROLLBACK")
        conn.close()
        released.set()

    try:
        yield released
    finally:
        threading.Timer(seconds, release).start()


async def _run(data: Path, agents: Path, config, ticks: int, *, behind: bool) -> int:
    async with Storage(data) as storage:
        seed = (await storage.world.get_world_state()).seed
        people = {a.name: a.personality for a in await storage.agents.get_all_agents()}
        engine = await HearthEngine.open(storage, config, mind=OfflineMind(seed, people),
                              agents_dir=agents)
        if behind:
            engine.write_behind_on()
        try:
            for _ in range(ticks):
                await engine.tick_once()
        finally:
            await engine.close()
        return engine.committer.commits


async def test_a_run_written_behind_ends_row_for_row_as_one_written_at_once(
    small_world: Path, config, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(small_world, other)
    commits = await _run(small_world, tmp_path / "a1", config, 40, behind=True)
    await _run(other, tmp_path / "a2", config, 40, behind=False)
    behind, at_once = _dump(small_world / "world.db"), _dump(other / "world.db")
    assert behind == at_once
    assert behind["world_state"][0][4] == 40 and len(behind["turns"]) > 40
    assert commits == 40  # one transaction a tick either way
    for data in (small_world, other):  # every tick's metrics, and each event logged once
        with sqlite3.connect(data / "world.db") as conn:
            assert conn.execute("SELECT COUNT(*) FROM tick_metrics").fetchone() == (40,)
            events = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        lines = (data / "events.jsonl").read_text().splitlines()
        assert len(lines) == events > 40
    assert (tmp_path / "a1").exists()
    for home in (tmp_path / "a1").iterdir():  # journals written once, not once a retry
        assert (home / "journal.md").read_text() == (tmp_path / "a2" / home.name /
                                                      "journal.md").read_text()


async def test_a_tick_returns_before_its_write_lands_and_flush_waits_for_it(
    make_engine, scripted, small_world: Path
) -> None:
    mind = scripted(lambda s: [("walk", {"direction": "east"})])
    mind.answers_at_once = True
    db = small_world / "world.db"
    async with make_engine(mind) as engine:
        engine.write_behind_on()
        await engine.tick_once()
        await engine.flush()  # or tick 0's write could still be waiting for the lock
        with _write_lock_for(db, 0.3) as released:
            ctx = await engine.tick_once()
            assert ctx.completed and engine.tick == 2
        assert not released.is_set()
        assert _dump(db)["world_state"][0][4] == 1  # tick 1 is still on its way
        await engine.flush()
        assert released.is_set()
        assert _dump(db)["world_state"][0][4] == 2
        assert len(_dump(db)["turns"]) == 2 * len(ctx.turn_results)


async def test_a_request_judged_in_a_write_still_in_flight_is_not_judged_again(
    make_engine, scripted, small_world: Path
) -> None:
    idle = scripted(lambda s: [])
    idle.answers_at_once = True
    db = small_world / "world.db"
    async with make_engine(idle) as engine:
        engine.write_behind_on()
        with GardenerStore(db) as store:
            store.add_cycle(engine.tick, "CRITICAL", "[]", "{}", "test", "{}", "a test", None,
                            [("weather", json.dumps({"weather": "foggy"}))])
        with _write_lock_for(db, 0.3):
            first = await engine.tick_once()  # judges it; its outcome waits behind the lock
        second = await engine.tick_once()
        await engine.flush()
    judged = [e for ctx in (first, second) for e in ctx.events
              if e.event_type in ("gardener_intervention", "gardener_refused")]
    assert len(judged) == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM gardener_requests").fetchall() == [("applied",)]


async def test_a_journal_guarded_by_a_write_in_flight_waits_for_it_before_changing(
    make_engine, scripted, small_world: Path
) -> None:
    writes = scripted(lambda s: [("append_file", {"path": "journal.md",
                                                  "text": f"tick {s.tick}\n"})])
    writes.answers_at_once = True
    db = small_world / "world.db"
    seen: list[tuple[str, int, int]] = []
    async with make_engine(writes) as engine:
        engine.write_behind_on()
        original = engine.file_undo.before_change

        def before_change(agent, tick, files, path) -> None:
            with sqlite3.connect(db) as conn:  # is the agent's last turn on disk yet?
                (done,) = conn.execute("SELECT COUNT(*) FROM turns WHERE agent = ? "
                                       "AND tick = ?", (agent, tick - 1)).fetchone()
            seen.append((agent, tick, done))
            original(agent, tick, files, path)

        engine.file_undo.before_change = before_change
        await engine.tick_once()
        await engine.flush()
        with _write_lock_for(db, 0.3):
            await engine.tick_once()  # its write waits behind the lock
        await engine.tick_once()  # must not replace tick 1's undo log before it lands
        await engine.flush()
    later = [s for s in seen if s[1] >= 1]
    assert later and all(done == 1 for _, _, done in later)
