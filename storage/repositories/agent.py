"""Agents and their inventories (stacks and unique items)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.agent import Agent, Inventory, Journey
from core.objects import Item
from core.types import AgentName, Position
from storage.repositories.base import (
    Repository,
    decode_position,
    dumps,
    encode_position,
    loads,
)

_AGENT_COLUMNS = (
    "name, model_id, personality, x, y, is_sleeping, journey, known_agents, "
    "last_active_tick, session_id"
)


_UPSERT_AGENT = f"""
    INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET model_id = excluded.model_id,
        personality = excluded.personality, x = excluded.x, y = excluded.y,
        is_sleeping = excluded.is_sleeping, journey = excluded.journey,
        known_agents = excluded.known_agents,
        last_active_tick = excluded.last_active_tick,
        session_id = excluded.session_id
"""


def _agent_row(agent: Agent) -> tuple:
    journey = None if agent.journey is None else _journey_text(agent.journey)
    return (
        agent.name,
        agent.model_id,
        agent.personality,
        agent.position.x,
        agent.position.y,
        int(agent.is_sleeping),
        journey,
        _known_text(agent.known_agents),
        agent.last_active_tick,
        agent.session_id,
    )


class AgentRepository(Repository):
    async def save_agent(self, agent: Agent) -> None:
        """Insert or replace an agent together with its whole inventory, atomically."""
        async with self.db.transaction():
            await self.db.execute(_UPSERT_AGENT, _agent_row(agent))
            await self.save_inventory(agent.name, agent.inventory)

    async def save_agents(
        self, agents: Sequence[Agent], *, inventory_stored: Collection[str] = ()
    ) -> None:
        """Insert or replace many agents and their inventories in a handful of statements.

        The engine's commit writes every agent that acted in a batch of turns here:
        one executemany per table instead of five round trips per agent. Agents
        named in `inventory_stored` have exactly their inventory in the database
        already (the caller knows: it committed it), so it is not rewritten; most
        turns and every journey step change where an agent is, not what it carries.
        """
        if not agents:
            return
        holders = [a for a in agents if a.name not in inventory_stored]
        names = [(a.name,) for a in holders]
        async with self.db.transaction():
            await self.db.executemany(_UPSERT_AGENT, [_agent_row(a) for a in agents])
            if not holders:
                return
            await self.db.executemany("DELETE FROM inventory_stacks WHERE agent_name = ?", names)
            await self.db.executemany("DELETE FROM inventory_items WHERE agent_name = ?", names)
            await self.db.executemany(
                "INSERT INTO inventory_stacks (agent_name, resource, quantity) VALUES (?, ?, ?)",
                [(a.name, res, qty) for a in holders for res, qty in a.inventory.stacks.items()],
            )
            await self.db.executemany(
                "INSERT INTO inventory_items (id, agent_name, slot, item_type, properties) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (item.id, a.name, slot, item.item_type, dumps(list(item.properties)))
                    for a in holders
                    for slot, item in enumerate(a.inventory.items)
                ],
            )

    async def set_models(self, models: Sequence[tuple[str, str]]) -> None:
        """(agent, model id): who now speaks through which model, in one transaction."""
        if not models:
            return
        async with self.db.transaction():
            await self.db.executemany("UPDATE agents SET model_id = ? WHERE name = ?",
                                      [(model, name) for name, model in models])

    async def save_inventory(self, name: AgentName, inventory: Inventory) -> None:
        async with self.db.transaction():
            await self.db.execute("DELETE FROM inventory_stacks WHERE agent_name = ?", (name,))
            await self.db.execute("DELETE FROM inventory_items WHERE agent_name = ?", (name,))
            await self.db.executemany(
                "INSERT INTO inventory_stacks (agent_name, resource, quantity) VALUES (?, ?, ?)",
                [(name, res, qty) for res, qty in inventory.stacks.items()],
            )
            await self.db.executemany(
                "INSERT INTO inventory_items (id, agent_name, slot, item_type, properties) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (item.id, name, slot, item.item_type, dumps(list(item.properties)))
                    for slot, item in enumerate(inventory.items)
                ],
            )

    async def get_agent(self, name: AgentName | str) -> Agent | None:
        row = await self.db.fetchone(f"SELECT {_AGENT_COLUMNS} FROM agents WHERE name = ?", (name,))
        if row is None:
            return None
        return _agent(row, await self.get_inventory(AgentName(row[0])))

    async def get_all_agents(self) -> list[Agent]:
        rows = await self.db.fetchall(f"SELECT {_AGENT_COLUMNS} FROM agents ORDER BY name")
        inventories = await self._all_inventories()
        return [_agent(r, inventories.get(r[0], Inventory())) for r in rows]

    async def get_agents_in(self, x0: int, y0: int, x1: int, y1: int) -> list[Agent]:
        """Agents with x0 <= x <= x1 and y0 <= y <= y1."""
        rows = await self.db.fetchall(
            f"SELECT {_AGENT_COLUMNS} FROM agents WHERE x BETWEEN ? AND ? AND y BETWEEN ? AND ? "
            "ORDER BY name",
            (x0, x1, y0, y1),
        )
        return [_agent(r, await self.get_inventory(AgentName(r[0]))) for r in rows]

    async def get_inventory(self, name: AgentName) -> Inventory:
        stacks = await self.db.fetchall(
            "SELECT resource, quantity FROM inventory_stacks WHERE agent_name = ?", (name,)
        )
        items = await self.db.fetchall(
            "SELECT id, item_type, properties FROM inventory_items WHERE agent_name = ? "
            "ORDER BY slot",
            (name,),
        )
        return Inventory(
            dict(stacks), tuple(Item(i, t, tuple(loads(p))) for i, t, p in items)
        )

    async def _all_inventories(self) -> dict[str, Inventory]:
        stacks: dict[str, dict[str, int]] = {}
        for owner, res, qty in await self.db.fetchall(
            "SELECT agent_name, resource, quantity FROM inventory_stacks"
        ):
            stacks.setdefault(owner, {})[res] = qty
        items: dict[str, list[Item]] = {}
        for owner, iid, itype, props in await self.db.fetchall(
            "SELECT agent_name, id, item_type, properties FROM inventory_items "
            "ORDER BY agent_name, slot"
        ):
            items.setdefault(owner, []).append(Item(iid, itype, tuple(loads(props))))
        return {
            owner: Inventory(stacks.get(owner, {}), tuple(items.get(owner, ())))
            for owner in set(stacks) | set(items)
        }

    async def delete_agent(self, name: AgentName) -> bool:
        async with self.db.transaction():
            return bool(await self.db.execute("DELETE FROM agents WHERE name = ?", (name,)))

    async def count_agents(self) -> int:
        return await self._count("agents")


_PATHS: dict[int, tuple[tuple[Position, ...], str]] = {}
"""id(path) -> (path, its JSON): a journey keeps one path tuple from start to end,
and is saved at every step, so the path is encoded once rather than every tick."""
_PATHS_KEPT = 8192


_KNOWN: dict[int, tuple[frozenset[str], str]] = {}
"""id(known_agents) -> (that set, its JSON): an agent keeps the same set until it
meets someone new, and is saved at every step."""


def _known_text(known: frozenset[str]) -> str:
    cached = _KNOWN.get(id(known))
    if cached is None or cached[0] is not known:
        if len(_KNOWN) >= _PATHS_KEPT:
            _KNOWN.clear()
        cached = _KNOWN[id(known)] = (known, dumps(sorted(known)))
    return cached[1]


def _journey_text(journey: Journey) -> str:
    """The journey as canonical JSON (destination, path as [x, y] pairs, progress,
    and the names in view when there are any), without encoding the path again at
    every step."""
    path = journey.path
    cached = _PATHS.get(id(path))
    if cached is None or cached[0] is not path:
        if len(_PATHS) >= _PATHS_KEPT:
            _PATHS.clear()
        cached = _PATHS[id(path)] = (path, dumps([encode_position(p) for p in path]))
    dest = journey.destination
    seen = f',"seen":{_known_text(journey.seen)}' if journey.seen else ""
    return (f'{{"destination":[{dest.x},{dest.y}],"path":{cached[1]},'
            f'"progress":{journey.progress}{seen}}}')


def _decode_journey(raw: dict) -> Journey:
    return Journey(
        destination=decode_position(raw["destination"]),
        path=tuple(decode_position(p) for p in raw["path"]),
        progress=int(raw["progress"]),
        seen=frozenset(str(n) for n in raw.get("seen", ())),
    )


def _agent(row: tuple, inventory: Inventory) -> Agent:
    name, model_id, personality, x, y, sleeping, journey, known, last_active, session = row
    return Agent(
        name=AgentName(name),
        model_id=model_id,
        personality=personality,
        position=Position(x, y),
        inventory=inventory,
        journey=None if journey is None else _decode_journey(loads(journey)),
        is_sleeping=bool(sleeping),
        known_agents=frozenset(AgentName(k) for k in loads(known)),
        last_active_tick=last_active,
        session_id=session,
    )
