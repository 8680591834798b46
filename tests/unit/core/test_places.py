"""Place names agents give: whitespace tidied, compared without case."""

from __future__ import annotations

import dataclasses

import pytest

from core.constants import MAX_PLACE_NAME_LENGTH
from core.places import NamedPlace, place_key
from core.types import AgentName, Position

HERE = Position(2, 3)
EMBER = AgentName("Ember")


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Old Oak", "Old Oak"),
        ("  Old   Oak  ", "Old Oak"),
        ("Old\tOak\n", "Old Oak"),
        ("\n The \u3000 Well ", "The Well"),
    ],
)
def test_name_whitespace_is_normalised(raw: str, clean: str) -> None:
    place = NamedPlace(raw, HERE, EMBER, 4)
    assert place.name == clean
    assert (place.position, place.named_by, place.tick) == (HERE, EMBER, 4)


def test_key_is_casefolded_and_space_insensitive() -> None:
    a = NamedPlace("  The   OLD oak ", HERE, EMBER, 0)
    b = NamedPlace("the old Oak", HERE, None, 9)
    assert a.key == b.key == "the old oak"
    assert a.key == place_key(a.name)
    assert NamedPlace("Große Straße", HERE, EMBER, 0).key == "grosse strasse"


def test_place_key() -> None:
    assert place_key("  Red\t Rock  ") == "red rock"
    assert place_key("RED ROCK") == place_key("red rock")
    assert place_key("redrock") != place_key("red rock")
    assert place_key("") == ""


@pytest.mark.parametrize("raw", ["", "   ", "\n\t"])
def test_empty_name_rejected(raw: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        NamedPlace(raw, HERE, EMBER, 0)


def test_length_limit_after_normalising() -> None:
    exact = "a" * MAX_PLACE_NAME_LENGTH
    assert NamedPlace(exact, HERE, EMBER, 0).name == exact
    # Surrounding whitespace does not count against the limit.
    assert NamedPlace(f"   {exact}   ", HERE, EMBER, 0).name == exact
    with pytest.raises(ValueError, match=str(MAX_PLACE_NAME_LENGTH)):
        NamedPlace("a" * (MAX_PLACE_NAME_LENGTH + 1), HERE, EMBER, 0)


def test_named_place_is_frozen() -> None:
    p = NamedPlace("Well", HERE, EMBER, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.name = "Other"  # type: ignore[misc]
