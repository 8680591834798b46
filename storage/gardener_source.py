"""SqliteHealthSource: the raw facts the Gardener's health figures are made from.

The Gardener is a process of its own that must never change the world, so it reads
world.db through a connection the caller opened read-only (`mode=ro`); in WAL mode
that reads committed data while the engine goes on writing. Every method here is
one or a few queries giving plain values, and the arithmetic that turns them into
health (who is alone, what share failed) lives in services.gardener.observe, so it
can be tested without a database and this file stays a reader.

History (events and turns) is followed rather than reread: a source kept from cycle to
cycle remembers what it made of the rows it has read (storage.health_memo) and reads
only what the engine has committed since, so a cycle costs the same however long the
world has run. Answers are the same as a fresh source's; only the cost differs.

Reads that must agree with each other (an agent's sleep and the tick it is counted
up to, say) can share one read transaction: `with source.snapshot(): ...` sees the
database as it was when the first query ran, however many ticks the engine commits
meanwhile. Keep it short: an open read holds back the engine's WAL checkpoints.
"""

from __future__ import annotations

import sqlite3
import typing
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields

import numpy as np

from core.events import EVENT_TYPES
from core.terrain import DEFAULT_TERRAIN, TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import AgentName, Position
from storage.errors import CorruptDatabaseError, NotAWorldError, StorageError
from storage.health_memo import ActionMemo, KindCountMemo, LatestTickMemo, SleepMemo
from storage.repositories.world import RASTER_ENCODING

LASTING_CHANGE_KINDS: tuple[str, ...] = (
    "wall_placed",         # a wall stands where there was none
    "door_placed",         # a door is set into a wall
    "structure_detected",  # walls closed around a space: a building
    "item_crafted",        # something made that did not exist before
    "item_placed",         # a thing set down in the world to stay (not dropped)
    "sign_written",        # words left for others to read
    "place_named",         # a name on the map
)
"""Event kinds that leave something in the world that others can find later.

Left out on purpose: gathering (it grows back), dropping, taking and giving items
(things moving about, not made), walls and structures removed (undoing, not making),
movement and talk (they leave nothing behind), and the Gardener's own interventions
(the world's liveliness must not count the Gardener's efforts to liven it).
"""

NOT_TOGETHER_KINDS: frozenset[str] = frozenset({"invitation_expired"})
"""Social events that mean no contact at all: an invitation nobody answered before it
lapsed is written for both parties by the engine's opening phase, wherever they are
by then, so counting it would make an ignored agent look less alone."""


def _social_parties() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Social event kind -> (fields naming one agent, fields naming a set of agents).

    Found from the event classes themselves (every field typed as an agent name), so
    a social event added to core.events is counted without touching this file.
    """
    parties: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for kind, cls in EVENT_TYPES.items():
        if cls.category != "social" or kind in NOT_TOGETHER_KINDS:
            continue
        hints = typing.get_type_hints(cls)
        one = tuple(f.name for f in fields(cls) if hints[f.name] is AgentName)
        many = tuple(f.name for f in fields(cls) if hints[f.name] == frozenset[AgentName])
        parties[kind] = (one, many)
    return parties


SOCIAL_PARTIES: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = _social_parties()
"""Which fields of each counted social event name the agents who took part."""


def _social_query() -> tuple[str, tuple[str, ...]]:
    """One statement giving each agent's latest social tick among the events with seq in
    a range and tick at or after a floor (parameters: first seq, last seq, floor tick,
    then the kinds this returns alongside).

    The range is read once (the MATERIALIZED set of social events) and every party
    field is picked from that smaller set, all inside SQLite.
    """
    by_field: dict[tuple[str, bool], list[str]] = {}
    for kind, (one, many) in SOCIAL_PARTIES.items():
        for name in one:
            by_field.setdefault((name, False), []).append(kind)
        for name in many:
            by_field.setdefault((name, True), []).append(kind)
    named = [kind for kind, (one, many) in SOCIAL_PARTIES.items() if one or many]
    params: list[str] = list(named)
    parts = []
    for (name, is_set), kinds in sorted(by_field.items()):
        if not name.isidentifier():  # pragma: no cover - field names are identifiers
            raise RuntimeError(f"event field {name!r} cannot be a JSON path")
        marks = ",".join("?" * len(kinds))
        if is_set:
            parts.append(f"SELECT j.value AS who, s.tick AS tick FROM social s, "
                         f"json_each(s.data, '$.{name}') j WHERE s.kind IN ({marks})")
        else:
            parts.append(f"SELECT json_extract(s.data, '$.{name}') AS who, s.tick AS tick "
                         f"FROM social s WHERE s.kind IN ({marks})")
        params += kinds
    sql = (f"WITH social AS MATERIALIZED (SELECT tick, kind, data FROM events WHERE "
           f"seq >= ? AND seq <= ? AND +tick >= ? AND kind IN ({','.join('?' * len(named))})) "
           f"SELECT who, MAX(tick) FROM ({' UNION ALL '.join(parts)}) "
           "WHERE who IS NOT NULL GROUP BY who")
    return sql, tuple(params)


_SOCIAL_SQL, _SOCIAL_PARAMS = _social_query()


@dataclass(frozen=True, slots=True)
class WorldFacts:
    tick: int
    """The next tick to run (every tick before it is committed)."""
    width: int
    height: int
    weather: str = "clear"


@dataclass(frozen=True, slots=True)
class AgentFacts:
    name: str
    x: int
    y: int
    sleeping: bool

    @property
    def position(self) -> Position:
        return Position(self.x, self.y)


class SqliteHealthSource:
    """Raw reads for the Gardener's health figures, on a read-only connection.

    The connection belongs to the caller (open it with
    `sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)`), who closes it.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        # What was read of the history already (storage.health_memo): kept for the
        # next cycle, which then reads only what the engine has written since.
        self._social = LatestTickMemo(_SOCIAL_SQL, _SOCIAL_PARAMS)
        self._sleep = SleepMemo()
        self._lasting = KindCountMemo(LASTING_CHANGE_KINDS)
        self._actions = ActionMemo()

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees one committed state of the database (nests: an inner
        snapshot joins the outer one)."""
        if self._conn.in_transaction:
            yield
            return
        self._execute("BEGIN")
        try:
            yield
        finally:
            self._conn.rollback()  # nothing was written; this only ends the read

    def _execute(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        """Every row at once (a statement left open would hold its read snapshot), with
        SQLite's errors made storage errors that say what was being read."""
        try:
            return self._conn.execute(sql, tuple(params)).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such" in str(exc):
                raise NotAWorldError(f"the database is not a Hearth world with history "
                                     f"({exc})") from None
            raise StorageError(f"reading the world's health failed ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise CorruptDatabaseError(f"reading the world's health failed: the database "
                                       f"is damaged ({exc})") from None

    # ------------------------------------------------------------------ the world

    def world(self) -> WorldFacts:
        rows = self._execute("SELECT tick, width, height, weather FROM world_state "
                             "WHERE id = 1")
        if not rows:
            raise NotAWorldError("the database holds no world yet (no world_state row)")
        tick, width, height, weather = rows[0]
        return WorldFacts(int(tick), int(width), int(height), str(weather))

    def agents(self) -> tuple[AgentFacts, ...]:
        """Every agent, by name."""
        return tuple(AgentFacts(str(name), int(x), int(y), bool(sleeping)) for name, x, y, sleeping
                     in self._execute("SELECT name, x, y, is_sleeping FROM agents ORDER BY name"))

    def landmarks(self) -> tuple[tuple[str, Position], ...]:
        """Every landmark's name and cell (what the Gardener may reveal)."""
        return tuple((str(name), Position(int(x), int(y))) for name, x, y
                     in self._execute("SELECT name, x, y FROM landmarks ORDER BY id"))

    # ------------------------------------------------------------------ company

    def last_social_ticks(self, since_tick: int = 0) -> dict[str, int]:
        """Agent -> the latest tick (>= since_tick) of a social event it took part in, as
        the event's agent or as a party named in it (the other, the recipient, the
        invitee or inviter, a participant). Agents in none since then are absent.

        `since_tick` bounds the read: all of a long history is the largest table in the
        file (a second on a thousand agents after 300 ticks), while the caller only
        needs to know who has been alone longer than it cares to tell apart. Asked
        again, only the events committed since are read."""
        self._social.catch_up(self._execute, since_tick)
        return dict(self._social.latest)

    def last_word_tick(self) -> int | None:
        """The latest tick at which anything was said in a conversation, or None.

        The newest row by id is the newest tick: turns are written in the order ticks
        commit, and the table has no index by tick, so MAX(tick) would read all of it.
        """
        rows = self._execute("SELECT tick FROM conversation_turns ORDER BY id DESC LIMIT 1")
        return int(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ doing

    def action_counts(self, since_tick: int,
                      until_tick: int | None = None) -> dict[str, tuple[int, int]]:
        """Agent -> (actions, failed actions) in its turns at ticks >= since_tick (and
        < until_tick if given: the tick in progress already has some turns written);
        agents with no action in that span are absent. A turn's `error` (it ended
        early) is not an action and is not counted. Finished ticks read once are kept."""
        next_tick = self.world().tick
        return self._actions.counts(self._execute, since_tick, _end(until_tick), next_tick)

    def lasting_changes(self, since_tick: int, until_tick: int | None = None) -> int:
        """How many events at ticks >= since_tick (and < until_tick if given) left
        something in the world (LASTING_CHANGE_KINDS)."""
        self._lasting.catch_up(self._execute, since_tick)
        return self._lasting.between(since_tick, _end(until_tick))

    def asleep_ticks(self, since_tick: int, now_tick: int) -> dict[str, int]:
        """Agent -> how many ticks of [since_tick, now_tick) it spent asleep (every agent,
        0 for the wakeful). Ticks before 0 never happened and are not counted.

        An agent that lies down at tick s and is woken at tick w (woken in the opening
        phase, before any turn) was asleep for ticks s..w-1. Whether it was asleep when
        the span began follows from its first sleep or wake since then (a wake means it
        was); with neither, it slept all along or not at all, as it does now. Changes
        at now_tick and later are read too, though not counted: the tick in progress
        may already have put someone to sleep, and the agents table says so.
        """
        start = max(0, since_tick)
        self._sleep.catch_up(self._execute, start)
        changes: dict[str, list[tuple[bool, int]]] = {}
        for agent, lies_down, tick in self._sleep.since(start):
            changes.setdefault(agent, []).append((lies_down, tick))
        asleep: dict[str, int] = {}
        for agent in self.agents():
            marks = changes.get(agent.name)
            if not marks:
                asleep[agent.name] = max(0, now_tick - start) if agent.sleeping else 0
                continue
            sleeping = not marks[0][0]  # the first change was a wake: it slept before
            began = start
            spans: list[tuple[int, int]] = []
            for lies_down, tick in marks:
                if lies_down and not sleeping:
                    sleeping, began = True, tick
                elif not lies_down and sleeping:
                    sleeping = False
                    spans.append((began, tick))
            if sleeping:
                spans.append((began, now_tick))
            asleep[agent.name] = sum(max(0, min(end, now_tick) - max(begin, start))
                                     for begin, end in spans)
        return asleep

    # ------------------------------------------------------------------ the land

    def gatherable_units_near(
        self,
        positions: Iterable[Position],
        radius: int,
        capacity: int,
        gatherable: Collection[str],
        *,
        regrow_ticks: int | None = None,
        tick: int | None = None,
    ) -> dict[Position, int]:
        """Position -> units left to gather on the cells within `radius` of it
        (Chebyshev: a square of side 2 * radius + 1, cut at the world's edge).

        `gatherable` names the terrain kinds that yield something (from the terrain
        config, which storage does not read); each such cell holds `capacity` units,
        less what spent_cells says is missing. Given `regrow_ticks` and the `tick` to
        judge at, a unit comes back every `regrow_ticks` since the cell was last
        gathered, as the engine counts it; without them the stored shortfall stands.

        One array of units per cell and its summed-area table make each position's
        count four look-ups, so a thousand agents on a 500x500 world cost a few
        milliseconds beyond reading the raster.
        """
        if radius < 0 or capacity < 0:
            raise ValueError(f"radius and capacity must be 0 or more, got {radius} and "
                             f"{capacity}")
        if (regrow_ticks is None) != (tick is None):
            raise ValueError("give both regrow_ticks and tick, or neither")
        if regrow_ticks is not None and regrow_ticks < 1:
            raise ValueError(f"regrow_ticks must be at least 1, got {regrow_ticks}")
        wanted = list(dict.fromkeys(positions))
        if not wanted:
            return {}
        units = self._units(capacity, _terrain_codes(gatherable), regrow_ticks, tick)
        height, width = units.shape
        table = np.zeros((height + 1, width + 1), dtype=np.int64)
        np.cumsum(np.cumsum(units, axis=0, dtype=np.int64), axis=1, out=table[1:, 1:])
        xs = np.fromiter((p.x for p in wanted), dtype=np.int64, count=len(wanted))
        ys = np.fromiter((p.y for p in wanted), dtype=np.int64, count=len(wanted))
        x0, x1 = np.clip(xs - radius, 0, width), np.clip(xs + radius + 1, 0, width)
        y0, y1 = np.clip(ys - radius, 0, height), np.clip(ys + radius + 1, 0, height)
        sums = table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]
        return {pos: int(total) for pos, total in zip(wanted, sums.tolist(), strict=True)}

    def terrain_near(self, positions: Iterable[Position],
                     radius: int) -> dict[Position, tuple[str, ...]]:
        """Position -> the kinds of terrain (names, sorted) on the cells within `radius`
        of it (Chebyshev, cut at the world's edge): the ground words may name there.

        A summed-area table per kind present makes each position's answer a few
        look-ups per kind, as in `gatherable_units_near`."""
        if radius < 0:
            raise ValueError(f"radius must be 0 or more, got {radius}")
        wanted = list(dict.fromkeys(positions))
        if not wanted:
            return {}
        terrain = self._terrain()
        height, width = terrain.shape
        xs = np.fromiter((p.x for p in wanted), dtype=np.int64, count=len(wanted))
        ys = np.fromiter((p.y for p in wanted), dtype=np.int64, count=len(wanted))
        x0, x1 = np.clip(xs - radius, 0, width), np.clip(xs + radius + 1, 0, width)
        y0, y1 = np.clip(ys - radius, 0, height), np.clip(ys + radius + 1, 0, height)
        kinds: list[list[str]] = [[] for _ in wanted]
        for code in np.unique(terrain).tolist():
            table = np.zeros((height + 1, width + 1), dtype=np.int64)
            np.cumsum(np.cumsum(terrain == code, axis=0, dtype=np.int64), axis=1,
                      out=table[1:, 1:])
            found = (table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]) > 0
            name = TERRAIN_ORDER[code].value
            for i in np.flatnonzero(found).tolist():
                kinds[i].append(name)
        return {pos: tuple(sorted(k)) for pos, k in zip(wanted, kinds, strict=True)}

    def _units(self, capacity: int, codes: frozenset[int], regrow_ticks: int | None,
               tick: int | None) -> np.ndarray:
        """Units left on every cell, indexed [y, x]."""
        terrain = self._terrain()
        yields = np.zeros(len(TERRAIN_ORDER), dtype=np.int64)
        yields[list(codes)] = capacity
        units = yields[terrain]
        rows = self._execute("SELECT x, y, units, since_tick FROM spent_cells")
        if rows:
            spent = np.array(rows, dtype=np.int64)
            xs, ys, missing, since = spent.T
            inside = (xs >= 0) & (xs < units.shape[1]) & (ys >= 0) & (ys < units.shape[0])
            xs, ys, missing, since = xs[inside], ys[inside], missing[inside], since[inside]
            if regrow_ticks is not None and tick is not None:
                missing = np.maximum(0, missing - np.maximum(0, tick - since) // regrow_ticks)
            units[ys, xs] = np.maximum(0, units[ys, xs] - missing)
        return units

    def _terrain(self) -> np.ndarray:
        """Terrain codes of every cell, [y, x]: the generated raster with changed cells
        laid over it (a world made before terrain generation is all default terrain)."""
        facts = self.world()
        rows = self._execute("SELECT width, height, encoding, data FROM terrain_raster "
                             "WHERE id = 1")
        if rows and (rows[0][0], rows[0][1]) == (facts.width, facts.height):
            width, height, encoding, data = rows[0]
            if encoding != RASTER_ENCODING:
                raise CorruptDatabaseError(f"terrain stored as {encoding!r}, which this "
                                           "version cannot read")
            try:
                raw = zlib.decompress(data)
            except zlib.error as exc:
                raise CorruptDatabaseError(f"the stored terrain is damaged ({exc})") from None
            if len(raw) != width * height:
                raise CorruptDatabaseError(f"the stored terrain has {len(raw)} cells, not "
                                           f"{width}x{height}")
            codes = np.frombuffer(raw, dtype=np.uint8).reshape(height, width).copy()
        else:
            codes = np.full((facts.height, facts.width), TERRAIN_CODE[DEFAULT_TERRAIN],
                            dtype=np.uint8)
        changed = self._execute("SELECT x, y, terrain FROM cells")
        for x, y, name in changed:
            if 0 <= x < facts.width and 0 <= y < facts.height:
                try:
                    codes[y, x] = TERRAIN_CODE[Terrain(name)]
                except ValueError:
                    raise CorruptDatabaseError(f"cell ({x}, {y}) has unknown terrain "
                                               f"{name!r}") from None
        return codes


def _end(until_tick: int | None) -> int:
    """An upper tick bound for SQL: past any tick there will ever be, if none given."""
    return 2**62 if until_tick is None else until_tick


def _terrain_codes(gatherable: Collection[str]) -> frozenset[int]:
    """The raster codes of the named terrain kinds (names as in terrain.yaml)."""
    if isinstance(gatherable, str):
        raise TypeError("gatherable must be a collection of terrain names, not one string")
    codes = set()
    for name in gatherable:
        try:
            codes.add(TERRAIN_CODE[Terrain(name)])
        except ValueError:
            known = ", ".join(t.value for t in TERRAIN_ORDER)
            raise ValueError(f"unknown terrain {name!r} (expected one of: {known})") from None
    return frozenset(codes)
