"""Every terrain and weather kind can be drawn, as emoji and as plain ASCII."""

from __future__ import annotations

import pytest

from core.terrain import (
    AGENT_ASCII,
    AGENT_EMOJI,
    DEFAULT_TERRAIN,
    OBJECT_ASCII,
    OBJECT_EMOJI,
    SELF_ASCII,
    TERRAIN_ASCII,
    TERRAIN_EMOJI,
    WEATHER_ASCII,
    WEATHER_EMOJI,
    Terrain,
    Weather,
)


def _printable_ascii_char(s: str) -> bool:
    return len(s) == 1 and 0x20 < ord(s) < 0x7F


def test_symbol_tables_cover_exactly_the_enums() -> None:
    assert set(TERRAIN_EMOJI) == set(Terrain)
    assert set(TERRAIN_ASCII) == set(Terrain)
    assert set(WEATHER_EMOJI) == set(Weather)
    assert set(WEATHER_ASCII) == set(Weather)


@pytest.mark.parametrize("kind", [*Terrain, *Weather])
def test_each_kind_has_an_emoji_and_one_printable_ascii_char(kind: Terrain | Weather) -> None:
    assert isinstance(kind.emoji, str) and kind.emoji.strip()
    assert _printable_ascii_char(kind.ascii), repr(kind.ascii)


def test_properties_read_the_tables() -> None:
    for t in Terrain:
        assert t.emoji == TERRAIN_EMOJI[t]
        assert t.ascii == TERRAIN_ASCII[t]
    for w in Weather:
        assert w.emoji == WEATHER_EMOJI[w]
        assert w.ascii == WEATHER_ASCII[w]


def test_terrain_ascii_symbols_are_distinct() -> None:
    symbols = [t.ascii for t in Terrain]
    assert len(set(symbols)) == len(symbols)


def test_weather_ascii_symbols_are_distinct() -> None:
    symbols = [w.ascii for w in Weather]
    assert len(set(symbols)) == len(symbols)


def test_all_terrain_and_weather_ascii_symbols_are_distinct() -> None:
    symbols = [t.ascii for t in Terrain] + [w.ascii for w in Weather]
    assert len(set(symbols)) == len(symbols) == len(Terrain) + len(Weather)


def test_map_symbols_do_not_collide_with_terrain() -> None:
    """Agents and objects are drawn over terrain, so they must not look like terrain."""
    terrain = {t.ascii for t in Terrain}
    overlays = [AGENT_ASCII, SELF_ASCII, *OBJECT_ASCII.values()]
    assert all(_printable_ascii_char(s) for s in overlays)
    assert len(set(overlays)) == len(overlays)
    assert not terrain & set(overlays)
    assert set(OBJECT_EMOJI) == set(OBJECT_ASCII) == {"sign", "placed_item"}
    assert AGENT_EMOJI


def test_enum_values_and_default() -> None:
    assert DEFAULT_TERRAIN is Terrain.GRASS
    assert Terrain("water") is Terrain.WATER
    assert Weather("foggy") is Weather.FOGGY
    assert {t.value for t in Terrain} == {
        "water",
        "coast",
        "sand",
        "grass",
        "forest",
        "hill",
        "stone",
    }
    assert {w.value for w in Weather} == {"clear", "cloudy", "rainy", "foggy"}
    with pytest.raises(ValueError):
        Terrain("lava")


def test_enums_format_as_their_value() -> None:
    for kind in [*Terrain, *Weather]:
        assert str(kind) == kind.value
        assert f"{kind}" == kind.value
