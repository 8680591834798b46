"""Arc-consistency propagation over a padded, flattened wave, touching only what changed.

The wave is one uint8 bitmask per cell, stored row-major in a grid padded by
one cell on every side. The padding holds every tile and is never updated, so
neighbours are plain index offsets (+-1, +-stride) with no bounds checks.

Propagation works on a frontier of cell indices: each round recomputes those
cells from their four neighbours in one vectorised expression, and the cells
that changed put their neighbours on the next frontier. Cost is proportional to
the cells affected, not to the size of the world.
"""

from __future__ import annotations

import numpy as np

from generation.wfc.tables import WaveTables


class PaddedGrid:
    """Index helpers for a (height, width) grid stored with a one-cell border."""

    def __init__(self, height: int, width: int) -> None:
        self.height = height
        self.width = width
        self.stride = width + 2
        self.size = (height + 2) * (width + 2)
        self.offsets = np.array([-1, 1, -self.stride, self.stride], dtype=np.intp)
        interior = np.zeros((height + 2, width + 2), dtype=bool)
        interior[1:-1, 1:-1] = True
        self.interior = interior.reshape(-1)
        self._stamp = np.full(self.size, -1, dtype=np.int32)

    def neighbours(self, idx: np.ndarray) -> np.ndarray:
        """The four neighbours of each index, interior cells only (may repeat)."""
        around = (idx[:, None] + self.offsets[None, :]).reshape(-1)
        return around[self.interior[around]]

    def unique(self, idx: np.ndarray) -> np.ndarray:
        """`idx` without repeats, in O(len) rather than a sort."""
        if idx.size < 2:
            return idx
        order = np.arange(idx.size, dtype=np.int32)
        self._stamp[idx] = order
        keep = self._stamp[idx] == order
        self._stamp[idx] = -1
        return idx[keep]

    def box(self, idx: np.ndarray, radius: int) -> np.ndarray:
        """Interior cells within Chebyshev `radius` of each index (unique)."""
        y, x = np.divmod(idx, self.stride)
        span = np.arange(-radius, radius + 1)
        dy, dx = np.meshgrid(span, span, indexing="ij")
        ys = (y[:, None] + dy.reshape(1, -1)).reshape(-1)
        xs = (x[:, None] + dx.reshape(1, -1)).reshape(-1)
        ok = (ys >= 1) & (ys <= self.height) & (xs >= 1) & (xs <= self.width)
        return self.unique(ys[ok] * self.stride + xs[ok])


def propagate(
    wave: np.ndarray, grid: PaddedGrid, tables: WaveTables, frontier: np.ndarray
) -> np.ndarray:
    """Shrink the wave until every tile left has support on all four sides.

    Returns the indices of cells left with no tile at all (contradictions), for
    the caller to repair; those cells do not constrain their neighbours.
    """
    support = tables.support
    s = grid.stride
    contradictions: list[np.ndarray] = []
    frontier = grid.unique(frontier)
    while frontier.size:
        current = wave[frontier]
        narrowed = (
            current
            & support[wave[frontier - 1]]
            & support[wave[frontier + 1]]
            & support[wave[frontier - s]]
            & support[wave[frontier + s]]
        )
        changed = narrowed != current
        if not changed.any():
            break
        cells = frontier[changed]
        values = narrowed[changed]
        wave[cells] = values
        empty = values == 0
        if empty.any():
            contradictions.append(cells[empty])
        frontier = grid.unique(grid.neighbours(cells[~empty]))
    if not contradictions:
        return np.empty(0, dtype=np.intp)
    return np.concatenate(contradictions)
