"""Things that exist in the world or in inventories: items, signs, placed items.

World objects are polymorphic: every object has an id, a position, a creator
and a creation tick; `object_type` is the discriminator storage uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from core.constants import MAX_SIGN_LENGTH
from core.types import AgentName, Position

_ITEM_TYPE_RE = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


def item_type(raw: str) -> str:
    """Validate a resource or item type name (lowercase snake_case)."""
    if not isinstance(raw, str) or not _ITEM_TYPE_RE.fullmatch(raw):
        raise ValueError(
            f"invalid item type {raw!r}: use lowercase letters, digits and '_', a letter first"
        )
    return raw


@dataclass(frozen=True, slots=True)
class Item:
    """A unique item: something made, with its own identity and properties."""

    id: str
    item_type: str
    properties: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("an item needs an id")
        item_type(self.item_type)
        object.__setattr__(self, "properties", tuple(self.properties))

    @classmethod
    def unique(cls, item_type_: str, item_id: str, properties: tuple[str, ...] = ()) -> Item:
        """Make a unique item; the caller supplies the id so core stays deterministic."""
        return cls(id=item_id, item_type=item_type_, properties=tuple(properties))


@dataclass(frozen=True, slots=True)
class WorldObject:
    """Base of everything placed on the grid."""

    object_type: ClassVar[str] = "object"

    id: str
    position: Position
    created_by: AgentName | None
    created_tick: int

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a world object needs an id")
        if self.created_tick < 0:
            raise ValueError("created_tick must be non-negative")


@dataclass(frozen=True, slots=True)
class Sign(WorldObject):
    """Words an agent left on the ground for anyone passing."""

    object_type: ClassVar[str] = "sign"

    text: str = ""

    def __post_init__(self) -> None:
        WorldObject.__post_init__(self)
        if not self.text.strip():
            raise ValueError("a sign needs some text")
        if len(self.text) > MAX_SIGN_LENGTH:
            raise ValueError(
                f"sign text is {len(self.text)} characters; the limit is {MAX_SIGN_LENGTH}"
            )


@dataclass(frozen=True, slots=True)
class PlacedItem(WorldObject):
    """Something set down on the ground: one unique item, or a pile of a resource."""

    object_type: ClassVar[str] = "placed_item"

    item: Item | None = None
    resource: str | None = None
    quantity: int = 0

    def __post_init__(self) -> None:
        WorldObject.__post_init__(self)
        if (self.item is None) == (self.resource is None):
            raise ValueError("a placed item holds either one item or a pile of one resource")
        if self.resource is not None:
            item_type(self.resource)
            if self.quantity < 1:
                raise ValueError("a pile needs a quantity of at least 1")
        elif self.quantity != 0:
            raise ValueError("a unique item has no quantity")

    @property
    def label(self) -> str:
        """What the thing is called: the item's type or the resource's name."""
        return self.item.item_type if self.item is not None else str(self.resource)


OBJECT_TYPES: dict[str, type[WorldObject]] = {
    Sign.object_type: Sign,
    PlacedItem.object_type: PlacedItem,
}
