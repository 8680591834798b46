"""What the Gardener has already read of the world's history, kept from cycle to cycle.

A Gardener beside a running engine looks at nearly the same stretch of history every
cycle (the last 48 ticks of turns, the last 240 of company) while the engine adds a
little to it. Reading it all again cost a cycle 1.2 s on 1,000 agents after 327 ticks
of a chatty world, most of it picking the parties out of 145,000 social events' JSON.
Each memo here keeps what it made of the rows already read and asks the database only
for what is new, so a cycle costs what the engine wrote since the one before, however
long the world has run.

Why the memos stay right:
- `events.seq` only grows, in the order transactions commit (there is one writer, and
  AUTOINCREMENT never hands a number out twice), and ticks commit in order, so an
  event's tick never falls as its seq rises. The events at ticks >= t are therefore
  one range of seq, from the first of them (one look-up in the tick index) to the
  newest; what was committed since the last read is the range after the last seq seen.
- A finished tick's turns never change again. The tick in progress may still gain
  turns, so its are read afresh each time and never kept.
- Asked about older history than it holds, or finding the newest event older than
  what it has seen (the file was replaced under it), a memo forgets everything and
  reads from scratch.

The memos hold only plain values and are given a function that runs one statement
and returns every row, so they are tested through the source that owns them
(storage.gardener_source.SqliteHealthSource) on a real file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

Execute = Callable[[str, Sequence[object]], list[tuple]]
"""Runs one statement with its parameters and returns all its rows."""


def newest_seq(execute: Execute) -> int:
    """The seq of the newest committed event (0 for none)."""
    return int(execute("SELECT COALESCE(MAX(seq), 0) FROM events", ())[0][0])


def first_seq_from(execute: Execute, since_tick: int) -> int | None:
    """The seq of the first event at a tick >= since_tick, or None if there is none yet.

    The index by tick holds (tick, seq) in order, so this is one seek, not a scan.
    """
    rows = execute("SELECT seq FROM events WHERE tick >= ? ORDER BY tick, seq LIMIT 1",
                   (since_tick,))
    return int(rows[0][0]) if rows else None


class EventMemo(ABC):
    """What a family of events at ticks >= `floor` says, read up to seq `seen`.

    Subclasses say which rows to read (`_read`: the events with seq in a range and tick
    at or after a floor) and what to keep of them (`_take`, `_forget_before`)."""

    def __init__(self) -> None:
        self._floor: int | None = None
        self._seen = 0

    def catch_up(self, execute: Execute, since_tick: int) -> None:
        """Make the memo hold every committed event of its family at ticks >= since_tick,
        reading only the events it has not read yet."""
        since_tick = max(0, since_tick)
        top = newest_seq(execute)
        if self._floor is None or since_tick < self._floor or top < self._seen:
            self._forget()
            start = first_seq_from(execute, since_tick)
        else:
            start = self._seen + 1
        if start is not None and start <= top:
            self._take(self._read(execute, start, top, since_tick))
        self._forget_before(since_tick)
        self._floor, self._seen = since_tick, top

    @abstractmethod
    def _forget(self) -> None:
        """Drop everything held."""

    @abstractmethod
    def _read(self, execute: Execute, first: int, last: int, since_tick: int) -> list[tuple]:
        """The rows of the family with seq in [first, last] and tick >= since_tick."""

    @abstractmethod
    def _take(self, rows: list[tuple]) -> None:
        """Keep what the rows say."""

    @abstractmethod
    def _forget_before(self, tick: int) -> None:
        """Drop what happened before `tick`."""


class LatestTickMemo(EventMemo):
    """Agent -> the latest tick of an event it took part in, from a statement giving
    (agent, tick) rows for a seq range: parameters (first seq, last seq, since tick)."""

    def __init__(self, sql: str, params: Sequence[object]) -> None:
        super().__init__()
        self._sql, self._params = sql, tuple(params)
        self.latest: dict[str, int] = {}

    def _forget(self) -> None:
        self.latest = {}

    def _read(self, execute: Execute, first: int, last: int, since_tick: int) -> list[tuple]:
        return execute(self._sql, (first, last, since_tick, *self._params))

    def _take(self, rows: list[tuple]) -> None:
        latest = self.latest
        for who, tick in rows:
            name, tick = str(who), int(tick)
            if tick > latest.get(name, -1):
                latest[name] = tick

    def _forget_before(self, tick: int) -> None:
        self.latest = {name: t for name, t in self.latest.items() if t >= tick}


class SleepMemo(EventMemo):
    """Every sleep and wake at ticks >= the floor, in the order they happened:
    (agent, lay down?, tick)."""

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[tuple[str, bool, int]] = []

    def _forget(self) -> None:
        self.changes = []

    def _read(self, execute: Execute, first: int, last: int, since_tick: int) -> list[tuple]:
        return execute(
            "SELECT agent, kind, tick FROM events WHERE seq >= ? AND seq <= ? AND +tick >= ? "
            "AND kind IN ('agent_slept', 'agent_woke') ORDER BY seq", (first, last, since_tick))

    def _take(self, rows: list[tuple]) -> None:
        self.changes.extend((str(agent), kind == "agent_slept", int(tick))
                            for agent, kind, tick in rows)

    def _forget_before(self, tick: int) -> None:
        if self.changes and self.changes[0][2] < tick:
            self.changes = [change for change in self.changes if change[2] >= tick]

    def since(self, tick: int) -> list[tuple[str, bool, int]]:
        """The changes at ticks >= tick (which must be at or after the floor)."""
        return [change for change in self.changes if change[2] >= tick]


class KindCountMemo(EventMemo):
    """How many events of the given kinds happened at each tick >= the floor."""

    def __init__(self, kinds: Sequence[str]) -> None:
        super().__init__()
        self._kinds = tuple(kinds)
        self.per_tick: Counter[int] = Counter()

    def _forget(self) -> None:
        self.per_tick = Counter()

    def _read(self, execute: Execute, first: int, last: int, since_tick: int) -> list[tuple]:
        marks = ",".join("?" * len(self._kinds))
        return execute(
            f"SELECT tick, COUNT(*) FROM events WHERE seq >= ? AND seq <= ? AND +tick >= ? "
            f"AND kind IN ({marks}) GROUP BY tick", (first, last, since_tick, *self._kinds))

    def _take(self, rows: list[tuple]) -> None:
        for tick, count in rows:
            self.per_tick[int(tick)] += int(count)

    def _forget_before(self, tick: int) -> None:
        for old in [t for t in self.per_tick if t < tick]:
            del self.per_tick[old]

    def between(self, since_tick: int, until_tick: int) -> int:
        return sum(count for tick, count in self.per_tick.items()
                   if since_tick <= tick < until_tick)


_TURN_COUNTS = (
    "SELECT t.tick, t.agent, COUNT(*), TOTAL(json_extract(a.value, '$.ok') = 0) "
    "FROM turns t, json_each(t.record, '$.actions') a WHERE t.tick >= ? AND t.tick < ? "
    "GROUP BY t.tick, t.agent")
"""(tick, agent, actions, failed actions) for the turns of a span of ticks; a turn's
`error` (it ended early) is not an action and is not counted."""


class ActionMemo:
    """Per finished tick, agent -> (actions, failed actions), for ticks [low, high)."""

    def __init__(self) -> None:
        self._started = False
        self._low = self._high = 0
        self._ticks: dict[int, dict[str, tuple[int, int]]] = {}

    def counts(self, execute: Execute, since_tick: int, until_tick: int,
               next_tick: int) -> dict[str, tuple[int, int]]:
        """Agent -> (actions, failed) over ticks [since_tick, until_tick), where every tick
        before `next_tick` is finished. Agents with no action in the span are absent."""
        since_tick = max(0, since_tick)
        finished_end = max(since_tick, min(until_tick, next_tick))
        if not self._started or since_tick < self._low or since_tick > self._high \
                or next_tick < self._high:
            self._ticks, self._low, self._high = {}, since_tick, since_tick
            self._started = True
        if self._high < finished_end:
            self._add(execute(_TURN_COUNTS, (self._high, finished_end)))
            self._high = finished_end
        for old in [t for t in self._ticks if t < since_tick]:
            del self._ticks[old]
        self._low = since_tick
        totals: dict[str, tuple[int, int]] = {}
        for tick in range(since_tick, finished_end):
            _merge(totals, self._ticks.get(tick, {}).items())
        if finished_end < until_tick:  # the tick in progress: read now, never kept
            _merge(totals, ((str(agent), (int(count), int(failed))) for _, agent, count, failed
                            in execute(_TURN_COUNTS, (finished_end, until_tick))))
        return totals

    def _add(self, rows: list[tuple]) -> None:
        for tick, agent, count, failed in rows:
            self._ticks.setdefault(int(tick), {})[str(agent)] = (int(count), int(failed))


def _merge(totals: dict[str, tuple[int, int]],
           more: Iterable[tuple[str, tuple[int, int]]]) -> None:
    for agent, (count, failed) in more:
        done, wrong = totals.get(agent, (0, 0))
        totals[agent] = (done + count, wrong + failed)
