"""Terrain and weather, with the symbols used to draw them.

Each kind has an emoji (for terminals that render them) and a one-character
ASCII fallback (for those that do not, and for logs). Gameplay properties such
as passability and gatherable resources live in config/terrain.yaml, not here,
so that tuning the world never means editing the domain.
"""

from __future__ import annotations

from enum import StrEnum


class Terrain(StrEnum):
    WATER = "water"
    COAST = "coast"
    SAND = "sand"
    GRASS = "grass"
    FOREST = "forest"
    HILL = "hill"
    STONE = "stone"

    @property
    def emoji(self) -> str:
        return TERRAIN_EMOJI[self]

    @property
    def ascii(self) -> str:
        return TERRAIN_ASCII[self]


DEFAULT_TERRAIN = Terrain.GRASS

TERRAIN_EMOJI: dict[Terrain, str] = {
    Terrain.WATER: "💧",
    Terrain.COAST: "〰️",
    Terrain.SAND: "░",
    Terrain.GRASS: "·",
    Terrain.FOREST: "🌲",
    Terrain.HILL: "⛰️",
    Terrain.STONE: "🪨",
}

TERRAIN_ASCII: dict[Terrain, str] = {
    Terrain.WATER: "=",
    Terrain.COAST: "~",
    Terrain.SAND: ":",
    Terrain.GRASS: ".",
    Terrain.FOREST: "T",
    Terrain.HILL: "^",
    Terrain.STONE: "#",
}


class Weather(StrEnum):
    CLEAR = "clear"
    CLOUDY = "cloudy"
    RAINY = "rainy"
    FOGGY = "foggy"

    @property
    def emoji(self) -> str:
        return WEATHER_EMOJI[self]

    @property
    def ascii(self) -> str:
        return WEATHER_ASCII[self]


WEATHER_EMOJI: dict[Weather, str] = {
    Weather.CLEAR: "☀️",
    Weather.CLOUDY: "☁️",
    Weather.RAINY: "🌧️",
    Weather.FOGGY: "🌫️",
}

WEATHER_ASCII: dict[Weather, str] = {
    Weather.CLEAR: "o",
    Weather.CLOUDY: "c",
    Weather.RAINY: "r",
    Weather.FOGGY: "f",
}

OBJECT_EMOJI: dict[str, str] = {"sign": "📜", "placed_item": "✨"}
OBJECT_ASCII: dict[str, str] = {"sign": "?", "placed_item": "*"}
AGENT_EMOJI = "👤"
AGENT_ASCII = "A"
SELF_EMOJI = "@"
SELF_ASCII = "@"


TERRAIN_ORDER: tuple[Terrain, ...] = tuple(Terrain)
"""Terrain kinds in code order: a terrain raster stores `TERRAIN_ORDER.index(kind)`.

The order is part of the on-disk format of a stored map, so new kinds go at the end.
"""

TERRAIN_CODE: dict[Terrain, int] = {kind: code for code, kind in enumerate(TERRAIN_ORDER)}
