"""Measure writing and reading many cells through the cell repository.

Run: python -m bench cells   (or python bench/cells_roundtrip.py [ROWS])
Prints seconds and rows per second for set_cells and get_all_cells on a real file.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.terrain import Terrain  # noqa: E402
from core.types import Direction, Position  # noqa: E402
from core.world import Cell, WorldState  # noqa: E402
from storage import Storage  # noqa: E402


async def measure(rows: int) -> tuple[float, float]:
    width = 500
    kinds = [
        Cell(Terrain.FOREST),
        Cell(Terrain.WATER),
        Cell(Terrain.HILL, frozenset({Direction.NORTH})),
    ]
    cells = {Position(i % width, i // width): kinds[i % len(kinds)] for i in range(rows)}
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp)) as storage:
            await storage.world.save_world_state(WorldState(width, max(1, rows // width + 1), 1))
            start = time.perf_counter()
            await storage.world.set_cells(cells)
            wrote = time.perf_counter() - start
            start = time.perf_counter()
            back = await storage.world.get_all_cells()
            read = time.perf_counter() - start
    if back != cells:
        raise RuntimeError("cells did not round-trip")
    return wrote, read


def run(rows: int = 150_000) -> list:
    from bench import Figure

    wrote, read = asyncio.run(measure(rows))
    return [
        Figure(f"set_cells {rows:,} rows", f"{wrote:.3f} s ({rows / wrote:,.0f} rows/s)"),
        Figure(f"get_all_cells {rows:,} rows", f"{read:.3f} s ({rows / read:,.0f} rows/s)"),
    ]


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 150_000):
        print(f"{figure.name}: {figure.value}")
