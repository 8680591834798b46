"""Issue 43: one legend. Everything `--map`, its PNG and the observer's emoji and ASCII
grids can draw is in the one table of symbols (observe/symbols.py), and means the same
in each: drawn here in full, then looked up."""

from __future__ import annotations

import numpy as np
from PIL import Image

from core.landmarks import Landmark
from core.terrain import TERRAIN_ORDER, Terrain
from core.types import Position
from observe.symbols import LEGEND, MAP_LEGEND, TERRAIN
from observe.tui.glyphs import ASCII, EMOJI
from observe.tui.legend import legend_text
from observe.worldmap import (
    AGENT_OUTLINE_COLOR,
    LANDMARK_OUTLINE_COLOR,
    LEGEND_WIDTH,
    render_terminal_map,
    write_png,
)

EMOJI_DRAWN = {s.emoji for s in LEGEND} | set("".join(s.emoji for s in LEGEND))
ASCII_DRAWN = {s.ascii for s in LEGEND}


def _every_terrain() -> np.ndarray:
    """Each kind of ground in a band of its own, wide enough to show at any scale."""
    return np.repeat(np.arange(len(TERRAIN_ORDER), dtype=np.uint8), 4)[None, :].repeat(8, 0)


def test_every_glyph_the_observer_draws_is_in_the_one_table() -> None:
    for glyphs, in_table in ((EMOJI, EMOJI_DRAWN), (ASCII, ASCII_DRAWN)):
        for glyph in glyphs.every_cell_glyph():
            # ASCII cells draw a symbol twice, or an agent's and its name's first letter.
            seen = glyph if glyphs is EMOJI else glyph[0]
            assert seen in in_table, (glyphs.name, glyph)
        for piece in glyphs.every_narrow_glyph():
            if piece.strip():
                assert piece in EMOJI_DRAWN | ASCII_DRAWN, (glyphs.name, piece)
        for state in ("awake", "asleep", "journeying", "talking"):
            text, _ = glyphs.agent_part(("Rowan",), state)
            assert (text if glyphs is EMOJI else text[0]) in in_table, (glyphs.name, state)
        shown = legend_text(glyphs).plain
        assert all(glyph in shown for glyph in glyphs.every_cell_glyph()
                   if glyphs is EMOJI), glyphs.name


def test_the_asleep_agent_means_one_thing_everywhere() -> None:
    asleep, _ = ASCII.agent_part(("Rowan",), "asleep")
    assert asleep == "zR" and "an agent, asleep" in legend_text(ASCII).plain
    assert asleep[0] == next(s.ascii for s in LEGEND if s.meaning == "an agent, asleep")


def test_every_character_of_the_terminal_map_is_in_its_legend_and_the_table() -> None:
    spring = Landmark("spring", "Spring", "A spring.", Position(10, 4))
    text = render_terminal_map(_every_terrain(), agents=[("Ada", Position(2, 2))],
                               landmarks=[spring], max_columns=200, max_rows=12, color=False)
    *rows, legend = text.split("\n")
    drawn = {char for row in rows for char in row}
    assert drawn <= ASCII_DRAWN, drawn - ASCII_DRAWN
    assert {"@", "!"} <= drawn and {TERRAIN[k].ascii for k in TERRAIN_ORDER} <= drawn
    for symbol in MAP_LEGEND:
        assert f"{symbol.ascii} " in legend, symbol


def test_every_colour_of_the_png_is_in_the_legend_beside_it(tmp_path) -> None:
    path = tmp_path / "world.png"
    spring = Landmark("spring", "Spring", "A spring.", Position(10, 4))
    write_png(path, _every_terrain(), agents=[("Ada", Position(2, 2))], landmarks=[spring])
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    world = pixels[:8, :4 * len(TERRAIN_ORDER)]
    legend = pixels[:, -LEGEND_WIDTH:]
    painted = {tuple(int(v) for v in p) for p in world.reshape(-1, 3)}
    meant = {s.rgb for s in MAP_LEGEND}
    assert painted - {AGENT_OUTLINE_COLOR, LANDMARK_OUTLINE_COLOR} <= meant
    swatches = {tuple(int(v) for v in p) for p in legend.reshape(-1, 3)}
    assert meant <= swatches  # each colour drawn has its swatch and words beside the map
    assert Terrain.WATER.value and TERRAIN[Terrain.WATER].rgb in painted
