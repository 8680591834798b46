"""Moving: one call per turn, a walk of up to five cells or a journey.

Why one call? Every call costs the engine an action, a narration and events,
and a thousand agents share a tenth of a second. Why journeys? A journeying
agent has no turns at all (the world carries it one cell a tick, about a
seventh of what a turn costs the engine) until it arrives or someone comes into
view. But a journey is slow (one cell a tick, where a walk goes up to five) and
blind (no turn, so no new landmark noticed, no resource picked up on the way),
so journeys are hops of HOP_LEAST..HOP_MOST cells, never the whole way:

- a goal nearer than JOURNEY_FROM cells (a resource beside the path, someone just
  out of reach), or one straight walk away, is walked to: a straight line of up to
  WALK_MOST steps, round an obstacle in view by the first straight stretch of the
  view's `route`;
- a goal further off (a landmark, its haunt at dusk, its home at night, someone
  seen a while ago, a resource at the edge of view) is journeyed to, and one beyond
  HOP_MOST by a hop to a waypoint HOP_MOST cells along the way (see `_waypoint`);
  each arrival is a turn that looks around and hops on;
- with no goal, an agent still looking for its place goes along its search spiral
  (see `_search_leg`), and one that has a place wanders near it, by walks and now
  and then a hop (SEARCH_HOP, WANDER_HOP);
- but it walks, whatever the distance, while someone awake is in view (see
  `_company`) and on its way back to its haunt at dusk (`hurry`);
- a hop whose end cannot be stood on or reached (a lake between) is followed, in the
  same turn, by a journey the whole way there, which the world plans round it.

A journey that fails (a spot that cannot be stood on, past the world's edge, no
way there) falls back to a walk in the same turn, so a turn never ends without
moving when moving was the point.

No step a wall without a door blocks is ever asked for: the turn's `blocked` holds
both sides of every such wall in view (the perception's `walls`; doors in view let it
through) besides the walls it walked into, and a walk is cut short before the first
of them on its way (`_walk`). Walls past the edge of view are still found by walking
into them.
"""

from __future__ import annotations

from typing import Any

from adapters.offline_mind.basics import (
    BACK,
    DELTA,
    DIRS,
    SETTLE_RADIUS,
    SIDES,
    Pos,
    Spec,
    WorkScript,
    toward,
)
from adapters.offline_mind.making import BUILD_ANYWHERE_DAY, FETCH_DAY, SHELTER_UNITS
from adapters.offline_mind.memory import TALKED
from services.mind import ToolOutcome

WALK_MOST = 5
"""Steps one walk may take (the world's MAX_WALK_STEPS)."""

JOURNEY_FROM = 6
"""A goal at least this far (Manhattan) is journeyed to, unless one straight walk gets
there; a nearer one is walked to (a hop that short would save the engine little)."""

HOP_LEAST = 6
HOP_MOST = 12
"""Length of one journey: further goals are reached hop by hop, each arrival a turn to
look around. Longer hops kept agents in trance most of the day and made them miss
landmarks and one another (measured: 73-cell journeys failed the life test on three
seeds of four)."""

JOURNEY_ROUND = 30
"""A goal this far that nothing in view leads nearer to (a lake in the way) is
journeyed to whole: the world plans the way round."""

SEARCH_HOP = 0.2
WANDER_HOP = 0.2
"""Chance that a move along the search spiral, or a wander near its place, is a hop
rather than a walk. A hop of nine cells is nine turns saved but also nine ticks at a
walk's fifth of the speed, seeing nothing new: these keep about two agents in five
travelling (the engine's budget) while searchers still cover ground. No wandering hop sets
off in the afternoon: it would run on into the evening, when company is at its place."""

LONG_LEG_TURN = 0.05
"""Chance, each wandering walk, of turning aside anyway: straight lines, but not forever."""

SEARCH_WALK = 5
"""Steps of one walk along the search spiral: a whole walk, since landmarks stand 80-150
cells from where agents wake on a default world and three-step walks rarely got there."""

SEARCH_STEP = 45
"""The spiral's arms grow by this much every second leg (45, 45, 90, 90, 135, ...): with
landmarks seen from 40 cells away, it sweeps the nearest ground first, and stays near
where the agents woke (near one another) for the first days."""

SEARCH_LEGS = 16
"""Legs of the spiral before it starts again from the first."""

SEEN_FRESH = 30
"""Ticks a sighting stays worth following."""

TARGET_PATIENCE = 48
"""Ticks a landmark target (other than its haunt, where its evenings lead it anyway) is
walked toward before it is given up: a journey there by hops takes a day; one not reached
in two has something in the way that the agent keeps walking into (a lake its view cannot
see round, while company in view keeps it from journeying)."""


def _walk_call(direction: str, steps: int) -> Spec:
    return "walk", ({"direction": direction} if steps <= 1 else
                    {"direction": direction, "steps": min(steps, WALK_MOST)})


class Walking:
    """Part of OfflineTurn (turn.py): uses its position, perception, persona, random source,
memory and the view of the cells."""

    __slots__ = ()

    def _chasing(self) -> Pos | None:
        """Where a social agent last saw someone, if that is fresh and worth following.

        Not someone it has met already while it has nothing to build with (from
        FETCH_DAY): it will see them at dusk, and its roof will not see to itself (a
        social agent who went back to whoever it had just left never got far enough
        from its place to find wood)."""
        seen = self.seen
        if seen is None or self.traits.social < 0.5:
            return None
        name, x, y, tick = seen
        if self.tick - tick > SEEN_FRESH or abs(x - self.x) + abs(y - self.y) <= 2:
            return None
        if self._paused(name):
            return None
        if self._day >= FETCH_DAY and self._needy():
            for other, _ in self.met:
                if other == name:
                    return None
        return (x, y)

    def _goal(self, free: bool = False) -> Pos | None:
        """Where a walk is going, if anywhere in particular (`free`: not back into range)."""
        chase = self._chasing()
        if chase is not None:
            return chase
        target = self.target
        if target is not None:
            if self.tick - self.since <= TARGET_PATIENCE or target[0] == self.haunt:
                return (target[1], target[2])
            self._give_up_target()  # two days on and not there: something is in the way
        anchor = self.anchor
        if anchor is not None:
            if self.home is None and self._door_ready() and (
                    self._shelter_units() >= SHELTER_UNITS):
                if self.haunt:
                    return anchor if self._dist(anchor) > SETTLE_RADIUS else None
                if self._day >= BUILD_ANYWHERE_DAY and self._dist(anchor) > self.persona.home_range:
                    return anchor
            if not free and (self.haunt or self.home is not None) and (
                    self._dist(anchor) > self.persona.home_range):
                return anchor
        return None

    def _search_leg(self) -> tuple[str, int]:
        """The direction of the current leg of its search spiral, and the steps left on it.

        Until it has a haunt, an agent walks a square spiral: legs of SEARCH_STEP,
        SEARCH_STEP, 2*SEARCH_STEP, 2*SEARCH_STEP, ... steps, turning the same way
        each time. Landmarks show from 40 cells away, so this sweeps the ground
        nearest its start first: agents who wake near one another tend to find the
        same landmark. Legs are counted in steps travelled, not places to reach, so a
        lake in the way bends the spiral instead of stopping it. Each agent starts
        and turns its own way (from its name), so spirals cross rather than run
        side by side.
        """
        index, steps = self.search
        length = SEARCH_STEP * (index // 2 + 1)
        if steps >= length:
            index, steps = (index + 1) % SEARCH_LEGS, 0
            self.search = (index, 0)
            length = SEARCH_STEP * (index // 2 + 1)
        key = self.persona.key
        return DIRS[(key % 4 + index * (1 if (key >> 2) & 1 else 3)) % 4], length - steps

    def _move(self, goal: Pos | None = None, *, arrive: int = 1, free: bool = False,
              most: int = WALK_MOST, place: str = "", hurry: bool = False) -> WorkScript:
        """One move (see the module docstring): toward `goal` (or its own goal), else on.

        `arrive`: how near counts as there. `free`: it may leave its usual range (it is
        looking for materials). `place`: the name of a landmark at `goal`, to journey to by
        name. `hurry`: walk (five times a journey's pace) unless nothing in view leads
        nearer; for the way back to its haunt at dusk, which is where company is found and
        an evening lasts only a few ticks. True: it moved, or set out.
        """
        most = max(1, min(most, WALK_MOST))
        if goal is None:
            goal = self._goal(free)
            if goal is not None and self.target is not None and goal == (
                    self.target[1], self.target[2]):
                place = self.target[0]
        if goal is not None:
            far = abs(goal[0] - self.x) + abs(goal[1] - self.y)
            if far <= arrive:
                return False
            one_walk = (goal[0] == self.x or goal[1] == self.y) and far <= WALK_MOST + arrive
            if not hurry and self._lonely():
                hurry = True
            if hurry and far > HOP_MOST and not self._open(
                    toward(goal[0] - self.x, goal[1] - self.y)[0]):
                # Far, and the way straight there blocked (a lake between): walking at it
                # only paces along the shore, back and forth. The world plans the way round.
                hurry = False
            if far >= JOURNEY_FROM and not one_walk and not hurry:
                args = (self._journey_args(goal, place) if far <= HOP_MOST
                        else self._journey_args(self._waypoint(goal, far)))
                if args is not None:
                    out = yield "journey", args
                    if out is not None and out.success:
                        return True
                    if far > HOP_MOST and out is not None:
                        # The hop's end cannot be stood on or reached (a lake between, which
                        # walking at it only paces along): the whole way, planned round it.
                        args = self._journey_args(goal, place)
                        if args is not None:
                            out = yield "journey", args
                            if out is not None and out.success:
                                return True
            leg = self._leg_toward(goal[0], goal[1], arrive)
            if leg is not None:
                return self._walked((yield self._walk(*leg)))
            # Nothing in view leads nearer: the world knows the way round, if it is not far.
            if far < JOURNEY_FROM or HOP_MOST < far <= JOURNEY_ROUND:
                args = self._journey_args(goal, place)
                if args is not None:
                    out = yield "journey", args
                    if out is not None and out.success:
                        return True
        rng = self.rng
        if not self.haunt and goal is None:  # looking for its place: the spiral
            heading, left = self._search_leg()
            self.heading = heading
            hop = min(left, rng.between(HOP_LEAST, HOP_MOST))
            if hop >= HOP_LEAST and rng.chance(SEARCH_HOP) and not self._lonely():
                args = self._hop_args(heading, hop)
                if args is not None:
                    out = yield "journey", args
                    if out is not None and out.success:
                        self.search = (self.search[0], self.search[1] + hop)
                        return True
            direction = self._step_ahead(keep=True)
            if direction is None:
                return False
            x, y = self.x, self.y
            moved = self._walked((yield self._walk(direction, min(SEARCH_WALK, left))))
            self.search = (self.search[0], self.search[1] + abs(self.x - x) + abs(self.y - y))
            return moved
        if goal is None:
            if rng.chance(0.12):
                # Wandering near its place: now and then a new direction.
                self.heading = SIDES[self.heading or DIRS[rng.below(4)]][rng.below(2)]
            if rng.chance(WANDER_HOP) and self.p.period != "afternoon" and not self._lonely():
                args = self._hop_args(
                    self.heading or DIRS[rng.below(4)], rng.between(HOP_LEAST, HOP_MOST - 2))
                if args is not None:
                    out = yield "journey", args
                    if out is not None and out.success:
                        return True
        direction = self._step_ahead()
        if direction is None:
            return False
        return self._walked((yield self._walk(direction, rng.between(min(2, most), most))))

    def _lonely(self) -> bool:
        """A day gone by and nobody talked with yet: by day it walks wherever it goes. A
        traveller has no turns until it arrives (it sees nobody, answers no invitation),
        and a journey, a cell a tick, begun in the afternoon or late morning carries it on
        past the evening, when whoever else comes back to its place is there."""
        return not self.done & TALKED and self._day >= 2 and self.p.period != "night"

    def _waypoint(self, goal: Pos, far: int) -> Pos:
        """The cell HOP_MOST steps along the straight line to a far `goal` (each axis in
        proportion), where the next hop toward it ends."""
        dx, dy = goal[0] - self.x, goal[1] - self.y
        sx = round(dx * HOP_MOST / far)
        return (self.x + sx, self.y + (HOP_MOST - abs(sx)) * (1 if dy > 0 else -1))

    # A walk or a journey is one call, so `_move` yields it itself: what to ask for and
    # what its outcome means are plain functions, not scripts of their own (a generator
    # nested in `_move` cost a frame made and resumed on every moving turn).

    def _hop_args(self, direction: str, steps: int) -> dict[str, Any] | None:
        """A journey `steps` cells straight on in `direction`, where the way is open (None:
        not worth asking for)."""
        if not self._open(direction):
            return None
        dx, dy = DELTA[direction]
        return self._journey_args((self.x + dx * steps, self.y + dy * steps))

    def _walked(self, out: ToolOutcome | None) -> bool:
        """After a walk: True if it went; then a landmark target that is not where it was,
        or a chase that found nobody, is given up. (Reaching a landmark is seen to on the
        next turn, by `_here`.)"""
        if out is None or not out.success:
            return False
        target = self.target
        if target is not None and abs(target[1] - self.x) + abs(target[2] - self.y) <= 1:
            if all(mark.name != target[0] for mark in self.p.landmarks):
                self._give_up_target()
        seen = self.seen
        if seen is not None and abs(seen[1] - self.x) + abs(seen[2] - self.y) <= 2:
            self.seen = None
        return True

    def _journey_args(self, goal: Pos, place: str = "") -> dict[str, Any] | None:
        """The arguments that set out for `goal` (by name, for a landmark); None if that
        already failed this turn or the goal is a cell in view that cannot be stood on."""
        if self._company() and self.p.period != "night":
            return None  # see `_company`
        args = {"place_name": place} if place else {"destination": [goal[0], goal[1]]}
        if not place and (goal[0] < 0 or goal[1] < 0
                          or self.view.can_enter(goal[0], goal[1]) is False):
            return None  # past the world's edge, or ground it can see cannot be stood on
        if self._refused("journey", args):
            return None
        return args

    def _company(self) -> bool:
        """Someone awake in view: then it walks rather than journeys.

        A traveller has no turns, so it cannot answer an invitation (they lapse in two
        ticks), and its journey stops only for someone its own step brings into view, not
        for someone who walks up to it. So with company about it stays where turns are.
        """
        for seen in self.p.agents:
            if not seen.is_sleeping:
                return True
        return False

    def _walk(self, direction: str, steps: int) -> Spec:
        """A walk of up to `steps` in `direction` (whose first step is open), cut short
        before the first wall it knows of on the way (one in view, or one it walked into):
        a step a wall without a door blocks is never asked for."""
        blocked = self.blocked
        if blocked and steps > 1:
            dx, dy = DELTA[direction]
            x, y = self.x, self.y
            for taken in range(1, min(steps, WALK_MOST)):
                x, y = x + dx, y + dy
                if (x, y, direction) in blocked:
                    steps = taken
                    break
        return _walk_call(direction, steps)

    def _open(self, direction: str) -> bool:
        if (self.x, self.y, direction) in self.blocked:
            return False
        dx, dy = DELTA[direction]
        return self.view.can_enter(self.x + dx, self.y + dy) is not False

    def _step_ahead(self, *, keep: bool = False) -> str | None:
        """A direction along its heading, or aside when that is blocked.

        Wandering (`keep` false), a step aside becomes the new heading; searching,
        the heading is the spiral's leg and stays, so the walk bends round what is
        in the way and carries on.
        """
        rng = self.rng
        heading = self.heading
        if not heading:
            heading = self.heading = DIRS[rng.below(4)]
        elif not keep and rng.chance(LONG_LEG_TURN):
            heading = self.heading = SIDES[heading][rng.below(2)]
        if self._open(heading):
            return heading
        left, right = SIDES[heading]
        # The same side each time when searching, so a shore is followed one way.
        sides = (left, right) if keep or rng.below(2) else (right, left)
        for direction in (*sides, BACK[heading]):
            if self._open(direction):
                if not keep:
                    self.heading = direction
                return direction
        return None

    def _leg_toward(self, tx: int, ty: int, arrive: int = 1) -> tuple[str, int] | None:
        """(direction, steps) of one walk that brings it nearer (tx, ty): straight along the
        longer gap if that is open, else the first straight stretch of a way round in view.

        None when nothing in view gets it nearer: the goal is behind something bigger than
        it can see round (the caller journeys, or goes another way for now).
        """
        dx, dy = tx - self.x, ty - self.y
        blocked = self.blocked
        for direction in toward(dx, dy):
            if self._open(direction):
                along = abs(dx) if direction in ("east", "west") else abs(dy)
                if along == abs(dx) + abs(dy):  # in line with the goal: stop `arrive` short
                    along -= arrive
                if along > 1 and blocked:
                    sx, sy = DELTA[direction]
                    if (self.x + sx, self.y + sy, direction) in blocked:
                        continue  # one step on, a wall it knows of: that way is no way on
                return direction, max(1, min(WALK_MOST, along))
        route = self.view.route((self.x, self.y), (tx, ty), self.blocked)
        if not route or not self._open(route[0]):
            return None
        first, run = route[0], 1
        while run < len(route) and run < WALK_MOST and route[run] == first:
            run += 1
        return first, run
