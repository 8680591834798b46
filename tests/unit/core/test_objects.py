"""Items, signs and things set down on the ground."""

from __future__ import annotations

import dataclasses

import pytest

from core.constants import MAX_SIGN_LENGTH
from core.objects import OBJECT_TYPES, Item, PlacedItem, Sign, WorldObject, item_type
from core.types import AgentName, Position

HERE = Position(3, 4)
EMBER = AgentName("Ember")


# --- item_type ------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["wood", "a", "stone_axe", "rope2", "a" * 48, "x_1_y"])
def test_item_type_accepts(raw: str) -> None:
    assert item_type(raw) == raw


@pytest.mark.parametrize(
    "raw",
    ["", "Wood", "2wood", "_wood", "stone axe", "stone-axe", "a" * 49, "wood!", "bois\u00e9"],
)
def test_item_type_rejects(raw: str) -> None:
    with pytest.raises(ValueError, match="invalid item type"):
        item_type(raw)


@pytest.mark.parametrize("raw", [None, 3, b"wood"])
def test_item_type_rejects_non_strings(raw: object) -> None:
    with pytest.raises(ValueError, match="invalid item type"):
        item_type(raw)  # type: ignore[arg-type]


@pytest.mark.parametrize("raw", ["wood\n", "wood\r\n", "\nwood", "wo\nod"])
def test_item_type_rejects_newlines(raw: str) -> None:
    with pytest.raises(ValueError, match="invalid item type"):
        item_type(raw)


# --- Item -----------------------------------------------------------------------


def test_item_unique() -> None:
    axe = Item.unique("stone_axe", "item-1", ("sharp", "heavy"))
    assert axe == Item(id="item-1", item_type="stone_axe", properties=("sharp", "heavy"))
    assert Item.unique("rope", "item-2").properties == ()


def test_item_properties_become_a_tuple() -> None:
    it = Item("i1", "rope", ["long"])  # type: ignore[arg-type]
    assert it.properties == ("long",)
    assert isinstance(it.properties, tuple)
    assert Item.unique("rope", "i2", ["a", "b"]).properties == ("a", "b")  # type: ignore[arg-type]
    hash(it)


def test_item_validation() -> None:
    with pytest.raises(ValueError, match="needs an id"):
        Item("", "rope")
    with pytest.raises(ValueError, match="invalid item type"):
        Item("i1", "Rope")
    with pytest.raises(ValueError, match="invalid item type"):
        Item.unique("stone axe", "i1")


def test_item_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Item("i1", "rope").item_type = "wood"  # type: ignore[misc]


# --- WorldObject / Sign -----------------------------------------------------------


def test_sign() -> None:
    s = Sign("s1", HERE, EMBER, 7, text="Fresh water to the east")
    assert s.object_type == "sign"
    assert (s.id, s.position, s.created_by, s.created_tick) == ("s1", HERE, EMBER, 7)
    assert s.text == "Fresh water to the east"
    assert isinstance(s, WorldObject)
    assert Sign("s2", HERE, None, 0, text="x").created_by is None


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
def test_sign_needs_text(text: str) -> None:
    with pytest.raises(ValueError, match="needs some text"):
        Sign("s1", HERE, EMBER, 0, text=text)


def test_sign_length_limit() -> None:
    assert len(Sign("s1", HERE, EMBER, 0, text="a" * MAX_SIGN_LENGTH).text) == MAX_SIGN_LENGTH
    with pytest.raises(ValueError, match=str(MAX_SIGN_LENGTH)) as info:
        Sign("s1", HERE, EMBER, 0, text="a" * (MAX_SIGN_LENGTH + 1))
    assert str(MAX_SIGN_LENGTH + 1) in str(info.value)


def test_world_object_base_validation() -> None:
    with pytest.raises(ValueError, match="needs an id"):
        Sign("", HERE, EMBER, 0, text="hi")
    with pytest.raises(ValueError, match="non-negative"):
        Sign("s1", HERE, EMBER, -1, text="hi")
    with pytest.raises(ValueError, match="needs an id"):
        PlacedItem("", HERE, EMBER, 0, resource="wood", quantity=1)
    with pytest.raises(ValueError, match="non-negative"):
        PlacedItem("p1", HERE, EMBER, -3, resource="wood", quantity=1)


def test_sign_is_frozen() -> None:
    s = Sign("s1", HERE, EMBER, 0, text="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.text = "bye"  # type: ignore[misc]


# --- PlacedItem -----------------------------------------------------------------


def test_placed_pile() -> None:
    p = PlacedItem("p1", HERE, EMBER, 3, resource="wood", quantity=5)
    assert p.object_type == "placed_item"
    assert p.label == "wood"
    assert p.item is None and p.quantity == 5


def test_placed_unique_item() -> None:
    axe = Item.unique("stone_axe", "i1")
    p = PlacedItem("p1", HERE, EMBER, 3, item=axe)
    assert p.label == "stone_axe"
    assert p.resource is None and p.quantity == 0


def test_placed_item_holds_exactly_one_kind_of_thing() -> None:
    axe = Item.unique("stone_axe", "i1")
    with pytest.raises(ValueError, match="either one item or a pile"):
        PlacedItem("p1", HERE, EMBER, 0)
    with pytest.raises(ValueError, match="either one item or a pile"):
        PlacedItem("p1", HERE, EMBER, 0, item=axe, resource="wood", quantity=1)


@pytest.mark.parametrize("quantity", [0, -1])
def test_pile_needs_a_quantity(quantity: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        PlacedItem("p1", HERE, EMBER, 0, resource="wood", quantity=quantity)


@pytest.mark.parametrize("quantity", [1, -1, 5])
def test_unique_item_has_no_quantity(quantity: int) -> None:
    with pytest.raises(ValueError, match="no quantity"):
        PlacedItem("p1", HERE, EMBER, 0, item=Item.unique("rope", "i1"), quantity=quantity)


def test_pile_resource_name_validated() -> None:
    with pytest.raises(ValueError, match="invalid item type"):
        PlacedItem("p1", HERE, EMBER, 0, resource="Big Rocks", quantity=2)


def test_object_types_registry() -> None:
    assert dict(OBJECT_TYPES) == {"sign": Sign, "placed_item": PlacedItem}
    for name, cls in OBJECT_TYPES.items():
        assert cls.object_type == name
        assert issubclass(cls, WorldObject)
