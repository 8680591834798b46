"""PerceptionBuilder: what an agent sees, the grid drawn from it, and the words about it."""

from __future__ import annotations

import dataclasses
import unicodedata

import numpy as np
import pytest

import adapters.perception as perception_module
from adapters.perception import (
    Feature,
    PerceptionBuilder,
    display_width,
    narrate,
)
from config import load_config
from core.agent import Agent, Inventory
from core.landmarks import Landmark
from core.objects import Item, PlacedItem, Sign
from core.places import NamedPlace
from core.structures import Structure
from core.terrain import TERRAIN_CODE, Terrain, Weather
from core.types import CARDINALS, AgentName, Direction, Position
from core.world import WorldState
from services.agent_service import AgentRuleError, AgentService
from services.conversation_service import ConversationError
from services.simulation import Simulation, build_simulation
from services.world_service import Clock, TerrainRules, WorldService

CONFIG = load_config(None)
RULES = TerrainRules.from_traits(CONFIG.terrain.terrains)
GRASS = TERRAIN_CODE[Terrain.GRASS]
ASH, BIRCH, CEDAR, DUSK = (AgentName(n) for n in ("Ash", "Birch", "Cedar", "Dusk"))
NIGHT_TICK = 14
"""The default clock starts at 08:00 with 24 ticks a day: tick 14 is 22:00."""
E, S, N, W = Direction.EAST, Direction.SOUTH, Direction.NORTH, Direction.WEST


def make(
    size: tuple[int, int] = (20, 20),
    people: dict[AgentName, Position] | None = None,
    *,
    codes: np.ndarray | None = None,
    landmarks: tuple[Landmark, ...] = (),
    horizon: int = 40,
) -> tuple[Simulation, PerceptionBuilder]:
    width, height = size
    world = WorldService(
        WorldState(width, height, 1),
        np.full((height, width), GRASS, np.uint8) if codes is None else codes,
        RULES, clock=Clock(), landmarks=landmarks,
    )
    people = people if people is not None else {ASH: Position(width // 2, height // 2)}
    agents = AgentService(world, [
        Agent(name=name, model_id="m", personality="p", position=pos)
        for name, pos in people.items()
    ])
    sim = build_simulation(world, CONFIG, agents, seed=1)
    return sim, PerceptionBuilder(
        sim.world, sim.agents, sim.conversations, sim.gathering, horizon=horizon
    )


# ---------------------------------------------------------------------- reading a grid


def graphemes(text: str) -> list[str]:
    """Characters, with an emoji presentation selector kept on the character before it."""
    out: list[str] = []
    for ch in text:
        if ch == "\ufe0f" and out:
            out[-1] += ch
        else:
            out.append(ch)
    return out


def width_of(text: str) -> int:
    """Display columns, worked out here independently of the module under test."""
    return sum(
        2 if "\ufe0f" in g or unicodedata.east_asian_width(g[0]) in "WF" else 1
        for g in graphemes(text)
    )


def slots(row: str) -> list[str]:
    """A grid row split into its slots: two columns, one column, two columns, ...

    Fails if a symbol straddles a slot boundary, i.e. if the row is misaligned.
    """
    out, current, width, want = [], "", 0, 2
    for g in graphemes(row):
        current += g
        width += width_of(g)
        assert width <= want, f"{row!r} is misaligned at {current!r}"
        if width == want:
            out.append(current)
            current, width, want = "", 0, 3 - want
    assert current == "", f"{row!r} ends mid-slot"
    return out


WALL_GLYPHS = set(" │─┌┐└┘├┤┬┴┼╎╌")


def map_of(grid: str) -> list[str]:
    """The map's lines of a grid_view: after the header, before the key."""
    assert grid.startswith("Map, north at the top: "), grid
    return [line for line in grid.split("\n")[1:] if ": " not in line]


def inner_rows(grid: str) -> list[str]:
    """The map's lines inside the world's edge (the ▓▓ border taken off)."""
    rows = []
    for line in map_of(grid):
        if set(line) <= {"▓", " "}:
            continue  # the edge to the north or south
        rows.append(line.removeprefix("▓▓ ").removesuffix(" ▓▓"))
    return rows


def layout(grid: str) -> list[list[str]]:
    """Every slot of the map inside the world's edge, line by line."""
    return [slots(row) for row in inner_rows(grid)]


def cell_rows(grid: str) -> list[list[str]]:
    """The slots of the lines of cells (the lines of walls between them left out)."""
    return [slots(row) for row in inner_rows(grid) if set(row) - WALL_GLYPHS]


def cell_at(grid: str, i: int, j: int) -> str:
    """The symbol in the window's cell (i, j), padding removed."""
    return cell_rows(grid)[j][2 * i].strip()


# ---------------------------------------------------------------------- the grid


def test_a_cell_slot_is_two_columns_and_symbols_are_measured_as_terminals_draw_them():
    assert [display_width(s) for s in ("💧", "🌲", "〰️", "⛰️", "👤", "📜")] == [2] * 6
    assert [display_width(s) for s in ("·", "░", "@", "│", "─")] == [1] * 5


def test_cells_sit_in_slots_under_a_header_and_the_worlds_edge_is_drawn_around_them():
    codes = np.full((3, 3), GRASS, np.uint8)
    codes[0, 2] = TERRAIN_CODE[Terrain.FOREST]
    codes[2, 0] = TERRAIN_CODE[Terrain.WATER]
    sim, builder = make((3, 3), {ASH: Position(1, 1)}, codes=codes)
    assert builder.build(ASH, 0).grid_view == "\n".join([
        "Map, north at the top: by day you see 3 cells each way; columns x 0 to 2 from west "
        "to east, rows y 0 to 2 from north to south. ▓▓ is the world's edge, to the north, "
        "east, south and west.",
        "▓▓ ▓▓ ▓▓ ▓▓ ▓▓",
        "▓▓ ·  ·  🌲 ▓▓",
        "▓▓ ·  @  ·  ▓▓",
        "▓▓ 💧 ·  ·  ▓▓",
        "▓▓ ▓▓ ▓▓ ▓▓ ▓▓",
    ])  # no blank line between rows: a line between rows is drawn only for a wall


def test_every_row_has_the_same_display_width_whatever_the_terrain():
    codes = np.array([[TERRAIN_CODE[t] for t in Terrain]] * 7, np.uint8)
    sim, builder = make((7, 7), {ASH: Position(3, 3), BIRCH: Position(4, 4)}, codes=codes)
    sim.world.add_object(Sign("s", Position(0, 0), ASH, 0, "hello"))
    sim.world.place_wall(Position(2, 2), E)
    sim.world.place_wall(Position(2, 2), S)
    sim.world.place_wall(Position(4, 2), S)
    sim.world.place_door(Position(4, 2), S)
    rows = map_of(builder.build(ASH, 0).grid_view)
    assert len(rows) == 9  # 7 rows of cells and the two lines of walls the walls reach
    assert {width_of(row) for row in rows} == {7 * 2 + 6}
    for row in rows:
        slots(row)  # and every slot boundary falls where it should


def test_walls_are_lines_and_a_door_is_a_dashed_stretch():
    sim, builder = make((5, 5), {ASH: Position(2, 2)})
    here = Position(2, 2)
    for side in (N, S, E, W):
        sim.world.place_wall(here, side)
    sim.world.place_door(here, E)
    sim.world.place_wall(Position(0, 0), S)
    sim.world.place_door(Position(0, 0), S)
    assert map_of(builder.build(ASH, 0).grid_view) == [
        "▓▓ ▓▓ ▓▓ ▓▓ ▓▓ ▓▓ ▓▓",
        "▓▓ ·  ·  ·  ·  ·  ▓▓",
        "▓▓ ╌╌             ▓▓",
        "▓▓ ·  ·  ·  ·  ·  ▓▓",
        "▓▓      ┌───      ▓▓",
        "▓▓ ·  · │@ ╎·  ·  ▓▓",
        "▓▓      └───      ▓▓",
        "▓▓ ·  ·  ·  ·  ·  ▓▓",
        "▓▓ ·  ·  ·  ·  ·  ▓▓",
        "▓▓ ▓▓ ▓▓ ▓▓ ▓▓ ▓▓ ▓▓",
    ]


def test_a_wall_without_a_door_closes_the_side():
    sim, builder = make((2, 1), {ASH: Position(0, 0)})
    sim.world.place_wall(Position(0, 0), E)
    assert inner_rows(builder.build(ASH, 0).grid_view) == ["@ │· "]
    sim.world.place_door(Position(0, 0), E)
    assert inner_rows(builder.build(ASH, 0).grid_view) == ["@ ╎· "]


# (up, down, left, right) wall segments around the middle corner of a 2x2 world
JUNCTIONS = {
    (0, 0, 0, 0): " ", (1, 0, 0, 0): "│", (0, 1, 0, 0): "│", (1, 1, 0, 0): "│",
    (0, 0, 1, 0): "─", (0, 0, 0, 1): "─", (0, 0, 1, 1): "─",
    (0, 1, 0, 1): "┌", (0, 1, 1, 0): "┐", (1, 0, 0, 1): "└", (1, 0, 1, 0): "┘",
    (1, 1, 0, 1): "├", (1, 1, 1, 0): "┤", (0, 1, 1, 1): "┬", (1, 0, 1, 1): "┴",
    (1, 1, 1, 1): "┼",
}


@pytest.mark.parametrize(("segments", "expected"), sorted(JUNCTIONS.items()))
def test_walls_meet_in_the_right_box_drawing_character(segments, expected):
    sim, builder = make((2, 2), {ASH: Position(0, 0)})
    up, down, left, right = segments
    edges = [
        (up, Position(0, 0), E), (down, Position(0, 1), E),
        (left, Position(0, 0), S), (right, Position(1, 0), S),
    ]
    for present, pos, side in edges:
        if present:
            sim.world.place_wall(pos, side)
    rows = layout(builder.build(ASH, 0).grid_view)
    if expected == " ":  # no wall between the rows: no line for it
        assert len(rows) == 2
        return
    assert rows[1][1] == expected
    assert rows[0][1] == ("│" if up else " ") and rows[2][1] == ("│" if down else " ")
    assert rows[1][0] == ("──" if left else "  ") and rows[1][2] == ("──" if right else "  ")


def test_a_door_does_not_join_a_corner():
    sim, builder = make((2, 2), {ASH: Position(0, 0)})
    for pos, side in ((Position(0, 0), E), (Position(0, 1), E), (Position(0, 0), S),
                      (Position(1, 0), S)):
        sim.world.place_wall(pos, side)
    sim.world.place_door(Position(1, 0), S)
    rows = layout(builder.build(ASH, 0).grid_view)
    assert rows[1] == ["──", "┤", "╌╌"]


def test_self_shows_over_agents_over_landmarks_places_signs_placed_items_and_terrain():
    sim, builder = make((5, 1), {ASH: Position(2, 0), BIRCH: Position(2, 0),
                                 CEDAR: Position(1, 0)})
    world = sim.world
    for x in (0, 1, 2):
        world.add_object(Sign(f"s{x}", Position(x, 0), ASH, 0, "a sign"))
    for x in (0, 2):
        world.add_object(PlacedItem(f"p{x}", Position(x, 0), ASH, 0, resource="wood",
                                    quantity=2))
    world.add_object(PlacedItem("p3", Position(3, 0), ASH, 0, item=Item("i", "carved_bowl")))
    grid = builder.build(ASH, 0).grid_view
    assert [cell_at(grid, i, 0) for i in range(5)] == ["📜", "B", "@", "✨", "·"]
    assert builder.build(ASH, 0).visible_agents_text == (
        "A Birch: here with you.\nB Cedar: 1 west, at (1, 0), on grass.")
    assert grid.split("\n")[-6:] == [  # everything a mark hides is in the key
        "📜 a sign: here.",
        "📜 a sign: 1 west, at (1, 0), on grass.",
        "📜 a sign: 2 west, at (0, 0), on grass.",
        "✨ a pile of 2 wood: here.",
        "✨ a carved_bowl: 1 east, at (3, 0), on grass.",
        "✨ a pile of 2 wood: 2 west, at (0, 0), on grass.",
    ]
    marks = (Landmark("spring", "the Spring", "Cold.", Position(3, 0)),)
    sim, builder = make((5, 1), {ASH: Position(1, 0)}, landmarks=marks)
    sim.world.name_place(NamedPlace("Ford", Position(3, 0), ASH, 0))
    sim.world.name_place(NamedPlace("Bend", Position(4, 0), ASH, 0))
    sim.world.add_object(Sign("s", Position(4, 0), ASH, 0, "a sign"))
    grid = builder.build(ASH, 0).grid_view
    assert [cell_at(grid, i, 0) for i in range(5)] == ["·", "@", "·", "1", "b"]
    assert "1 the Spring (landmark): 2 east, at (3, 0), on grass." in grid
    assert "a Ford (named place): 2 east, at (3, 0), on grass." in grid
    assert "b Bend (named place): 3 east, at (4, 0), on grass." in grid


@pytest.mark.parametrize("where", [
    Position(0, 0), Position(9, 0), Position(0, 9), Position(9, 9),  # corners
    Position(5, 0), Position(0, 5), Position(9, 5), Position(5, 9),  # edges
    Position(1, 8), Position(5, 5),
])
def test_the_view_is_clipped_at_the_edges_of_the_map_and_the_edge_is_drawn(where):
    sim, builder = make((10, 10), {ASH: where})
    p = builder.build(ASH, 0)
    xs = range(max(0, where.x - 3), min(10, where.x + 4))
    ys = range(max(0, where.y - 3), min(10, where.y + 4))
    assert [c.position for c in p.cells] == [Position(x, y) for y in ys for x in xs]
    rows = cell_rows(p.grid_view)
    assert len(rows) == len(ys)
    assert {len(r) for r in rows} == {2 * len(xs) - 1}
    assert rows[where.y - ys[0]][2 * (where.x - xs[0])] == "@ "
    assert p.grid_view.count("@") == 1
    lines = map_of(p.grid_view)
    ends = {"north": where.y < 3, "south": where.y > 6, "west": where.x < 3, "east": where.x > 6}
    assert (lines[0] == " ".join(["▓▓"] * len(slots(lines[0])[::2]))) == ends["north"]
    assert (set(lines[-1]) == {"▓", " "}) == ends["south"]
    inside = [line for line in lines if set(line) - {"▓", " "}]
    assert len(inside) == len(ys)
    assert all(line.startswith("▓▓") == ends["west"] for line in inside)
    assert all(line.endswith("▓▓") == ends["east"] for line in inside)
    header = p.grid_view.split("\n")[0]
    assert f"columns x {xs[0]} to {xs[-1]} from west to east" in header
    assert f"rows y {ys[0]} to {ys[-1]} from north to south" in header
    named = [side for side in ("north", "east", "south", "west") if ends[side]]
    assert ("world's edge" in header) == bool(named)
    assert all(side in header for side in named)
    for side, (dx, dy) in (("north", (0, -1)), ("east", (1, 0)), ("south", (0, 1)),
                           ("west", (-1, 0))):
        off = not (0 <= where.x + dx < 10 and 0 <= where.y + dy < 10)
        assert (f"One step {side}: the world's edge" in p.surroundings_text) == off


# ---------------------------------------------------------------------- what is seen


def test_cells_carry_terrain_passability_and_what_a_gather_would_give():
    codes = np.full((9, 9), GRASS, np.uint8)
    codes[4, 5] = TERRAIN_CODE[Terrain.FOREST]
    codes[4, 3] = TERRAIN_CODE[Terrain.WATER]
    codes[3, 4] = TERRAIN_CODE[Terrain.HILL]
    sim, builder = make((9, 9), {ASH: Position(4, 4)}, codes=codes)
    cells = {c.position: c for c in builder.build(ASH, 0).cells}
    assert len(cells) == 49
    assert (cells[Position(5, 4)].terrain, cells[Position(5, 4)].gatherable) == (
        Terrain.FOREST, "wood")
    assert cells[Position(5, 4)].passable
    assert (cells[Position(3, 4)].gatherable, cells[Position(3, 4)].passable) == (None, False)
    assert cells[Position(4, 3)].gatherable is None  # hills give nothing
    assert cells[Position(4, 4)].gatherable == "grass"


def test_a_spent_cell_offers_nothing_until_it_grows_back():
    codes = np.full((9, 9), GRASS, np.uint8)
    codes[4, 5] = TERRAIN_CODE[Terrain.FOREST]
    sim, builder = make((9, 9), {ASH: Position(4, 4)}, codes=codes)
    wood = Position(5, 4)

    def seen(tick: int):
        return next(c for c in builder.build(ASH, tick).cells if c.position == wood)

    assert seen(0).gatherable == "wood"
    for _ in range(sim.gathering.capacity):
        sim.gathering.take(wood, 0)
    assert seen(0).gatherable is None
    assert seen(sim.gathering.regrow_ticks).gatherable == "wood"
    sim.world.set_terrain(wood, Terrain.WATER)
    after = seen(sim.gathering.regrow_ticks)
    assert (after.terrain, after.gatherable, after.passable) == (Terrain.WATER, None, False)


def test_agents_in_view_nearest_first_then_by_name_with_direction_and_distance():
    sim, builder = make((20, 20), {
        ASH: Position(10, 10), BIRCH: Position(10, 8), CEDAR: Position(12, 10),
        DUSK: Position(14, 10), AgentName("Elm"): Position(10, 10),
    })
    sim.agents.set_sleeping(BIRCH, True)
    p = builder.build(ASH, 0)
    assert [(a.name, a.direction, a.distance) for a in p.agents] == [
        ("Elm", Direction.DOWN, 0), ("Birch", N, 2), ("Cedar", E, 2),
    ]
    assert [a.is_sleeping for a in p.agents] == [False, True, False]
    assert p.visible_agents_text == (
        "A Elm: here with you.\n"
        "B Birch (asleep): 2 north, at (10, 8), on grass.\n"
        "C Cedar: 2 east, at (12, 10), on grass."
    )
    assert "Birch" not in p.grid_view and "Birch" not in p.surroundings_text  # said once
    assert "B" in map_of(p.grid_view)[1] and "C" in map_of(p.grid_view)[3]


def test_seeing_someone_records_the_meeting_both_ways():
    sim, builder = make((20, 20), {ASH: Position(5, 5), BIRCH: Position(6, 7),
                                   DUSK: Position(15, 15)})
    builder.build(ASH, 0, text=False)
    ash, birch, dusk = (sim.agents.require(n) for n in (ASH, BIRCH, DUSK))
    assert BIRCH in ash.known_agents and ASH in birch.known_agents
    assert DUSK not in ash.known_agents and not dusk.known_agents
    assert [s.name for s in sim.agents.sense_others(BIRCH)] == [ASH]


def test_nobody_in_sight():
    sim, builder = make((20, 20), {ASH: Position(2, 2), BIRCH: Position(6, 2)})
    p = builder.build(ASH, 0)
    assert p.agents == () and p.visible_agents_text == "Nobody else is in sight."


def test_night_shortens_the_view():
    sim, builder = make((20, 20), {ASH: Position(10, 10), BIRCH: Position(13, 10),
                                   CEDAR: Position(12, 10)})
    day = builder.build(ASH, 0)
    assert (day.vision_radius, len(day.cells), day.period) == (3, 49, "morning")
    assert [a.name for a in day.agents] == [CEDAR, BIRCH]
    sim.world.set_tick(NIGHT_TICK)
    night = builder.build(ASH, NIGHT_TICK)
    assert (night.vision_radius, len(night.cells), night.is_night) == (2, 25, True)
    assert [a.name for a in night.agents] == [CEDAR]
    assert night.time_text == "day 1, 22:00 (night)"
    assert len(map_of(night.grid_view)) == 5
    assert "by night you see 2 cells each way" in night.grid_view


def test_objects_in_view_with_labels_nearest_first():
    sim, builder = make((20, 20), {ASH: Position(10, 10)})
    world = sim.world
    world.add_object(PlacedItem("p", Position(10, 8), ASH, 0, resource="wood", quantity=3))
    world.add_object(Sign("s", Position(11, 10), ASH, 0, "Hello"))
    world.add_object(PlacedItem("b", Position(8, 11), ASH, 0, item=Item("i", "carved_bowl")))
    world.add_object(Sign("far", Position(14, 10), ASH, 0, "out of sight"))
    p = builder.build(ASH, 0)
    assert [(o.kind, o.label, o.direction, o.distance) for o in p.objects] == [
        ("sign", "", E, 1), ("placed_item", "3 wood", N, 2),
        ("placed_item", "carved_bowl", W, 3),
    ]
    assert p.grid_view.split("\n")[-3:] == [
        "📜 a sign: 1 east, at (11, 10), on grass.",
        "✨ a pile of 3 wood: 2 north, at (10, 8), on grass.",
        "✨ a carved_bowl: 1 south, 2 west, at (8, 11), on grass.",
    ]


def test_landmarks_in_view_and_on_the_horizon_nearest_first():
    marks = (
        Landmark("spring", "the Spring", "Cold water.", Position(12, 10)),
        Landmark("old_tree", "the Old Tree", "Old.", Position(10, 40)),
        Landmark("standing_stone", "the Standing Stone", "Tall.", Position(51, 10)),
        Landmark("cave_mouth", "the Cave Mouth", "Dark.", Position(70, 70)),
    )
    sim, builder = make((80, 80), {ASH: Position(10, 10)}, landmarks=marks)
    p = builder.build(ASH, 0)
    assert [(m.name, m.direction, m.distance) for m in p.landmarks] == [
        ("the Spring", E, 2), ("the Old Tree", S, 30),
    ]  # the Standing Stone is 41 cells east: past the horizon of 40
    assert "1 the Spring (landmark): 2 east, at (12, 10), on grass." in p.grid_view
    assert p.surroundings_text.endswith(
        "Landmarks beyond your view: the Old Tree, 30 south, at (10, 40).")
    alone = make((80, 80), {ASH: Position(10, 20)}, landmarks=marks)[1].build(ASH, 0)
    assert alone.surroundings_text.endswith(
        "Landmarks beyond your view: the Spring, 10 north, 2 east, at (12, 10); "
        "the Old Tree, 20 south, at (10, 40).")
    near = make((80, 80), {ASH: Position(10, 10)}, landmarks=marks, horizon=0)[1]
    assert [m.name for m in near.build(ASH, 0).landmarks] == ["the Spring"]


@pytest.mark.parametrize("horizon", [0, 5, 17, 40])
def test_landmarks_found_are_exactly_those_within_reach(horizon):
    rng = np.random.default_rng(horizon)
    marks = tuple(
        Landmark("spring", f"the Spring ({i})", "Cold.", Position(int(x), int(y)))
        for i, (x, y) in enumerate(rng.integers(0, 120, size=(60, 2)))
    )
    sim, builder = make((120, 120), {ASH: Position(0, 0)}, landmarks=marks, horizon=horizon)
    for x, y in rng.integers(0, 120, size=(40, 2)):
        here = Position(int(x), int(y))
        sim.agents.update_position(ASH, here)
        reach = max(3, horizon)
        expected = sorted(
            (here.manhattan(m.position), m.name) for m in marks
            if here.chebyshev(m.position) <= reach
        )
        got = builder.build(ASH, 0, text=False).landmarks
        assert [(m.distance, m.name) for m in got] == expected


def test_the_horizon_is_no_shorter_at_night():
    marks = (Landmark("old_tree", "the Old Tree", "Old.", Position(10, 40)),)
    sim, builder = make((50, 50), {ASH: Position(10, 10)}, landmarks=marks)
    sim.world.set_tick(NIGHT_TICK)
    assert [m.distance for m in builder.build(ASH, NIGHT_TICK).landmarks] == [30]


def test_a_bad_horizon_is_refused():
    sim, _ = make()
    with pytest.raises(ValueError, match="horizon"):
        PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering, horizon=-1)


def test_an_unknown_agent_is_refused():
    sim, builder = make()
    with pytest.raises(AgentRuleError, match="Nobody"):
        builder.build("Nobody", 0)


# ---------------------------------------------------------------------- the agent itself


def test_inventory_stacks_and_items_by_type():
    sim, builder = make()
    assert builder.build(ASH, 0).inventory_text == "You carry nothing."
    sim.agents.set_inventory(ASH, Inventory(
        {"wood": 3, "stone": 2},
        (Item("a", "carved_bowl"), Item("b", "carved_bowl"), Item("c", "stone_axe")),
    ))
    p = builder.build(ASH, 0)
    assert p.inventory == (("carved_bowl", 2), ("stone", 2), ("stone_axe", 1), ("wood", 3))
    assert p.inventory_text == (
        "You carry: carved_bowl (2), stone (2), stone_axe (1), wood (3)."
    )
    sim.agents.remove_resource(ASH, "wood", 2)
    assert ("wood", 1) in builder.build(ASH, 0).inventory


def test_journey_text():
    sim, builder = make((20, 20), {ASH: Position(2, 2)})
    p = builder.build(ASH, 0)
    assert (p.journey_text, p.on_journey) == (None, False)
    sim.agents.start_journey(ASH, Position(6, 2))
    p = builder.build(ASH, 0)
    assert (p.journey_text, p.on_journey) == ("Travelling to (6, 2), 4 steps to go.", True)
    for _ in range(3):
        sim.agents.advance_journey(ASH)
    assert builder.build(ASH, 0).journey_text == "Travelling to (6, 2), 1 step to go."


def test_standing_on_shelter_place_time_and_weather():
    codes = np.full((9, 9), GRASS, np.uint8)
    codes[4, 4] = TERRAIN_CODE[Terrain.SAND]
    sim, builder = make((9, 9), {ASH: Position(4, 4)}, codes=codes)
    sim.world.set_weather(Weather.RAINY)
    sim.world.add_structure(Structure("hut", frozenset({Position(4, 4)}), ASH, 0, "the Hut"))
    sim.world.name_place(NamedPlace("Ash Corner", Position(4, 4), ASH, 0))
    sim.world.name_place(NamedPlace("Far Field", Position(4, 6), ASH, 0))
    p = builder.build(ASH, 0)
    assert (p.standing_on, p.inside_structure, p.weather) == (Terrain.SAND, True, Weather.RAINY)
    assert (p.time_text, p.period) == ("day 1, 08:00 (morning)", "morning")
    assert p.narrative == ("Clay can be gathered here. You are inside a shelter called the "
                           "Hut. This place is called Ash Corner.")
    assert "You are at (4, 4), standing on sand." in p.as_text()
    assert [(q.name, q.direction, q.distance) for q in p.places] == [
        ("Ash Corner", Direction.DOWN, 0), ("Far Field", S, 2)]
    assert "a Ash Corner (named place): here." in p.grid_view
    assert "b Far Field (named place): 2 south, at (4, 6), on grass." in p.grid_view
    assert not make((9, 9), {ASH: Position(1, 1)})[1].build(ASH, 0).inside_structure


# ---------------------------------------------------------------------- conversation


def test_an_invitation_then_the_turns_not_yet_seen():
    sim, builder = make((20, 20), {ASH: Position(5, 5), BIRCH: Position(6, 5)})
    talk = sim.conversations
    talk.create_invite(ASH, BIRCH, "public", 0)
    p = builder.build(BIRCH, 0)
    assert p.pending_invitation_from == ASH
    assert p.invitation_text == (
        "Ash invites you to talk. Accepting (accept_invite) would start a public "
        "conversation between you and Ash; or decline it (decline_invite). It lapses in 2 "
        "ticks."
    )
    assert "lapses after this tick" in builder.build(BIRCH, 1).invitation_text
    assert builder.build(ASH, 0).invitation_text is None

    talk.accept_invite(BIRCH, 1)
    talk.add_turn(ASH, "Hello there.\nLovely day.", 1)
    p = builder.build(BIRCH, 1)
    assert (p.invitation_text, p.pending_invitation_from) == (None, None)
    assert p.in_conversation_with == (ASH,)
    assert p.conversation_text == (
        "You are in a public conversation with Ash.\n"
        "Since your last turn:\n"
        "  Ash: Hello there.\n"
        "    Lovely day."
    )
    assert [a.in_conversation for a in builder.build(ASH, 1).agents] == [True]

    talk.add_turn(BIRCH, "Hi!", 2)
    assert builder.build(BIRCH, 2).conversation_text == (
        "You are in a public conversation with Ash. "
        "Nothing new has been said since your last turn."
    )
    assert builder.build(ASH, 2).conversation_text.endswith("  Birch: Hi!")


def test_a_lapsed_invitation_is_not_offered():
    sim, builder = make((20, 20), {ASH: Position(5, 5), BIRCH: Position(6, 5)})
    sim.conversations.create_invite(ASH, BIRCH, "private", 0)
    p = builder.build(BIRCH, 2)
    assert (p.invitation_text, p.pending_invitation_from) == (None, None)


def test_an_invitation_into_a_running_conversation_names_who_is_in_it():
    sim, builder = make((20, 20), {ASH: Position(5, 5), BIRCH: Position(6, 5),
                                   CEDAR: Position(5, 6)})
    talk = sim.conversations
    talk.create_invite(ASH, BIRCH, "private", 0)
    talk.accept_invite(BIRCH, 0)
    talk.create_invite(ASH, CEDAR, None, 0)
    assert builder.build(CEDAR, 0).invitation_text == (
        "Ash invites you to talk. Accepting (accept_invite) would join Ash's private "
        "conversation, with Ash and Birch in it; or decline it (decline_invite). It lapses "
        "in 2 ticks."
    )


def test_an_invitation_that_accepting_would_fail_says_why_and_that_declining_is_left():
    sim, builder = make((20, 20), {ASH: Position(5, 5), BIRCH: Position(6, 5),
                                   CEDAR: Position(5, 6), DUSK: Position(6, 6)})
    talk = sim.conversations
    talk.create_invite(ASH, CEDAR, "public", 0)
    talk.create_invite(BIRCH, ASH, "private", 0)  # Ash now has a private talk
    talk.accept_invite(ASH, 0)
    text = builder.build(CEDAR, 0).invitation_text
    assert text == (
        "Ash invited you to a public conversation, but accepting would fail now: Ash has "
        "since begun a private conversation, and this invitation was to a public one. You "
        "may decline it (decline_invite). It lapses in 2 ticks."
    )
    with pytest.raises(ConversationError, match="has since begun a private conversation"):
        talk.accept_invite(CEDAR, 0)  # the engine agrees: it would fail
    talk.create_invite(BIRCH, DUSK, None, 0)  # into Ash and Birch's talk, which then ends
    talk.leave_conversation(ASH, 0)
    text = builder.build(DUSK, 0).invitation_text
    assert "accepting would fail now: the conversation Birch invited you to has ended" in text
    with pytest.raises(ConversationError, match="has ended"):
        talk.accept_invite(DUSK, 0)


def test_not_talking_means_no_conversation_text():
    sim, builder = make()
    p = builder.build(ASH, 0)
    assert (p.conversation_text, p.in_conversation_with) == (None, ())


# ---------------------------------------------------------------------- text or not


def test_without_text_the_structure_is_the_same_and_the_prose_is_empty():
    codes = np.full((20, 20), GRASS, np.uint8)
    codes[8:11, 2:5] = TERRAIN_CODE[Terrain.FOREST]
    marks = (Landmark("spring", "the Spring", "Cold.", Position(1, 1)),)
    sim, builder = make((20, 20), {ASH: Position(4, 9), BIRCH: Position(5, 9)},
                        codes=codes, landmarks=marks)
    sim.world.add_object(Sign("s", Position(3, 9), ASH, 0, "Hello"))
    sim.world.place_wall(Position(4, 9), N)
    sim.agents.add_resource(ASH, "wood", 2)
    sim.conversations.create_invite(BIRCH, ASH, "public", 0)
    fast = builder.build(ASH, 0, text=False)
    full = builder.build(ASH, 0)
    assert (fast.grid_view, fast.narrative, fast.visible_agents_text,
            fast.surroundings_text) == ("", "", "", "")
    assert full.grid_view and full.narrative and full.visible_agents_text
    assert full.surroundings_text
    assert fast == dataclasses.replace(full, grid_view="", narrative="", visible_agents_text="",
                                       surroundings_text="")
    assert fast.inventory_text == "You carry: wood (2)."
    assert fast.invitation_text is not None


# ---------------------------------------------------------------------- narrative


def test_the_narrative_says_what_is_special_underfoot_from_the_features_alone():
    assert narrate([]) == ""
    assert narrate([Feature("gatherable", "grass")]) == "Grass can be gathered here."
    assert narrate([
        Feature("gatherable", "clay"), Feature("shelter", "the Hut"),
        Feature("place", "Ash Corner"), Feature("place", "the Ford"),
    ]) == ("Clay can be gathered here. You are inside a shelter called the Hut. "
           "This place is called Ash Corner and the Ford.")
    assert narrate([Feature("shelter", "")]) == "You are inside a shelter."


def test_every_landmark_within_the_horizon_is_named_with_its_offset():
    marks = tuple(Landmark("spring", f"Spring {i}", "Cold.", Position(10 + 3 * i, 30))
                  for i in range(9))
    sim, builder = make((60, 60), {ASH: Position(10, 10)}, landmarks=marks)
    text = builder.build(ASH, 0).surroundings_text
    beyond = text.split("Landmarks beyond your view: ")[1]
    assert beyond == "; ".join(
        f"Spring {i}, 20 south{f', {3 * i} east' if i else ''}, at ({10 + 3 * i}, 30)"
        for i in range(9)) + "."
    assert "more" not in text


def test_the_nearest_patch_of_each_ground_is_named_with_its_exact_offset():
    codes = np.full((9, 9), GRASS, np.uint8)
    codes[0:3, :] = TERRAIN_CODE[Terrain.WATER]  # a lake along the north
    codes[4, 5] = TERRAIN_CODE[Terrain.WATER]  # and one pool, nearer, to the east
    codes[5, 6] = TERRAIN_CODE[Terrain.FOREST]
    sim, builder = make((9, 9), {ASH: Position(4, 4)}, codes=codes)
    text = builder.build(ASH, 0).surroundings_text
    assert ("Nearest of each ground in view: water 1 east, at (5, 4); "
            "forest 1 south, 2 east, at (6, 5).") in text


def test_a_line_for_each_step_around_says_the_ground_and_whether_one_can_step_there():
    codes = np.full((5, 5), GRASS, np.uint8)
    codes[1, 2] = TERRAIN_CODE[Terrain.WATER]  # north
    codes[2, 3] = TERRAIN_CODE[Terrain.WATER]  # east
    codes[3, 2] = TERRAIN_CODE[Terrain.FOREST]  # south
    sim, builder = make((5, 5), {ASH: Position(2, 2)}, codes=codes)
    world = sim.world
    world.place_wall(Position(2, 2), E)
    world.place_door(Position(2, 2), E)
    world.place_wall(Position(2, 2), S)
    world.place_wall(Position(2, 2), W)
    world.place_door(Position(2, 2), W)
    assert builder.build(ASH, 0).surroundings_text.split("\n")[:4] == [
        "One step north, (2, 1): water; it cannot be entered.",
        "One step east, (3, 2): water; a door in a wall leads there, but the cell cannot be "
        "entered.",
        "One step south, (2, 3): forest; a wall without a door stands in the way.",
        "One step west, (1, 2): grass; through a door in a wall, you can step there.",
    ]
    for way in (N, E, S):
        assert sim.agents.step_blocker(Position(2, 2), way) is not None
    assert sim.agents.step_blocker(Position(2, 2), W) is None


# ---------------------------------------------------------------------- nothing kept goes stale


def cell_seen(builder: PerceptionBuilder, where: Position, tick: int = 0, *, text: bool = False):
    return next(c for c in builder.build(ASH, tick, text=text).cells if c.position == where)


def test_a_terrain_change_in_view_is_seen_at_once_by_an_agent_that_stays_put():
    sim, builder = make((20, 20), {ASH: Position(10, 10)})
    before = builder.build(ASH, 0)
    assert before.standing_on is Terrain.GRASS
    assert builder.build(ASH, 0).cells is before.cells  # kept, while nothing changed
    sim.world.set_terrain(Position(11, 10), Terrain.WATER)
    sim.world.set_terrain(Position(10, 10), Terrain.SAND)
    after = builder.build(ASH, 0)
    changed = {c.position: c for c in after.cells}
    assert (changed[Position(11, 10)].terrain, changed[Position(11, 10)].passable) == (
        Terrain.WATER, False)
    assert after.standing_on is Terrain.SAND
    assert cell_at(after.grid_view, 4, 3) == "💧"
    assert [c for c in after.cells if c.position not in (Position(11, 10), Position(10, 10))
            ] == [c for c in before.cells if c.position not in (Position(11, 10),
                                                                 Position(10, 10))]


def test_a_terrain_change_far_away_is_seen_when_the_agent_gets_there():
    sim, builder = make((60, 20), {ASH: Position(5, 5)})
    for x in range(5, 50):  # walk east, seeing (and keeping) every cell on the way
        sim.agents.update_position(ASH, Position(x, 5))
        builder.build(ASH, 0, text=False)
    sim.world.set_terrain(Position(8, 5), Terrain.FOREST)
    sim.agents.update_position(ASH, Position(8, 6))
    assert cell_seen(builder, Position(8, 5)).gatherable == "wood"


def test_gathering_a_cell_bare_and_its_regrowth_are_seen_by_an_agent_that_stays_put():
    codes = np.full((9, 9), GRASS, np.uint8)
    codes[4, 5] = TERRAIN_CODE[Terrain.FOREST]
    sim, builder = make((9, 9), {ASH: Position(4, 4)}, codes=codes)
    wood, gathering = Position(5, 4), sim.gathering
    regrow = gathering.regrow_ticks
    assert cell_seen(builder, wood).gatherable == "wood"
    for _ in range(gathering.capacity - 1):
        gathering.take(wood, 0)
    assert cell_seen(builder, wood).gatherable == "wood"  # part-gathered: still there
    gathering.take(wood, 0)
    assert cell_seen(builder, wood).gatherable is None
    assert cell_seen(builder, wood, regrow - 1).gatherable is None
    assert cell_seen(builder, wood, regrow).gatherable == "wood"  # one unit grew back
    gathering.take(wood, regrow)
    assert cell_seen(builder, wood, regrow).gatherable is None
    gathering.regrow(wood)  # the Gardener
    assert cell_seen(builder, wood, regrow).gatherable == "wood"
    assert cell_seen(builder, wood, 0).gatherable == "wood"


def test_objects_placed_changed_and_taken_in_view_are_seen_at_once():
    sim, builder = make((20, 20), {ASH: Position(10, 10)})
    world = sim.world
    assert builder.build(ASH, 0).objects == ()
    pile = PlacedItem("p", Position(11, 11), ASH, 0, resource="wood", quantity=3)
    world.add_object(pile)
    assert [o.label for o in builder.build(ASH, 0).objects] == ["3 wood"]
    world.replace_object(dataclasses.replace(pile, quantity=5))
    assert [o.label for o in builder.build(ASH, 0).objects] == ["5 wood"]
    world.add_object(Sign("s", Position(11, 11), ASH, 0, "mine"))
    assert [o.kind for o in builder.build(ASH, 0).objects] == ["placed_item", "sign"]
    assert cell_at(builder.build(ASH, 0).grid_view, 4, 4) == "📜"
    world.remove_object("p")
    world.remove_object("s")
    assert builder.build(ASH, 0).objects == ()


def test_walls_and_named_places_in_view_are_seen_at_once():
    sim, builder = make((20, 20), {ASH: Position(10, 10)})
    first = builder.build(ASH, 0)
    assert "│" not in first.grid_view and "Flat Rock" not in first.grid_view
    sim.world.place_wall(Position(10, 10), E)
    sim.world.name_place(NamedPlace("Flat Rock", Position(12, 10), ASH, 0))
    second = builder.build(ASH, 0)
    assert cell_rows(second.grid_view)[3][7] == "│"
    assert "a Flat Rock (named place): 2 east, at (12, 10), on grass." in second.grid_view


def test_a_builder_that_has_kept_everything_agrees_with_a_new_one():
    rng = np.random.default_rng(7)
    codes = rng.choice(
        [TERRAIN_CODE[t] for t in (Terrain.GRASS, Terrain.FOREST, Terrain.SAND,
                                   Terrain.WATER)],
        size=(40, 40), p=[0.5, 0.3, 0.1, 0.1],
    ).astype(np.uint8)
    free = [Position(x, y) for y in range(40) for x in range(40) if RULES.passable[codes[y, x]]]
    people = {AgentName(f"A{i}"): free[int(rng.integers(len(free)))] for i in range(6)}
    sim, builder = make((40, 40), people, codes=codes)
    world, gathering = sim.world, sim.gathering
    tick = 0
    for step in range(300):
        where = Position(int(rng.integers(40)), int(rng.integers(40)))
        roll = rng.random()
        if roll < 0.25:
            for _ in range(int(rng.integers(1, 6))):
                gathering.take(where, tick)
        elif roll < 0.3:
            gathering.regrow(where)
        elif roll < 0.36:
            world.set_terrain(where, Terrain(rng.choice([t.value for t in Terrain])))
        elif roll < 0.42:
            world.add_object(Sign(f"s{step}", where, None, 0, "here"))
        elif roll < 0.46 and world.all_objects():
            world.remove_object(world.all_objects()[0].id)
        elif roll < 0.7:
            name = list(people)[int(rng.integers(len(people)))]
            there = sim.agents.require(name).position.step(CARDINALS[int(rng.integers(4))])
            if world.is_passable(there):
                sim.agents.update_position(name, there)
        elif roll < 0.8:
            tick += int(rng.integers(0, 20))
        for name in people:
            text = bool(rng.random() < 0.3)
            fresh = PerceptionBuilder(world, sim.agents, sim.conversations, gathering)
            assert builder.build(name, tick, text=text) == fresh.build(name, tick, text=text)


def test_a_world_that_fits_is_kept_whole_a_row_at_a_time():
    """Rows are made when a window first reaches them; a terrain change remakes its
    square in place; every window is the same as a new builder's."""
    sim, builder = make((50, 50), {ASH: Position(3, 3)})
    reference = builder.build(ASH, 0, text=False)
    store = builder._store
    assert store.whole
    assert [y for y, row in enumerate(store.rows) if row is not None] == list(range(7))
    sim.world.set_terrain(Position(4, 4), Terrain.WATER)
    for x, y in [(3, 3), (20, 20), (45, 45), (3, 3), (21, 20), (46, 3), (20, 20)]:
        sim.agents.update_position(ASH, Position(x, y))
        fresh = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering)
        assert builder.build(ASH, 0, text=False) == fresh.build(ASH, 0, text=False)
    assert store.rows[4][4].terrain is Terrain.WATER
    assert reference.cells[4 * 7 + 4].terrain is Terrain.GRASS  # handed out: unchanged


def test_a_world_too_big_to_keep_slides_each_agents_window_and_sees_the_same(monkeypatch):
    """Past the store's room, windows are made from the agent's last one: steps, jumps,
    the map's edges, nightfall and terrain changes in and out of sight all give what a
    new builder gives."""
    monkeypatch.setattr(perception_module, "_CELL_CACHE_LIMIT", 10)  # nothing fits
    rng = np.random.default_rng(11)
    codes = rng.choice([GRASS, TERRAIN_CODE[Terrain.FOREST], TERRAIN_CODE[Terrain.STONE]],
                       size=(30, 30)).astype(np.uint8)
    codes[:, :2] = GRASS
    sim, sliding = make((30, 30), {ASH: Position(15, 15)}, codes=codes)
    moves = [E, E, S, S, S, W, N, E, E, E, S, (1, 1), (0, 5), (28, 29), W, N, (0, 0), S, E,
             (14, 2), "night", E, S, "terrain", E, S, "far", E, "far", (3, 0), "day", W, "far"]
    tick = 0
    for move in moves:
        here = sim.agents.require(ASH).position
        if move == "night":
            tick = NIGHT_TICK
        elif move == "day":
            tick = 24
        elif move == "terrain":
            sim.world.set_terrain(here.step(E), Terrain.WATER)
        elif move == "far":  # a change out of sight: the window it left alone holds
            sim.world.set_terrain(Position(29 if here.x < 15 else 0, 29 if here.y < 15 else 0),
                                  Terrain.SAND)
        elif isinstance(move, tuple):
            sim.agents.update_position(ASH, Position(*move))
        elif sim.world.is_passable(here.step(move)):
            sim.agents.update_position(ASH, here.step(move))
        sim.world.set_tick(max(tick, sim.world.tick))
        fresh = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering)
        assert sliding.build(ASH, tick, text=False) == fresh.build(ASH, tick, text=False)
    assert not sliding._store.whole
    assert all(row is None for row in sliding._store.rows)  # the shared store was never used
