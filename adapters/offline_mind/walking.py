"""Walking: to a goal (someone seen, a landmark, back into range), or searching.

Until it has a haunt, an agent walks a square spiral (see `_search_leg`); with
one it wanders within its range of it. A step that is blocked is planned round
with the view's breadth-first `route` and that way is followed to its end.
"""

from __future__ import annotations

from adapters.offline_mind.basics import (
    BACK,
    DELTA,
    DIRS,
    SETTLE_RADIUS,
    SIDES,
    Pos,
    Script,
    WorkScript,
    ok,
    toward,
)
from adapters.offline_mind.making import SHELTER_UNITS

LONG_LEG_TURN = 0.02
"""Chance, each step ahead, of turning aside anyway: straight lines, but not forever."""

SEARCH_STEP = 30
"""The spiral's arms grow by this much every second leg (30, 30, 60, 60, 90, ...): with
landmarks seen from 40 cells away, it sweeps the nearest ground first, and stays near
where the agents woke (near one another) for the first days."""

SEARCH_LEGS = 16
"""Legs of the spiral before it starts again from the first."""

SEEN_FRESH = 30
"""Ticks a sighting stays worth following."""

JOURNEY_LIMIT = 30
"""Journeys (one cell a tick, hands busy) only for landmarks this close; walk further ones."""


class Walking:
    """Part of OfflineTurn (turn.py): uses its position, perception, persona, random source,
memory and the view of the cells."""

    __slots__ = ()

    def _chasing(self) -> Pos | None:
        """Where a social agent last saw someone, if that is fresh and worth following."""
        seen = self.seen
        if seen is None or self.traits.social < 0.5:
            return None
        name, x, y, tick = seen
        if self.tick - tick > SEEN_FRESH or self._paused(name):
            return None
        if abs(x - self.x) + abs(y - self.y) <= 2:
            return None
        return (x, y)

    def _goal(self, free: bool = False) -> Pos | None:
        """Where a walk is going, if anywhere in particular (`free`: not back into range)."""
        chase = self._chasing()
        if chase is not None:
            return chase
        if self.target is not None:
            return (self.target[1], self.target[2])
        anchor = self.anchor
        if anchor is not None:
            if self.home is None and self.haunt and self._door_ready() and (
                    self._shelter_units() >= SHELTER_UNITS):
                return anchor if self._dist(anchor) > SETTLE_RADIUS else None
            if not free and (self.haunt or self.home is not None) and (
                    self._dist(anchor) > self.persona.home_range):
                return anchor
        return None

    def _search_leg(self) -> str:
        """The direction of the current leg of its search spiral.

        Until it has a haunt, an agent walks a square spiral: legs of SEARCH_STEP,
        SEARCH_STEP, 2*SEARCH_STEP, 2*SEARCH_STEP, ... steps, turning the same way
        each time. Landmarks show from 40 cells away, so this sweeps the ground
        nearest its start first: agents who wake near one another tend to find the
        same landmark. Legs are counted in steps walked, not places to reach, so a
        lake in the way bends the spiral instead of stopping it. Each agent starts
        and turns its own way (from its name), so spirals cross rather than run
        side by side.
        """
        index, steps = self.search
        if steps >= SEARCH_STEP * (index // 2 + 1):
            index, steps = (index + 1) % SEARCH_LEGS, 0
            self.search = (index, steps)
        first, turn = self.persona.key % 4, 1 if (self.persona.key >> 2) & 1 else 3
        return DIRS[(first + index * turn) % 4]

    def _roam(self, steps: int, goal: Pos | None = None, arrive: int = 1,
              free: bool = False) -> Script:
        """Walk: to a goal if there is one, else on along its heading, turning at obstacles.

        `free`: this walk may leave its usual range (it is looking for materials).
        """
        rng = self.rng
        fixed = goal
        if fixed is None and self.haunt and self._goal() is None and rng.chance(0.12):
            heading = self.heading or rng.choice(DIRS)
            self.heading = SIDES[heading][rng.below(2)]
        detours = 0
        for _ in range(steps):
            goal = fixed or self._goal(free)
            direction = None
            if goal is not None:
                if abs(goal[0] - self.x) + abs(goal[1] - self.y) <= arrive:
                    return
                direction = self._step_toward(goal[0], goal[1])
                if direction not in toward(goal[0] - self.x, goal[1] - self.y):
                    detours += 1
                    if (direction is None or detours >= 3) and (
                            yield from self._journey_to_target(goal)):
                        return
                if direction is None and fixed is not None:
                    return
            searching = goal is None and not self.haunt  # looking for its place
            if direction is None:
                if searching:
                    self.heading = self._search_leg()
                direction = self._step_ahead(keep=searching)
            if direction is None:
                return
            if ok((yield "walk", {"direction": direction})):
                if searching:
                    self.search = (self.search[0], self.search[1] + 1)
                yield from self._arrivals()

    def _journey_to_target(self, goal: Pos) -> WorkScript:
        """Something is in the way of a landmark close by: let the world find the path."""
        target = self.target
        if target is None or (target[1], target[2]) != goal or self._dist(goal) > JOURNEY_LIMIT:
            return False
        return ok((yield "journey", {"place_name": target[0]}))

    def _arrivals(self) -> Script:
        """After a step: a landmark reached, or a chase that found nobody."""
        target = self.target
        if target is not None and abs(target[1] - self.x) + abs(target[2] - self.y) <= 1:
            for mark in self.p.landmarks:
                if mark.name == target[0]:
                    yield from self._visit(mark)
                    return
            self._give_up_target()
        seen = self.seen
        if seen is not None and abs(seen[1] - self.x) + abs(seen[2] - self.y) <= 2:
            self.seen = None

    def _open(self, direction: str) -> bool:
        if (self.x, self.y, direction) in self.blocked:
            return False
        dx, dy = DELTA[direction]
        return self.view.can_enter(self.x + dx, self.y + dy) is not False

    def _step_ahead(self, *, keep: bool = False) -> str | None:
        """A step along its heading, or aside when that is blocked.

        Wandering (`keep` false), a step aside becomes the new heading; searching,
        the heading is the spiral's leg and stays, so the walk bends round what is
        in the way and carries on.
        """
        rng = self.rng
        heading = self.heading
        if not heading:
            heading = self.heading = rng.choice(DIRS)
        if not keep and rng.chance(LONG_LEG_TURN):
            heading = self.heading = SIDES[heading][rng.below(2)]
        if self._open(heading):
            return heading
        left, right = SIDES[heading]
        # The same side as the heading's parity each time, so a shore is followed one way.
        sides = (left, right) if keep or rng.below(2) else (right, left)
        for direction in (*sides, BACK[heading]):
            if self._open(direction):
                if not keep:
                    self.heading = direction
                return direction
        return None

    def _step_toward(self, tx: int, ty: int) -> str | None:
        """A step that closes the gap; around what is in the way if it can see a way round.

        None when nothing in view gets it nearer: the goal is behind something bigger
        than it can see round, and the caller goes another way for now.
        """
        if self.detour is not None and self.detour[1] == (tx, ty):
            return self._follow_detour()  # on the way round something: to its end
        options = toward(tx - self.x, ty - self.y)
        for direction in options:
            if self._open(direction):
                return direction
        if not options:
            return None
        if not self.detour or self.detour[1] != (tx, ty):
            route = self.view.route((self.x, self.y), (tx, ty), self.blocked)
            if not route:
                self.detour = None
                return None
            self.detour = (route, (tx, ty))
        return self._follow_detour()

    def _follow_detour(self) -> str | None:
        """The next step of the planned way round; None (and no plan) if it is blocked."""
        route = self.detour[0]  # type: ignore[index]
        direction = route.pop(0)
        if not route or not self._open(direction):
            self.detour = None
        return direction if self._open(direction) else None
