"""The after-the-fact proof that a generated map obeys the adjacency rules.

Whatever the solver did, this check looks only at the finished map: every pair
of horizontally or vertically neighbouring cells is looked up in the adjacency
matrix at once. A violation means the solver has a bug, never bad luck.
"""

from __future__ import annotations

import numpy as np

from generation.tileset import Tileset


class AdjacencyViolation(RuntimeError):
    """A generated map has neighbours the tileset forbids: a bug in the generator."""


def count_violations(codes: np.ndarray, tileset: Tileset) -> int:
    """How many neighbouring pairs break the adjacency rules (0 for a valid map)."""
    if codes.ndim != 2:
        raise ValueError(f"a terrain map is 2-dimensional, got shape {codes.shape}")
    if codes.size and int(codes.max()) >= tileset.size:
        raise ValueError(f"terrain code {int(codes.max())} is not a tile of this tileset")
    # Bitmask form: tile b may sit next to tile a iff bit b of compatible[a] is set.
    fits = np.take(np.asarray(tileset.compatible, dtype=np.uint8), codes)
    bit = np.take(np.left_shift(1, np.arange(tileset.size)).astype(np.uint8), codes)
    bad = np.count_nonzero((fits[:, :-1] & bit[:, 1:]) == 0)
    bad += np.count_nonzero((fits[:-1, :] & bit[1:, :]) == 0)
    return int(bad)


def first_violation(codes: np.ndarray, tileset: Tileset) -> tuple[int, int, int, int] | None:
    """(x, y, x2, y2) of one offending pair, for the error message; None if valid."""
    allowed = tileset.adjacency_matrix()
    ys, xs = np.nonzero(~allowed[codes[:, :-1], codes[:, 1:]])
    if ys.size:
        return int(xs[0]), int(ys[0]), int(xs[0]) + 1, int(ys[0])
    ys, xs = np.nonzero(~allowed[codes[:-1, :], codes[1:, :]])
    if ys.size:
        return int(xs[0]), int(ys[0]), int(xs[0]), int(ys[0]) + 1
    return None


def verify(codes: np.ndarray, tileset: Tileset) -> None:
    """Raise AdjacencyViolation if any two neighbours break the rules."""
    bad = count_violations(codes, tileset)
    if bad:
        x, y, x2, y2 = first_violation(codes, tileset) or (0, 0, 0, 0)
        a = tileset.terrains[codes[y, x]].value
        b = tileset.terrains[codes[y2, x2]].value
        raise AdjacencyViolation(
            f"{bad} neighbouring pairs break the adjacency rules, e.g. {a} at ({x}, {y}) "
            f"next to {b} at ({x2}, {y2})"
        )
