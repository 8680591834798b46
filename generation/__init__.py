"""World creation: WFC terrain, landmarks and where agents first stand.

Pure computation over numpy arrays; nothing here touches the database or files.
Terrain maps are (height, width) uint8 arrays of codes in `core.terrain.TERRAIN_ORDER`.
"""

from generation.terrain import (
    GeneratedTerrain,
    estimate_memory,
    generate,
    generate_terrain,
    generate_terrain_grid,
    sparse_terrain,
)
from generation.tileset import Tileset

__all__ = [
    "GeneratedTerrain",
    "Tileset",
    "estimate_memory",
    "generate",
    "generate_terrain",
    "generate_terrain_grid",
    "sparse_terrain",
]
