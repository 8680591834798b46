"""Scheduler: which agents must take their turns one after another, and in what order.

Agents close enough to affect each other this tick (within sight, plus a margin for
two of them walking toward each other) form a cluster and act in turn, so each sees
what the one before did; separate clusters cannot interact and may run in parallel.
Closeness is transitive: if A is near B and B near C, all three share a cluster. So
do the members of one conversation (and an invitation's two), however far apart:
what one says is heard by the others, so their turns too go one after another.

    scheduler = Scheduler(vision_radius=3)          # cluster radius 3 + 2 = 5
    scheduler.force_next(AgentName("Sage"))         # Sage goes first next time
    clusters = scheduler.compute_clusters({AgentName("Ember"): Position(1, 1), ...})

The answer depends only on the positions, never on the order they were given in:
within a cluster, agents asked for by `force_next` come first (in the order they
were asked for), then the rest by name; clusters are ordered by the alphabetically
first name among their members.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from core.constants import CLUSTER_BUFFER
from core.types import AgentName, Position

Cell = tuple[int, int]
"""A square of the spatial hash: (x // side, y // side)."""

_FORWARD = ((1, -1), (1, 0), (1, 1), (0, 1))
"""Half of a cell's eight neighbours: each neighbouring pair of cells is compared once."""


class Scheduler:
    def __init__(self, vision_radius: int, *, buffer: int = CLUSTER_BUFFER) -> None:
        if vision_radius < 0 or buffer < 0:
            raise ValueError(
                f"vision_radius and buffer must be 0 or more, got {vision_radius} and {buffer}"
            )
        self.cluster_radius = vision_radius + buffer
        """Agents at most this far apart (Chebyshev) are linked."""
        self._forced: list[AgentName] = []

    def force_next(self, name: AgentName) -> None:
        """`name` acts first in its cluster the next time clusters are computed.

        One-shot: every request is used up by the next `compute_clusters`, including
        one for an agent that is not scheduled then (asleep, travelling), so a stale
        request never jumps a queue ticks later. Asking twice keeps the first place.
        """
        if name not in self._forced:
            self._forced.append(name)

    def compute_clusters(self, positions: Mapping[AgentName, Position],
                         together: Iterable[Iterable[AgentName]] = ()
                         ) -> list[list[AgentName]]:
        """The connected groups of agents within `cluster_radius` of one another, each
        of `together` (a conversation's members, an invitation's two: ties that reach
        any distance) kept in one group, so that what one of them does is seen by the
        next in a set order, not in the order their models happen to answer.

        Positions are hashed into square cells of side cluster_radius + 1: everyone in
        one cell is within the radius of everyone else there, and a link can only
        join neighbouring cells, so cells, not agents, are the union-find nodes and
        only neighbouring cells' distinct positions are ever compared.
        """
        forced, self._forced = self._forced, []
        radius = self.cluster_radius
        side = radius + 1
        cells: dict[Cell, list[AgentName]] = {}
        spots: dict[Cell, set[tuple[int, int]]] = {}
        for name, pos in positions.items():
            key = (pos.x // side, pos.y // side)
            members = cells.get(key)
            if members is None:
                cells[key] = [name]
                spots[key] = {(pos.x, pos.y)}
            else:
                members.append(name)
                spots[key].add((pos.x, pos.y))

        parent = {key: key for key in cells}

        def find(key: Cell) -> Cell:
            while (up := parent[key]) != key:
                parent[key] = parent[up]  # path halving
                key = up
            return key

        for key, here in spots.items():
            cx, cy = key
            for dx, dy in _FORWARD:
                near = (cx + dx, cy + dy)
                there = spots.get(near)
                if there is None:
                    continue
                a, b = find(key), find(near)
                if a != b and _any_within(here, there, radius):
                    parent[max(a, b)] = min(a, b)

        for tie in together:
            keys = [(positions[n].x // side, positions[n].y // side)
                    for n in tie if n in positions]
            for key in keys[1:]:
                a, b = find(keys[0]), find(key)
                if a != b:
                    parent[max(a, b)] = min(a, b)

        groups: dict[Cell, list[AgentName]] = {}
        for key, members in cells.items():
            root = find(key)
            group = groups.get(root)
            if group is None:
                groups[root] = members
            else:
                group.extend(members)
        clusters = list(groups.values())
        for cluster in clusters:
            cluster.sort()
        clusters.sort(key=lambda cluster: cluster[0])
        if forced:
            _put_forced_first(forced, positions, side, find, groups)
        return clusters


def _put_forced_first(
    forced: list[AgentName],
    positions: Mapping[AgentName, Position],
    side: int,
    find: Callable[[Cell], Cell],
    groups: dict[Cell, list[AgentName]],
) -> None:
    """Move each forced agent to the front of its (name-sorted) cluster, in request order.

    The clusters are the lists in `groups`, reordered in place.
    """
    firsts: dict[Cell, list[AgentName]] = {}
    for name in forced:
        pos = positions.get(name)
        if pos is not None:
            firsts.setdefault(find((pos.x // side, pos.y // side)), []).append(name)
    for root, first in firsts.items():
        cluster = groups[root]
        chosen = set(first)
        cluster[:] = first + [name for name in cluster if name not in chosen]


def _any_within(a: set[tuple[int, int]], b: set[tuple[int, int]], radius: int) -> bool:
    """Whether some position in `a` is within `radius` (Chebyshev) of one in `b`."""
    for ax, ay in a:
        for bx, by in b:
            if abs(ax - bx) <= radius and abs(ay - by) <= radius:
                return True
    return False
