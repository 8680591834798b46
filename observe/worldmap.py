"""Whole-world maps for `hearth --map`: a downsampled terminal view and a PNG image.

A terrain raster is a numpy array of shape (height, width) indexed [y, x] whose
values are codes into `core.terrain.TERRAIN_ORDER`. Both renderers paint it with
`PALETTE` and draw agents and landmarks on top (an agent hides a landmark in the
same place). Markers whose position lies outside the raster are not drawn.

The terminal map keeps the world's shape: a character is about twice as tall as
it is wide, so one character stands for a block `s` cells wide and `2s` cells
tall, and each block shows its most common terrain (ties go to the lower code).
In colour the character is an upper half block '▀' whose foreground is the top
`s x s` square and whose background is the bottom one, so the picture has twice
the vertical detail of the plain ASCII map.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from core.landmarks import Landmark
from core.terrain import TERRAIN_ASCII, TERRAIN_ORDER
from core.types import Position
from observe.symbols import (  # the one table of symbols (and their colours)
    AGENT,
    AGENT_COLOR,
    LANDMARK,
    LANDMARK_COLOR,
    MAP_LEGEND,
    RGB,
    TERRAIN_COLORS,
)

PALETTE: NDArray[np.uint8] = np.array(
    [TERRAIN_COLORS[kind] for kind in TERRAIN_ORDER], dtype=np.uint8
)
"""RGB per terrain code, shape (len(TERRAIN_ORDER), 3): `PALETTE[terrain]` paints a raster."""
PALETTE.setflags(write=False)

AGENT_SYMBOL = AGENT.ascii
LANDMARK_SYMBOL = LANDMARK.ascii

MIN_COLUMNS = 12
"""The narrowest terminal map: enough for one legend entry per line."""

_RESET = "\x1b[0m"
_HALF_BLOCK = "\u2580"  # '▀'
_SWATCH = "\u2588"      # '█'
_LEGEND_GAP = "  "

# PNG markers, as (dx, dy) offsets from the marked cell. An agent is a red 3x3
# square in a white 5x5 frame; a landmark is a magenta 3x3 diamond in a dark
# 5x5 diamond outline. The outlines keep both visible on every terrain colour.
AGENT_OUTLINE_COLOR: RGB = (255, 255, 255)
LANDMARK_OUTLINE_COLOR: RGB = (24, 16, 24)
_AGENT_CORE = tuple((dx, dy) for dy in range(-1, 2) for dx in range(-1, 2))
_AGENT_FRAME = tuple(
    (dx, dy) for dy in range(-2, 3) for dx in range(-2, 3) if max(abs(dx), abs(dy)) == 2
)
_LANDMARK_CORE = tuple(
    (dx, dy) for dy in range(-1, 2) for dx in range(-1, 2) if abs(dx) + abs(dy) <= 1
)
_LANDMARK_FRAME = tuple(
    (dx, dy) for dy in range(-2, 3) for dx in range(-2, 3) if abs(dx) + abs(dy) == 2
)


# --------------------------------------------------------------------------- terminal


def render_terminal_map(
    terrain: NDArray[Any],
    *,
    max_columns: int,
    max_rows: int,
    color: bool,
    agents: Sequence[tuple[str, Position]] = (),
    landmarks: Sequence[Landmark] = (),
) -> str:
    """The whole world, downsampled to fit `max_columns` x `max_rows` characters.

    The result is the map followed by a legend (wrapped to `max_columns`); all of
    it, legend included, fits in `max_rows` lines. Lines are joined with "\\n" and
    there is no trailing newline. With `color` every line ends with an ANSI reset.
    Raises ValueError for a malformed raster or a size too small to draw in.
    """
    _check_terrain(terrain)
    if max_columns < MIN_COLUMNS:
        raise ValueError(f"max_columns must be at least {MIN_COLUMNS}, got {max_columns}")
    height, width = terrain.shape
    legend_lines = 1
    for _ in range(8):  # more legend lines -> fewer map rows -> coarser scale: settles fast
        map_rows = max_rows - legend_lines
        if map_rows < 1:
            raise ValueError(
                f"max_rows must leave room for the map and its {legend_lines}-line legend; "
                f"got {max_rows}"
            )
        block = terminal_block_size(width, height, max_columns=max_columns, max_rows=map_rows)
        legend = _legend(block, color=color, width=max_columns)
        if len(legend) <= legend_lines:
            break
        legend_lines = len(legend)
    else:  # pragma: no cover - the loop above converges within a couple of passes
        raise AssertionError("legend layout did not settle")
    agent_cells = [pos for _, pos in agents]
    landmark_cells = [landmark.position for landmark in landmarks]
    if color:
        rows = _color_rows(terrain, block, agent_cells, landmark_cells)
    else:
        rows = _ascii_rows(terrain, block, agent_cells, landmark_cells)
    return "\n".join(rows + legend)


def terminal_block_size(width: int, height: int, *, max_columns: int, max_rows: int) -> int:
    """The smallest `s` such that characters of `s` x `2s` cells fit the world in the box."""
    if max_columns < 1 or max_rows < 1:
        raise ValueError(f"the map needs at least 1x1 characters, got {max_columns}x{max_rows}")
    return max(1, -(-width // max_columns), -(-height // (2 * max_rows)))


def majority_terrain(
    terrain: NDArray[Any], block_height: int, block_width: int
) -> NDArray[np.uint8]:
    """The most common terrain code in each `block_height` x `block_width` block.

    Blocks start at (0, 0); those on the right and bottom edges may be partial.
    Ties go to the lower terrain code. Result shape: (ceil(h / bh), ceil(w / bw)).
    """
    _check_terrain(terrain)
    if block_height < 1 or block_width < 1:
        raise ValueError(f"block sizes must be at least 1, got {block_height}x{block_width}")
    height, width = terrain.shape
    kinds = len(TERRAIN_ORDER)
    blocks_y = -(-height // block_height)
    blocks_x = -(-width // block_width)
    row_key = (np.arange(height, dtype=np.int64) // block_height) * (blocks_x * kinds)
    col_key = (np.arange(width, dtype=np.int64) // block_width) * kinds
    keys = row_key[:, None] + col_key[None, :] + terrain
    counts = np.bincount(keys.ravel(), minlength=blocks_y * blocks_x * kinds)
    majority = counts.reshape(blocks_y, blocks_x, kinds).argmax(axis=2)
    return majority.astype(np.uint8)


def _color_rows(
    terrain: NDArray[Any],
    block: int,
    agent_cells: Sequence[Position],
    landmark_cells: Sequence[Position],
) -> list[str]:
    samples = majority_terrain(terrain, block, block)
    rgb = PALETTE[samples].copy()
    _paint(rgb, landmark_cells, block, block, LANDMARK_COLOR)
    _paint(rgb, agent_cells, block, block, AGENT_COLOR)
    colours: list[list[list[int]]] = rgb.tolist()
    rows: list[str] = []
    for top_index in range(0, len(colours), 2):
        top = colours[top_index]
        bottom = colours[top_index + 1] if top_index + 1 < len(colours) else None
        parts: list[str] = []
        fg: list[int] | None = None
        bg: list[int] | None = None
        for column, top_rgb in enumerate(top):
            bottom_rgb = bottom[column] if bottom is not None else None
            if top_rgb != fg:
                fg = top_rgb
                parts.append(_fg(top_rgb))
            if column == 0 or bottom_rgb != bg:
                bg = bottom_rgb
                parts.append(_bg(bottom_rgb) if bottom_rgb is not None else "\x1b[49m")
            parts.append(_HALF_BLOCK)
        parts.append(_RESET)
        rows.append("".join(parts))
    return rows


def _ascii_rows(
    terrain: NDArray[Any],
    block: int,
    agent_cells: Sequence[Position],
    landmark_cells: Sequence[Position],
) -> list[str]:
    symbols = np.array([TERRAIN_ASCII[kind] for kind in TERRAIN_ORDER])
    grid = symbols[majority_terrain(terrain, 2 * block, block)]
    _paint(grid, landmark_cells, 2 * block, block, LANDMARK_SYMBOL)
    _paint(grid, agent_cells, 2 * block, block, AGENT_SYMBOL)
    return ["".join(row) for row in grid.tolist()]


def _paint(
    grid: NDArray[Any],
    cells: Sequence[Position],
    block_height: int,
    block_width: int,
    value: Any,
) -> None:
    """Set the block of `grid` holding each cell to `value`; cells off the grid are skipped."""
    rows, columns = grid.shape[:2]
    for cell in cells:
        if cell.x < 0 or cell.y < 0:
            continue
        row, column = cell.y // block_height, cell.x // block_width
        if row < rows and column < columns:
            grid[row, column] = value


def _legend(block: int, *, color: bool, width: int) -> list[str]:
    entries: list[tuple[RGB | str, str]] = [
        ((symbol.rgb or (0, 0, 0)) if color else symbol.ascii, _short(symbol.meaning))
        for symbol in MAP_LEGEND]
    items: list[tuple[str, int]] = []
    for mark, name in entries:
        text = name[: max(0, width - 2)]
        shown = f"{_fg(mark)}{_SWATCH}{_RESET}" if isinstance(mark, tuple) else mark
        items.append((f"{shown} {text}", 2 + len(text)))
    scale = f"1 char = {block}x{2 * block} cells"[:width]
    items.append((scale, len(scale)))
    lines: list[str] = []
    current: list[str] = []
    used = 0
    for text, visible in items:
        needed = visible if not current else used + len(_LEGEND_GAP) + visible
        if current and needed > width:
            lines.append(_LEGEND_GAP.join(current))
            current, needed = [], visible
        current.append(text)
        used = needed
    if current:
        lines.append(_LEGEND_GAP.join(current))
    if color:
        lines = [line + _RESET for line in lines]
    return lines


def _short(meaning: str) -> str:
    """A legend entry's words, short for a terminal line ("an agent, awake": "agent")."""
    return {AGENT.meaning: "agent", LANDMARK.meaning: "landmark"}.get(meaning, meaning)


def _fg(rgb: Sequence[int]) -> str:
    return f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m"


def _bg(rgb: Sequence[int]) -> str:
    return f"\x1b[48;2;{rgb[0]};{rgb[1]};{rgb[2]}m"


# --------------------------------------------------------------------------- image


def write_png(
    path: str | os.PathLike[str],
    terrain: NDArray[Any],
    *,
    agents: Sequence[tuple[str, Position]] = (),
    landmarks: Sequence[Landmark] = (),
    scale: int = 1,
) -> None:
    """Write the world as a PNG: one `scale` x `scale` square of pixels per cell.

    Landmarks are drawn as a magenta 3x3 diamond in a dark outline, agents as a
    red 3x3 square in a white 5x5 frame (clipped at the edges; agents on top).
    Raises ValueError for a path not ending in .png, a scale below 1 or a
    malformed raster, and OSError when the file cannot be written (for instance
    a missing parent folder).
    """
    suffix = Path(path).suffix
    if suffix.lower() != ".png":
        shown = repr(suffix) if suffix else "no suffix"
        raise ValueError(f"the map image must be a .png file, got {shown}: {os.fspath(path)}")
    if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise ValueError(f"scale must be a whole number of at least 1, got {scale!r}")
    image = with_legend(Image.fromarray(
        map_image_array(terrain, agents=agents, landmarks=landmarks, scale=scale)))
    image.save(path, format="PNG")


LEGEND_WIDTH = 170
"""Pixels of legend beside the map in the PNG: a swatch and its words per line."""
LEGEND_LINE = 14
LEGEND_BACKGROUND: RGB = (12, 24, 31)


def legend_height() -> int:
    return 8 + LEGEND_LINE * len(MAP_LEGEND)


def with_legend(world: Image.Image) -> Image.Image:
    """The map with the one legend beside it (observe/symbols.py MAP_LEGEND): the map
    keeps its pixels at the top left, one square a cell."""
    from PIL import ImageDraw, ImageFont

    width, height = world.size
    image = Image.new("RGB", (width + LEGEND_WIDTH, max(height, legend_height())),
                      LEGEND_BACKGROUND)
    image.paste(world, (0, 0))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for i, symbol in enumerate(MAP_LEGEND):
        top = 4 + i * LEGEND_LINE
        left = width + 8
        draw.rectangle((left, top + 2, left + 9, top + 11), fill=symbol.rgb or (0, 0, 0),
                       outline=(230, 230, 230))
        draw.text((left + 16, top), _short(symbol.meaning), fill=(230, 230, 230), font=font)
    return image


def map_image_array(
    terrain: NDArray[Any],
    *,
    agents: Sequence[tuple[str, Position]] = (),
    landmarks: Sequence[Landmark] = (),
    scale: int = 1,
) -> NDArray[np.uint8]:
    """The RGB pixels `write_png` saves: shape (height * scale, width * scale, 3)."""
    _check_terrain(terrain)
    rgb = PALETTE[terrain]
    landmark_cells = [landmark.position for landmark in landmarks]
    agent_cells = [pos for _, pos in agents]
    _stamp(rgb, landmark_cells, _LANDMARK_FRAME, LANDMARK_OUTLINE_COLOR)
    _stamp(rgb, landmark_cells, _LANDMARK_CORE, LANDMARK_COLOR)
    _stamp(rgb, agent_cells, _AGENT_FRAME, AGENT_OUTLINE_COLOR)
    _stamp(rgb, agent_cells, _AGENT_CORE, AGENT_COLOR)
    if scale > 1:
        rgb = np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)
    return np.ascontiguousarray(rgb)


def _stamp(
    rgb: NDArray[np.uint8],
    cells: Sequence[Position],
    offsets: Sequence[tuple[int, int]],
    colour: RGB,
) -> None:
    if not cells:
        return
    height, width = rgb.shape[:2]
    centres = np.array([(cell.x, cell.y) for cell in cells], dtype=np.int64)
    inside = (
        (centres[:, 0] >= 0) & (centres[:, 0] < width)
        & (centres[:, 1] >= 0) & (centres[:, 1] < height)
    )
    centres = centres[inside]
    shifts = np.array(offsets, dtype=np.int64)
    points = (centres[:, None, :] + shifts[None, :, :]).reshape(-1, 2)
    xs, ys = points[:, 0], points[:, 1]
    keep = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
    rgb[ys[keep], xs[keep]] = colour


# --------------------------------------------------------------------------- colour support


def supports_color(stream: Any, environ: Mapping[str, str]) -> bool:
    """Whether to write ANSI colour to `stream`.

    Only to a terminal, and not when NO_COLOR is set to a non-empty value
    (https://no-color.org) or TERM is "dumb".
    """
    if environ.get("NO_COLOR"):
        return False
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


def _check_terrain(terrain: Any) -> None:
    if not isinstance(terrain, np.ndarray) or terrain.ndim != 2:
        raise ValueError("a terrain map must be a 2-D numpy array indexed [y, x]")
    if terrain.size == 0:
        raise ValueError(f"a terrain map must have at least one cell, got shape {terrain.shape}")
    if not np.issubdtype(terrain.dtype, np.integer):
        raise ValueError(f"a terrain map must hold integer codes, got dtype {terrain.dtype}")
    low, high = int(terrain.min()), int(terrain.max())
    if low < 0 or high >= len(TERRAIN_ORDER):
        raise ValueError(
            f"terrain codes must be 0..{len(TERRAIN_ORDER) - 1}, found {low}..{high}"
        )
