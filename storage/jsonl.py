"""Append-only JSON Lines files that survive a torn last line.

A process killed mid-write can leave a final line without its newline. The
next writer starts on a fresh line, so one torn record never corrupts the next,
and readers skip lines that do not parse.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from storage.side_files import claim_dir, open_regular, read_bytes, write_all


class JsonlFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, records: list[Mapping[str, Any]]) -> None:
        if not records:
            return
        text = "".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"
            for r in records
        )
        data = text.encode("utf-8")
        with self._lock:
            claim_dir(self.path.parent)
            fd = open_regular(self.path)  # no link followed, never waiting
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                write_all(fd, data)
            finally:
                os.close(fd)

    def read(self) -> Iterator[dict[str, Any]]:
        """Every intact record, oldest first; torn or garbled lines are skipped."""
        found = read_bytes(self.path)  # a link or FIFO there is not read
        if found is None:
            return
        for line in found.decode("utf-8", errors="replace").splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record
