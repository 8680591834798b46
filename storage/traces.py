"""Per-agent traces of language-model turns: traces/NAME.jsonl, for debugging.

Records are written when the event loop has a moment: once no record has come for
`QUIET` seconds, or `MOST` after the first that waits, whichever is sooner. Each
append opens, checks, writes and closes the agent's file (storage/jsonl.py), and
at 240 agents a step's records (the answer, each tool call and its result) took a
tenth of the loop's time between two answers, a new world's first records (each
file made) a fifth of a second of its first tick: all of it while the others'
requests waited to be sent. Written when the loop is quiet (the agents wait on
their models), they cost the turns nothing, and an agent's records of a step go
in one append. `read` and `flush` (which Storage.close calls) write what is
waiting first, and without a running loop a record is written at once; a process
killed outright loses at most `MOST` seconds of trace, never a world's state.
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

QUIET = 0.005
"""Seconds without a new record after which the waiting ones are written."""
MOST = 0.25
"""Seconds a record may wait at most, however busy the loop stays."""


class TraceWriter:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._files: dict[str, JsonlFile] = {}
        self._waiting: dict[str, list[Mapping[str, Any]]] = {}
        self._first = self._last = 0.0  # loop times: the first record waiting, the latest

    def path_for(self, name: str) -> Path:
        # Validating the name keeps a hostile name from escaping the directory.
        return self.directory / f"{agent_name(name)}.jsonl"

    def _file(self, name: str) -> JsonlFile:
        if name not in self._files:
            self._files[name] = JsonlFile(self.path_for(name))
        return self._files[name]

    async def write(self, name: str, record: Mapping[str, Any]) -> None:
        """Append one record at once, after any waiting (written when awaited)."""
        self.write_now(name, record)
        self.flush()

    def write_now(self, name: str, record: Mapping[str, Any]) -> None:
        """Append one record to NAME.jsonl, stamped now: when the loop is quiet (the
        module's docstring), at once without a running loop."""
        file = self._file(name)  # a name that is no agent's is refused here, at once
        stamped = {"logged_at": utc_stamp(), **record}
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: nothing would come back to write it
            file.append([stamped])
            return
        self._last = loop.time()
        if not self._waiting:
            self._first = self._last
            loop.call_later(QUIET, self._when_quiet, loop)
        self._waiting.setdefault(name, []).append(stamped)

    def _when_quiet(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._waiting:
            return  # flushed meanwhile
        now = loop.time()
        if now - self._last < QUIET and now - self._first < MOST:
            loop.call_later(min(QUIET - (now - self._last), MOST - (now - self._first)),
                            self._when_quiet, loop)
            return
        self.flush_logged()

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
