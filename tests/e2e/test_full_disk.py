"""A full disk, for real: `hearth --run` stops in one line, and the next run goes on.

Each case mounts a small tmpfs (only root may: the cases are marked needs_root, so
they skip for anyone else; as root one that cannot mount fails loudly, and a root
run never skips them), puts the world's data folder (or the agents' homes) on it, and
fills it to the brim with a filler file at some moment: before the run, after a
run that left a log behind, or mid-run (the program paused by SIGSTOP after a few
ticks, or a filler racing it). The run must end with exit 1 and exactly one line
on stderr saying the disk is full and where, with no traceback anywhere. Then the
filler goes, the run is resumed to the same total of ticks, and the world must be
identical, row for row and line for line of events.jsonl, to an undisturbed run of
the same world (offline minds, one seed): no turn half-applied, lost or doubled.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

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

pytestmark = [pytest.mark.hostile, pytest.mark.needs_root("mounts a tmpfs")]

DATA_KB = 4608
"""Room for 60 ticks' WAL (~3.6 MB, unchecked in so short a run) and snapshot_0.db."""
HOMES_KB = 512
RACE_KB = 32768


# --- the disk --------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(where: Path, kb: int) -> Iterator[Path]:
    """A tmpfs of `kb` KiB mounted at `where`, unmounted however the test ends."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs",
                              str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.fail("these tests need a real full disk: mounting a tmpfs at "
                    f"{where} failed ({(mounted.stderr or mounted.stdout).strip()}); they "
                    "need root (or CAP_SYS_ADMIN), and as root they are never skipped",
                    pytrace=False)
    try:
        yield where
    finally:
        gone = subprocess.run(["umount", str(where)], capture_output=True, text=True)
        assert gone.returncode == 0, f"umount {where}: {gone.stderr.strip()}"


def fill(disk: Path, *, alone: bool = True) -> Path:
    """Fill `disk` to the last byte with one file; returns it. Only a small disk this
    test mounted: never the machine's own (a filler late for its unmount would be).
    `alone`: nothing else writes meanwhile, so the disk must be left full (a run
    racing the filler may free what it had taken once it meets the full disk)."""
    if not os.path.ismount(disk) or _size(disk) > 64 * 1024 * 1024:
        raise AssertionError(f"{disk} is not a small disk of this test's; not filling it")
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (1 << 16, 4096, 1):
            chunk = b"\0" * size
            while True:
                try:
                    os.write(fd, chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)
    if alone:
        assert os.statvfs(disk).f_bavail == 0, "the filler left room on the disk"
    return filler


def _size(disk: Path) -> int:
    info = os.statvfs(disk)
    return info.f_blocks * info.f_frsize


# --- the program -----------------------------------------------------------------------


def assert_one_full_disk_line(done: subprocess.CompletedProcess, where: Path) -> None:
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    assert done.returncode == 1, said
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("hearth: the disk holding "), lines[0]
    assert "is full" in lines[0] and str(where) in lines[0], lines[0]


# --- the worlds ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new world, never run (copied for every case, so all share one identity)."""
    return make_world(tmp_path_factory.mktemp("made"))


@pytest.fixture(scope="module")
def undisturbed(made: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return live_undisturbed(made, tmp_path_factory.mktemp("undisturbed"))


def paused_and_filled(data: Path, homes: Path, disk: Path, after: int
                      ) -> subprocess.CompletedProcess:
    """`--run TOTAL`, stopped (SIGSTOP) once it has printed `after` ticks, the disk
    filled meanwhile, then let go on."""
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
                try:
                    fill(disk)
                finally:
                    proc.send_signal(signal.SIGCONT)
                break
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(seen) + out, err)


# --- the cases -------------------------------------------------------------------------


def test_a_disk_full_before_the_run_stops_it_in_a_line(
        made: Path, undisturbed: dict, tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", DATA_KB) as disk:
        data, homes = copy_world(made, disk / "data", tmp_path / "agents")
        filler = fill(disk)
        assert_one_full_disk_line(run(data, homes, "--run", str(TOTAL)), disk / "data")
        assert tick_of(data) == 0
        filler.unlink()
        resume(data, homes)
        assert world(data, homes) == undisturbed


def test_a_disk_filled_between_runs_stops_the_next_at_start_up(
        made: Path, undisturbed: dict, tmp_path: Path) -> None:
    """After a run the WAL index must grow as the next opens the world: it cannot."""
    with small_disk(tmp_path / "disk", DATA_KB) as disk:
        data, homes = copy_world(made, disk / "data", tmp_path / "agents")
        first = run(data, homes, "--run", "7", "--quiet")
        assert first.returncode == 0, first.stderr
        filler = fill(disk)
        assert_one_full_disk_line(run(data, homes, "--run", str(TOTAL)), disk / "data")
        assert_one_full_disk_line(run(data, homes, "--run", "1", "--json"), disk / "data")
        filler.unlink()
        assert tick_of(data) == 7
        resume(data, homes)
        assert world(data, homes) == undisturbed


@pytest.mark.parametrize("after", [1, 6])
def test_a_disk_filled_mid_run_stops_it_in_a_line_and_the_next_run_goes_on(
        made: Path, undisturbed: dict, tmp_path: Path, after: int) -> None:
    with small_disk(tmp_path / "disk", DATA_KB) as disk:
        data, homes = copy_world(made, disk / "data", tmp_path / "agents")
        done = paused_and_filled(data, homes, disk, after)
        assert_one_full_disk_line(done, disk)
        (disk / "filler").unlink()
        assert tick_of(data) < TOTAL
        resume(data, homes)
        assert world(data, homes) == undisturbed


def test_homes_on_a_full_disk_stop_the_run_in_a_line(
        made: Path, undisturbed: dict, tmp_path: Path) -> None:
    """The agents' folder fills: a file tool's write (or its undo log's, or .status)
    cannot land, and the turn is not recorded as failed but taken again next run."""
    with small_disk(tmp_path / "disk", HOMES_KB) as disk:
        data, homes = copy_world(made, tmp_path / "data", disk / "agents")
        done = paused_and_filled(data, homes, disk, 3)
        assert_one_full_disk_line(done, disk / "agents")
        (disk / "filler").unlink()
        resume(data, homes)
        assert world(data, homes) == undisturbed


def test_a_filler_racing_the_run_meets_it_anywhere(
        made: Path, undisturbed: dict, tmp_path: Path) -> None:
    """No pause: the disk fills while ticks run and are written (a commit, the WAL, the
    undo logs, events.jsonl may each be the one that meets it)."""
    with small_disk(tmp_path / "disk", RACE_KB) as disk:
        data, homes = copy_world(made, disk / "data", tmp_path / "agents")
        proc = subprocess.Popen(run_args(data, homes, "--run", "100000", "--json"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=PROJECT, env={**clean_env(), "PYTHONUNBUFFERED": "1"})
        failed: list[BaseException] = []

        def racing_filler() -> None:
            try:
                fill(disk, alone=False)
            except BaseException as exc:  # noqa: BLE001 (told to the test below)
                failed.append(exc)

        filler = threading.Thread(target=racing_filler)
        try:
            assert proc.stdout is not None
            for seen, _ in enumerate(proc.stdout, 1):
                if seen == 5:
                    filler.start()
                    break
            out, err = proc.communicate(timeout=60)
        finally:
            if filler.is_alive():
                filler.join()  # never left to fill anything after the unmount
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert filler.ident is not None, "the run ended before the disk was filled"
        assert not failed, f"the filler failed: {failed[0]!r}"
        assert_one_full_disk_line(subprocess.CompletedProcess(proc.args, proc.returncode,
                                                              out, err), disk)
        (disk / "filler").unlink()
        assert tick_of(data) > 0
        left = run(data, homes, "--run", "5", "--quiet")  # it goes on, whole
        assert left.returncode == 0, left.stdout + left.stderr
        assert "Traceback" not in left.stdout + left.stderr
        lived = tick_of(data)
        calm_data, calm_homes = copy_world(made, tmp_path / "calm" / "data",
                                           tmp_path / "calm" / "agents")
        calm = run(calm_data, calm_homes, "--run", str(lived), "--quiet")
        assert calm.returncode == 0, calm.stdout + calm.stderr
        assert world(data, homes) == world(calm_data, calm_homes)


@pytest.mark.slow
@pytest.mark.parametrize("after", [2, 3, 4, 9, 14, 20, 30])
def test_more_moments_mid_run(made: Path, undisturbed: dict, tmp_path: Path,
                              after: int) -> None:
    with small_disk(tmp_path / "disk", DATA_KB) as disk:
        data, homes = copy_world(made, disk / "data", tmp_path / "agents")
        done = paused_and_filled(data, homes, disk, after)
        assert_one_full_disk_line(done, disk)
        (disk / "filler").unlink()
        resume(data, homes)
        assert world(data, homes) == undisturbed
