"""Issue 42: the note a `--run --economy` leaves while it waits on a Message Batch."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

from observe.run_command import _say_pending
from storage.batch_file import BATCH_FILE, BatchWait, read_pending, write_pending


def test_the_note_is_written_read_and_taken_away(tmp_path: Path) -> None:
    assert read_pending(tmp_path) is None
    write_pending(tmp_path, BatchWait(2, 7, 1_000.0))
    wait = read_pending(tmp_path)
    assert wait == BatchWait(2, 7, 1_000.0)
    assert wait.words(1_000.0 + 61) == ("waiting on 2 Message Batches of 7 request(s) for "
                                        "1 min (usually done within the hour)")
    write_pending(tmp_path, None)
    assert not (tmp_path / BATCH_FILE).exists()
    write_pending(tmp_path, None)  # none there: nothing to do, no error


def test_a_link_or_a_damaged_note_is_as_none_and_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    os.symlink(target, tmp_path / BATCH_FILE)
    assert read_pending(tmp_path) is None
    write_pending(tmp_path, None)  # a link is not Hearth's file: left where it is
    assert (tmp_path / BATCH_FILE).is_symlink() and target.read_text() == "keep me"
    write_pending(tmp_path, BatchWait(1, 1, 5.0))  # the link is moved aside, not written
    assert target.read_text() == "keep me" and read_pending(tmp_path) == BatchWait(1, 1, 5.0)
    (tmp_path / BATCH_FILE).write_text('{"batches": "many"}')
    assert read_pending(tmp_path) is None


def test_the_run_says_a_pending_batch_and_notes_it_for_watchers(tmp_path: Path) -> None:
    class Pending:  # adapters/claude_batches.py Pending, as the gate tells it
        batches, requests, since = 1, 3, time.monotonic() - 120

    said = io.StringIO()
    tell = _say_pending(tmp_path, said, quiet=False)
    tell(Pending())
    assert "(waiting on 1 Message Batch(es) of 3 request(s)" in said.getvalue()
    wait = read_pending(tmp_path)
    assert wait is not None and 115 < time.time() - wait.since < 130
    tell(None)
    assert read_pending(tmp_path) is None and not (tmp_path / BATCH_FILE).exists()
