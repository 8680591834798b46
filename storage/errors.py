"""Errors the storage layer raises; each message is one line a person can act on."""

from __future__ import annotations


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
