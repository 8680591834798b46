"""The agent's own file tools: its inner life, kept in its home folder.

These are not world actions. They let an agent read and keep its own files in
`agents_root/NAME/` (see `storage.homes` for the layout) and nowhere else. Every
argument comes from a language model, so every method returns a `FileResult` and
never raises for bad input: a refusal is `ok=False` with one specific sentence.

    files = AgentFiles(homes.path("Ember"))
    files.read("notes.md")                   FileResult(ok, message, content)
    files.write("notes/trees.md", "Oaks.")   makes `notes/` if it is missing
    files.append("journal.md", "Day two.\\n")
    files.list("notes")                      one line per entry, in `content`
    files.edit("notes.md", "old", "new")     exactly one occurrence, or a refusal

**The journal rule.** `journal.md` is the agent's diary. No code of Hearth reads
it for its own purposes: not to build prompts, summarise, score or log. The only
reader is `AgentFiles.read`, and only because the agent itself asked to read it,
as a person rereads their own diary. Do not add another reader.

**Path rules** are `adapters.home_paths`'s (what a path may name, checked on the text
alone); **how files are opened and written** (one name at a time from a directory fd,
no link ever followed, every change through a temporary file and a rename) is
`adapters.home_io`'s. This module holds the tools themselves and what they answer.

**Hearth's files.** `.status` (and its `.status.partial`) are written by Hearth
each turn; the agent may read `.status` but write, append and edit refuse it.
`remove` is Hearth's, not a tool: the undo of a lost turn (`adapters/file_undo.py`)
removes the files that turn made through it, so it walks the path like the tools do
and removes only a regular file.

**Limits.** `max_file_bytes` caps every file after a write, append or edit (and
what `read` will return); `max_files` caps the entries (files and folders, Hearth's
own included) the home may hold before a new one is made.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from adapters.home_io import (
    KIB,
    listing,
    lstat,
    open_folder,
    open_home,
    open_parent,
    prepare,
    read_bytes,
    replace,
)
from adapters.home_paths import Refused, parse_path
from storage.errors import is_storage_fault
from storage.homes import STATUS_FILE
from storage.side_files import describe_mode

STATUS_PARTIAL = f"{STATUS_FILE}.partial"
HEARTH_FILES = frozenset({STATUS_FILE, STATUS_PARTIAL})


@dataclass(frozen=True)
class FileResult:
    """What a file tool did: `ok`, one sentence for the agent, and any content."""

    ok: bool
    message: str
    content: str | None = None
    missing: bool = False
    """Refused because the file or folder asked for is not there."""


class AgentFiles:
    """File tools confined to one agent's home folder. See the module docstring."""

    def __init__(self, home: Path, *, max_file_bytes: int = 64 * KIB, max_files: int = 200,
                 max_name_length: int = 100, max_depth: int = 4, durable: bool = True) -> None:
        limits = {"max_file_bytes": max_file_bytes, "max_files": max_files,
                  "max_name_length": max_name_length, "max_depth": max_depth}
        for key, value in limits.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{key} must be a positive whole number, not {value!r}")
        self.home = Path(home)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.max_name_length = max_name_length
        self.max_depth = max_depth
        self.durable = durable
        """False: no fsync per write (a fork builds its homes aside and syncs once)."""

    # -- the tools -------------------------------------------------------------

    def read(self, path: object) -> FileResult:
        """The text of one file (`journal.md` too, because the agent asks for it)."""
        return self._run(self._read, path)

    def write(self, path: object, text: object) -> FileResult:
        """Replace (or create) a file with `text`, making missing folders."""
        return self._run(self._write, path, text)

    def append(self, path: object, text: object) -> FileResult:
        """Add `text` to the end of a file, creating it if it is missing."""
        return self._run(self._append, path, text)

    def list(self, path: object = ".") -> FileResult:
        """The entries of a folder (the home by default), one per line."""
        return self._run(self._list, path)

    def edit(self, path: object, old: object, new: object) -> FileResult:
        """Replace the one occurrence of `old` in a file with `new`."""
        return self._run(self._edit, path, old, new)

    def remove(self, path: object) -> FileResult:
        """Remove a regular file (Hearth's own, to undo a lost turn; not an agent tool).

        The path is walked like any other, so nothing outside the home is reached;
        anything but a regular file (a link, a folder, a FIFO) is left alone.
        """
        return self._run(self._remove, path)

    # -- implementations ------------------------------------------------------

    def _remove(self, path: object) -> FileResult:
        names, shown = self._file_path(path, "remove")
        with ExitStack() as stack:
            parent = open_parent(stack, self.home, names)
            found = lstat(parent, names[-1])
            if found is None:
                return FileResult(True, f"{shown} was not there")
            if not stat.S_ISREG(found.st_mode):
                raise Refused(f"{shown} is {describe_mode(found.st_mode)}; only regular files "
                              "are removed")
            try:  # unlink never follows a link: at worst a name swapped in goes
                os.unlink(names[-1], dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError as error:
                raise Refused(f"could not remove {shown}: {error.strerror or error}") \
                    from None
        return FileResult(True, f"removed {shown}")

    def _run(self, operation: Callable[..., FileResult], *args: object) -> FileResult:
        try:
            return operation(*args)
        except Refused as refused:
            fault = refused.__context__  # the OSError it was raised for, if any
            if isinstance(fault, OSError) and is_storage_fault(fault):
                # A full or failing disk is no answer to the agent: the run stops (one
                # line naming the home), and the turn is taken again once it is mended.
                raise OSError(fault.errno, fault.strerror, str(self.home)) from None
            return FileResult(False, refused.message, missing=refused.missing)

    def _read(self, path: object) -> FileResult:
        names, shown = self._file_path(path, "read")
        with ExitStack() as stack:
            parent = open_parent(stack, self.home, names)
            data = read_bytes(parent, names[-1], shown, self.max_file_bytes)
        text = self._decode(data, shown)
        return FileResult(True, f"read {shown} ({len(data)} bytes)", text)

    def _write(self, path: object, text: object) -> FileResult:
        names, shown = self._file_path(path, "write")
        self._refuse_hearth_file(names, "written")
        data = self._encode(text, "text")
        self._check_size(len(data))
        with ExitStack() as stack:
            parent, _ = self._prepare(stack, names, shown)
            replace(parent, names[-1], shown, data, durable=self.durable)
        return FileResult(True, f"wrote {len(data)} bytes to {shown}")

    def _append(self, path: object, text: object) -> FileResult:
        names, shown = self._file_path(path, "append to")
        self._refuse_hearth_file(names, "appended to")
        added = self._encode(text, "text")
        self._check_size(len(added))
        with ExitStack() as stack:
            parent, exists = self._prepare(stack, names, shown)
            before = (read_bytes(parent, names[-1], shown, self.max_file_bytes) if exists
                      else b"")
            data = before + added
            self._check_size(len(data))
            replace(parent, names[-1], shown, data, durable=self.durable)
        return FileResult(True, f"appended {len(added)} bytes to {shown} "
                                f"(now {len(data)} bytes)")

    def _edit(self, path: object, old: object, new: object) -> FileResult:
        names, shown = self._file_path(path, "edit")
        self._refuse_hearth_file(names, "edited")
        if not isinstance(old, str) or not isinstance(new, str):
            raise Refused("the text to replace and its replacement must both be text")
        if old == "":
            raise Refused("the text to replace is empty; give the exact text to change")
        self._encode(old, "the text to replace")
        self._encode(new, "the replacement")
        with ExitStack() as stack:
            parent = open_parent(stack, self.home, names)
            text = self._decode(read_bytes(parent, names[-1], shown, self.max_file_bytes),
                                shown)
            found = _occurrences(text, old)
            if found == 0:
                raise Refused(f"the text to replace was not found in {shown}; "
                              "it must match exactly, spaces and line breaks included")
            if found > 1:
                raise Refused(f"the text to replace appears {found} times in {shown}; "
                              "include more of the text around it so it matches "
                              "exactly once")
            data = text.replace(old, new, 1).encode("utf-8")
            self._check_size(len(data))
            replace(parent, names[-1], shown, data, durable=self.durable)
        return FileResult(True, f"replaced 1 occurrence in {shown} (now {len(data)} bytes)")

    def _list(self, path: object) -> FileResult:
        names, _ = parse_path(path, max_name_length=self.max_name_length,
                              max_depth=self.max_depth)
        shown = "/".join(names)
        with ExitStack() as stack:
            folder = open_home(stack, self.home)
            for index, name in enumerate(names):
                folder = open_folder(stack, folder, name, "/".join(names[: index + 1]))
            try:
                lines = listing(folder)
            except OSError as error:
                raise Refused(f"could not list {shown or 'your home'}: "
                              f"{error.strerror or error}") from None
        where = shown or "your home"
        if not lines:
            return FileResult(True, f"{where} is empty", "")
        count = "1 entry" if len(lines) == 1 else f"{len(lines)} entries"
        return FileResult(True, f"{where} holds {count}", "\n".join(lines))

    # -- paths ------------------------------------------------------------------

    def _file_path(self, path: object, verb: str) -> tuple[tuple[str, ...], str]:
        names, trailing = parse_path(path, max_name_length=self.max_name_length,
                                     max_depth=self.max_depth)
        if not names:
            raise Refused(f"give the name of a file to {verb}, like 'notes.md'; "
                          "that path is your home itself")
        shown = "/".join(names)
        if trailing:
            raise Refused(f"'{shown}/' ends with '/', which names a folder; "
                          f"give the name of a file to {verb}")
        return names, shown

    @staticmethod
    def _refuse_hearth_file(names: tuple[str, ...], done: str) -> None:
        if len(names) == 1 and names[0] in HEARTH_FILES:
            raise Refused(f"{names[0]} is written by Hearth and cannot be {done}; "
                          "you can read .status")

    def _prepare(self, stack: ExitStack, names: tuple[str, ...],
                 shown: str) -> tuple[int, bool]:
        """The fd of the file's folder (made if missing) and whether the file exists."""
        return prepare(stack, self.home, names, shown, max_files=self.max_files,
                       max_depth=self.max_depth)

    # -- contents -----------------------------------------------------------------

    def _check_size(self, size: int) -> None:
        if size > self.max_file_bytes:
            raise Refused(f"file would be {size} bytes; the limit is {self.max_file_bytes}")

    @staticmethod
    def _encode(text: object, what: str) -> bytes:
        if not isinstance(text, str):
            raise Refused(f"{what} must be text, not {type(text).__name__}")
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(f"{what} contains characters that cannot be stored as UTF-8 "
                          "(lone surrogates)") from None

    @staticmethod
    def _decode(data: bytes, shown: str) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{shown} is not UTF-8 text") from None


def _occurrences(text: str, old: str) -> int:
    """How many times `old` occurs in `text`, overlapping matches included."""
    count, start = 0, text.find(old)
    while start != -1:
        count += 1
        start = text.find(old, start + 1)
    return count
