"""The engine's side of the Gardener's tables: the queue it judges, and what became of it.

The Gardener (another process, `storage.gardener_db.GardenerStore`) only inserts
cycles and pending requests. The engine reads the pending ones at the start of a
tick, judges them, and marks each applied or refused in the same transaction as the
world changes it made (`record_outcomes`, inside the committer's unit of work).

Anyone with the file can write these rows, not only the Gardener, and a request the
engine cannot read would stay pending and be read again every tick. So every read
here is one that cannot fail on a row: text columns come back as bytes and are
decoded with replacement (a value that is not UTF-8 would otherwise make sqlite3
raise while fetching), a cycle that is not a whole number is read as one, and a
request whose cycle does not exist comes back with no level for the engine to refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.gardener import Applied
from core.types import Position
from storage.repositories.base import Repository
from storage.repositories.engine import event_data

INTERVENTION_EVENT = "gardener_intervention"
"""The event kind the engine writes for each applied intervention (core.events)."""


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A request waiting for the engine's judgement, as stored."""

    id: int
    cycle: int
    level: str | None
    """The level of its cycle, or None when no such cycle is stored."""
    kind: str
    params: str
    """The raw JSON text: the engine reads it strictly and refuses what it cannot."""


@dataclass(frozen=True, slots=True)
class RequestOutcome:
    """What the engine made of one request: applied or refused, and why, at `tick`."""

    id: int
    applied: bool
    reason: str
    tick: int
    position: Position | None
    """Where an applied local intervention took place; None otherwise."""


@dataclass(frozen=True, slots=True)
class GardenerRecord:
    """One request with its cycle's level and rationale, for `--status` and the TUI."""

    id: int
    cycle: int
    kind: str
    params: str
    """The raw JSON text, as stored (it may not be JSON at all)."""
    status: str
    """pending, applied or refused."""
    reason: str | None
    done_tick: int | None
    level: str | None
    """None when the request names no stored cycle."""
    rationale: str | None


def _text(value: Any) -> str:
    """A column read as bytes (CAST ... AS BLOB), as text whatever its bytes were."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def _maybe_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _whole(value: Any) -> int | None:
    return value if type(value) is int else None


class GardenerRepository(Repository):
    async def pending(self) -> list[PendingRequest]:
        """Every pending request, oldest first (the order the engine judges them in)."""
        rows = await self.db.fetchall(
            "SELECT r.id, CAST(r.cycle AS INTEGER), CAST(c.level AS BLOB), "
            "CAST(r.kind AS BLOB), CAST(r.params AS BLOB) "
            "FROM gardener_requests r LEFT JOIN gardener_cycles c ON c.id = r.cycle "
            "WHERE r.status = 'pending' ORDER BY r.id"
        )
        return [PendingRequest(int(rid), int(cycle), _maybe_text(level), _text(kind),
                               _text(params))
                for rid, cycle, level, kind, params in rows]

    async def applied_since(self, tick: int) -> list[Applied]:
        """The interventions applied at `tick` or later, in the order applied: what the
        guardrails count new requests against."""
        rows = await self.db.fetchall(
            "SELECT done_tick, CAST(cycle AS INTEGER), CAST(kind AS BLOB), x, y "
            "FROM gardener_requests WHERE status = 'applied' "
            # A done_tick that is text would compare greater than any number.
            "AND typeof(done_tick) = 'integer' AND done_tick >= ? ORDER BY done_tick, id",
            (tick,),
        )
        applied: list[Applied] = []
        for done, cycle, kind, x, y in rows:
            x, y = _whole(x), _whole(y)
            where = Position(x, y) if x is not None and y is not None else None
            applied.append(Applied(int(done), int(cycle), _text(kind), where))
        return applied

    async def record_outcomes(self, outcomes: Sequence[RequestOutcome]) -> None:
        """Mark requests applied or refused. Only a request still pending changes: a
        request is judged once, so an outcome written twice (a retried commit) or for
        a request already done leaves the first outcome as it was."""
        if not outcomes:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "UPDATE gardener_requests SET status = ?, reason = ?, done_tick = ?, x = ?, "
                "y = ? WHERE id = ? AND status = 'pending'",
                [("applied" if o.applied else "refused", o.reason, o.tick,
                  o.position.x if o.position is not None else None,
                  o.position.y if o.position is not None else None, o.id)
                 for o in outcomes],
            )

    async def recent(self, limit: int) -> list[GardenerRecord]:
        """The newest `limit` requests, whatever their status, newest first."""
        if limit <= 0:  # SQLite reads a negative LIMIT as no limit at all
            return []
        rows = await self.db.fetchall(
            "SELECT r.id, CAST(r.cycle AS INTEGER), CAST(r.kind AS BLOB), "
            "CAST(r.params AS BLOB), r.status, CAST(r.reason AS BLOB), r.done_tick, "
            "CAST(c.level AS BLOB), CAST(c.rationale AS BLOB) "
            "FROM gardener_requests r LEFT JOIN gardener_cycles c ON c.id = r.cycle "
            "ORDER BY r.id DESC LIMIT ?",
            (limit,),
        )
        return [GardenerRecord(int(rid), int(cycle), _text(kind), _text(params), str(status),
                               _maybe_text(reason), _whole(done), _maybe_text(level),
                               _maybe_text(rationale))
                for rid, cycle, kind, params, status, reason, done, level, rationale in rows]

    async def notice_events(self, since_tick: int) -> list[dict[str, Any]]:
        """The data of every intervention event from `since_tick` on, oldest first: a
        restarted engine finds in them the happenings agents still perceive."""
        rows = await self.db.fetchall(
            "SELECT seq, data FROM events WHERE tick >= ? AND kind = ? ORDER BY seq",
            (since_tick, INTERVENTION_EVENT),
        )
        return [event_data(self.db.path, seq, data) for seq, data in rows]
