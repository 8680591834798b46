"""The limits an endpoint said, kept for the next run (storage/limits_file.py,
`Capacity.said`/`assume`), through a real file in a real data folder.

Rate-limit headers as https://platform.claude.com/docs/en/api/rate-limits gives them:
per-minute token buckets refilled continuously; the copy a new run starts from is each
bucket's level when the last run closed, refilled for the time since.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from adapters.capacity import Capacities
from storage.limits_file import LIMITS_FILE, read_limits, write_limits
from tests.unit.adapters.test_capacity import told

URL, MODEL = "https://api.anthropic.com", "claude-sonnet-5-5"


async def _a_run_that_was_told(clock: list[float]) -> Capacities:
    rooms = Capacities(start=4, ceiling=500, wall=lambda: clock[0])
    room = rooms.of(URL, MODEL)
    ticket = await room.admit(output_tokens=1_000)
    room.answered(ticket, told(requests=(60, 30), output=(80_000, 20_000)),
                  input_used=1_200, output_used=200)
    return rooms


async def test_a_resumed_run_starts_with_the_window_open_and_the_buckets_refilled(
        tmp_path: Path) -> None:
    clock = [1_000_000.0]
    before = await _a_run_that_was_told(clock)
    write_limits(tmp_path, before.said())
    kept = json.loads((tmp_path / LIMITS_FILE).read_text())
    assert kept["version"] == 1 and f"{MODEL} at {URL}" in kept["endpoints"]

    clock[0] += 15.0  # a quarter of a minute later: a quarter of each limit came back
    after = Capacities(start=4, ceiling=500, wall=lambda: clock[0],
                       remembered=read_limits(tmp_path))
    room = after.of(URL + "/", MODEL)
    assert room.window == 500  # no round trip waited for the headers
    requests = room.buckets["requests"]
    assert requests.limit == 60 and requests.level == pytest.approx(30 + 15, abs=0.5)
    output = room.buckets["output-tokens"]
    # The answer's headers counted its output (the page: output counts as written),
    # so the copy is what they said, refilled for the quarter minute.
    assert output.level == pytest.approx(20_000 + 20_000, rel=0.01)
    assert after.of(URL, "claude-haiku-5-5").window == 4  # a model it never heard of
    # A 429 (another program spent the key meanwhile) still pauses and halves.
    ticket = await room.admit()
    room.refused(ticket, 429, {"retry-after": "0.1"}, retry_after=0.1)
    assert room.window == 1 and room.paused_until > 0  # halved from what was in flight


async def test_an_endpoint_that_said_nothing_leaves_nothing_and_others_are_kept(
        tmp_path: Path) -> None:
    clock = [1_000_000.0]
    write_limits(tmp_path, (await _a_run_that_was_told(clock)).said())
    quiet = Capacities(start=4, ceiling=500, remembered=read_limits(tmp_path))
    room = quiet.of("http://localhost:8000/v1", "local-model")
    room.answered(await room.admit(), {})  # a local server sends no limits
    assert set(quiet.said()) == {f"{MODEL} at {URL}"}  # the other endpoint's record stays


@pytest.mark.hostile
@pytest.mark.parametrize("make", ["garbage", "newer", "fifo", "link", "huge", "folder"])
async def test_a_limits_file_that_is_not_one_is_as_none(tmp_path: Path, make: str) -> None:
    path = tmp_path / LIMITS_FILE
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"version": 1, "endpoints": {"x": {}}}))
    if make == "garbage":
        path.write_bytes(b"\xff{not json")
    elif make == "newer":
        path.write_text(json.dumps({"version": 2, "endpoints": {}}))
    elif make == "fifo":
        os.mkfifo(path)
    elif make == "link":
        path.symlink_to(outside)
    elif make == "huge":
        path.write_text(json.dumps({"version": 1, "endpoints": {}, "pad": "x" * 300_000}))
    else:
        path.mkdir()
    started = time.monotonic()
    assert read_limits(tmp_path) == {}
    assert time.monotonic() - started < 2  # a FIFO is never waited on
    rooms = Capacities(start=4, ceiling=500, remembered=read_limits(tmp_path))
    assert rooms.of(URL, MODEL).window == 4
    clock = [1_000_000.0]
    write_limits(tmp_path, (await _a_run_that_was_told(clock)).said())
    assert read_limits(tmp_path)  # whatever was there was moved aside, and the record kept
    assert json.loads(outside.read_text())["endpoints"] == {"x": {}}  # never written through


@pytest.mark.hostile
async def test_a_data_folder_that_cannot_be_written_loses_nothing_but_the_cache(
        tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        clock = [1_000_000.0]
        write_limits(folder, (await _a_run_that_was_told(clock)).said())  # logged, not raised
        assert read_limits(folder) == {} or os.geteuid() == 0
    finally:
        folder.chmod(0o700)
