"""Connected regions and agent placement on generated 500x500 and 2000x2000 maps.

    python -m bench regions
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from bench import Figure
from config import load_config
from core.terrain import TERRAIN_CODE, Terrain
from generation import Tileset, generate
from generation.placement import find_agent_positions
from generation.regions import label_regions, largest_region


def _median_time(action, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run() -> list[Figure]:
    config = load_config(None)
    tileset = Tileset.from_traits(config.terrain.terrains)
    figures = []
    for side in (500, 2000):
        codes = generate(side, side, 1, tileset=tileset).codes
        passable = tileset.passable[codes]
        labels = _median_time(lambda passable=passable: label_regions(passable))
        reachable = largest_region(passable)
        grass = codes == TERRAIN_CODE[Terrain.GRASS]
        place = _median_time(
            lambda reachable=reachable, grass=grass: find_agent_positions(
                reachable, grass, 3, min_spacing=30, max_spacing=60,
                rng=np.random.default_rng(0),
            )
        )
        figures.append(Figure(f"{side}x{side} label_regions median", f"{labels * 1e3:.1f} ms"))
        figures.append(Figure(f"{side}x{side} place 3 agents median", f"{place * 1e3:.1f} ms"))
    return figures
