"""The writer lock: counted within a process, exclusive between processes, gone with them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from storage import Storage, StorageError, WorldBusyError
from storage.world_lock import LOCK_FILENAME, WorldLock, held_here

HOLD = ("import sys, time; sys.path.insert(0, sys.argv[2]);"
        "from storage.world_lock import WorldLock;"
        "lock = WorldLock(__import__('pathlib').Path(sys.argv[1])).acquire();"
        "print('held', flush=True); sys.stdin.readline()")


def _holder(data_dir: Path) -> subprocess.Popen:
    project = str(Path(__file__).resolve().parents[3])
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(data_dir), project],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.hostile
async def test_a_world_held_by_another_process_cannot_be_opened_for_writing(
    tmp_path: Path
) -> None:
    data = tmp_path / "data"
    async with Storage(data):
        pass  # a world file exists
    other = _holder(data)
    try:
        with pytest.raises(WorldBusyError, match=f"process {other.pid} "):
            await Storage(data, create=False).open()
        async with Storage(data, create=False, read_only=True) as reader:  # reading is fine
            assert reader.db_path.exists()
    finally:
        other.communicate("\n", timeout=30)
    async with Storage(data, create=False):  # its end released the lock
        assert held_here(data)
    assert not held_here(data)


def test_the_lock_is_counted_within_a_process(tmp_path: Path) -> None:
    outer = WorldLock(tmp_path).acquire()
    inner = WorldLock(tmp_path).acquire()
    inner.release()
    assert held_here(tmp_path)
    outer.release()
    assert not held_here(tmp_path)
    assert (tmp_path / LOCK_FILENAME).read_text() == ""  # nobody claims it now


@pytest.mark.hostile
def test_a_lock_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep me")
    (tmp_path / LOCK_FILENAME).symlink_to(target)
    with pytest.raises(StorageError, match="cannot take the world's writer lock"):
        WorldLock(tmp_path).acquire()
    assert target.read_text() == "keep me"


@pytest.mark.hostile
def test_a_lock_file_that_is_a_fifo_is_refused_in_a_line(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / LOCK_FILENAME)
    with pytest.raises(StorageError, match="cannot take the world's writer lock.*move it aside"):
        WorldLock(tmp_path).acquire()
    assert not held_here(tmp_path)
