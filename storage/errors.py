"""Errors the storage layer raises; each message is one line a person can act on."""

from __future__ import annotations

import errno
import sqlite3


class StorageError(Exception):
    """Base of every storage failure shown to a user."""


class WorldNotFoundError(StorageError):
    """No world database exists where one was expected."""


class NotAWorldError(StorageError):
    """The file exists but is not a Hearth world (not SQLite, or someone else's)."""


class CorruptDatabaseError(StorageError):
    """SQLite reports the file damaged."""


class NewerSchemaError(StorageError):
    """The file was written by a newer Hearth; it is left untouched."""


class MigrationError(StorageError):
    """A migration failed; the pre-migration backup is named in the message."""


FAULT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})
"""What a file system says when it cannot keep what it is given (full, failing, read-only)."""


def is_storage_fault(exc: BaseException) -> bool:
    """The disk or the database failed (full, an I/O error, locked past patience): not a
    bug or a refusal, and never a reason to let a turn end differently. Whoever meets
    one mid-tick lets it through, so the run stops (one line, from main) with only whole
    turns saved, and the next run takes the lost ones again."""
    if isinstance(exc, sqlite3.Error):
        return True
    return isinstance(exc, OSError) and exc.errno in FAULT_ERRNOS


def storage_fault_line(exc: OSError) -> str:
    """An OSError of `FAULT_ERRNOS` in one line a person can act on, naming where."""
    where = exc.filename if exc.filename is not None else "Hearth's files"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what = f"the disk holding {where} is full"
        act = "free some space and run again"
    elif exc.errno == errno.EROFS:
        what = f"the disk holding {where} is read-only"
        act = "make it writable and run again"
    else:
        what = f"the disk failed writing or reading {where} ({exc.strerror or exc})"
        act = "check the disk and run again"
    return (f"{what}; everything committed is saved and the next run goes on from it: "
            f"{act}")
