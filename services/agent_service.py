"""AgentService: who lives here, where they stand, what they carry, whom they know.

Agents are held in memory as frozen `core.agent.Agent` values, replaced whole on
every change and noted in the world's ChangeSet for the storage layer. Moves are
checked against the world (in bounds, passable terrain, no wall without a door
on the edge), and journeys are planned with A* over the world's arrays.

Who stands where is also kept in a bucket index (squares of `BUCKET_SIZE` cells),
updated in `_store`, through which every write (the constructor, `_put`) passes:
with thousands of agents and a "who is near me" query per agent per tick, a query
reads only the few buckets its square touches instead of scanning the whole roster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.agent import Agent, Inventory, Journey
from core.constants import distance_bucket
from core.objects import Item
from core.types import AgentName, Direction, Position
from services.changes import collecting_now
from services.pathfinding import find_path
from services.world_cells import STEP_IMPASSABLE, STEP_OFF_MAP
from services.world_service import WorldService
from storage.homes import AgentHomes

BUCKET_SIZE = 8
"""Side of an index bucket, in cells: a vision square (7x7 by day) touches 1-4 buckets."""

Bucket = tuple[int, int]

_DOWN = Direction.DOWN
"""Read once: an enum member read through its class is a descriptor call."""


class AgentRuleError(ValueError):
    """A change to an agent the world forbids; the message says why."""


@dataclass(frozen=True)
class SensedAgent:
    name: AgentName
    direction: Direction
    """Roughly where: the compass direction of the larger offset (DOWN if same cell)."""
    distance_category: str
    """nearby (<= 10 cells), far (11-30) or very far (31+), Manhattan."""


def direction_towards(origin: Position, target: Position) -> Direction:
    dx, dy = target.x - origin.x, target.y - origin.y
    if dx == 0 and dy == 0:
        return Direction.DOWN
    if abs(dy) >= abs(dx):
        return Direction.NORTH if dy < 0 else Direction.SOUTH
    return Direction.WEST if dx < 0 else Direction.EAST


class AgentService:
    def __init__(
        self,
        world: WorldService,
        agents: Iterable[Agent] = (),
        *,
        homes: AgentHomes | None = None,
    ) -> None:
        self.world = world
        self.homes = homes
        self._agents: dict[AgentName, Agent] = {}
        self._buckets: dict[Bucket, set[AgentName]] = {}
        """(x // BUCKET_SIZE, y // BUCKET_SIZE) -> names standing there; never empty sets."""
        self._rank: dict[AgentName, int] = {}
        """Roster order (first arrival): agents_at lists a cell in this order, as a
        scan of the roster would."""
        for agent in agents:
            self._store(agent)

    @property
    def changes(self):
        return self.world.changes

    # ------------------------------------------------------------------ roster

    def get_agent(self, name: str) -> Agent | None:
        # No AgentName(name): a NewType call is a Python call that returns its argument,
        # and this is asked several times in every action.
        return self._agents.get(name)

    def require(self, name: str) -> Agent:
        agent = self._agents.get(name)
        if agent is None:
            raise AgentRuleError(f"nobody called {name!r} lives here")
        return agent

    def get_all_agents(self) -> list[Agent]:
        return sorted(self._agents.values(), key=lambda a: a.name)

    def names(self) -> list[AgentName]:
        return sorted(self._agents)

    def add_agent(self, agent: Agent) -> None:
        if agent.name in self._agents:
            raise AgentRuleError(f"{agent.name} already lives here")
        if not self.world.is_passable(agent.position):
            raise AgentRuleError(f"{agent.name} cannot stand at {agent.position}")
        self._put(agent)

    def agents_at(self, pos: Position) -> list[Agent]:
        """Everyone standing on `pos`, in roster order."""
        names = self._buckets.get((pos.x // BUCKET_SIZE, pos.y // BUCKET_SIZE), ())
        found = [a for name in names if (a := self._agents[name]).position == pos]
        if len(found) > 1:
            found.sort(key=lambda a: self._rank[a.name])
        return found

    def get_nearby_agents(self, pos: Position, radius: int) -> list[Agent]:
        """Agents within `radius` (Chebyshev: the square an agent sees), nearest first
        (Manhattan), then by name."""
        if radius < 0:
            return []
        found = self.agents_in_box(pos.x - radius, pos.y - radius,
                                   pos.x + radius, pos.y + radius)
        if len(found) > 1:  # most often it is the agent alone
            # (distance, name) worked out inline rather than by a key function that calls
            # Position.manhattan per agent: names are unique, so agents are never compared.
            x, y = pos.x, pos.y
            keyed = sorted((abs(a.position.x - x) + abs(a.position.y - y), a.name, a)
                           for a in found)
            return [entry[2] for entry in keyed]
        return found

    def agents_in_box(self, x0: int, y0: int, x1: int, y1: int) -> list[Agent]:
        """Everyone standing on cells x0 <= x <= x1, y0 <= y <= y1, in no particular order."""
        if x1 < x0 or y1 < y0:
            return []
        bx0, bx1 = x0 // BUCKET_SIZE, x1 // BUCKET_SIZE
        by0, by1 = y0 // BUCKET_SIZE, y1 // BUCKET_SIZE
        buckets, everyone = self._buckets, self._agents
        found = []
        if (bx1 - bx0 + 1) * (by1 - by0 + 1) <= len(buckets):
            # Loops written out, not a comprehension and a list of groups: this runs for
            # every perception, walk and journey step, and nearly always finds nobody.
            get = buckets.get
            for bx in range(bx0, bx1 + 1):
                for by in range(by0, by1 + 1):
                    group = get((bx, by))
                    if group:
                        for name in group:
                            agent = everyone[name]
                            p = agent.position
                            if x0 <= p.x <= x1 and y0 <= p.y <= y1:
                                found.append(agent)
            return found
        # A box wider than the occupied map: the occupied buckets, filtered as above
        # (one shared loop over a list of groups cost 2.4 M instructions a
        # 1,000-agent tick, measured with `bench instructions`).
        for (bx, by), group in buckets.items():
            if bx0 <= bx <= bx1 and by0 <= by <= by1:
                for name in group:
                    agent = everyone[name]
                    p = agent.position
                    if x0 <= p.x <= x1 and y0 <= p.y <= y1:
                        found.append(agent)
        return found

    def visible_to(self, name: str) -> list[Agent]:
        """Others the agent can see right now (vision radius, shorter at night)."""
        me = self.require(name)
        radius = self.world.vision_radius()
        return [a for a in self.get_nearby_agents(me.position, radius) if a.name != me.name]

    def can_see(self, viewer: str, other: str) -> bool:
        a, b = self.get_agent(viewer), self.get_agent(other)
        return a is not None and b is not None and a.name != b.name and self.world.visible(
            a.position, b.position
        )

    # ------------------------------------------------------------------ state

    def _put(self, agent: Agent) -> Agent:
        """Store a changed agent and note it for the storage layer."""
        self._store(agent)
        turn = collecting_now()  # what `changes` answers, one call fewer on every step
        (self.world.changes if turn is None else turn).agents.add(agent.name)
        return agent

    def _store(self, agent: Agent) -> None:
        """Hold `agent` and keep the bucket index true; every write comes through here.

        Most writes leave the agent in its bucket (a changed inventory, a step inside
        the same square), and then the index is left alone. Nothing reads a bucket's
        set in its own order (every query sorts), so leaving it as it is is the same.
        """
        name = agent.name
        old = self._agents.get(name)
        self._agents[name] = agent
        pos = agent.position
        tx, ty = pos.x // BUCKET_SIZE, pos.y // BUCKET_SIZE
        buckets = self._buckets
        if old is None:
            self._rank[name] = len(self._rank)
        else:
            was = old.position
            if was is pos:
                return
            hx, hy = was.x // BUCKET_SIZE, was.y // BUCKET_SIZE
            if hx == tx and hy == ty:
                return
            group = buckets[hx, hy]
            group.discard(name)
            if not group:
                del buckets[hx, hy]
        group = buckets.get((tx, ty))
        if group is None:
            buckets[tx, ty] = {name}
        else:
            group.add(name)

    def update_position(self, name: str, pos: Position) -> Agent:
        agent = self.require(name)
        if not self.world.is_passable(pos):
            raise AgentRuleError(f"({pos.x}, {pos.y}) cannot be stood on")
        return self._put(agent.with_position(pos))

    def move_agent(self, name: str, direction: Direction) -> Agent:
        """One step; AgentRuleError says what is in the way."""
        agent = self.require(name)
        reason = self.step_blocker(agent.position, direction)
        if reason:
            raise AgentRuleError(reason)
        return self._put(agent.with_position(agent.position.step(direction)))

    def step_checked(self, agent: Agent, direction: Direction) -> Agent:
        """Move an agent whose step the caller has just checked with step_blocker."""
        return self._put(agent.with_position(agent.position.step(direction)))

    def walked_to(self, agent: Agent, pos: Position) -> Agent:
        """Store an agent where a walk ended, every step of it checked by the caller (as
        step_blocker or WorldService.open_steps would): a walk of several steps is one
        write, not one per step."""
        return self._put(agent.with_position(pos))

    def step_blocker(self, pos: Position, direction: Direction) -> str | None:
        """Why a step is impossible, or None if it is fine."""
        if direction is _DOWN:
            return "down is where you already stand; choose north, south, east or west"
        refusal = self.world.step_refusal(pos, direction)
        if not refusal:
            return None
        if refusal == STEP_OFF_MAP:
            return f"the world ends to the {direction.value}"
        if refusal == STEP_IMPASSABLE:
            terrain = self.world.terrain_at(pos.step(direction)).value
            return f"{terrain} to the {direction.value} cannot be crossed"
        return f"a wall stands to the {direction.value}"

    def set_sleeping(self, name: str, sleeping: bool) -> Agent:
        return self._put(self.require(name).with_sleeping(sleeping))

    def set_last_active(self, name: str, tick: int) -> Agent:
        return self._put(self.require(name).with_last_active(tick))

    def record_meeting(self, a: str, b: str) -> bool:
        """Both now know each other; True if either had not known the other."""
        first, second = self.require(a), self.require(b)
        if first.name == second.name:
            return False
        new = second.name not in first.known_agents or first.name not in second.known_agents
        if new:
            self._put(first.with_known_agent(second.name))
            self._put(self.require(b).with_known_agent(first.name))
        return new

    # ------------------------------------------------------------------ inventory

    def set_inventory(self, name: str, inventory: Inventory) -> Agent:
        return self._put(self.require(name).with_inventory(inventory))

    def add_resource(self, name: str, resource: str, quantity: int) -> Agent:
        agent = self.require(name)
        return self._put(agent.with_inventory(agent.inventory.add_resource(resource, quantity)))

    def remove_resource(self, name: str, resource: str, quantity: int) -> Agent:
        agent = self.require(name)
        return self._put(
            agent.with_inventory(agent.inventory.remove_resource(resource, quantity))
        )

    def add_item(self, name: str, item: Item) -> Agent:
        agent = self.require(name)
        return self._put(agent.with_inventory(agent.inventory.add_item(item)))

    def remove_item(self, name: str, item_id: str) -> Agent:
        agent = self.require(name)
        return self._put(agent.with_inventory(agent.inventory.remove_item(item_id)))

    # ------------------------------------------------------------------ sensing

    def sense_others(self, name: str) -> list[SensedAgent]:
        """Agents this one has met, with a direction and a distance category, never a
        position: presence, not surveillance."""
        me = self.require(name)
        sensed = []
        for other in sorted(me.known_agents):
            them = self._agents.get(other)
            if them is None:
                continue
            distance = me.position.manhattan(them.position)
            sensed.append(SensedAgent(
                them.name, direction_towards(me.position, them.position), distance_bucket(distance)
            ))
        return sensed

    # ------------------------------------------------------------------ journeys

    def plan_path(self, start: Position, goal: Position) -> list[Position] | None:
        passable, blocked_east, blocked_south, masks = self.world.path_grid()
        return find_path(passable, blocked_east, blocked_south, start, goal, masks=masks)

    def start_journey(self, name: str, destination: Position) -> Journey:
        agent = self.require(name)
        if not self.world.in_bounds(destination):
            raise AgentRuleError(
                f"({destination.x}, {destination.y}) is outside the "
                f"{self.world.width}x{self.world.height} world"
            )
        if destination == agent.position:
            raise AgentRuleError("you are already there")
        if not self.world.is_passable(destination):
            raise AgentRuleError(
                f"{self.world.terrain_at(destination).value} at the destination cannot be "
                "stood on"
            )
        steps = self.plan_path(agent.position, destination)
        if steps is None:
            raise AgentRuleError("no way there could be found: water or walls are in the way")
        # Who is in view as a set: the unsorted look suffices (get_nearby_agents sorts).
        here, radius = agent.position, self.world.vision_radius()
        in_view = self.agents_in_box(here.x - radius, here.y - radius,
                                     here.x + radius, here.y + radius) if radius >= 0 else ()
        journey = Journey(destination, (here, *steps),
                          seen=frozenset(a.name for a in in_view if a.name != agent.name))
        self._put(agent.with_journey(journey))
        return journey

    def advance_journey(self, name: str) -> tuple[Agent, bool, str | None]:
        """Walk one cell along the journey: (agent, arrived, why it stopped early or None).

        If the next cell has become blocked since the path was planned (a wall went
        up), the journey ends where the agent stands, with the reason.
        """
        agent = self.require(name)
        journey = agent.journey
        if journey is None:
            raise AgentRuleError(f"{agent.name} is not on a journey")
        nxt = journey.next_position
        if nxt is None:
            return self._put(agent.with_journey(None)), True, None
        direction = direction_towards(agent.position, nxt)
        reason = self.step_blocker(agent.position, direction)
        if reason:
            return self._put(agent.with_journey(None)), False, reason
        journey = journey.advanced()
        arrived = journey.is_complete
        moved = agent.with_position(nxt).with_journey(None if arrived else journey)
        return self._put(moved), arrived, None

    def interrupt_journey(self, name: str) -> Agent:
        return self._put(self.require(name).with_journey(None))

    def update_journey(self, name: str, journey: Journey) -> Agent:
        """Replace the journey under way (same path; what the traveller last saw)."""
        agent = self.require(name)
        if agent.journey is None or agent.journey.path is not journey.path:
            raise AgentRuleError(f"{agent.name} is not on that journey")
        return self._put(agent.with_journey(journey))

    # ------------------------------------------------------------------ homes

    def ensure_home(self, name: str, status: str) -> None:
        if self.homes is not None:
            self.homes.create(self.require(name).name, status)

    def write_status(self, name: str, status: str) -> None:
        if self.homes is not None:
            self.homes.write_status(self.require(name).name, status)
