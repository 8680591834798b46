"""One offline agent's turn: a small script that yields tool calls and reads outcomes.

The turn is a Python generator (`_script`): each `yield (tool, arguments)` is
one call, and the value it gets back is that call's ToolOutcome. The engine's
loop drives it through `next_calls`, one call at a time, so every decision
sees what the previous call did (a walk that hit a wall, a gather that found
the cell spent, a guess at a recipe that made nothing).

What the turn may know is exactly what a language model would: the
Perception it was handed and the outcomes of its own calls. What it learns
that should outlast the turn goes into the agent's Memory, committed once,
when the turn ends.

Two rules hold whatever the script does:

- never more calls than `max_actions`;
- never the same call (same tool, same arguments) again in a turn after it
  failed: `next_calls` answers such a repeat itself, with a refusal the script
  sees as a failure, and ends the turn if the script keeps insisting.

How agents find each other (the world is 500x500 and they see 3 cells):

- Until a landmark rises on its horizon (seen from 40 cells), an agent walks
  (now and then journeys: walking.py) a square spiral out from where it woke, so
  it sees the ground nearest its start first. Agents wake 30-60 cells apart with
  the landmark nearest the middle of the map on their horizon (world setup places
  them so), so each finds it by its own sight and they meet there.
- Of the landmarks it has seen, the one nearest where it woke becomes its
  haunt: its shelter goes up beside it, its wandering circles it, and it walks
  back there every evening. At its haunt it writes "I come back here every
  evening"; whoever reads that (or a home sign) by someone else makes that
  landmark its haunt too, and keeps it. Evenings at a shared haunt are where
  most conversations happen, so the way back at dusk is walked, not journeyed.
- Social agents follow whoever they last saw, and the authors of the signs
  they read; once they have met someone, `sense_others` turns them that way.

Measured on generated default worlds (three agents, 200 ticks, `python -m bench life`,
seeds 1-30): every agent gathers, crafts and writes in all 30 and builds in 29 (a wall of
what it has counts, from the second day; in the 30th no wood or stone lay near the
landmark); two of them meet and talk in all 30. On seeds 31-60, 27 of 30 (25 before an
agent with nothing to build with remembered, from its second day, where it saw wood or
stone and went back for it, or out on an expedition: making.py `_fetch`). Before agents
woke within sight of a landmark (they stood 80-150 cells from the nearest), two met in
18 of 30: those who never talked passed within four to seven cells of one another
without seeing each other. One who finds a landmark already signed, and has written
nothing yet, names a place there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from adapters.offline_mind import crafts, words
from adapters.offline_mind.basics import (
    _DAYS,
    DELTA,
    SETTLE_RADIUS,
    SIDES,
    Pos,
    Script,
    args_key,
    day_of,
)
from adapters.offline_mind.making import FETCH_DAY, SHELTER_UNITS, UNASKED, Making
from adapters.offline_mind.memory import (
    BUILT,
    CRAFTED,
    GATHERED,
    MAX_DIARY,
    MAX_FAILED,
    MAX_IDEAS,
    MAX_MARKS,
    MAX_MET,
    MAX_NAMED,
    MAX_RECIPES,
    MAX_SIGNS,
    MAX_TEXT,
    MAX_VISITED,
    MAX_WALLS,
    NAMES,
    TALKED,
    WROTE,
    Memory,
    capped,
)
from adapters.offline_mind.persona import Persona
from adapters.offline_mind.rng import TurnRandom
from adapters.offline_mind.talking import Talking
from adapters.offline_mind.view import View, step_blocks
from adapters.offline_mind.walking import SEARCH_LEGS, Walking
from adapters.offline_mind.writing import Writing
from core.failures import FailureReason
from services.mind import ToolCall, ToolOutcome, TurnStart

TURN_CAP = 16
"""The most calls one turn ever makes, whatever max_actions allows: a turn always ends."""

MAX_SKIPS = 8
"""Repeats of failed calls the turn answers itself before it ends the turn."""

LONELY_DAY = 3
LONELY_TRIP = 0.1
"""From this day, an agent that has talked with nobody goes, on about one daytime turn in
ten, to see a landmark it knows besides its haunt again (`_look_for_company`)."""

NIGHT_WALK_HOME = 8
"""At night an agent this close to its shelter walks in to sleep."""

_NONE: frozenset = frozenset()
"""The empty set a turn starts with: `_refuse`, `_block` and `_spend` make their own."""

_MADE_AND_WROTE = CRAFTED | WROTE
"""What a needy agent sees to before its every turn goes to finding building material."""

_REFUSED = ToolOutcome("", "", False, "not tried: the same call already failed this turn")

_MEMORY_FIELDS = (
    "anchor", "haunt", "home", "heading", "target", "visited", "recipes", "ideas", "failed",
    "read", "wrote", "named", "met", "seen", "lines", "journal_day", "diary", "done", "walls",
    "search", "origin", "marks", "company", "stock", "since",
)
"""Memory's fields in the order `__init__` unpacks them and `_end` packs them."""
if _MEMORY_FIELDS != NAMES:  # pragma: no cover - a guard for whoever adds a field
    raise ImportError("OfflineTurn must unpack Memory fields in the order of memory.NAMES")
_MEMORY_NOW = attrgetter(*_MEMORY_FIELDS)
"""The turn's memory fields as one tuple in FIELDS order, gathered in C (`_end`)."""


class OfflineTurn(Talking, Writing, Making, Walking):
    """A MindTurn for one agent and one tick (see services/mind.py).

    The agent's Memory fields are copied onto the turn as plain attributes (the
    turn is the only writer while it runs) and become one new Memory in `_end`.
    This class drives the script, learns from outcomes and decides what a turn is
    for; the mixins do the talking, writing, making and walking.
    """

    __slots__ = (
        "persona", "traits", "p", "tick", "limit", "rng", "mem", "commit_to", "allowed",
        "x", "y", "inv", "count", "refused", "blocked", "spent", "last", "log", "focus",
        "reason", "ended", "_view", "fresh_discovery", "script", "_able", "_day",
        "_units", "_wants", "_beside", "_convert", "keep",
        *_MEMORY_FIELDS,
    )
    """Slots, not a __dict__: a turn has some fifty attributes, more than CPython shares
    the keys of, so a dict per turn would be built and grown entry by entry."""

    def __init__(
        self, persona: Persona, start: TurnStart, memory: Memory,
        commit: Callable[[Memory], None], allowed: frozenset[str] | None = None,
        keep: Any = None,
    ) -> None:
        p = start.perception
        self.persona = persona
        self.traits = persona.traits
        self.p = p
        self.tick = tick = start.tick
        self.limit = max(0, min(start.max_actions, TURN_CAP))
        self.rng = TurnRandom.at(persona.rng_base, tick)
        self.mem = memory
        (self.anchor, self.haunt, self.home, self.heading, self.target, self.visited,
         self.recipes, self.ideas, self.failed, self.read, self.wrote, self.named, self.met,
         self.seen, self.lines, self.journal_day, self.diary, self.done, self.walls,
         self.search, self.origin, self.marks, self.company, self.stock,
         self.since) = memory.values
        self.commit_to = commit
        self.allowed = allowed
        self.keep = keep  # the mind's record of this agent (mind._Agent): its last View
        position = p.position
        self.x = position.x
        self.y = position.y
        self.inv: dict[str, int] = dict(p.inventory)
        self.count = 0
        self.last: ToolCall | None = None
        self.log: list[str] = []
        self.focus = self.reason = ""
        self.ended = False
        self._view: View | None = None
        self.fresh_discovery: tuple[str, str, int] | None = None
        # Empty and shared until something goes in (`_learn`, `_block`, `_spend` make sets).
        self.refused: set[tuple[str, str]] | frozenset = _NONE
        self.spent: set[Pos] | frozenset = _NONE
        # Steps it must not take: walls it walked into, and every wall without a door in
        # view (the perception shows them, as the text's map does).
        self.blocked: set[tuple[int, int, str]] | frozenset = (
            step_blocks(self.walls, p) if p.walls or p.doors
            else set(self.walls) if self.walls else _NONE)
        # Answers asked for several times a turn, worked out once; an outcome that may
        # change them (what it carries, where it stands, what it knows) forgets them.
        self._able: dict[str, bool] | None = None
        # The in-world day: nine turns in ten ask, so it is worked out here and read as
        # `_day`, without a property's frame; a time text read before is one look-up.
        self._day = _DAYS.get(p.time_text) or day_of(p)
        self._units = -1
        self._wants: tuple[str, ...] | None = None
        self._beside: Any = UNASKED
        self._convert: Any = UNASKED
        self.script = self._script()

    # ------------------------------------------------------------------ MindTurn

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        """Learn from the last call's outcome, then drive the script to its next call.

        Every turn runs this two or three times, so absorbing the outcome and driving the
        script are written out here rather than in helpers of their own."""
        call = self.last
        outcome = None
        if call is not None:
            self.last = None
            for each in outcomes:
                if each.call_id == call.id:
                    self._learn(call, each)
                    outcome = each
                    break
        if self.ended:
            return ()
        if self.count >= self.limit:
            self._end("action_limit")
            return ()
        # A fresh script takes the first send(None) as next(); a repeat of a call that
        # already failed (or one not offered) is answered here, with a refusal.
        script, allowed, send = self.script, self.allowed, outcome
        for _ in range(MAX_SKIPS):
            try:
                name, args = script.send(send)
            except StopIteration:
                break
            if (allowed is not None and name not in allowed) or (
                    self.refused and (name, args_key(args)) in self.refused):
                send = _REFUSED
                continue
            self.count = count = self.count + 1
            call = self.last = ToolCall(f"{self.tick}.{count}", name, args)
            self.log.append(name)
            return (call,)
        self._end("done")
        return ()

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        if self.last is not None:
            self._absorb(outcomes)
        if not self.ended:  # most turns ended in `next_calls` already
            self._end(reason or "ended")

    def record(self) -> Mapping[str, Any]:
        # The log is at most TURN_CAP long and no longer changes: handed out as it is.
        return {"mind": "offline", "focus": self.focus, "calls": self.log,
                "ended": self.reason}

    # ------------------------------------------------------------------ driving the script

    def _absorb(self, outcomes: Sequence[ToolOutcome]) -> ToolOutcome | None:
        call = self.last
        self.last = None
        for outcome in outcomes:
            if outcome.call_id == call.id:  # type: ignore[union-attr]
                self._learn(call, outcome)  # type: ignore[arg-type]
                return outcome
        return None

    def _end(self, reason: str) -> None:
        if self.ended:
            return
        self.ended = True
        self.reason = reason
        self.script.close()
        now = _MEMORY_NOW(self)
        if now != self.mem.values:
            self.mem = Memory(now)
            self.commit_to(self.mem)

    # ------------------------------------------------------------------ memory

    def _note(self, text: str) -> None:
        self.diary = capped(self.diary, text[:MAX_TEXT], MAX_DIARY)

    @property
    def view(self) -> View:
        """The View of this turn's cells: the agent's last one again while the perception
        hands the very same cells (a window that has not moved, nothing gathered in it),
        seen from the same spot."""
        view = self._view
        if view is None:
            p, keep = self.p, self.keep
            view = None if keep is None else keep.view
            if view is None or view.cells is not p.cells or view.radius != p.vision_radius or (
                    view.centre != (p.position.x, p.position.y)):
                view = View(p)
                if keep is not None:
                    keep.view = view
            self._view = view
        return view

    # ------------------------------------------------------------------ learning from outcomes

    def _learn(self, call: ToolCall, out: ToolOutcome) -> None:
        name, args, data = call.name, call.arguments, out.data
        # An outcome may change what it carries, where it stands and what it knows.
        self._units, self._wants, self._beside, self._convert = -1, None, UNASKED, UNASKED
        if not out.success:
            if not self.refused:
                self.refused = set()
            self.refused.add((name, args_key(args)))
            if name == "walk":
                edge = (self.x, self.y, str(args.get("direction")))
                self._block(edge)
                if out.reason == FailureReason.WALL_IN_WAY:
                    self.walls = capped(self.walls, edge, MAX_WALLS)
                elif out.reason == FailureReason.WORLD_EDGE and not self.haunt:
                    self.search = ((self.search[0] + 1) % SEARCH_LEGS, 0)  # turn at the edge
            elif name == "gather":
                direction = str(args.get("direction", "down"))
                if out.reason == FailureReason.WALL_IN_WAY:
                    edge = (self.x, self.y, direction)
                    self._block(edge)
                    self.walls = capped(self.walls, edge, MAX_WALLS)
                else:
                    self._spend(self._cell(direction))
            elif name in ("work", "combine", "apply"):
                self._learn_failed_craft(name, args, data)
            elif name == "journey" and self._aimed_at_target(args):
                self._give_up_target()  # a hop toward it failing says nothing of the target
            elif name == "read_sign":  # behind a wall, or gone: not worth another try
                self.read = capped(self.read, self._cell(str(args.get("direction", "down"))),
                                   MAX_SIGNS)
            return
        if name == "walk" or name == "approach":
            position = data.get("position")
            if isinstance(position, (list, tuple)) and len(position) == 2:
                self.x, self.y = int(position[0]), int(position[1])
                stopped = data.get("stopped")
                if stopped and name == "walk" and "wall" in stopped:
                    # It walked into a wall part of the way: remembered like a wall it
                    # could not walk through at all (below), so it goes round next time.
                    edge = (self.x, self.y, str(args.get("direction")))
                    self._block(edge)
                    self.walls = capped(self.walls, edge, MAX_WALLS)
            elif name == "walk":  # no position reported: it went as far as it asked
                dx, dy = DELTA.get(str(args.get("direction")), (0, 0))
                steps = data.get("steps", args.get("steps", 1))
                steps = steps if isinstance(steps, int) else 1
                self.x, self.y = self.x + dx * steps, self.y + dy * steps
        elif name == "gather":
            resource, quantity = data.get("resource"), data.get("quantity", 1)
            if isinstance(resource, str) and isinstance(quantity, int):
                self.inv[resource] = self.inv.get(resource, 0) + quantity
            if data.get("left") == 0:
                self._spend(self._cell(str(args.get("direction", "down"))))
            self.done |= GATHERED
        elif name in ("work", "combine", "apply"):
            self._learn_craft(name, args, data)
        elif name == "build_shelter":
            walls = data.get("walls")
            self.persona.costs.pay_shelter(
                self.inv, len(walls) if isinstance(walls, (list, tuple)) else 4,
                bool(data.get("door", True)))
            self.home = (self.x, self.y)
            if not self.haunt:
                self.anchor = (self.x, self.y)
            self.done |= BUILT
            self._note("built a shelter")
        elif name == "place_wall":
            self.persona.costs.pay_wall(self.inv, data.get("material"))
            self.done |= BUILT
            self._note("raised a wall")
        elif name == "remove_wall":
            for entry in data.get("returned", ()):
                if isinstance(entry, (list, tuple)) and len(entry) == 2:
                    self.inv[str(entry[0])] = self.inv.get(str(entry[0]), 0) + int(entry[1])
        elif name == "write_sign":
            where = self._cell(str(args.get("direction", "down")))
            self.wrote = capped(self.wrote, where, MAX_SIGNS)
            self.read = capped(self.read, where, MAX_SIGNS)
            self.done |= WROTE
            self._note("wrote a sign")
        elif name == "name_place":
            named = (str(args.get("place_name"))[:MAX_TEXT], self.x, self.y)
            self.named = capped(self.named, named, MAX_NAMED)
            self.done |= WROTE
            self._note(f"named a place {named[0]}")
        elif name == "read_sign":
            where = self._cell(str(args.get("direction", "down")))
            self.read = capped(self.read, where, MAX_SIGNS)
            author = data.get("author")
            if isinstance(author, str) and author and author != self.persona.name:
                # Someone else's words: a trace of them, worth following for company; and
                # a landmark someone else has signed is a landmark someone comes back to.
                self.seen = (author[:MAX_TEXT], where[0], where[1], self.tick)
                self._note(f"read a sign by {author[:MAX_TEXT]}")
                text = data.get("text")
                if isinstance(text, str) and words.says_someone_returns(text):
                    self._share_haunt(where, author)
        elif name == "invite":
            self._met(str(args.get("invitee")))
        elif name == "accept_invite":
            self.lines = 0
            if self.p.pending_invitation_from:
                self._met(str(self.p.pending_invitation_from))
        elif name == "speak":
            self.lines = self.lines + 1
            if not self.done & TALKED:
                self._note(f"talked with {', '.join(self.p.in_conversation_with) or 'someone'}")
            self.done |= TALKED
        elif name == "leave_conversation":
            self.lines = 0
        elif name == "append_file" and args.get("path") == "journal.md":
            self.journal_day = self._day
            self.diary = ()
        elif name == "sense_others":
            self._follow_sense(data.get("sensed"))
        elif name == "journey":
            self.focus = "journey"

    def _learn_craft(self, name: str, args: Mapping[str, Any], data: Mapping[str, Any]) -> None:
        key = crafts.key_of_call(name, args)
        output, quantity = data.get("output"), data.get("quantity", 1)
        if key is None:
            return
        for item in crafts.inputs_of(key):  # used up, whatever the world says it made
            self.inv[item] = max(0, self.inv.get(item, 0) - 1)
        if not isinstance(output, str):
            return
        quantity = quantity if isinstance(quantity, int) else 1
        self.inv[output] = self.inv.get(output, 0) + quantity
        self.done |= CRAFTED
        known = self.recipes
        if all(k != key for k, _ in known):
            self.recipes = capped(known, (key, output), MAX_RECIPES)
            self.ideas = tuple(i for i in self.ideas if i != key)
            self._able = None
            self._note(f"learned to make {output.replace('_', ' ')}")
            self.fresh_discovery = (key, output, quantity)

    def _learn_failed_craft(self, name: str, args: Mapping[str, Any],
                            data: Mapping[str, Any]) -> None:
        """A wrong guess is never guessed again; what the hints point at becomes an idea."""
        hints = data.get("hints")
        key = crafts.key_of_call(name, args)
        if key is None or not isinstance(hints, (list, tuple)) or not hints:
            return  # no hints: something was missing, not a wrong idea
        failed = capped(self.failed, key, MAX_FAILED)
        ideas = tuple(i for i in self.ideas if i != key)
        known = {k for k, _ in self.recipes}
        if name == "work":
            # The hints name every technique that works on this by hand (or say none does),
            # so guessing more techniques on it is pointless: only the hinted ones are tried.
            item = str(args.get("item"))
            failed = capped(failed, crafts.work_key(item, "*"), MAX_FAILED)
            for idea in crafts.ideas_from_hints(item, hints):
                if idea not in failed and idea not in known:
                    ideas = capped(ideas, idea, MAX_IDEAS)
        for item in crafts.lonely_items(hints):
            failed = capped(failed, crafts.combine_key([item, "*"]), MAX_FAILED)
        self.failed = failed
        self.ideas = ideas
        self._able = None

    def _met(self, other: str) -> None:
        met = tuple(m for m in self.met if m[0] != other) + ((other[:MAX_TEXT], self.tick),)
        self.met = met[-MAX_MET:]

    def _follow_sense(self, sensed: Any) -> None:
        """Turn toward the nearest agent sensed (sense_others gives a direction and a distance)."""
        if not isinstance(sensed, (list, tuple)):
            return
        order = {"nearby": 0, "far": 1, "very far": 2}
        best = None
        for entry in sensed:
            if not isinstance(entry, Mapping):
                continue
            direction, distance = entry.get("direction"), entry.get("distance")
            if direction in SIDES and distance in order:
                rank = (order[distance], str(entry.get("name")))
                if best is None or rank < best[0]:
                    best = (rank, direction)
        if best is not None and best[0][0] < 2:
            self.heading = best[1]

    def _aimed_at_target(self, args: Mapping[str, Any]) -> bool:
        target = self.target
        if target is None:
            return False
        if args.get("place_name") == target[0]:
            return True
        destination = args.get("destination")
        return bool(destination) and tuple(destination) == (target[1], target[2])

    def _give_up_target(self) -> None:
        if self.target is not None:
            self.visited = capped(self.visited, self.target[0], MAX_VISITED)
            self.target = None

    # ------------------------------------------------------------------ small helpers

    def _block(self, edge: tuple[int, int, str]) -> None:
        if not self.blocked:
            self.blocked = set()
        self.blocked.add(edge)

    def _spend(self, cell: Pos) -> None:
        if not self.spent:
            self.spent = set()
        self.spent.add(cell)

    @property
    def day(self) -> int:
        """The in-world day (basics.day_of), worked out as the turn begins (`_day`)."""
        return self._day

    def _cell(self, direction: str) -> Pos:
        dx, dy = DELTA.get(direction, (0, 0))
        return (self.x + dx, self.y + dy)

    def _refused(self, name: str, args: Mapping[str, Any]) -> bool:
        """Whether this very call already failed this turn."""
        return bool(self.refused) and (name, args_key(args)) in self.refused

    def _has_files(self) -> bool:
        return self.allowed is None or "append_file" in self.allowed

    def _dist(self, pos: Pos) -> int:
        return abs(pos[0] - self.x) + abs(pos[1] - self.y)

    # ------------------------------------------------------------------ the script

    def _script(self) -> Script:
        p = self.p
        night = p.period == "night"  # Perception.is_night, without the property's frame
        # Looking around (here, not in a function of its own: every turn does it): where it
        # started, who it saw, the landmarks in sight (which need not come after who it saw:
        # neither reads what the other writes, and only the landmarks draw at random).
        if self.origin is None:
            self.origin = self.anchor = (self.x, self.y)
        if p.landmarks:
            self._look_at_landmarks(night)
        if p.agents:
            nearest = p.agents[0]
            for seen in p.agents:
                if seen.distance < nearest.distance:
                    nearest = seen
            self.seen = (str(nearest.name)[:MAX_TEXT], nearest.position.x, nearest.position.y,
                         self.tick)
        if p.pending_invitation_from is not None:
            self.focus = "invitation"
            inviter = str(p.pending_invitation_from)
            if (yield from self._answer(inviter)):
                if night:
                    yield from self._leave(inviter, night=True)
                else:
                    yield self._speech(inviter, first=True)
                    return
        elif p.in_conversation_with:
            self.focus = "conversation"
            other = str(p.in_conversation_with[0])
            if night or self.lines >= self.persona.talk_lines:
                yield from self._leave(other, night=night)
            else:
                yield self._speech(other, first=self.lines == 0)
                return
        elif self.lines:
            self.lines = 0  # the conversation ended without us
        if p.on_journey:
            # Hands and feet are busy; eyes and voice are not.
            self.focus = "travelling"
            if not night and p.agents and not p.in_conversation_with:
                yield from self._socialise()
            return
        if night:
            self.focus = "night"
            yield from self._night()
            return
        # (Guards that skip a script which would only say no: most turns, nobody is in view.)
        if p.agents and not p.in_conversation_with and (yield from self._socialise()):
            return
        yield from self._daytime()

    def _look_at_landmarks(self, night: bool) -> None:
        """Note the landmarks on the horizon, and perhaps pick one worth walking to."""
        p = self.p
        self._remember_landmarks()
        if self.target is None and not night:
            # A trip to a landmark on the horizon it has not been to; explorers go more often.
            if self.rng.chance(0.1 + 0.4 * self.traits.explorer):
                visited = self.visited
                best = None
                for mark in p.landmarks:
                    if mark.name not in visited and (best is None or mark.distance < best.distance):
                        best = mark
                if best is not None:
                    self.target = (best.name[:MAX_TEXT], best.position.x, best.position.y)
                    self.since = self.tick

    def _remember_landmarks(self) -> None:
        """Note landmarks on the horizon; the one nearest where it woke becomes its haunt."""
        known = self.marks
        # A set, not a scan per landmark: a crowded horizon holds dozens of landmarks.
        names = {k[0] for k in known}
        fresh = [m for m in self.p.landmarks if m.name not in names]
        if not fresh:
            return
        for mark in fresh:
            known = capped(known, (mark.name[:MAX_TEXT], mark.position.x, mark.position.y),
                           MAX_MARKS)
        self.marks = known
        if self.company:
            return  # its haunt is where someone else comes back to: it stays
        ox, oy = self.origin or (self.x, self.y)
        name, x, y = min(known, key=lambda k: (abs(k[1] - ox) + abs(k[2] - oy), k[0]))
        if name != self.haunt:
            self.haunt = name
            self.anchor = (x, y)
            self._note(f"made {name} my own place")
            if name not in self.visited:
                self.target = (name, x, y)
                self.since = self.tick

    def _look_for_company(self) -> None:
        """Days gone by and nobody talked with: now and then it goes back to a landmark it
        knows besides its haunt (a different one each day), where a sign may since say who
        comes back there in the evenings (`_share_haunt`)."""
        marks, haunt = self.marks, self.haunt
        if len(marks) < 2 or not haunt or not self.rng.chance(LONELY_TRIP):
            return
        others = [m for m in marks if m[0] != haunt]
        if others:
            self.target = others[self._day % len(others)]
            self.since = self.tick
            self._note(f"went looking for company at {self.target[0]}")

    def _share_haunt(self, sign: Pos, author: str) -> None:
        """Someone else's sign says they come back to this landmark: make it its haunt too."""
        for name, x, y in self.marks:
            if abs(x - sign[0]) + abs(y - sign[1]) <= SETTLE_RADIUS:
                if name != self.haunt:
                    self.haunt = name
                    self.anchor = (x, y)
                    self._note(f"{author} comes back to {name}; so will I")
                self.company = author[:MAX_TEXT]
                return

    # ------------------------------------------------------------------ night

    def _night(self) -> Script:
        home = self.home
        if home is not None and 0 < self._dist(home) <= NIGHT_WALK_HOME:
            # Home is near: go there (a journey; it sleeps when it gets there).
            if (yield from self._move(home, arrive=0)):
                return
        day = self._day
        if (self._has_files() and self.journal_day < day
                and self.rng.chance(self.persona.journal_chance)):
            text = words.journal_entry(self.persona.name, day, self.diary,
                                       self.persona.dominant, self.rng)
            yield "append_file", {"path": "journal.md", "text": text}
        yield "sleep", {}

    # ------------------------------------------------------------------ day

    def _daytime(self) -> Script:
        """One thing this turn (see the module docstring): what is at hand, the way home at
        dusk, or what its traits and needs pick: making, roaming or writing."""
        traits, rng, p = self.traits, self.rng, self.p
        if (p.landmarks or p.objects or (self.met and traits.social >= 0.5)) and (
                yield from self._here()):
            return
        if p.inside_structure and (yield from self._leave_shelter_if_trapped()):
            return
        if p.period == "evening" and self.haunt:
            # Dusk: back to the landmark it haunts, where others who haunt it gather too.
            place = self.anchor
            if self._dist(place) > 1:
                self.focus = "homeward"
                name = self.haunt if self.home is None or place != self.home else ""
                if (yield from self._move(place, place=name, hurry=True)):
                    return
            yield from self._make(only_here=True)
            return
        if not self.done & TALKED and self._day >= LONELY_DAY and self.target is None:
            self._look_for_company()
        if self._day >= FETCH_DAY and self._needy():
            # From its second day (the first is for what lies at hand; looking over every
            # cell in view on every turn cost a tenth of a turn), an agent with nothing
            # to build with keeps an eye out for material and, on most turns, goes for it.
            self._note_stock()
            # Not every turn: there is still its first handful to gather, things to make of
            # it and words to write (an expedition that took whole days left those undone).
            # With those done, the roof is what is left: every turn goes to it (a roam or
            # two a day in another direction kept some from ever getting to wood).
            # (Nothing gathered at all by now: there is nothing here to gather, so it goes.)
            done = self.done
            if (done & _MADE_AND_WROTE == _MADE_AND_WROTE or not done & GATHERED
                    or self.rng.chance(0.75 if self.stock is not None else 0.5)) and (
                    yield from self._fetch()):
                return
        has_home = self.home is not None
        make = (0.35 + 0.65 * traits.maker) * (0.4 if has_home else 1.0)
        if not has_home and self._day >= 2:
            make *= 2  # days go by without a roof: time to see to one
        elif not self.haunt and (has_home or self._shelter_units() >= SHELTER_UNITS):
            make *= 0.4  # enough in hand; finding its place matters more now
        at_hand = self._at_hand()
        make += at_hand
        roam = 0.25 + 0.75 * traits.explorer
        write = 0.1 + 0.5 * traits.writer
        if not self.done & WROTE and self._day >= 2:
            write += 0.5  # a day gone by and not a word left anywhere: time for a first
        if self.target is not None or self._chasing() is not None:
            roam += 0.5
        elif not self.haunt:
            roam += 1.0  # still looking for a landmark to make its own
        # A shelter that can go up right here always does: it is what the days lead to.
        pick = -1.0 if at_hand >= 3 else rng.random() * (make + roam + write)
        if pick < make:
            self.focus = "make"
            if not (yield from self._make()):
                # Nothing to work with here: go on, past its usual range, and look for it.
                yield from self._move(free=True, most=self.persona.max_steps)
        elif pick < make + roam:
            self.focus = "roam"
            if not (yield from self._move(most=self.persona.max_steps)):
                yield from self._make(only_here=True)
        else:
            self.focus = "write"
            if not (yield from self._write_here()):
                yield from self._make(only_here=True)
