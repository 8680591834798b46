"""A batched Wave Function Collapse solver over a numpy bitmask wave.

Classic WFC collapses one lowest-entropy cell at a time and propagates; on a
500x500 world that is 250,000 rounds. This solver collapses thousands of cells
per step, and stays correct by choosing which ones carefully:

1. Every open cell (more than one tile possible) proposes a tile: its guide tile
   when the guide is given and the tile is still possible, otherwise a draw
   weighted by tile weight and self-affinity (each already collapsed neighbour
   of the same tile multiplies that tile's weight by its affinity).
2. A cell whose proposal agrees with the proposals of all its open neighbours
   collapses. Such cells never contradict each other.
3. Among cells whose proposals clash, the lowest-entropy cell of every 5x5
   window collapses too. These are at least three cells apart, so no cell sees
   two of them, and the global minimum always wins: every step makes progress.
4. Propagation (arc consistency) runs only from the cells that changed.
5. A cell left with no possible tile is repaired locally: a box around it is
   reopened and re-propagated, growing if the same trouble recurs; only a
   hopeless tangle restarts the whole map (with a derived, still seeded, stream).

The result is checked against the adjacency rules by `check.verify`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generation.tileset import Tileset
from generation.wfc.check import verify
from generation.wfc.propagate import PaddedGrid, propagate
from generation.wfc.tables import WaveTables

NO_GUIDE = 255


class SolverFailed(RuntimeError):
    """The solver gave up after its restarts: the tileset admits no solution."""


class _Restart(Exception):
    """Local repair could not untangle a region; start the map again."""


@dataclass(frozen=True)
class SolveStats:
    steps: int
    repairs: int
    restarts: int
    chosen: int
    """Cells collapsed by a choice (the rest were forced by propagation)."""


@dataclass(frozen=True)
class Solution:
    codes: np.ndarray
    """(height, width) uint8 tile codes."""
    stats: SolveStats


class WFCSolver:
    """Solve a grid for a tileset; seeded through the generator you pass in."""

    def __init__(
        self,
        tileset: Tileset,
        rng: np.random.Generator,
        *,
        repair_radius: int = 2,
        max_repair_radius: int = 8,
        max_repairs: int = 2000,
        max_restarts: int = 10,
    ) -> None:
        self.tileset = tileset
        self.tables = WaveTables.for_tileset(tileset)
        self.rng = rng
        self.repair_radius = repair_radius
        self.max_repair_radius = max_repair_radius
        self.max_repairs = max_repairs
        self.max_restarts = max_restarts
        # _boost[k, t]: weight of tile t when k of the four neighbours are t already.
        self._boost = (
            np.asarray(tileset.weights)[None, :]
            * np.asarray(tileset.self_affinity)[None, :] ** np.arange(5)[:, None]
        ).astype(np.float32)
        self._bits = np.arange(tileset.size, dtype=np.uint8)

    def solve(self, height: int, width: int, guide: np.ndarray | None = None) -> Solution:
        if height < 1 or width < 1:
            raise ValueError(f"a grid needs at least one cell, got {width}x{height}")
        if guide is not None:
            guide = np.asarray(guide)
            if guide.shape != (height, width):
                raise ValueError(f"guide shape {guide.shape} does not match {height}x{width}")
            if guide.dtype.kind not in "iu":
                raise ValueError(f"a guide holds tile codes (integers), not {guide.dtype}")
            stray = (guide >= self.tileset.size) & (guide != NO_GUIDE) | (guide < 0)
            if stray.any():
                y, x = (int(v[0]) for v in np.nonzero(stray))
                raise ValueError(
                    f"guide value {int(guide[y, x])} at ({x}, {y}) is neither a tile code "
                    f"(0..{self.tileset.size - 1}) nor NO_GUIDE ({NO_GUIDE})"
                )
        grid = PaddedGrid(height, width)
        padded_guide = None
        if guide is not None:
            padded = np.full((height + 2, width + 2), NO_GUIDE, dtype=np.uint8)
            padded[1:-1, 1:-1] = guide
            padded_guide = padded.reshape(-1)
        for restart in range(self.max_restarts + 1):
            try:
                attempt_guide = None if padded_guide is None else padded_guide.copy()
                wave, steps, repairs, chosen = self._attempt(grid, attempt_guide)
            except _Restart:
                continue
            codes = self.tables.single_tile[wave].reshape(height + 2, width + 2)[1:-1, 1:-1]
            codes = np.ascontiguousarray(codes)
            verify(codes, self.tileset)
            return Solution(codes, SolveStats(steps, repairs, restart, chosen))
        raise SolverFailed(
            f"gave up after {self.max_restarts} restarts: local repair could not untangle "
            "the map (the adjacency rules may be too strict for this size)"
        )

    # ------------------------------------------------------------------ one attempt

    def _attempt(
        self, grid: PaddedGrid, guide: np.ndarray | None
    ) -> tuple[np.ndarray, int, int, int]:
        tables = self.tables
        wave = np.full(grid.size, tables.all_mask, dtype=np.uint8)
        # claim[c]: the tile bit cell c stands for this step: its own tile once
        # collapsed, its proposal while open. Only open cells' claims go stale.
        claim = wave.copy()
        key = np.full(grid.size, np.inf, dtype=np.float64)
        window = self._window_offsets(grid.stride)
        steps = repairs = chosen = 0
        if guide is not None:
            open_idx, chosen = self._guided_start(wave, grid, guide)
            steps = 1
        else:
            open_idx = np.flatnonzero(grid.interior)
        while True:
            if open_idx.size:
                broken = propagate(wave, grid, tables, open_idx)
                if broken.size:
                    reopened, rounds = self._repair(wave, grid, broken)
                    if guide is not None:
                        # The guide led here; following it again could rebuild the
                        # same tangle, so the cells right at the trouble are left to
                        # weighted draws (the rest of the box follows the guide).
                        guide[grid.box(broken, 1)] = NO_GUIDE
                    repairs += rounds
                    if repairs > self.max_repairs:
                        raise _Restart
                    open_idx = grid.unique(np.concatenate([open_idx, reopened]))
                claim[open_idx] = wave[open_idx]
                open_idx = open_idx[tables.popcount[wave[open_idx]] > 1]
            if open_idx.size == 0:
                return wave, steps, repairs, chosen
            steps += 1
            if steps > 50 + 4 * (grid.height + grid.width):
                raise _Restart
            masks = wave[open_idx]
            tiles = self._propose(wave, grid, open_idx, masks, guide)
            proposal = np.left_shift(1, tiles).astype(np.uint8)
            claim[open_idx] = proposal
            fits = tables.compatible[tiles]
            agree = np.ones(open_idx.size, dtype=bool)
            for off in grid.offsets:
                agree &= (fits & claim[open_idx + off]) != 0

            accept = agree
            clash = np.flatnonzero(~agree)
            if clash.size:
                cells = open_idx[clash]
                own = tables.entropy[masks[clash]] + 1e-3 * self.rng.random(clash.size)
                key[cells] = own
                best = np.full(clash.size, np.inf)
                # The window may reach past the border or wrap a row: reading extra
                # cells only makes winning harder, never lets two neighbours win.
                for off in window:
                    np.minimum(best, np.take(key, cells + off, mode="clip"), out=best)
                key[cells] = np.inf
                accept = agree.copy()
                accept[clash[own < best]] = True

            wave[open_idx[accept]] = proposal[accept]
            chosen += int(np.count_nonzero(accept))
            # Only cells still open can lose tiles to the new choices; collapsed
            # neighbours were compatible when chosen, and propagation rechecks any
            # cell next to one that shrinks. The loop top propagates and tidies.

    def _guided_start(
        self, wave: np.ndarray, grid: PaddedGrid, guide: np.ndarray
    ) -> tuple[np.ndarray, int]:
        """The first step, dense: every cell whose guide tile fits all four
        neighbours' guide tiles collapses to it at once.

        This is the general step specialised to an all-open wave (every guide
        tile is still possible), written with array slices instead of index
        lists so the bulk of the map costs a few passes over bytes.
        """
        h, w = grid.height, grid.width
        g = guide.reshape(h + 2, w + 2)[1:-1, 1:-1]
        # 256-entry tables so NO_GUIDE cells read as "anything" and agree with all.
        any_tile = self.tables.all_mask
        bit_of = np.full(256, any_tile, dtype=np.uint8)
        bit_of[: self.tileset.size] = np.left_shift(1, self._bits)
        fits_of = np.full(256, any_tile, dtype=np.uint8)
        fits_of[: self.tileset.size] = self.tables.compatible
        bit = np.take(bit_of, g)
        fits = np.take(fits_of, g)
        agree = g != NO_GUIDE
        pair = (fits[:, :-1] & bit[:, 1:]) != 0
        agree[:, :-1] &= pair
        agree[:, 1:] &= pair
        pair = (fits[:-1, :] & bit[1:, :]) != 0
        agree[:-1, :] &= pair
        agree[1:, :] &= pair
        inner = wave.reshape(h + 2, w + 2)[1:-1, 1:-1]
        np.copyto(inner, bit, where=agree)
        ys, xs = np.nonzero(~agree)
        open_idx = (ys + 1) * grid.stride + (xs + 1)
        return open_idx, h * w - open_idx.size

    def _repair(
        self, wave: np.ndarray, grid: PaddedGrid, broken: np.ndarray
    ) -> tuple[np.ndarray, int]:
        """Reopen a box around each contradiction and re-propagate; grow it if needed.

        Returns the reopened cells (to join the open set) and the rounds it took.
        """
        radius = self.repair_radius
        rounds = 0
        reopened: list[np.ndarray] = []
        while broken.size:
            rounds += 1
            if radius > self.max_repair_radius:
                raise _Restart
            box = grid.box(broken, radius)
            wave[box] = self.tables.all_mask
            reopened.append(box)
            broken = propagate(wave, grid, self.tables, box)
            radius += 1
        return np.concatenate(reopened), rounds

    # ------------------------------------------------------------------ choices

    def _propose(
        self,
        wave: np.ndarray,
        grid: PaddedGrid,
        idx: np.ndarray,
        masks: np.ndarray,
        guide: np.ndarray | None,
    ) -> np.ndarray:
        tiles = np.empty(idx.size, dtype=np.uint8)
        draw = np.ones(idx.size, dtype=bool)
        if guide is not None:
            wanted = guide[idx]
            usable = (wanted != NO_GUIDE) & (
                (masks >> np.minimum(wanted, 7)) & 1 == 1
            )
            tiles[usable] = wanted[usable]
            draw = ~usable
        if draw.any():
            tiles[draw] = self._weighted_draw(wave, grid, idx[draw], masks[draw])
        return tiles

    def _weighted_draw(
        self, wave: np.ndarray, grid: PaddedGrid, idx: np.ndarray, masks: np.ndarray
    ) -> np.ndarray:
        """Draw a tile per cell from its wave, by weight x affinity^(same neighbours)."""
        n = self.tileset.size
        tiles = np.arange(n, dtype=np.uint8)
        same = np.zeros((idx.size, n), dtype=np.intp)
        for off in grid.offsets:
            same += self.tables.single_tile[wave[idx + off]][:, None] == tiles[None, :]
        weight = self._boost[same, tiles[None, :]]
        weight *= self.tables.bits[masks]
        cdf = np.cumsum(weight, axis=1)
        u = self.rng.random(idx.size, dtype=np.float32) * cdf[:, -1]
        return np.minimum((cdf <= u[:, None]).sum(axis=1), n - 1).astype(np.uint8)

    @staticmethod
    def _window_offsets(stride: int, radius: int = 2) -> np.ndarray:
        span = range(-radius, radius + 1)
        return np.array([dy * stride + dx for dy in span for dx in span if dy or dx])


def key_less(own: np.ndarray, best_other: np.ndarray) -> np.ndarray:
    """Cells whose key beats every other key in their window."""
    return own < best_other
