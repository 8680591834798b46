"""The `--map` renderers: a downsampled terminal map and a PNG of the whole world."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image

from core.landmarks import Landmark
from core.terrain import TERRAIN_ASCII, TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import Position
from observe.worldmap import (
    AGENT_COLOR,
    AGENT_OUTLINE_COLOR,
    LANDMARK_COLOR,
    LEGEND_WIDTH,
    PALETTE,
    TERRAIN_COLORS,
    legend_height,
    majority_terrain,
    render_terminal_map,
    supports_color,
    terminal_block_size,
    write_png,
)

W, C, S, G, F, H, ST = (TERRAIN_CODE[kind] for kind in TERRAIN_ORDER)
ESCAPE = re.compile(r"\x1b\[([0-9;]*)m")


def grid(rows: list[str]) -> np.ndarray:
    """A terrain raster from ASCII rows, one character per cell."""
    by_char = {TERRAIN_ASCII[kind]: TERRAIN_CODE[kind] for kind in TERRAIN_ORDER}
    return np.array([[by_char[ch] for ch in row] for row in rows], dtype=np.uint8)


def filled(height: int, width: int, kind: Terrain = Terrain.GRASS) -> np.ndarray:
    return np.full((height, width), TERRAIN_CODE[kind], dtype=np.uint8)


def landmark(x: int, y: int) -> Landmark:
    return Landmark("spring", "Clear Spring", "cold water", Position(x, y))


def visible(line: str) -> str:
    return ESCAPE.sub("", line)


def map_lines(text: str) -> list[str]:
    """The map rows of a rendering: every legend line has a space, no map row does."""
    lines = text.split("\n")
    rows = [line for line in lines if " " not in line]
    assert lines[: len(rows)] == rows, "the legend comes after the map"
    return rows


def colour_cells(line: str) -> list[tuple[tuple[int, ...] | None, tuple[int, ...] | None]]:
    """(foreground, background) RGB of each '▀' in one colour line; None means default."""
    fg: tuple[int, ...] | None = None
    bg: tuple[int, ...] | None = None
    cells = []
    position = 0
    while position < len(line):
        match = ESCAPE.match(line, position)
        if match:
            codes = [int(part) for part in match.group(1).split(";") if part]
            if codes[:2] == [38, 2]:
                fg = tuple(codes[2:5])
            elif codes[:2] == [48, 2]:
                bg = tuple(codes[2:5])
            elif codes == [49]:
                bg = None
            elif codes in ([0], []):
                fg = bg = None
            position = match.end()
            continue
        assert line[position] == "\u2580", f"unexpected character {line[position]!r}"
        cells.append((fg, bg))
        position += 1
    return cells


# --------------------------------------------------------------------------- palette


def test_palette_has_one_distinct_colour_per_terrain_in_code_order() -> None:
    assert PALETTE.shape == (len(TERRAIN_ORDER), 3)
    assert PALETTE.dtype == np.uint8
    for code, kind in enumerate(TERRAIN_ORDER):
        assert tuple(PALETTE[code]) == TERRAIN_COLORS[kind]
    colours = {tuple(row) for row in PALETTE.tolist()} | {AGENT_COLOR, LANDMARK_COLOR}
    assert len(colours) == len(TERRAIN_ORDER) + 2


def test_palette_looks_like_a_landscape() -> None:
    r, g, b = TERRAIN_COLORS[Terrain.WATER]
    assert b > r and b > g
    assert sum(TERRAIN_COLORS[Terrain.COAST]) > sum(TERRAIN_COLORS[Terrain.WATER])
    for green in (Terrain.GRASS, Terrain.FOREST):
        r, g, b = TERRAIN_COLORS[green]
        assert g > r and g > b
    assert sum(TERRAIN_COLORS[Terrain.FOREST]) < sum(TERRAIN_COLORS[Terrain.GRASS])
    r, g, b = TERRAIN_COLORS[Terrain.STONE]
    assert r == g == b


# --------------------------------------------------------------------------- downsampling


def test_majority_picks_the_most_common_terrain_per_block() -> None:
    terrain = grid([
        "==.T",
        "=TTT",
        "^^#T",
        "^:##",
    ])
    assert majority_terrain(terrain, 2, 2).tolist() == [[W, F], [H, ST]]


def test_majority_handles_partial_edge_blocks() -> None:
    terrain = grid([
        "===.",
        "==..",
        "TT^#",
    ])
    # blocks of 2x3: right column is 1 wide, bottom row 1 tall
    assert majority_terrain(terrain, 2, 3).tolist() == [[W, G], [F, ST]]


def test_majority_tie_goes_to_the_lower_code() -> None:
    terrain = grid(["T=", "=T"])
    assert majority_terrain(terrain, 2, 2).tolist() == [[W]]
    terrain = grid(["#^"])
    assert majority_terrain(terrain, 1, 2).tolist() == [[H]]


def test_majority_on_a_large_random_map_matches_a_plain_count() -> None:
    rng = np.random.default_rng(7)
    terrain = rng.integers(0, len(TERRAIN_ORDER), size=(37, 53), dtype=np.uint8)
    result = majority_terrain(terrain, 5, 4)
    assert result.shape == (8, 14)
    for by in range(8):
        for bx in range(14):
            block = terrain[by * 5:(by + 1) * 5, bx * 4:(bx + 1) * 4]
            counts = np.bincount(block.ravel(), minlength=len(TERRAIN_ORDER))
            assert result[by, bx] == int(np.argmax(counts))


@pytest.mark.parametrize("bad", [
    np.zeros((0, 4), dtype=np.uint8),
    np.zeros((3,), dtype=np.uint8),
    np.full((2, 2), len(TERRAIN_ORDER), dtype=np.uint8),
    np.full((2, 2), -1, dtype=np.int16),
    np.zeros((2, 2), dtype=np.float32),
])
def test_malformed_terrain_is_refused(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="terrain"):
        majority_terrain(bad, 1, 1)
    with pytest.raises(ValueError, match="terrain"):
        render_terminal_map(bad, max_columns=40, max_rows=10, color=False)


# --------------------------------------------------------------------------- terminal size


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize(("height", "width", "columns", "rows"), [
    (1, 1, 40, 12),
    (7, 300, 40, 10),
    (300, 7, 40, 10),
    (2000, 2000, 200, 60),
    (513, 257, 80, 24),
    (100, 100, 12, 30),
    (50, 50, 300, 200),
])
def test_output_never_exceeds_the_box(
    height: int, width: int, columns: int, rows: int, color: bool
) -> None:
    text = render_terminal_map(filled(height, width), max_columns=columns, max_rows=rows,
                               color=color, agents=[("Ada", Position(0, 0))],
                               landmarks=[landmark(width - 1, height - 1)])
    lines = text.split("\n")
    assert len(lines) <= rows
    assert all(len(visible(line)) <= columns for line in lines)
    assert visible(lines[0]).strip() != ""


def test_block_size_is_the_smallest_that_fits() -> None:
    assert terminal_block_size(100, 100, max_columns=200, max_rows=100) == 1
    assert terminal_block_size(800, 100, max_columns=100, max_rows=100) == 8
    assert terminal_block_size(100, 800, max_columns=100, max_rows=50) == 8
    assert terminal_block_size(101, 10, max_columns=100, max_rows=50) == 2


def test_ascii_map_keeps_the_aspect_ratio() -> None:
    # a square world: characters are twice as tall as wide, so half as many rows
    lines = map_lines(render_terminal_map(filled(64, 64), max_columns=200, max_rows=200,
                                          color=False))
    assert len(lines) == 32
    assert {len(line) for line in lines} == {64}
    # a wide world squeezed into 32 columns: 4x8 cells per character
    text = render_terminal_map(filled(32, 128), max_columns=32, max_rows=50, color=False)
    lines = map_lines(text)
    assert (len(lines), len(lines[0])) == (4, 32)
    assert "1 char = 4x8 cells" in text


def test_colour_map_keeps_the_aspect_ratio() -> None:
    # two square samples per character: same character grid as the ASCII map
    text = render_terminal_map(filled(64, 64), max_columns=200, max_rows=200, color=True)
    lines = map_lines(text)
    assert len(lines) == 32
    assert {len(colour_cells(line)) for line in lines} == {64}
    tall = render_terminal_map(filled(400, 100), max_columns=200, max_rows=22, color=True)
    lines = map_lines(tall)
    cells = [colour_cells(line) for line in lines]
    # 20 map rows + 2 legend lines; 400 tall needs 10x20-cell characters
    assert len(cells) == 20 and {len(row) for row in cells} == {10}
    assert "1 char = 10x20 cells" in visible(tall)


def test_too_small_a_box_is_refused() -> None:
    with pytest.raises(ValueError, match="max_rows"):
        render_terminal_map(filled(10, 10), max_columns=80, max_rows=1, color=False)
    with pytest.raises(ValueError, match="max_columns"):
        render_terminal_map(filled(10, 10), max_columns=5, max_rows=40, color=False)


# --------------------------------------------------------------------------- ASCII map


def test_ascii_map_uses_the_terrain_symbols() -> None:
    terrain = np.array([list(range(len(TERRAIN_ORDER)))] * 2, dtype=np.uint8)
    lines = render_terminal_map(terrain, max_columns=80, max_rows=10, color=False).split("\n")
    assert lines[0] == "".join(TERRAIN_ASCII[kind] for kind in TERRAIN_ORDER)


def test_ascii_map_shows_block_majorities() -> None:
    terrain = grid([
        "==TT",
        "=.TT",
        "==T.",
        ".=TT",
        "####",
        "##^^",
        "#^^^",
        "^#^^",
    ])
    # 8 rows into 2 map rows (the legend takes one) -> blocks of 2x4 cells
    text = render_terminal_map(terrain, max_columns=200, max_rows=3, color=False)
    assert map_lines(text) == ["=T", "#^"]
    assert "1 char = 2x4 cells" in text


def test_ascii_map_has_no_escapes() -> None:
    text = render_terminal_map(filled(30, 30), max_columns=40, max_rows=20, color=False,
                               agents=[("Ada", Position(3, 3))], landmarks=[landmark(9, 9)])
    assert "\x1b" not in text
    assert "\u2580" not in text


def test_ascii_legend_names_every_symbol_and_the_scale() -> None:
    text = render_terminal_map(filled(10, 10), max_columns=200, max_rows=20, color=False)
    legend = text.split("\n")[-1]
    for kind in TERRAIN_ORDER:
        assert f"{TERRAIN_ASCII[kind]} {kind.value}" in legend
    assert "@ agent" in legend and "! landmark" in legend  # observe/symbols.py
    assert "1 char = 1x2 cells" in legend


def test_legend_wraps_to_the_width() -> None:
    text = render_terminal_map(filled(10, 10), max_columns=20, max_rows=30, color=False)
    legend = text.split("\n")[5:]
    assert len(legend) > 1
    assert all(len(line) <= 20 for line in legend)
    assert "stone" in " ".join(legend) and "1 char = 1x2 cells" in legend[-1]


def test_ascii_agents_and_landmarks_mark_their_block() -> None:
    terrain = filled(16, 16)  # 4 map rows -> 2x4-cell characters: 8 wide, 4 tall
    text = render_terminal_map(terrain, max_columns=200, max_rows=5, color=False,
                               agents=[("Ada", Position(5, 9))],
                               landmarks=[landmark(15, 0), landmark(4, 8)])
    rows = map_lines(text)
    assert len(rows) == 4
    assert rows[0] == ".......!"
    assert rows[2] == "..@....."  # the agent hides the landmark in the same block
    assert rows[1] == rows[3] == "........"


def test_markers_off_the_map_are_skipped() -> None:
    text = render_terminal_map(filled(8, 8), max_columns=20, max_rows=10, color=False,
                               agents=[("Ada", Position(8, 0)), ("Bo", Position(-1, 2))],
                               landmarks=[landmark(0, 99)])
    rows = map_lines(text)
    assert rows == ["." * 8] * 4


# --------------------------------------------------------------------------- colour map


def test_colour_map_splits_each_character_into_two_samples() -> None:
    terrain = grid([
        "=.",
        "T#",
        "^:",
    ])
    text = render_terminal_map(terrain, max_columns=200, max_rows=10, color=True)
    lines = map_lines(text)
    assert len(lines) == 2
    first, second = colour_cells(lines[0]), colour_cells(lines[1])
    assert first == [(TERRAIN_COLORS[Terrain.WATER], TERRAIN_COLORS[Terrain.FOREST]),
                     (TERRAIN_COLORS[Terrain.GRASS], TERRAIN_COLORS[Terrain.STONE])]
    # an odd height leaves the last bottom half on the terminal's own background
    assert second == [(TERRAIN_COLORS[Terrain.HILL], None),
                      (TERRAIN_COLORS[Terrain.SAND], None)]


def test_colour_samples_are_square_block_majorities() -> None:
    terrain = grid([
        "==TT",
        "=.T.",
        "##^^",
        "#.^^",
    ])
    # 4 rows into 1 map row: samples of 2x2 cells, one character of 2x4
    text = render_terminal_map(terrain, max_columns=200, max_rows=2, color=True)
    assert [colour_cells(line) for line in map_lines(text)] == [[
        (TERRAIN_COLORS[Terrain.WATER], TERRAIN_COLORS[Terrain.STONE]),
        (TERRAIN_COLORS[Terrain.FOREST], TERRAIN_COLORS[Terrain.HILL]),
    ]]


def test_colour_lines_all_end_with_a_reset() -> None:
    text = render_terminal_map(grid(["=.T^#:~"] * 9), max_columns=40, max_rows=20, color=True,
                               agents=[("Ada", Position(1, 1))], landmarks=[landmark(2, 2)])
    lines = text.split("\n")
    assert len(lines) >= 3
    assert all(line.endswith("\x1b[0m") for line in lines)
    assert "\x1b[38;2;" in text and "\x1b[48;2;" in text


def test_colour_legend_shows_swatches_and_the_scale() -> None:
    text = render_terminal_map(filled(10, 10), max_columns=300, max_rows=20, color=True)
    legend = text.split("\n")[-1]
    for kind in TERRAIN_ORDER:
        r, g, b = TERRAIN_COLORS[kind]
        assert f"\x1b[38;2;{r};{g};{b}m\u2588\x1b[0m {kind.value}" in legend
    r, g, b = AGENT_COLOR
    assert f"\x1b[38;2;{r};{g};{b}m\u2588\x1b[0m agent" in legend
    assert "landmark" in legend and "1 char = 1x2 cells" in visible(legend)


def test_colour_agents_and_landmarks_mark_their_sample() -> None:
    terrain = filled(16, 16)  # 4 map rows -> 2x2-cell samples, 8x8 of them
    text = render_terminal_map(terrain, max_columns=200, max_rows=5, color=True,
                               agents=[("Ada", Position(5, 3))],
                               landmarks=[landmark(15, 0), landmark(4, 2)])
    rows = [colour_cells(line) for line in map_lines(text)]
    assert len(rows) == 4
    grass = TERRAIN_COLORS[Terrain.GRASS]
    # sample row 1 is the bottom half of character row 0
    assert rows[0][7] == (LANDMARK_COLOR, grass)
    assert rows[0][2] == (grass, AGENT_COLOR)  # the agent hides the landmark
    marked = {(r, c) for r, row in enumerate(rows) for c, cell in enumerate(row)
              if cell != (grass, grass)}
    assert marked == {(0, 7), (0, 2)}


# --------------------------------------------------------------------------- PNG


def test_png_has_one_palette_pixel_per_cell(tmp_path) -> None:
    terrain = grid([
        "=~:.T^#",
        "#^T.:~=",
    ])
    path = tmp_path / "world.png"
    write_png(path, terrain)
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (7 + LEGEND_WIDTH, max(2, legend_height()))  # legend beside
        pixels = np.asarray(image.convert("RGB"))[:2, :7]
    assert np.array_equal(pixels, PALETTE[terrain])
    assert tuple(pixels[0, 0]) == TERRAIN_COLORS[Terrain.WATER]
    assert tuple(pixels[1, 1]) == TERRAIN_COLORS[Terrain.HILL]


def test_png_marks_agents_and_landmarks(tmp_path) -> None:
    terrain = filled(40, 50, Terrain.SAND)
    path = tmp_path / "world.png"
    write_png(path, terrain, agents=[("Ada", Position(20, 10))],
              landmarks=[landmark(35, 30), landmark(20, 10)])
    with Image.open(path) as image:
        assert image.size == (50 + LEGEND_WIDTH, max(40, legend_height()))
        pixels = np.asarray(image.convert("RGB"))[:40, :50]

    def at(x: int, y: int) -> tuple[int, ...]:
        return tuple(int(v) for v in pixels[y, x])

    sand = TERRAIN_COLORS[Terrain.SAND]
    assert at(20, 10) == AGENT_COLOR  # agent on top of the landmark there
    assert at(19, 9) == at(21, 11) == AGENT_COLOR
    assert at(18, 8) == at(22, 10) == at(20, 12) == AGENT_OUTLINE_COLOR
    assert at(23, 10) == sand and at(20, 13) == sand
    assert at(35, 30) == at(34, 30) == at(35, 31) == LANDMARK_COLOR
    assert at(34, 29) != LANDMARK_COLOR  # a diamond, not a square
    assert at(35, 33) == sand
    changed = np.any(pixels != np.array(sand, dtype=np.uint8), axis=2)
    assert changed.sum() == 25 + 13  # 5x5 agent square, 5x5 landmark diamond


def test_png_markers_are_clipped_at_the_edges(tmp_path) -> None:
    path = tmp_path / "corner.png"
    write_png(path, filled(6, 6), agents=[("Ada", Position(0, 5))],
              landmarks=[landmark(5, 0)])
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    assert tuple(pixels[5, 0]) == AGENT_COLOR
    assert tuple(pixels[0, 5]) == LANDMARK_COLOR
    assert tuple(pixels[3, 2]) == AGENT_OUTLINE_COLOR


def test_png_skips_markers_off_the_map(tmp_path) -> None:
    path = tmp_path / "world.png"
    write_png(path, filled(5, 5), agents=[("Ada", Position(7, 2))])
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))[:5, :5]
    assert np.array_equal(pixels, PALETTE[filled(5, 5)])


def test_png_scale_enlarges_every_cell(tmp_path) -> None:
    terrain = grid(["=T", "#."])
    path = tmp_path / "big.png"
    write_png(path, terrain, scale=3)
    with Image.open(path) as image:
        assert image.size == (6 + LEGEND_WIDTH, max(6, legend_height()))
        pixels = np.asarray(image.convert("RGB"))[:6, :6]
    assert np.array_equal(pixels[0:3, 0:3], np.broadcast_to(PALETTE[W], (3, 3, 3)))
    assert np.array_equal(pixels[0:3, 3:6], np.broadcast_to(PALETTE[F], (3, 3, 3)))
    assert np.array_equal(pixels[3:6, 0:3], np.broadcast_to(PALETTE[ST], (3, 3, 3)))
    assert np.array_equal(pixels[3:6, 3:6], np.broadcast_to(PALETTE[G], (3, 3, 3)))


@pytest.mark.parametrize("scale", [0, -2, 1.5, True])
def test_png_scale_must_be_a_positive_whole_number(tmp_path, scale) -> None:
    with pytest.raises(ValueError, match="scale"):
        write_png(tmp_path / "x.png", filled(2, 2), scale=scale)
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(("name", "shown"), [("world.jpg", "'.jpg'"), ("world", "no suffix"),
                                             ("world.png.txt", "'.txt'")])
def test_png_refuses_other_suffixes(tmp_path, name: str, shown: str) -> None:
    with pytest.raises(ValueError, match=re.escape(shown)):
        write_png(tmp_path / name, filled(2, 2))
    assert list(tmp_path.iterdir()) == []


def test_png_suffix_check_ignores_case(tmp_path) -> None:
    write_png(str(tmp_path / "World.PNG"), filled(2, 2))
    assert (tmp_path / "World.PNG").stat().st_size > 0


def test_png_missing_folder_is_an_os_error(tmp_path) -> None:
    with pytest.raises(OSError):
        write_png(tmp_path / "missing" / "world.png", filled(2, 2))


# --------------------------------------------------------------------------- colour support


class FakeStream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("tty", "environ", "expected"), [
    (True, {"TERM": "xterm-256color"}, True),
    (True, {}, True),
    (False, {"TERM": "xterm-256color"}, False),
    (True, {"TERM": "xterm", "NO_COLOR": "1"}, False),
    (True, {"NO_COLOR": "yes"}, False),
    (True, {"TERM": "xterm", "NO_COLOR": ""}, True),  # no-color.org: empty means unset
    (True, {"TERM": "dumb"}, False),
])
def test_supports_color(tty: bool, environ: dict[str, str], expected: bool) -> None:
    assert supports_color(FakeStream(tty), environ) is expected


def test_supports_color_is_false_for_files_and_closed_streams() -> None:
    assert supports_color(io.StringIO(), {"TERM": "xterm"}) is False
    closed = io.StringIO()
    closed.close()
    assert supports_color(closed, {"TERM": "xterm"}) is False
    assert supports_color(object(), {"TERM": "xterm"}) is False
