"""How much a cell still yields: gathering spends a cell, time grows it back.

Decision (issue 4): cells deplete and regrow. Each gatherable cell holds
`cell_capacity` units; every gather takes `yield_per_gather`; one spent unit
grows back every `regrow_ticks`. Nothing ever runs out for good, so there is no
survival pressure, but a grove cut bare looks bare for a while, and the
Gardener can see where the land is tired. Only spent cells are remembered, so an
untouched world costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from core.types import Position


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
        got = min(self.per_gather, self.available(pos, tick))
        if got:
            missing = self.missing(pos, tick) + got
            self._spent[pos] = Spent(missing, tick)
            self.dirty.add(pos)
        return got

    def regrow(self, pos: Position) -> None:
        """Make a cell whole again (the Gardener's regrowth)."""
        if self._spent.pop(pos, None) is not None:
            self.dirty.add(pos)

    def spent_at(self, pos: Position) -> Spent | None:
        """The stored record of a cell (None if untouched or fully regrown)."""
        return self._spent.get(pos)

    def spent_cells(self) -> Iterator[tuple[Position, Spent]]:
        return iter(self._spent.items())
