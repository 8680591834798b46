"""Encoding helpers shared by the repositories.

JSON columns are written canonically (sorted keys, no spaces) so equal values
give equal bytes, which keeps diffs and backups comparable.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from core.types import Direction, Position
from storage.database import Database
from storage.schema import HEARTH_TABLES

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""Made once: `json.dumps` with options builds a new encoder on every call."""


def dumps(value: Any) -> str:
    return _CANONICAL.encode(value)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def encode_position(pos: Position) -> list[int]:
    return [pos.x, pos.y]


def decode_position(raw: Iterable[int]) -> Position:
    x, y = raw
    return Position(int(x), int(y))


_EDGE_ORDER = {d: i for i, d in enumerate(Direction)}


def encode_edges(edges: Iterable[Direction]) -> str:
    """Edges as a stable comma list in Direction's order, e.g. 'north,east'."""
    if not edges:
        return ""
    return ",".join(d.value for d in sorted(edges, key=_EDGE_ORDER.__getitem__))


@lru_cache(maxsize=256)
def decode_edges(text: str) -> frozenset[Direction]:
    """Cached: a world has only a handful of distinct edge combinations."""
    return frozenset(Direction(part) for part in text.split(",") if part)


class Repository:
    """Holds the database; writes go through `self.db.transaction()`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _count(self, table: str) -> int:
        """Rows in one of Hearth's own tables (the name is checked, never user input)."""
        if table not in HEARTH_TABLES:
            raise ValueError(f"not a Hearth table: {table!r}")
        row = await self.db.fetchone(f"SELECT COUNT(*) FROM {table}")
        return int(row[0]) if row else 0
