"""The data folder's own side files, opened with no link followed and no wait.

Hearth appends to events.jsonl and traces/NAME.jsonl and writes undo/NAME.json and
snapshots/snapshot_N.db beside world.db. Whatever is found at one of those names
that is not a regular file of its own (a symbolic link, a hard link to another
file, a FIFO, a device, a socket) is **moved aside**: renamed to
`NAME.refused.STAMP` in the same folder (never followed, never opened, never
deleted), with one warning line, and a fresh regular file is used in its place. A
side folder (traces/, undo/, snapshots/, backups/) that is a link or not a folder
is moved aside the same way and made anew. Only if moving aside fails does the
run stop, with one line (`StorageError`) naming the path.

A hard link cannot be told by `O_NOFOLLOW`; a file with more than one name
(`st_nlink > 1`) is treated as a link: writing to it would change the other name.
"""

from __future__ import annotations

import datetime as _dt
import errno
import logging
import os
import stat
from pathlib import Path

from storage.errors import StorageError

log = logging.getLogger("hearth.storage")

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _O_CLOEXEC
APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | SAFE
"""How a side file is opened to append: never through a link, never waiting."""
READ_FLAGS = os.O_RDONLY | SAFE


def describe_mode(mode: int) -> str:
    """What a file of `mode` (an lstat's: a link is itself) is, in words: the one place
    Hearth names kinds of file, for side files, homes and an agent's own files alike."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def kind(info: os.stat_result) -> str | None:
    """What is wrong with a side file found there; None for a regular file of its own."""
    if not stat.S_ISREG(info.st_mode):
        return describe_mode(info.st_mode)
    if info.st_nlink > 1:
        return "a hard link to another file"
    return None


def _stamp() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")


def move_aside(path: Path, why: str) -> Path:
    """Rename what is at `path` to NAME.refused.STAMP beside it (the name moves; a link
    is not followed); one warning line. StorageError if it cannot be moved."""
    aside = path.with_name(f"{path.name}.refused.{_stamp()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return aside
    except OSError as exc:
        raise StorageError(
            f"{path} is {why}; Hearth writes only a regular file of its own there and "
            f"could not move it aside ({exc.strerror}). Remove or rename it") from None
    log.warning("%s was %s; Hearth follows no link and writes only a regular file of "
                "its own there, so it was moved aside to %s and a fresh file is used",
                path, why, aside.name)
    return aside


def claim(path: Path) -> None:
    """Make sure `path` is missing or a regular file of its own: anything else there is
    moved aside (see the module's docstring)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    why = kind(info)
    if why is not None:
        move_aside(path, why)


def claim_dir(path: Path) -> Path:
    """Make sure `path` is a real folder (not a link): anything else is moved aside and
    the folder made; gives `path`. The parent (the data folder) is taken as given."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        move_aside(path, kind(info) or "not a folder")
        info = None
    if info is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            return claim_dir(path)  # made meanwhile; checked again
    return path


def open_regular(path: Path, flags: int = APPEND_FLAGS, mode: int = 0o644) -> int:
    """An fd of the regular file at `path` (made if missing), opened with `flags` plus
    O_NOFOLLOW | O_NONBLOCK and checked with fstat; the caller closes it."""
    for _ in range(3):
        claim(path)
        try:
            fd = os.open(path, flags | SAFE, mode)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENODEV):
                continue  # something was put there meanwhile: claimed again
            raise
        try:
            why = kind(os.fstat(fd))
        except OSError:
            os.close(fd)
            raise
        if why is None:
            return fd
        os.close(fd)
    raise StorageError(
        f"{path}: something not a regular file of Hearth's keeps appearing there; "
        "Hearth follows no link and will not write through it. Remove it")


def read_bytes(path: Path) -> bytes | None:
    """A side file's bytes, or None if it is missing or not a regular file of its own
    (never followed, never waited on)."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return None
    try:
        if kind(os.fstat(fd)) is not None:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_whole(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace the side file at `path` with `data` whole: written to `NAME.partial`
    (never through a link) with permissions `mode`, then renamed in, so a reader sees
    the old or the new."""
    partial = path.with_name(path.name + ".partial")
    claim(partial)
    fd = open_regular(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)  # a leftover partial keeps the mode it was made with
        write_all(fd, data)
    finally:
        os.close(fd)
    claim(path)
    os.replace(partial, path)
