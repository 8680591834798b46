"""Smooth random fields: the large-scale shape of a world before WFC fills in the cells.

Value noise summed over octaves (fractal Brownian motion): random values on a
coarse lattice, blended with a smoothstep so no lattice lines show, each octave
half the spacing and half the amplitude of the one before. Blending along y and
then x is a product with a small interpolation matrix, so a 2000x2000 field is a
few BLAS calls rather than millions of Python steps.

Feature size is in cells, not a fraction of the map: a bigger world has more
lakes, not bigger ones.
"""

from __future__ import annotations

import numpy as np


def _blend_matrix(length: int, spacing: float, offset: float) -> np.ndarray:
    """Rows of weights that blend lattice values into `length` samples."""
    pos = (np.arange(length, dtype=np.float64) + offset) / spacing
    lower = np.floor(pos).astype(np.intp)
    t = pos - lower
    smooth = t * t * (3.0 - 2.0 * t)
    nodes = int(lower.max()) + 2
    matrix = np.zeros((length, nodes), dtype=np.float32)
    rows = np.arange(length)
    matrix[rows, lower] = 1.0 - smooth
    matrix[rows, lower + 1] = smooth
    return matrix


def fractal_noise(
    height: int,
    width: int,
    rng: np.random.Generator,
    *,
    feature_size: float,
    octaves: int = 4,
    persistence: float = 0.5,
) -> np.ndarray:
    """A (height, width) float32 field of smooth noise, on an arbitrary scale.

    `feature_size` is the lattice spacing of the coarsest octave in cells: roughly
    the diameter of the largest blobs. Callers cut the field at quantiles, so its
    scale does not matter and it is not normalised.

    Each octave is `rows @ lattice @ cols.T`. Stacking the octaves' `rows @ lattice`
    side by side and their `cols.T` on top of each other turns the sum of all
    octaves into a single matrix product, with no full-size temporaries per octave.
    """
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    amplitude = 1.0
    spacing = float(feature_size)
    for _ in range(octaves):
        if spacing < 1.5:
            break
        rows = _blend_matrix(height, spacing, rng.uniform(0, spacing))
        cols = _blend_matrix(width, spacing, rng.uniform(0, spacing))
        lattice = rng.standard_normal((rows.shape[1], cols.shape[1]), dtype=np.float32)
        lattice *= np.float32(amplitude)
        left.append(rows @ lattice)
        right.append(cols.T)
        amplitude *= persistence
        spacing /= 2.0
    if not left:
        return np.zeros((height, width), dtype=np.float32)
    return np.concatenate(left, axis=1) @ np.concatenate(right, axis=0)
