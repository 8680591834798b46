"""Append-only JSON Lines files that survive a torn last line.

A process killed mid-write can leave a final line without its newline. The
next writer starts on a fresh line, so one torn record never corrupts the next,
and readers skip lines that do not parse.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


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
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as fh:
                size = fh.seek(0, 2)
                if size:
                    fh.seek(size - 1)
                    if fh.read(1) != b"\n":
                        fh.write(b"\n")
                fh.write(text.encode("utf-8"))
                fh.flush()

    def read(self) -> Iterator[dict[str, Any]]:
        """Every intact record, oldest first; torn or garbled lines are skipped."""
        if not self.path.exists():
            return
        with self.path.open("r", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict):
                    yield record
