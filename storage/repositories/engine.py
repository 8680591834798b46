"""The engine's own records: events, committed turns, mind states, tick progress, metrics.

These make a run crash-safe. A turn's row, its events and its mind's state are
written in the same transaction as the world changes it made, so after a crash
`turns_done(tick)` says exactly which agents had finished, and `tick_progress`
holds the turn order of the tick that was interrupted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storage.database import utc_stamp
from storage.errors import CorruptDatabaseError
from storage.repositories.base import Repository, dumps, loads


@dataclass(frozen=True, slots=True)
class EventRow:
    tick: int
    agent: str | None
    kind: str
    data: str
    """The event's `to_dict()` as canonical JSON."""


@dataclass(frozen=True, slots=True)
class TurnRow:
    tick: int
    agent: str
    mind: str
    actions: int
    ended: str
    record: str
    """JSON: what the agent did (tool, ok, narration) and its mind's own record."""


@dataclass(frozen=True, slots=True)
class MindRow:
    agent: str
    kind: str
    state: str
    """JSON of `Mind.get_state(agent)` after the agent's last committed turn."""
    tick: int
    """The tick of the turn that last changed the state."""


@dataclass(frozen=True, slots=True)
class TickProgress:
    tick: int
    schedule: tuple[tuple[str, ...], ...]
    """Clusters in turn order, as scheduled when the tick began."""
    started_at: str


@dataclass(frozen=True, slots=True)
class TickMetrics:
    tick: int
    finished_at: str
    duration_ms: float
    turns: int
    actions: int
    phases: Mapping[str, float]
    """Phase name -> milliseconds, in pipeline order."""


def event_data(where: object, seq: int, text: Any) -> dict[str, Any]:
    """A stored event's data, the JSON object it was written as. A row damaged since is
    refused in one line naming it: the check at every start reads only the first and the
    latest events (storage/world_check_records.py), and the readers of older ones (the
    event log's rebuild, the Gardener's happenings) would otherwise end in a traceback."""
    try:
        data = loads(text)
    except (TypeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise CorruptDatabaseError(
            f"{where} is damaged: events {seq}: data {str(text)[:60]!r} is not a JSON object "
            "(an old row, which a start does not check: mend or delete it with sqlite3)")
    return data


class EngineRepository(Repository):
    # --- events --------------------------------------------------------------------

    async def add_events(self, events: Sequence[EventRow]) -> None:
        if not events:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "INSERT INTO events (tick, agent, kind, data) VALUES (?, ?, ?, ?)",
                [(e.tick, e.agent, e.kind, e.data) for e in events],
            )

    async def events_after(
        self, seq: int, limit: int = 100_000
    ) -> list[tuple[int, dict[str, Any]]]:
        """(seq, event dict) of events committed after `seq`, oldest first."""
        rows = await self.db.fetchall(
            "SELECT seq, data FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit)
        )
        return [(seq_, event_data(self.db.path, seq_, data)) for seq_, data in rows]

    async def next_event_seq(self) -> int:
        """The seq the next inserted event will get (AUTOINCREMENT never reuses one)."""
        row = await self.db.fetchone(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0) + 1"
        )
        return int(row[0]) if row else 1

    async def last_event_seq(self) -> int:
        row = await self.db.fetchone("SELECT COALESCE(MAX(seq), 0) FROM events")
        return int(row[0]) if row else 0

    async def count_events_upto(self, seq: int) -> int:
        """How many events have a seq of at most `seq`."""
        row = await self.db.fetchone("SELECT COUNT(*) FROM events WHERE seq <= ?", (seq,))
        return int(row[0]) if row else 0

    async def count_events(self) -> int:
        return await self._count("events")

    async def event_kinds(self) -> dict[str, int]:
        rows = await self.db.fetchall("SELECT kind, COUNT(*) FROM events GROUP BY kind")
        return {kind: n for kind, n in rows}

    # --- turns and minds -----------------------------------------------------------

    async def save_turns(self, turns: Sequence[TurnRow]) -> None:
        if not turns:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "INSERT INTO turns (tick, agent, mind, actions, ended, record) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(t.tick, t.agent, t.mind, t.actions, t.ended, t.record) for t in turns],
            )

    async def turns_done(self, tick: int) -> set[str]:
        rows = await self.db.fetchall("SELECT agent FROM turns WHERE tick = ?", (tick,))
        return {r[0] for r in rows}

    async def turns_of(self, agent: str, limit: int = 20) -> list[TurnRow]:
        """The agent's most recent turns, newest first."""
        rows = await self.db.fetchall(
            "SELECT tick, agent, mind, actions, ended, record FROM turns WHERE agent = ? "
            "ORDER BY tick DESC LIMIT ?",
            (agent, limit),
        )
        return [TurnRow(*r) for r in rows]

    async def records_of_mind(self, mind: str, since_tick: int = 0) -> list[tuple[int, str, str]]:
        """(tick, agent, record JSON) of every turn taken by minds of this kind since a tick."""
        rows = await self.db.fetchall(
            "SELECT tick, agent, record FROM turns WHERE mind = ? AND tick >= ? "
            "ORDER BY tick, agent", (mind, since_tick))
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def count_turns(self) -> int:
        return await self._count("turns")

    async def save_minds(self, minds: Sequence[MindRow]) -> None:
        if not minds:
            return
        async with self.db.transaction():
            await self.db.executemany(
                "INSERT INTO minds (agent, kind, state, tick) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (agent) DO UPDATE SET kind = excluded.kind, "
                "state = excluded.state, tick = excluded.tick",
                [(m.agent, m.kind, m.state, m.tick) for m in minds],
            )

    async def get_minds(self) -> dict[str, MindRow]:
        rows = await self.db.fetchall("SELECT agent, kind, state, tick FROM minds")
        return {r[0]: MindRow(*r) for r in rows}

    # --- the tick in progress --------------------------------------------------------

    async def set_progress(self, tick: int, schedule: Sequence[Sequence[str]]) -> None:
        async with self.db.transaction():
            await self.db.execute(
                "INSERT INTO tick_progress (id, tick, schedule, started_at) VALUES (1, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET tick = excluded.tick, "
                "schedule = excluded.schedule, started_at = excluded.started_at",
                (tick, dumps([list(c) for c in schedule]), utc_stamp()),
            )

    async def get_progress(self) -> TickProgress | None:
        row = await self.db.fetchone("SELECT tick, schedule, started_at FROM tick_progress")
        if row is None:
            return None
        schedule = tuple(tuple(str(n) for n in cluster) for cluster in loads(row[1]))
        return TickProgress(int(row[0]), schedule, row[2])

    async def clear_progress(self) -> None:
        async with self.db.transaction():
            await self.db.execute("DELETE FROM tick_progress")

    # --- metrics -----------------------------------------------------------------------

    async def add_metrics(self, metrics: TickMetrics) -> None:
        async with self.db.transaction():
            await self.db.execute(
                "INSERT OR REPLACE INTO tick_metrics (tick, finished_at, duration_ms, turns, "
                "actions, phases) VALUES (?, ?, ?, ?, ?, ?)",
                (metrics.tick, metrics.finished_at, metrics.duration_ms, metrics.turns,
                 metrics.actions, dumps([[k, v] for k, v in metrics.phases.items()])),
            )

    async def recent_metrics(self, limit: int = 100) -> list[TickMetrics]:
        """The last `limit` ticks' metrics, oldest first."""
        rows = await self.db.fetchall(
            "SELECT tick, finished_at, duration_ms, turns, actions, phases FROM tick_metrics "
            "ORDER BY tick DESC LIMIT ?",
            (limit,),
        )
        return [
            TickMetrics(t, f, d, n, a, dict(loads(p))) for t, f, d, n, a, p in reversed(rows)
        ]
