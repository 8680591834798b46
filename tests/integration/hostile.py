"""What the hostile tests share (issue 26): a fingerprint of a folder, a bounded wait,
the real CLI with a deadline, a device node and a record of what opened it, and the
checks every case ends with (`assert_unharmed`).

Every hostile case makes the same four checks, here so that none is left out:

- **0 tracebacks**: the `no_tracebacks` fixture (no log record carries one) and, for
  the CLI, `assert_unharmed(..., output=)`: "Traceback" in nothing it printed;
- **0 files touched outside**: `snapshot(outside)` before and after (listing, kind,
  size, mtime and SHA-256, never following a link), `outside` being where an escape
  would land (a planted link's or hard link's target folder); for a device node,
  `device_opens` records every open of it in this process, whatever its name by then;
- **0 hangs**: `within` (in-process, on a thread with a deadline) or `hearth` (a
  subprocess with a timeout); a FIFO is unblocked when the deadline is missed;
- **integrity**: `PRAGMA integrity_check` on world.db is 'ok' afterwards.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import hashlib
import inspect
import io
import logging
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

PROJECT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0
"""How long any one hostile run may take before it counts as hung."""
NULL_DEVICE = (1, 3)
"""The major and minor numbers of /dev/null: a device node that is harmless to open."""
MAKES_A_DEVICE = pytest.mark.needs_root("makes a device node")
"""On every test (or parameter) that calls `make_device`: only root may make one."""
OPENED_BY_OPEN = -1
"""In `device_opens`' record: opened with open() or Path.open (always blocking)."""


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry below `folder` (itself included): kind, size, mtime and content hash
    (a link's target for a link), never following a link."""
    seen: dict[str, tuple] = {}
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in [".", *dirs, *files]:
            path = Path(here) / name
            info = os.lstat(path)
            digest = ""
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                digest = os.readlink(path)
            key = os.path.relpath(path, folder)
            seen[key] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns, digest)
    return seen


def integrity(db: Path) -> str:
    """`PRAGMA integrity_check` of a world's database, through SQLite."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=DEADLINE)
    try:
        return "; ".join(str(row[0]) for row in conn.execute("PRAGMA integrity_check"))
    finally:
        conn.close()


def assert_unharmed(before: dict[str, tuple], outside: Path, db: Path | None = None,
                    output: str = "") -> None:
    """What every hostile case ends with: nothing in `outside` changed since `before`
    (its `snapshot`), `db` (a world's database, if the case has one) passes SQLite's
    integrity check, and no traceback is in `output` (what a CLI run printed)."""
    assert "Traceback" not in output, output[-3000:]
    after = snapshot(outside)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"changed outside {outside}: {changed}"
    if db is not None:
        assert db.is_file(), f"no world at {db}"
        assert integrity(db) == "ok", db


@pytest.fixture
def no_tracebacks(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Fails the case if any log record carried a traceback (gives `caplog`)."""
    caplog.set_level(logging.INFO)
    yield caplog
    traced = [r.getMessage() for r in caplog.records
              if r.exc_info or "Traceback" in r.getMessage()]
    assert traced == [], traced


# -- bounded waits -------------------------------------------------------------------


def unblock(fifo: Path) -> None:
    """Open a FIFO both ways without waiting, so a writer or reader stuck on it goes on."""
    for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_RDWR | os.O_NONBLOCK):
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, flags))


def within(seconds: float, make: Callable[[], Any], fifos: Sequence[Path] = ()) -> Any:
    """Run `make()` in a thread (a coroutine it gives on its own loop); fail (after
    freeing any FIFO) if it takes longer than `seconds`."""
    outcome: dict[str, Any] = {}

    def go() -> None:
        try:
            value = make()
            outcome["value"] = asyncio.run(value) if inspect.iscoroutine(value) else value
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            unblock(fifo)
        thread.join(10)
        pytest.fail(f"hung for more than {seconds}s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def hearth(where: Path, *args: str, timeout: float = DEADLINE,
           fifos: Sequence[Path] = ()) -> subprocess.CompletedProcess:
    """The real CLI on `where`/data and `where`/agents, in a subprocess with no API key;
    fails (after freeing any FIFO) if it takes longer than `timeout`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "HEARTH_DATA_DIR", "HEARTH_AGENTS_DIR")}
    env["PYTHONUNBUFFERED"] = "1"
    try:
        return subprocess.run(
            [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
             "--agents-dir", str(where / "agents"), *args],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=PROJECT)
    except subprocess.TimeoutExpired:
        for fifo in fifos:
            unblock(fifo)
        pytest.fail(f"hearth {' '.join(args)} hung for more than {timeout}s")


def one_line(printed: str) -> str:
    """The one line a refused run printed (to stderr): fails if it printed more."""
    lines = [line for line in printed.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


# -- device nodes ----------------------------------------------------------------------


def make_device(at: Path) -> None:
    """A character device node at `at` with /dev/null's numbers. Only root may make one:
    a test calling this carries MAKES_A_DEVICE, so it is skipped for anyone else, and as
    root it fails here, loudly, if the node cannot be made."""
    at.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        at.unlink()
    os.mknod(at, stat.S_IFCHR | 0o600, os.makedev(*NULL_DEVICE))


@contextlib.contextmanager
def device_opens(*nodes: Path) -> Iterator[list[int]]:
    """Record the flags of every `os.open` (OPENED_BY_OPEN for `open()`/`Path.open`) in
    this process that reaches one of these device nodes, known by their inode and mode,
    so a node renamed meanwhile is still recognised (and /dev/null itself is not)."""
    watched = {(info.st_dev, info.st_ino, info.st_mode) for info in map(os.lstat, nodes)}
    opened: list[int] = []
    real_os_open, real_io_open, real_open = os.open, io.open, builtins.open

    def note(fd: int, flags: int) -> None:
        with contextlib.suppress(OSError):
            info = os.fstat(fd)
            # The mode too: a file made after the node's name went may reuse its inode.
            if (info.st_dev, info.st_ino, info.st_mode) in watched:
                opened.append(flags)

    def os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_os_open(path, flags, *args, **kwargs)
        note(fd, flags)
        return fd

    def make_open(real: Callable[..., Any]) -> Callable[..., Any]:
        def opener(*args: Any, **kwargs: Any) -> Any:
            handle = real(*args, **kwargs)
            with contextlib.suppress(AttributeError, ValueError, OSError):
                note(handle.fileno(), OPENED_BY_OPEN)
            return handle
        return opener

    os.open, io.open, builtins.open = os_open, make_open(real_io_open), make_open(real_open)
    try:
        yield opened
    finally:
        os.open, io.open, builtins.open = real_os_open, real_io_open, real_open


def assert_never_written_or_waited_on(opened: Sequence[int]) -> None:
    """What `device_opens` recorded: at most opened to read, without waiting."""
    for flags in opened:
        assert flags != OPENED_BY_OPEN, "a device node was opened with open()"
        assert flags & os.O_ACCMODE == os.O_RDONLY, f"a device opened to write ({flags:#o})"
        assert flags & os.O_NONBLOCK, f"a device opened blocking ({flags:#o})"
