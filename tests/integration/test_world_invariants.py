"""World invariants under random play: a hypothesis state machine drives the ActionEngine.

A small hand-painted world (16x16: forest, stone, sand, grass, hills, a pond with an
unreachable island, water and coast along the edges) holds four agents who carry
different amounts (Ash and Cedar enough to build and craft, Birch too little for a
whole shelter, Dusk nothing). Each step is one of:

- `act` / `tool_call`: a random agent (or a stranger's name) tries one of the 27
  actions with plausible or implausible arguments, through `execute_now` or through
  the registry's tool call with the same arguments (tests/tool_calls.py);
- `malformed_tool_call`: a tool call that cannot become an action (unknown tool,
  arguments that are no mapping, an extra or missing key, a value of the wrong type),
  which must come back as a failed result with a message, never raise;
- `walk`, `act_with_purpose`: actions by someone they could make sense for (answer an
  invitation, speak while talking, take a pile beside you, journey somewhere far,
  give what you carry, take down a wall you stand by, ...), so that the interesting
  states are reached, not only refusals;
- `world_moves_on`: a tick (journeys advance, the journal is committed), a jump in
  time, one journey step, lapsed invitations swept, a sleeper woken, a wall raised
  across a journey's next step.

After every step these must hold (each an @invariant below, or checked inside the
rule when it needs the state from before the step):

1. every agent stands on an in-bounds, passable cell;
2. resources are conserved: per item type, what agents carry + what lies on the
   ground + what is built into walls and doors changes only by gathering and
   crafting, as the events of successful results report; unique items appear and
   disappear only through crafting, as its recipe says;
3. no unique item id appears twice;
4. an agent is in at most one active conversation, and nobody is in a private
   conversation without an invitation (the service's own check, and ours built
   from the events, which must also agree on who is talking with whom);
5. walls agree from both sides, doors stand only in walls, the cell view agrees
   (checked on the cells just changed, a rotating few walled cells and a rotating
   cell of open ground; doors-in-walls over the whole map);
6. every journey's remaining path is walkable from where the agent stands, except
   across walls raised after it set out (which must stop it: checked at each step),
   and the agent stands on the journey's current cell;
7. a failed action changed nothing: world, agents, talk, gathering, and the change
   journal, which notes every write (so re-noting a key already noted counts too);
8. no action failed through an unexpected exception (the engine's catch-all logs
   those as bugs and reports "could not be done just now").

One test runs the machine with enough examples for at least MIN_STEPS steps and
asserts that they ran and that every action type was tried. A failure prints the
shrunk steps and a @reproduce_failure blob.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import typing
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from config import load_config
from core.actions import ACTION_TYPES, ActionResult
from core.agent import Agent, Inventory
from core.constants import MAX_PLACE_NAME_LENGTH, MAX_SIGN_LENGTH
from core.events import (
    ConversationEndedEvent,
    ConversationJoinedEvent,
    ConversationLeftEvent,
    ConversationStartedEvent,
    DoorPlacedEvent,
    InvitationAcceptedEvent,
    ItemCraftedEvent,
    JourneyStartedEvent,
    ResourceGatheredEvent,
    WallPlacedEvent,
    WallRemovedEvent,
)
from core.landmarks import Landmark
from core.objects import Item, PlacedItem
from core.terrain import TERRAIN_CODE, Terrain
from core.types import CARDINALS, AgentName, Direction, Position
from core.world import WorldState
from services.agent_service import AgentService
from services.changes import ChangeSet
from services.crafting_request import TECHNIQUES
from services.pathfinding import is_walkable
from services.simulation import Simulation, build_simulation, clock_of
from services.world_service import TerrainRules, WorldService
from tests.tool_calls import call_tool

MIN_STEPS = 10_000
EXAMPLES = 240
STEPS_PER_EXAMPLE = 50

STATS: Counter[str] = Counter()
"""Module-wide tallies: "steps", and per action "<name> ok" / "<name> failed"."""

CONFIG = load_config(None)
RULES = TerrainRules.from_traits(CONFIG.terrain.terrains)

# --------------------------------------------------------------------------- the world

LEGEND = {
    "T": Terrain.FOREST, "#": Terrain.STONE, ":": Terrain.SAND, ".": Terrain.GRASS,
    "=": Terrain.WATER, "~": Terrain.COAST, "^": Terrain.HILL,
}
MAP = (
    "TTTTT...##..~===",
    "TTTT....##..~===",
    "TTT.....#...~~==",
    "TT..........::~=",
    "T....====....:~~",
    ".....=..=.......",  # (6, 5) and (7, 5): an island nobody can reach
    ".....====...^^..",
    "..............^.",
    "::....TT....##..",
    ":::...TT....##..",
    "~~:.........#...",
    "=~~..^^.....TTT.",
    "==~..^......TTT.",
    "==~~........TT..",
    "===~::..##......",
    "====~::.##....TT",
)
SIZE = 16
assert len(MAP) == SIZE and all(len(row) == SIZE for row in MAP)
PASSABLE_CELLS = [Position(x, y) for y, row in enumerate(MAP) for x, c in enumerate(row)
                  if CONFIG.terrain.terrains[LEGEND[c]].passable]

NAMES = ("Ash", "Birch", "Cedar", "Dusk")
STARTS = {
    "Ash": Position(10, 5), "Birch": Position(11, 5), "Cedar": Position(11, 7),
    "Dusk": Position(9, 8),
}
STRANGERS = ("Nobody", "ash", "ASH", " Birch ", "", "Cedar\x00", "Zephyr-9")
LANDMARKS = (
    Landmark("spring", "the Old Spring", "Cold water wells up here.", Position(2, 7)),
    Landmark("rock", "the Lonely Rock", "A rock on an island.", Position(6, 5)),
)
STARTING_STACKS = {
    # Ash and Cedar can build and craft a good while; Birch runs short halfway through
    # a shelter; Dusk starts with nothing but a bowl.
    "Ash": {"plank": 8, "wood": 6, "stone": 4, "clay": 2, "grass": 2, "stick": 2, "cord": 2,
            "cobblestone": 2, "fiber": 2, "flat_stone": 1, "grit": 1, "clay_vessel": 1},
    "Birch": {"plank": 3, "wood": 2, "stone": 1, "clay": 1},
    "Cedar": {"plank": 5, "wood": 2, "stick": 2, "cord": 1, "fiber": 2, "cobblestone": 1,
              "torch": 1},
    "Dusk": {},
}


def _starting_agent(name: str) -> Agent:
    items = [Item.unique("carved_bowl", f"bowl-{name}", ("wooden", "container"))]
    if name in ("Ash", "Cedar"):
        items.append(Item.unique("stone_axe", f"axe-{name}", ("tool", "cutting")))
    return Agent(
        name=AgentName(name), model_id="test-model", personality="curious",
        position=STARTS[name], inventory=Inventory(dict(STARTING_STACKS[name]), tuple(items)),
    )


def make_simulation(seed: int = 7) -> Simulation:
    codes = np.array([[TERRAIN_CODE[LEGEND[c]] for c in row] for row in MAP], dtype=np.uint8)
    world = WorldService(
        WorldState(SIZE, SIZE, seed), codes, RULES, clock=clock_of(CONFIG), landmarks=LANDMARKS
    )
    agents = AgentService(world, [_starting_agent(n) for n in NAMES])
    world.changes = ChangeSet()
    return build_simulation(world, CONFIG, agents, seed=seed)


# --------------------------------------------------------------------------- arguments

RECIPES = CONFIG.recipes.recipes


def _consumed(recipe) -> tuple[str, ...]:
    """What a recipe uses up: apply keeps its tool."""
    return tuple(recipe.inputs[1:] if recipe.action == "apply" else recipe.inputs)


RECIPE_INDEX = {(r.action, r.name, tuple(sorted(_consumed(r)))): r for r in RECIPES}

ITEM_NAMES = sorted(
    {n for r in RECIPES for n in (r.name, *r.inputs)} | {"wood", "stone", "clay", "grass"}
)
ITEMS = st.sampled_from(
    [*ITEM_NAMES, "unobtainium", "Plank", " plank ", "stone axe", "", "x" * 49]
)
DIRECTIONS = st.sampled_from(["north", "east", "south", "west", "down"])
QUANTITIES = st.integers(1, 5)
WHO = st.sampled_from([*NAMES, *STRANGERS])
TECHNIQUE_WORDS = st.sampled_from([*TECHNIQUES, "smash", "", "SPLIT"])
PRIVACIES = st.sampled_from(["public", "private", "PRIVATE", " Public ", "secret", ""])
PLACE_NAMES = st.sampled_from([
    "the Old Spring", "the old  spring", "the Lonely Rock", "Home", "home ", "Mill",
    "Nowhere Special", "bad\x1b[31mname", "\x00\x01", "   ", "n" * MAX_PLACE_NAME_LENGTH,
    "n" * (MAX_PLACE_NAME_LENGTH + 1), "\u0958" * 40,
])
TEXTS = st.sampled_from([
    "hello", "Gone fishing.", "line one\nline two", "tab\there", "a\x00b\x07c",
    "\x1b[31mred\x1b[0m", "\u202eevil\u202c", "\x00\x01\x02", " ", "",
    "s" * MAX_SIGN_LENGTH, "s" * (MAX_SIGN_LENGTH + 1), "\u0958" * 300, "🔥 warm here",
])
TARGETS = st.sampled_from([
    *NAMES, "Nobody", "forest", "stone", "water", "sand", "hill", "sign", "placed_item",
    "the Old Spring", "Old Spring", "the Lonely Rock", "Home", "", "  ",
])


def _dict(required: dict[str, Any], optional: dict[str, Any] | None = None):
    return st.fixed_dictionaries(required, optional=optional or {})


_COMBINE = st.one_of(
    st.sampled_from([list(r.inputs) for r in RECIPES if r.action == "combine"]),
    st.lists(ITEMS, min_size=0, max_size=3),
)
_WORK = st.one_of(
    st.sampled_from([(r.inputs[0], r.technique) for r in RECIPES if r.action == "work"]),
    st.tuples(ITEMS, TECHNIQUE_WORDS),
)
_APPLY = st.one_of(
    st.sampled_from([tuple(r.inputs) for r in RECIPES if r.action == "apply"]),
    st.tuples(ITEMS, ITEMS),
)
_COORD = st.integers(-2, SIZE + 1)

BUILDERS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "walk": _dict({"direction": DIRECTIONS}),
    "approach": _dict({"target": TARGETS}),
    "journey": st.one_of(
        _dict({"destination": _dict({"x": _COORD, "y": _COORD})}),
        _dict({"place_name": PLACE_NAMES}),
    ),
    "examine": _dict({}, {"direction": DIRECTIONS}),
    "sense_others": st.just({}),
    "take": _dict({}, {"direction": DIRECTIONS, "item": ITEMS}),
    "drop": _dict({"item": ITEMS}, {"quantity": QUANTITIES}),
    "give": _dict({"recipient": WHO, "item": ITEMS}, {"quantity": QUANTITIES}),
    "gather": _dict({}, {"direction": DIRECTIONS}),
    "combine": _dict({"items": _COMBINE}),
    "work": _WORK.map(lambda pair: {"item": pair[0], "technique": pair[1]}),
    "apply": _APPLY.map(lambda pair: {"tool": pair[0], "target": pair[1]}),
    "build_shelter": st.just({}),
    "place_wall": _dict({"direction": DIRECTIONS}),
    "place_door": _dict({"direction": DIRECTIONS}),
    "place_item": _dict({"item": ITEMS}, {"direction": DIRECTIONS}),
    "remove_wall": _dict({"direction": DIRECTIONS}),
    "write_sign": _dict({"text": TEXTS}, {"direction": DIRECTIONS}),
    "read_sign": _dict({}, {"direction": DIRECTIONS}),
    "name_place": _dict({"place_name": PLACE_NAMES}),
    "sleep": st.just({}),
    "speak": _dict({"message": TEXTS}),
    "invite": _dict({"invitee": WHO}, {"privacy": PRIVACIES}),
    "accept_invite": st.just({}),
    "decline_invite": st.just({}),
    "join_conversation": _dict({"participant": WHO}),
    "leave_conversation": st.just({}),
}
"""Arguments for each action, in tool-call form (plain JSON values)."""

# Actions that make things happen get drawn more often than the rest.
_OFTEN = ("walk", "gather", "place_wall", "drop", "take", "give", "invite", "accept_invite",
          "work", "combine", "journey", "remove_wall", "place_door", "speak")
CALLS = st.one_of([st.tuples(st.just(name), BUILDERS[name]) for name in (*ACTION_TYPES, *_OFTEN)])
ACTORS = st.sampled_from([*NAMES, *NAMES, *NAMES, "Nobody", " Ash "])
PURPOSEFUL = ("accept_invite", "accept_invite", "decline_invite", "speak", "leave_conversation",
              "join_conversation", "invite", "invite", "give", "give", "drop", "place_item",
              "take", "read_sign", "remove_wall", "remove_wall", "place_door", "journey",
              "journey", "build_shelter", "craft", "craft")
WORLD_EVENTS = st.one_of(
    st.just(("tick", None)),
    st.tuples(st.just("advance journey"), st.sampled_from(NAMES)),
    st.tuples(st.just("pass time"), st.integers(1, 30)),
    st.just(("expire invitations", None)),
    st.tuples(st.just("wake"), st.sampled_from(NAMES)),
    st.just(("flush journal", None)),
    st.tuples(st.just("wall across a journey"), st.integers(0, 3)),
)


def _action_kwargs(args: dict[str, Any]) -> dict[str, Any]:
    """Tool-call arguments as an action's constructor takes them."""
    out = dict(args)
    if isinstance(out.get("destination"), dict):
        out["destination"] = Position(out["destination"]["x"], out["destination"]["y"])
    return out


_WRONG_TYPES = (3, 2.5, True, [1, [2]], {"a": 1})
"""Values no non-numeric field of an action accepts (not None: optional fields take it)."""
_NOT_NUMBERS = ("3", 2.5, True, [1])
"""Values a whole-number field does not accept."""


@st.composite
def malformed_calls(draw) -> tuple[Any, Any]:
    """A tool call that cannot become an action: (tool, arguments)."""
    tool = draw(st.sampled_from(sorted(ACTION_TYPES)))
    fields = {f.name: f for f in dataclasses.fields(ACTION_TYPES[tool])}
    required = [n for n, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    kinds = ["unknown tool", "not a mapping", "extra key"]
    if fields:
        kinds.append("wrong type")
    if required:
        kinds.append("missing key")
    kind = draw(st.sampled_from(kinds))
    if kind == "unknown tool":
        return draw(st.sampled_from(["fly", "Walk", " walk", "", None, 7, ["walk"]])), {}
    if kind == "not a mapping":
        return tool, draw(st.sampled_from(["north", ["north"], 3, ("a", "b"), b"{}"]))
    args = dict(draw(BUILDERS[tool]))  # a copy: st.just({}) hands out one dict
    if kind == "extra key":
        args[draw(st.sampled_from(["colour", "Direction", "", "speed"]))] = "x"
    elif kind == "wrong type":
        field = draw(st.sampled_from(sorted(fields)))
        numeric = typing.get_type_hints(ACTION_TYPES[tool])[field] is int
        args[field] = draw(st.sampled_from(_NOT_NUMBERS if numeric else _WRONG_TYPES))
    else:
        for name in required:
            args.pop(name, None)
    return tool, args


# --------------------------------------------------------------------------- helpers


def _edge_key(pos: Position, d: Direction) -> tuple[int, int, str]:
    """The world's key for the edge on side `d` of `pos`: (x, y, "e" or "s")."""
    if d is Direction.EAST:
        return (pos.x, pos.y, "e")
    if d is Direction.WEST:
        return (pos.x - 1, pos.y, "e")
    if d is Direction.SOUTH:
        return (pos.x, pos.y, "s")
    return (pos.x, pos.y - 1, "s")


def _frozen(value: Any) -> Any:
    if isinstance(value, set):
        return frozenset(value)
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def _noting(base: type, methods: tuple[str, ...]) -> type:
    """A set or list type that notes each call that changes it in `self.writes`."""

    def wrap(name: str) -> Callable[..., Any]:
        original = getattr(base, name)

        def call(self, *args: Any) -> Any:
            self.writes.append(f"{self.field}.{name}{args!r}")
            return original(self, *args)

        return call

    return type(f"Noting{base.__name__.title()}", (base,), {m: wrap(m) for m in methods})


_NotingSet = _noting(set, ("add", "update", "discard", "remove", "pop", "clear", "__ior__",
                           "difference_update", "intersection_update",
                           "symmetric_difference_update", "__isub__", "__iand__", "__ixor__"))
_NotingList = _noting(list, ("append", "extend", "insert", "__setitem__", "__delitem__", "pop",
                             "remove", "clear", "__iadd__", "sort", "reverse"))


class NotingJournal(ChangeSet):
    """A ChangeSet that notes every write, so "a failed action changed nothing" covers
    the journal even when the write was a key already noted (which a before/after
    comparison cannot see)."""

    def __init__(self) -> None:
        super().__init__()
        object.__setattr__(self, "writes", [])
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind = _NotingSet if isinstance(value, set) else (
                _NotingList if isinstance(value, list) else None)
            if kind is not None:
                noted = kind(value)
                noted.writes, noted.field = self.writes, f.name
                object.__setattr__(self, f.name, noted)

    def __setattr__(self, name: str, value: Any) -> None:
        if "writes" in self.__dict__:
            self.writes.append(f"{name} = {value!r}")
        object.__setattr__(self, name, value)


class _ErrorLog(logging.Handler):
    """Collects what the engine's catch-all logs: each one is a bug reported as a failure."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


# --------------------------------------------------------------------------- the machine


class WorldMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.sim = make_simulation()
        self.world = self.sim.world
        self.agents = self.sim.agents
        self.conversations = self.sim.conversations
        self.engine = self.sim.engine
        self.world.changes = NotingJournal()
        self.loop = asyncio.new_event_loop()
        self.errors = _ErrorLog()
        logging.getLogger("hearth.actions").addHandler(self.errors)
        self.expected = self._totals()
        """Item type -> how many exist, moved on by gathering and crafting events."""
        self.walls_since: dict[str, set[tuple[int, int, str]]] = {}
        """Per journeying agent: edges walled after its journey began (they may stop it)."""
        self.members: dict[str, set[str]] = {}
        """Our own account of each active conversation's participants, from the events."""
        self.invited: set[tuple[str, str]] = set()
        """(conversation, agent) pairs admitted by invitation (or by starting it)."""
        self.privacy: dict[str, str] = {}
        self.steps = 0
        self.touched_cells: set[Position] = set()
        """Cells whose edges the last steps changed: the wall check looks at them first."""

    def teardown(self) -> None:
        logging.getLogger("hearth.actions").removeHandler(self.errors)
        self.loop.close()

    # ------------------------------------------------------------------ counting

    def _totals(self) -> Counter[str]:
        totals: Counter[str] = Counter()
        for agent in self.agents.get_all_agents():
            totals.update(agent.inventory.stacks)
            totals.update(item.item_type for item in agent.inventory.items)
        for obj in self.world.all_objects():
            if isinstance(obj, PlacedItem):
                totals[obj.label] += obj.quantity if obj.resource is not None else 1
        totals.update(self.world.materials_in_walls())
        return +totals

    def _unique_items(self) -> list[tuple[str, str, str]]:
        """(id, type, where) for every unique item, in inventories and on the ground."""
        found = [
            (item.id, item.item_type, agent.name)
            for agent in self.agents.get_all_agents() for item in agent.inventory.items
        ]
        found += [
            (obj.item.id, obj.item.item_type, f"ground at ({obj.position.x}, {obj.position.y})")
            for obj in self.world.all_objects()
            if isinstance(obj, PlacedItem) and obj.item is not None
        ]
        return found

    def _state(self) -> dict[str, Any]:
        """Everything an action could change, in comparable form (the conversation
        service's own tables included: its public queries do not show ended talks)."""
        w, c = self.world, self.conversations
        journal = {f.name: _frozen(getattr(w.changes, f.name))
                   for f in dataclasses.fields(w.changes)}
        return {
            "world state": w.state,
            "terrain": w.codes.tobytes() + w.passable.tobytes(),
            "walls": w.wall_east.tobytes() + w.wall_south.tobytes(),
            "doors": w.door_east.tobytes() + w.door_south.tobytes(),
            "wall materials": _frozen(w.edge_materials),
            "objects": {o.id: o for o in w.all_objects()},
            "objects by cell": {p: tuple(o.id for o in w.objects_at(p))
                                for p in {o.position for o in w.all_objects()}},
            "places": {p.key: p for p in w.all_places()},
            "structures": {s.id: s for s in w.all_structures()},
            "agents": tuple(self.agents.get_all_agents()),
            "spent cells": dict(self.sim.gathering.spent_cells()),
            "gathering dirty": frozenset(self.sim.gathering.dirty),
            "conversations": dict(c._conversations),
            "talking": dict(c._active),
            "pending invitations": dict(c._pending),
            "turns": {k: tuple(v) for k, v in c._turns.items()},
            "admissions": (dict(c._admitted), dict(c._seen_from), dict(c._last_spoke)),
            "change journal": journal,
        }

    # ------------------------------------------------------------------ acting

    def _step(self) -> None:
        STATS["steps"] += 1
        self.steps += 1

    def _perform(self, label: str, actor: str, run: Callable[[], ActionResult]) -> ActionResult:
        """Run one action and check what only the before and after can tell."""
        before = self._state()
        before_items = {i: t for i, t, _ in self._unique_items()}
        logged = len(self.errors.records)
        journal = self.world.changes
        wrote = len(journal.writes)
        result = run()
        assert isinstance(result, ActionResult), f"{label} by {actor!r} returned {result!r}"
        new_errors = self.errors.records[logged:]
        assert not new_errors, (
            f"invariant 8 (no internal errors): {label} by {actor!r} hit an unexpected "
            f"exception, reported as {result.message!r}: "
            + "; ".join(f"{r.exc_info[1]!r}" for r in new_errors if r.exc_info)
        )
        STATS[f"{label} {'ok' if result.success else 'failed'}"] += 1
        after = self._state()
        if not result.success:
            changed = [key for key in before if before[key] != after[key]]
            assert not changed, (
                f"invariant 7 (a failure changes nothing): {label} by {actor!r} failed with "
                f"{result.message!r} but changed: {', '.join(changed)}"
            )
            assert len(journal.writes) == wrote, (
                f"invariant 7 (a failure changes nothing): {label} by {actor!r} failed with "
                f"{result.message!r} but wrote to the change journal: "
                + "; ".join(journal.writes[wrote:])
            )
            assert not result.events, f"{label} failed but reported events {result.events}"
            return result
        self._check_unique_items(label, actor, result, before_items)
        self._absorb(result)
        return result

    def _check_unique_items(
        self, label: str, actor: str, result: ActionResult, before: dict[str, str]
    ) -> None:
        after = {i: t for i, t, _ in self._unique_items()}
        gone = Counter(before[i] for i in set(before) - set(after))
        made = Counter(after[i] for i in set(after) - set(before))
        retyped = [i for i in set(before) & set(after) if before[i] != after[i]]
        may_go: Counter[str] = Counter()
        must_make: Counter[str] = Counter()
        for event in result.events:
            if isinstance(event, ItemCraftedEvent):
                may_go.update(event.inputs)
                recipe = RECIPE_INDEX.get((event.method, event.output, tuple(sorted(event.inputs))))
                if recipe is not None and not recipe.output_stackable:
                    must_make[event.output] += event.quantity
        assert not retyped and gone <= may_go and made == must_make, (
            f"invariant 2 (unique items): {label} by {actor!r} ({result.message!r}) made "
            f"{dict(made)} and used up {dict(gone)} unique items, changed the type of "
            f"{retyped}; its events allow making {dict(must_make)} and using up at most "
            f"{dict(may_go)}"
        )

    def _absorb(self, result: ActionResult) -> None:
        """Move the expected totals and our conversation account on by the events."""
        accepted = {(e.conversation_id, e.agent) for e in result.events
                    if isinstance(e, InvitationAcceptedEvent)}
        for event in result.events:
            if isinstance(event, ResourceGatheredEvent):
                assert event.quantity > 0, f"gathered a non-positive amount: {event}"
                self.expected[event.resource] += event.quantity
            elif isinstance(event, ItemCraftedEvent):
                key = (event.method, event.output, tuple(sorted(event.inputs)))
                recipe = RECIPE_INDEX.get(key)
                assert recipe is not None, f"{event} follows no recipe in recipes.yaml"
                assert event.quantity == recipe.output_quantity, (
                    f"{event} made {event.quantity}, the recipe makes {recipe.output_quantity}"
                )
                self.expected.subtract(event.inputs)
                self.expected[event.output] += event.quantity
            elif isinstance(event, JourneyStartedEvent):
                self.walls_since[event.agent] = set()
            elif isinstance(event, WallPlacedEvent):
                key = _edge_key(event.position, event.direction)
                for edges in self.walls_since.values():
                    edges.add(key)
                self.touched_cells.add(event.position)
            elif isinstance(event, WallRemovedEvent | DoorPlacedEvent):
                self.touched_cells.add(event.position)
            elif isinstance(event, ConversationStartedEvent):
                self.members[event.conversation_id] = set(event.participants)
                self.privacy[event.conversation_id] = str(event.privacy)
                self.invited.update((event.conversation_id, p) for p in event.participants)
            elif isinstance(event, InvitationAcceptedEvent):
                self.invited.add((event.conversation_id, event.agent))
            elif isinstance(event, ConversationJoinedEvent):
                cid = event.conversation_id
                assert cid in self.members, f"{event.agent} joined unknown conversation {cid!r}"
                self.members[cid].add(event.agent)
                if (cid, event.agent) not in accepted:
                    assert self.privacy[cid] == "public", (
                        f"invariant 4: {event.agent} joined private conversation {cid!r} "
                        "without accepting an invitation"
                    )
            elif isinstance(event, ConversationLeftEvent):
                self.members.get(event.conversation_id, set()).discard(event.agent)
            elif isinstance(event, ConversationEndedEvent):
                self.members.pop(event.conversation_id, None)

    def _act(self, actor: str, name: str, args: dict[str, Any]) -> None:
        self._step()
        try:
            action = ACTION_TYPES[name](**_action_kwargs(args))
        except (ValueError, TypeError):
            STATS[f"{name} refused by its constructor"] += 1
            return
        self._perform(name, actor, lambda: self.engine.execute_now(actor, action, self.world.tick))

    def _tool(self, actor: str, tool: Any, args: Any) -> ActionResult:
        self._step()
        return self._perform(
            f"tool:{tool if isinstance(tool, str) else type(tool).__name__}", actor,
            lambda: self.loop.run_until_complete(
                call_tool(self.engine, actor, tool, args, self.world.tick)
            ),
        )

    # ------------------------------------------------------------------ rules: agents

    @rule(actor=ACTORS, call=CALLS)
    def act(self, actor: str, call: tuple[str, dict[str, Any]]) -> None:
        self._act(actor, *call)

    @rule(actor=ACTORS, call=CALLS)
    def tool_call(self, actor: str, call: tuple[str, dict[str, Any]]) -> None:
        self._tool(actor, *call)

    @rule(actor=ACTORS, call=malformed_calls())
    def malformed_tool_call(self, actor: str, call: tuple[Any, Any]) -> None:
        result = self._tool(actor, *call)
        assert not result.success, (
            f"malformed tool call {call!r} by {actor!r} succeeded: {result.message!r}"
        )
        assert result.message, f"malformed tool call {call!r} failed without a message"

    def _beside(self, agent: Agent, wanted: Callable[[Position, Direction], bool]) -> list[str]:
        """The directions (down included) in which an agent finds what it wants:
        `wanted(cell there, direction)`."""
        return [d.value for d in Direction if wanted(agent.position.step(d), d)]

    @staticmethod
    def _can_make(agent: Agent, recipe) -> bool:
        held = Counter(agent.inventory.stacks)
        held.update(item.item_type for item in agent.inventory.items)
        return Counter(recipe.inputs) <= held

    def _walled(self, agent: Agent, doors_only: bool) -> list[str]:
        """The walled sides of an agent's cell, or only those with a door."""
        has = self.world.has_door if doors_only else self.world.has_wall
        return [d.value for d in CARDINALS if has(agent.position, d)]

    @rule(actor=st.sampled_from(NAMES), direction=st.sampled_from(CARDINALS))
    def walk(self, actor: str, direction: Direction) -> None:
        """Plain walking, often: agents must get about for anything else to happen."""
        self._act(actor, "walk", {"direction": direction.value})

    @rule(kind=st.sampled_from(PURPOSEFUL), pick=st.integers(0, 15), nth=st.integers(0, 15),
          text=TEXTS, privacy=st.sampled_from(["public", "private"]), quantity=QUANTITIES,
          via_tool=st.booleans())
    def act_with_purpose(self, kind: str, pick: int, nth: int, text: str, privacy: str,
                         quantity: int, via_tool: bool) -> None:
        """An action by someone it could make sense for, so talk, taking and rebuilding
        happen often enough to be tested (random actors rarely line these up)."""
        w = self.world
        awake = [a for a in self.agents.get_all_agents()
                 if not a.is_sleeping and a.journey is None]
        options: list[tuple[str, dict[str, Any]]] = []
        for agent in awake:
            if kind in ("accept_invite", "decline_invite"):
                if self.conversations.has_pending_invitation(agent.name):
                    options.append((agent.name, {}))
            elif kind in ("speak", "leave_conversation"):
                if self.conversations.is_talking(agent.name):
                    options.append((agent.name, {"message": text} if kind == "speak" else {}))
            elif kind == "take":
                options += [(agent.name, {"direction": d}) for d in self._beside(
                    agent, lambda p, _: any(isinstance(o, PlacedItem) for o in w.objects_at(p)))]
            elif kind == "read_sign":
                options += [(agent.name, {"direction": d})
                            for d in self._beside(agent, lambda p, _: w.sign_at(p) is not None)]
            elif kind == "journey":  # somewhere at least a few steps away, or a landmark
                far = [p for p in PASSABLE_CELLS if p.manhattan(agent.position) > 3]
                destination = far[(nth * 37 + pick) % len(far)]
                options.append((agent.name, {"destination": {"x": destination.x,
                                                             "y": destination.y}}))
                options.append((agent.name, {"place_name": LANDMARKS[nth % 2].name}))
            elif kind in ("remove_wall", "place_door"):  # half the time: a wall with a door
                doors_only = kind == "remove_wall" and nth % 2 == 0
                options += [(agent.name, {"direction": d})
                            for d in self._walled(agent, doors_only)]
            elif kind == "build_shelter":
                options.append((agent.name, {}))
            elif kind == "craft":  # a recipe whose inputs (and tool) the agent holds
                options += [(agent.name, {"recipe": r})
                            for r in RECIPES if self._can_make(agent, r)]
            elif kind == "join_conversation":
                options += [(agent.name, {"participant": them}) for them in NAMES
                            if self.conversations.is_talking(them)
                            and self.agents.can_see(agent.name, them)]
            elif kind == "invite":
                options += [(agent.name, {"invitee": them, "privacy": privacy}) for them in NAMES
                            if self.agents.can_see(agent.name, them)]
            else:  # give, drop or place_item something the agent carries
                carried = [*agent.inventory.stacks, *(i.item_type for i in agent.inventory.items)]
                if not carried:
                    continue
                item = carried[nth % len(carried)]
                if kind == "give":
                    options += [(agent.name, {"recipient": them.name, "item": item,
                                              "quantity": quantity})
                                for them in self.agents.get_all_agents()
                                if them.position.manhattan(agent.position) == 1]
                elif kind == "drop":
                    options.append((agent.name, {"item": item, "quantity": quantity}))
                else:
                    options += [(agent.name, {"item": item, "direction": d})
                                for d in self._beside(agent, lambda p, _: w.is_passable(p))]
        actor, args = options[pick % len(options)] if options else (NAMES[pick % 4], {})
        if kind == "craft":
            recipe = args.get("recipe", RECIPES[nth % len(RECIPES)])
            kind, args = recipe.action, {
                "work": lambda: {"item": recipe.inputs[0], "technique": recipe.technique},
                "combine": lambda: {"items": list(recipe.inputs)},
                "apply": lambda: {"tool": recipe.inputs[0], "target": recipe.inputs[1]},
            }[recipe.action]()
        if via_tool:
            self._tool(actor, kind, args)
        else:
            self._act(actor, kind, args)

    # ------------------------------------------------------------------ rules: time

    def _advance(self, name: str) -> None:
        agent = self.agents.get_agent(name)
        if agent is None or agent.journey is None:
            return
        blocked_east, blocked_south = self.world.blocked_arrays()
        before, nxt = agent.position, agent.journey.next_position
        moved, arrived, reason = self.agents.advance_journey(name)
        if reason is not None or moved.position == before:
            assert moved.position == before and moved.journey is None and not arrived, (
                f"{name}'s journey stopped ({reason!r}) but left {moved}"
            )
            return
        assert nxt is not None and moved.position == nxt, (
            f"{name} stepped from {before} to {moved.position}, the path said {nxt}"
        )
        assert is_walkable([nxt], self.world.passable, blocked_east, blocked_south, before), (
            f"{name}'s journey crossed from {before} to {nxt}, which is not a legal step"
        )
        assert arrived == (moved.journey is None), f"{name}: arrived={arrived} but {moved}"
        if arrived:
            assert moved.position == agent.journey.destination, (
                f"{name} arrived at {moved.position}, not {agent.journey.destination}"
            )

    @rule(event=WORLD_EVENTS)
    def world_moves_on(self, event: tuple[str, Any]) -> None:
        """Between actions: time passes, journeys advance, invitations lapse, ..."""
        self._step()
        what, arg = event
        STATS[f"world: {what}"] += 1
        if what == "tick":  # the clock moves, every journey takes a step, the tick commits
            self.world.set_tick(self.world.tick + 1)
            for name in NAMES:
                self._advance(name)
            self._flush()
        elif what == "advance journey":
            self._advance(arg)
        elif what == "pass time":
            self.world.set_tick(self.world.tick + arg)
        elif what == "expire invitations":
            for invitation in self.conversations.expire_invitations(self.world.tick):
                assert invitation.is_expired(self.world.tick), f"expired early: {invitation}"
        elif what == "wall across a journey":
            self._wall_across(arg)
        elif what == "wake":
            if self.agents.require(arg).is_sleeping:
                self.agents.set_sleeping(arg, False)
        else:
            self._flush()

    def _wall_across(self, pick: int) -> None:
        """Someone (the Gardener, say) walls the next step of a journey, which then tries
        to take that step: it must stop instead."""
        travelling = [a for a in self.agents.get_all_agents() if a.journey is not None]
        if not travelling:
            return
        agent = travelling[pick % len(travelling)]
        nxt = agent.journey.next_position
        if nxt is None:
            return
        d = next(d for d in CARDINALS if agent.position.step(d) == nxt)
        if self.world.has_wall(agent.position, d):
            return
        self.world.place_wall(agent.position, d)  # no materials: nothing to conserve
        for edges in self.walls_since.values():
            edges.add(_edge_key(agent.position, d))
        self.touched_cells.add(agent.position)
        self._advance(agent.name)
        assert self.agents.require(agent.name).position == agent.position, (
            f"{agent.name} walked through the wall just raised between {agent.position} and {nxt}"
        )

    def _flush(self) -> None:
        """What the commit phase does once it has written everything: a fresh journal."""
        self.world.changes = NotingJournal()
        self.sim.gathering.dirty.clear()

    # ------------------------------------------------------------------ invariants

    @invariant()
    def agents_stand_on_passable_cells(self) -> None:
        for agent in self.agents.get_all_agents():
            pos = agent.position
            assert self.world.in_bounds(pos), f"invariant 1: {agent.name} is off the map at {pos}"
            code = self.world.codes[pos.y, pos.x]
            assert RULES.passable[code] and self.world.is_passable(pos), (
                f"invariant 1: {agent.name} stands on impassable "
                f"{self.world.terrain_at(pos).value} at {pos}"
            )

    @invariant()
    def resources_are_conserved(self) -> None:
        actual = self._totals()
        expected = +self.expected
        if actual == expected:
            return
        wrong = sorted(set(actual) | set(expected))
        diffs = [f"{k}: expected {expected[k]}, found {actual[k]}"
                 for k in wrong if actual[k] != expected[k]]
        raise AssertionError(
            "invariant 2 (conservation): " + "; ".join(diffs)
            + f" (in walls: {self.world.materials_in_walls()})"
        )

    @invariant()
    def unique_ids_are_unique(self) -> None:
        seen: dict[str, str] = {}
        for item_id, _, where in self._unique_items():
            assert item_id not in seen, (
                f"invariant 3: item {item_id!r} is both with {seen[item_id]} and {where}"
            )
            seen[item_id] = where

    @invariant()
    def conversations_are_consistent(self) -> None:
        problems = self.conversations.check_invariants()
        assert not problems, "invariant 4 (conversation service): " + "; ".join(problems)
        where: dict[str, str] = {}
        active = self.conversations.active_conversations()
        for conv in active:
            for name in conv.participants:
                assert name not in where, (
                    f"invariant 4: {name} is in {where[name]!r} and {conv.id!r}"
                )
                where[name] = conv.id
                if conv.privacy == "private":
                    assert (conv.id, name) in self.invited, (
                        f"invariant 4: {name} is in private conversation {conv.id!r} "
                        "without an invitation"
                    )
        ours = {cid: frozenset(m) for cid, m in self.members.items()}
        theirs = {conv.id: frozenset(conv.participants) for conv in active}
        assert ours == theirs, (
            f"invariant 4: the events describe conversations {ours}, the service holds {theirs}"
        )
        for name in NAMES:
            talking = self.conversations.get_conversation_for_agent(name)
            assert (talking.id if talking else None) == where.get(name), (
                f"invariant 4: {name} is indexed in {talking} but listed in {where.get(name)}"
            )

    @invariant()
    def walls_agree_from_both_sides(self) -> None:
        w = self.world
        stray = (w.door_east & ~w.wall_east) | (w.door_south & ~w.wall_south)
        assert not stray.any(), (
            f"invariant 5: doors without walls at (y, x) {np.argwhere(stray).tolist()}"
        )
        assert not w.wall_east[:, -1].any() and not w.wall_south[-1, :].any(), (
            "invariant 5: a wall stands on the world's outer edge"
        )
        for x, y, side in w.edge_materials:
            walls = w.wall_east if side == "e" else w.wall_south
            assert walls[y, x], (
                f"invariant 5: materials {w.edge_materials[(x, y, side)]} are kept for edge "
                f"({x}, {y}, {side!r}), which has no wall"
            )
        # Check the cells whose edges just changed, both sides of every door, a few walled
        # cells and a rotating cell of open ground: every edge is checked every few steps.
        turn = self.steps  # this example's own count, so a failure replays the same way
        walled = np.argwhere(w.wall_east | w.wall_south)
        cells = set(self.touched_cells)
        self.touched_cells.clear()
        for doors, step in ((w.door_east, Direction.EAST), (w.door_south, Direction.SOUTH)):
            for y, x in np.argwhere(doors):
                cells |= {Position(int(x), int(y)), Position(int(x), int(y)).step(step)}
        if len(walled):
            picks = ((turn * 7 + k) % len(walled) for k in range(min(2, len(walled))))
            cells |= {Position(int(walled[i][1]), int(walled[i][0])) for i in picks}
        start = (turn * 29) % (SIZE * SIZE)
        cells.add(Position(start % SIZE, start // SIZE))
        for pos in cells:
            if not w.in_bounds(pos):
                continue
            cell = w.cell(pos)
            for d in CARDINALS:
                wall, door = w.has_wall(pos, d), w.has_door(pos, d)
                other = pos.step(d)
                if w.in_bounds(other):
                    assert wall == w.has_wall(other, d.opposite), (
                        f"invariant 5: the wall between {pos} and {other} exists from one "
                        "side only"
                    )
                    assert door == w.has_door(other, d.opposite), (
                        f"invariant 5: the door between {pos} and {other} exists from one "
                        "side only"
                    )
                else:
                    assert not wall, f"invariant 5: {pos} has a wall off the map to the {d}"
                assert not door or wall, f"invariant 5: door without wall at {pos} {d}"
                assert (d in cell.walls) == wall and (d in cell.doors) == door, (
                    f"invariant 5: cell({pos}) says walls {set(cell.walls)}, doors "
                    f"{set(cell.doors)}; the edges say wall={wall}, door={door} to the {d}"
                )

    @invariant()
    def journeys_are_walkable(self) -> None:
        blocked_east, blocked_south = self.world.blocked_arrays()
        for agent in self.agents.get_all_agents():
            journey = agent.journey
            if journey is None:
                continue
            assert agent.position == journey.current, (
                f"invariant 6: {agent.name} stands at {agent.position} but its journey is at "
                f"{journey.current}"
            )
            rest = list(journey.path[journey.progress + 1:])
            assert rest, f"invariant 6: {agent.name} holds a finished journey {journey}"
            east, south = blocked_east, blocked_south
            raised = self.walls_since.get(agent.name, set())
            if raised:  # walls raised since it set out may stop it; nothing else may
                east, south = blocked_east.copy(), blocked_south.copy()
                for x, y, side in raised:
                    (east if side == "e" else south)[y, x] = False
            assert is_walkable(rest, self.world.passable, east, south, journey.current), (
                f"invariant 6: {agent.name}'s path from {journey.current} to "
                f"{journey.destination} is not walkable: {rest}"
            )


SETTINGS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS_PER_EXAMPLE,
    deadline=None,
    print_blob=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],  # no slow "explain"
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


MOVERS = {
    "gathering": {"gather"}, "crafting": {"work", "combine", "apply"},
    "building": {"place_wall", "place_door", "build_shelter", "remove_wall"},
    "setting down": {"drop", "place_item"}, "picking up": {"take"}, "handing over": {"give"},
}
"""Ways things move between agents, the ground and walls, or are made: each must have
happened, or conservation went untested for it."""


def test_every_action_has_arguments() -> None:
    assert set(BUILDERS) == set(ACTION_TYPES)


def test_world_invariants_hold_under_random_play() -> None:
    before = STATS["steps"]
    started = time.perf_counter()
    run_state_machine_as_test(WorldMachine, settings=SETTINGS)
    ran, took = STATS["steps"] - before, time.perf_counter() - started
    print(f"{ran} steps in {took:.1f} s")
    for key in sorted(STATS):
        print(f"  {key}: {STATS[key]}")
    assert ran >= MIN_STEPS, f"only {ran} steps ran (wanted at least {MIN_STEPS})"
    done = {name for name in ACTION_TYPES if STATS[f"{name} ok"] + STATS[f"tool:{name} ok"]}
    untested = sorted(way for way, names in MOVERS.items() if not names & done)
    assert not untested, f"no action succeeded at: {', '.join(untested)}"
    # Tried directly or as a model's tool call: either way its rules ran (counting only
    # the direct ones left "approach" untried in about one run in ten).
    tried = {key.split()[0].removeprefix("tool:") for key in STATS
             if key.endswith((" ok", " failed"))}
    assert set(ACTION_TYPES) <= tried, f"never tried: {sorted(set(ACTION_TYPES) - tried)}"
