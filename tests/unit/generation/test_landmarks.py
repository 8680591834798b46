"""Placing landmarks on hand-built terrain maps: every rule, and the shipped file."""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest

import generation.landmarks as landmarks_module
from config import CONFIG_DIR, LandmarkSpec, load_landmarks
from core.landmarks import Landmark
from core.terrain import TERRAIN_CODE, Terrain
from core.types import Position
from generation.landmarks import LandmarkRule, landmark_rules, place_landmarks

WATER, COAST, SAND, GRASS, FOREST, HILL, STONE = (TERRAIN_CODE[t] for t in Terrain)
SHIPPED = load_landmarks(CONFIG_DIR / "landmarks.yaml")


@pytest.fixture(params=["sampled", "exact"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test both ways: random sampling first (the usual path), or the exact
    whole-map candidate mask straight away (the path for rare terrain)."""
    if request.param == "exact":
        monkeypatch.setattr(landmarks_module, "_SAMPLE_BATCHES", ())
    return request.param


def rule(
    kind: str = "spot",
    terrains: Iterable[Terrain] = (Terrain.GRASS,),
    near: Iterable[Terrain] = (),
    count: int = 1,
    name: str | None = None,
) -> LandmarkRule:
    return LandmarkRule(kind, name or f"the {kind}", f"A {kind}.", tuple(terrains), tuple(near),
                        count)


def grid(rows: list[str]) -> np.ndarray:
    """A map drawn with the terrain.yaml ascii symbols, one string per row."""
    symbols = {"=": WATER, "~": COAST, ":": SAND, ".": GRASS, "T": FOREST, "^": HILL,
               "#": STONE}
    return np.array([[symbols[c] for c in row] for row in rows], dtype=np.uint8)


def positions(placed: list[Landmark]) -> list[tuple[int, int]]:
    return [(lm.position.x, lm.position.y) for lm in placed]


def spots(terrain: np.ndarray, rules: list[LandmarkRule], seeds: Iterable[int],
          **kwargs: object) -> set[tuple[int, int]]:
    """Every cell used over many seeds."""
    return {
        xy
        for seed in seeds
        for xy in positions(place_landmarks(terrain, rules, np.random.default_rng(seed),
                                            **kwargs))  # type: ignore[arg-type]
    }


def neighbours(terrain: np.ndarray, x: int, y: int) -> set[int]:
    height, width = terrain.shape
    return {
        int(terrain[y + dy, x + dx])
        for dy, dx in itertools.product((-1, 0, 1), repeat=2)
        if (dy, dx) != (0, 0) and 0 <= y + dy < height and 0 <= x + dx < width
    }


def manhattan(a: tuple[int, int], b: tuple[int, int]) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


# --------------------------------------------------------------------------- terrain rules


def test_landmarks_stand_only_on_their_terrains(search: str) -> None:
    terrain = np.full((30, 40), GRASS, dtype=np.uint8)
    terrain[5:9, 10:14] = FOREST
    terrain[20:22, 30:33] = STONE
    rules = [rule("tree", [Terrain.FOREST], count=5), rule("rock", [Terrain.STONE], count=2)]
    placed = place_landmarks(terrain, rules, np.random.default_rng(1), min_distance=1)
    assert [lm.kind for lm in placed] == ["tree"] * 5 + ["rock"] * 2
    for lm in placed:
        code = terrain[lm.position.y, lm.position.x]
        assert code == (FOREST if lm.kind == "tree" else STONE)
    used = spots(terrain, rules, range(40), min_distance=1)
    forest = {(x, y) for y in range(5, 9) for x in range(10, 14)}
    stone = {(x, y) for y in range(20, 22) for x in range(30, 33)}
    assert used == forest | stone, "every fitting cell can be chosen, and nothing else"


def test_near_means_one_of_the_eight_neighbours(search: str) -> None:
    terrain = grid([
        "......:....",
        ".~.........",
        "........:..",
        ":~.........",
        ".....:~:...",
        "...........",
    ])
    # Sand at (6, 0) and (8, 2) has no coast around it; the other three do.
    rules = [rule("shore", [Terrain.SAND], [Terrain.COAST])]
    assert spots(terrain, rules, range(60)) == {(0, 3), (5, 4), (7, 4)}


def test_a_diagonal_neighbour_counts_and_the_cell_itself_does_not(search: str) -> None:
    terrain = grid([
        "^....",
        ".....",
        "..^..",
        "...#.",
        ".....",
        "^^...",
    ])
    # hill at (2,2) touches stone (3,3) diagonally; (0,0) touches nothing.
    assert spots(terrain, [rule("cave", [Terrain.HILL], [Terrain.STONE])], range(30)) == {(2, 2)}
    # A lone hill is not "near hill": only the pair at the bottom qualifies.
    assert spots(terrain, [rule("top", [Terrain.HILL], [Terrain.HILL])], range(30)) == {
        (0, 5), (1, 5)
    }


def test_any_listed_terrain_or_neighbour_will_do(search: str) -> None:
    terrain = grid([
        ":=......T.",
        "..........",
        "......~...",
        ".....T....",
    ])
    spring = rule("spring", [Terrain.SAND, Terrain.FOREST], [Terrain.WATER, Terrain.COAST])
    assert spots(terrain, [spring], range(60)) == {(0, 0), (5, 3)}


def test_neighbours_at_the_map_edge(search: str) -> None:
    terrain = grid(["~:", ":."])
    placed = spots(terrain, [rule("x", [Terrain.SAND], [Terrain.COAST], count=2)], range(5))
    assert placed == {(1, 0), (0, 1)}
    line = grid([":~:"])
    assert spots(line, [rule("y", [Terrain.SAND], [Terrain.COAST], count=2)], range(5)) == {
        (0, 0), (2, 0)
    }


# --------------------------------------------------------------------------- reachable, avoid


def test_reachable_is_honoured(search: str) -> None:
    terrain = np.full((40, 40), GRASS, dtype=np.uint8)
    reachable = np.zeros_like(terrain, dtype=bool)
    reachable[30:35, 2:6] = True
    rules = [rule("a", count=4), rule("b", count=4)]
    placed = place_landmarks(terrain, rules, np.random.default_rng(3), reachable=reachable)
    assert len(placed) == 8
    assert all(reachable[lm.position.y, lm.position.x] for lm in placed)
    assert len(set(positions(placed))) == 8


def test_reachable_may_be_any_truthy_array(search: str) -> None:
    terrain = np.full((5, 5), GRASS, dtype=np.uint8)
    reachable = np.zeros((5, 5), dtype=np.uint8)
    reachable[4, 4] = 7
    placed = place_landmarks(terrain, [rule()], np.random.default_rng(0), reachable=reachable)
    assert positions(placed) == [(4, 4)]


def test_avoid_is_honoured(search: str) -> None:
    terrain = grid(["....T..T...."])
    avoid = [Position(4, 0), Position(50, 50), Position(-1, 0)]  # off-map cells are ignored
    placed = spots(terrain, [rule("tree", [Terrain.FOREST])], range(20), avoid=avoid)
    assert placed == {(7, 0)}


def test_avoid_and_reachable_together(search: str) -> None:
    terrain = np.full((10, 10), GRASS, dtype=np.uint8)
    reachable = np.zeros((10, 10), dtype=bool)
    reachable[2, 2:5] = True
    avoid = [Position(2, 2), Position(4, 2)]
    placed = spots(terrain, [rule()], range(20), reachable=reachable, avoid=avoid)
    assert placed == {(3, 2)}


# --------------------------------------------------------------------------- spacing


def test_spacing_is_kept_when_there_is_room(search: str) -> None:
    terrain = np.full((120, 120), GRASS, dtype=np.uint8)
    rules = [rule("a", count=5), rule("b", count=5)]
    for seed in range(5):
        xy = positions(place_landmarks(terrain, rules, np.random.default_rng(seed),
                                       min_distance=20))
        assert len(xy) == 10
        assert min(manhattan(a, b) for a, b in itertools.combinations(xy, 2)) >= 20


def test_spacing_counts_across_kinds(search: str) -> None:
    terrain = grid(["::::::::::::::::::::::::::::::TTTTTTTTTTTTTTTTTTTTTTTTTTTTTT"])
    rules = [rule("a", [Terrain.SAND]), rule("b", [Terrain.FOREST])]
    for seed in range(10):
        (ax, _), (bx, _) = positions(place_landmarks(terrain, rules, np.random.default_rng(seed),
                                                     min_distance=30))
        assert bx - ax >= 30


def test_spacing_is_relaxed_by_halving_when_crowded(search: str) -> None:
    terrain = np.full((1, 31), GRASS, dtype=np.uint8)
    for seed in range(20):
        first, second = positions(place_landmarks(terrain, [rule(count=2)],
                                                  np.random.default_rng(seed),
                                                  min_distance=80))
        widest = max(first[0], 30 - first[0])  # the farthest the second could be
        fitting = [d for d in (80, 40, 20, 10, 5, 2, 1) if d <= widest]
        assert manhattan(first, second) >= fitting[0]


def test_crowded_map_still_fills_every_cell_once(search: str) -> None:
    terrain = np.full((3, 3), GRASS, dtype=np.uint8)
    placed = place_landmarks(terrain, [rule(count=9)], np.random.default_rng(5))
    assert sorted(positions(placed)) == [(x, y) for x in range(3) for y in range(3)]


def test_more_landmarks_than_cells_places_what_fits(
    search: str, caplog: pytest.LogCaptureFixture
) -> None:
    terrain = grid(["..T.."])
    rules = [rule("tree", [Terrain.FOREST], count=3), rule("meadow", count=2)]
    with caplog.at_level(logging.WARNING, logger="hearth.generation"):
        placed = place_landmarks(terrain, rules, np.random.default_rng(0))
    assert [lm.kind for lm in placed] == ["tree", "meadow", "meadow"]
    assert positions(placed)[0] == (2, 0)
    [record] = caplog.records
    assert record.name == "hearth.generation"
    assert record.getMessage() == (
        "landmark 'tree' (the tree) placed 1 of 3: every fitting forest cell already holds "
        "a landmark"
    )


# --------------------------------------------------------------------------- randomness


def test_same_seed_same_landmarks_and_different_seeds_differ(search: str) -> None:
    terrain = np.full((80, 80), GRASS, dtype=np.uint8)
    terrain[::7, ::5] = FOREST
    rules = [rule("a", count=3), rule("tree", [Terrain.FOREST], [Terrain.GRASS], count=3)]
    runs = {
        seed: place_landmarks(terrain, rules, np.random.default_rng(seed)) for seed in range(6)
    }
    again = {
        seed: place_landmarks(terrain, rules, np.random.default_rng(seed)) for seed in range(6)
    }
    assert runs == again
    assert len({tuple(positions(placed)) for placed in runs.values()}) == 6


def test_choice_is_spread_over_the_candidates(search: str) -> None:
    terrain = np.full((4, 5), GRASS, dtype=np.uint8)
    counts = Counter(
        xy for seed in range(2000) for xy in spots(terrain, [rule()], [seed])
    )
    assert len(counts) == 20
    assert min(counts.values()) > 50 and max(counts.values()) < 160  # about 100 each


# --------------------------------------------------------------------------- missing terrain


def test_missing_terrain_skips_with_a_warning(
    search: str, caplog: pytest.LogCaptureFixture
) -> None:
    terrain = np.full((20, 20), GRASS, dtype=np.uint8)
    rules = [
        rule("reeds", [Terrain.COAST], [Terrain.WATER], name="the Reed Bed"),
        rule("meadow", count=2),
        rule("cave", [Terrain.HILL], [Terrain.STONE], count=2),
    ]
    with caplog.at_level(logging.WARNING, logger="hearth.generation"):
        placed = place_landmarks(terrain, rules, np.random.default_rng(0))
    assert [lm.kind for lm in placed] == ["meadow", "meadow"]
    assert [r.getMessage() for r in caplog.records] == [
        "landmark 'reeds' (the Reed Bed) left out: no coast cell next to water",
        "landmark 'cave' (the cave) left out: no hill cell next to stone",
    ]
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_unreachable_terrain_says_so(search: str, caplog: pytest.LogCaptureFixture) -> None:
    terrain = grid(["TT...", "....."])
    reachable = terrain == GRASS
    with caplog.at_level(logging.WARNING, logger="hearth.generation"):
        placed = place_landmarks(terrain, [rule("tree", [Terrain.FOREST, Terrain.HILL])],
                                 np.random.default_rng(0), reachable=reachable)
    assert placed == []
    assert [r.getMessage() for r in caplog.records] == [
        "landmark 'tree' (the tree) left out: no reachable forest or hill cell"
    ]


def test_count_zero_places_nothing_quietly(caplog: pytest.LogCaptureFixture) -> None:
    terrain = np.full((5, 5), GRASS, dtype=np.uint8)
    with caplog.at_level(logging.DEBUG, logger="hearth.generation"):
        placed = place_landmarks(terrain, [rule(count=0)], np.random.default_rng(0))
    assert placed == [] and caplog.records == []


# --------------------------------------------------------------------------- names


def test_copies_are_numbered_only_when_needed(search: str) -> None:
    terrain = np.full((50, 50), FOREST, dtype=np.uint8)
    rules = [
        rule("old_tree", [Terrain.FOREST], count=3, name="the Old Tree"),
        rule("spring", [Terrain.FOREST], name="the Spring"),
        rule("well", [Terrain.FOREST], name="THE SPRING"),
    ]
    placed = place_landmarks(terrain, rules, np.random.default_rng(0))
    assert [lm.name for lm in placed] == [
        "the Old Tree", "the Old Tree (2)", "the Old Tree (3)", "the Spring", "THE SPRING (2)"
    ]
    assert all(lm.description == f"A {lm.kind}." for lm in placed)


def test_a_lone_copy_keeps_the_plain_name() -> None:
    terrain = grid(["T.T"])
    placed = place_landmarks(
        terrain, [rule("tree", [Terrain.FOREST], count=2, name="the Tree")],
        np.random.default_rng(0), avoid=[Position(0, 0)],
    )
    assert [lm.name for lm in placed] == ["the Tree"]


# --------------------------------------------------------------------------- inputs


def test_every_form_of_specs_gives_the_same_landmarks() -> None:
    terrain = np.full((60, 60), GRASS, dtype=np.uint8)
    terrain[20:40, 20:40] = HILL
    terrain[28:32, 28:32] = STONE
    spec = LandmarkSpec(name="the Cave", description="Dark.", terrains=[Terrain.HILL],
                        near=[Terrain.STONE], count=2)
    meadow = LandmarkSpec(name="the Meadow", description="Green.", terrains=[Terrain.GRASS])
    forms = [
        {"cave": spec, "meadow": meadow},
        [("cave", spec), ("meadow", meadow)],
        [LandmarkRule("cave", "the Cave", "Dark.", (Terrain.HILL,), (Terrain.STONE,), 2),
         LandmarkRule("meadow", "the Meadow", "Green.", ("grass",))],  # type: ignore[arg-type]
    ]
    results = [place_landmarks(terrain, form, np.random.default_rng(9)) for form in forms]
    assert results[0] == results[1] == results[2]
    assert [lm.kind for lm in results[0]] == ["cave", "cave", "meadow"]


def test_landmark_rules_follow_the_config_file_order() -> None:
    rules = landmark_rules(SHIPPED)
    assert [r.kind for r in rules] == list(SHIPPED.landmarks)
    spring = rules[0]
    assert spring == LandmarkRule(
        "spring", "the Spring", SHIPPED.landmarks["spring"].description,
        (Terrain.GRASS, Terrain.SAND), (Terrain.COAST,), 1,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"terrain": np.zeros((0, 5), np.uint8)}, "non-empty 2-D array"),
        ({"terrain": np.zeros(5, np.uint8)}, "non-empty 2-D array"),
        ({"terrain": np.zeros((3, 3))}, "integer terrain codes"),
        ({"terrain": np.full((3, 3), 7, np.uint8)}, "terrain codes must be 0..6, found 7"),
        ({"reachable": np.ones((2, 2), bool)}, "reachable has shape (2, 2)"),
        ({"min_distance": 0}, "min_distance must be an integer >= 1"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"terrain": np.full((3, 3), GRASS, np.uint8)} | kwargs
    terrain = args.pop("terrain")
    with pytest.raises(ValueError, match=re.escape(message)):
        place_landmarks(terrain, [rule()], np.random.default_rng(0), **args)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"terrains": ()}, "needs at least one terrain"),
        ({"terrains": ("lava",)}, "unknown terrain"),
        ({"count": -1}, "count must be an integer >= 0"),
        ({"name": " "}, "needs a kind and a name"),
    ],
)
def test_bad_rules_are_refused(fields: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"kind": "x", "name": "the X", "description": "An x.",
                               "terrains": (Terrain.GRASS,)}
    with pytest.raises(ValueError, match=message):
        LandmarkRule(**(base | fields))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the shipped file


def varied_map(height: int = 120) -> np.ndarray:
    """Bands of every terrain, so that every pair the shipped file asks about meets."""
    bands = [(WATER, 10), (COAST, 6), (SAND, 8), (GRASS, 20), (FOREST, 14), (HILL, 14),
             (STONE, 8), (HILL, 6), (GRASS, 10)]
    row = np.concatenate([np.full(width, code, dtype=np.uint8) for code, width in bands])
    return np.tile(row, (height, 1))


def assert_follows_its_rule(terrain: np.ndarray, lm: Landmark) -> None:
    spec = SHIPPED.landmarks[lm.kind]
    x, y = lm.position.x, lm.position.y
    assert terrain[y, x] in {TERRAIN_CODE[t] for t in spec.terrains}, lm
    if spec.near:
        assert neighbours(terrain, x, y) & {TERRAIN_CODE[t] for t in spec.near}, lm


def test_shipped_file_places_every_kind_on_a_varied_map(search: str) -> None:
    terrain = varied_map()
    reachable = terrain != WATER
    start = [Position(40, 60), Position(60, 60)]
    for seed in range(3):
        placed = place_landmarks(terrain, SHIPPED, np.random.default_rng(seed),
                                 reachable=reachable, avoid=start)
        expected = Counter({kind: spec.count for kind, spec in SHIPPED.landmarks.items()})
        assert Counter(lm.kind for lm in placed) == expected
        for lm in placed:
            assert_follows_its_rule(terrain, lm)
            assert reachable[lm.position.y, lm.position.x]
            assert lm.position not in start
        assert len({lm.name for lm in placed}) == len(placed)
        assert len({lm.position for lm in placed}) == len(placed)


def test_shipped_file_on_a_map_without_water(caplog: pytest.LogCaptureFixture) -> None:
    terrain = varied_map()
    terrain[terrain == WATER] = SAND  # no lake: nothing for the reeds
    with caplog.at_level(logging.WARNING, logger="hearth.generation"):
        placed = place_landmarks(terrain, SHIPPED, np.random.default_rng(0))
    kinds = {lm.kind for lm in placed}
    assert kinds == set(SHIPPED.landmarks) - {"reed_bed"}
    assert [r.getMessage() for r in caplog.records] == [
        "landmark 'reed_bed' (the Reed Bed) left out: no coast cell next to water"
    ]
    for lm in placed:
        assert_follows_its_rule(terrain, lm)
