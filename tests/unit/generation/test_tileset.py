"""The tileset: who may touch whom, and the weights and shares taken from terrain.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from types import SimpleNamespace

import numpy as np
import pytest

from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain
from generation.tileset import ADJACENCY, TerrainTraits, Tileset

W, C, S, G, F, H, ST = (
    Terrain.WATER,
    Terrain.COAST,
    Terrain.SAND,
    Terrain.GRASS,
    Terrain.FOREST,
    Terrain.HILL,
    Terrain.STONE,
)

# The reference design's graph, written out by hand rather than read from ADJACENCY.
REFERENCE_PAIRS = {
    frozenset(p) for p in ((W, C), (C, S), (S, G), (G, F), (G, H), (F, H), (H, ST))
}


def reference_allowed(a: Terrain, b: Terrain) -> bool:
    return a == b or frozenset((a, b)) in REFERENCE_PAIRS


def build_kwargs(n: int = len(TERRAIN_ORDER)) -> dict[str, list]:
    return {
        "weights": [1.0] * n,
        "self_affinity": [1.0] * n,
        "target_shares": [0.1] * n,
        "passable": [True] * n,
    }


def test_the_tileset_has_the_seven_terrains_in_code_order(tileset: Tileset) -> None:
    assert tileset.terrains == TERRAIN_ORDER
    assert tileset.size == 7
    assert tileset.all_mask == 0b1111111
    for terrain in Terrain:
        assert tileset.code(terrain) == TERRAIN_CODE[terrain]


def test_adjacency_matrix_is_symmetric(tileset: Tileset) -> None:
    matrix = tileset.adjacency_matrix()
    assert matrix.shape == (7, 7)
    assert matrix.dtype == bool
    assert np.array_equal(matrix, matrix.T)


def test_adjacency_is_exactly_the_reference_pairs_and_self_pairs(tileset: Tileset) -> None:
    matrix = tileset.adjacency_matrix()
    for a, b in product(Terrain, Terrain):
        expected = reference_allowed(a, b)
        assert tileset.allowed(a, b) is expected, (a, b)
        assert bool(matrix[TERRAIN_CODE[a], TERRAIN_CODE[b]]) is expected, (a, b)
    # 7 self-pairs + 7 pairs each way.
    assert int(matrix.sum()) == 7 + 2 * 7


def test_the_module_adjacency_lists_the_reference_pairs() -> None:
    assert {frozenset(p) for p in ADJACENCY} == REFERENCE_PAIRS
    assert len(ADJACENCY) == len(REFERENCE_PAIRS)


@pytest.mark.parametrize(
    ("a", "b"),
    [(W, G), (C, G), (S, F), (ST, G), (W, S), (W, ST), (C, H), (S, ST), (F, ST), (S, H)],
)
def test_forbidden_pairs_are_forbidden_both_ways(tileset: Tileset, a: Terrain, b: Terrain) -> None:
    assert not tileset.allowed(a, b)
    assert not tileset.allowed(b, a)


@pytest.mark.parametrize("terrain", list(Terrain))
def test_every_terrain_may_touch_itself(tileset: Tileset, terrain: Terrain) -> None:
    assert tileset.allowed(terrain, terrain)


def test_compatible_masks_are_bitmasks_of_the_allowed_neighbours(tileset: Tileset) -> None:
    assert tileset.compatible.dtype == np.uint8
    for a in Terrain:
        expected = sum(1 << TERRAIN_CODE[b] for b in Terrain if reference_allowed(a, b))
        assert int(tileset.compatible[TERRAIN_CODE[a]]) == expected, a


def test_weights_affinity_shares_and_passability_come_from_the_config(
    tileset: Tileset, terrain_traits: Mapping[Terrain, TerrainTraits]
) -> None:
    for terrain in Terrain:
        spec = terrain_traits[terrain]
        code = TERRAIN_CODE[terrain]
        assert tileset.weights[code] == spec.weight
        assert tileset.self_affinity[code] == spec.self_affinity
        assert tileset.target_shares[code] == spec.target_share
        assert bool(tileset.passable[code]) is spec.passable
    # A few values the shipped terrain.yaml is known to hold, so a mix-up of
    # fields (weight read as share, say) cannot pass by symmetry.
    assert tileset.weights[TERRAIN_CODE[G]] == 4.0
    assert tileset.self_affinity[TERRAIN_CODE[W]] == 3.0
    assert tileset.target_shares[TERRAIN_CODE[F]] == 0.25
    assert not tileset.passable[TERRAIN_CODE[W]]


def test_from_traits_takes_whatever_the_traits_say() -> None:
    traits = {
        t: SimpleNamespace(
            passable=i % 2 == 0, weight=float(i + 1), self_affinity=1.0 + i / 10,
            target_share=(i + 1) / 28,
        )
        for i, t in enumerate(TERRAIN_ORDER)
    }
    tileset = Tileset.from_traits(traits)
    assert tileset.weights.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert tileset.self_affinity.tolist() == pytest.approx([1.0 + i / 10 for i in range(7)])
    assert tileset.target_shares.tolist() == pytest.approx([(i + 1) / 28 for i in range(7)])
    assert tileset.passable.tolist() == [True, False, True, False, True, False, True]


def test_tileset_arrays_are_read_only(tileset: Tileset) -> None:
    for array in (tileset.compatible, tileset.weights, tileset.self_affinity,
                  tileset.target_shares, tileset.passable):
        with pytest.raises(ValueError):
            array[0] = array[1]


@pytest.mark.parametrize("field", ["weights", "self_affinity", "target_shares", "passable"])
@pytest.mark.parametrize("length", [0, 6, 8])
def test_build_rejects_a_wrong_number_of_values(field: str, length: int) -> None:
    kwargs = build_kwargs()
    kwargs[field] = build_kwargs(length)[field]
    with pytest.raises(ValueError, match=field) as err:
        Tileset.build(**kwargs)
    assert "7 values" in str(err.value)


def test_build_rejects_a_table_instead_of_a_list() -> None:
    kwargs = build_kwargs()
    kwargs["weights"] = [[1.0] * 7]
    with pytest.raises(ValueError, match="weights"):
        Tileset.build(**kwargs)


def test_build_with_another_adjacency_uses_it_and_keeps_self_pairs() -> None:
    tileset = Tileset.build(**build_kwargs(), adjacency=((W, ST),))
    matrix = tileset.adjacency_matrix()
    expected = np.eye(7, dtype=bool)
    expected[TERRAIN_CODE[W], TERRAIN_CODE[ST]] = True
    expected[TERRAIN_CODE[ST], TERRAIN_CODE[W]] = True
    assert np.array_equal(matrix, expected)


@pytest.mark.parametrize("missing", [Terrain.STONE, Terrain.WATER, Terrain.GRASS])
def test_from_traits_rejects_a_missing_terrain(
    terrain_traits: Mapping[Terrain, TerrainTraits], missing: Terrain
) -> None:
    partial = {t: spec for t, spec in terrain_traits.items() if t is not missing}
    with pytest.raises(ValueError, match=f"no traits for terrain {missing.value}"):
        Tileset.from_traits(partial)


def test_from_traits_names_every_missing_terrain(
    terrain_traits: Mapping[Terrain, TerrainTraits],
) -> None:
    partial = {t: spec for t, spec in terrain_traits.items() if t not in (S, H)}
    with pytest.raises(ValueError) as err:
        Tileset.from_traits(partial)
    assert "sand" in str(err.value) and "hill" in str(err.value)
    assert "water" not in str(err.value)
