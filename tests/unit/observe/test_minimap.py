"""Minimap in a real (headless) app: terrain colours, agents, the viewport, clicks, cache."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from rich.color import Color
from rich.style import Style
from textual.app import App, ComposeResult

from core.agent import Agent
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Position
from observe.snapshot import AgentView, WorldSnapshot
from observe.tui.messages import CentreOn
from observe.tui.widgets.minimap import HALF_BLOCK, Minimap, terrain_picture
from observe.worldmap import AGENT_COLOR, TERRAIN_COLORS

WIDTH, HEIGHT = 40, 30
BOX_COLUMNS, BOX_ROWS = 20, 15
"""The box: 20 x 30 pixels, so a pixel is 2 cells wide and 1 cell tall."""

WHITE = (255, 255, 255)


def agent(name: str, x: int, y: int) -> AgentView:
    return AgentView(name, Position(x, y), "awake", "",
                     Agent(AgentName(name), "offline", "calm", Position(x, y)))


def world(agents: Iterable[AgentView] = (), terrain: np.ndarray | None = None) -> WorldSnapshot:
    """Water in the west half (x < 20), grass in the east, no walls."""
    if terrain is None:
        terrain = np.full((HEIGHT, WIDTH), TERRAIN_CODE[Terrain.GRASS], dtype=np.uint8)
        terrain[:, :20] = TERRAIN_CODE[Terrain.WATER]
    flat = np.zeros((HEIGHT, WIDTH), dtype=bool)
    return WorldSnapshot(
        tick=1, time_text="day 1", period="morning", weather="clear", width=WIDTH,
        height=HEIGHT, terrain=terrain, wall_east=flat, wall_south=flat, door_east=flat,
        door_south=flat, agents=tuple(sorted(agents, key=lambda v: v.name)))


class MapApp(App[None]):
    CSS = f"Minimap {{ width: {BOX_COLUMNS}; height: {BOX_ROWS}; }}"

    def __init__(self, snapshot: WorldSnapshot) -> None:
        super().__init__()
        self.first = snapshot
        self.centred: list[tuple[int, int]] = []

    def compose(self) -> ComposeResult:
        yield Minimap()

    def on_mount(self) -> None:
        self.query_one(Minimap).show(self.first)

    def on_centre_on(self, message: CentreOn) -> None:
        self.centred.append((message.x, message.y))


def rgb(color: Color | None) -> tuple[int, int, int]:
    assert color is not None
    triplet = color.get_truecolor()
    return (triplet.red, triplet.green, triplet.blue)


def pixel_pair(minimap: Minimap, column: int, row: int) -> tuple[tuple[int, int, int], ...]:
    """(top, bottom) colours of character (column, row)."""
    piece = minimap.render_line(row).crop(column, column + 1)
    segment = next(iter(piece))
    assert segment.text == HALF_BLOCK
    style = segment.style or Style()
    return rgb(style.color), rgb(style.bgcolor)


async def test_the_terrain_fills_the_box_in_half_blocks() -> None:
    app = MapApp(world())
    async with app.run_test() as pilot:
        minimap = app.query_one(Minimap)
        await pilot.pause()
        strip = minimap.render_line(0)
        assert strip.text == HALF_BLOCK * BOX_COLUMNS
        water, grass = TERRAIN_COLORS[Terrain.WATER], TERRAIN_COLORS[Terrain.GRASS]
        assert pixel_pair(minimap, 0, 0) == (water, water)
        assert pixel_pair(minimap, 9, 7) == (water, water)  # cells 18, 19: water
        assert pixel_pair(minimap, 10, 7) == (grass, grass)  # cells 20, 21: grass


async def test_agents_are_bright_marks_in_their_half_block() -> None:
    app = MapApp(world([agent("Ember", 24, 7), agent("Ash", 6, 10)]))
    async with app.run_test() as pilot:
        minimap = app.query_one(Minimap)
        await pilot.pause()
        grass, water = TERRAIN_COLORS[Terrain.GRASS], TERRAIN_COLORS[Terrain.WATER]
        assert pixel_pair(minimap, 12, 3) == (grass, AGENT_COLOR)  # y 7: the bottom half
        assert pixel_pair(minimap, 3, 5) == (AGENT_COLOR, water)   # y 10: the top half
        assert pixel_pair(minimap, 13, 3) == (grass, grass)


async def test_the_viewport_is_outlined() -> None:
    app = MapApp(world())
    async with app.run_test() as pilot:
        minimap = app.query_one(Minimap)
        minimap.set_viewport(4, 2, 20, 12)  # pixels: columns 2..9, rows 2..11
        await pilot.pause()
        assert minimap.viewport == (4, 2, 20, 12)
        water = TERRAIN_COLORS[Terrain.WATER]
        assert pixel_pair(minimap, 5, 1) == (WHITE, water)   # the top edge (pixel row 2)
        assert pixel_pair(minimap, 2, 3) == (WHITE, WHITE)   # the left edge
        assert pixel_pair(minimap, 9, 3) == (WHITE, WHITE)   # the right edge
        assert pixel_pair(minimap, 5, 3) == (water, water)   # inside
        assert pixel_pair(minimap, 5, 5) == (water, WHITE)   # the bottom edge (row 11)
        assert pixel_pair(minimap, 1, 3) == (water, water)   # outside
        minimap.set_viewport(30, 20, 40, 30)
        assert pixel_pair(minimap, 2, 3) == (water, water)   # the old outline is gone


async def test_a_click_centres_on_the_cell_under_it() -> None:
    app = MapApp(world())
    async with app.run_test() as pilot:
        await pilot.click(Minimap, offset=(5, 3))
        await pilot.click(Minimap, offset=(19, 14))
        await pilot.pause()
        # column 5 covers cells 10 and 11; row 3 covers cells 6 and 7
        assert app.centred == [(10, 6), (38, 28)]


async def test_the_terrain_picture_is_made_again_only_for_new_terrain_or_size() -> None:
    app = MapApp(world())
    async with app.run_test() as pilot:
        minimap = app.query_one(Minimap)
        await pilot.pause()
        assert minimap.terrain_builds == 1
        same_terrain = app.first.terrain
        minimap.show(world([agent("Ember", 3, 3)], terrain=same_terrain))
        minimap.set_viewport(0, 0, 10, 10)
        assert minimap.terrain_builds == 1
        changed = same_terrain.copy()
        changed[:, :] = TERRAIN_CODE[Terrain.FOREST]
        minimap.show(world(terrain=changed))
        assert minimap.terrain_builds == 2
        forest = TERRAIN_COLORS[Terrain.FOREST]
        assert pixel_pair(minimap, 15, 10) == (forest, forest)
        minimap.styles.width = 10
        await pilot.pause()
        assert minimap.terrain_builds == 3
        assert minimap.render_line(0).cell_length == 10


async def test_a_show_rebuilds_only_the_rows_whose_pixels_changed() -> None:
    app = MapApp(world([agent("Ember", 4, 4)]))
    async with app.run_test() as pilot:
        minimap = app.query_one(Minimap)
        await pilot.pause()
        for row in range(BOX_ROWS):
            minimap.render_line(row)
        built = minimap.rows_built
        terrain = app.first.terrain
        minimap.show(world([agent("Ember", 8, 5)], terrain=terrain))  # still text row 2
        for row in range(BOX_ROWS):
            minimap.render_line(row)
        assert minimap.rows_built == built + 1
        assert pixel_pair(minimap, 4, 2)[1] == AGENT_COLOR


def test_shrinking_keeps_the_most_common_terrain_and_growing_samples() -> None:
    grass, forest = TERRAIN_CODE[Terrain.GRASS], TERRAIN_CODE[Terrain.FOREST]
    terrain = np.full((4, 4), grass, dtype=np.uint8)
    terrain[0, :3] = forest
    terrain[1, 0] = forest
    small = terrain_picture(terrain, 2, 2)
    assert small.shape == (2, 2)
    forest_rgb, grass_rgb = TERRAIN_COLORS[Terrain.FOREST], TERRAIN_COLORS[Terrain.GRASS]
    packed = [(c >> 16, (c >> 8) & 255, c & 255) for c in small.ravel().tolist()]
    assert packed == [forest_rgb, grass_rgb, grass_rgb, grass_rgb]
    big = terrain_picture(terrain, 8, 8)
    assert big.shape == (8, 8)
    assert int(big[0, 5]) == int(big[1, 4])  # cell (2, 0) spread over 2 x 2 pixels
    assert int(big[0, 5]) != int(big[0, 6])  # cell (3, 0) is grass
