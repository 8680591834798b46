"""place_wall, place_door, remove_wall and build_shelter: walls cost materials, give them
back when they come down, and closed walls make a structure.
"""

from __future__ import annotations

from core.actions import (
    ActionResult,
    BuildShelterAction,
    PlaceDoorAction,
    PlaceWallAction,
    RemoveWallAction,
)
from core.agent import Agent
from core.events import (
    DoorPlacedEvent,
    StructureDetectedEvent,
    StructureRemovedEvent,
    WallPlacedEvent,
    WallRemovedEvent,
)
from core.structures import Structure
from core.types import CARDINALS, Direction, Position
from services.action_families.base import ActionFamily, R, Refusal
from services.enclosure import enclosed_regions, still_joined

MAX_STRUCTURE_AREA = 400
"""The largest interior a set of walls can enclose and still count as a structure."""


class BuildingActions(ActionFamily):
    def _pay(self, agent: Agent, materials: list[str], cost: int, what: str) -> str | None:
        """Take `cost` of the first of `materials` the agent has enough of, and say which
        (None when it costs nothing), or refuse, listing what would do."""
        if cost == 0:
            self.agents.set_inventory(agent.name, agent.inventory)
            return None
        for material in materials:
            if agent.inventory.has(material, cost):
                self.agents.set_inventory(agent.name,
                                          agent.inventory.remove_resource(material, cost))
                return material
        raise Refusal(
            f"{what} takes {cost} of one of: {', '.join(materials)}; you have none in that amount",
            R.CANNOT_AFFORD,
        )

    def _wall_checks(self, agent: Agent, direction: Direction) -> None:
        if not self.world.edge_inside(agent.position, direction):
            raise Refusal(f"the {direction.value} side of this cell is the world's edge",
                          R.WORLD_EDGE)

    def _place_wall(self, agent: Agent, action: PlaceWallAction, tick: int) -> ActionResult:
        d = action.direction
        self._wall_checks(agent, d)
        if self.world.has_wall(agent.position, d):
            return ActionResult.fail(f"there is already a wall on the {d.value} side",
                                     reason=R.WALL_EXISTS)
        building = self.building
        material = self._pay(agent, building.wall_materials, building.wall_cost, "a wall")
        self.world.place_wall(agent.position, d, material, building.wall_cost)
        events: list = [WallPlacedEvent(tick, agent.name, agent.position, d)]
        beyond = agent.position.step(d)
        # Structures are always exactly the enclosed areas: a wall whose two sides are
        # still joined changed no area, so it needs no flood (see `still_joined`).
        changed = [] if still_joined(self.world.wall_east, self.world.wall_south,
                                     agent.position, beyond) else (
            self._refresh_structures(agent, [agent.position, beyond], tick))
        events += changed
        found = [e for e in changed if isinstance(e, StructureDetectedEvent)]
        text = f"you raise a wall of {material or 'nothing'} on the {d.value} side"
        if found:
            text += "; the walls now close a space: a shelter"
        return ActionResult.ok(text, events, {"material": material, "structure": bool(found)})

    def _place_door(self, agent: Agent, action: PlaceDoorAction, tick: int) -> ActionResult:
        d = action.direction
        self._wall_checks(agent, d)
        if not self.world.has_wall(agent.position, d):
            return ActionResult.fail(
                f"a door goes into a wall, and there is no wall on the {d.value} side; "
                "place_wall first", reason=R.NO_WALL,
            )
        if self.world.has_door(agent.position, d):
            return ActionResult.fail(f"there is already a door on the {d.value} side",
                                     reason=R.DOOR_EXISTS)
        cost = self.building.door_cost
        material = self._pay(agent, self.building.door_materials, cost, "a door")
        self.world.place_door(agent.position, d, material, cost)
        return ActionResult.ok(
            f"you fit a door into the {d.value} wall",
            [DoorPlacedEvent(tick, agent.name, agent.position, d)],
            {"material": material},
        )

    def _remove_wall(self, agent: Agent, action: RemoveWallAction, tick: int) -> ActionResult:
        d = action.direction
        self._wall_checks(agent, d)
        if not self.world.has_wall(agent.position, d):
            return ActionResult.fail(f"there is no wall on the {d.value} side",
                                     reason=R.NO_WALL)
        returned = self.world.remove_wall(agent.position, d)
        inventory = agent.inventory
        for material, quantity in returned:
            inventory = inventory.add_resource(material, quantity)
        self.agents.set_inventory(agent.name, inventory)
        events: list = [WallRemovedEvent(tick, agent.name, agent.position, d)]
        events += self._refresh_structures(agent, [agent.position, agent.position.step(d)], tick)
        back = ", ".join(f"{q} {m}" for m, q in returned) or "nothing"
        return ActionResult.ok(
            f"you take down the {d.value} wall and keep its {back}", events,
            {"returned": [[m, q] for m, q in returned]},
        )

    def _build_shelter(self, agent: Agent, action: BuildShelterAction, tick: int) -> ActionResult:
        """Walls on every open side of this cell and a door in the south wall: a one-cell
        hut its builder can walk out of."""
        pos = agent.position
        if any(not self.world.edge_inside(pos, d) for d in CARDINALS):
            return ActionResult.fail("a shelter cannot stand against the world's edge",
                                     reason=R.WORLD_EDGE)
        missing = [d for d in CARDINALS if not self.world.has_wall(pos, d)]
        needs_door = not any(self.world.has_door(pos, d) for d in CARDINALS)
        if not missing and not needs_door:
            return ActionResult.fail("you are already inside a shelter",
                                     reason=R.ALREADY_SHELTERED)
        cost = self.building.wall_cost
        inventory = agent.inventory
        spend: list[tuple[Direction, str | None]] = []
        for d in missing:
            choice = next((m for m in self.building.wall_materials
                           if cost == 0 or inventory.has(m, cost)), None)
            if choice is None:
                need = len(missing) * cost
                return ActionResult.fail(
                    f"a shelter here needs {len(missing)} more walls: {need} units of "
                    f"{', '.join(self.building.wall_materials)} (any mix, {cost} per wall), "
                    f"and a door of {self.building.door_cost} "
                    f"{' or '.join(self.building.door_materials)}",
                    reason=R.CANNOT_AFFORD,
                )
            if cost:
                inventory = inventory.remove_resource(choice, cost)
            spend.append((d, choice if cost else None))
        door_material = None
        if needs_door and self.building.door_cost:
            door_material = next((m for m in self.building.door_materials
                                  if inventory.has(m, self.building.door_cost)), None)
            if door_material is None:
                return ActionResult.fail(
                    f"a shelter needs a door of {self.building.door_cost} "
                    f"{' or '.join(self.building.door_materials)} once its walls are paid for",
                    reason=R.CANNOT_AFFORD,
                )
            inventory = inventory.remove_resource(door_material, self.building.door_cost)
        self.agents.set_inventory(agent.name, inventory)
        events: list = []
        for d, material in spend:
            self.world.place_wall(pos, d, material, cost)
            events.append(WallPlacedEvent(tick, agent.name, pos, d))
        if needs_door:
            self.world.place_door(pos, Direction.SOUTH, door_material,
                                  self.building.door_cost if door_material else 0)
            events.append(DoorPlacedEvent(tick, agent.name, pos, Direction.SOUTH))
        cells = [pos, *(pos.step(d) for d in CARDINALS)]
        events += self._refresh_structures(agent, cells, tick)
        return ActionResult.ok(
            f"you build walls on {len(spend)} sides"
            + (" and a door to the south" if needs_door else "")
            + "; this cell is a shelter now", events,
            {"walls": [d.value for d, _ in spend], "door": needs_door},
        )

    def _refresh_structures(self, agent: Agent, cells: list[Position], tick: int) -> list:
        """Make the structures around changed walls true again.

        The enclosed regions containing `cells` are recomputed; a structure whose
        interior is still exactly one of them stays (same id), any other structure
        touching those cells is removed (opened, merged or split), and every new
        enclosed region becomes a structure.
        """
        world = self.world
        walls = (world.wall_east, world.wall_south)
        cells = [c for c in cells if world.in_bounds(c)]
        regions = enclosed_regions(*walls, cells, max_area=MAX_STRUCTURE_AREA)
        touched: dict[str, Structure] = {}
        for cell in [*cells, *(p for r in regions for p in r)]:
            found = world.structure_at(cell)
            if found is not None:
                touched[found.id] = found
        events: list = []
        kept = set()
        for sid, structure in sorted(touched.items()):
            if structure.interior in regions:
                kept.add(structure.interior)
                continue
            world.remove_structure(sid)
            events.append(StructureRemovedEvent(tick, sid, agent.name))
        for region in regions:
            if region in kept or any(world.structure_at(p) for p in region):
                continue
            structure = Structure(self.new_id("structure"), region, agent.name, tick)
            world.add_structure(structure)
            events.append(StructureDetectedEvent(tick, structure.id, len(region), agent.name))
        return events
