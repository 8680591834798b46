"""Inventories, journeys and agents."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.agent import Agent, Inventory, InventoryError, Journey
from core.objects import Item
from core.types import AgentName, Position

EMBER = AgentName("Ember")
RIVER = AgentName("River")


# --- Inventory: resources ---------------------------------------------------------


def test_empty_inventory() -> None:
    inv = Inventory()
    assert inv.is_empty
    assert inv.count("wood") == 0
    assert not inv.has("wood")
    assert inv.has("wood", 0)
    assert dict(inv.stacks) == {} and inv.items == ()


def test_add_and_remove_resources() -> None:
    inv = Inventory().add_resource("wood", 3).add_resource("stone", 2).add_resource("wood", 4)
    assert inv.count("wood") == 7
    assert inv.count("stone") == 2
    assert inv.has("wood", 7) and not inv.has("wood", 8)
    less = inv.remove_resource("wood", 5)
    assert less.count("wood") == 2
    assert inv.count("wood") == 7  # the original is untouched
    assert not less.is_empty


def test_zero_counts_vanish() -> None:
    inv = Inventory().add_resource("wood", 3).remove_resource("wood", 3)
    assert "wood" not in inv.stacks
    assert inv.is_empty
    assert inv == Inventory()
    assert dict(Inventory({"wood": 0, "stone": 1}).stacks) == {"stone": 1}


def test_stacks_are_sorted_and_read_only() -> None:
    inv = Inventory({"wood": 1, "clay": 2, "stone": 3})
    assert list(inv.stacks) == ["clay", "stone", "wood"]
    with pytest.raises(TypeError):
        inv.stacks["wood"] = 9  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        inv.items = ()  # type: ignore[misc]


def test_stacks_are_copied_from_the_source() -> None:
    source = {"wood": 1}
    inv = Inventory(source)
    source["wood"] = 50
    assert inv.count("wood") == 1


def test_removing_too_much_names_the_resource() -> None:
    inv = Inventory().add_resource("wood", 2)
    with pytest.raises(InventoryError, match="wood") as info:
        inv.remove_resource("wood", 3)
    assert "3" in str(info.value) and "2" in str(info.value)
    with pytest.raises(InventoryError, match="flint"):
        inv.remove_resource("flint", 1)


def test_inventory_error_is_a_value_error() -> None:
    assert issubclass(InventoryError, ValueError)


@pytest.mark.parametrize("quantity", [0, -1])
def test_quantities_must_be_positive(quantity: int) -> None:
    inv = Inventory({"wood": 5})
    with pytest.raises(InventoryError, match="positive"):
        inv.add_resource("wood", quantity)
    with pytest.raises(InventoryError, match="positive"):
        inv.remove_resource("wood", quantity)


def test_stack_validation() -> None:
    with pytest.raises(InventoryError, match="negative"):
        Inventory({"wood": -1})
    with pytest.raises(ValueError, match="invalid item type"):
        Inventory({"Wood": 1})
    with pytest.raises(ValueError, match="invalid item type"):
        Inventory().add_resource("big rock", 1)
    with pytest.raises(ValueError, match="invalid item type"):
        Inventory({"wood\n": 1})


# --- Inventory: items -----------------------------------------------------------


def test_items_add_find_remove() -> None:
    axe1 = Item.unique("stone_axe", "i1")
    rope = Item.unique("rope", "i2")
    axe2 = Item.unique("stone_axe", "i3", ("sharp",))
    inv = Inventory().add_item(axe1).add_item(rope).add_item(axe2)
    assert inv.items == (axe1, rope, axe2)
    assert inv.find_item("stone_axe") is axe1  # oldest first
    assert inv.find_item("rope") is rope
    assert inv.find_item("basket") is None
    assert not inv.is_empty

    after = inv.remove_item("i1")
    assert after.items == (rope, axe2)
    assert after.find_item("stone_axe") is axe2
    assert inv.items == (axe1, rope, axe2)
    assert after.remove_item("i2").remove_item("i3").is_empty


def test_remove_missing_item() -> None:
    inv = Inventory().add_item(Item.unique("rope", "i1"))
    with pytest.raises(InventoryError, match="'i9'"):
        inv.remove_item("i9")
    with pytest.raises(InventoryError):
        Inventory().remove_item("i1")


def test_duplicate_item_ids_rejected() -> None:
    inv = Inventory().add_item(Item.unique("rope", "i1"))
    with pytest.raises(InventoryError, match="share one id"):
        inv.add_item(Item.unique("stone_axe", "i1"))
    with pytest.raises(InventoryError, match="share one id"):
        Inventory(items=(Item.unique("rope", "x"), Item.unique("rope", "x")))


def test_items_and_resources_are_independent() -> None:
    inv = Inventory({"wood": 2}).add_item(Item.unique("rope", "i1"))
    assert inv.remove_resource("wood", 2).items == (Item.unique("rope", "i1"),)
    assert inv.remove_item("i1").count("wood") == 2
    assert Inventory(items=[Item.unique("rope", "i1")]).items == (  # type: ignore[arg-type]
        Item.unique("rope", "i1"),
    )


# --- Inventory: model-based property ----------------------------------------------

resource_names = st.sampled_from(["wood", "stone", "clay", "fiber"])
inventory_ops = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), resource_names, st.integers(1, 6)),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(inventory_ops)
def test_inventory_matches_a_dict_model(sequence: list) -> None:
    inv = Inventory()
    model: dict[str, int] = {}
    for op, name, qty in sequence:
        if op == "add":
            inv = inv.add_resource(name, qty)
            model[name] = model.get(name, 0) + qty
        elif model.get(name, 0) >= qty:
            inv = inv.remove_resource(name, qty)
            model[name] -= qty
            if model[name] == 0:
                del model[name]
        else:
            with pytest.raises(InventoryError, match=name):
                inv.remove_resource(name, qty)
        assert dict(inv.stacks) == model
        for n in ["wood", "stone", "clay", "fiber"]:
            assert inv.count(n) == model.get(n, 0)
        assert all(c > 0 for c in inv.stacks.values())
        assert inv.is_empty == (not model)


# --- Journey --------------------------------------------------------------------

PATH = (Position(0, 0), Position(1, 0), Position(1, 1), Position(2, 1))


def test_journey_walkthrough() -> None:
    j = Journey(Position(2, 1), PATH)
    assert j.current == Position(0, 0)
    assert j.next_position == Position(1, 0)
    assert j.remaining == 3
    assert not j.is_complete

    j1 = j.advanced()
    assert j.progress == 0  # the original is untouched
    assert (j1.progress, j1.current, j1.next_position, j1.remaining) == (
        1,
        Position(1, 0),
        Position(1, 1),
        2,
    )
    made = Journey(j.destination, j.path, 1)  # the checked way gives the same value
    assert j1 == made and hash(j1) == hash(made) and j1.path is j.path
    j3 = j1.advanced().advanced()
    assert j3.is_complete
    assert j3.current == j3.destination == Position(2, 1)
    assert j3.remaining == 0
    assert j3.next_position is None
    with pytest.raises(ValueError, match="already complete"):
        j3.advanced()


def test_single_cell_journey_is_complete() -> None:
    j = Journey(Position(4, 4), (Position(4, 4),))
    assert j.is_complete and j.remaining == 0 and j.next_position is None
    with pytest.raises(ValueError, match="already complete"):
        j.advanced()


def test_journey_path_becomes_a_tuple() -> None:
    j = Journey(Position(1, 0), [Position(0, 0), Position(1, 0)])  # type: ignore[arg-type]
    assert isinstance(j.path, tuple)


def test_journey_validation() -> None:
    with pytest.raises(ValueError, match="needs a path"):
        Journey(Position(0, 0), ())
    with pytest.raises(ValueError, match="end at its destination"):
        Journey(Position(5, 5), PATH)
    with pytest.raises(ValueError, match="jumps"):
        Journey(Position(2, 0), (Position(0, 0), Position(2, 0)))
    with pytest.raises(ValueError, match="jumps"):
        Journey(Position(1, 1), (Position(0, 0), Position(1, 1)))  # diagonal
    with pytest.raises(ValueError, match="jumps"):
        Journey(Position(0, 0), (Position(0, 0), Position(0, 0)))  # standing still
    with pytest.raises(ValueError, match="outside"):
        Journey(Position(2, 1), PATH, progress=4)
    with pytest.raises(ValueError, match="outside"):
        Journey(Position(2, 1), PATH, progress=-1)
    assert Journey(Position(2, 1), PATH, progress=3).is_complete


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([(0, 1), (0, -1), (1, 0), (-1, 0)]), min_size=0, max_size=15))
def test_walking_a_journey_visits_every_cell(steps: list) -> None:
    path = [Position(0, 0)]
    for dx, dy in steps:
        path.append(path[-1].offset(dx, dy))
    j = Journey(path[-1], tuple(path))
    visited = [j.current]
    while not j.is_complete:
        assert j.remaining == len(path) - 1 - j.progress
        nxt = j.next_position
        j = j.advanced()
        assert j.current == nxt
        visited.append(j.current)
    assert visited == path


# --- Agent ----------------------------------------------------------------------


def make_agent(**kw: object) -> Agent:
    args: dict[str, object] = {
        "name": EMBER,
        "model_id": "claude-test",
        "personality": "Curious.",
        "position": Position(1, 1),
    }
    args.update(kw)
    return Agent(**args)  # type: ignore[arg-type]


def test_agent_defaults() -> None:
    a = make_agent()
    assert a.inventory == Inventory()
    assert a.journey is None
    assert not a.is_sleeping
    assert a.known_agents == frozenset()
    assert a.last_active_tick == 0
    assert a.session_id is None


def test_agent_with_methods_return_new_agents() -> None:
    a = make_agent()
    inv = Inventory({"wood": 2})
    journey = Journey(Position(1, 2), (Position(1, 1), Position(1, 2)))
    changes = [
        (a.with_position(Position(5, 5)), "position", Position(5, 5)),
        (a.with_inventory(inv), "inventory", inv),
        (a.with_journey(journey), "journey", journey),
        (a.with_sleeping(True), "is_sleeping", True),
        (a.with_known_agent(RIVER), "known_agents", frozenset({RIVER})),
        (a.with_last_active(42), "last_active_tick", 42),
        (a.with_session("sess-1"), "session_id", "sess-1"),
    ]
    for new, attr, value in changes:
        assert new is not a
        assert getattr(new, attr) == value, attr
        assert new.name == a.name and new.model_id == a.model_id
    assert a == make_agent()  # the original never changes
    assert a.with_journey(journey).with_journey(None).journey is None
    assert a.with_session("s").with_session(None).session_id is None


def test_known_agents_accumulate() -> None:
    a = make_agent().with_known_agent(RIVER).with_known_agent(AgentName("Moss"))
    assert a.known_agents == frozenset({RIVER, AgentName("Moss")})
    assert a.with_known_agent(RIVER).known_agents == a.known_agents


def test_known_agents_exclude_self() -> None:
    with pytest.raises(ValueError, match="know"):
        make_agent(known_agents=frozenset({EMBER}))
    with pytest.raises(ValueError, match="know"):
        make_agent().with_known_agent(EMBER)


def test_known_agents_coerced_to_frozenset() -> None:
    a = make_agent(known_agents=[RIVER, RIVER])
    assert a.known_agents == frozenset({RIVER})
    assert isinstance(a.known_agents, frozenset)


@pytest.mark.parametrize("name", ["", "1x", "has space", "a" * 33, "x/y", "Ember\n"])
def test_agent_invalid_names_rejected(name: str) -> None:
    with pytest.raises(ValueError, match="invalid agent name"):
        make_agent(name=name)


def test_agent_needs_model_id() -> None:
    with pytest.raises(ValueError, match="model id"):
        make_agent(model_id="")


def test_agent_is_frozen() -> None:
    a = make_agent()
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.position = Position(0, 0)  # type: ignore[misc]


def test_agents_and_inventories_are_hashable_by_value() -> None:
    def make(wood: int) -> Agent:
        return Agent(
            name=AgentName("Ember"), model_id="m", personality="p", position=Position(1, 1),
            inventory=Inventory({"wood": wood}),
        )

    assert hash(make(2)) == hash(make(2))
    assert len({make(2), make(2), make(3)}) == 2
    assert Inventory({"wood": 1, "clay": 2}) in {Inventory({"clay": 2, "wood": 1})}
