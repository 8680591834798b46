"""Every domain event survives to_dict -> JSON -> event_from_dict unchanged."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing
from enum import Enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import events
from core.conversation import Privacy
from core.events import (
    EVENT_TYPES,
    ConversationStartedEvent,
    DomainEvent,
    ItemCraftedEvent,
    StructureDetectedEvent,
    WallPlacedEvent,
    event_from_dict,
)
from core.terrain import Weather
from core.types import AgentName, ConversationId, Direction, Position

SOCIAL = {
    "agents_met",
    "item_given",
    "invitation_sent",
    "invitation_accepted",
    "invitation_declined",
    "invitation_expired",
    "conversation_started",
    "conversation_joined",
    "conversation_left",
    "conversation_ended",
    "conversation_turn",
}


# --- building sample values from type hints ----------------------------------------


def _is_optional(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(
        None
    ) in typing.get_args(hint)


def _non_none(hint: Any) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    assert len(args) == 1, f"unsupported union {hint!r}"
    return args[0]


def _base(hint: Any) -> Any:
    """A NewType's underlying type, or the hint itself."""
    return getattr(hint, "__supertype__", hint)


def sample_value(hint: Any, name: str, variant: int = 0) -> Any:
    """A plausible, non-trivial value for a field of type `hint`."""
    if _is_optional(hint):
        return sample_value(_non_none(hint), name, variant)
    origin = typing.get_origin(hint)
    if origin is tuple:
        (inner, *_rest) = typing.get_args(hint)
        return (sample_value(inner, name, variant), sample_value(inner, name, variant + 1))
    if origin is frozenset:
        (inner,) = typing.get_args(hint)
        return frozenset(sample_value(inner, name, variant + i) for i in range(3))
    if hint is Position:
        return Position(3 + variant, 7 - variant)
    if isinstance(hint, type) and issubclass(hint, Enum):
        members = list(hint)
        return members[(variant + 1) % len(members)]
    if hint is AgentName:
        return AgentName(["Ember", "River", "Moss", "Fen"][variant % 4])
    if hint is ConversationId:
        return ConversationId(f"conv-{variant}")
    if _base(hint) is bool:
        return True
    if _base(hint) is int:
        return 11 + variant
    if _base(hint) is str:
        return f'{name} "quoted" \u00fcn\u00efcode \u2600 #{variant}'
    raise AssertionError(f"no sample for field {name!r} of type {hint!r}: extend the test")


def sample_event(cls: type[DomainEvent], variant: int = 0) -> DomainEvent:
    hints = typing.get_type_hints(cls)
    kwargs = {f.name: sample_value(hints[f.name], f.name, variant) for f in dataclasses.fields(cls)}
    return cls(**kwargs)


def optional_fields(cls: type[DomainEvent]) -> list[str]:
    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if _is_optional(hints[f.name])]


def assert_same_types(a: DomainEvent, b: DomainEvent) -> None:
    """Equality alone misses str-vs-enum and AgentName-vs-str; check types too."""
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        assert type(va) is type(vb), (f.name, va, vb)
        if isinstance(va, frozenset | tuple):
            assert sorted(map(type, va), key=str) == sorted(map(type, vb), key=str), f.name


ALL_TYPES = sorted(EVENT_TYPES)


# --- the registry ---------------------------------------------------------------


def test_registry_holds_every_event_class_once() -> None:
    defined = {
        obj
        for _, obj in inspect.getmembers(events, inspect.isclass)
        if issubclass(obj, DomainEvent) and obj is not DomainEvent
    }
    assert defined == set(EVENT_TYPES.values())
    assert len(EVENT_TYPES) == len(defined) == 32
    for key, cls in EVENT_TYPES.items():
        assert cls.event_type == key


def test_categories() -> None:
    assert {k for k, cls in EVENT_TYPES.items() if cls.category == "social"} == SOCIAL
    assert {cls.category for cls in EVENT_TYPES.values()} == {"world", "social", "gardener"}
    assert {k for k, cls in EVENT_TYPES.items() if cls.category == "gardener"} == {
        "gardener_intervention", "gardener_refused"}


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        EVENT_TYPES["made_up"] = DomainEvent  # type: ignore[index]


# --- round trips ----------------------------------------------------------------


@pytest.mark.parametrize("event_type", ALL_TYPES)
def test_round_trip_every_event(event_type: str) -> None:
    cls = EVENT_TYPES[event_type]
    event = sample_event(cls)
    d = event.to_dict()

    assert d["type"] == event_type
    assert d["category"] == cls.category
    assert set(d) == {"type", "category"} | {f.name for f in dataclasses.fields(cls)}

    text = json.dumps(d)
    assert json.loads(text) == d  # only JSON primitives inside

    back = event_from_dict(d)
    assert back == event
    assert type(back) is cls
    assert_same_types(back, event)

    through_json = event_from_dict(json.loads(text))
    assert through_json == event
    assert_same_types(through_json, event)


@pytest.mark.parametrize("event_type", [t for t in ALL_TYPES if optional_fields(EVENT_TYPES[t])])
def test_round_trip_with_optional_fields_empty(event_type: str) -> None:
    cls = EVENT_TYPES[event_type]
    event = dataclasses.replace(sample_event(cls), **{name: None for name in optional_fields(cls)})
    d = event.to_dict()
    assert all(d[name] is None for name in optional_fields(cls))
    assert event_from_dict(json.loads(json.dumps(d))) == event


def test_optional_fields_exist() -> None:
    """Guard for the test above: at least the structure events have optional agents."""
    assert optional_fields(StructureDetectedEvent) == ["agent"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ALL_TYPES), st.integers(0, 50), st.integers(0, 10**9))
def test_round_trip_property(event_type: str, variant: int, tick: int) -> None:
    event = dataclasses.replace(sample_event(EVENT_TYPES[event_type], variant), tick=tick)
    back = event_from_dict(json.loads(json.dumps(event.to_dict())))
    assert back == event
    assert_same_types(back, event)


# --- the plain shapes -------------------------------------------------------------


def test_plain_shapes() -> None:
    e = WallPlacedEvent(4, AgentName("Ember"), Position(2, 3), Direction.NORTH)
    assert e.to_dict() == {
        "type": "wall_placed",
        "category": "world",
        "tick": 4,
        "agent": "Ember",
        "position": {"x": 2, "y": 3},
        "direction": "north",
    }


def test_sets_become_sorted_lists_and_tuples_lists() -> None:
    names = ["Ash", "Birch", "Cedar", "Elm", "Ember", "Fen", "Moss", "River", "Willow"]
    e = ConversationStartedEvent(
        1,
        ConversationId("c1"),
        frozenset(AgentName(n) for n in reversed(names)),
        Privacy.PRIVATE,
    )
    d = e.to_dict()
    assert d["participants"] == names  # sorted, so log lines are deterministic
    assert d["privacy"] == "private"
    crafted = ItemCraftedEvent(2, AgentName("Ember"), "combine", ("wood", "fiber"), "rope", 1)
    assert crafted.to_dict()["inputs"] == ["wood", "fiber"]


def test_enum_fields_are_restored_as_enums() -> None:
    d = events.WeatherChangedEvent(3, Weather.FOGGY).to_dict()
    assert d["weather"] == "foggy"
    back = event_from_dict(d)
    assert back.weather is Weather.FOGGY  # type: ignore[attr-defined]


# --- bad input ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["no_such_event", "", None, "event", "AGENT_MOVED"])
def test_unknown_type_raises(kind: Any) -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        event_from_dict({"type": kind, "tick": 1})


def test_missing_type_raises() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        event_from_dict({"tick": 1})


def test_extra_keys_are_ignored() -> None:
    e = events.AgentSleptEvent(5, AgentName("Ember"))
    d = {**e.to_dict(), "logged_at": "2024-01-01T00:00:00"}
    assert event_from_dict(d) == e


def test_events_are_frozen() -> None:
    e = events.AgentSleptEvent(5, AgentName("Ember"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.tick = 6  # type: ignore[misc]
