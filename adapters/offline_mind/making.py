"""Making: gathering, crafting what it knows or guesses, building a shelter or a wall.

The project every agent drifts toward is a shelter by its haunt: gather wood (or
stone, or clay), split it into planks, build. Costs come from persona.Costs, as
the world's tool descriptions state them.
"""

from __future__ import annotations

from adapters.offline_mind import crafts, words
from adapters.offline_mind.basics import (
    DELTA,
    DIRS,
    SETTLE_RADIUS,
    Script,
    Spec,
    WorkScript,
    ok,
    toward,
)
from adapters.offline_mind.memory import BUILT, GATHERED

SHELTER_UNITS = 9
"""Units a shelter takes by default: four walls of two and a door of one."""

HOARD_LIMIT = 24
"""Carrying more than this, an agent stops gathering."""

BUILD_ANYWHERE_DAY = 3
"""From this day on, an agent with materials and no landmark found builds where it is."""

_CONVERSIONS = (("work:wood:split", "wood"), ("work:stone:break", "stone"),
                ("work:clay:shape", "clay"))
"""What turns raw material into shelter units, in the order it is tried."""

MATERIALS = ("wood", "stone", "clay")
"""What walls are made of (raw), best first: what a builder without any looks out for."""

FETCH_DAY = 2
"""From this day on, an agent that has built nothing and has nothing to build with goes
where it last saw material (or out on an expedition to find some)."""

EXPEDITION = 60
"""How far from its place an expedition for material goes (farther than it wanders)."""

UNASKED = object()
"""A per-turn answer not worked out yet (None is an answer: nothing there)."""


class Making:
    """Part of OfflineTurn (turn.py): uses its perception, persona, random source, memory,
working inventory (`inv`) and the view of the cells."""

    __slots__ = ()

    def _door_ready(self) -> bool:
        inv = self.inv
        return any(inv.get(m, 0) > 0 for m in self.persona.costs.door_materials)

    def _wanted(self) -> tuple[str, ...]:
        """Resources worth gathering now, best first (empty: nothing needed); worked out
        once until an outcome changes what it carries."""
        wants = self._wants
        if wants is None:
            wants = self._wants = self._work_out_wanted()
        return wants

    def _work_out_wanted(self) -> tuple[str, ...]:
        inv = self.inv
        total = sum(inv.values())
        if total >= HOARD_LIMIT:
            return ()
        if self.home is None:
            if self._shelter_units() < SHELTER_UNITS:
                # Grass is no building material, but a first handful is a start.
                return ("wood", "stone", "clay") if self.done & GATHERED else (
                    "wood", "stone", "clay", "grass")
            return () if self._door_ready() else ("wood",)
        if self.traits.maker >= 0.5 and total < 12:
            return ("wood", "stone", "grass", "clay")
        return ()

    def _shelter_units(self) -> int:
        """Wall and door units carried, counting what splitting or breaking would give
        (worked out once until an outcome changes what it carries: the answer and the
        working out are one function, so a turn enters one frame for it, not two)."""
        units = self._units
        if units >= 0:
            return units
        inv = self.inv
        if not inv:
            self._units = 0
            return 0
        get, able = inv.get, self._known_or_idea
        units = get("plank", 0) + get("cobblestone", 0) + get("clay_brick", 0)
        wood, stone, clay = get("wood", 0), get("stone", 0), get("clay", 0)
        if wood:  # what it cannot convert, it asks nothing about
            units += wood * (4 if able("work:wood:split") else 1)
        if stone:
            units += stone * (2 if able("work:stone:break") else 1)
        if clay and able("work:clay:shape"):
            units += clay
        self._units = units
        return units

    def _known_or_idea(self, key: str) -> bool:
        """Whether it knows, or has the idea, that this attempt works (cached per turn)."""
        known = self._able
        if known is None:
            known = self._able = {}
        able = known.get(key)
        if able is None:
            able = key not in self.failed and (
                key in self.ideas or any(k == key for k, _ in self.recipes))
            known[key] = able
        return able

    def _make(self, *, only_here: bool = False) -> WorkScript:
        """One step of making: build, convert, gather or experiment, whichever is due first.

        One call a turn (a second only when the first failed, so the turn is not wasted):
        each call costs the world work, and the next turn comes soon enough. With nothing
        to gather beside it, it goes toward the nearest wanted resource in view, unless
        `only_here`. True: it did (or set out to do) something.
        """
        costs = self.persona.costs
        for _ in range(2):
            if self.home is None:
                conversion = self._convert  # `_conversion`, written out
                if conversion is UNASKED:
                    conversion = self._convert = self._find_conversion()
                if conversion is not None:
                    if ok((yield conversion)):
                        yield from self._tell_discovery()
                        return True
                    continue
                if (costs.shelter_affordable(self.inv) and self._good_spot()
                        and not self._refused("build_shelter", {})):
                    if ok((yield "build_shelter", {})):
                        yield from self._after_home()
                        return True
                    continue
                if (yield from self._windbreak()):
                    return True
            elif (yield from self._maybe_wall()):
                return True
            wanted = self._wanted()
            if wanted:
                here = (self.x, self.y)
                found = self._wanted_beside()
                if found is not None:
                    gx, gy = found[1]
                    direction = toward(gx - self.x, gy - self.y)[0] if found[0] else "down"
                    if found[0] and (self.x, self.y, direction) in self.blocked:
                        self._spend(found[1])  # behind a wall from here: as good as spent
                        self._beside = UNASKED
                        continue
                    if ok((yield "gather", {"direction": direction})):
                        return True
                    continue
                if not only_here:
                    found = self.view.nearest(here, wanted, self.spent)
                    if found is not None and (yield from self._move(found[1], free=True)):
                        return True
            if self.rng.chance(0.1 + 0.5 * self.traits.maker):
                trial = self._experiment()
                if trial is not None:
                    yield trial
                    yield from self._tell_discovery()
                    return True
            return False
        return False

    def _at_hand(self) -> float:
        """How much making there is to do right here: 3 when its shelter can go up on this
        spot, or its first wall (`_windbreak_due`), 1 for something to convert or a wanted
        resource beside it, else 0.

        Added to the weight of making, so a start is followed through over the next
        turns instead of wandered away from (one call a turn makes that matter)."""
        if self.home is None:
            if self.persona.costs.shelter_affordable(self.inv) and self._good_spot():
                return 3.0
            conversion = self._convert  # `_conversion`, written out
            if conversion is UNASKED:
                conversion = self._convert = self._find_conversion()
            if conversion is not None:
                return 1.0
            if not self.done & BUILT and self._windbreak_due():
                # Its first wall's worth in hand, and nothing built yet: it goes up now,
                # before the day's other errands carry it off again.
                return 3.0
        if self._wanted_beside() is not None:
            return 1.0
        return 0.0

    def _wanted_beside(self) -> tuple[int, tuple[int, int], str] | None:
        """A wanted resource here or a step away (View.beside), asked once a turn."""
        found = self._beside
        if found is UNASKED:
            wanted = self._wants  # `_wanted`, written out
            if wanted is None:
                wanted = self._wants = self._work_out_wanted()
            found = self._beside = self.view.beside(
                (self.x, self.y), wanted, self.spent) if wanted else None
        return found

    def _conversion(self) -> Spec | None:
        """Split wood into planks (break stone, shape clay) while short of a shelter's worth;
        asked once a turn until an outcome changes what it carries."""
        found = self._convert
        if found is UNASKED:
            found = self._convert = self._find_conversion()
        return found

    def _find_conversion(self) -> Spec | None:
        inv = self.inv
        if "wood" not in inv and "stone" not in inv and "clay" not in inv:
            return None  # nothing to convert: the usual answer, found in three look-ups
        get = inv.get
        if get("plank", 0) + get("cobblestone", 0) + get("clay_brick", 0) >= SHELTER_UNITS:
            return None
        for key, item in _CONVERSIONS:
            if get(item, 0) > 0 and self._known_or_idea(key):
                return crafts.call_for(key)
        return None

    def _good_spot(self) -> bool:
        """Where a shelter may go: by its haunt (or anywhere, late enough), door on open ground."""
        p = self.p
        if p.inside_structure:
            return False
        for mark in p.landmarks:
            if mark.distance == 0:
                return False
        if self.haunt:
            if self._dist(self.anchor) > SETTLE_RADIUS:
                return False
        elif self._day < BUILD_ANYWHERE_DAY or (
                self.origin is not None and self._dist(self.origin) > self.persona.home_range):
            # No landmark found: home is near where it woke, not wherever day three finds it,
            # so those who woke near one another stay near one another.
            return False
        return self.view.can_enter(self.x, self.y + 1) is True

    def _after_home(self) -> Script:
        """A new shelter: sign it and name it, as anyone proud of a first home might."""
        rng, writer = self.rng, self.traits.writer
        if rng.chance(0.6 + 0.4 * writer):
            yield "write_sign", {"text": words.home_sign(self.persona.name, rng)}
        if rng.chance(0.4 + 0.5 * writer):
            yield "name_place", {"place_name": words.home_name(self.persona.name, rng)}

    def _windbreak_due(self) -> bool:
        """Nothing built by the second day and not a shelter's worth in hand, but a wall's
        worth: a single wall of what it has is a start (a windbreak), rather than days of
        carrying it about."""
        if self.done & BUILT or self._day < 2 or self.p.inside_structure:
            return False
        costs, inv = self.persona.costs, self.inv
        if not any(inv.get(m, 0) >= costs.wall_cost for m in costs.wall_materials):
            return False
        return self._shelter_units() < SHELTER_UNITS

    def _windbreak(self) -> WorkScript:
        """The windbreak, when it is due (`_windbreak_due`). True: it went up."""
        if not self._windbreak_due():
            return False
        out = yield "place_wall", {"direction": self.rng.choice(DIRS)}
        return ok(out)

    def _maybe_wall(self) -> WorkScript:
        """Now and then a maker with spare material raises a wall out in the land."""
        costs, inv = self.persona.costs, self.inv
        if self.p.inside_structure or (self.x, self.y) == self.home:
            return False
        if not any(inv.get(m, 0) >= costs.wall_cost + 2 for m in costs.wall_materials):
            return False
        if not self.rng.chance(0.08 * self.traits.maker):
            return False
        out = yield "place_wall", {"direction": self.rng.choice(DIRS)}
        return ok(out)

    def _experiment(self) -> Spec | None:
        """Try an idea, or a new guess with what it carries; never a known failure."""
        inv = self.inv
        failed = set(self.failed)
        known = {k for k, _ in self.recipes}
        for idea in self.ideas:
            if idea not in failed and idea not in known and crafts.can_try(idea, inv):
                return crafts.call_for(idea)
        carried = sorted(k for k, v in inv.items() if v > 0)
        if not carried:
            return None
        rng = self.rng
        for _ in range(4):
            if len(carried) >= 2 and rng.chance(0.35):
                first, second = rng.choice(carried), rng.choice(carried)
                if first == second or crafts.combine_key([first, "*"]) in failed or (
                        crafts.combine_key([second, "*"]) in failed):
                    continue
                key = crafts.combine_key([first, second])
            else:
                item = rng.choice(carried)
                if crafts.work_key(item, "*") in failed:
                    continue
                key = crafts.work_key(item, rng.choice(crafts.TECHNIQUES))
            if key not in failed and key not in known and crafts.can_try(key, inv):
                return crafts.call_for(key)
        return None

    def _tell_discovery(self) -> Script:
        found = self.fresh_discovery
        if found is None:
            return
        self.fresh_discovery = None
        if self._has_files():
            key, output, quantity = found
            yield "append_file", {"path": "discoveries.md",
                                  "text": words.discovery_entry(key, output, quantity)}

    def _needy(self) -> bool:
        """Built nothing and carries nothing a wall could be made of."""
        if self.done & BUILT:
            return False
        costs, inv = self.persona.costs, self.inv
        return not any(inv.get(m, 0) >= costs.wall_cost for m in costs.wall_materials)

    def _note_stock(self) -> None:
        """Remember the building material in view nearest its place (a needy agent's eye for
        it, whatever it is doing); forget a remembered spot seen bare."""
        view, stock = self.view, self.stock
        if stock is not None:
            seen = view.cell(stock[0], stock[1])
            if seen is not None and seen.gatherable not in MATERIALS:
                stock = self.stock = None
        centre = self.anchor or (self.x, self.y)
        found = view.nearest(centre, MATERIALS, self.spent)
        if found is None:
            return
        x, y = found[1]
        if stock is None or (abs(x - centre[0]) + abs(y - centre[1])
                             < abs(stock[0] - centre[0]) + abs(stock[1] - centre[1])):
            self.stock = (x, y)

    def _fetch(self) -> WorkScript:
        """Nothing to build with by FETCH_DAY: gather material in view, else walk to where
        some was seen, else go out on an expedition (a direction a day) until some shows.
        True: it did (or set out to do) something."""
        here = (self.x, self.y)
        if self.view.nearest(here, MATERIALS, self.spent) is not None:
            self.focus = "fetch"
            return (yield from self._make())
        stock = self.stock
        if stock is not None:
            self.focus = "fetch"
            if (yield from self._move(stock, arrive=0, free=True, hurry=True)):
                return True
            self.stock = None  # there, and nothing: gone
        centre = self.anchor or here
        dx, dy = DELTA[DIRS[(self.persona.key + self._day) % 4]]
        goal = (max(0, centre[0] + dx * EXPEDITION), max(0, centre[1] + dy * EXPEDITION))
        self.focus = "expedition"
        return (yield from self._move(goal, free=True, hurry=True))

    def _leave_shelter_if_trapped(self) -> WorkScript:
        """In its own shelter with the door on ground it cannot walk: open a wall elsewhere.
        True: it did."""
        view = self.view
        if (self.x, self.y) != self.home or view.can_enter(self.x, self.y + 1) is not False:
            return False
        for direction in ("north", "east", "west"):
            dx, dy = DELTA[direction]
            if view.can_enter(self.x + dx, self.y + dy):
                self.focus = "unwall"
                yield "remove_wall", {"direction": direction}
                return True
        return False
