"""Per-agent traces of language-model turns: traces/NAME.jsonl, for debugging.

A turn's step leaves several records at once (the request's answer, then each tool
call and its result), all from one pass of the event loop. They are gathered and
appended together when that pass is done, one open, write and close of the agent's
file for them all: each append checks the file anew (storage/jsonl.py), and at 240
agents three appends a step were a tenth of the loop's time between two answers.
A record is never held past the next pass; `read` and `flush` (which Storage.close
calls) write what is waiting first, and without a running loop a record is written
at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from core.types import agent_name
from storage.database import utc_stamp
from storage.jsonl import JsonlFile

log = logging.getLogger("hearth.storage")


class TraceWriter:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._files: dict[str, JsonlFile] = {}
        self._waiting: dict[str, list[Mapping[str, Any]]] = {}

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
        """Append one record to NAME.jsonl, stamped now: with the others of this pass
        of the event loop, when it is done (at once without a running loop)."""
        file = self._file(name)  # a name that is no agent's is refused here, at once
        stamped = {"logged_at": utc_stamp(), **record}
        if not self._waiting:
            try:
                asyncio.get_running_loop().call_soon(self.flush_logged)
            except RuntimeError:  # no loop: nothing would come back to write it
                file.append([stamped])
                return
        self._waiting.setdefault(name, []).append(stamped)

    def flush(self) -> None:
        """Write every record waiting; an agent's file that fails raises after the
        others are written (its records are dropped, as a failed append's would be)."""
        waiting, self._waiting = self._waiting, {}
        failed: OSError | None = None
        for name, records in waiting.items():
            try:
                self._file(name).append(records)
            except OSError as exc:
                failed = exc
        if failed is not None:
            raise failed

    def flush_logged(self) -> None:
        """`flush`, a failure logged rather than raised (for the loop, and a close)."""
        try:
            self.flush()
        except Exception:  # a trace is for reading later, and never stops a turn
            log.exception("trace records could not be written")

    def read(self, name: str) -> Iterator[dict[str, Any]]:
        self.flush()
        return self._file(name).read()
