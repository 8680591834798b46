"""Agents, what they carry, and where they are going."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from core.objects import Item, item_type
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
            return Inventory(stacks, self.items)
        stacks[resource] = have + quantity
        return Inventory(stacks, self.items)

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
        return Inventory(stacks, self.items)

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
        """One cell further."""
        if self.is_complete:
            raise ValueError("the journey is already complete")
        return replace(self, progress=self.progress + 1)

    def with_seen(self, seen: frozenset[str]) -> Journey:
        return replace(self, seen=frozenset(seen))


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

    def with_position(self, position: Position) -> Agent:
        return replace(self, position=position)

    def with_inventory(self, inventory: Inventory) -> Agent:
        return replace(self, inventory=inventory)

    def with_journey(self, journey: Journey | None) -> Agent:
        return replace(self, journey=journey)

    def with_sleeping(self, sleeping: bool) -> Agent:
        return replace(self, is_sleeping=bool(sleeping))

    def with_known_agent(self, other: AgentName) -> Agent:
        if other == self.name:
            raise ValueError("an agent does not 'know' itself")
        return replace(self, known_agents=self.known_agents | {other})

    def with_last_active(self, tick: int) -> Agent:
        return replace(self, last_active_tick=tick)

    def with_session(self, session_id: str | None) -> Agent:
        return replace(self, session_id=session_id)
