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

**Path rules.** A path names something inside the home, with `/` between names.
It is refused (with a message saying why) when it:

- is not text, is empty or only spaces, or contains a NUL byte;
- is absolute (starts with `/`) or starts with `~` (nothing is expanded: `$HOME`
  and `%2e%2e` are ordinary characters and stay ordinary names inside the home);
- contains a backslash, or any `..` component, or a name made only of dots (with or
  without combining marks), or an empty name (`a//b`);
- contains a control character (newline, tab, ...), an invisible format character
  (zero-width space, direction overrides), a lone surrogate, a private-use or
  unassigned code point, a line or paragraph separator, or any space other than the
  ordinary space U+0020; or a name that begins or ends with a space;
- contains a look-alike of `/`, `\\` or `.`: a non-ASCII character whose NFKC form
  contains one of them (U+FF0F FULLWIDTH SOLIDUS, U+2024 ONE DOT LEADER, U+FF0E,
  U+FE52, U+2025, U+2100 ACCOUNT OF, ...), or one in `LOOKALIKES` (U+2215 DIVISION
  SLASH, U+2044 FRACTION SLASH, U+29F8 BIG SOLIDUS, U+0338 COMBINING LONG SOLIDUS
  OVERLAY, U+2216 SET MINUS, U+0660 ARABIC-INDIC DIGIT ZERO, which renders as a
  dot, ...). The kernel would treat these as ordinary characters, so they could not
  escape here; they are refused because a name that looks like a traversal misleads
  whoever reads it, and would become one wherever text is NFKC-normalised;
- is not in Unicode NFC form (so one name has exactly one spelling);
- has a name longer than `max_name_length` characters (or 255 UTF-8 bytes), or more
  than `max_depth` names in all (`a/b/c/d.md` is 4 deep);
- uses a name starting with `.hearth-tmp-` (reserved for the temporary files below).

`.` components are dropped (`./notes.md` is `notes.md`); a trailing `/` names a
folder and is accepted by `list` only.

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
import secrets
import stat
import unicodedata
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

from storage.errors import is_storage_fault
from storage.homes import STATUS_FILE

KIB = 1024
TEMP_PREFIX = ".hearth-tmp-"
NAME_MAX_BYTES = 255
STATUS_PARTIAL = f"{STATUS_FILE}.partial"
HEARTH_FILES = frozenset({STATUS_FILE, STATUS_PARTIAL})

# Characters that look like '/', '\' or '.' but do not turn into them under NFKC
# (those that do are caught by the NFKC test in `_check_character`). Chosen from
# Unicode's confusables for these three characters, leaving out letters in everyday
# use (such as U+30CE KATAKANA LETTER NO).
LOOKALIKES: dict[str, str] = {
    # like '/'
    "\u2044": "/",  # FRACTION SLASH
    "\u2215": "/",  # DIVISION SLASH
    "\u2571": "/",  # BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
    "\u27cb": "/",  # MATHEMATICAL RISING DIAGONAL
    "\u29f8": "/",  # BIG SOLIDUS
    "\u1735": "/",  # PHILIPPINE SINGLE PUNCTUATION
    "\u2cc6": "/",  # COPTIC CAPITAL LETTER OLD COPTIC ESH
    "\u3033": "/",  # VERTICAL KANA REPEAT MARK UPPER HALF
    "\u4e3f": "/",  # CJK UNIFIED IDEOGRAPH-4E3F (the slash radical)
    "\u0337": "/",  # COMBINING SHORT SOLIDUS OVERLAY
    "\u0338": "/",  # COMBINING LONG SOLIDUS OVERLAY
    # like '\'
    "\u2216": "\\",  # SET MINUS
    "\u2572": "\\",  # BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
    "\u27cd": "\\",  # MATHEMATICAL FALLING DIAGONAL
    "\u29f5": "\\",  # REVERSE SOLIDUS OPERATOR
    "\u29f9": "\\",  # BIG REVERSE SOLIDUS
    "\u20e5": "\\",  # COMBINING REVERSE SOLIDUS OVERLAY
    # like '.'
    "\u0660": ".",  # ARABIC-INDIC DIGIT ZERO
    "\u06f0": ".",  # EXTENDED ARABIC-INDIC DIGIT ZERO
    "\u0701": ".",  # SYRIAC SUPRALINEAR FULL STOP
    "\u0702": ".",  # SYRIAC SUBLINEAR FULL STOP
    "\ua4f8": ".",  # LISU LETTER TONE MYA TI
    "\ua60e": ".",  # VAI FULL STOP
    "\U00010a50": ".",  # KHAROSHTHI PUNCTUATION DOT
    "\U0001d16d": ".",  # MUSICAL SYMBOL COMBINING AUGMENTATION DOT
}
_SEPARATOR_LIKE = "/\\."

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC


@dataclass(frozen=True)
class FileResult:
    """What a file tool did: `ok`, one sentence for the agent, and any content."""

    ok: bool
    message: str
    content: str | None = None


class _Refused(Exception):
    """Internal: a request is refused; `message` is what the agent is told."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_CONTROL_NAMES = {"\t": "TAB", "\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\x1b": "ESCAPE",
                  "\x7f": "DELETE"}


def _describe(ch: str) -> str:
    name = _CONTROL_NAMES.get(ch) or unicodedata.name(ch, "")
    if not name:
        name = "CONTROL" if unicodedata.category(ch) == "Cc" else "UNNAMED CHARACTER"
    return f"U+{ord(ch):04X} {name}"


def _check_character(ch: str) -> None:
    category = unicodedata.category(ch)
    if category == "Cc":
        raise _Refused(f"path contains a control character ({_describe(ch)}); "
                       "names must be printable")
    if category in ("Cf", "Cs", "Co", "Cn"):
        raise _Refused(f"path contains an invisible, private or unassigned character "
                       f"({_describe(ch)}); it is not allowed in names")
    if category in ("Zl", "Zp") or (category == "Zs" and ch != " "):
        raise _Refused(f"path contains {_describe(ch)}; the only space allowed in names "
                       "is the ordinary space")
    if ord(ch) < 128:
        return
    like = LOOKALIKES.get(ch)
    if like is None:
        folded = unicodedata.normalize("NFKC", ch)
        like = next((c for c in folded if c in _SEPARATOR_LIKE or c in LOOKALIKES), None)
        if like is not None:
            like = LOOKALIKES.get(like, like)
    if like is not None:
        raise _Refused(f"path contains {_describe(ch)}, which looks like '{like}'; "
                       "only the ASCII '/' separates folders and names may use only "
                       "the ASCII '.'")


def _only_dots(name: str) -> bool:
    bare = "".join(c for c in name if not unicodedata.category(c).startswith("M"))
    return bare != "" and set(bare) == {"."}


def _parse_path(path: object, *, max_name_length: int,
                max_depth: int) -> tuple[tuple[str, ...], bool]:
    """The names in `path` and whether it ended with '/'; `_Refused` says what is wrong.

    See the module docstring for the rules. `()` is the home itself.
    """
    if not isinstance(path, str):
        raise _Refused(f"path must be text, like 'notes.md', not {type(path).__name__}")
    if "\x00" in path:
        raise _Refused("path may not contain a NUL byte")
    if not path.strip():
        raise _Refused("path is empty; give a path inside your home, like 'notes.md'")
    if "\\" in path:
        raise _Refused("backslashes are not allowed; folders are separated by '/'")
    if path.startswith("/"):
        raise _Refused("path must be relative to your home, like 'notes.md' "
                       "(it may not start with '/')")
    if path.startswith("~"):
        raise _Refused("path must be relative to your home, like 'notes.md' "
                       "('~' is not expanded)")
    for ch in path:
        _check_character(ch)
    if not unicodedata.is_normalized("NFC", path):
        raise _Refused("path is not in Unicode NFC form; write each accented letter as "
                       "one character (NFC)")
    trailing = path.endswith("/")
    names: list[str] = []
    for name in (path[:-1] if trailing else path).split("/"):
        if name == ".":
            continue
        if name == "":
            raise _Refused("path has an empty name between two '/'")
        if name == "..":
            raise _Refused("'..' is not allowed: a path cannot leave your home")
        if _only_dots(name):
            raise _Refused(f"'{name}' is not allowed: a name may not be made only of dots")
        if name != name.strip():
            raise _Refused("a name may not begin or end with a space")
        if len(name) > max_name_length:
            raise _Refused(f"name '{name[:24]}...' is {len(name)} characters long; "
                           f"the limit is {max_name_length}")
        size = len(name.encode("utf-8", "surrogatepass"))
        if size > NAME_MAX_BYTES:
            raise _Refused(f"name '{name[:24]}...' is {size} bytes in UTF-8; "
                           f"the limit is {NAME_MAX_BYTES}")
        if name.startswith(TEMP_PREFIX):
            raise _Refused(f"names starting with '{TEMP_PREFIX}' are reserved for Hearth")
        names.append(name)
    if len(names) > max_depth:
        raise _Refused(f"path is {len(names)} levels deep; the limit is {max_depth}")
    return tuple(names), trailing


def _kind(mode: int) -> str:
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


def _lstat(parent_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return None


def _not_followed(shown: str) -> _Refused:
    return _Refused(f"{shown} is a symbolic link; links are not followed")


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
            parent = self._open_parent(stack, names)
            found = _lstat(parent, names[-1])
            if found is None:
                return FileResult(True, f"{shown} was not there")
            if not stat.S_ISREG(found.st_mode):
                raise _Refused(f"{shown} is {_kind(found.st_mode)}; only regular files "
                               "are removed")
            try:  # unlink never follows a link: at worst a name swapped in goes
                os.unlink(names[-1], dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError as error:
                raise _Refused(f"could not remove {shown}: {error.strerror or error}") \
                    from None
        return FileResult(True, f"removed {shown}")


    def _run(self, operation: Callable[..., FileResult], *args: object) -> FileResult:
        try:
            return operation(*args)
        except _Refused as refused:
            fault = refused.__context__  # the OSError it was raised for, if any
            if isinstance(fault, OSError) and is_storage_fault(fault):
                # A full or failing disk is no answer to the agent: the run stops (one
                # line naming the home), and the turn is taken again once it is mended.
                raise OSError(fault.errno, fault.strerror, str(self.home)) from None
            return FileResult(False, refused.message)

    def _read(self, path: object) -> FileResult:
        names, shown = self._file_path(path, "read")
        with ExitStack() as stack:
            parent = self._open_parent(stack, names)
            data = self._read_bytes(parent, names[-1], shown)
        text = self._decode(data, shown)
        return FileResult(True, f"read {shown} ({len(data)} bytes)", text)

    def _write(self, path: object, text: object) -> FileResult:
        names, shown = self._file_path(path, "write")
        self._refuse_hearth_file(names, "written")
        data = self._encode(text, "text")
        self._check_size(len(data))
        with ExitStack() as stack:
            parent, _ = self._prepare(stack, names, shown)
            self._replace(parent, names[-1], shown, data)
        return FileResult(True, f"wrote {len(data)} bytes to {shown}")

    def _append(self, path: object, text: object) -> FileResult:
        names, shown = self._file_path(path, "append to")
        self._refuse_hearth_file(names, "appended to")
        added = self._encode(text, "text")
        self._check_size(len(added))
        with ExitStack() as stack:
            parent, exists = self._prepare(stack, names, shown)
            before = self._read_bytes(parent, names[-1], shown) if exists else b""
            data = before + added
            self._check_size(len(data))
            self._replace(parent, names[-1], shown, data)
        return FileResult(True, f"appended {len(added)} bytes to {shown} "
                                f"(now {len(data)} bytes)")

    def _edit(self, path: object, old: object, new: object) -> FileResult:
        names, shown = self._file_path(path, "edit")
        self._refuse_hearth_file(names, "edited")
        if not isinstance(old, str) or not isinstance(new, str):
            raise _Refused("the text to replace and its replacement must both be text")
        if old == "":
            raise _Refused("the text to replace is empty; give the exact text to change")
        self._encode(old, "the text to replace")
        self._encode(new, "the replacement")
        with ExitStack() as stack:
            parent = self._open_parent(stack, names)
            text = self._decode(self._read_bytes(parent, names[-1], shown), shown)
            found = _occurrences(text, old)
            if found == 0:
                raise _Refused(f"the text to replace was not found in {shown}; "
                               "it must match exactly, spaces and line breaks included")
            if found > 1:
                raise _Refused(f"the text to replace appears {found} times in {shown}; "
                               "include more of the text around it so it matches "
                               "exactly once")
            data = text.replace(old, new, 1).encode("utf-8")
            self._check_size(len(data))
            self._replace(parent, names[-1], shown, data)
        return FileResult(True, f"replaced 1 occurrence in {shown} (now {len(data)} bytes)")

    def _list(self, path: object) -> FileResult:
        names, _ = _parse_path(path, max_name_length=self.max_name_length,
                              max_depth=self.max_depth)
        shown = "/".join(names)
        with ExitStack() as stack:
            folder = self._open_home(stack)
            for index, name in enumerate(names):
                folder = self._open_folder(stack, folder, name, "/".join(names[: index + 1]))
            try:
                lines = _listing(folder)
            except OSError as error:
                raise _Refused(f"could not list {shown or 'your home'}: "
                               f"{error.strerror or error}") from None
        where = shown or "your home"
        if not lines:
            return FileResult(True, f"{where} is empty", "")
        count = "1 entry" if len(lines) == 1 else f"{len(lines)} entries"
        return FileResult(True, f"{where} holds {count}", "\n".join(lines))

    # -- paths ------------------------------------------------------------------

    def _file_path(self, path: object, verb: str) -> tuple[tuple[str, ...], str]:
        names, trailing = _parse_path(path, max_name_length=self.max_name_length,
                                     max_depth=self.max_depth)
        if not names:
            raise _Refused(f"give the name of a file to {verb}, like 'notes.md'; "
                           "that path is your home itself")
        shown = "/".join(names)
        if trailing:
            raise _Refused(f"'{shown}/' ends with '/', which names a folder; "
                           f"give the name of a file to {verb}")
        return names, shown

    @staticmethod
    def _refuse_hearth_file(names: tuple[str, ...], done: str) -> None:
        if len(names) == 1 and names[0] in HEARTH_FILES:
            raise _Refused(f"{names[0]} is written by Hearth and cannot be {done}; "
                           "you can read .status")

    # -- directory fds ---------------------------------------------------------

    def _open_home(self, stack: ExitStack) -> int:
        try:
            fd = os.open(self.home, _DIR_FLAGS)
        except FileNotFoundError:
            raise _Refused("your home folder is missing") from None
        except OSError as error:
            raise _Refused(f"your home folder cannot be opened: "
                           f"{error.strerror or error}") from None
        stack.callback(os.close, fd)
        return fd

    @staticmethod
    def _open_folder(stack: ExitStack, parent: int, name: str, shown: str) -> int:
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as error:
            found = _lstat(parent, name)
            if found is None:
                raise _Refused(f"no such folder: {shown}") from None
            if stat.S_ISLNK(found.st_mode):
                raise _not_followed(shown) from None
            if not stat.S_ISDIR(found.st_mode):
                raise _Refused(f"{shown} is not a folder (it is {_kind(found.st_mode)})") \
                    from None
            raise _Refused(f"could not open {shown}: {error.strerror or error}") from None
        stack.callback(os.close, fd)
        return fd

    def _open_parent(self, stack: ExitStack, names: tuple[str, ...]) -> int:
        folder = self._open_home(stack)
        for index, name in enumerate(names[:-1]):
            folder = self._open_folder(stack, folder, name, "/".join(names[: index + 1]))
        return folder

    def _prepare(self, stack: ExitStack, names: tuple[str, ...],
                 shown: str) -> tuple[int, bool]:
        """The fd of the file's folder (made if missing) and whether the file exists.

        Refuses, before making anything, when a new file would break `max_files`.
        """
        home = self._open_home(stack)
        folder, depth = home, 0
        for index, name in enumerate(names[:-1]):
            if _lstat(folder, name) is None:
                break
            folder = self._open_folder(stack, folder, name, "/".join(names[: index + 1]))
            depth = index + 1
        missing = len(names) - 1 - depth
        exists = missing == 0 and _lstat(folder, names[-1]) is not None
        if exists:
            return folder, True
        held = _count_entries(home, self.max_files, self.max_depth)
        if held + missing + 1 > self.max_files:
            made = "file and folders" if missing else "file"
            raise _Refused(f"cannot make {shown}: your home holds {held} files and folders "
                           f"and the new {made} would pass the limit of {self.max_files}")
        for index in range(depth, len(names) - 1):
            name, here = names[index], "/".join(names[: index + 1])
            try:
                os.mkdir(name, 0o755, dir_fd=folder)
            except FileExistsError:
                pass  # made meanwhile: opening it below decides whether it is a folder
            except OSError as error:
                raise _Refused(f"could not make folder {here}: {error.strerror or error}") \
                    from None
            folder = self._open_folder(stack, folder, name, here)
        return folder, False

    # -- file contents ----------------------------------------------------------

    def _read_bytes(self, parent: int, name: str, shown: str) -> bytes:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=parent)
        except OSError as error:
            found = _lstat(parent, name)
            if found is None:
                raise _Refused(f"no such file: {shown}") from None
            if stat.S_ISLNK(found.st_mode):
                raise _not_followed(shown) from None
            if not stat.S_ISREG(found.st_mode):
                raise _Refused(f"{shown} is {_kind(found.st_mode)}; only regular files "
                               "can be read") from None
            raise _Refused(f"could not open {shown}: {error.strerror or error}") from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise _Refused(f"{shown} is a folder, not a file; use list to see "
                               "what it holds")
            if not stat.S_ISREG(info.st_mode):
                raise _Refused(f"{shown} is {_kind(info.st_mode)}; only regular files "
                               "can be read")
            if info.st_nlink != 1:
                raise _Refused(f"{shown} has {info.st_nlink} hard links; only files that "
                               "live in one place can be read")
            limit = self.max_file_bytes
            if info.st_size > limit:
                raise _Refused(f"{shown} is {info.st_size} bytes; the limit for reading "
                               f"is {limit}")
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(fd, min(64 * KIB, limit + 1 - total)):
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise _Refused(f"{shown} is more than {limit} bytes; the limit for "
                                   f"reading is {limit}")
            return b"".join(chunks)
        except OSError as error:
            raise _Refused(f"could not read {shown}: {error.strerror or error}") from None
        finally:
            os.close(fd)

    def _replace(self, parent: int, name: str, shown: str, data: bytes) -> None:
        """Put `data` at `name` in `parent` through a temporary file and a rename."""
        found = _lstat(parent, name)
        if found is not None:
            # For the message only: a link swapped in after this is replaced, not followed.
            if stat.S_ISLNK(found.st_mode):
                raise _not_followed(shown)
            if stat.S_ISDIR(found.st_mode):
                raise _Refused(f"{shown} is a folder, not a file")
            if not stat.S_ISREG(found.st_mode):
                raise _Refused(f"{shown} is {_kind(found.st_mode)}; only regular files "
                               "can be written")
        temp = TEMP_PREFIX + secrets.token_hex(8)
        try:
            fd = os.open(temp, _TEMP_FLAGS, 0o644, dir_fd=parent)
        except OSError as error:
            raise _Refused(f"could not write {shown}: {error.strerror or error}") from None
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                if self.durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except OSError as error:
            with suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise _Refused(f"could not write {shown}: {error.strerror or error}") from None
        if self.durable:
            with suppress(OSError):
                os.fsync(parent)

    def _check_size(self, size: int) -> None:
        if size > self.max_file_bytes:
            raise _Refused(f"file would be {size} bytes; the limit is {self.max_file_bytes}")

    @staticmethod
    def _encode(text: object, what: str) -> bytes:
        if not isinstance(text, str):
            raise _Refused(f"{what} must be text, not {type(text).__name__}")
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise _Refused(f"{what} contains characters that cannot be stored as UTF-8 "
                           "(lone surrogates)") from None

    @staticmethod
    def _decode(data: bytes, shown: str) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused(f"{shown} is not UTF-8 text") from None


def _occurrences(text: str, old: str) -> int:
    """How many times `old` occurs in `text`, overlapping matches included."""
    count, start = 0, text.find(old)
    while start != -1:
        count += 1
        start = text.find(old, start + 1)
    return count


def _listing(folder: int) -> list[str]:
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
                lines.append(f"{entry.name}  ({_kind(info.st_mode)}; cannot be read)")
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
