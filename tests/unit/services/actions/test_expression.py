"""write_sign, read_sign and name_place: words left in the world, cleaned and checked."""

from __future__ import annotations

import pytest

from core.actions import NamePlaceAction, ReadSignAction, WriteSignAction
from core.constants import MAX_PLACE_NAME_LENGTH, MAX_SIGN_LENGTH
from core.events import PlaceNamedEvent, SignWrittenEvent
from core.objects import Sign
from core.places import NamedPlace
from core.types import Direction, Position
from tests.tool_calls import call_tool
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    COAST_CELL,
    START,
    fails,
    fails_tool,
    put,
    snapshot,
    succeeds,
)

HERE = START[ASH]
NORTH = HERE.step(Direction.NORTH)
EXPANDS = "\u0958"
"""DEVANAGARI LETTER QA: one character that NFC turns into two."""


def signs(sim) -> list[Sign]:
    return [o for o in sim.world.all_objects() if isinstance(o, Sign)]


# ------------------------------------------------------------------ write_sign


def test_write_sign_here(sim):
    result = succeeds(sim, ASH, WriteSignAction("Fresh water to the south"), tick=3)
    (sign,) = signs(sim)
    assert (sign.position, sign.text, sign.created_by, sign.created_tick) == (
        HERE, "Fresh water to the south", ASH, 3
    )
    assert result.events == (SignWrittenEvent(3, ASH, HERE, "Fresh water to the south"),)
    assert sign.id in sim.changes.objects_saved


def test_write_sign_removes_escapes_and_control_characters(sim):
    raw = "Hello \x1b[31mred\x1b[0m\x07 world\u202e!\x00"
    result = succeeds(sim, ASH, WriteSignAction(raw))
    (sign,) = signs(sim)
    assert sign.text == "Hello red world!"
    assert result.data["text"] == "Hello red world!"
    assert result.events[0].text == "Hello red world!"


def test_write_sign_turns_tabs_and_newlines_into_spaces(sim):
    succeeds(sim, ASH, WriteSignAction("one\ttwo\nthree"))
    assert signs(sim)[0].text == "one two three"


def test_write_sign_keeps_every_script(sim):
    succeeds(sim, ASH, WriteSignAction("水は南 — вода на юге"))
    assert signs(sim)[0].text == "水は南 — вода на юге"


def test_rewriting_a_sign_keeps_its_id(sim):
    succeeds(sim, BIRCH, WriteSignAction("first", Direction.WEST))
    (first,) = signs(sim)
    result = succeeds(sim, ASH, WriteSignAction("second"), tick=2)
    (second,) = signs(sim)
    assert second.id == first.id
    assert (second.text, second.created_by, second.created_tick) == ("second", ASH, 2)
    assert result.message.startswith("you rewrite the sign")


def test_write_sign_in_a_direction(sim):
    succeeds(sim, ASH, WriteSignAction("north of Ash", Direction.NORTH))
    assert sim.world.sign_at(NORTH).text == "north of Ash"
    assert sim.world.sign_at(HERE) is None


@pytest.mark.parametrize("raw", ["\x1b[31m\x07", "\u200b\u202e", "\x1b]0;title\x07"])
def test_write_sign_blank_after_cleaning_is_refused(sim, raw):
    result = fails(sim, ASH, WriteSignAction(raw))
    assert "blank" in result.message


async def test_write_sign_too_long_is_refused_at_the_tool(sim):
    result = await fails_tool(sim, ASH, "write_sign", {"text": "x" * (MAX_SIGN_LENGTH + 1)})
    assert f"the limit is {MAX_SIGN_LENGTH}" in result.message


async def test_write_sign_at_the_limit_is_accepted(sim):
    result = await call_tool(sim.engine, ASH, "write_sign", {"text": "x" * MAX_SIGN_LENGTH}, 0)
    assert result.success, result.message
    assert len(signs(sim)[0].text) == MAX_SIGN_LENGTH


def test_write_sign_that_grows_past_the_limit_when_cleaned_names_the_limit(sim):
    result = fails(sim, ASH, WriteSignAction(EXPANDS * 300))  # 300 characters, 600 in NFC
    assert str(MAX_SIGN_LENGTH) in result.message


def test_write_sign_into_water_is_refused(sim):
    put(sim, ASH, COAST_CELL)
    result = fails(sim, ASH, WriteSignAction("deep", Direction.SOUTH))
    assert result.message == "a sign needs ground to stand on"


def test_write_sign_past_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(8, 0))
    fails(sim, ASH, WriteSignAction("edge", Direction.NORTH))


# ------------------------------------------------------------------ read_sign


def read(sim, direction=Direction.DOWN):
    before = snapshot(sim)
    result = succeeds(sim, ASH, ReadSignAction(direction))
    assert snapshot(sim) == before
    return result


def test_read_sign_here(sim):
    sim.world.add_object(Sign("s1", HERE, BIRCH, 0, text="Hello"))
    result = read(sim)
    assert result.message == "the sign reads: 'Hello' (written by Birch)"
    assert result.data == {"text": "Hello", "author": BIRCH}


def test_read_sign_in_a_direction(sim):
    sim.world.add_object(Sign("s1", NORTH, None, 0, text="Old words"))
    result = read(sim, Direction.NORTH)
    assert result.message == "the sign reads: 'Old words'"


def test_read_sign_where_there_is_none_is_refused(sim):
    assert fails(sim, ASH, ReadSignAction()).message == "there is no sign here"
    east = fails(sim, ASH, ReadSignAction(Direction.EAST))
    assert east.message == "there is no sign to the east"


def test_read_sign_past_the_world_edge_is_refused(sim):
    put(sim, ASH, Position(0, 8))
    fails(sim, ASH, ReadSignAction(Direction.WEST))


# ------------------------------------------------------------------ name_place


def test_name_place_tidies_spaces(sim):
    result = succeeds(sim, ASH, NamePlaceAction("  Ash   Corner "), tick=4)
    place = sim.world.place_named("ash corner")
    assert place is not None
    assert (place.name, place.position, place.named_by, place.tick) == (
        "Ash Corner", HERE, ASH, 4
    )
    assert result.events == (PlaceNamedEvent(4, ASH, HERE, "Ash Corner"),)
    assert "ash corner" in sim.changes.places_saved


def test_name_place_removes_control_characters(sim):
    succeeds(sim, ASH, NamePlaceAction("Camp\x07 \x1b[1mFire"))
    assert [p.name for p in sim.world.all_places()] == ["Camp Fire"]


def test_a_cell_may_carry_two_names(sim):
    succeeds(sim, ASH, NamePlaceAction("Ash Corner"))
    succeeds(sim, ASH, NamePlaceAction("Meeting Point"))
    assert sorted(p.name for p in sim.world.places_at(HERE)) == ["Ash Corner", "Meeting Point"]


@pytest.mark.parametrize("again", ["Ash Corner", "ash corner", "  ASH   CORNER  "])
def test_name_place_already_taken_is_refused(sim, again):
    sim.world.name_place(NamedPlace("Ash Corner", Position(1, 1), BIRCH, 0))
    result = fails(sim, ASH, NamePlaceAction(again))
    assert "already names the place at (1, 1)" in result.message


@pytest.mark.parametrize("taken", ["the Spring", "THE SPRING", "the  spring"])
def test_name_place_with_a_landmarks_name_is_refused(sim, taken):
    result = fails(sim, ASH, NamePlaceAction(taken))
    assert "already names the place at (6, 10)" in result.message


def test_name_place_blank_after_cleaning_is_refused(sim):
    result = fails(sim, ASH, NamePlaceAction("\x1b[1m\x07\u200b"))
    assert result.message == "a place name needs some letters"


async def test_name_place_too_long_is_refused_at_the_tool(sim):
    result = await fails_tool(
        sim, ASH, "name_place", {"place_name": "y" * (MAX_PLACE_NAME_LENGTH + 1)}
    )
    assert f"the limit is {MAX_PLACE_NAME_LENGTH}" in result.message


def test_name_place_that_grows_past_the_limit_when_cleaned_names_the_limit(sim):
    result = fails(sim, ASH, NamePlaceAction(EXPANDS * 40))  # 40 characters, 80 in NFC
    assert str(MAX_PLACE_NAME_LENGTH) in result.message
