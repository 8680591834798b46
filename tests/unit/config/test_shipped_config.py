"""The defaults that ship with Hearth must load and describe a playable world."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from config import CONFIG_DIR, HearthConfig, Settings, load_config
from core.model_catalog import default_prices
from core.terrain import TERRAIN_ASCII, TERRAIN_EMOJI, Terrain

GATHERABLE = {"wood", "stone", "clay", "grass"}


@pytest.fixture(scope="module")
def shipped() -> HearthConfig:
    return load_config()


def test_yaml_files_live_in_the_package_folder() -> None:
    names = {p.name for p in CONFIG_DIR.glob("*.yaml")}
    assert names == {
        "settings.yaml", "agents.yaml", "recipes.yaml", "terrain.yaml", "landmarks.yaml"
    }


def test_load_config_with_explicit_folder_matches_default(shipped: HearthConfig) -> None:
    assert load_config(CONFIG_DIR) == shipped


def test_shipped_settings_are_the_documented_defaults(shipped: HearthConfig) -> None:
    assert shipped.settings == Settings()
    # No price is pinned in the file: the built-in table (core/model_catalog.py) prices
    # every model, so a copied settings.yaml never keeps yesterday's prices.
    assert shipped.settings.claude.prices == {}
    assert shipped.settings.claude.price_table() == default_prices()
    assert shipped.settings.world.width == 500
    assert shipped.settings.world.seed is None
    assert shipped.settings.vision.night_modifier == 0.6
    assert shipped.settings.storage.synchronous == "NORMAL"


def test_three_distinct_agents(shipped: HearthConfig) -> None:
    agents = shipped.agents.agents
    assert [a.name for a in agents] == ["Ember", "Sage", "River"]
    assert len({a.personality for a in agents}) == 3
    assert all(a.model_id.startswith("claude-") for a in agents)
    assert all(a.color and a.color.startswith("#") for a in agents)


def test_recipes_cover_every_action(shipped: HearthConfig) -> None:
    recipes = shipped.recipes.recipes
    assert len(recipes) >= 18
    assert {r.action for r in recipes} == {"combine", "work", "apply"}
    assert any(not r.output_stackable for r in recipes)


def test_recipe_graph_closes_over_gatherable_resources(shipped: HearthConfig) -> None:
    assert shipped.terrain.gatherable == GATHERABLE
    assert shipped.recipes.unreachable(GATHERABLE) == []


def test_every_recipe_input_is_gathered_or_made(shipped: HearthConfig) -> None:
    made = {r.name for r in shipped.recipes.recipes}
    inputs = {item for r in shipped.recipes.recipes for item in r.inputs}
    assert inputs <= made | GATHERABLE


def test_all_terrains_with_core_symbols(shipped: HearthConfig) -> None:
    terrains = shipped.terrain.terrains
    assert set(terrains) == set(Terrain)
    for terrain, spec in terrains.items():
        assert spec.emoji == TERRAIN_EMOJI[terrain]
        assert spec.ascii == TERRAIN_ASCII[terrain]
    assert [t for t, s in terrains.items() if not s.passable] == [Terrain.WATER]


def test_target_shares_sum_to_one(shipped: HearthConfig) -> None:
    total = sum(spec.target_share for spec in shipped.terrain.terrains.values())
    assert total == pytest.approx(1.0, abs=0.01)
    assert shipped.terrain.terrains[Terrain.GRASS].target_share == pytest.approx(0.40)


def test_loaded_config_is_frozen(shipped: HearthConfig) -> None:
    with pytest.raises(ValidationError):
        shipped.settings.world.width = 10  # type: ignore[misc]
