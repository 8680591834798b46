"""The offline mind's small parts: random source, memory, recipe keys, the view of cells."""

from __future__ import annotations

import json

import pytest

from adapters.offline_mind import crafts
from adapters.offline_mind.memory import (
    MAX_FAILED,
    MAX_SIGNS,
    OBVIOUS_IDEAS,
    Memory,
    capped,
)
from adapters.offline_mind.rng import TurnRandom, name_key
from adapters.offline_mind.view import View
from core.terrain import Terrain
from tests.unit.adapters.offline_mind.conftest import cells_around, perceive

# ------------------------------------------------------------------ random source


def draws(seed: int, agent: str, tick: int, n: int = 20) -> list[int]:
    rng = TurnRandom(seed, name_key(agent), tick)
    return [rng.next64() for _ in range(n)]


def test_random_source_depends_only_on_seed_agent_and_tick() -> None:
    assert draws(7, "Ember", 3) == draws(7, "Ember", 3)
    others = [draws(8, "Ember", 3), draws(7, "Sage", 3), draws(7, "Ember", 4)]
    assert all(o != draws(7, "Ember", 3) for o in others)
    assert name_key("Ember") == name_key("Ember") != name_key("ember")


def test_random_source_draws_stay_in_range() -> None:
    rng = TurnRandom(1, name_key("River"), 9)
    values = [rng.random() for _ in range(2000)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert 0.4 < sum(values) / len(values) < 0.6
    assert {rng.below(3) for _ in range(200)} == {0, 1, 2}
    assert {rng.between(2, 4) for _ in range(200)} == {2, 3, 4}
    with pytest.raises(ValueError):
        rng.below(0)
    with pytest.raises(ValueError):
        rng.choice(())


# ------------------------------------------------------------------ memory


FULL = Memory.of(
    anchor=(1, 2), haunt="the Spring", home=(3, 4), heading="west", target=("the Spring", 9, 9),
    visited=("the Spring",), recipes=(("work:wood:split", "plank"),), ideas=("work:wood:carve",),
    failed=("work:stone:weave", "work:stick:*"), read=((5, 5),), wrote=((6, 6),),
    named=(("Quiet Grove", 7, 7),), met=(("Sage", 12),), seen=("Sage", 8, 8, 12), lines=2,
    journal_day=3, diary=("built a shelter",), done=31, walls=((3, 4, "north"),),
    search=(2, 17), origin=(0, 0), marks=(("the Spring", 9, 9),), company="Sage",
    stock=(5, 6),
)


@pytest.mark.parametrize("memory", [Memory(), FULL], ids=["blank", "full"])
def test_memory_round_trips_through_json(memory: Memory) -> None:
    state = memory.to_state()
    again = json.loads(json.dumps(state))
    assert again == state
    assert Memory.from_state(again) == memory
    assert Memory(memory.values) == memory


@pytest.mark.parametrize("state", [None, {}, {"v": 99}, "junk", [1, 2]])
def test_unreadable_state_means_a_fresh_memory(state: object) -> None:
    assert Memory.from_state(state) == Memory()  # type: ignore[arg-type]


def test_malformed_fields_fall_back_to_defaults_one_by_one() -> None:
    state = FULL.to_state()
    state.update(home="here", lines="two", heading=5, met=[["Sage", "noon"], ["River", 3]],
                 read=[[1, 2], "x", [True, 1]])
    memory = Memory.from_state(state)
    assert memory.home is None and memory.lines == 0 and memory.heading == ""
    assert memory.met == (("River", 3),)
    assert memory.read == ((1, 2),)
    assert memory.haunt == FULL.haunt  # untouched fields survive


def test_memory_collections_are_capped_newest_kept() -> None:
    state = Memory().to_state()
    state["failed"] = [f"work:x{i}:split" for i in range(MAX_FAILED + 10)]
    state["read"] = [[i, i] for i in range(MAX_SIGNS + 5)]
    memory = Memory.from_state(state)
    assert len(memory.failed) == MAX_FAILED and memory.failed[-1] == f"work:x{MAX_FAILED + 9}:split"
    assert len(memory.read) == MAX_SIGNS and memory.read[0] == (5, 5)
    assert len(json.dumps(FULL.to_state())) < 1200
    assert capped(("a", "b", "c"), "a", 3) == ("b", "c", "a")
    assert capped(("a", "b", "c"), "d", 3) == ("b", "c", "d")


def test_a_new_memory_starts_with_the_obvious_ideas_only() -> None:
    assert Memory().ideas == OBVIOUS_IDEAS
    assert "work:wood:split" in OBVIOUS_IDEAS
    assert not any(key.startswith("combine") for key in OBVIOUS_IDEAS)


# ------------------------------------------------------------------ recipe keys


def test_recipe_keys_and_the_calls_that_try_them() -> None:
    assert crafts.combine_key(["stick", "cord"]) == crafts.combine_key(["cord", "stick"])
    assert crafts.call_for("work:wood:split") == ("work", {"item": "wood", "technique": "split"})
    assert crafts.call_for("combine:clay+grass") == ("combine", {"items": ["clay", "grass"]})
    assert crafts.call_for("apply:torch:wood") == ("apply", {"tool": "torch", "target": "wood"})
    assert crafts.call_for("work:wood") is None and crafts.call_for("bake:bread") is None
    for key in ("work:wood:split", "combine:clay+grass", "apply:torch:wood"):
        name, args = crafts.call_for(key)  # type: ignore[misc]
        assert crafts.key_of_call(name, args) == key
    assert crafts.inputs_of("apply:torch:wood") == ["wood"]
    assert crafts.needs_of("apply:torch:wood") == ["torch", "wood"]
    assert crafts.can_try("combine:stick+stick", {"stick": 2})
    assert not crafts.can_try("combine:stick+stick", {"stick": 1})


def test_hints_become_ideas_and_lonely_things() -> None:
    hints = ["wood can be split or carved", "wood might combine with other things"]
    assert crafts.ideas_from_hints("wood", hints) == ["work:wood:split", "work:wood:carve"]
    assert crafts.ideas_from_hints("grass", ["grass can be stripped or woven"]) == [
        "work:grass:strip", "work:grass:weave"]
    assert crafts.ideas_from_hints("stone", hints) == []
    assert crafts.lonely_items(["stool doesn't combine with anything", 3,
                                "a b doesn't combine with anything"]) == ["stool"]


# ------------------------------------------------------------------ view of cells


def test_view_finds_cells_by_position_in_any_listing_order() -> None:
    cells = cells_around((10, 10), paint={(11, 10): Terrain.WATER, (9, 10): Terrain.FOREST})
    for listing in (cells, tuple(reversed(cells))):
        view = View(perceive(at=(10, 10), cells=listing))
        assert view.can_enter(11, 10) is False
        assert view.can_enter(10, 11) is True
        assert view.can_enter(20, 20) is None
        assert view.cell(9, 10).terrain is Terrain.FOREST  # type: ignore[union-attr]


def test_view_nearest_and_beside_prefer_distance_then_the_first_named_resource() -> None:
    cells = cells_around((10, 10), paint={(12, 10): Terrain.FOREST, (10, 9): Terrain.STONE,
                                          (10, 12): Terrain.FOREST})
    view = View(perceive(at=(10, 10), cells=cells))
    assert view.nearest((10, 10), ("wood",)) == (2, (12, 10), "wood")  # (10, 12) ties: y, x
    assert view.nearest((10, 10), ("wood", "stone")) == (1, (10, 9), "stone")
    assert view.nearest((10, 10), ("wood",), skip={(12, 10), (10, 12)}) is None
    assert view.beside((10, 10), ("wood", "stone")) == (1, (10, 9), "stone")
    assert view.beside((10, 10), ("wood",)) is None
    assert view.beside((10, 10), ("grass",)) == (0, (10, 10), "grass")


def test_memory_is_built_by_name_and_refuses_what_it_does_not_hold() -> None:
    memory = Memory.of(haunt="the Spring", lines=2)
    assert (memory.haunt, memory.lines, memory.home) == ("the Spring", 2, None)
    assert memory.replace(lines=3).lines == 3 and memory.lines == 2
    with pytest.raises(ValueError, match="has no colour"):
        Memory.of(colour="red")
    with pytest.raises(ValueError, match="holds"):
        Memory((1, 2, 3))


def test_view_finds_a_way_round_what_blocks_the_straight_step() -> None:
    # Water straight north of (10, 10), for three cells across: the way round is aside.
    water = {(9, 9): Terrain.WATER, (10, 9): Terrain.WATER, (11, 9): Terrain.WATER}
    view = View(perceive(at=(10, 10), cells=cells_around((10, 10), paint=water)))
    route = view.route((10, 10), (10, 0))
    assert route[0] in ("east", "west") and route.count("north") >= 2
    x, y = 10, 10
    for step in route:  # it never steps into the water, and ends nearer the goal
        x, y = x + {"east": 1, "west": -1}.get(step, 0), y + {"north": -1, "south": 1}.get(step, 0)
        assert (x, y) not in water
    assert abs(10 - x) + abs(0 - y) < 10
    # Walled in on the east as well: only west leads round.
    assert view.route((10, 10), (10, 0), {(10, 10, "east")})[0] == "west"
    # Water all across the view: one step north, then nothing in sight is nearer.
    lake = {(x, 8): Terrain.WATER for x in range(7, 14)}
    view = View(perceive(at=(10, 10), cells=cells_around((10, 10), paint=lake)))
    assert view.route((10, 10), (10, 0)) == ["north"]
    assert view.route((10, 9), (10, 0)) == []
    assert view.route((40, 40), (10, 0)) == []  # it has walked out of this view
