"""Per-agent traces under traces/NAME.jsonl, and names that must not escape that folder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from storage import Storage, traces
from storage.jsonl import JsonlFile
from storage.traces import TraceWriter


def _all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


async def test_traces_are_written_and_read_per_agent(storage: Storage) -> None:
    await storage.traces.write("Ember", {"turn": 1, "prompt": "look around", "tools": ["look"]})
    await storage.traces.write("Ash", {"turn": 1, "reply": "héllo 🌲"})
    await storage.traces.write("Ember", {"turn": 2, "reply": None})

    ember = list(storage.traces.read("Ember"))
    ash = list(storage.traces.read("Ash"))
    assert [{k: v for k, v in r.items() if k != "logged_at"} for r in ember] == [
        {"turn": 1, "prompt": "look around", "tools": ["look"]},
        {"turn": 2, "reply": None},
    ]
    assert [r["reply"] for r in ash] == ["héllo 🌲"]
    assert all(isinstance(r["logged_at"], str) and r["logged_at"] for r in ember + ash)
    assert list(storage.traces.read("Birch")) == []

    traces_dir = storage.data_dir / "traces"
    assert storage.traces.path_for("Ember") == traces_dir / "Ember.jsonl"
    assert sorted(p.name for p in traces_dir.iterdir()) == ["Ash.jsonl", "Ember.jsonl"]
    lines = (traces_dir / "Ember.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["turn"] for line in lines] == [1, 2]


async def test_traces_survive_reopening(storage: Storage, data_dir: Path) -> None:
    await storage.traces.write("Ember", {"n": 1})
    async with Storage(data_dir) as again:
        await again.traces.write("Ember", {"n": 2})
        assert [r["n"] for r in again.traces.read("Ember")] == [1, 2]


@pytest.mark.parametrize(
    "bad",
    ["../evil", "..", "../../evil", "a/b", "/tmp/evil", "evil/../../x", "", ".hidden",
     "1abc", "x" * 33, "nul\x00byte", "back\\slash"],
)
async def test_an_invalid_agent_name_is_refused_and_writes_nothing(
    storage: Storage, tmp_path: Path, bad: str
) -> None:
    before = _all_files(tmp_path)

    with pytest.raises(ValueError):
        await storage.traces.write(bad, {"pwned": True})
    with pytest.raises(ValueError):
        storage.traces.path_for(bad)
    with pytest.raises(ValueError):
        list(storage.traces.read(bad))

    assert _all_files(tmp_path) == before
    assert not (storage.data_dir / "evil.jsonl").exists()
    assert not (tmp_path / "evil.jsonl").exists()


async def test_records_are_written_together_once_the_loop_is_quiet(
        storage: Storage, data_dir: Path) -> None:
    """Records wait while the loop is busy and reach the file together once no record
    has come for QUIET seconds: one append (one open, write, close) for an agent's
    records of a step."""
    path = storage.traces.path_for("Ember")
    appends = []
    real = JsonlFile.append

    def counted(self: JsonlFile, records: list) -> None:
        appends.append(len(records))
        real(self, records)

    JsonlFile.append = counted  # type: ignore[method-assign]
    try:
        for n in range(3):
            storage.traces.write_now("Ember", {"n": n})
            await asyncio.sleep(0)
        assert not path.exists()  # the loop is not quiet yet
        await asyncio.sleep(traces.QUIET * 4)
    finally:
        JsonlFile.append = real  # type: ignore[method-assign]
    assert appends == [3]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["n"] for line in lines] == [0, 1, 2]


async def test_a_record_waits_no_longer_than_most_however_busy_the_loop(
        storage: Storage) -> None:
    """Records coming faster than QUIET without end are still written, MOST seconds
    after the first waited.

    They come from a timer on a fixed beat, each record the last thing it does: when the
    process stalls (a busy machine, a long garbage collection: it failed so in runs of the
    whole suite), the late beat is due before the writer's own check and runs first,
    so the loop is never left quiet. A task's `asyncio.sleep` woken late ran after that
    check, which rightly found QUIET seconds without a record and wrote early."""
    path = storage.traces.path_for("Ember")
    loop = asyncio.get_running_loop()
    started = loop.time()
    beat = traces.QUIET / 5
    written_by: list[float] = []
    done = loop.create_future()

    def record(n: int) -> None:
        now = loop.time()
        if not written_by and path.exists():
            written_by.append(now - started)
        if now - started >= traces.MOST * 3:
            done.set_result(None)
            return
        loop.call_at(started + (n + 1) * beat, record, n + 1)
        storage.traces.write_now("Ember", {"at": now})

    record(0)
    await done
    assert written_by and traces.MOST <= written_by[0] < traces.MOST * 2, written_by


async def test_records_waiting_are_written_when_the_storage_closes(data_dir: Path) -> None:
    async with Storage(data_dir) as storage:
        storage.traces.write_now("Ember", {"n": 1})
        path = storage.traces.path_for("Ember")
    assert [json.loads(line)["n"] for line in path.read_text(encoding="utf-8").splitlines()] == [1]


def test_without_a_running_loop_a_record_is_written_at_once(tmp_path: Path) -> None:
    traces = TraceWriter(tmp_path / "traces")
    traces.write_now("Ember", {"n": 1})
    assert traces.path_for("Ember").read_text(encoding="utf-8").count("\n") == 1
