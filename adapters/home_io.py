"""Opening, reading and replacing files inside a home, through directory fds only.

The part of the agent's file tools (`adapters.agent_files`) that touches the disk:
every function here is given names already checked by `adapters.home_paths` and
refuses with `Refused` (one sentence for the agent) when what it finds is not what
a tool may use. Kept apart from the path rules and from the tools, so that the one
way Hearth reaches into a home without leaving it can be read whole.

**How files are opened.** Containment is never decided by comparing strings. Each
call opens the home as a directory fd and walks the path one name at a time with
`os.open(name, O_DIRECTORY | O_NOFOLLOW, dir_fd=parent)`; the file itself is
opened with `O_NOFOLLOW | O_NONBLOCK`. A symbolic link anywhere on the path, even
one swapped in after an earlier check or call, makes the open fail, so it is
refused rather than followed. What was opened is checked with `fstat`: only
regular files are read (a FIFO, socket or device is refused, and `O_NONBLOCK` means
opening a FIFO cannot hang), and files over `max_file_bytes` are refused.

**How files are written.** Every change (write, append, edit) writes the whole new
content to a fresh temporary file in the same folder (`O_CREAT | O_EXCL`, via the
folder's fd), fsyncs it and `os.replace`s it into place with `src_dir_fd` and
`dst_dir_fd`. A rename replaces whatever name is there and never writes through it:
a symbolic link swapped in at the last moment is replaced, not followed, and a hard
link is broken instead of written through. Readers never see half a file. Missing
folders are made with `mkdir(dir_fd=...)`, within `max_depth`.

**Hard links.** A hard link cannot be told from an ordinary file by its path: if
something other than Hearth could make one in a home, pointing at a file outside,
path checks could not see it. Homes are only writable by Hearth (the agent's tools
here cannot make links of any kind). As defence in depth, a file with more than
one link is refused for reading (and so for append and edit, which read first);
`write` replaces it, leaving the other name untouched.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from contextlib import ExitStack, suppress
from pathlib import Path

from adapters.home_paths import TEMP_PREFIX, Refused
from storage.side_files import describe_mode

KIB = 1024

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC


def lstat(parent_fd: int, name: str) -> os.stat_result | None:
    """What `name` in `parent_fd` is (a link itself, not followed); None if nothing."""
    try:
        return os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return None


def not_followed(shown: str) -> Refused:
    return Refused(f"{shown} is a symbolic link; links are not followed")



# -- directory fds ---------------------------------------------------------------


def open_home(stack: ExitStack, home: Path) -> int:
    """The home as a directory fd, closed with `stack`."""
    try:
        fd = os.open(home, _DIR_FLAGS)
    except FileNotFoundError:
        raise Refused("your home folder is missing") from None
    except OSError as error:
        raise Refused(f"your home folder cannot be opened: "
                      f"{error.strerror or error}") from None
    stack.callback(os.close, fd)
    return fd


def _not_opened(parent: int, name: str, shown: str, error: OSError, kind: str,
                is_kind: Callable[[int], bool], other: Callable[[int], str]) -> Refused:
    """Why `name` in `parent` (a `kind`) could not be opened, in one line: not there, a
    link (never followed), something else than a `kind` (`other(mode)`), or the error."""
    found = lstat(parent, name)
    if found is None:
        return Refused(f"no such {kind}: {shown}", missing=True)
    if stat.S_ISLNK(found.st_mode):
        return not_followed(shown)
    if not is_kind(found.st_mode):
        return Refused(other(found.st_mode))
    return Refused(f"could not open {shown}: {error.strerror or error}")


def open_folder(stack: ExitStack, parent: int, name: str, shown: str) -> int:
    """Folder `name` in `parent` as an fd, closed with `stack`; a link is refused."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        raise _not_opened(parent, name, shown, error, "folder", stat.S_ISDIR,
                          lambda mode: f"{shown} is not a folder (it is "
                                       f"{describe_mode(mode)})") from None
    stack.callback(os.close, fd)
    return fd


def open_parent(stack: ExitStack, home: Path, names: tuple[str, ...]) -> int:
    """The fd of the folder that holds `names[-1]`, every folder on the way opened."""
    folder = open_home(stack, home)
    for index, name in enumerate(names[:-1]):
        folder = open_folder(stack, folder, name, "/".join(names[: index + 1]))
    return folder


def prepare(stack: ExitStack, home: Path, names: tuple[str, ...], shown: str, *,
            max_files: int, max_depth: int) -> tuple[int, bool]:
    """The fd of the file's folder (made if missing) and whether the file exists.

    Refuses, before making anything, when a new file would break `max_files`.
    """
    home_fd = open_home(stack, home)
    folder, depth = home_fd, 0
    for index, name in enumerate(names[:-1]):
        if lstat(folder, name) is None:
            break
        folder = open_folder(stack, folder, name, "/".join(names[: index + 1]))
        depth = index + 1
    missing = len(names) - 1 - depth
    exists = missing == 0 and lstat(folder, names[-1]) is not None
    if exists:
        return folder, True
    held = _count_entries(home_fd, max_files, max_depth)
    if held + missing + 1 > max_files:
        made = "file and folders" if missing else "file"
        raise Refused(f"cannot make {shown}: your home holds {held} files and folders "
                      f"and the new {made} would pass the limit of {max_files}")
    for index in range(depth, len(names) - 1):
        name, here = names[index], "/".join(names[: index + 1])
        try:
            os.mkdir(name, 0o755, dir_fd=folder)
        except FileExistsError:
            pass  # made meanwhile: opening it below decides whether it is a folder
        except OSError as error:
            raise Refused(f"could not make folder {here}: {error.strerror or error}") \
                from None
        folder = open_folder(stack, folder, name, here)
    return folder, False


# -- file contents ----------------------------------------------------------


def read_bytes(parent: int, name: str, shown: str, limit: int) -> bytes:
    """The bytes of regular file `name` in `parent`: one link only, at most `limit`."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=parent)
    except OSError as error:
        raise _not_opened(parent, name, shown, error, "file", stat.S_ISREG,
                          lambda mode: f"{shown} is {describe_mode(mode)}; only regular "
                                       "files can be read") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise Refused(f"{shown} is a folder, not a file; use list to see "
                          "what it holds")
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{shown} is {describe_mode(info.st_mode)}; only regular files "
                          "can be read")
        if info.st_nlink != 1:
            raise Refused(f"{shown} has {info.st_nlink} hard links; only files that "
                          "live in one place can be read")
        if info.st_size > limit:
            raise Refused(f"{shown} is {info.st_size} bytes; the limit for reading "
                          f"is {limit}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(64 * KIB, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise Refused(f"{shown} is more than {limit} bytes; the limit for "
                              f"reading is {limit}")
        return b"".join(chunks)
    except OSError as error:
        raise Refused(f"could not read {shown}: {error.strerror or error}") from None
    finally:
        os.close(fd)


def replace(parent: int, name: str, shown: str, data: bytes, *, durable: bool) -> None:
    """Put `data` at `name` in `parent` through a temporary file and a rename."""
    found = lstat(parent, name)
    if found is not None:
        # For the message only: a link swapped in after this is replaced, not followed.
        if stat.S_ISLNK(found.st_mode):
            raise not_followed(shown)
        if stat.S_ISDIR(found.st_mode):
            raise Refused(f"{shown} is a folder, not a file")
        if not stat.S_ISREG(found.st_mode):
            raise Refused(f"{shown} is {describe_mode(found.st_mode)}; only regular files "
                          "can be written")
    temp = TEMP_PREFIX + secrets.token_hex(8)
    try:
        fd = os.open(temp, _TEMP_FLAGS, 0o644, dir_fd=parent)
    except OSError as error:
        raise Refused(f"could not write {shown}: {error.strerror or error}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError as error:
        with suppress(OSError):
            os.unlink(temp, dir_fd=parent)
        raise Refused(f"could not write {shown}: {error.strerror or error}") from None
    if durable:
        with suppress(OSError):
            os.fsync(parent)


def listing(folder: int) -> list[str]:
    """A folder's entries, one line each, by name (temporary files left out)."""
    lines: list[str] = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.startswith(TEMP_PREFIX):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                lines.append(f"{entry.name}/")
            elif stat.S_ISREG(info.st_mode):
                lines.append(f"{entry.name}  ({info.st_size} bytes)")
            elif stat.S_ISLNK(info.st_mode):
                lines.append(f"{entry.name}  (a symbolic link; not followed)")
            else:
                lines.append(f"{entry.name}  ({describe_mode(info.st_mode)}; cannot be read)")
    return lines


def _count_entries(home: int, limit: int, max_depth: int) -> int:
    """Files and folders in the home (down to `max_depth`), counting stops past `limit`."""
    count = 0

    def walk(folder: int, depth: int) -> None:
        nonlocal count
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(TEMP_PREFIX):
                    continue
                count += 1
                if count > limit:
                    return
                if depth < max_depth and entry.is_dir(follow_symlinks=False):
                    try:
                        inner = os.open(entry.name, _DIR_FLAGS, dir_fd=folder)
                    except OSError:
                        continue
                    try:
                        walk(inner, depth + 1)
                    finally:
                        os.close(inner)
                    if count > limit:
                        return

    walk(home, 1)
    return count
