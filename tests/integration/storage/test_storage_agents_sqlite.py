"""AgentRepository against a real world.db: agents with inventories, journeys and more."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.agent import Agent, Inventory, Journey
from core.objects import Item
from core.types import AgentName, Position
from storage import Storage


def _journey() -> Journey:
    path = (Position(2, 2), Position(3, 2), Position(3, 3), Position(3, 4))
    return Journey(destination=Position(3, 4), path=path, progress=2)


def _ember() -> Agent:
    inventory = Inventory(
        {"wood": 12, "stone": 3, "berries": 1},
        (
            Item("item-z", "rope", ("long", "frayed")),
            Item("item-a", "axe", ("sharp", "oak handle", "carved: E")),
            Item("item-m", "lantern"),
        ),
    )
    return Agent(
        name=AgentName("Ember"),
        model_id="claude-test-1",
        personality="Curious and kind; likes 🌲 and quiet mornings.",
        position=Position(3, 3),
        inventory=inventory,
        journey=_journey(),
        is_sleeping=True,
        known_agents=frozenset({AgentName("Ash"), AgentName("Birch")}),
        last_active_tick=99,
        session_id="sess-123",
    )


def _plain(name: str, x: int, y: int) -> Agent:
    return Agent(AgentName(name), "model", "plain", Position(x, y))


async def _inventory_rows(storage: Storage, name: str) -> tuple[int, int]:
    (stacks,) = await storage.db.fetchone(
        "SELECT COUNT(*) FROM inventory_stacks WHERE agent_name = ?", (name,)
    )
    (items,) = await storage.db.fetchone(
        "SELECT COUNT(*) FROM inventory_items WHERE agent_name = ?", (name,)
    )
    return stacks, items


async def test_agent_round_trips_with_every_field(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    ember = _ember()
    await storage.agents.save_agent(ember)

    loaded = await storage.agents.get_agent("Ember")
    assert loaded == ember
    async with reopen() as other:
        again = await other.agents.get_agent(AgentName("Ember"))
    assert again == ember
    assert again is not None
    # Field by field, so a failure says what was lost.
    assert [i.id for i in again.inventory.items] == ["item-z", "item-a", "item-m"]
    assert again.inventory.items[1].properties == ("sharp", "oak handle", "carved: E")
    assert dict(again.inventory.stacks) == {"berries": 1, "stone": 3, "wood": 12}
    assert again.journey == _journey()
    assert again.journey is not None and again.journey.current == Position(3, 3)
    assert again.is_sleeping is True
    assert again.known_agents == {"Ash", "Birch"}
    assert again.last_active_tick == 99
    assert again.session_id == "sess-123"


async def test_agent_with_defaults_round_trips(storage: Storage) -> None:
    agent = _plain("Ash", -4, 0)
    await storage.agents.save_agent(agent)
    loaded = await storage.agents.get_agent("Ash")
    assert loaded == agent
    assert loaded is not None
    assert loaded.journey is None and loaded.session_id is None
    assert loaded.inventory.is_empty and loaded.is_sleeping is False


async def test_missing_agent_is_none(storage: Storage) -> None:
    assert await storage.agents.get_agent("Nobody") is None


async def test_saving_again_replaces_fields_and_the_whole_inventory(storage: Storage) -> None:
    ember = _ember()
    await storage.agents.save_agent(ember)
    changed = (
        ember.with_position(Position(3, 4))
        .with_journey(None)
        .with_sleeping(False)
        .with_session(None)
        .with_last_active(100)
        .with_known_agent(AgentName("Cedar"))
        .with_inventory(Inventory({"wood": 1}, (Item("item-new", "torch", ("lit",)),)))
    )
    await storage.agents.save_agent(changed)

    assert await storage.agents.get_agent("Ember") == changed
    assert await _inventory_rows(storage, "Ember") == (1, 1)
    assert await storage.agents.count_agents() == 1


async def test_item_order_is_preserved_when_reordered(storage: Storage) -> None:
    items = tuple(Item(f"id-{n}", "pebble", (str(n),)) for n in (5, 1, 4, 2, 3))
    agent = _plain("Birch", 0, 0).with_inventory(Inventory({}, items))
    await storage.agents.save_agent(agent)
    assert (await storage.agents.get_agent("Birch")).inventory.items == items  # type: ignore[union-attr]

    reordered = agent.with_inventory(Inventory({}, tuple(reversed(items))))
    await storage.agents.save_agent(reordered)
    loaded = await storage.agents.get_agent("Birch")
    assert loaded is not None
    assert [i.id for i in loaded.inventory.items] == ["id-3", "id-2", "id-4", "id-1", "id-5"]


async def test_get_all_agents_returns_everyone_sorted_with_their_inventories(
    storage: Storage,
) -> None:
    ember = _ember()
    cedar = _plain("Cedar", 9, 9).with_inventory(Inventory({"clay": 2}))
    ash = _plain("Ash", 1, 1).with_inventory(Inventory({}, (Item("ash-1", "flute"),)))
    bare = _plain("Dune", 0, 5)
    for agent in (ember, cedar, ash, bare):
        await storage.agents.save_agent(agent)

    assert await storage.agents.get_all_agents() == [ash, cedar, bare, ember]
    assert await storage.agents.count_agents() == 4


async def test_get_agents_in_is_inclusive_on_every_side(storage: Storage) -> None:
    spots = {
        "Corner": (2, 2), "Far": (5, 4), "Mid": (3, 3),
        "Left": (1, 3), "Right": (6, 3), "Above": (3, 1), "Below": (3, 5),
    }
    for name, (x, y) in spots.items():
        await storage.agents.save_agent(
            _plain(name, x, y).with_inventory(Inventory({"wood": len(name)}))
        )

    found = await storage.agents.get_agents_in(2, 2, 5, 4)
    assert [a.name for a in found] == ["Corner", "Far", "Mid"]
    assert [a.inventory.count("wood") for a in found] == [6, 3, 3]
    assert await storage.agents.get_agents_in(10, 10, 20, 20) == []


async def test_deleting_an_agent_cascades_to_its_inventory_rows(storage: Storage) -> None:
    ember = _ember()
    other = _plain("Ash", 0, 0).with_inventory(
        Inventory({"wood": 1}, (Item("ash-item", "cup"),))
    )
    await storage.agents.save_agent(ember)
    await storage.agents.save_agent(other)
    assert await _inventory_rows(storage, "Ember") == (3, 3)

    assert await storage.agents.delete_agent(AgentName("Ember")) is True
    assert await storage.agents.delete_agent(AgentName("Ember")) is False

    assert await storage.agents.get_agent("Ember") is None
    assert await _inventory_rows(storage, "Ember") == (0, 0)
    assert await storage.agents.get_agent("Ash") == other
    assert await _inventory_rows(storage, "Ash") == (1, 1)


async def test_inventory_rows_cannot_point_at_a_missing_agent(storage: Storage) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        async with storage.db.transaction():
            await storage.db.execute(
                "INSERT INTO inventory_stacks (agent_name, resource, quantity) VALUES (?, ?, ?)",
                ("Ghost", "wood", 1),
            )
    assert await _inventory_rows(storage, "Ghost") == (0, 0)


async def test_a_failed_save_leaves_the_stored_agent_untouched(storage: Storage) -> None:
    """save_agent is atomic: a clash in the inventory undoes the agent row too."""
    ash = _plain("Ash", 0, 0).with_inventory(Inventory({}, (Item("shared-id", "cup"),)))
    ember = _ember()
    await storage.agents.save_agent(ash)
    await storage.agents.save_agent(ember)

    clash = ember.with_position(Position(50, 50)).with_inventory(
        Inventory({"gold": 1}, (Item("shared-id", "cup"),))
    )
    with pytest.raises(sqlite3.IntegrityError):
        await storage.agents.save_agent(clash)

    assert await storage.agents.get_agent("Ember") == ember
    assert await storage.agents.get_agent("Ash") == ash


# --- property: any agent round-trips ----------------------------------------------------

_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,31}", fullmatch=True)
_types = st.from_regex(r"[a-z][a-z0-9_]{0,47}", fullmatch=True)
# Any Unicode a language model could produce (lone surrogates cannot be UTF-8 at all).
_chars = st.characters(blacklist_categories=("Cs",))
_text = st.text(_chars, max_size=40)
_coords = st.integers(min_value=-(2**40), max_value=2**40)


@st.composite
def _inventories(draw: st.DrawFn) -> Inventory:
    stacks = draw(st.dictionaries(_types, st.integers(0, 2**31), max_size=6))
    ids = draw(st.lists(st.text(_chars, min_size=1, max_size=12), unique=True, max_size=6))
    items = tuple(
        Item(i, draw(_types), tuple(draw(st.lists(_text, max_size=4)))) for i in ids
    )
    return Inventory(stacks, items)


@st.composite
def _agents(draw: st.DrawFn) -> Agent:
    name = draw(_names)
    known = draw(st.frozensets(_names.filter(lambda n: n != name), max_size=4))
    start = Position(draw(_coords), draw(_coords))
    journey = None
    if draw(st.booleans()):
        steps = draw(st.lists(st.sampled_from([(0, 1), (0, -1), (1, 0), (-1, 0)]),
                              min_size=0, max_size=6))
        path = [start]
        for dx, dy in steps:
            path.append(path[-1].offset(dx, dy))
        journey = Journey(path[-1], tuple(path), draw(st.integers(0, len(path) - 1)))
    return Agent(
        name=AgentName(name),
        model_id=draw(st.text(_chars, min_size=1, max_size=20)),
        personality=draw(_text),
        position=start if journey is None else journey.current,
        inventory=draw(_inventories()),
        journey=journey,
        is_sleeping=draw(st.booleans()),
        known_agents=frozenset(AgentName(k) for k in known),
        last_active_tick=draw(st.integers(0, 2**40)),
        session_id=draw(st.none() | st.text(_chars, max_size=30)),
    )


async def _save_and_load(agents: list[Agent]) -> tuple[list[Agent | None], list[Agent]]:
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp)) as store:
            for agent in agents:
                await store.agents.save_agent(agent)
        async with Storage(Path(tmp), create=False) as fresh:
            singles = [await fresh.agents.get_agent(a.name) for a in agents]
            everyone = await fresh.agents.get_all_agents()
    return singles, everyone


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(agent=_agents(), second_inventory=_inventories())
def test_any_agent_round_trips_through_a_fresh_file(
    agent: Agent, second_inventory: Inventory
) -> None:
    replaced = agent.with_inventory(second_inventory)
    singles, everyone = asyncio.run(_save_and_load([agent]))
    assert singles == [agent]
    assert everyone == [agent]

    # Saving the same agent twice keeps only the second inventory.
    singles, everyone = asyncio.run(_save_and_load([agent, replaced]))
    assert singles == [replaced, replaced]
    assert everyone == [replaced]


async def test_an_inventory_the_caller_says_is_stored_is_left_alone(storage: Storage) -> None:
    ember = _ember()
    await storage.agents.save_agents([ember])
    # Moved, carrying the same things: the caller vouches for the stored inventory.
    moved = ember.with_position(Position(3, 4))
    await storage.db.execute("DELETE FROM inventory_items WHERE agent_name = 'Ember'")
    await storage.agents.save_agents([moved], inventory_stored={"Ember"})
    assert await _inventory_rows(storage, "Ember") == (3, 0)  # untouched, not rewritten
    assert (await storage.agents.get_agent(AgentName("Ember"))).position == Position(3, 4)

    await storage.agents.save_agents([moved])  # no such word: written in full
    assert await storage.agents.get_agent(AgentName("Ember")) == moved


async def test_a_journey_is_stored_as_canonical_json_at_every_step(storage: Storage) -> None:
    journey = _journey()
    for step in (journey, journey.advanced()):
        await storage.agents.save_agents([_plain("Ash", 3, 3).with_journey(step)])
        (text,) = await storage.db.fetchone("SELECT journey FROM agents WHERE name = 'Ash'")
        expected = json.dumps(
            {"destination": [3, 4], "path": [[p.x, p.y] for p in step.path],
             "progress": step.progress},
            sort_keys=True, separators=(",", ":"),
        )
        assert text == expected
        assert (await storage.agents.get_agent(AgentName("Ash"))).journey == step


async def test_who_a_traveller_last_saw_is_kept_with_its_journey(storage: Storage) -> None:
    journey = _journey().with_seen(frozenset({"Birch", "Ash"}))
    await storage.agents.save_agents([_plain("Cedar", 3, 3).with_journey(journey)])
    (text,) = await storage.db.fetchone("SELECT journey FROM agents WHERE name = 'Cedar'")
    assert text.endswith(',"progress":2,"seen":["Ash","Birch"]}')
    assert (await storage.agents.get_agent(AgentName("Cedar"))).journey == journey
