"""World objects, stored polymorphically: shared columns plus JSON extras per type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.objects import Item, PlacedItem, Sign, WorldObject
from core.types import AgentName, Position
from storage.repositories.base import Repository, dumps, loads

_COLUMNS = "id, object_type, x, y, created_by, created_tick, extras"


class UnknownObjectTypeError(ValueError):
    """A row whose discriminator this version does not know."""


class ObjectRepository(Repository):
    async def save_object(self, obj: WorldObject) -> None:
        await self.save_objects([obj])

    async def save_objects(self, objects: Sequence[WorldObject]) -> None:
        """Insert or update many objects with one statement (the engine's group commit)."""
        if not objects:
            return
        async with self.db.transaction():
            await self.db.executemany(_UPSERT, [_row(obj) for obj in objects])

    async def delete_objects(self, object_ids: Sequence[str]) -> None:
        """Delete many objects with one statement; ids not stored are ignored."""
        if not object_ids:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "DELETE FROM objects WHERE id = ?", [(oid,) for oid in object_ids])

    async def get_object(self, object_id: str) -> WorldObject | None:
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM objects WHERE id = ?", (object_id,))
        return None if row is None else _decode(row)

    async def get_objects_at(self, pos: Position) -> list[WorldObject]:
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM objects WHERE x = ? AND y = ? ORDER BY created_tick, id",
            (pos.x, pos.y),
        )
        return [_decode(r) for r in rows]

    async def get_objects_in(self, x0: int, y0: int, x1: int, y1: int) -> list[WorldObject]:
        """Objects with x0 <= x <= x1 and y0 <= y <= y1."""
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM objects WHERE x BETWEEN ? AND ? AND y BETWEEN ? AND ? "
            "ORDER BY created_tick, id",
            (x0, x1, y0, y1),
        )
        return [_decode(r) for r in rows]

    async def get_objects_by(self, creator: AgentName) -> list[WorldObject]:
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM objects WHERE created_by = ? ORDER BY created_tick, id",
            (creator,),
        )
        return [_decode(r) for r in rows]

    async def delete_object(self, object_id: str) -> bool:
        async with self.db.transaction():
            return bool(await self.db.execute("DELETE FROM objects WHERE id = ?", (object_id,)))

    async def count_objects(self) -> int:
        return await self._count("objects")


_UPSERT = f"""
    INSERT INTO objects ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET object_type = excluded.object_type,
        x = excluded.x, y = excluded.y, created_by = excluded.created_by,
        created_tick = excluded.created_tick, extras = excluded.extras
"""


def _row(obj: WorldObject) -> tuple:
    return (obj.id, obj.object_type, obj.position.x, obj.position.y, obj.created_by,
            obj.created_tick, dumps(_extras(obj)))


def _extras(obj: WorldObject) -> dict[str, Any]:
    if isinstance(obj, Sign):
        return {"text": obj.text}
    if isinstance(obj, PlacedItem):
        if obj.item is not None:
            item = obj.item
            return {"item": {"id": item.id, "type": item.item_type,
                             "properties": list(item.properties)}}
        return {"resource": obj.resource, "quantity": obj.quantity}
    raise UnknownObjectTypeError(f"cannot store objects of type {type(obj).__name__}")


def _decode(row: tuple) -> WorldObject:
    oid, kind, x, y, created_by, created_tick, extras_text = row
    extras = loads(extras_text)
    common = dict(
        id=oid,
        position=Position(x, y),
        created_by=AgentName(created_by) if created_by else None,
        created_tick=created_tick,
    )
    if kind == Sign.object_type:
        return Sign(**common, text=extras["text"])
    if kind == PlacedItem.object_type:
        raw = extras.get("item")
        if raw is not None:
            item = Item(raw["id"], raw["type"], tuple(raw.get("properties", ())))
            return PlacedItem(**common, item=item)
        return PlacedItem(**common, resource=extras["resource"], quantity=extras["quantity"])
    raise UnknownObjectTypeError(f"object {oid!r} has unknown type {kind!r}")
