"""The audit trail events.jsonl, written through an open Storage."""

from __future__ import annotations

import json

from core.conversation import Privacy
from core.events import (
    AgentMovedEvent,
    ConversationStartedEvent,
    ConversationTurnEvent,
    DomainEvent,
    ItemCraftedEvent,
    StructureDetectedEvent,
    WallPlacedEvent,
    WeatherChangedEvent,
    event_from_dict,
)
from core.terrain import Weather
from core.types import AgentName, ConversationId, Direction, Position
from storage import Storage

ASH, BIRCH = AgentName("Ash"), AgentName("Birch")


def _events() -> list[DomainEvent]:
    return [
        AgentMovedEvent(1, ASH, Position(0, 0), Position(0, 1)),
        WallPlacedEvent(2, ASH, Position(0, 1), Direction.EAST),
        ItemCraftedEvent(3, BIRCH, "carve", ("wood", "stone"), "axe", 1),
        StructureDetectedEvent(4, "house-1", 9),
        StructureDetectedEvent(4, "house-2", 2, agent=BIRCH),
        WeatherChangedEvent(5, Weather.RAINY),
        ConversationStartedEvent(6, ConversationId("c1"), frozenset({BIRCH, ASH}),
                                 Privacy.PRIVATE),
        ConversationTurnEvent(7, ConversationId("c1"), ASH, 'Héllo 🌧️ "friend"\nnew line'),
    ]


async def test_each_append_writes_one_json_object_per_line(storage: Storage) -> None:
    events = _events()
    for event in events:
        await storage.event_log.append(event)

    path = storage.data_dir / "events.jsonl"
    assert storage.event_log.path == path
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.decode("utf-8").split("\n")[:-1]
    assert len(lines) == len(events)
    for line, event in zip(lines, events, strict=True):
        record = json.loads(line)
        assert isinstance(record, dict)
        assert record["type"] == event.event_type
        assert record["tick"] == event.tick
        assert isinstance(record["logged_at"], str) and record["logged_at"]


async def test_read_returns_the_records_and_they_round_trip_to_events(storage: Storage) -> None:
    events = _events()
    await storage.event_log.append(events[0])
    await storage.event_log.append_many(events[1:])

    records = list(storage.event_log.read())
    assert len(records) == len(events)
    assert [event_from_dict(r) for r in records] == events
    assert records[0]["from_position"] == {"x": 0, "y": 0}
    assert records[6]["participants"] == ["Ash", "Birch"]


async def test_a_new_log_reads_as_empty(storage: Storage) -> None:
    assert list(storage.event_log.read()) == []
    await storage.event_log.append_many([])
    assert not (storage.data_dir / "events.jsonl").exists()


async def test_a_torn_last_line_is_skipped_and_the_next_append_starts_a_new_line(
    storage: Storage,
) -> None:
    first, second = _events()[0], _events()[5]
    await storage.event_log.append(first)
    path = storage.data_dir / "events.jsonl"
    torn = b'{"type":"agent_moved","tick":9,"agent":"As'
    with path.open("ab") as fh:
        fh.write(torn)

    assert [event_from_dict(r) for r in storage.event_log.read()] == [first]

    await storage.event_log.append(second)
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == torn
    assert json.loads(lines[2])["type"] == "weather_changed"
    assert lines[3] == b""
    assert [event_from_dict(r) for r in storage.event_log.read()] == [first, second]


async def test_a_torn_line_at_the_very_start_of_the_file(storage: Storage) -> None:
    path = storage.data_dir / "events.jsonl"
    path.write_bytes(b'{"type":')
    event = _events()[2]
    await storage.event_log.append(event)
    assert path.read_bytes().startswith(b'{"type":\n{')
    assert [event_from_dict(r) for r in storage.event_log.read()] == [event]
