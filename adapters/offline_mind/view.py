"""The cells of one perception, looked up by position without building anything.

A turn asks "can I step north from here?" and "is there wood beside me?" many
times while its position changes. The PerceptionBuilder lists the cells of the
vision square row by row, so a cell's index is arithmetic on its position; each
look-up checks that the cell found there really has that position, and only
if the listing was ever in another order does the view fall back to a
dictionary built once. Nothing is scanned unless a question needs every cell
(the nearest wood beyond arm's reach, the terrain around for a sign's text).
"""

from __future__ import annotations

from collections import Counter
from operator import attrgetter

from core.perception import Perception, SeenCell

Pos = tuple[int, int]

_AROUND = ((0, 0), (0, -1), (1, 0), (0, 1), (-1, 0))
"""Here, then north, east, south, west: the order `beside` prefers on a tie."""
_STEPS = (("north", 0, -1), ("east", 1, 0), ("south", 0, 1), ("west", -1, 0))


class View:
    """Passability and gatherable resources of the cells in view, by (x, y)."""

    __slots__ = ("cells", "x0", "y0", "width", "height", "_index", "centre", "radius",
                 "_passable")

    def __init__(self, perception: Perception) -> None:
        cells = perception.cells
        self.cells = cells
        self._passable: list[bool] | None = None
        self.centre = (perception.position.x, perception.position.y)
        self.radius = perception.vision_radius
        self._index: dict[Pos, SeenCell] | None = None
        side = 2 * self.radius + 1
        if cells and len(cells) == side * side:
            # The whole square in sight (not cut by the world's edge): where it starts is
            # arithmetic, with no cell read for it (cells lie all over the heap, and by an
            # agent's turn the engine's work has pushed them out of the caches). Every
            # look-up by position checks the cell it finds, as below.
            self.x0, self.y0 = self.centre[0] - self.radius, self.centre[1] - self.radius
            self.width = self.height = side
        elif cells:
            first, last = cells[0].position, cells[-1].position
            self.x0, self.y0 = first.x, first.y
            self.width = last.x - first.x + 1
            self.height = last.y - first.y + 1
            if self.width <= 0 or self.height <= 0 or self.width * self.height != len(cells):
                self._build_index()
        else:
            self.x0 = self.y0 = self.width = self.height = 0

    def _build_index(self) -> dict[Pos, SeenCell]:
        index = {(c.position.x, c.position.y): c for c in self.cells}
        self._index = index
        return index

    def cell(self, x: int, y: int) -> SeenCell | None:
        """The cell at (x, y) if it is in view."""
        index = self._index
        if index is None:
            dx, dy = x - self.x0, y - self.y0
            if 0 <= dx < self.width and 0 <= dy < self.height:
                found = self.cells[dy * self.width + dx]
                position = found.position
                if position.x == x and position.y == y:
                    return found
                index = self._build_index()  # listed in some other order after all
            else:
                return None
        return index.get((x, y))

    def can_enter(self, x: int, y: int) -> bool | None:
        """True or False for a cell within the vision square (a cell missing from it lies
        past the world's edge: False); None for a cell beyond sight."""
        if self._index is None:  # the common case of `cell`, written out
            dx, dy = x - self.x0, y - self.y0
            if 0 <= dx < self.width and 0 <= dy < self.height:
                found = self.cells[dy * self.width + dx]
                position = found.position
                if position.x == x and position.y == y:
                    return found.passable
        found = self.cell(x, y)
        if found is not None:
            return found.passable
        cx, cy = self.centre
        if abs(x - cx) <= self.radius and abs(y - cy) <= self.radius and self.cells:
            return False
        return None

    def nearest(self, origin: Pos, resources: tuple[str, ...],
                skip: set[Pos] | frozenset[Pos] = frozenset()) -> tuple[int, Pos, str] | None:
        """The closest gatherable cell giving one of `resources`: (distance, pos, resource).

        Ties go to the resource named first, then to the smaller (y, x), so the
        answer never depends on the order the cells were listed in.
        """
        best: tuple[int, int, int, int, str] | None = None
        ox, oy = origin
        for cell in self.cells:
            resource = cell.gatherable
            if resource is None or resource not in resources:
                continue
            x, y = cell.position.x, cell.position.y
            if (x, y) in skip:
                continue
            rank = (abs(x - ox) + abs(y - oy), resources.index(resource), y, x, resource)
            if best is None or rank < best:
                best = rank
        if best is None:
            return None
        return best[0], (best[3], best[2]), best[4]

    def beside(self, origin: Pos, resources: tuple[str, ...],
               skip: set[Pos] | frozenset[Pos] = frozenset()) -> tuple[int, Pos, str] | None:
        """`nearest`, but only here or one step away: five look-ups instead of a scan.

        Asked on most daytime turns, so the five cells are read by index (as `cell`
        does) in one expression, and only the one chosen has its position checked.
        """
        width = self.width
        rx, ry = origin[0] - self.x0, origin[1] - self.y0
        if (skip or self._index is not None
                or not (0 < rx < width - 1 and 0 < ry < self.height - 1)):
            return self._beside_by_index(origin, resources, skip)  # the uncommon cases
        cells = self.cells
        i = ry * width + rx
        around = (cells[i].gatherable, cells[i - width].gatherable, cells[i + 1].gatherable,
                  cells[i + width].gatherable, cells[i - 1].gatherable)
        # The best-ranked resource found around wins; of its cells, the first in `_AROUND`.
        for resource in resources:
            if resource in around:
                best = around.index(resource)
                break
        else:
            return None
        dx, dy = _AROUND[best]
        x, y = origin[0] + dx, origin[1] + dy
        position = cells[(ry + dy) * width + rx + dx].position
        if position.x != x or position.y != y:  # listed in some other order after all
            self._build_index()
            return self._beside_by_index(origin, resources, skip)
        return (0 if best == 0 else 1), (x, y), resource

    def _beside_by_index(self, origin: Pos, resources: tuple[str, ...],
                         skip: set[Pos] | frozenset[Pos]) -> tuple[int, Pos, str] | None:
        ox, oy = origin
        best: tuple[int, int, Pos, str] | None = None
        for x, y in ((ox, oy), (ox, oy - 1), (ox + 1, oy), (ox, oy + 1), (ox - 1, oy)):
            found = self.cell(x, y)
            if found is None:
                continue
            resource = found.gatherable
            if resource is None or resource not in resources or (x, y) in skip:
                continue
            rank = resources.index(resource)
            if best is None or rank < best[0]:
                best = (rank, 0 if (x, y) == origin else 1, (x, y), resource)
        return None if best is None else (best[1], best[2], best[3])

    def route(self, origin: Pos, goal: Pos,
              blocked: set[tuple[int, int, str]] | frozenset = frozenset()) -> list[str]:
        """Steps of the shortest way, inside the view, to the visible cell nearest `goal`;
        empty when no cell it can reach in view is nearer than where it stands.

        Used only when the straight step is blocked, and then followed to its end: a
        breadth-first search over at most the vision square (49 cells by day), so a
        lake is walked around rather than paced along. `blocked` holds edges known to
        be walls: (x, y, direction).
        """
        width, height, x0, y0 = self.width, self.height, self.x0, self.y0
        ox, oy = origin[0] - x0, origin[1] - y0
        if self._index is None and self.cells:  # the search below trusts the layout: check it
            first, last = self.cells[0].position, self.cells[-1].position
            if (first.x, first.y, last.x, last.y) != (x0, y0, x0 + width - 1, y0 + height - 1):
                self._build_index()
        if self._index is not None or not (0 <= ox < width and 0 <= oy < height):
            return []  # cells listed out of order, or it has walked out of this view
        passable = self._passable
        if passable is None:
            passable = self._passable = [c.passable for c in self.cells]
        gx, gy = goal[0] - x0, goal[1] - y0
        start = oy * width + ox
        best_dist, best = abs(gx - ox) + abs(gy - oy), -1
        came: dict[int, tuple[int, str]] = {start: (-1, "")}
        frontier = [start]
        while frontier:
            reached = []
            for here in frontier:
                y, x = divmod(here, width)
                for direction, dx, dy in _STEPS:
                    nx, ny = x + dx, y + dy
                    if not (0 <= nx < width and 0 <= ny < height):
                        continue
                    there = ny * width + nx
                    if there in came or not passable[there]:
                        continue
                    if blocked and (x + x0, y + y0, direction) in blocked:
                        continue
                    came[there] = (here, direction)
                    reached.append(there)
                    dist = abs(gx - nx) + abs(gy - ny)
                    if dist < best_dist:  # breadth first: the first found is the nearest way
                        best_dist, best = dist, there
            frontier = reached
        steps: list[str] = []
        while best > -1 and best != start:
            best, direction = came[best]
            steps.append(direction)
        steps.reverse()
        return steps

    def terrain_counts(self) -> list[tuple[str, int]]:
        """(terrain, cells) in view, most common first (ties by name); counted in C."""
        counts = Counter(map(_TERRAIN, self.cells))
        return sorted(((str(t), n) for t, n in counts.items()), key=_MOST_FIRST)


def step_blocks(remembered: tuple[tuple[int, int, str], ...], perception: Perception,
                ) -> set[tuple[int, int, str]]:
    """The steps (x, y, direction) a turn must not take: the walls it remembers walking
    into (`remembered`), but not through a door in view, and both ways across every wall
    without a door in view (`perception.walls`, edges keyed as the world keys them)."""
    blocked = set(remembered)
    for x, y, side in perception.doors:
        if side == "e":
            blocked.discard((x, y, "east"))
            blocked.discard((x + 1, y, "west"))
        else:
            blocked.discard((x, y, "south"))
            blocked.discard((x, y + 1, "north"))
    for x, y, side in perception.walls:
        if side == "e":
            blocked.add((x, y, "east"))
            blocked.add((x + 1, y, "west"))
        else:
            blocked.add((x, y, "south"))
            blocked.add((x, y + 1, "north"))
    return blocked


_TERRAIN = attrgetter("terrain")


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


_MOST_FIRST = _most_first
