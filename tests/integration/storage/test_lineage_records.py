"""A world's lineage read from real records and real worlds (storage/lineage.py).

Worlds are made by the real setup into real SQLite files, records written by the fork's
own writer (storage/lineage.write_lineage). Whatever is found (a chain that loops, a
relative folder, a record that is a link or too long or wrong, a parent whose clock went
back, a parent another process is writing) is read without an exception, and the
parent is never changed or kept from committing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from config import load_config
from services.world_setup import create_world
from storage import Storage
from storage.lineage import (
    Lineage,
    LineageRecordError,
    read_lineage,
    read_lineage_chain,
    read_record,
    write_lineage,
)


async def _world(data: Path, tick: int = 0) -> str:
    async with Storage(data) as storage:
        await create_world(storage, load_config(None), seed=3, size=(24, 20), agent_count=2)
        world_id = storage.world_id
    if tick:
        conn = sqlite3.connect(data / "world.db")
        with conn:
            conn.execute("UPDATE world_state SET tick = ?", (tick,))
        conn.close()
    assert world_id is not None
    return world_id


def _record(child: Path, parent: Path | str, world_id: str | None, tick: int) -> None:
    child.mkdir(parents=True, exist_ok=True)
    write_lineage(child, Lineage(str(parent), world_id, tick, "2026-11-28T00:00:00Z"))


async def test_a_chain_is_followed_to_its_first_world(tmp_path: Path) -> None:
    first, second, third = tmp_path / "a" / "data", tmp_path / "b" / "data", tmp_path / "c"
    _record(second, first, await _world(first, 50), 30)
    _record(third, second, await _world(second, 70), 60)
    lineage = read_lineage_chain(third)
    assert [(a.name, a.tick, a.reachable) for a in lineage.ancestors] == [
        ("b", 60, True), ("a", 30, True)]
    assert lineage.is_fork and lineage.problems() == []
    assert lineage.lived_in(10).name == "a" and lineage.lived_in(45).name == "b"
    assert lineage.lived_in(60) is None
    assert not read_lineage_chain(first).is_fork


async def test_records_naming_each_other_end_the_chain(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one_id, two_id = await _world(one, 5), await _world(two, 5)
    _record(one, two, two_id, 3)
    _record(two, "../one", one_id, 3)  # a relative folder: from the record's own folder
    lineage = read_lineage_chain(one)
    assert [Path(a.folder).resolve() for a in lineage.ancestors] == [two.resolve(),
                                                                      one.resolve()]
    assert all(a.reachable for a in lineage.ancestors)


async def test_a_parent_whose_clock_went_back_is_unreachable(tmp_path: Path) -> None:
    parent, child = tmp_path / "parent", tmp_path / "child"
    _record(child, parent, await _world(parent, 10), 40)
    (found,) = read_lineage_chain(child).ancestors
    assert not found.reachable and "clock reads 10, before the fork at tick 40" in found.problem


@pytest.mark.hostile
@pytest.mark.parametrize(("text", "why"), [
    ('{"parent": "/x", "tick": true}', "damaged"),
    ('{"parent": "/x", "tick": -1}', "damaged"),
    ('{"parent": "", "tick": 3}', "damaged"),
    ('{"tick": 3}', "damaged"),
    ('["parent", 3]', "damaged"),
    ("\xff\xfe not text", "damaged"),
    ('{"parent": "/x", "tick": 3, "pad": "' + "x" * 70_000 + '"}', "too long"),
    ('{"parent": "/x", "tick": 3, "base_snapshot": false}', "damaged"),
    ('{"parent": "/x", "tick": 3, "changed": ["Ember"]}', "damaged"),
])
def test_a_record_that_is_not_one_is_a_problem_not_an_exception(
        tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "lineage.json").write_bytes(text.encode("latin-1"))
    with pytest.raises(LineageRecordError, match=why):
        read_record(tmp_path)
    lineage = read_lineage_chain(tmp_path)
    assert lineage.is_fork and lineage.ancestors == ()
    assert lineage.problem is not None and why in lineage.problem
    assert read_lineage(tmp_path) is None  # replay and --compare: no record, as said


def test_a_record_reads_back_as_it_was_written(tmp_path: Path) -> None:
    written = Lineage("/worlds/a/data", "world-a", 40, "2026-11-28T00:00:00Z", 0,
                      {"Ember": {"personality": "Quiet."}})
    write_lineage(tmp_path, written)
    assert read_record(tmp_path) == written == read_lineage(tmp_path)
    assert read_record(tmp_path / "elsewhere") is None


@pytest.mark.hostile
async def test_a_record_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    parent, child = tmp_path / "parent", tmp_path / "child"
    _record(tmp_path / "elsewhere", parent, await _world(parent, 9), 4)
    child.mkdir()
    (child / "lineage.json").symlink_to(tmp_path / "elsewhere" / "lineage.json")
    lineage = read_lineage_chain(child)
    assert lineage.ancestors == () and "symbolic link" in lineage.problem


async def test_reading_a_parent_another_process_writes_costs_it_nothing(tmp_path: Path) -> None:
    parent, child = tmp_path / "parent", tmp_path / "child"
    world_id = await _world(parent, 12)
    _record(child, parent, world_id, 8)
    async with Storage(parent, create=False) as writer:  # its lock and connection held
        state = await writer.world.get_world_state()
        assert state is not None
        async with writer.unit_of_work() as unit:
            await writer.world.save_world_state(replace(state, tick=13))
            (found,) = read_lineage_chain(child).ancestors  # in the middle of its write
            assert found.reachable, found.problem
            await unit.commit()
        (found,) = read_lineage_chain(child).ancestors  # and between its writes
        assert found.reachable, found.problem
    conn = sqlite3.connect(f"{(parent / 'world.db').as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT tick FROM world_state").fetchone()[0] == 13
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
