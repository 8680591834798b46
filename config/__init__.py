"""Hearth's configuration: the shipped YAML defaults and the code that reads them.

Everything a person may tune without editing code lives in the YAML files next
to this module; the loaders validate them strictly and report any mistake as a
single-line ConfigError that names the file and the place in it.
"""

from config.agents import AgentConfig, AgentsConfig
from config.claude import ClaudeSettings
from config.environment import RuntimeEnv
from config.landmarks import LandmarksConfig, LandmarkSpec
from config.loader import (
    CONFIG_DIR,
    ConfigError,
    HearthConfig,
    load_agents,
    load_config,
    load_landmarks,
    load_recipes,
    load_settings,
    load_terrain,
)
from config.recipes import Recipe, RecipeBook
from config.settings import Settings
from config.terrain import TerrainConfig, TerrainSpec

__all__ = [
    "CONFIG_DIR",
    "AgentConfig",
    "AgentsConfig",
    "ClaudeSettings",
    "ConfigError",
    "HearthConfig",
    "LandmarkSpec",
    "LandmarksConfig",
    "Recipe",
    "RecipeBook",
    "RuntimeEnv",
    "Settings",
    "TerrainConfig",
    "TerrainSpec",
    "load_agents",
    "load_config",
    "load_landmarks",
    "load_recipes",
    "load_settings",
    "load_terrain",
]
