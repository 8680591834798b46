"""A writer process for the crash-safety tests; the test kills it with SIGKILL.

Modes:
  mid-unit DIR   commit unit "A", then write unit "B" without committing, print
                 MID once half of B is written, and keep writing until killed.
  loop DIR       commit units 0, 1, 2, ... forever, each ROWS signs plus a cell,
                 printing READY after the first commit.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from core.objects import Sign
from core.terrain import Terrain
from core.types import Position
from core.world import Cell, WorldState
from storage import Storage

ROWS = 200


def sign(unit: str, i: int) -> Sign:
    return Sign(id=f"{unit}-{i}", position=Position(i % 50, i // 50), created_by=None,
                created_tick=0, text=f"unit {unit} row {i}")


async def mid_unit(data_dir: Path) -> None:
    async with Storage(data_dir) as storage:
        async with storage.unit_of_work() as uow:
            await uow.world.save_world_state(WorldState(50, 50, seed=1))
            for i in range(ROWS):
                await uow.objects.save_object(sign("A", i))
            await uow.commit()
        async with storage.unit_of_work() as uow:
            i = 0
            while True:
                await uow.objects.save_object(sign("B", i))
                await uow.world.set_cell(Position(i % 50, 49), Cell(Terrain.STONE))
                i += 1
                if i == ROWS // 2:
                    print("MID", flush=True)
                if i >= ROWS:
                    await asyncio.sleep(0.01)


async def loop(data_dir: Path) -> None:
    async with Storage(data_dir) as storage:
        unit = 0
        while True:
            async with storage.unit_of_work() as uow:
                for i in range(ROWS):
                    await uow.objects.save_object(sign(f"U{unit}", i))
                await uow.world.set_cell(Position(unit % 50, unit // 50 % 50), Cell(Terrain.HILL))
                await uow.commit()
            if unit == 0:
                print("READY", flush=True)
            unit += 1


if __name__ == "__main__":
    mode, directory = sys.argv[1], Path(sys.argv[2])
    asyncio.run(mid_unit(directory) if mode == "mid-unit" else loop(directory))
