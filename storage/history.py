"""HistoryReader: where every agent stood, and what was said, at a tick already past.

The observer's timeline steps through stored ticks while the engine goes on writing
new ones. The database keeps no positions per tick, only every step as an
`agent_moved` event (walks, approaches and journey steps alike, each with its
`from_position` and `to_position`). So a past tick's positions are found by undoing,
from the live positions, every step taken after it: an agent stood, at the end of
tick T, where its first step after T began.

The reader has a connection of its own, opened read-only (`mode=ro`), so it can never
write; in WAL mode it reads committed data while the engine's connection writes. It
reads only ticks before the live snapshot's tick, which are complete and never
change again, so it needs no transaction spanning its queries. Python's sqlite3 lets
a connection be shared between threads only if the caller serialises its use: one
lock guards every call.

A fork (storage/world_fork.py) holds its parent's past in its own file: its database
began as a copy of the parent's snapshot and was walked on to the fork tick, each turn
checked against the parent's row for row. So the reader of a fork reaches back to the
parent's first tick without opening the parent, and reads each tick from one file
only; storage/lineage.py says which world lived it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, TracebackType

from core.world import WorldState
from storage.errors import CorruptDatabaseError, NotAWorldError, StorageError, WorldNotFoundError

Cell = tuple[int, int]

NARRATED_EVENTS = ("weather_changed", "agent_woke", "journey_completed", "journey_interrupted",
                   "gardener_intervention", "gardener_refused")
"""The happenings of a tick that the live feed narrates (observe/snapshot.feed_lines)."""

FIRST_WEATHER = WorldState.__dataclass_fields__["weather"].default.value
"""The weather a world is made with ("clear", WorldState's default)."""


@dataclass(frozen=True, slots=True)
class PastLine:
    """One narrated line of a stored tick, as the live feed showed it."""

    tick: int
    agent: str | None
    kind: str
    """The tool used (walk, speak...), "error", or the happening (weather_changed...)."""
    text: str
    ok: bool = True
    args: Mapping[str, object] | None = None
    """The tool's arguments, for an action (None for a happening or an error)."""


@dataclass(frozen=True, slots=True)
class PastTick:
    """Where every agent stood at the end of `tick`, and that tick's narrated lines."""

    tick: int
    positions: Mapping[str, Cell]
    """Agent name -> (x, y), read-only."""
    lines: tuple[PastLine, ...]
    """The tick's happenings in the order committed, then each turn's actions and
    error. Turns come in agent-name order: the turns table (keyed by tick and agent)
    does not keep the order the turns were taken in."""
    weather: str | None = None
    """The weather at the end of `tick`: the last `weather_changed` at or before it, or
    the weather every world begins with (None from callers that did not read it)."""


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One agent's stored turn as written: its record JSON and its events' JSON."""

    tick: int
    agent: str
    mind: str
    ended: str
    record: str
    events: tuple[tuple[str, str], ...]
    """(kind, data JSON) of every event of the tick under the agent's name."""


@dataclass(frozen=True, slots=True)
class _Cursor:
    """The last answer: positions at the end of `tick`, found from a live end at
    `live_tick` (history before that tick never changes, so the positions stay true
    while the world goes on)."""

    tick: int
    live_tick: int
    positions: dict[str, Cell]


class HistoryReader:
    """Reads stored ticks from world.db, read-only, from any thread."""

    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path)
        self._lock = threading.Lock()
        self._cursor: _Cursor | None = None
        self._conn: sqlite3.Connection | None = self._open(self.path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        """Open read-only and touch both tables, so a file that is missing, not SQLite,
        damaged or not a world is refused here with its name, not at the first step."""
        if not path.is_file():
            raise WorldNotFoundError(f"{path}: no world database here to read history from")
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                   check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StorageError(f"{path}: cannot open the world file for history ({exc})") from None
        try:
            conn.execute("PRAGMA busy_timeout = 5000")  # the engine may be checkpointing
            conn.execute("SELECT tick, agent, kind, data, seq FROM events LIMIT 0").fetchall()
            conn.execute("SELECT tick, agent, record FROM turns LIMIT 0").fetchall()
        except sqlite3.OperationalError as exc:
            conn.close()
            if "no such" in str(exc):
                raise NotAWorldError(
                    f"{path}: has no stored history ({exc}); not a Hearth world, or one "
                    "older than the engine's tables (open it once with `hearth` to migrate)"
                ) from None
            raise StorageError(f"{path}: cannot read history ({exc})") from None
        except sqlite3.DatabaseError as exc:
            conn.close()
            if "not a database" in str(exc):
                raise NotAWorldError(f"{path}: not an SQLite database, so not a Hearth world"
                                     ) from None
            raise CorruptDatabaseError(
                f"{path}: the database is damaged ({exc}); restore a file from snapshots/ "
                "or backups/") from None
        return conn

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._cursor = None

    def __enter__(self) -> HistoryReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StorageError(f"{self.path}: the history reader is closed")
        return self._conn

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        """Every row at once: a statement left open would hold its read snapshot and
        keep the engine's checkpoints from finishing."""
        try:
            return self._db().execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"{self.path}: reading history failed ({exc})") from None

    # ------------------------------------------------------------------ reads

    def first_tick(self) -> int | None:
        """The earliest tick with a stored turn or event; None before any."""
        with self._lock:
            return self._first_tick()

    def _first_tick(self) -> int | None:
        # Each MIN is one look at the start of an index, however long the history.
        found = [row[0] for sql in ("SELECT MIN(tick) FROM events", "SELECT MIN(tick) FROM turns")
                 for row in self._query(sql) if row[0] is not None]
        return min(found) if found else None

    def lines(self, tick: int) -> tuple[PastLine, ...]:
        """The narrated lines of one stored tick (none for a tick not stored)."""
        with self._lock:
            return self._lines(tick)

    def at(self, tick: int, live_tick: int, live_positions: Mapping[str, Cell]) -> PastTick:
        """Positions at the end of `tick` and the tick's lines.

        `live_positions` are where the agents stand in the live snapshot whose tick is
        `live_tick` (every tick before it committed, none of it after). Agents that
        never moved since `tick` keep their live cell; names not in `live_positions`
        are not reported.
        """
        with self._lock:
            first = self._first_tick()
            if first is None:
                raise ValueError(f"{self.path}: no tick is stored yet, so tick {tick} cannot "
                                 "be shown")
            if tick < first:
                raise ValueError(f"tick {tick} is before the first stored tick ({first})")
            if tick >= live_tick:
                raise ValueError(f"tick {tick} is not past yet: the live world is at tick "
                                 f"{live_tick}, so the newest stored tick is {live_tick - 1}")
            positions = self._positions(tick, live_tick, live_positions)
            self._cursor = _Cursor(tick, live_tick, positions)
            return PastTick(tick, MappingProxyType(dict(positions)), self._lines(tick),
                            self._weather(tick))

    def agent_lines(self, agent: str, before: int, limit: int,
                    spans: tuple[int, ...] = (64, 512)) -> tuple[PastLine, ...]:
        """The action lines of `agent`'s latest turns that did something, in ticks
        before `before`, oldest first (at most `limit` turns). The turns table is keyed
        by tick, not agent, so it looks back over a few ticks first and further only
        if that found too few (never more than the last of `spans` ticks)."""
        with self._lock:
            rows: list[tuple] = []
            for span in spans:
                rows = self._query(
                    "SELECT tick, record FROM turns WHERE tick >= ? AND tick < ? "
                    "AND agent = ? AND actions > 0 ORDER BY tick DESC LIMIT ?",
                    (max(0, before - span), before, agent, limit))
                if len(rows) >= limit or before - span <= 0:
                    break
        lines: list[PastLine] = []
        for tick, record_text in reversed(rows):
            for action in json.loads(record_text).get("actions", ()):
                args = action.get("args")
                lines.append(PastLine(tick, agent, str(action.get("tool", "")),
                                      str(action.get("text", "")), bool(action.get("ok")),
                                      args if isinstance(args, dict) else None))
        return tuple(lines)

    def turn(self, tick: int, agent: str) -> StoredTurn | None:
        """`agent`'s stored turn at `tick` with the tick's events under its name, in the order
        committed; None if no such turn is stored (yet)."""
        with self._lock:
            rows = self._query("SELECT mind, ended, record FROM turns WHERE tick = ? AND agent = ?",
                               (tick, agent))
            if not rows:
                return None
            events = self._query("SELECT kind, data FROM events WHERE tick = ? AND agent = ? "
                                 "ORDER BY seq", (tick, agent))
        mind, ended, record = rows[0]
        return StoredTurn(tick, agent, str(mind), str(ended), str(record),
                          tuple((str(kind), str(data)) for kind, data in events))

    # ------------------------------------------------------------------ positions

    def _positions(
        self, tick: int, live_tick: int, live: Mapping[str, Cell]
    ) -> dict[str, Cell]:
        """From the live end or the cursor, whichever has fewer ticks of steps between.

        The live positions stand at the end of tick `live_tick - 1`. The cursor is used
        only if it knows the same agents and came from a live end no later than this
        one (a live tick that went backwards means a different history).
        """
        from_live = live_tick - 1 - tick
        cursor = self._cursor
        if (cursor is not None and cursor.live_tick <= live_tick
                and abs(cursor.tick - tick) < from_live and live.keys() == cursor.positions.keys()):
            positions = dict(cursor.positions)
            if tick < cursor.tick:
                self._undo(positions, tick, cursor.tick)
            else:
                self._redo(positions, cursor.tick, tick)
            return positions
        positions = {name: (int(x), int(y)) for name, (x, y) in live.items()}
        self._undo(positions, tick, live_tick - 1)
        return positions

    def _undo(self, positions: dict[str, Cell], tick: int, upto: int) -> None:
        """Take back every step of ticks tick+1..upto: each agent returns to where its
        first step in that span began. One row per agent that moved, found in SQL."""
        self._place(positions, "from_position", "MIN", tick, upto)

    def _redo(self, positions: dict[str, Cell], tick: int, upto: int) -> None:
        """Replay every step of ticks tick+1..upto: each agent goes to where its last
        step in that span ended."""
        self._place(positions, "to_position", "MAX", tick, upto)

    def _place(self, positions: dict[str, Cell], end: str, pick: str, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        # SQLite gives the other columns of the row that MIN/MAX chose; the tick range
        # runs on idx_events_tick (for one tick it is a single key: `tick = hi`).
        rows = self._query(
            f"SELECT agent, data, {pick}(seq) FROM events "
            "WHERE tick > ? AND tick <= ? AND kind = 'agent_moved' GROUP BY agent",
            (lo, hi),
        )
        for agent, data, _seq in rows:
            if agent in positions:
                cell = json.loads(data)[end]
                positions[agent] = (int(cell["x"]), int(cell["y"]))

    def _weather(self, tick: int) -> str:
        """Every change of weather is a `weather_changed` event; before the first, a
        world has the weather it was made with. Read backwards from `tick` on the tick
        index, so it stops at the latest change, a few ticks back as a rule."""
        rows = self._query(
            "SELECT data FROM events WHERE tick <= ? AND kind = 'weather_changed' "
            "ORDER BY tick DESC, seq DESC LIMIT 1", (tick,))
        if not rows:
            return FIRST_WEATHER
        return str(json.loads(rows[0][0])["weather"])

    # ------------------------------------------------------------------ lines

    def _lines(self, tick: int) -> tuple[PastLine, ...]:
        """As the live feed words them: the happenings, then each turn's actions (and
        its error, if it ended early)."""
        lines: list[PastLine] = []
        marks = ",".join("?" * len(NARRATED_EVENTS))
        for agent, kind, data in self._query(
            f"SELECT agent, kind, data FROM events WHERE tick = ? AND kind IN ({marks}) "
            "ORDER BY seq", (tick, *NARRATED_EVENTS),
        ):
            lines.append(PastLine(tick, agent, kind, happening_text(kind, agent, json.loads(data)),
                                  kind != "gardener_refused"))
        for agent, record_text in self._query(
            "SELECT agent, record FROM turns WHERE tick = ? ORDER BY agent", (tick,)
        ):
            record = json.loads(record_text)
            for action in record.get("actions", ()):
                args = action.get("args")
                lines.append(PastLine(tick, agent, str(action.get("tool", "")),
                                      str(action.get("text", "")), bool(action.get("ok")),
                                      args if isinstance(args, dict) else None))
            if record.get("error"):
                lines.append(PastLine(tick, agent, "error",
                                      f"{agent}'s turn ended early: {record['error']}", False))
        return tuple(lines)


def happening_text(kind: str, agent: str | None, data: Mapping[str, object]) -> str:
    """The feed's words for one narrated event (NARRATED_EVENTS), live and past alike."""
    if kind == "gardener_intervention":
        return f"The Gardener: {data.get('text')}"
    if kind == "gardener_refused":
        return (f"The Gardener's request {data.get('request')} ({data.get('kind')}) was "
                f"refused: {data.get('reason')}")
    if kind == "weather_changed":
        return f"The weather turns {data['weather']}."
    if kind == "agent_woke":
        return f"{agent} wakes."
    if kind == "journey_completed":
        return f"{agent} arrives."
    return f"{agent} stops: {data['reason']}."
