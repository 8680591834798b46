"""Per-agent traces of language-model turns: traces/NAME.jsonl, for debugging."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from core.types import agent_name
from storage.database import utc_stamp
from storage.jsonl import JsonlFile


class TraceWriter:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._files: dict[str, JsonlFile] = {}

    def path_for(self, name: str) -> Path:
        # Validating the name keeps a hostile name from escaping the directory.
        return self.directory / f"{agent_name(name)}.jsonl"

    def _file(self, name: str) -> JsonlFile:
        if name not in self._files:
            self._files[name] = JsonlFile(self.path_for(name))
        return self._files[name]

    async def write(self, name: str, record: Mapping[str, Any]) -> None:
        self.write_now(name, record)

    def write_now(self, name: str, record: Mapping[str, Any]) -> None:
        """Append one record to NAME.jsonl at once (a line is small; minds call this mid-turn)."""
        self._file(name).append([{"logged_at": utc_stamp(), **record}])

    def read(self, name: str) -> Iterator[dict[str, Any]]:
        return self._file(name).read()
