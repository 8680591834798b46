"""The audit trail: every domain event, one JSON object per line in events.jsonl.

Write-only by design: SQLite is the truth and events are never replayed. They
are for people (and observers) to see what happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from core.events import DomainEvent
from storage.database import utc_stamp
from storage.jsonl import JsonlFile


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
