"""A tidy data folder (issue 39), through the real CLI in subprocesses: after a run's
end or its Ctrl+C, world.db-wal is empty or gone though a reader stays open beside it
(as `--watch` does), and snapshots/ holds whole snapshots only; what a run could not
clean up is named by --status and --check, and the next writer cleans it."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
from pathlib import Path

from tests.e2e.processes import PROJECT, clean_env, hearth_args

SNAPSHOT = re.compile(r"^snapshot_\d+\.db$")


def _hearth(where: Path, *args: str) -> subprocess.CompletedProcess:
    """`hearth` on `where`'s world, not at a terminal (stdin too: plain `hearth` then
    prints the status and map instead of opening the observer)."""
    return subprocess.run(hearth_args(where, "--config-dir", str(where / "config"), *args),
                          capture_output=True, text=True, timeout=120, cwd=PROJECT,
                          env=clean_env(), stdin=subprocess.DEVNULL)


def _start(where: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(hearth_args(where, "--config-dir", str(where / "config"), *args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=PROJECT, env={**clean_env(), "PYTHONUNBUFFERED": "1"},
                            stdin=subprocess.DEVNULL)


def _world(where: Path) -> Path:
    """A 40x40 world, a snapshot every 2 ticks and one kept besides the first, lived one
    tick (so world.db is in WAL mode from then on); gives its data folder."""
    config = where / "config"
    config.mkdir(parents=True)
    for source in (PROJECT / "config").glob("*.yaml"):
        (config / source.name).write_text(source.read_text())
    settings = config / "settings.yaml"
    text = settings.read_text()
    text, every = re.subn(r"snapshot_every_ticks: \d+", "snapshot_every_ticks: 2", text)
    text, keep = re.subn(r"snapshots_keep: \d+", "snapshots_keep: 1", text)
    assert every == keep == 1
    settings.write_text(text)
    for args in (("--init", "--size", "40x40", "--seed", "7"),
                 ("--run", "1", "--quiet", "--mind", "offline")):
        done = _hearth(where, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    return where / "data"


def _reader(data: Path) -> sqlite3.Connection:
    """A read-only connection that has read the world, kept open beside the writer."""
    conn = sqlite3.connect(f"{(data / 'world.db').resolve().as_uri()}?mode=ro", uri=True,
                           isolation_level=None)
    conn.execute("SELECT tick FROM world_state").fetchone()
    return conn


def _log_size(data: Path) -> int:
    """world.db-wal's size from a stat (never an open: see CLAUDE.md); 0 if absent."""
    try:
        return os.stat(data / "world.db-wal").st_size
    except FileNotFoundError:
        return 0


def _only_whole_snapshots(data: Path) -> list[str]:
    names = sorted(p.name for p in (data / "snapshots").iterdir())
    assert all(SNAPSHOT.match(name) for name in names), names
    for name in names:
        uri = f"{(data / 'snapshots' / name).resolve().as_uri()}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
    return names


def _until_tick(proc: subprocess.Popen, tick: int) -> None:
    """Read the run's --json lines (one a tick) until it has lived past `tick`."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["tick"] >= tick:
            return
    raise AssertionError(f"the run ended before tick {tick}")


def test_a_run_leaves_an_empty_log_and_whole_snapshots_beside_a_reader(
    tmp_path: Path
) -> None:
    data = _world(tmp_path)
    reader = _reader(data)
    try:
        ran = _hearth(tmp_path, "--run", "7", "--quiet", "--mind", "offline")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert _log_size(data) == 0
    finally:
        reader.close()
    assert _log_size(data) == 0
    # snapshots of ticks 2, 4, 6, 8 were taken; the newest is kept, and the first for good
    assert _only_whole_snapshots(data) == ["snapshot_0.db", "snapshot_8.db"]


def test_ctrl_c_leaves_an_empty_log_and_whole_snapshots_beside_a_reader(
    tmp_path: Path
) -> None:
    data = _world(tmp_path)
    reader = _reader(data)
    try:
        proc = _start(tmp_path, "--run", "100000", "--mind", "offline", "--json")
        _until_tick(proc, 6)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out[-2000:] + err
        assert _log_size(data) == 0
    finally:
        reader.close()
    names = _only_whole_snapshots(data)
    assert names[0] == "snapshot_0.db" and len(names) == 2, names


def test_a_log_a_reader_held_and_stray_side_files_are_named_then_cleaned(
    tmp_path: Path
) -> None:
    data = _world(tmp_path)
    proc = _start(tmp_path, "--run", "100000", "--mind", "offline", "--json")
    _until_tick(proc, 4)
    reader = _reader(data)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM events").fetchone()  # holds the log as it is
    try:
        _until_tick(proc, 6)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out[-2000:] + err  # the exit neither hung nor failed
        assert "Traceback" not in out + err
    finally:
        reader.execute("COMMIT")
        reader.close()
    left = _log_size(data)
    assert left > 0
    snaps = data / "snapshots"
    (snaps / "snapshot_98.db-wal").write_bytes(b"")  # as an older Hearth left them
    (snaps / "snapshot_98.db-shm").write_bytes(bytes(32768))

    status = _hearth(tmp_path, "--status")
    assert status.returncode == 0, status.stderr
    said = [line.strip() for line in status.stdout.splitlines() if "left over:" in line]
    assert len(said) == 2, status.stdout
    assert said[0].startswith(f"left over: {data / 'world.db-wal'}: write-ahead log")
    assert "folds it into world.db" in said[0]
    assert said[1].startswith(f"left over: {snaps}: 2 -wal/-shm file(s) of snapshots no "
                              "longer kept (32 KiB)")
    as_json = _hearth(tmp_path, "--status", "--json")
    leftovers = json.loads(as_json.stdout)["leftovers"]
    assert [(x["path"], x["files"], x["bytes"]) for x in leftovers] == [
        (str(data / "world.db-wal"), 1, left), (str(snaps), 2, 32768)]
    check = _hearth(tmp_path, "--check")
    assert check.returncode == 0, check.stdout + check.stderr  # leftovers are no damage
    lines = check.stdout.splitlines()
    assert [line for line in lines if line.startswith("left over:")] == said
    assert lines[-1].endswith("no problems found")

    opened = _hearth(tmp_path)  # plain `hearth`, the fix both lines name
    assert opened.returncode == 0, opened.stdout + opened.stderr
    assert _log_size(data) == 0
    _only_whole_snapshots(data)
    again = _hearth(tmp_path, "--status")
    assert "left over" not in again.stdout
