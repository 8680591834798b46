"""Reading a stored world back for people to look at: its map, landmarks and agents."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.landmarks import Landmark
from core.terrain import DEFAULT_TERRAIN, TERRAIN_CODE
from core.types import Position
from storage import Storage


@dataclass(frozen=True, eq=False)
class WorldPicture:
    codes: np.ndarray
    """(height, width) uint8 terrain codes, with later terrain changes applied."""
    agents: tuple[tuple[str, Position], ...]
    landmarks: tuple[Landmark, ...]


async def terrain_codes(storage: Storage, width: int, height: int) -> np.ndarray:
    """The base raster (all default terrain for worlds made before rasters existed),
    with any per-cell terrain changes from the cells table laid on top."""
    raster = await storage.world.get_terrain()
    if raster is None or (raster.width, raster.height) != (width, height):
        codes = np.full((height, width), TERRAIN_CODE[DEFAULT_TERRAIN], dtype=np.uint8)
    else:
        codes = np.frombuffer(raster.codes, dtype=np.uint8).reshape(height, width).copy()
    for pos, cell in (await storage.world.get_all_cells()).items():
        if 0 <= pos.x < width and 0 <= pos.y < height:
            codes[pos.y, pos.x] = TERRAIN_CODE[cell.terrain]
    return codes


async def world_picture(storage: Storage) -> WorldPicture | None:
    state = await storage.world.get_world_state()
    if state is None:
        return None
    codes = await terrain_codes(storage, state.width, state.height)
    agents = await storage.agents.get_all_agents()
    return WorldPicture(
        codes=codes,
        agents=tuple((a.name, a.position) for a in agents),
        landmarks=tuple(await storage.world.get_landmarks()),
    )
