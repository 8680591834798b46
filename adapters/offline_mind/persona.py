"""Everything about one offline agent that never changes between its turns.

Traits become concrete numbers once, here (how far it roams, how long it
talks, how readily it accepts), so a turn only reads attributes. Building
costs are what the world's tool descriptions tell every agent (settings.yaml
`building`), not secrets: the mind uses them to know when it has enough.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.offline_mind.rng import base_of, name_key
from adapters.offline_mind.traits import Traits, score_personality


@dataclass(frozen=True, slots=True)
class Costs:
    wall_cost: int = 2
    wall_materials: tuple[str, ...] = ("plank", "cobblestone", "clay_brick", "wood", "stone")
    door_cost: int = 1
    door_materials: tuple[str, ...] = ("plank", "wood")

    def __post_init__(self) -> None:
        if self.wall_cost < 0 or self.door_cost < 0:
            raise ValueError("wall and door costs must be 0 or more")
        object.__setattr__(self, "wall_materials", tuple(self.wall_materials))
        object.__setattr__(self, "door_materials", tuple(self.door_materials))

    def shelter_affordable(self, inventory: dict[str, int]) -> bool:
        """Whether four walls and a door can be paid, choosing as the world does.

        Asked on most daytime turns, so it counts instead of paying on a copy: the world
        takes each wall from the first material there is enough of, which uses
        `count // cost` walls of each material in order.
        """
        cost, door = self.wall_cost, self.door_cost
        if 4 * cost + door > sum(inventory.values()):
            return False  # not that many things carried at all: most turns end here
        if cost == 0:
            walls_left, spent = 0, None
        else:
            walls_left, spent = 4, {}
            for m in self.wall_materials:
                have = inventory.get(m, 0)
                if have >= cost:
                    used = min(walls_left, have // cost)
                    spent[m] = used * cost
                    walls_left -= used
                    if not walls_left:
                        break
        if walls_left:
            return False
        if door == 0:
            return True
        for m in self.door_materials:
            if inventory.get(m, 0) - (spent.get(m, 0) if spent else 0) >= door:
                return True
        return False

    def pay_wall(self, inventory: dict[str, int], material: str | None) -> None:
        """Take a wall's material out of a working inventory (the world chose `material`)."""
        if material and self.wall_cost:
            inventory[material] = max(0, inventory.get(material, 0) - self.wall_cost)

    def pay_shelter(self, inventory: dict[str, int], walls: int, door: bool) -> None:
        """Take what a shelter of `walls` new walls (and a door) cost, as the world chooses."""
        for _ in range(walls):
            material = next((m for m in self.wall_materials
                             if inventory.get(m, 0) >= self.wall_cost), None)
            self.pay_wall(inventory, material)
        if door and self.door_cost:
            material = next((m for m in self.door_materials
                             if inventory.get(m, 0) >= self.door_cost), None)
            if material:
                inventory[material] -= self.door_cost


@dataclass(frozen=True, slots=True)
class Persona:
    name: str
    key: int
    """Stable number for the name (rng.name_key)."""
    seed: int
    traits: Traits
    costs: Costs
    home_range: int
    """How far from its haunt or home it wanders once settled."""
    max_steps: int
    """Most walk calls in one turn."""
    talk_lines: int
    """Lines it speaks in a conversation before taking its leave."""
    accept_chance: float
    invite_chance: float
    invite_pause: int
    """Ticks between invitations to the same agent."""
    journal_chance: float
    dominant: str
    rng_base: int = 0
    """rng.base_of(seed, key): each turn's random source starts from it (TurnRandom.at)."""

    @classmethod
    def of(cls, name: str, personality: str, seed: int, costs: Costs | None = None) -> Persona:
        traits = score_personality(personality)
        key = name_key(name)
        return cls(
            name=name,
            key=key,
            seed=seed,
            traits=traits,
            costs=costs or Costs(),
            home_range=int(10 + 25 * traits.explorer),
            max_steps=2 + round(6 * traits.explorer),
            talk_lines=2 + round(2 * traits.social),
            accept_chance=0.8 + 0.19 * traits.social,
            invite_chance=0.3 + 0.7 * traits.social,
            invite_pause=int(36 - 18 * traits.social),
            journal_chance=0.35 + 0.6 * traits.writer,
            dominant=traits.dominant,
            rng_base=base_of(seed, key),
        )
