"""The grid's symbol tables: every cell glyph two columns, no presentation selectors."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from core.terrain import TERRAIN_ORDER
from observe.tui.glyphs import ASCII, EMOJI, GlyphSet

SETS = pytest.mark.parametrize("glyphs", [EMOJI, ASCII], ids=lambda g: g.name)


@SETS
def test_every_cell_glyph_is_two_columns_without_a_variation_selector(glyphs: GlyphSet) -> None:
    texts = glyphs.every_cell_glyph()
    assert len(texts) > len(TERRAIN_ORDER)
    for text in texts:
        assert cell_len(text) == 2, f"{text!r} is {cell_len(text)} columns"
        assert "\ufe0f" not in text, f"{text!r} has a variation selector"


@SETS
def test_every_wall_piece_and_mark_is_one_column(glyphs: GlyphSet) -> None:
    for text in glyphs.every_narrow_glyph():
        assert cell_len(text) == 1, f"{text!r} is {cell_len(text)} columns"
        assert "\ufe0f" not in text


@SETS
def test_every_terrain_has_a_glyph_and_a_mark(glyphs: GlyphSet) -> None:
    assert len(glyphs.terrain) == len(TERRAIN_ORDER)
    assert len(glyphs.marks.terrain) == len(TERRAIN_ORDER)
    assert len({text for text, _ in glyphs.terrain}) == len(TERRAIN_ORDER)


def test_the_ascii_set_is_plain_printable_ascii() -> None:
    for text in ASCII.every_cell_glyph() + ASCII.every_narrow_glyph():
        assert text.isascii() and text.isprintable(), repr(text)


def test_ascii_terrain_is_coloured() -> None:
    assert all(style.color is not None for _, style in ASCII.terrain)


def test_an_ascii_agent_is_its_state_and_initial() -> None:
    assert ASCII.agent_part(("Ember",), "awake")[0] == "@E"
    assert ASCII.agent_part(("ash",), "asleep")[0] == "zA"
    assert ASCII.agent_part(("Ash", "Birch", "Cedar"), "awake")[0] == "@3"


def test_emoji_agents_differ_by_state_and_crowd() -> None:
    awake = EMOJI.agent_part(("Ember",), "awake")[0]
    asleep = EMOJI.agent_part(("Ember",), "asleep")[0]
    crowd = EMOJI.agent_part(("Ember", "Ash"), "awake")[0]
    assert len({awake, asleep, crowd}) == 3


@SETS
def test_junctions_join_walls_as_the_agent_view_does(glyphs: GlyphSet) -> None:
    walls = glyphs.walls
    assert walls.junction(False, False, False, False) == " "
    assert walls.junction(True, True, False, False) == walls.vertical
    assert walls.junction(False, False, True, True) == walls.horizontal
    if glyphs is EMOJI:
        assert walls.junction(False, True, False, True) == "┌"
        assert walls.junction(True, False, True, False) == "┘"
        assert walls.junction(True, True, True, True) == "┼"
    else:
        assert walls.junction(False, True, False, True) == "+"
