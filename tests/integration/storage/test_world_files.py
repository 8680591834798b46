"""Setting a world aside is cut at every step it has, and `recover` makes it whole again.

A SIGKILL lands between two renames (tests/e2e/test_init_killed.py kills real
processes, but a random moment rarely falls inside the few milliseconds the moves
take). Here every rename of `set_aside` and `install` in turn is made to fail, as a
kill there would leave things, and then the data folder must hold the whole old
world, or no world with the old one whole in a backup; after `recover`, never a
partial backup under a complete-looking name.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from storage import world_files
from storage.world_files import install, new_staging, recover, set_aside


class Killed(Exception):
    """Where the process died."""


def _world(folder: Path, seed: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(folder / "world.db")
    conn.execute("CREATE TABLE world_state (seed INTEGER)")
    conn.execute("INSERT INTO world_state VALUES (?)", (seed,))
    conn.commit()
    conn.close()


def _seed(db: Path) -> int | None:
    if not db.exists():
        return None
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT seed FROM world_state").fetchone()[0])
    finally:
        conn.close()


def _old(tmp_path: Path) -> tuple[Path, Path]:
    data, homes = tmp_path / "data", tmp_path / "agents"
    _world(data, 1)
    (data / "events.jsonl").write_text('{"seq": 1}\n')
    for side in ("undo", "snapshots", "traces"):
        (data / side).mkdir()
        (data / side / "old.txt").write_text("old\n")
    (homes / "Ember").mkdir(parents=True)
    (homes / "Ember" / "journal.md").write_text("The old world's day.\n")
    return data, homes


def _whole_backup(folder: Path) -> None:
    assert _seed(folder / "world.db") == 1
    assert (folder / "events.jsonl").read_text() == '{"seq": 1}\n'
    for side in ("undo", "snapshots", "traces"):
        assert (folder / side / "old.txt").read_text() == "old\n"
    assert (folder / "agents" / "Ember" / "journal.md").read_text() == "The old world's day.\n"


def _renames_in_a_replacement(tmp_path: Path) -> int:
    data, homes = _old(tmp_path / "count")
    count = [0]
    real = os.replace

    def counting(a, b):  # noqa: ANN001, ANN202
        count[0] += 1
        return real(a, b)

    staging = new_staging(data)
    _world(staging, 2)
    world_files.os.replace = counting  # type: ignore[attr-defined]
    try:
        set_aside(data, [homes / "Ember"])
        install(staging, data)
    finally:
        world_files.os.replace = real  # type: ignore[attr-defined]
    return count[0]


def test_every_cut_in_a_replacement_leaves_a_whole_world_and_recover_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = _renames_in_a_replacement(tmp_path)
    assert steps >= 8  # database, its log and index, four side files, a home, the names
    real = os.replace
    for cut in range(steps):
        where = tmp_path / f"cut{cut}"
        data, homes = _old(where)
        staging = new_staging(data)
        _world(staging, 2)
        done = [0]

        def dying(a, b, cut=cut, done=done):  # noqa: ANN001, ANN202
            if done[0] == cut:
                raise Killed(f"killed before rename {cut}")
            done[0] += 1
            return real(a, b)

        monkeypatch.setattr(world_files.os, "replace", dying)
        with pytest.raises(Killed):
            set_aside(data, [homes / "Ember"])
            install(staging, data)
        monkeypatch.setattr(world_files.os, "replace", real)

        seed = _seed(data / "world.db")
        named = sorted((data / "backups").glob("world.replaced.*"))
        for folder in named:  # a complete-looking name is only ever on a whole backup
            _whole_backup(folder)
        if seed == 1:  # the old world, untouched and whole
            assert (data / "events.jsonl").exists() and (data / "undo" / "old.txt").exists()
            assert (homes / "Ember" / "journal.md").exists()
        recover(data)
        assert not list(data.glob(".staging-*"))
        assert not list((data / "backups").glob(".partial-*"))
        after = _seed(data / "world.db")
        if after is None:  # no world here: the old one is whole in its backup
            [folder] = sorted((data / "backups").glob("world.replaced.*"))
            _whole_backup(folder)
            assert not (data / "events.jsonl").exists()
        elif after == 1:
            assert not list((data / "backups").glob("world.replaced.*"))
            assert (data / "events.jsonl").exists()
        else:
            assert after == 2 and not (data / "events.jsonl").exists()
            [folder] = sorted((data / "backups").glob("world.replaced.*"))
            _whole_backup(folder)


def test_recover_leaves_a_whole_world_alone(tmp_path: Path) -> None:
    data, _ = _old(tmp_path)
    assert recover(data) == []
    assert _seed(data / "world.db") == 1 and (data / "events.jsonl").exists()


async def test_any_writing_open_clears_what_a_killed_init_left(tmp_path: Path) -> None:
    """Not only the next --init: a --run (any writing open) takes the lock and recovers."""
    from storage import Storage

    data = tmp_path / "data"
    async with Storage(data):
        pass
    left = new_staging(data)
    _world(left, 9)
    async with Storage(data, create=False):
        assert not left.exists()
    async with Storage(data, create=False, read_only=True):  # a reader changes nothing
        pass
