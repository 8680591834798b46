"""Agents' home folders: the files of their inner life, kept on disk.

    agents/Ember/journal.md       the agent's diary: Hearth writes it once, empty,
                                  and never reads it
    agents/Ember/notes.md         personal observations
    agents/Ember/discoveries.md   what the agent has learnt about making things
    agents/Ember/.status          written by Hearth each turn: where and when, so the
                                  agent's own tools can see it (never inventory)

Creating a home never overwrites a file that exists: whatever an agent wrote is
theirs.

**Nothing leaves a home.** The agents folder is the operator's and is taken as
given (it may be a link). Below it nothing is followed: the home is opened with
`O_DIRECTORY | O_NOFOLLOW` relative to the agents folder's fd, and every file in
it is made, written or renamed relative to the home's fd, never by path. A home
that is a symbolic link, or anything but a folder, is refused with
`HomeRefusedError` (one line naming the home and what is wrong) before anything
is written. Files are made with `O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK`: one
that exists, whatever it is (a link, a FIFO, a device), is left alone and never
written through or waited on.

`.status` is rewritten every turn of every agent, so it is written in place when
what is there is Hearth's own: a regular file with no other name (opened with
`O_NOFOLLOW | O_NONBLOCK`, checked by fstat), overwritten with one pwrite and cut
to length (4 us, against 300 us for a new file and a rename: a tenth of a second
each tick at 240 agents). The agent's own tools read it in turn, never meeting a
write half done; a reader in another process may, for an instant, see the new
text followed by the end of the old. Anything else there (nothing, a link, a FIFO,
a file with a second name) is replaced: the text goes to a fresh `.status.partial`
(whatever was at that name is unlinked first; unlinking a link removes the link,
not what it points at), renamed over `.status` with `os.replace`, which replaces a
link or a hard link rather than writing through it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.types import AgentName, agent_name
from storage.errors import StorageError
from storage.side_files import describe_mode

HOME_FILES: dict[str, str] = {
    "journal.md": "",
    "notes.md": "",
    "discoveries.md": "",
}
STATUS_FILE = ".status"
STATUS_PARTIAL = f"{STATUS_FILE}.partial"

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC
HOME_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
"""How a home is opened: a folder, never through a link."""
NEW_FILE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
                  | os.O_NOCTTY | _O_CLOEXEC)
"""How Hearth makes a file in a home: only a new one, never through a link, never waiting."""


class HomeRefusedError(StorageError):
    """An agent's home is a link or not a folder: Hearth will not work in it."""


class AgentHomes:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, name: AgentName | str) -> Path:
        return self.root / agent_name(str(name))

    def exists(self, name: AgentName | str) -> bool:
        return self.path(name).is_dir()

    # -- opening a home ---------------------------------------------------------

    def _refused(self, name: str, why: str) -> HomeRefusedError:
        return HomeRefusedError(
            f"{self.root / name}: the home of {name} is {why}; Hearth follows no link "
            "and works only in a real folder there, so nothing was written. Move it "
            "away (a folder is made in its place) or replace it with a folder")

    def open(self, name: AgentName | str, *, make: bool = False) -> int:
        """An fd of the home folder, opened with no link followed (the caller closes it).

        `make`: make the agents folder and the home if missing. A home that is a link
        or not a folder raises `HomeRefusedError`; a missing one `FileNotFoundError`.
        """
        name = agent_name(str(name))
        if make:
            self.root.mkdir(parents=True, exist_ok=True)
        root = os.open(self.root, _ROOT_FLAGS)
        try:
            if make:
                try:
                    os.mkdir(name, 0o755, dir_fd=root)
                except FileExistsError:
                    pass  # a folder (fine) or something else, refused below
            try:
                return os.open(name, HOME_FLAGS, dir_fd=root)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise
                try:
                    found = os.stat(name, dir_fd=root, follow_symlinks=False)
                except OSError:
                    raise error from None
                raise self._refused(name, describe_mode(found.st_mode)) from None
        finally:
            os.close(root)

    def check(self, *names: AgentName | str) -> None:
        """Refuse (HomeRefusedError) if any of these homes is a link or not a folder;
        a missing home is fine (it will be made). Nothing is written."""
        for name in names:
            name = agent_name(str(name))
            try:
                found = os.stat(self.path(name), follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(found.st_mode):
                raise self._refused(name, describe_mode(found.st_mode))

    def vanished(self, name: AgentName | str) -> str | None:
        """What of this home is gone (the agents folder or the home itself), in words
        for a line; None when the home is there. One stat, for every turn."""
        name = agent_name(str(name))
        try:
            os.stat(self.path(name), follow_symlinks=False)
        except FileNotFoundError:
            if not self.root.is_dir():
                return f"the agents folder {self.root} is gone"
            return f"the home of {name} ({self.path(name)}) is gone"
        return None

    # -- writing ----------------------------------------------------------------

    def create(self, name: AgentName | str, status: str) -> Path:
        """Make the agent's folder and files (keeping any that exist) and its status."""
        with self._failing(name, "made"):
            fd = self.open(name, make=True)
            try:
                for filename, initial in HOME_FILES.items():
                    try:
                        made = os.open(filename, NEW_FILE_FLAGS, 0o644, dir_fd=fd)
                    except FileExistsError:
                        continue  # the agent's, whatever it is: left alone
                    try:
                        _write_all(made, initial.encode("utf-8"))
                    finally:
                        os.close(made)
                _write_status(fd, status)
            finally:
                os.close(fd)
        return self.path(name)

    def write_status(self, name: AgentName | str, text: str) -> None:
        """Replace the home's `.status`; HomeRefusedError (one line) if it cannot be."""
        with self._failing(name, "written"):
            fd = self.open(name)
            try:
                _write_status(fd, text)
            finally:
                os.close(fd)

    @contextmanager
    def _failing(self, name: AgentName | str, done: str) -> Iterator[None]:
        """Turn an OSError into one line naming the home (HomeRefusedError)."""
        try:
            yield
        except HomeRefusedError:
            raise
        except OSError as error:
            where = error.filename or self.path(name)
            raise HomeRefusedError(
                f"{self.path(name)}: the home of {agent_name(str(name))} could not be "
                f"{done} ({error.strerror or error}: {where})") from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


OWN_FILE_FLAGS = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _O_CLOEXEC
"""How Hearth opens a file of its own to rewrite it: never through a link, never waiting."""


def _write_status(home: int, text: str) -> None:
    """Write `.status` in the home `home` (an fd): in place when it is Hearth's own
    plain file, else whole through `.status.partial` (the module's docstring)."""
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
    try:
        os.unlink(STATUS_PARTIAL, dir_fd=home)  # a link or FIFO left there: the name goes
    except FileNotFoundError:
        pass
    if not _rewritten_in_place(home, data):
        _replace_status(home, data)


def _rewritten_in_place(home: int, data: bytes) -> bool:
    """Overwrite `.status` if it is a regular file with one name; False (nothing
    written) for anything else there, or nothing. Looked at before it is opened, so
    nothing else (a FIFO, a device) is ever opened, and again once open, in case it
    was swapped between the two."""
    try:
        seen = os.stat(STATUS_FILE, dir_fd=home, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not _own_file(seen):
        return False
    try:
        fd = os.open(STATUS_FILE, OWN_FILE_FLAGS, dir_fd=home)
    except OSError:
        return False  # gone meanwhile, or a link now (ELOOP): replaced whole
    try:
        found = os.fstat(fd)
        if not _own_file(found) or (found.st_dev, found.st_ino) != (seen.st_dev, seen.st_ino):
            return False
        if os.pwrite(fd, data, 0) != len(data):
            return False  # a short write (a full disk): replaced whole instead
        if found.st_size > len(data):
            os.ftruncate(fd, len(data))
        return True
    finally:
        os.close(fd)


def _own_file(found: os.stat_result) -> bool:
    """A regular file with no second name (a hard link would carry a write elsewhere)."""
    return stat.S_ISREG(found.st_mode) and found.st_nlink == 1


def _replace_status(home: int, data: bytes) -> None:
    fd = os.open(STATUS_PARTIAL, NEW_FILE_FLAGS, 0o644, dir_fd=home)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)
    os.replace(STATUS_PARTIAL, STATUS_FILE, src_dir_fd=home, dst_dir_fd=home)
