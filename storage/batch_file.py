"""`data/batch.json`: that a `--run --economy` waits on a Message Batch, for watchers.

The run that changes the world writes it when its agents' requests go into a batch and
takes it away when no batch is pending; an observer that only watches (another
process) reads it to say why the world is still. It is a note, never a record: a
missing, damaged or hostile one (a link, a FIFO) is as none; the writer clears a
leftover one when it starts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from storage.errors import StorageError
from storage.side_files import kind, read_bytes, write_whole

BATCH_FILE = "batch.json"
MOST_BYTES = 4096


@dataclass(frozen=True, slots=True)
class BatchWait:
    batches: int
    requests: int
    since: float
    """When the oldest pending batch was sent (seconds since the epoch)."""

    def words(self, now: float) -> str:
        minutes = max(0, int((now - self.since) // 60))
        batches = "a Message Batch" if self.batches == 1 else f"{self.batches} Message Batches"
        return (f"waiting on {batches} of {self.requests} request(s) for {minutes} min "
                "(usually done within the hour)")


def write_pending(data_dir: Path, wait: BatchWait | None) -> None:
    """Say that a batch is pending (`wait`), or that none is (None: the file goes).
    Failures are ignored: the note is a courtesy to watchers, never worth a run."""
    path = Path(data_dir) / BATCH_FILE
    try:
        if wait is None:
            info = os.lstat(path)
            if kind(info) is None:  # Hearth's own plain file: removed; anything else stays
                os.unlink(path)
            return
        write_whole(path, json.dumps({"batches": wait.batches, "requests": wait.requests,
                                      "since": wait.since}).encode())
    except (OSError, ValueError, StorageError):  # StorageError: a thing keeps appearing
        return


def read_pending(data_dir: Path) -> BatchWait | None:
    """The pending batch the world's writer told of, or None."""
    raw = read_bytes(Path(data_dir) / BATCH_FILE)
    if raw is None or len(raw) > MOST_BYTES:
        return None
    try:
        said = json.loads(raw.decode("utf-8"))
        wait = BatchWait(int(said["batches"]), int(said["requests"]), float(said["since"]))
    except (ValueError, KeyError, TypeError):
        return None
    return wait if wait.batches > 0 and wait.requests >= 0 else None
