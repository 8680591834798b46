"""ObjectRepository against a real world.db: signs and placed items (item or pile)."""

from __future__ import annotations

from collections.abc import Callable

from core.objects import Item, PlacedItem, Sign
from core.types import AgentName, Position
from storage import Storage

EMBER = AgentName("Ember")
ASH = AgentName("Ash")


def _sign() -> Sign:
    return Sign(
        id="sign-1",
        position=Position(4, 4),
        created_by=EMBER,
        created_tick=5,
        text='Welcome to the glade 🌲 — "mind the river"\nsecond line',
    )


def _placed_item() -> PlacedItem:
    return PlacedItem(
        id="obj-axe",
        position=Position(4, 4),
        created_by=ASH,
        created_tick=3,
        item=Item("item-axe", "axe", ("sharp", "oak handle", "a", "sharp")),
    )


def _pile() -> PlacedItem:
    return PlacedItem(
        id="obj-wood",
        position=Position(6, 1),
        created_by=None,
        created_tick=9,
        resource="wood",
        quantity=17,
    )


async def test_each_object_kind_round_trips(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    sign, placed, pile = _sign(), _placed_item(), _pile()
    for obj in (sign, placed, pile):
        await storage.objects.save_object(obj)

    async with reopen() as other:
        loaded = [await other.objects.get_object(o.id) for o in (sign, placed, pile)]
    assert loaded == [sign, placed, pile]
    assert [type(o) for o in loaded] == [Sign, PlacedItem, PlacedItem]
    loaded_placed = loaded[1]
    assert isinstance(loaded_placed, PlacedItem) and loaded_placed.item is not None
    assert loaded_placed.item.properties == ("sharp", "oak handle", "a", "sharp")
    assert loaded_placed.resource is None and loaded_placed.quantity == 0
    loaded_pile = loaded[2]
    assert isinstance(loaded_pile, PlacedItem)
    assert (loaded_pile.item, loaded_pile.resource, loaded_pile.quantity) == (None, "wood", 17)
    assert loaded_pile.created_by is None
    assert await storage.objects.count_objects() == 3


async def test_missing_object_is_none(storage: Storage) -> None:
    assert await storage.objects.get_object("nope") is None


async def test_objects_at_a_position_are_ordered_by_creation(storage: Storage) -> None:
    sign, placed, pile = _sign(), _placed_item(), _pile()
    for obj in (sign, placed, pile):
        await storage.objects.save_object(obj)

    assert await storage.objects.get_objects_at(Position(4, 4)) == [placed, sign]
    assert await storage.objects.get_objects_at(Position(6, 1)) == [pile]
    assert await storage.objects.get_objects_at(Position(5, 4)) == []


async def test_objects_in_a_box_is_inclusive(storage: Storage) -> None:
    sign, placed, pile = _sign(), _placed_item(), _pile()
    edge = Sign("sign-edge", Position(6, 4), ASH, 1, "edge")
    beyond = Sign("sign-out", Position(7, 4), ASH, 0, "beyond")
    for obj in (sign, placed, pile, edge, beyond):
        await storage.objects.save_object(obj)

    assert await storage.objects.get_objects_in(4, 1, 6, 4) == [edge, placed, sign, pile]
    assert await storage.objects.get_objects_in(5, 2, 5, 3) == []


async def test_objects_by_creator(storage: Storage) -> None:
    sign, placed, pile = _sign(), _placed_item(), _pile()
    second = Sign("sign-2", Position(0, 0), EMBER, 1, "first words")
    for obj in (sign, placed, pile, second):
        await storage.objects.save_object(obj)

    assert await storage.objects.get_objects_by(EMBER) == [second, sign]
    assert await storage.objects.get_objects_by(ASH) == [placed]
    assert await storage.objects.get_objects_by(AgentName("Nobody")) == []


async def test_saving_the_same_id_again_replaces_the_object(storage: Storage) -> None:
    pile = _pile()
    await storage.objects.save_object(pile)
    moved = PlacedItem(
        id=pile.id, position=Position(0, 9), created_by=EMBER, created_tick=9,
        item=Item("item-gem", "gem", ("blue",)),
    )
    await storage.objects.save_object(moved)

    assert await storage.objects.get_object(pile.id) == moved
    assert await storage.objects.get_objects_at(Position(6, 1)) == []
    assert await storage.objects.count_objects() == 1


async def test_deleting_an_object(storage: Storage) -> None:
    await storage.objects.save_object(_sign())
    await storage.objects.save_object(_pile())

    assert await storage.objects.delete_object("sign-1") is True
    assert await storage.objects.delete_object("sign-1") is False
    assert await storage.objects.get_object("sign-1") is None
    assert await storage.objects.get_objects_at(Position(4, 4)) == []
    assert await storage.objects.get_object("obj-wood") == _pile()
    assert await storage.objects.count_objects() == 1


async def test_many_objects_saved_and_deleted_at_once(storage: Storage) -> None:
    sign, item, pile = _sign(), _placed_item(), _pile()
    await storage.objects.save_objects([sign, item, pile])
    assert await storage.objects.get_object(item.id) == item
    assert await storage.objects.count_objects() == 3

    await storage.objects.delete_objects([sign.id, "no-such-object", pile.id])
    assert await storage.objects.get_object(sign.id) is None
    assert await storage.objects.get_object(pile.id) is None
    assert await storage.objects.get_object(item.id) == item
