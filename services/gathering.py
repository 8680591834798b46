"""How much a cell still yields: gathering spends a cell, time grows it back.

Decision (issue 4): cells deplete and regrow. Each gatherable cell holds
`cell_capacity` units; every gather takes `yield_per_gather`; one spent unit
grows back every `regrow_ticks`. Nothing ever runs out for good, so there is no
survival pressure, but a grove cut bare looks bare for a while, and the
Gardener can see where the land is tired. Only spent cells are remembered, so an
untouched world costs nothing; they are also indexed in squares, so what a window
holds (`spent_in`, `bare_in`) costs a few look-ups, not one per cell.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from core.types import Position
from services.changes import collecting_now

SPENT_BUCKET = 16
"""Side of the squares spent cells are indexed in for window queries (`spent_in`, `bare_in`)."""


@dataclass(frozen=True)
class Spent:
    units: int
    """Units missing at `since_tick`."""
    since_tick: int


class Gathering:
    def __init__(
        self,
        *,
        capacity: int = 5,
        per_gather: int = 1,
        regrow_ticks: int = 24,
        spent: Iterable[tuple[Position, Spent]] = (),
    ) -> None:
        self.capacity = capacity
        self.per_gather = per_gather
        self.regrow_ticks = regrow_ticks
        self._spent: dict[Position, Spent] = dict(spent)
        self.dirty: set[Position] = set()
        self._buckets: dict[tuple[int, int], dict[Position, Spent]] = {}
        """(x // SPENT_BUCKET, y // SPENT_BUCKET) -> the records of the spent cells there
        (the same records as `_spent`, so a window query hashes no Position)."""
        self._bare: dict[tuple[int, int], dict[Position, int]] = {}
        """bucket -> the cells a record leaves bare -> the first tick they are not."""
        self._bare_rules = (capacity, regrow_ticks)
        self._bare_pruned = -1
        """Entries of `_bare` that end at or before this tick may have been dropped."""
        for pos, record in self._spent.items():
            self._file(pos, record)

    def missing(self, pos: Position, tick: int) -> int:
        spent = self._spent.get(pos)
        if spent is None:
            return 0
        regrown = max(0, tick - spent.since_tick) // self.regrow_ticks
        return max(0, spent.units - regrown)

    def available(self, pos: Position, tick: int) -> int:
        return self.capacity - self.missing(pos, tick)

    def take(self, pos: Position, tick: int) -> int:
        """Take one gather's worth; returns the units taken (0 if the cell is spent)."""
        missing = self.missing(pos, tick)  # asked once: the cell's record is read once
        got = min(self.per_gather, self.capacity - missing)
        if got:
            record = self._spent[pos] = Spent(missing + got, tick)
            self._file(pos, record)
            self._note(pos)
        return got

    def regrow(self, pos: Position) -> None:
        """Make a cell whole again (the Gardener's regrowth)."""
        if self._spent.pop(pos, None) is not None:
            key = (pos.x // SPENT_BUCKET, pos.y // SPENT_BUCKET)
            bucket = self._buckets[key]
            del bucket[pos]
            if not bucket:
                del self._buckets[key]
            bare = self._bare.get(key)
            if bare is not None and bare.pop(pos, None) is not None and not bare:
                del self._bare[key]
            self._note(pos)

    def _note(self, pos: Position) -> None:
        """Into the running turn's journal if there is one, else into `dirty`."""
        turn = collecting_now()
        (self.dirty if turn is None else turn.spent).add(pos)

    def spent_at(self, pos: Position) -> Spent | None:
        """The stored record of a cell (None if untouched or fully regrown)."""
        return self._spent.get(pos)

    def spent_cells(self) -> Iterator[tuple[Position, Spent]]:
        return iter(self._spent.items())

    def spent_in(self, x0: int, y0: int, x1: int, y1: int) -> list[tuple[Position, Spent]]:
        """The stored records of cells x0 <= x < x1, y0 <= y < y1, row by row from the north
        (as `spent_at` gives them: a record may have fully grown back by now).

        Spent cells are indexed in SPENT_BUCKET-cell squares, so a window nobody has
        gathered in costs a few dictionary look-ups, not one per cell.
        """
        buckets = self._buckets
        if not buckets or x0 >= x1 or y0 >= y1:
            return []
        size = SPENT_BUCKET
        bx0, bx1 = x0 // size, (x1 - 1) // size
        found = []
        for by in range(y0 // size, (y1 - 1) // size + 1):
            for bx in range(bx0, bx1 + 1):
                cells = buckets.get((bx, by))
                if cells:
                    for entry in cells.items():
                        pos = entry[0]
                        if x0 <= pos.x < x1 and y0 <= pos.y < y1:
                            found.append(entry)
        if len(found) > 1:
            found.sort(key=_row_major)
        return found

    def bare_in(self, x0: int, y0: int, x1: int, y1: int, tick: int) -> list[Position]:
        """The cells of the window x0 <= x < x1, y0 <= y < y1 with nothing left to gather
        at `tick` (`available(pos, tick) <= 0`), row by row from the north.

        Only a cell with a record can be bare while `capacity` >= 1 (the config's
        minimum); with a smaller capacity every cell is, and this lists only those.
        The cells are kept in an index of their own, each with the tick it grows back
        from, so the cost follows the cells bare now, not every record ever made;
        cells that have grown back are dropped from the index as windows meet them
        (which is why asking about an earlier tick reads the records instead).
        """
        if (self.capacity, self.regrow_ticks) != self._bare_rules:
            self._bare_rules = (self.capacity, self.regrow_ticks)
            self._bare.clear()
            self._bare_pruned = -1
            for pos, record in self._spent.items():
                self._file(pos, record)
        if tick < self._bare_pruned:
            available = self.available
            return [pos for pos, _ in self.spent_in(x0, y0, x1, y1) if available(pos, tick) <= 0]
        buckets = self._bare
        if not buckets or x0 >= x1 or y0 >= y1:
            return []
        size = SPENT_BUCKET
        bx0, bx1 = x0 // size, (x1 - 1) // size
        found = []
        ended: list[tuple[tuple[int, int], Position]] = []
        for by in range(y0 // size, (y1 - 1) // size + 1):
            for bx in range(bx0, bx1 + 1):
                cells = buckets.get((bx, by))
                if cells:
                    for pos, until in cells.items():
                        if x0 <= pos.x < x1 and y0 <= pos.y < y1:
                            if until > tick:
                                found.append(pos)
                            else:
                                ended.append(((bx, by), pos))
        if ended:  # grown back (for good, unless gathered again, which files them anew)
            for key, pos in ended:
                cells = buckets[key]
                del cells[pos]
                if not cells:
                    del buckets[key]
            self._bare_pruned = max(self._bare_pruned, tick)
        if len(found) > 1:
            found.sort(key=_yx)
        return found

    def _file(self, pos: Position, record: Spent) -> None:
        """Index a cell's new record: among the spent, and among the bare if it is."""
        key = (pos.x // SPENT_BUCKET, pos.y // SPENT_BUCKET)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = {}
        bucket[pos] = record
        # Bare while capacity - max(0, units - max(0, t - since) // regrow) <= 0 (see
        # `missing`): with capacity >= 1, exactly the ticks t < since + (units -
        # capacity + 1) * regrow; with a smaller capacity, always.
        capacity, regrow = self._bare_rules
        bare = self._bare.get(key)
        if capacity < 1 or record.units >= capacity:
            until = (sys.maxsize if capacity < 1
                     else record.since_tick + (record.units - capacity + 1) * regrow)
            if bare is None:
                bare = self._bare[key] = {}
            bare[pos] = until
        elif bare is not None and bare.pop(pos, None) is not None and not bare:
            del self._bare[key]


def _row_major(entry: tuple[Position, Spent]) -> tuple[int, int]:
    return entry[0].y, entry[0].x


def _yx(pos: Position) -> tuple[int, int]:
    return pos.y, pos.x
