"""Each world knows who it is, and a file another world left is never read as its own.

The identity is made when the database is (storage/schema.py, migration 8). Undo logs
carry it, snapshots carry it (they are copies of the database), and the event log is
checked by its first event: another world's undo log is never played back into these
agents' homes, its snapshots are never listed (so never pruned as "oldest", nor
offered), and its event log is set aside (kept) while this world's is written anew.
"""

from __future__ import annotations

import json
from pathlib import Path

from adapters.agent_files import AgentFiles
from adapters.file_undo import FileUndoLog
from adapters.offline_mind import OfflineMind
from config import HearthConfig, load_config
from engine import HearthEngine
from services.world_setup import create_world
from storage import Storage
from storage.snapshots import SnapshotManager


def _config() -> HearthConfig:
    return load_config(None)


async def _world(data: Path, seed: int) -> str:
    async with Storage(data) as storage:
        await create_world(storage, _config(), seed=seed, size=(32, 24), agent_count=2)
        assert storage.world_id is not None and len(storage.world_id) == 32
        return storage.world_id


async def test_every_world_has_its_own_identity(tmp_path: Path) -> None:
    first = await _world(tmp_path / "one", 1)
    second = await _world(tmp_path / "two", 1)  # the same seed, still another world
    assert first != second
    async with Storage(tmp_path / "one", create=False, read_only=True) as again:
        assert again.world_id == first


def test_another_worlds_undo_log_is_kept_aside_and_never_played_back(tmp_path: Path) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    (home / "journal.md").write_text("This world's entry.\n")
    theirs = FileUndoLog(tmp_path / "undo", world_id="a" * 32)
    theirs.before_change("Ember", 7, AgentFiles(home), "journal.md")
    (home / "journal.md").write_text("This world's entry.\nAnd today's.\n")
    ours = FileUndoLog(tmp_path / "undo", world_id="b" * 32)
    assert ours.pending() == []
    assert (home / "journal.md").read_text() == "This world's entry.\nAnd today's.\n"
    [kept] = (tmp_path / "undo" / "foreign").iterdir()
    assert json.loads(kept.read_text())["world"] == "a" * 32
    mine = FileUndoLog(tmp_path / "undo2", world_id="b" * 32)
    mine.before_change("Ember", 8, AgentFiles(home), "journal.md")
    assert [(a, t) for a, t, _ in FileUndoLog(tmp_path / "undo2", "b" * 32).pending()] == [
        ("Ember", 8)]


async def test_another_worlds_snapshots_are_neither_listed_nor_pruned(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    await _world(old, 1)
    new_id = await _world(new, 2)
    async with Storage(old, create=False) as storage:
        foreign = await storage.snapshots.create(storage.db, 500)
    shared = new / "snapshots"
    shared.mkdir()
    stray = shared / foreign.name
    foreign.replace(stray)
    async with Storage(new, create=False) as storage:
        mine = [await storage.snapshots.create(storage.db, t) for t in (1, 2, 3)]
        assert [p for _, p in storage.snapshots.list()] == mine
        assert storage.snapshots.prune(1) == mine[:2]
        assert storage.snapshots.latest() == mine[2]
    assert stray.exists()  # another world's copy: left alone
    assert [p.name for _, p in SnapshotManager(shared, new_id).list()] == [mine[2].name]


async def test_another_worlds_event_log_is_set_aside_and_this_worlds_written(
    tmp_path: Path
) -> None:
    data = tmp_path / "data"
    await _world(data, 1)
    stray = ['{"seq":1,"type":"weather_changed","weather":"rainy","tick":0}',
             '{"seq":2,"type":"weather_changed","weather":"foggy","tick":1}']
    (data / "events.jsonl").write_text("\n".join(stray) + "\n")
    async with Storage(data, create=False) as storage:
        state = await storage.world.get_world_state()
        residents = await storage.agents.get_all_agents()
        mind = OfflineMind(state.seed, {a.name: a.personality for a in residents})
        engine = await HearthEngine.open(
            storage, _config(), mind=mind, agents_dir=tmp_path / "agents")
        for _ in range(3):
            await engine.tick_once()
        await engine.close()
        seqs = [s for s, _ in await storage.engine.events_after(0)]
    [aside] = list(data.glob("events.foreign.*.jsonl"))
    assert aside.read_text().splitlines() == stray  # kept, word for word
    logged = [json.loads(line)["seq"] for line in (data / "events.jsonl").read_text().splitlines()]
    assert logged == seqs and seqs
