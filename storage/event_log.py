"""The audit trail: every domain event, one JSON object per line in events.jsonl.

Write-only by design: SQLite is the truth and events are never replayed. They
are for people (and observers) to see what happened.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from core.events import DomainEvent
from storage.database import utc_stamp
from storage.errors import is_storage_fault
from storage.jsonl import JsonlFile
from storage.side_files import APPEND_FLAGS, READ_FLAGS, claim, kind, open_regular, write_all

log = logging.getLogger("hearth.storage")


class EventLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = JsonlFile(path)

    async def append(self, event: DomainEvent) -> None:
        await self.append_many((event,))

    async def append_many(self, events: Iterable[DomainEvent]) -> None:
        stamp = utc_stamp()
        self._file.append([{**e.to_dict(), "logged_at": stamp} for e in events])

    def read(self) -> Iterator[dict[str, Any]]:
        """All intact records, oldest first (for tools and tests, never for replay)."""
        return self._file.read()


class EventMirror:
    """events.jsonl as a mirror of the events table: one line per committed event.

    Lines are appended only after the transaction holding their events commits, so
    the file never runs ahead of the database. A crash between the commit and the
    append leaves it behind; `reconcile` at start-up appends what is missing and
    cuts a torn last line, so every committed event has exactly one line. A line
    damaged anywhere else (torn, garbage, lost or doubled) makes it write the file anew
    from the events table, keeping the damaged one as events.damaged.STAMP.jsonl.
    Each line is the event's JSON with its `seq` (database order) first.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, first_seq: int, rows: Sequence[Any]) -> None:
        """Append events numbered from `first_seq` (rows carry `.data`, a JSON object)."""
        if not rows:
            return
        text = "".join(
            f'{{"seq":{first_seq + i},{row.data[1:]}\n' for i, row in enumerate(rows)
        )
        try:
            with self._lock:
                fd = open_regular(self.path)  # no link followed, never waiting
                try:
                    write_all(fd, text.encode("utf-8"))
                finally:
                    os.close(fd)
        except OSError as exc:  # the database has them; reconcile will write them later
            if is_storage_fault(exc):  # the disk is full: the run stops here (one line)
                raise OSError(exc.errno, exc.strerror, str(self.path)) from None
            log.warning("could not append to %s: %s", self.path, exc)

    def last_seq(self) -> int:
        """The seq of the last intact line (0 for none); cuts a torn last line off."""
        if not self.path.exists():
            return 0
        with os.fdopen(open_regular(self.path, os.O_RDWR), "rb+") as fh:
            size = fh.seek(0, 2)
            if size == 0:
                return 0
            window = min(size, 1 << 20)
            fh.seek(size - window)
            tail = fh.read(window)
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                keep = size - window + cut + 1 if cut >= 0 else 0
                fh.truncate(keep)
                tail = tail[: cut + 1] if cut >= 0 else b""
            for line in reversed(tail.splitlines()):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("seq"), int):
                    return record["seq"]
        return 0

    async def reconcile(self, engine_repo: Any) -> int:
        """Append events the database has and the file lacks; returns how many. A file
        that begins with another world's first event is set aside (never read as this
        one's, never deleted) and this world's log is written anew. A link, FIFO or
        device at events.jsonl is moved aside first (storage/side_files.py)."""
        claim(self.path)
        await self._set_aside_if_foreign(engine_repo)
        have = self.last_seq()
        if self._size() and not await self._agrees(engine_repo, have):
            return await self._rebuild(engine_repo)
        return await self._write_after(engine_repo, have, self.path, "a")

    async def _write_after(self, engine_repo: Any, have: int, path: Path, mode: str) -> int:
        """Write the events after seq `have` to `path`; returns how many."""
        added = 0
        while True:
            missing = await engine_repo.events_after(have, 10_000)
            if not missing:
                return added
            try:
                flags = APPEND_FLAGS if mode == "a" else os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                with self._lock, os.fdopen(open_regular(path, flags), mode,
                                           encoding="utf-8") as fh:
                    for seq, data in missing:
                        fh.write(json.dumps({"seq": seq, **data}, ensure_ascii=False,
                                            separators=(",", ":"), sort_keys=False) + "\n")
            except OSError as exc:  # a full disk: named (a torn last line is cut next time)
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            mode = "a"
            have = missing[-1][0]
            added += len(missing)

    def _size(self) -> int:
        try:
            return os.lstat(self.path).st_size
        except FileNotFoundError:
            return 0

    async def _agrees(self, engine_repo: Any, last: int) -> bool:
        """Whether the file up to its last intact line `last` looks whole, cheaply: its
        first line is the table's first event, it has one line per event up to `last`,
        and every line ends as an object does. (A line torn or cut in the middle, lost
        or doubled changes the count; a full parse would cost seconds on big logs.)"""
        if self._first_line() is None:  # the first line does not parse
            return False
        lines = ends = 0
        carry = b""
        with os.fdopen(open_regular(self.path, os.O_RDONLY), "rb") as fh:
            while block := fh.read(1 << 23):
                lines += block.count(b"\n")
                ends += (carry + block[:1]).count(b"}\n") + block.count(b"}\n")
                carry = block[-1:]
        return lines == ends == await engine_repo.count_events_upto(last)

    async def _rebuild(self, engine_repo: Any) -> int:
        """Write the log anew from the events table beside the damaged one, rename it in,
        and keep the damaged one as events.damaged.STAMP.jsonl; returns the lines written."""
        fresh = self.path.with_name(self.path.name + ".rebuilding")
        os.close(open_regular(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
        written = await self._write_after(engine_repo, 0, fresh, "w")
        aside = self.path.with_name(f"events.damaged.{_stamp()}.jsonl")
        try:
            # the damaged file stays whole under its new name
            os.link(self.path, aside, follow_symlinks=False)
        except OSError:
            self.path.replace(aside)
        os.replace(fresh, self.path)
        log.warning("%s had damaged lines; it was kept as %s and written anew from the "
                    "database (%d events)", self.path, aside.name, written)
        return written

    async def _set_aside_if_foreign(self, engine_repo: Any) -> None:
        first = self._first_line()
        if first is None:
            return
        ours = await engine_repo.events_after(0, 1)
        if ours and first == {"seq": ours[0][0], **ours[0][1]}:
            return
        aside = self.path.with_name(f"events.foreign.{_stamp()}.jsonl")
        self.path.replace(aside)
        log.warning("%s began with another world's events; it was moved to %s and this "
                    "world's event log is written anew", self.path, aside.name)

    def _first_line(self) -> dict[str, Any] | None:
        """The first line of the file, read; None for no file, an empty one, or a first
        line that is not a JSON object (a damaged start is left to the repair)."""
        try:
            fd = os.open(self.path, READ_FLAGS)  # never through a link, never waiting
        except OSError:
            return None
        try:
            if kind(os.fstat(fd)) is not None:
                os.close(fd)
                return None
        except OSError:
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as fh:
            line = fh.readline()
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            return None
        return record if isinstance(record, dict) else None


def _stamp() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
