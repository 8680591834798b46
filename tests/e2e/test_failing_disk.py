"""A failing disk and a read-only one, for real: one line, exit 1, and the next run goes on.

The world's folders sit on a real file system that fails when told to
(tests/e2e/fuse_disk.py: FUSE, so the kernel hands `hearth` the very errno a
failing disk gives: EIO, or EROFS for a disk gone read-only), or on a tmpfs the
kernel itself remounts read-only. A run meets the fault at start-up or mid-run
(paused by SIGSTOP after a few ticks, or with no pause at all); it must end with
exit 1 and exactly one line on stderr naming the disk's trouble and where, with no
traceback. Then the disk heals, `--check` finds the world sound, nothing outside
the world's folders was touched, and the run resumed to the same total of ticks
ends identical, row for row and file for file, to an undisturbed run.
"""

from __future__ import annotations

import errno
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.e2e.fuse_disk import CHANGES, FaultyDisk, faulty_disk
from tests.e2e.processes import PROJECT, clean_env
from tests.e2e.worlds import (
    TOTAL,
    copy_world,
    live_undisturbed,
    make_world,
    resume,
    run,
    run_args,
    tick_of,
    world,
)
from tests.integration.hostile import snapshot

pytestmark = [pytest.mark.hostile,
              pytest.mark.needs_root("mounts a FUSE file system and a tmpfs")]

FAILED = "failed"
READ_ONLY = "read-only"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_world(tmp_path_factory.mktemp("made"))


@pytest.fixture(scope="module")
def undisturbed(made: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return live_undisturbed(made, tmp_path_factory.mktemp("undisturbed"))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the world's: nothing Hearth does may touch it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "notes.txt").write_text("not Hearth's\n")
    (folder / "deep").mkdir()
    (folder / "deep" / "hosts").write_text("127.0.0.1 localhost\n")
    return folder


def assert_one_line(done: subprocess.CompletedProcess, what: str | tuple[str, ...],
                    where: Path) -> None:
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    assert done.returncode == 1, said
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("hearth: "), lines[0]
    words = (what,) if isinstance(what, str) else what
    assert any(w in lines[0] for w in words) and str(where) in lines[0], lines[0]


def failed_mid_run(data: Path, homes: Path, disk: FaultyDisk, after: int, code: int,
                   ops: frozenset[str] = CHANGES) -> subprocess.CompletedProcess:
    """`--run TOTAL`, paused (SIGSTOP) once it has printed `after` ticks, the disk made
    to fail meanwhile, then let go on."""
    proc = subprocess.Popen(run_args(data, homes, "--run", str(TOTAL), "--json"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=PROJECT, env={**clean_env(), "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if len(seen) == after:
                proc.send_signal(signal.SIGSTOP)
                disk.fail(code, ops)
                proc.send_signal(signal.SIGCONT)
                break
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(seen) == after, "the run ended before the disk failed"
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(seen) + out, err)


def healed_and_resumed(disk: FaultyDisk, data: Path, homes: Path, undisturbed: dict,
                       outside: Path, before: dict) -> None:
    disk.heal()
    checked = run(data, homes, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    resume(data, homes)
    assert world(data, homes) == undisturbed
    assert snapshot(outside) == before


@pytest.mark.parametrize(("after", "code", "what"), [
    (1, errno.EIO, FAILED), (6, errno.EIO, FAILED),
    # The FUSE mount is not flagged read-only, so SQLite's "disk I/O error" is all
    # Hearth may know; a file of its own meeting EROFS first says read-only.
    (4, errno.EROFS, (READ_ONLY, FAILED))])
def test_the_data_disk_failing_mid_run_stops_it_in_a_line_and_the_next_run_goes_on(
        made: Path, undisturbed: dict, tmp_path: Path, outside: Path,
        after: int, code: int, what: str | tuple[str, ...]) -> None:
    before = snapshot(outside)
    with faulty_disk(tmp_path / "backing", tmp_path / "disk") as disk:
        data, homes = copy_world(made, disk.mount / "data", tmp_path / "agents")
        done = failed_mid_run(data, homes, disk, after, code)
        assert disk.refused, "the run never met the failing disk"
        assert_one_line(done, what, disk.mount / "data")
        disk.heal()
        assert tick_of(data) < TOTAL
        healed_and_resumed(disk, data, homes, undisturbed, outside, before)


def test_homes_on_a_failing_disk_stop_the_run_in_a_line(
        made: Path, undisturbed: dict, tmp_path: Path, outside: Path) -> None:
    """A file tool's write, its undo log or .status meets the fault: the turn is not
    recorded as failed but taken again by the next run."""
    before = snapshot(outside)
    with faulty_disk(tmp_path / "backing", tmp_path / "disk") as disk:
        data, homes = copy_world(made, tmp_path / "data", disk.mount / "agents")
        done = failed_mid_run(data, homes, disk, 3, errno.EIO)
        assert_one_line(done, FAILED, disk.mount / "agents")
        healed_and_resumed(disk, data, homes, undisturbed, outside, before)


def test_only_fsync_failing_stops_the_run_and_loses_nothing(
        made: Path, undisturbed: dict, tmp_path: Path, outside: Path) -> None:
    """Writes land but cannot be made durable: Hearth must not go on as if they were."""
    before = snapshot(outside)
    with faulty_disk(tmp_path / "backing", tmp_path / "disk") as disk:
        data, homes = copy_world(made, disk.mount / "data", tmp_path / "agents")
        done = failed_mid_run(data, homes, disk, 2, errno.EIO,
                              frozenset({"fsync", "fsyncdir"}))
        assert_one_line(done, FAILED, disk.mount / "data")
        healed_and_resumed(disk, data, homes, undisturbed, outside, before)


def test_a_disk_that_cannot_be_read_at_start_up_is_named_in_a_line(
        made: Path, undisturbed: dict, tmp_path: Path, outside: Path) -> None:
    before = snapshot(outside)
    with faulty_disk(tmp_path / "backing", tmp_path / "disk") as disk:
        data, homes = copy_world(made, disk.mount / "data", tmp_path / "agents")
        run(data, homes, "--run", "2", "--quiet")  # a WAL to read, as after any run
        disk.fail(errno.EIO, frozenset({"read"}))
        for words in (("--run", "5"), ("--status",), ("--check",), ("--map",)):
            assert_one_line(run(data, homes, *words), FAILED, disk.mount / "data")
        assert ("read", "data/world.db") in disk.refused
        disk.heal()
        assert tick_of(data) == 2
        healed_and_resumed(disk, data, homes, undisturbed, outside, before)


def test_a_disk_failing_at_a_moment_no_one_chose_loses_nothing(
        made: Path, tmp_path: Path, outside: Path) -> None:
    """No pause: the disk fails while ticks run (a commit, the WAL, an undo log,
    events.jsonl may each be the one that meets it)."""
    before = snapshot(outside)
    with faulty_disk(tmp_path / "backing", tmp_path / "disk") as disk:
        data, homes = copy_world(made, disk.mount / "data", disk.mount / "agents")
        proc = subprocess.Popen(run_args(data, homes, "--run", "100000", "--json"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=PROJECT, env={**clean_env(), "PYTHONUNBUFFERED": "1"})
        try:
            assert proc.stdout is not None
            for seen, _ in enumerate(proc.stdout, 1):
                if seen == 4:
                    timer = threading.Timer(0.0137, disk.fail, (errno.EIO,))
                    timer.start()
                    break
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert_one_line(subprocess.CompletedProcess(proc.args, proc.returncode, out, err),
                        FAILED, disk.mount)
        disk.heal()
        lived = tick_of(data) + 5
        resume(data, homes, lived)
        calm = tmp_path / "calm"
        calm_data, calm_homes = copy_world(made, calm / "data", calm / "agents")
        assert run(calm_data, calm_homes, "--run", str(lived), "--quiet").returncode == 0
        assert world(data, homes) == world(calm_data, calm_homes)
        assert snapshot(outside) == before


def test_a_disk_the_kernel_made_read_only_is_refused_before_anything_changes(
        made: Path, undisturbed: dict, tmp_path: Path, outside: Path) -> None:
    """Not FUSE: a tmpfs remounted read-only by the kernel (root may), the world on it."""
    disk = tmp_path / "ro"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.fail(f"mounting a tmpfs failed ({mounted.stderr.strip()}); these tests "
                    "need root, and as root they are never skipped", pytrace=False)
    before = snapshot(outside)
    try:
        data, homes = copy_world(made, disk / "data", disk / "agents")
        assert run(data, homes, "--run", "3", "--quiet").returncode == 0
        remount = subprocess.run(["mount", "-o", "remount,ro", str(disk)],
                                 capture_output=True, text=True)
        assert remount.returncode == 0, remount.stderr
        frozen = snapshot(disk)
        for words in (("--run", "5"), ("--run", "1", "--json")):
            started = time.monotonic()
            assert_one_line(run(data, homes, *words, timeout=60), READ_ONLY, disk)
            assert time.monotonic() - started < 30
        assert snapshot(disk) == frozen
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        resume(data, homes)
        assert world(data, homes) == undisturbed
        assert snapshot(outside) == before
    finally:
        gone = subprocess.run(["umount", str(disk)], capture_output=True, text=True)
        assert gone.returncode == 0, gone.stderr
