"""GridView in a real (headless) app: cursor, scrolling, drawing, zoom, follow, cache."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from rich.style import Style
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.strip import Strip

from core.agent import Agent
from core.landmarks import Landmark
from core.objects import PlacedItem, Sign, WorldObject
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Position
from observe.snapshot import AgentView, WorldSnapshot
from observe.tui.glyphs import ASCII, EMOJI
from observe.tui.messages import CellChosen
from observe.tui.widgets.grid import GridView

WIDTH, HEIGHT = 40, 30
VIEW_COLUMNS, VIEW_ROWS = 24, 10
"""The grid's size in the test app (no scrollbars): 12 cells by 10 in the world view."""


def agent(name: str, x: int, y: int, state: str = "awake") -> AgentView:
    body = Agent(AgentName(name), "offline", "calm", Position(x, y),
                 is_sleeping=state == "asleep")
    return AgentView(name, Position(x, y), state, "", body)


def world(
    agents: Iterable[AgentView] = (),
    *,
    objects: Iterable[WorldObject] = (),
    landmarks: Iterable[Landmark] = (),
    east: Iterable[tuple[int, int]] = (),
    south: Iterable[tuple[int, int]] = (),
    doors_east: Iterable[tuple[int, int]] = (),
    doors_south: Iterable[tuple[int, int]] = (),
    changed: frozenset[int] | None = None,
    terrain: np.ndarray | None = None,
) -> WorldSnapshot:
    """A 40x30 grass world with water in the first two columns; walls as (x, y) cells
    whose east or south edge has one (a door is a wall too, listed again in doors)."""
    if terrain is None:
        terrain = np.full((HEIGHT, WIDTH), TERRAIN_CODE[Terrain.GRASS], dtype=np.uint8)
        terrain[:, :2] = TERRAIN_CODE[Terrain.WATER]
    arrays = []
    for cells in (east, south, doors_east, doors_south):
        array = np.zeros((HEIGHT, WIDTH), dtype=bool)
        for x, y in cells:
            array[y, x] = True
        arrays.append(array)
    return WorldSnapshot(
        tick=1, time_text="day 1, 08:00", period="morning", weather="clear",
        width=WIDTH, height=HEIGHT, terrain=terrain,
        wall_east=arrays[0] | arrays[2], wall_south=arrays[1] | arrays[3],
        door_east=arrays[2], door_south=arrays[3],
        agents=tuple(sorted(agents, key=lambda v: v.name)), objects=tuple(objects),
        landmarks=tuple(landmarks), changed_rows=changed,
    )


class GridApp(App[None]):
    CSS = f"GridView {{ width: {VIEW_COLUMNS}; height: {VIEW_ROWS}; scrollbar-size: 0 0; }}"

    def __init__(self, snapshot: WorldSnapshot) -> None:
        super().__init__()
        self.first = snapshot
        self.chosen: list[tuple[int, int]] = []

    def compose(self) -> ComposeResult:
        yield GridView()

    def on_mount(self) -> None:
        grid = self.query_one(GridView)
        grid.show(self.first)
        grid.focus()

    def on_cell_chosen(self, message: CellChosen) -> None:
        self.chosen.append((message.x, message.y))


def line(grid: GridView, y: int) -> Strip:
    """The strip the grid draws for world row `y` (world view), as on screen now."""
    return grid.render_line(y - grid.scroll_offset.y)


def cell(grid: GridView, x: int, y: int) -> Strip:
    """The two columns of cell (x, y) in the world view."""
    column = 2 * x - grid.scroll_offset.x
    return line(grid, y).crop(column, column + 2)


def style_of(strip: Strip) -> Style:
    return next(iter(strip.simplify())).style or Style()


# ---------------------------------------------------------------------- the cursor


async def test_arrow_keys_and_hjkl_move_the_cursor_and_post_cell_chosen() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.centre_on(10, 10)
        await pilot.pause()
        app.chosen.clear()
        moves = {"right": (11, 10), "down": (11, 11), "left": (10, 11), "up": (10, 10),
                 "l": (11, 10), "j": (11, 11), "h": (10, 11), "k": (10, 10)}
        for key, expected in moves.items():
            await pilot.press(key)
            assert grid.cursor == expected, key
        await pilot.pause()
        assert app.chosen == list(moves.values())


async def test_unknown_keys_do_nothing() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.centre_on(5, 5)
        await pilot.pause()
        app.chosen.clear()
        before = (grid.cursor, grid.scroll_offset, grid.zoom, grid.ascii_mode)
        await pilot.press("x", "y", "1", "question_mark")
        await pilot.pause()
        assert (grid.cursor, grid.scroll_offset, grid.zoom, grid.ascii_mode) == before
        assert app.chosen == []


async def test_the_cursor_stops_at_the_world_edges() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.press("left", "up")
        assert grid.cursor == (0, 0)
        grid.move_cursor(100, 100)
        assert grid.cursor == (WIDTH - 1, HEIGHT - 1)


async def test_page_keys_move_a_screenful() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.press("pagedown")
        assert grid.cursor == (0, VIEW_ROWS)
        await pilot.press("ctrl+pagedown")
        assert grid.cursor == (VIEW_COLUMNS // 2, VIEW_ROWS)
        await pilot.press("L")
        assert grid.cursor == (VIEW_COLUMNS, VIEW_ROWS)
        await pilot.press("H", "pageup")
        assert grid.cursor == (VIEW_COLUMNS // 2, 0)


async def test_the_view_follows_the_cursor_on_cell_boundaries() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        for _ in range(15):
            await pilot.press("l")
        await pilot.pause()
        x0, _, x1, _ = grid.visible_cells()
        assert x0 <= 15 < x1
        assert grid.scroll_offset.x > 0
        assert grid.scroll_offset.x % 2 == 0
        # a scroll by one column (a wheel, a scrollbar) still lands on a cell boundary
        grid.scroll_to(x=7, animate=False)
        assert grid.scroll_offset.x % 2 == 0
        grid.scroll_to(x=grid.scroll_offset.x + 1, animate=False)
        assert grid.scroll_offset.x % 2 == 0


async def test_an_odd_width_never_cuts_a_wide_glyph() -> None:
    app = GridApp(world([agent("Ember", 11, 3)]))
    app.CSS = "GridView { width: 23; height: 10; scrollbar-size: 0 0; }"
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        strip = line(grid, 3)
        assert strip.cell_length == 23
        assert strip.text.endswith(" ")  # the 12th cell, half in view, is left blank
        grid.scroll_to(x=1, animate=False)
        assert grid.scroll_offset.x == 2
        assert line(grid, 3).text.startswith("🌊")  # the second water cell, whole


async def test_a_click_puts_the_cursor_on_the_cell() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.click(GridView, offset=(7, 3))
        await pilot.pause()
        assert grid.cursor == (3, 3)
        assert app.chosen[-1] == (3, 3)


# ---------------------------------------------------------------------- drawing


async def test_an_agent_shows_over_a_sign_over_an_item_over_a_landmark_over_terrain() -> None:
    sign = Sign("s1", Position(4, 2), None, 0, text="hello")
    item = PlacedItem("i1", Position(5, 2), None, 0, resource="wood", quantity=2)
    under_agent = Sign("s2", Position(3, 2), None, 0, text="under")
    spring = Landmark("spring", "the Spring", "water", Position(6, 2))
    stone = Landmark("standing_stone", "the Stone", "a stone", Position(5, 2))
    snap = world([agent("Ember", 3, 2)],
                 objects=[sign, item, under_agent,
                          PlacedItem("i2", Position(4, 2), None, 0, resource="wood", quantity=1)],
                 landmarks=[spring, stone, Landmark("spring", "the Well", "w", Position(3, 2))])
    app = GridApp(snap)
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        assert cell(grid, 3, 2).text == EMOJI.agent_part(("Ember",), "awake")[0]
        assert cell(grid, 4, 2).text == EMOJI.sign[0]
        assert cell(grid, 5, 2).text == EMOJI.item[0]
        assert cell(grid, 6, 2).text == EMOJI.landmark_part("spring")[0]
        assert cell(grid, 7, 2).text == EMOJI.terrain[TERRAIN_CODE[Terrain.GRASS]][0]
        assert cell(grid, 0, 2).text == EMOJI.terrain[TERRAIN_CODE[Terrain.WATER]][0]


async def test_sleeping_agents_and_crowds_have_their_own_glyphs() -> None:
    snap = world([agent("Ember", 3, 1, "asleep"), agent("Ash", 5, 1), agent("Birch", 5, 1)])
    app = GridApp(snap)
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        assert cell(grid, 3, 1).text == EMOJI.agent_states["asleep"][0]
        assert cell(grid, 5, 1).text == EMOJI.agents_many[0]


async def test_the_selected_and_followed_agents_are_marked() -> None:
    app = GridApp(world([agent("Ember", 3, 1), agent("Ash", 5, 1)]))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.move_cursor(0, 5)  # the cursor's own style away from the agents
        await pilot.pause()
        selected = EMOJI.selected.bgcolor
        assert style_of(cell(grid, 3, 1)).bgcolor != selected
        grid.set_highlight("Ember")
        assert style_of(cell(grid, 3, 1)).bgcolor == selected
        assert style_of(cell(grid, 5, 1)).bgcolor != selected
        grid.set_highlight("Ash")
        assert style_of(cell(grid, 5, 1)).bgcolor == selected
        assert style_of(cell(grid, 3, 1)).bgcolor != selected
        grid.follow("Ash")  # the followed agent carries the cursor, which shows on top
        assert grid.cursor == (5, 1)
        assert style_of(cell(grid, 5, 1)).bgcolor == EMOJI.cursor.bgcolor


async def test_the_cursor_cell_is_highlighted() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.centre_on(6, 4)
        await pilot.pause()
        cursor = EMOJI.cursor.bgcolor
        assert style_of(cell(grid, 6, 4)).bgcolor == cursor
        assert style_of(cell(grid, 7, 4)).bgcolor != cursor
        await pilot.press("l")
        assert style_of(cell(grid, 7, 4)).bgcolor == cursor
        assert style_of(cell(grid, 6, 4)).bgcolor != cursor


def room() -> dict[str, list[tuple[int, int]]]:
    """Walls round the cells x 4..6, y 2..3, with a door in the south wall under (5, 3)."""
    return {
        "east": [(3, 2), (3, 3), (6, 2), (6, 3)],
        "south": [(4, 1), (5, 1), (6, 1), (4, 3), (6, 3)],
        "doors_south": [(5, 3)],
    }


async def test_walls_in_the_world_view_fold_into_the_cells_with_doors_as_gaps() -> None:
    app = GridApp(world([agent("Ember", 6, 3)], **room()))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        # cells 3..7 of rows 1..4: each edge drawn once, on the cell west of or above it;
        # where a wall takes a column the cell shows its mark ('.' grass, '@' Ember)
        assert [line(grid, y).crop(6, 16).text for y in range(1, 5)] == [
            ".┌─────┐· ",
            ".│· · .│· ",
            ".└──.─@┘· ",  # the door under (5, 3) is a gap in the south wall
            "· · · · · ",
        ]


async def test_walls_in_the_close_view_lie_between_cells_as_in_the_agent_view() -> None:
    app = GridApp(world([agent("Ember", 6, 3)], **room()))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.press("z")
        grid.centre_on(0, 0)
        await pilot.pause()
        assert grid.zoom == "close"
        lines = [grid.render_line(y).text for y in range(2, 8)]
        agent_glyph = EMOJI.agent_states["awake"][0]
        assert lines == [
            "🌊 🌊 ·  ·  ·  ·  ·  ·  ",   # row 1
            "           ┌────────┐   ",   # its edge row: the room's north wall
            "🌊 🌊 ·  · │·  ·  · │·  ",   # row 2, walls in the edge columns
            "           │        │   ",
            f"🌊 🌊 ·  · │·  ·  {agent_glyph}│·  ",  # row 3: Ember, whole
            "           └───  ───┘   ",   # the door: a gap under (5, 3)
        ]


async def test_ascii_mode_draws_plain_ascii() -> None:
    app = GridApp(world([agent("Ember", 6, 3)], **room()))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        assert not grid.ascii_mode
        grid.set_ascii(True)
        assert grid.ascii_mode
        texts = [line(grid, y).text for y in range(0, 5)]
        assert all(text.isascii() for text in texts)
        assert texts[0] == "====" + ".." * 10  # water, as --map draws it (observe/symbols.py)
        assert texts[3][6:16] == ".+--.-@+.."
        grid.move_cursor(0, 5)
        assert (cell(grid, 5, 2).text, cell(grid, 6, 2).text) == ("..", ".|")
        await pilot.press("z")
        grid.centre_on(0, 0)
        await pilot.pause()
        assert grid.render_line(6).text == "== == .. ..|.. .. @E|.. "
        assert grid.render_line(7).text == "           +---  ---+   "
        grid.set_ascii(False)
        assert not grid.ascii_mode
        assert "🌊" in grid.render_line(6).text


async def test_an_ascii_agent_shows_its_initial() -> None:
    app = GridApp(world([agent("Ember", 4, 1), agent("ash", 8, 1, "asleep")]))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.set_ascii(True)
        await pilot.pause()
        assert cell(grid, 4, 1).text == "@E"
        assert cell(grid, 8, 1).text == "zA"
        grass = ASCII.terrain[TERRAIN_CODE[Terrain.GRASS]][1]
        assert style_of(cell(grid, 5, 1)).color == grass.color


# ---------------------------------------------------------------------- moving the view


async def test_centre_on_centres_and_clamps_at_the_world_edges() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.centre_on(20, 15)
        await pilot.pause()
        assert grid.cursor == (20, 15)
        assert grid.visible_cells() == (14, 10, 26, 20)  # 12 x 10 cells, (20, 15) mid
        grid.centre_on(1, 1)
        assert grid.scroll_offset == (0, 0)
        grid.centre_on(WIDTH - 1, HEIGHT - 1)
        assert grid.visible_cells() == (WIDTH - 12, HEIGHT - 10, WIDTH, HEIGHT)
        grid.centre_on(100, -7)
        assert grid.cursor == (WIDTH - 1, 0)
        assert grid.visible_cells()[1] == 0
        await pilot.pause()
        assert app.chosen[-1] == (WIDTH - 1, 0)


async def test_follow_keeps_the_agent_centred_after_each_show() -> None:
    app = GridApp(world([agent("Ember", 5, 5)]))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.follow("Ember")
        assert grid.following == "Ember"
        assert grid.cursor == (5, 5)
        grid.show(world([agent("Ember", 22, 17)], changed=frozenset({5, 17})))
        await pilot.pause()
        assert grid.cursor == (22, 17)
        assert grid.visible_cells() == (16, 12, 28, 22)
        assert app.chosen[-1] == (22, 17)
        grid.show(world([agent("Ember", 23, 17)], changed=frozenset({17})))
        assert grid.visible_cells() == (17, 12, 29, 22)
        await pilot.press("j")  # the person takes the cursor: following ends
        assert grid.following is None
        grid.show(world([agent("Ember", 30, 20)], changed=frozenset({17, 20})))
        assert grid.cursor == (23, 18)


async def test_the_zoom_toggles_and_scrolls_by_whole_cells() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.centre_on(20, 15)
        await pilot.press("z")
        assert grid.zoom == "close"
        assert grid.cursor == (20, 15)
        x0, y0, x1, y1 = grid.visible_cells()
        assert x0 <= 20 < x1 and y0 <= 15 < y1
        assert grid.scroll_offset.x % 3 == 0 and grid.scroll_offset.y % 2 == 0
        grid.scroll_to(x=grid.scroll_offset.x + 1, y=grid.scroll_offset.y + 1, animate=False)
        assert grid.scroll_offset.x % 3 == 0 and grid.scroll_offset.y % 2 == 0
        await pilot.press("z")
        assert grid.zoom == "world"


async def test_the_viewport_is_reported_when_it_moves() -> None:
    seen: list[tuple[int, int, int, int]] = []

    class Watching(GridApp):
        def on_grid_view_viewport_changed(self, message: GridView.ViewportChanged) -> None:
            seen.append((message.x0, message.y0, message.x1, message.y1))

    app = Watching(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        grid.centre_on(20, 15)
        await pilot.pause()
        assert seen[-1] == grid.visible_cells() == (14, 10, 26, 20)


# ---------------------------------------------------------------------- the strip cache


async def test_a_line_drawn_twice_is_built_once() -> None:
    app = GridApp(world([agent("Ember", 3, 3)]))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        built = grid.rows_built
        first = grid.render_line(3)
        assert grid.render_line(3) is first
        assert grid.rows_built == built


async def test_show_rebuilds_only_the_changed_rows() -> None:
    app = GridApp(world([agent("Ember", 3, 5), agent("Ash", 8, 2)]))
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        for y in range(VIEW_ROWS):
            grid.render_line(y)
        built = grid.rows_built
        grid.show(world([agent("Ember", 4, 5), agent("Ash", 8, 2)], changed=frozenset({5})))
        lines = [grid.render_line(y) for y in range(VIEW_ROWS)]
        assert grid.rows_built == built + 1
        awake = EMOJI.agent_states["awake"][0]
        assert lines[5].crop(8, 10).text == awake and lines[5].crop(6, 8).text != awake
        # a snapshot that says nothing changed in row 2 keeps row 2 as it was
        grid.show(world([agent("Ember", 4, 5)], changed=frozenset()))
        assert grid.render_line(2) is lines[2]
        # None: everything may have changed
        grid.show(world([agent("Ember", 4, 5)], changed=None))
        grid.render_line(2)
        assert grid.rows_built == built + 2


async def test_show_repaints_only_visible_changed_rows() -> None:
    app = GridApp(world())
    async with app.run_test() as pilot:
        grid = app.query_one(GridView)
        await pilot.pause()
        repainted: list[Region] = []
        grid.refresh = lambda *regions, **_: repainted.extend(regions)  # type: ignore[method-assign]
        grid.show(world(changed=frozenset({2, 3, 4, 7, 25})))
        width = grid.size.width
        # row 25 is out of view; no region is wider than the grid (the screen would
        # repaint the panels beside it too)
        assert repainted == [Region(0, 2, width, 3), Region(0, 7, width, 1)]
