"""Pathfinding on 500x500 maps: open ground, no path at all, generated terrain.

    python -m bench pathfinding

Targets (issue brief): an open map crossed corner to corner well under 0.1 s; a search
that finds no path (the goal, or the start, walled in) <= 0.3 s. Every figure is the
median of 5 runs; each found path is checked walkable and as long as expected.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from bench import Figure
from config import load_config
from core.types import Position
from generation import Tileset, generate
from generation.regions import largest_region
from services.pathfinding import find_path, is_walkable

SIDE = 500
RUNS = 5
OPEN_TARGET = 0.1
NO_PATH_TARGET = 0.3

Grid = tuple[np.ndarray, np.ndarray, np.ndarray]


def _open(side: int = SIDE) -> Grid:
    shape = (side, side)
    return np.ones(shape, dtype=bool), np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)


def _wall_in(grid: Grid, x0: int, y0: int, width: int, height: int) -> None:
    """Walls all round the cells x0..x0+width-1, y0..y0+height-1 (no door)."""
    _, blocked_east, blocked_south = grid
    blocked_east[y0:y0 + height, x0 - 1] = True
    blocked_east[y0:y0 + height, x0 + width - 1] = True
    blocked_south[y0 - 1, x0:x0 + width] = True
    blocked_south[y0 + height - 1, x0:x0 + width] = True


def _median(action: Callable[[], object]) -> tuple[float, object]:
    times = []
    result = None
    for _ in range(RUNS):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _case(
    name: str, grid: Grid, start: Position, goal: Position, expect: int | None, target: float
) -> Figure:
    """Time one search; `expect` is the path length it must find, or None for no path."""
    seconds, path = _median(lambda: find_path(*grid, start, goal))
    if expect is None:
        correct = path is None
        found = "no path" if correct else f"WRONG: a path of {len(path)}"
    else:
        correct = path is not None and len(path) == expect and is_walkable(path, *grid, start)
        found = f"{len(path)} steps" if correct else f"WRONG: {path and len(path)}"
    return Figure(f"{name} median of {RUNS}", f"{seconds * 1e3:.1f} ms ({found})",
                  f"<= {target} s" if target else "a valid path",
                  (seconds <= target and correct) if target else correct)


def run() -> list[Figure]:
    find_path(*_open(20), Position(0, 0), Position(19, 19))  # warm imports
    last = SIDE - 1
    centre = SIDE // 2
    figures = [
        _case("500x500 open, corner to corner", _open(), Position(0, 0), Position(last, last),
              2 * last, OPEN_TARGET),
        _case("500x500 open, 10 steps", _open(), Position(200, 200), Position(205, 205),
              10, 0.0),
    ]

    goal_cell = _open()
    _wall_in(goal_cell, centre, centre, 1, 1)
    figures.append(_case("500x500 no path, goal walled in (1 cell)", goal_cell,
                         Position(0, 0), Position(centre, centre), None, NO_PATH_TARGET))
    goal_room = _open()
    _wall_in(goal_room, centre - 10, centre - 10, 20, 20)
    figures.append(_case("500x500 no path, goal walled in (20x20 room)", goal_room,
                         Position(0, 0), Position(centre, centre), None, NO_PATH_TARGET))
    start_room = _open()
    _wall_in(start_room, centre - 1, centre - 1, 3, 3)
    figures.append(_case("500x500 no path, start walled in (3x3 room)", start_room,
                         Position(centre, centre), Position(0, 0), None, NO_PATH_TARGET))
    halves = _open()
    halves[1][:, centre - 1] = True  # a wall from top to bottom
    figures.append(_case("500x500 no path, wall across the map", halves,
                         Position(0, 0), Position(last, last), None, NO_PATH_TARGET))

    tileset = Tileset.from_traits(load_config(None).terrain.terrains)
    codes = generate(SIDE, SIDE, 1, tileset=tileset).codes
    passable = tileset.passable[codes]
    terrain = (passable, np.zeros(codes.shape, dtype=bool), np.zeros(codes.shape, dtype=bool))
    ys, xs = np.nonzero(largest_region(passable))
    for label, order in (("NW to SE", xs + ys), ("SW to NE", xs - ys)):
        a, b = int(np.argmin(order)), int(np.argmax(order))
        start, goal = Position(int(xs[a]), int(ys[a])), Position(int(xs[b]), int(ys[b]))
        seconds, path = _median(lambda start=start, goal=goal: find_path(*terrain, start, goal))
        correct = path is not None and is_walkable(path, *terrain, start)
        figures.append(Figure(
            f"500x500 generated (seed 1), {label} median of {RUNS}",
            f"{seconds * 1e3:.1f} ms ({len(path) if path else 'no'} steps, "
            f"{start.manhattan(goal)} as the crow walks)",
            "a valid path", correct,
        ))
    return figures
