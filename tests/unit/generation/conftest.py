"""Shared fixtures for the generation tests: the shipped terrain config as a tileset."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from config import load_config
from core.terrain import Terrain
from generation.tileset import TerrainTraits, Tileset


@pytest.fixture(scope="session")
def terrain_traits() -> Mapping[Terrain, TerrainTraits]:
    """terrain.yaml's entries, as `HearthConfig.terrain.terrains` has them."""
    return load_config(None).terrain.terrains


@pytest.fixture(scope="session")
def tileset(terrain_traits: Mapping[Terrain, TerrainTraits]) -> Tileset:
    """The tileset every world is generated with (tilesets are read-only, so shared)."""
    return Tileset.from_traits(terrain_traits)
