"""Agents, what they carry, and where they are going."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from core.objects import Item, item_type
from core.quick_init import open_twin
from core.types import AgentName, Position, agent_name


class InventoryError(ValueError):
    """An inventory change that cannot happen (not enough, no such item)."""


@dataclass(frozen=True, slots=True)
class Inventory:
    """Stackable resources by type, plus unique items with their own properties."""

    stacks: Mapping[str, int] = field(default_factory=dict)
    items: tuple[Item, ...] = ()

    def __post_init__(self) -> None:
        clean: dict[str, int] = {}
        for name, count in self.stacks.items():
            item_type(name)
            if count < 0:
                raise InventoryError(f"negative count for {name}: {count}")
            if count:
                clean[name] = count
        object.__setattr__(self, "stacks", MappingProxyType(dict(sorted(clean.items()))))
        object.__setattr__(self, "items", tuple(self.items))
        ids = [i.id for i in self.items]
        if len(ids) != len(set(ids)):
            raise InventoryError("two items share one id")

    def __hash__(self) -> int:
        # The read-only mapping is not hashable itself; hash its sorted contents.
        return hash((tuple(self.stacks.items()), self.items))

    @property
    def is_empty(self) -> bool:
        return not self.stacks and not self.items

    def count(self, resource: str) -> int:
        return self.stacks.get(resource, 0)

    def has(self, resource: str, quantity: int = 1) -> bool:
        return self.count(resource) >= quantity

    def add_resource(self, resource: str, quantity: int) -> Inventory:
        if quantity <= 0:
            raise InventoryError(f"quantity must be positive, got {quantity}")
        stacks = dict(self.stacks)
        have = stacks.get(resource)
        if have is None:  # a new name: checked, and put in its sorted place
            item_type(resource)
            stacks[resource] = quantity
            return Inventory._trusted(dict(sorted(stacks.items())), self.items)
        stacks[resource] = have + quantity
        return Inventory._trusted(stacks, self.items)

    def remove_resource(self, resource: str, quantity: int) -> Inventory:
        if quantity <= 0:
            raise InventoryError(f"quantity must be positive, got {quantity}")
        have = self.count(resource)
        if have < quantity:
            raise InventoryError(f"needs {quantity} {resource}, carrying {have}")
        stacks = dict(self.stacks)
        if have == quantity:
            del stacks[resource]
        else:
            stacks[resource] = have - quantity
        return Inventory._trusted(stacks, self.items)

    @classmethod
    def _trusted(cls, stacks: dict[str, int], items: tuple[Item, ...]) -> Inventory:
        """An inventory from stacks and items already in the shape `__post_init__` makes
        (valid names, positive counts, sorted; a tuple of items with distinct ids).

        Gathering, crafting and building change one stack of an inventory whose other
        stacks were checked when it was made; checking every name again with a regular
        expression cost more than the change.
        """
        new = _new(cls)
        _set_stacks(new, MappingProxyType(stacks))
        _set_items(new, items)
        return new

    def add_item(self, item: Item) -> Inventory:
        return Inventory(self.stacks, (*self.items, item))

    def find_item(self, item_type_: str) -> Item | None:
        """The first unique item of a type, oldest first."""
        return next((i for i in self.items if i.item_type == item_type_), None)

    def remove_item(self, item_id: str) -> Inventory:
        if not any(i.id == item_id for i in self.items):
            raise InventoryError(f"no item with id {item_id!r}")
        return Inventory(self.stacks, tuple(i for i in self.items if i.id != item_id))


@dataclass(frozen=True, slots=True)
class Journey:
    """A path being walked one cell per tick; path[progress] is the current cell."""

    destination: Position
    path: tuple[Position, ...]
    progress: int = 0
    seen: frozenset[str] = frozenset()
    """Others in view after the last step (or at the start): anyone else coming into
    view stops the journey, whether the traveller walked up to them or they to it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", tuple(self.path))
        object.__setattr__(self, "seen", frozenset(self.seen))
        if not self.path:
            raise ValueError("a journey needs a path")
        if self.path[-1] != self.destination:
            raise ValueError("a journey's path must end at its destination")
        if not 0 <= self.progress < len(self.path):
            raise ValueError(f"progress {self.progress} is outside a path of {len(self.path)}")
        for a, b in zip(self.path, self.path[1:], strict=False):
            if a.manhattan(b) != 1:
                raise ValueError(f"path jumps from {a} to {b}")

    @classmethod
    def planned(cls, destination: Position, path: tuple[Position, ...],
                seen: frozenset[str]) -> Journey:
        """A journey at its start along a path a path finder has just made: each step one
        cell from the last, ending at `destination` (a tuple, and a frozenset of names).

        The same value the constructor makes, without walking the path again to check
        what the search that made it guarantees: that walk cost more than the rest of
        starting a journey. Anything else goes through the constructor.
        """
        if not path or path[-1] != destination:  # the cheap checks stay
            raise ValueError("a journey's path must end at its destination")
        journey = _new(cls)
        _set_destination(journey, destination)
        _set_path(journey, path)
        _set_progress(journey, 0)
        _set_seen(journey, seen)
        return journey

    @property
    def current(self) -> Position:
        return self.path[self.progress]

    @property
    def next_position(self) -> Position | None:
        return self.path[self.progress + 1] if not self.is_complete else None

    @property
    def remaining(self) -> int:
        return len(self.path) - 1 - self.progress

    @property
    def is_complete(self) -> bool:
        return self.progress == len(self.path) - 1

    def advanced(self) -> Journey:
        """One cell further. The path was checked when the journey was made, so the
        copy is made without walking it again: this runs for every traveller at
        every tick."""
        progress = self.progress + 1
        if progress >= len(self.path):
            raise ValueError("the journey is already complete")
        return self._copy(progress, self.seen)

    def with_seen(self, seen: frozenset[str]) -> Journey:
        return self._copy(self.progress, frozenset(seen))

    def _copy(self, progress: int, seen: frozenset[str]) -> Journey:
        copy = _new(Journey)  # through the slots' setters (every traveller, every tick)
        _set_destination(copy, self.destination)
        _set_path(copy, self.path)
        _set_progress(copy, progress)
        _set_seen(copy, seen)
        return copy


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent's shared-reality state. Its inner life lives in its home folder."""

    name: AgentName
    model_id: str
    personality: str
    position: Position
    inventory: Inventory = field(default_factory=Inventory)
    journey: Journey | None = None
    is_sleeping: bool = False
    known_agents: frozenset[AgentName] = frozenset()
    last_active_tick: int = 0
    session_id: str | None = None

    def __post_init__(self) -> None:
        agent_name(self.name)
        if not self.model_id:
            raise ValueError("an agent needs a model id")
        object.__setattr__(self, "known_agents", frozenset(self.known_agents))
        if self.name in self.known_agents:
            raise ValueError("an agent does not 'know' itself")

    def _evolve(self, field_name: str, value: object) -> Agent:
        """A copy with one field changed, without re-running `__post_init__`.

        The engine replaces an agent several times per turn; `dataclasses.replace`
        re-validates the name each time and cost more than the move itself. Every
        caller below passes a value that keeps the agent valid.

        The copy is filled as an unfrozen twin with the same slots, one plain store a
        field (checked against the field list at import), and then becomes an Agent
        (`core.quick_init.open_twin`): 0.7 µs, where storing through the slots'
        descriptors took 1.9 and `object.__setattr__` three times that.
        """
        if _OpenAgent is None:  # pragma: no cover - a layout no twin fits
            return _evolve_by_descriptors(self, field_name, value)
        new = _new(_OpenAgent)
        new.name = self.name
        new.model_id = self.model_id
        new.personality = self.personality
        new.position = self.position
        new.inventory = self.inventory
        new.journey = self.journey
        new.is_sleeping = self.is_sleeping
        new.known_agents = self.known_agents
        new.last_active_tick = self.last_active_tick
        new.session_id = self.session_id
        setattr(new, field_name, value)
        new.__class__ = Agent
        return new  # type: ignore[return-value]

    def with_position(self, position: Position) -> Agent:
        return self._evolve("position", position)

    def with_inventory(self, inventory: Inventory) -> Agent:
        return self._evolve("inventory", inventory)

    def with_journey(self, journey: Journey | None) -> Agent:
        return self._evolve("journey", journey)

    def with_sleeping(self, sleeping: bool) -> Agent:
        return self._evolve("is_sleeping", bool(sleeping))

    def with_known_agent(self, other: AgentName) -> Agent:
        if other == self.name:
            raise ValueError("an agent does not 'know' itself")
        return self._evolve("known_agents", self.known_agents | {other})

    def with_last_active(self, tick: int) -> Agent:
        return self._evolve("last_active_tick", tick)

    def with_session(self, session_id: str | None) -> Agent:
        return self._evolve("session_id", session_id)


_AGENT_FIELDS = tuple(f.name for f in fields(Agent))

_new = object.__new__
_set_stacks, _set_items = (Inventory.__dict__[f.name].__set__ for f in fields(Inventory))
_set_destination, _set_path, _set_progress, _set_seen = (
    Journey.__dict__[name].__set__ for name in ("destination", "path", "progress", "seen"))
if tuple(f.name for f in fields(Journey)) != ("destination", "path", "progress", "seen"):
    raise RuntimeError("Journey.planned sets four fields; Journey has others")  # pragma: no cover
_OpenAgent = open_twin(Agent)
"""Agent's unfrozen twin (`_evolve`), or None should no twin fit its layout."""
if _AGENT_FIELDS != ("name", "model_id", "personality", "position", "inventory", "journey",
                     "is_sleeping", "known_agents", "last_active_tick", "session_id"):
    raise RuntimeError(  # pragma: no cover - a new field must be copied in _evolve too
        f"Agent._evolve copies 10 fields; Agent has {_AGENT_FIELDS}")


def _evolve_by_descriptors(agent: Agent, field_name: str, value: object) -> Agent:
    new = _new(Agent)
    for name in _AGENT_FIELDS:
        _SETTERS[name](new, value if name == field_name else getattr(agent, name))
    return new


_SETTERS = {name: Agent.__dict__[name].__set__ for name in _AGENT_FIELDS}
"""Field name -> its slot's setter, which a frozen dataclass's __setattr__ cannot block."""
