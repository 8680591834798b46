"""Wave Function Collapse: lookup tables, propagation, the solver and the final check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.terrain import TERRAIN_CODE, Terrain
from generation.guide import UNDECIDED, loosen_borders, sketch
from generation.terrain import generate
from generation.tileset import Tileset
from generation.wfc import (
    AdjacencyViolation,
    SolverFailed,
    WaveTables,
    WFCSolver,
    count_violations,
    verify,
)
from generation.wfc.propagate import PaddedGrid, propagate
from generation.wfc.solver import NO_GUIDE

W, C, S, G, F, H, ST = (
    TERRAIN_CODE[t]
    for t in (
        Terrain.WATER,
        Terrain.COAST,
        Terrain.SAND,
        Terrain.GRASS,
        Terrain.FOREST,
        Terrain.HILL,
        Terrain.STONE,
    )
)
ALL = 0b1111111


def mask(*codes: int) -> int:
    out = 0
    for code in codes:
        out |= 1 << code
    return out


@pytest.fixture(scope="module")
def tables(tileset: Tileset) -> WaveTables:
    return WaveTables.for_tileset(tileset)


def solve(tileset: Tileset, height: int, width: int, seed: int = 0, guide=None):
    return WFCSolver(tileset, np.random.default_rng(seed)).solve(height, width, guide)


def grid_of(rows: list[str]) -> np.ndarray:
    """A map from letters: w c s g f h t (t for stone, s being sand)."""
    letters = {"w": W, "c": C, "s": S, "g": G, "f": F, "h": H, "t": ST}
    return np.array([[letters[ch] for ch in row] for row in rows], dtype=np.uint8)


# --- tables ---------------------------------------------------------------------------


def test_popcount_counts_the_tiles_of_a_mask(tables: WaveTables) -> None:
    assert tables.popcount[0] == 0
    assert tables.popcount[ALL] == 7
    assert tables.popcount[mask(W, C)] == 2
    assert tables.popcount[mask(W, G, ST)] == 3
    for t in range(7):
        assert tables.popcount[1 << t] == 1
    assert all(tables.popcount[m] == bin(m).count("1") for m in range(128))


def test_single_tile_names_the_tile_of_one_tile_masks_only(tables: WaveTables) -> None:
    for t in range(7):
        assert tables.single_tile[1 << t] == t
    for m in (0, mask(W, C), mask(G, F, H), ALL):
        assert tables.single_tile[m] == 255
    singles = [m for m in range(256) if tables.single_tile[m] != 255]
    assert singles == [1 << t for t in range(7)]


def test_support_of_a_single_tile_is_its_compatible_mask(
    tables: WaveTables, tileset: Tileset
) -> None:
    for t in range(7):
        assert tables.support[1 << t] == tileset.compatible[t]
    assert tables.support[mask(W)] == mask(W, C)
    assert tables.support[mask(ST)] == mask(H, ST)
    assert tables.support[mask(G)] == mask(S, G, F, H)


def test_support_of_a_larger_mask_is_the_union(tables: WaveTables) -> None:
    assert tables.support[mask(W, ST)] == mask(W, C, H, ST)
    assert tables.support[mask(W, C)] == mask(W, C, S)
    assert tables.support[ALL] == ALL


def test_support_of_the_empty_mask_is_every_tile(tables: WaveTables) -> None:
    assert tables.support[0] == ALL == tables.all_mask


def test_entropy_is_zero_for_a_single_tile_and_grows_with_the_mask(
    tables: WaveTables,
) -> None:
    for t in range(7):
        assert tables.entropy[1 << t] == 0.0
    # Coast and sand weigh the same (0.5 each): one bit of uncertainty, ln 2 nats.
    assert tables.entropy[mask(C, S)] == pytest.approx(math.log(2), rel=1e-6)
    assert tables.entropy[mask(C, S, ST)] > tables.entropy[mask(C, S)] > 0
    assert tables.entropy[ALL] > tables.entropy[mask(G, F, H)] > tables.entropy[mask(G, F)]
    assert tables.entropy.dtype == np.float32


def test_tables_are_read_only(tables: WaveTables) -> None:
    with pytest.raises(ValueError):
        tables.support[0] = 0


# --- padded grid ----------------------------------------------------------------------


def cell(grid: PaddedGrid, x: int, y: int) -> int:
    """Flat index of map cell (x, y) in the padded wave."""
    return (y + 1) * grid.stride + (x + 1)


def coords(grid: PaddedGrid, idx: np.ndarray) -> set[tuple[int, int]]:
    ys, xs = np.divmod(np.asarray(idx), grid.stride)
    return {(int(x) - 1, int(y) - 1) for x, y in zip(xs, ys, strict=True)}


def test_padded_grid_dimensions() -> None:
    grid = PaddedGrid(3, 5)
    assert grid.stride == 7
    assert grid.size == 5 * 7
    assert int(grid.interior.sum()) == 15
    assert grid.interior[cell(grid, 0, 0)] and grid.interior[cell(grid, 4, 2)]
    assert not grid.interior[0] and not grid.interior[cell(grid, 5, 0)]


def test_unique_drops_repeats_and_can_be_called_again() -> None:
    grid = PaddedGrid(4, 4)
    idx = np.array([8, 9, 8, 15, 9, 9, 22], dtype=np.intp)
    for _ in range(2):  # the scratch stamps must be reset after each call
        out = grid.unique(idx)
        assert sorted(out.tolist()) == [8, 9, 15, 22]
    assert grid.unique(np.array([8], dtype=np.intp)).tolist() == [8]
    assert grid.unique(np.empty(0, dtype=np.intp)).size == 0


def test_neighbours_are_the_four_interior_cells_around() -> None:
    grid = PaddedGrid(3, 3)
    centre = np.array([cell(grid, 1, 1)])
    assert coords(grid, grid.neighbours(centre)) == {(0, 1), (2, 1), (1, 0), (1, 2)}
    corner = np.array([cell(grid, 0, 0)])
    assert coords(grid, grid.neighbours(corner)) == {(1, 0), (0, 1)}
    assert grid.neighbours(corner).size == 2  # the padding is never returned


def test_box_is_the_clipped_square_around_each_cell() -> None:
    grid = PaddedGrid(5, 6)
    centre = grid.box(np.array([cell(grid, 2, 2)]), 1)
    assert coords(grid, centre) == {(x, y) for x in (1, 2, 3) for y in (1, 2, 3)}
    assert centre.size == 9
    corner = grid.box(np.array([cell(grid, 0, 0)]), 1)
    assert coords(grid, corner) == {(0, 0), (1, 0), (0, 1), (1, 1)}
    everything = grid.box(np.array([cell(grid, 3, 3)]), 10)
    assert everything.size == 30 and coords(grid, everything) == {
        (x, y) for x in range(6) for y in range(5)
    }


def test_box_of_several_cells_is_their_union_without_repeats() -> None:
    grid = PaddedGrid(4, 8)
    both = grid.box(np.array([cell(grid, 1, 1), cell(grid, 2, 1)]), 1)
    assert both.size == len(set(both.tolist())) == 12
    assert coords(grid, both) == {(x, y) for x in range(4) for y in range(3)}


# --- propagation ------------------------------------------------------------------------


def wave_for(grid: PaddedGrid, cells: dict[tuple[int, int], int]) -> np.ndarray:
    wave = np.full(grid.size, ALL, dtype=np.uint8)
    for (x, y), m in cells.items():
        wave[cell(grid, x, y)] = m
    return wave


def interior_cells(grid: PaddedGrid) -> np.ndarray:
    return np.flatnonzero(grid.interior)


def test_collapsed_water_narrows_its_neighbours_to_water_and_coast(tables: WaveTables) -> None:
    grid = PaddedGrid(3, 3)
    wave = wave_for(grid, {(1, 1): mask(W)})
    broken = propagate(wave, grid, tables, grid.neighbours(np.array([cell(grid, 1, 1)])))
    assert broken.size == 0
    for x, y in ((0, 1), (2, 1), (1, 0), (1, 2)):
        assert wave[cell(grid, x, y)] == mask(W, C), (x, y)
    # Diagonal cells touch two {water, coast} cells: anything next to either.
    for x, y in ((0, 0), (2, 0), (0, 2), (2, 2)):
        assert wave[cell(grid, x, y)] == mask(W, C, S), (x, y)
    assert wave[cell(grid, 1, 1)] == mask(W)
    assert np.all(wave[~grid.interior] == ALL)  # the padding is never written


def test_propagation_forces_the_only_tile_that_fits(tables: WaveTables) -> None:
    grid = PaddedGrid(1, 3)
    wave = wave_for(grid, {(0, 0): mask(W), (2, 0): mask(S)})
    broken = propagate(wave, grid, tables, interior_cells(grid))
    assert broken.size == 0
    assert wave[cell(grid, 1, 0)] == mask(C)


def test_a_squeezed_cell_is_reported_as_a_contradiction(tables: WaveTables) -> None:
    grid = PaddedGrid(1, 3)
    wave = wave_for(grid, {(0, 0): mask(W), (2, 0): mask(G)})
    broken = propagate(wave, grid, tables, interior_cells(grid))
    assert broken.tolist() == [cell(grid, 1, 0)]
    assert wave[cell(grid, 1, 0)] == 0
    assert wave[cell(grid, 0, 0)] == mask(W)
    assert wave[cell(grid, 2, 0)] == mask(G)


def test_an_emptied_cell_does_not_spread_emptiness(tables: WaveTables) -> None:
    # water _ grass on top; the open row below only feels its other neighbours.
    grid = PaddedGrid(2, 3)
    wave = wave_for(grid, {(0, 0): mask(W), (2, 0): mask(G)})
    broken = propagate(wave, grid, tables, interior_cells(grid))
    assert broken.tolist() == [cell(grid, 1, 0)]
    assert wave[cell(grid, 0, 1)] == mask(W, C)
    # Below grass, and next to a cell that can only be coast or sand.
    assert wave[cell(grid, 2, 1)] == mask(S, G)
    # Below the empty cell: only its left and right neighbours constrain it, so
    # it keeps the tiles that fit both; the contradiction above does not empty it.
    assert wave[cell(grid, 1, 1)] == mask(C, S)


def test_two_clashing_collapsed_cells_are_both_reported(tables: WaveTables) -> None:
    # grass forest / hill stone: forest sits on stone, which is forbidden.
    grid = PaddedGrid(2, 2)
    wave = wave_for(grid, {(0, 0): mask(G), (1, 0): mask(F), (0, 1): mask(H), (1, 1): mask(ST)})
    broken = propagate(wave, grid, tables, interior_cells(grid))
    assert sorted(broken.tolist()) == sorted([cell(grid, 1, 0), cell(grid, 1, 1)])
    assert wave[cell(grid, 0, 0)] == mask(G)
    assert wave[cell(grid, 0, 1)] == mask(H)


def test_propagation_leaves_a_consistent_wave_alone(tables: WaveTables) -> None:
    grid = PaddedGrid(2, 3)
    wave = wave_for(
        grid,
        {(0, 0): mask(G), (1, 0): mask(F), (2, 0): mask(H),
         (0, 1): mask(H), (1, 1): mask(H), (2, 1): mask(ST)},
    )
    before = wave.copy()
    assert propagate(wave, grid, tables, interior_cells(grid)).size == 0
    assert np.array_equal(wave, before)


# --- check ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (["wcsgfht"], 0),  # the whole chain, each step allowed
        (["wsgfht"], 1),  # water-sand skips the coast
        (["wg"], 1),
        (["w", "g"], 1),
        (["wg", "gw"], 4),
        (["ggg", "gwg", "ggg"], 4),
        (["wcs", "csg"], 0),
        (["t" * 5], 0),
        (["g"], 0),
        (["tg", "gt"], 4),
        (["hhh", "hth", "hhh"], 0),
        (["fff", "ftf", "fff"], 4),
        (["wcg"], 1),
    ],
)
def test_count_violations_counts_every_bad_pair(
    tileset: Tileset, rows: list[str], expected: int
) -> None:
    assert count_violations(grid_of(rows), tileset) == expected


def test_count_violations_rejects_non_maps(tileset: Tileset) -> None:
    with pytest.raises(ValueError, match="2-dimensional"):
        count_violations(np.zeros(5, dtype=np.uint8), tileset)
    with pytest.raises(ValueError, match="terrain code 7"):
        count_violations(np.array([[0, 7]], dtype=np.uint8), tileset)


def test_verify_accepts_a_valid_map(tileset: Tileset) -> None:
    verify(grid_of(["wcsg", "ccsg", "sssg", "gggf"]), tileset)


def test_verify_names_the_terrains_and_coordinates(tileset: Tileset) -> None:
    bad = grid_of(["gggg", "ggwg", "gggg"])  # water at (2, 1) amid grass
    with pytest.raises(AdjacencyViolation) as err:
        verify(bad, tileset)
    message = str(err.value)
    assert message.startswith("4 neighbouring pairs")
    assert "grass at (1, 1) next to water at (2, 1)" in message


def test_verify_reports_a_vertical_violation(tileset: Tileset) -> None:
    bad = grid_of(["hg", "hg", "tg"])  # stone at (0, 2), below a hill, next to grass
    with pytest.raises(AdjacencyViolation) as err:
        verify(bad, tileset)
    assert "1 neighbouring pairs" in str(err.value)
    assert "stone at (0, 2) next to grass at (1, 2)" in str(err.value)
    vertical = grid_of(["g", "g", "c"])
    with pytest.raises(AdjacencyViolation) as err:
        verify(vertical, tileset)
    assert "grass at (0, 1) next to coast at (0, 2)" in str(err.value)


def test_count_violations_agrees_with_a_plain_loop_on_random_maps(tileset: Tileset) -> None:
    rng = np.random.default_rng(7)
    allowed = tileset.adjacency_matrix()
    for _ in range(20):
        h, w = rng.integers(1, 9, size=2)
        codes = rng.integers(0, 7, size=(h, w)).astype(np.uint8)
        expected = sum(
            not allowed[codes[y, x], codes[y, x + 1]] for y in range(h) for x in range(w - 1)
        ) + sum(not allowed[codes[y, x], codes[y + 1, x]] for y in range(h - 1) for x in range(w))
        assert count_violations(codes, tileset) == expected


# --- solver, unguided -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("height", "width"), [(1, 1), (1, 30), (30, 1), (2, 2), (16, 16), (40, 25), (25, 40)]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unguided_solutions_have_no_violations(
    tileset: Tileset, height: int, width: int, seed: int
) -> None:
    solution = solve(tileset, height, width, seed)
    assert solution.codes.shape == (height, width)
    assert solution.codes.dtype == np.uint8
    assert int(solution.codes.max()) < 7
    assert count_violations(solution.codes, tileset) == 0


def test_unguided_solution_is_seeded(tileset: Tileset) -> None:
    first = solve(tileset, 30, 30, seed=5).codes
    again = solve(tileset, 30, 30, seed=5).codes
    other = solve(tileset, 30, 30, seed=6).codes
    assert first.tobytes() == again.tobytes()
    assert first.tobytes() != other.tobytes()


def test_unguided_solution_uses_several_terrains(tileset: Tileset) -> None:
    codes = solve(tileset, 40, 40, seed=3).codes
    assert len(np.unique(codes)) >= 3


def test_solve_rejects_an_empty_grid_and_a_misshapen_guide(tileset: Tileset) -> None:
    solver = WFCSolver(tileset, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least one cell"):
        solver.solve(0, 5)
    with pytest.raises(ValueError, match="at least one cell"):
        solver.solve(5, -1)
    with pytest.raises(ValueError, match="guide shape"):
        solver.solve(4, 5, np.zeros((5, 4), dtype=np.uint8))


def test_the_guide_sentinel_is_the_one_the_solver_skips() -> None:
    assert UNDECIDED == NO_GUIDE


def test_solver_gives_up_with_solverfailed_when_its_budget_runs_out(tileset: Tileset) -> None:
    # Every tile may touch itself, so a map of one terrain always exists and a truly
    # unsatisfiable tileset cannot be built. What can be tested honestly is the
    # give-up path: unguided 16x16 solves need a local repair (checked first),
    # and with no repair budget and no restarts the solver must refuse, not
    # return a broken map.
    seed = 0
    assert solve(tileset, 16, 16, seed).stats.repairs > 0
    strict = WFCSolver(tileset, np.random.default_rng(seed), max_repairs=0, max_restarts=0)
    with pytest.raises(SolverFailed, match="after 0 restarts"):
        strict.solve(16, 16)


def lonely_tileset() -> Tileset:
    """No pairs of different terrains at all: only one-terrain maps are valid."""
    n = 7
    return Tileset.build(
        weights=[1.0] * n, self_affinity=[1.0] * n, target_shares=[0.1] * n,
        passable=[True] * n, adjacency=(),
    )


def test_no_tileset_is_unsatisfiable_because_every_tile_touches_itself() -> None:
    # Why there is no "unsatisfiable tileset raises SolverFailed" test: even with
    # no adjacency pairs at all, build() keeps the self-pairs, so a one-terrain
    # map is always a solution.
    assert np.array_equal(lonely_tileset().adjacency_matrix(), np.eye(7, dtype=bool))


@pytest.mark.parametrize(("height", "width"), [(1, 1), (1, 5), (3, 3), (8, 8)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_self_only_tileset_gives_a_one_terrain_map(height: int, width: int, seed: int) -> None:
    tileset = lonely_tileset()
    codes = solve(tileset, height, width, seed).codes
    assert count_violations(codes, tileset) == 0
    assert len(np.unique(codes)) == 1


# --- solver, guided ---------------------------------------------------------------------


def agreeing(guide: np.ndarray, tileset: Tileset) -> np.ndarray:
    """Cells whose guide tile fits the guide tiles of all four neighbours."""
    allowed = tileset.adjacency_matrix()
    open_ = guide == UNDECIDED
    g = np.where(open_, 0, guide)
    ok = ~open_
    pair = allowed[g[:, :-1], g[:, 1:]] | open_[:, :-1] | open_[:, 1:]
    ok[:, :-1] &= pair
    ok[:, 1:] &= pair
    pair = allowed[g[:-1], g[1:]] | open_[:-1] | open_[1:]
    ok[:-1] &= pair
    ok[1:] &= pair
    return ok


def test_a_legal_guide_is_followed_exactly(tileset: Tileset) -> None:
    bands = np.array([W, C, S, G, F, H, ST], dtype=np.uint8)
    guide = np.repeat(bands, 3)[None, :].repeat(9, axis=0)  # 9 x 21 stripes
    assert count_violations(guide, tileset) == 0
    solution = solve(tileset, 9, 21, guide=guide)
    assert np.array_equal(solution.codes, guide)
    assert solution.stats.repairs == 0 and solution.stats.restarts == 0
    assert solution.stats.chosen == guide.size


def test_isolated_undecided_cells_are_filled_and_the_rest_kept(tileset: Tileset) -> None:
    reference = generate(48, 40, 11, tileset=tileset).codes  # a legal map to start from
    guide = reference.copy()
    guide[1::3, 1::3] = UNDECIDED  # no two undecided cells touch
    solution = solve(tileset, 40, 48, seed=4, guide=guide)
    decided = guide != UNDECIDED
    assert np.array_equal(solution.codes[decided], reference[decided])
    assert count_violations(solution.codes, tileset) == 0
    assert solution.stats.repairs == 0


def test_guided_solve_keeps_the_agreeing_tiles_around_an_illegal_border(
    tileset: Tileset,
) -> None:
    guide = np.full((10, 12), G, dtype=np.uint8)
    guide[:, :6] = W  # water straight against grass: illegal
    ok = agreeing(guide, tileset)
    assert not ok[:, 5:7].any() and ok[:, :5].all() and ok[:, 7:].all()
    solution = solve(tileset, 10, 12, guide=guide)
    assert count_violations(solution.codes, tileset) == 0
    assert np.array_equal(solution.codes[ok], guide[ok])
    # The only way between water and grass one cell each side: coast, then sand.
    assert (solution.codes[:, 5] == C).all()
    assert (solution.codes[:, 6] == S).all()


def test_a_lone_illegal_cell_is_replaced_and_everything_else_kept(tileset: Tileset) -> None:
    guide = np.full((9, 9), G, dtype=np.uint8)
    guide[4, 4] = W
    ok = agreeing(guide, tileset)
    assert int((~ok).sum()) == 5
    solution = solve(tileset, 9, 9, seed=2, guide=guide)
    assert count_violations(solution.codes, tileset) == 0
    assert np.array_equal(solution.codes[ok], guide[ok])
    assert solution.codes[4, 4] != W


@pytest.mark.parametrize("seed", range(6))
def test_a_random_guide_full_of_illegal_pairs_still_gives_a_valid_map(
    tileset: Tileset, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    guide = rng.integers(0, 7, size=(40, 40)).astype(np.uint8)
    assert count_violations(guide, tileset) > 500
    solution = WFCSolver(tileset, rng).solve(40, 40, guide)
    assert count_violations(solution.codes, tileset) == 0


@pytest.mark.parametrize("seed", range(4))
def test_guided_solve_of_a_sketch_keeps_the_agreeing_tiles(tileset: Tileset, seed: int) -> None:
    rng = np.random.default_rng(seed)
    guide = loosen_borders(sketch(96, 96, rng, tileset), 1)
    ok = agreeing(guide, tileset)
    assert ok.mean() > 0.8
    solution = WFCSolver(tileset, rng).solve(96, 96, guide)
    assert count_violations(solution.codes, tileset) == 0
    kept = solution.codes[ok] == guide[ok]
    if solution.stats.repairs == 0:
        assert kept.all()
    else:
        # A local repair reopens a small box and may redraw a few agreeing cells
        # right at the trouble; the rest of the map still follows the guide.
        assert kept.mean() > 0.999
