"""Where agents start: standable cells, spaced apart, all able to walk to each other.

The design wants agents to spawn on grass 30-60 cells (Manhattan) apart, near the
middle of the world, on ground that connects them, so that they start alone yet can
find each other. `find_agent_positions` turns that into these rules:

* Every position is ``standable``, lies in one 4-connected region of ``passable``
  (`generation.regions.label_regions`), is not in ``avoid``, and no two are equal.
* Spacing. Every pair is at least ``min_spacing`` apart. How ``max_spacing`` applies
  depends on the group size:

  - groups of up to `FULL_BAND_GROUP` agents (the default is 3): every pair is at
    most ``max_spacing`` apart, so each agent has every other within reach;
  - larger groups: each agent is at most ``max_spacing`` from its nearest other
    agent (a chain), because a crowd cannot be both far apart and all close.

* Shrinking. If no placement fits, ``min_spacing`` is lowered step by step, to
  three quarters of its value each time (30, 22, 16, 12, 9, 6, 4, 3, 2, 1), and
  ``max_spacing`` stays as given. A lower ``max_spacing`` could never make a
  placement easier, so keeping it keeps the "can find each other" promise intact
  while the agents move closer. Only when even ``min_spacing`` 1 fails is the
  request refused.
* Preference. Full spacing matters most, then the largest region (regions are tried
  largest first), then closeness to the map centre: candidates are taken from a
  square window of ±`SEARCH_RADIUS` cells around the centre, doubled until it covers
  the map.

Each try picks agents one at a time, uniformly at random (from ``rng``) among the
candidate cells that still satisfy the rules against those already placed, keeping
running nearest/farthest distance arrays so a step costs a few numpy operations over
the window's candidates. A try that runs out of choices starts again from a new first
agent, up to `ATTEMPTS` times. Everything else is numpy over whole arrays, so a
500x500 map takes a few milliseconds, and the same ``rng`` state gives the same
positions.

Impossible requests raise `PlacementError` with one line saying what to change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from core.types import Position
from generation.regions import label_regions

__all__ = [
    "ATTEMPTS",
    "FULL_BAND_GROUP",
    "SEARCH_RADIUS",
    "PlacementError",
    "find_agent_positions",
]

FULL_BAND_GROUP = 4
"""Groups up to this size keep every pair within max_spacing; larger groups form a chain.

With max_spacing = 2 * min_spacing at most 9 cells can be pairwise in the band (a 3x3
lattice in rotated coordinates) and random picking finds that rarely, while 4 fit
easily; beyond that, insisting on it would mostly shrink the spacing instead.
"""

SEARCH_RADIUS = 100
"""Half the side of the first search window around the map centre, in cells."""

ATTEMPTS = 8
"""Most fresh tries (new first agent) per spacing, region and window before moving on."""

_SHRINK_NUMERATOR, _SHRINK_DENOMINATOR = 3, 4


class PlacementError(ValueError):
    """Agents cannot be placed as asked; the message says what to change."""


def find_agent_positions(
    passable: np.ndarray,
    standable: np.ndarray,
    count: int,
    *,
    min_spacing: int,
    max_spacing: int,
    rng: np.random.Generator,
    avoid: Iterable[Position] = (),
    near: Position | None = None,
    near_radius: int = SEARCH_RADIUS,
) -> list[Position]:
    """Choose `count` start positions, in placement order (see the module docstring).

    `passable` and `standable` are boolean (height, width) masks indexed [y, x]:
    passable decides who can walk to whom, standable where an agent may start.
    Cells in `avoid` (e.g. landmarks) are never chosen; ones off the map are ignored.
    `near`, if given, takes the place of the map centre, and the first window around
    it reaches `near_radius` cells (Chebyshev) each way: world setup puts the agents
    within sight of a landmark this way. Raises PlacementError when the request
    cannot be met.
    """
    passable, standable = _check_masks(passable, standable)
    _check_numbers(count, min_spacing, max_spacing)
    height, width = passable.shape

    free = standable & passable
    if not free.any():
        if not standable.any():
            raise PlacementError(
                f"the {width}x{height} map has no standable cell; "
                "generate terrain with some standable ground (grass)"
            )
        raise PlacementError(
            "every standable cell is impassable; make some standable cells passable"
        )
    for pos in avoid:
        if 0 <= pos.x < width and 0 <= pos.y < height:
            free[pos.y, pos.x] = False
    if not free.any():
        raise PlacementError(
            "every standable cell is in avoid; avoid fewer cells or make more ground standable"
        )

    labels, sizes = label_regions(passable)
    free_per_region = np.bincount(labels[free], minlength=sizes.size)
    most_free = int(free_per_region.max())
    if most_free < count:
        raise PlacementError(
            f"cannot place {count} agents: the best connected area has only {most_free} "
            f"free standable cells; lower the count to at most {most_free} or use a bigger map"
        )
    # Largest passable region first; the stable sort keeps lower labels first on a tie.
    order = np.argsort(-sizes, kind="stable")
    regions = [int(r) for r in order if r != 0 and free_per_region[r] >= count]

    chain = count > FULL_BAND_GROUP
    if near is not None and 0 <= near.x < width and 0 <= near.y < height:
        centre, first = (near.x, near.y), max(1, near_radius)
    else:
        centre, first = (width // 2, height // 2), SEARCH_RADIUS
    for spacing in _spacings(min_spacing):
        for region in regions:
            for x0, y0, x1, y1 in _windows(centre, width, height, first):
                window = free[y0:y1, x0:x1] & (labels[y0:y1, x0:x1] == region)
                ys, xs = np.nonzero(window)
                if xs.size < count:
                    continue
                xs = xs.astype(np.int32) + x0
                ys = ys.astype(np.int32) + y0
                if not _could_fit(xs, ys, count, spacing, max_spacing, chain):
                    continue
                chosen = _try_place(xs, ys, count, spacing, max_spacing, chain, rng)
                if chosen is not None:
                    return [Position(int(xs[i]), int(ys[i])) for i in chosen]

    if chain:
        raise PlacementError(
            f"cannot place {count} agents each within max_spacing {max_spacing} of another "
            "on connected standable ground, even 1 cell apart; raise max_spacing or lower "
            "the count"
        )
    raise PlacementError(
        f"cannot place {count} agents all within max_spacing {max_spacing} of each other "
        "on connected standable ground, even 1 cell apart; raise max_spacing or lower the count"
    )


def _check_masks(passable: np.ndarray, standable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    passable = np.asarray(passable)
    standable = np.asarray(standable)
    for name, mask in (("passable", passable), ("standable", standable)):
        if mask.dtype != np.bool_:
            raise PlacementError(
                f"{name} must be a boolean mask, got dtype {mask.dtype}; "
                "compare the terrain codes first"
            )
        if mask.ndim != 2:
            raise PlacementError(
                f"{name} must be a 2-D (height, width) mask, got shape {mask.shape}"
            )
    if passable.shape != standable.shape:
        raise PlacementError(
            f"passable mask has shape {passable.shape} but standable has {standable.shape}; "
            "pass two masks of the same map"
        )
    return passable, standable


def _check_numbers(count: int, min_spacing: int, max_spacing: int) -> None:
    if count < 1:
        raise PlacementError(f"agent count must be at least 1, got {count}")
    if min_spacing < 1:
        raise PlacementError(f"min_spacing must be at least 1, got {min_spacing}")
    if max_spacing < min_spacing:
        raise PlacementError(
            f"max_spacing ({max_spacing}) must be at least min_spacing ({min_spacing})"
        )


def _spacings(min_spacing: int) -> Iterator[int]:
    """min_spacing, then three quarters of it, and so on, ending with 1 (strictly falling)."""
    spacing = min_spacing
    while True:
        yield spacing
        if spacing == 1:
            return
        spacing = max(1, min(spacing - 1, spacing * _SHRINK_NUMERATOR // _SHRINK_DENOMINATOR))


def _windows(
    centre: tuple[int, int], width: int, height: int, radius: int = SEARCH_RADIUS
) -> Iterator[tuple[int, ...]]:
    """Square windows (x0, y0, x1, y1) around the centre, from `radius` cells each way,
    doubling until they cover the map."""
    cx, cy = centre
    while True:
        box = (
            max(0, cx - radius),
            max(0, cy - radius),
            min(width, cx + radius + 1),
            min(height, cy + radius + 1),
        )
        yield box
        if box == (0, 0, width, height):
            return
        radius *= 2


def _could_fit(
    xs: np.ndarray, ys: np.ndarray, count: int, spacing: int, max_spacing: int, chain: bool
) -> bool:
    """Cheap necessary conditions, so hopeless spacings are skipped without trying.

    In rotated coordinates u = x + y, v = x - y the Manhattan distance is
    max(|du|, |dv|). Points pairwise >= spacing apart have disjoint open diamonds of
    radius spacing / 2, which must fit in the candidates' bounding box grown by that
    radius; and a group pairwise within max_spacing lies in a max_spacing square in
    (u, v), which holds at most (max_spacing // spacing + 1) ** 2 such points.
    """
    if count == 1:
        return True
    u = xs + ys
    v = xs - ys
    if max(int(u.max() - u.min()), int(v.max() - v.min())) < spacing:
        return False
    radius = (spacing - 1) // 2
    diamond = 2 * radius * radius + 2 * radius + 1
    box = (int(xs.max() - xs.min()) + 1 + 2 * radius) * (int(ys.max() - ys.min()) + 1 + 2 * radius)
    if count * diamond > box:
        return False
    return chain or count <= (max_spacing // spacing + 1) ** 2


def _try_place(
    xs: np.ndarray,
    ys: np.ndarray,
    count: int,
    spacing: int,
    max_spacing: int,
    chain: bool,
    rng: np.random.Generator,
) -> list[int] | None:
    """Indices into (xs, ys) of a valid group, or None when the tries give up.

    `nearest` and `farthest` hold each candidate's distance to the closest and the
    farthest agent placed so far; a placed cell has nearest == 0 < spacing, so it is
    never chosen twice.

    Up to ATTEMPTS tries, but together they place at most 2 * count agents: a fresh
    start helps when a try dies early (its first agent sat in a poor spot), while a try
    that dies late means the spacing is too wide for this ground, and retrying a large
    group would cost much and rarely succeed.
    """
    budget = 2 * count
    for _ in range(ATTEMPTS):
        if budget <= 0:
            break
        first = int(rng.integers(xs.size))
        chosen = [first]
        nearest = np.abs(xs - xs[first]) + np.abs(ys - ys[first])
        farthest = nearest if chain else nearest.copy()
        while len(chosen) < count:
            allowed = nearest >= spacing
            allowed &= (nearest if chain else farthest) <= max_spacing
            options = np.flatnonzero(allowed)
            if options.size == 0:
                break
            pick = int(options[rng.integers(options.size)])
            chosen.append(pick)
            distance = np.abs(xs - xs[pick]) + np.abs(ys - ys[pick])
            np.minimum(nearest, distance, out=nearest)
            if not chain:
                np.maximum(farthest, distance, out=farthest)
        else:
            return chosen
        budget -= len(chosen)
    return None
