"""One writer per world: an OS lock on the world's folder, held while a process may change it.

    with WorldLock(data_dir, "hearth --run 400"):
        ...  # nobody else may write this world meanwhile

SQLite would let two processes take turns writing the same file, and two Hearth
engines doing so corrupt a world without any error: each replays its own idea of
the tick, numbers events the same, undoes the other's turns at start-up. So a
process that may change a world (`--run`, the observer's engine, `--init`, a
migration) first takes an exclusive `flock` on `data_dir/writer.lock`. The OS
releases it when the process ends, however it ends, so a crash never leaves a
stale lock; a second writer is refused at once, told who holds the world.

`flock` locks belong to the open file, not to the process's other descriptors, so
unlike SQLite's POSIX record locks they are not dropped when some other descriptor
of the file is closed. Within one process the lock is counted: opening the same
world twice (making it, then running it) needs no second lock.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import stat
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

from storage.errors import FAULT_ERRNOS, StorageError, storage_fault_line

LOCK_FILENAME = "writer.lock"


class WorldBusyError(StorageError):
    """Another process is changing this world; the message names it (exit 1)."""


_held: dict[Path, list[int]] = {}
"""Per folder this process holds: [descriptor, how many holders]."""
_guard = threading.Lock()


_WHERE = ("--data-dir", "--agents-dir", "--config-dir")


def _command() -> str:
    """This process's command line, as a person would recognise it: the folders are left
    out (the message names the world's), what it does is kept."""
    words = [Path(sys.argv[0]).name or "python", *sys.argv[1:]] if sys.argv else ["python"]
    if words[0] in ("main.py", "__main__.py"):
        words[0] = "hearth"
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _WHERE:
            skip = True
        elif not word.startswith(_WHERE):
            kept.append(word)
    return " ".join(kept)[:200]


def holder(data_dir: Path) -> str | None:
    """Who holds the world, in words, from what the holder wrote; None if nobody says."""
    try:
        raw = (Path(data_dir) / LOCK_FILENAME).read_text(encoding="utf-8")
        info = json.loads(raw)
        return (f"process {int(info['pid'])} ({str(info['command'])[:200]}) since "
                f"{str(info['since'])[:19].replace('T', ' ')} UTC")
    except (OSError, ValueError, KeyError, TypeError):
        return None


class WorldLock:
    def __init__(self, data_dir: Path, *, create_dir: bool = True) -> None:
        self.data_dir = Path(data_dir)
        self.create_dir = create_dir
        self._mine = False

    def acquire(self) -> WorldLock:
        key = self.data_dir.resolve()
        with _guard:
            if key in _held:
                _held[key][1] += 1
                self._mine = True
                return self
            if self.create_dir:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            path = self.data_dir / LOCK_FILENAME
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                             0o644)
            except OSError as exc:
                raise _lock_fault(path, exc) from None
            try:
                _flock_soon(fd)
            except BlockingIOError:
                os.close(fd)
                who = holder(self.data_dir) or "another process"
                raise WorldBusyError(
                    f"{self.data_dir}: this world is being changed by {who}; one process "
                    "at a time may change a world (reading it is always fine: --status, "
                    "--map, --gardener, --view-only; an observer lets go of it once "
                    "paused)") from None
            except OSError as exc:
                os.close(fd)
                raise _lock_fault(path, exc) from None
            note = json.dumps({"pid": os.getpid(), "command": _command(),
                               "since": dt.datetime.now(dt.UTC).isoformat()})
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError(errno.EINVAL, "not a regular file")
                os.ftruncate(fd, 0)
                os.pwrite(fd, note.encode("utf-8"), 0)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # the lock holds without
                    pass  # its note (who holds it); the full disk is met, and named, next
                else:
                    os.close(fd)
                    if exc.errno in FAULT_ERRNOS:
                        raise _lock_fault(path, exc) from None
                    raise StorageError(f"{path}: cannot take the world's writer lock "
                                       f"({exc.strerror or exc}); move it aside") from None
            _held[key] = [fd, 1]
            self._mine = True
            return self

    def release(self) -> None:
        if not self._mine:
            return
        self._mine = False
        key = self.data_dir.resolve()
        with _guard:
            entry = _held.get(key)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] > 0:
                return
            del _held[key]
            fd = entry[0]
            try:
                os.ftruncate(fd, 0)  # nobody holds it now; the file stays for the next
            except OSError:
                pass
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> WorldLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


PROBE_PAUSES_S = (0.005, 0.02, 0.05)
"""Pauses between tries at the writer lock before a second writer is refused."""


def _flock_soon(fd: int) -> None:
    """Take the exclusive lock, trying again for a moment: `writer_there` (--status
    looking) holds a shared one for microseconds, and must never turn a writer away.
    A real writer holds it for its whole run, so a second is still refused at once."""
    for pause in PROBE_PAUSES_S:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(pause)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def writer_there(data_dir: Path) -> bool:
    """Whether a process holds the world's writer lock now, found by trying to share it
    without waiting (and letting go at once). Only reads: no lock file is made, nothing
    is written, and a link, FIFO or missing file means no writer."""
    if held_here(data_dir):
        return True
    try:
        fd = os.open(Path(data_dir) / LOCK_FILENAME,
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # lets go of the shared lock, if taken
    return False


def held_here(data_dir: Path) -> bool:
    """Whether this process holds the world's writer lock."""
    with _guard:
        return Path(data_dir).resolve() in _held


def _lock_fault(path: Path, exc: OSError) -> StorageError:
    """The lock file could not be opened or locked: a disk that is full, failing or
    read-only is named as such (the same line a run meeting it later would give)."""
    if exc.errno in FAULT_ERRNOS:
        return StorageError(storage_fault_line(OSError(exc.errno, exc.strerror, str(path))))
    return StorageError(f"{path}: cannot take the world's writer lock ({exc.strerror})")
