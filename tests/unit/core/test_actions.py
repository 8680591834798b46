"""Actions as frozen data, and the results of running them."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from core import actions
from core.actions import (
    ACTION_TYPES,
    AcceptInviteAction,
    Action,
    ActionResult,
    ApplyAction,
    ApproachAction,
    BuildShelterAction,
    CombineAction,
    DeclineInviteAction,
    DropAction,
    ExamineAction,
    GatherAction,
    GiveAction,
    InviteAction,
    JoinConversationAction,
    JourneyAction,
    LeaveConversationAction,
    NamePlaceAction,
    PlaceDoorAction,
    PlaceItemAction,
    PlaceWallAction,
    ReadSignAction,
    RemoveWallAction,
    SenseOthersAction,
    SleepAction,
    SpeakAction,
    TakeAction,
    WalkAction,
    WorkAction,
    WriteSignAction,
)
from core.constants import MAX_SIGN_LENGTH, MAX_SPEECH_LENGTH
from core.conversation import Privacy
from core.events import AgentMovedEvent, AgentSleptEvent
from core.types import AgentName, Direction, Position

EXPECTED_NAMES = {
    "walk",
    "approach",
    "journey",
    "examine",
    "sense_others",
    "take",
    "drop",
    "give",
    "gather",
    "combine",
    "work",
    "apply",
    "build_shelter",
    "place_wall",
    "place_door",
    "place_item",
    "remove_wall",
    "write_sign",
    "read_sign",
    "name_place",
    "sleep",
    "speak",
    "invite",
    "accept_invite",
    "decline_invite",
    "join_conversation",
    "leave_conversation",
}

RIVER = AgentName("River")

SAMPLES: dict[str, Action] = {
    "walk": WalkAction(Direction.NORTH),
    "approach": ApproachAction("River"),
    "journey": JourneyAction(destination=Position(3, 4)),
    "examine": ExamineAction(),
    "sense_others": SenseOthersAction(),
    "take": TakeAction(),
    "drop": DropAction("wood"),
    "give": GiveAction(RIVER, "wood"),
    "gather": GatherAction(),
    "combine": CombineAction(("wood", "fiber")),
    "work": WorkAction("wood", "split"),
    "apply": ApplyAction("stone_axe", "log"),
    "build_shelter": BuildShelterAction(),
    "place_wall": PlaceWallAction(Direction.EAST),
    "place_door": PlaceDoorAction(Direction.EAST),
    "place_item": PlaceItemAction("basket"),
    "remove_wall": RemoveWallAction(Direction.WEST),
    "write_sign": WriteSignAction("Water east"),
    "read_sign": ReadSignAction(),
    "name_place": NamePlaceAction("Old Oak"),
    "sleep": SleepAction(),
    "speak": SpeakAction("Hello"),
    "invite": InviteAction(RIVER),
    "accept_invite": AcceptInviteAction(),
    "decline_invite": DeclineInviteAction(),
    "join_conversation": JoinConversationAction(RIVER),
    "leave_conversation": LeaveConversationAction(),
}


def test_action_types_has_exactly_the_27_names() -> None:
    assert len(EXPECTED_NAMES) == 27
    assert set(ACTION_TYPES) == EXPECTED_NAMES
    assert len(ACTION_TYPES) == 27


def test_action_types_keys_match_class_names() -> None:
    for name, cls in ACTION_TYPES.items():
        assert cls.name == name
        assert issubclass(cls, Action)


def test_every_action_class_in_the_module_is_registered() -> None:
    defined = {
        obj
        for _, obj in inspect.getmembers(actions, inspect.isclass)
        if issubclass(obj, Action) and obj is not Action
    }
    assert defined == set(ACTION_TYPES.values())


def test_action_types_is_read_only() -> None:
    with pytest.raises(TypeError):
        ACTION_TYPES["fly"] = WalkAction  # type: ignore[index]


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_every_action_is_a_frozen_dataclass(name: str) -> None:
    cls = ACTION_TYPES[name]
    assert dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    sample = SAMPLES[name]
    assert type(sample) is cls
    assert sample.name == name
    for f in dataclasses.fields(cls):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(sample, f.name, getattr(sample, f.name))
    # No new attributes either. (CPython 3.11's frozen+slots __setattr__ raises
    # TypeError rather than FrozenInstanceError for unknown names.)
    assert not hasattr(sample, "__dict__")
    with pytest.raises((dataclasses.FrozenInstanceError, TypeError, AttributeError)):
        sample.extra = 1  # type: ignore[attr-defined]
    assert "name" not in {f.name for f in dataclasses.fields(cls)}  # name is a ClassVar


def test_samples_cover_every_action() -> None:
    assert set(SAMPLES) == EXPECTED_NAMES


DIRECTIONAL = [
    WalkAction,
    ExamineAction,
    TakeAction,
    GatherAction,
    PlaceWallAction,
    PlaceDoorAction,
    RemoveWallAction,
    ReadSignAction,
]


@pytest.mark.parametrize("cls", DIRECTIONAL)
@pytest.mark.parametrize(
    ("raw", "expected"),
    [("north", Direction.NORTH), ("South", Direction.SOUTH), (" EAST ", Direction.EAST)],
)
def test_direction_strings_are_parsed(cls: type, raw: str, expected: Direction) -> None:
    action = cls(direction=raw)
    assert action.direction is expected
    assert isinstance(action.direction, Direction)


def test_direction_strings_parsed_where_other_fields_come_first() -> None:
    assert PlaceItemAction("basket", "West").direction is Direction.WEST
    assert WriteSignAction("hi", "north").direction is Direction.NORTH


@pytest.mark.parametrize(
    "cls",
    [ExamineAction, TakeAction, GatherAction, ReadSignAction],
)
def test_here_actions_default_to_down(cls: type) -> None:
    assert cls().direction is Direction.DOWN
    assert cls(direction="down").direction is Direction.DOWN


def test_place_item_and_sign_default_to_down() -> None:
    assert PlaceItemAction("basket").direction is Direction.DOWN
    assert WriteSignAction("hi").direction is Direction.DOWN


@pytest.mark.parametrize("cls", [WalkAction, PlaceWallAction, PlaceDoorAction, RemoveWallAction])
@pytest.mark.parametrize("raw", ["down", "DOWN", Direction.DOWN])
def test_edge_actions_reject_down(cls: type, raw: str) -> None:
    with pytest.raises(ValueError, match="not 'down'") as info:
        cls(direction=raw)
    assert cls.name in str(info.value)


@pytest.mark.parametrize("cls", DIRECTIONAL)
def test_unknown_direction_rejected(cls: type) -> None:
    with pytest.raises(ValueError, match="unknown direction"):
        cls(direction="up")


def test_combine_needs_two_items() -> None:
    with pytest.raises(ValueError, match="at least two"):
        CombineAction(())
    with pytest.raises(ValueError, match="at least two"):
        CombineAction(("wood",))
    c = CombineAction(["wood", "fiber", "clay"])  # type: ignore[arg-type]
    assert c.items == ("wood", "fiber", "clay")
    assert isinstance(c.items, tuple)


@pytest.mark.parametrize("quantity", [0, -1, -10])
def test_quantity_at_least_one(quantity: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        DropAction("wood", quantity)
    with pytest.raises(ValueError, match="at least 1"):
        GiveAction(RIVER, "wood", quantity)


def test_quantity_defaults_and_accepts_positive() -> None:
    assert DropAction("wood").quantity == 1
    assert GiveAction(RIVER, "wood").quantity == 1
    assert DropAction("wood", 7).quantity == 7


def test_journey_needs_exactly_one_target() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        JourneyAction()
    with pytest.raises(ValueError, match="exactly one"):
        JourneyAction(destination=Position(1, 1), place_name="Old Oak")
    assert JourneyAction(place_name="Old Oak").destination is None
    assert JourneyAction(destination=Position(1, 1)).place_name is None


@pytest.mark.parametrize("target", ["", "   "])
def test_approach_needs_a_target(target: str) -> None:
    with pytest.raises(ValueError, match="target"):
        ApproachAction(target)


def test_invite_privacy() -> None:
    # None: the inviter's current conversation decides, else public (the service rules).
    assert InviteAction(RIVER).privacy is None
    assert InviteAction(RIVER, "private").privacy is Privacy.PRIVATE  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        InviteAction(RIVER, "secret")  # type: ignore[arg-type]


def test_take_item_is_optional() -> None:
    assert TakeAction().item is None
    assert TakeAction(item="wood").item == "wood"


def test_actions_compare_by_value() -> None:
    assert WalkAction("north") == WalkAction(Direction.NORTH)
    assert WalkAction("north") != WalkAction("south")
    assert hash(WalkAction("north")) == hash(WalkAction(Direction.NORTH))


# --- ActionResult ---------------------------------------------------------------


def test_ok_shape() -> None:
    ev = AgentSleptEvent(tick=3, agent=AgentName("Ember"))
    r = ActionResult.ok("You lie down.", [ev], {"slept": True})
    assert r.success is True
    assert r.message == "You lie down."
    assert r.events == (ev,)
    assert isinstance(r.events, tuple)
    assert dict(r.data) == {"slept": True}


def test_ok_defaults() -> None:
    r = ActionResult.ok("Done.")
    assert (r.success, r.message, r.events, dict(r.data)) == (True, "Done.", (), {})


def test_fail_shape() -> None:
    r = ActionResult.fail("A wall stands north; try east.", {"blocked": "north"})
    assert r.success is False
    assert r.message == "A wall stands north; try east."
    assert r.events == ()
    assert dict(r.data) == {"blocked": "north"}
    assert dict(ActionResult.fail("No.").data) == {}


def test_data_is_read_only_and_copied() -> None:
    source = {"n": 1}
    r = ActionResult.ok("ok", data=source)
    with pytest.raises(TypeError):
        r.data["n"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        del r.data["n"]  # type: ignore[attr-defined]
    source["n"] = 99
    source["m"] = 1
    assert dict(r.data) == {"n": 1}
    f = ActionResult.fail("no", data=source)
    with pytest.raises(TypeError):
        f.data["x"] = 1  # type: ignore[index]


def test_direct_construction_normalises() -> None:
    ev = AgentMovedEvent(1, AgentName("Ember"), Position(0, 0), Position(1, 0))
    r = ActionResult(True, "moved", [ev], None)  # type: ignore[arg-type]
    assert r.events == (ev,)
    assert dict(r.data) == {}
    with pytest.raises(TypeError):
        r.data["k"] = "v"  # type: ignore[index]


def test_action_result_is_frozen() -> None:
    r = ActionResult.ok("ok")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.success = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.data = {}  # type: ignore[misc]


@pytest.mark.parametrize(
    ("build", "phrase"),
    [
        (lambda: SpeakAction(message="   "), "cannot be empty"),
        (lambda: SpeakAction(message="x" * (MAX_SPEECH_LENGTH + 1)), "the limit is"),
        (lambda: NamePlaceAction(place_name=""), "cannot be empty"),
        (lambda: WriteSignAction(text="\n"), "cannot be empty"),
        (lambda: WriteSignAction(text="x" * (MAX_SIGN_LENGTH + 1)), "the limit is"),
        (lambda: JourneyAction(place_name=" "), "cannot be empty"),
        (lambda: ApproachAction(target=""), "cannot be empty"),
    ],
)
def test_text_arguments_must_say_something_within_limits(build, phrase) -> None:
    with pytest.raises(ValueError, match=phrase):
        build()
