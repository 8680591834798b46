"""Lookup tables over wave bitmasks, so per-cell questions become one array index.

A cell's wave is a uint8 bitmask of the tiles still possible there (bit i is
tile i; seven tiles fit in a byte). Every question the solver asks about a
cell (how many tiles remain, which one if only one, which neighbours it can
support, how uncertain it is) is precomputed for all 256 masks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generation.tileset import Tileset

MASKS = np.arange(256, dtype=np.uint16)


@dataclass(frozen=True, eq=False)
class WaveTables:
    all_mask: int
    popcount: np.ndarray
    """popcount[m]: how many tiles mask m allows."""
    single_tile: np.ndarray
    """single_tile[m]: the tile of a one-tile mask, 255 otherwise."""
    support: np.ndarray
    """support[m]: tiles that may sit next to a cell whose wave is m.

    support[0] is every tile: a contradicted cell is repaired separately, and must
    not spread emptiness to its neighbours meanwhile.
    """
    entropy: np.ndarray
    """entropy[m]: Shannon entropy (float32) of the tile weights restricted to m."""
    compatible: np.ndarray
    """compatible[t]: tiles allowed next to tile t (uint8 masks)."""
    allowed: np.ndarray
    """allowed[a, b]: may tile a sit next to tile b (bool matrix)."""
    bits: np.ndarray
    """bits[m, t]: 1.0 if mask m allows tile t, else 0.0 (float32), to zero out weights."""

    @classmethod
    def for_tileset(cls, tileset: Tileset) -> WaveTables:
        n = tileset.size
        all_mask = tileset.all_mask
        bits = (MASKS[:, None] >> np.arange(n)[None, :]) & 1  # (256, n)
        popcount = bits.sum(axis=1).astype(np.uint8)
        single = np.full(256, 255, dtype=np.uint8)
        for t in range(n):
            single[1 << t] = t
        support = np.zeros(256, dtype=np.uint8)
        for t in range(n):
            support |= np.where(bits[:, t] == 1, tileset.compatible[t], 0).astype(np.uint8)
        support[0] = all_mask
        weights = bits * tileset.weights[None, :]
        totals = weights.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(totals > 0, weights / totals, 0.0)
            logs = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
        entropy = (-(p * logs).sum(axis=1)).astype(np.float32)
        tables = cls(
            all_mask=all_mask,
            popcount=popcount,
            single_tile=single,
            support=support,
            entropy=entropy,
            compatible=np.asarray(tileset.compatible, dtype=np.uint8),
            allowed=tileset.adjacency_matrix(),
            bits=bits.astype(np.float32),
        )
        for array in (popcount, single, support, entropy, tables.bits):
            array.setflags(write=False)
        return tables
