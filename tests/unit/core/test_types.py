"""Positions, directions, rectangles and agent names: the vocabulary of the grid."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.types import CARDINALS, Direction, Position, Rect, agent_name

EXPECTED_DELTAS = {
    Direction.NORTH: (0, -1),
    Direction.SOUTH: (0, 1),
    Direction.EAST: (1, 0),
    Direction.WEST: (-1, 0),
    Direction.DOWN: (0, 0),
}
EXPECTED_OPPOSITES = {
    Direction.NORTH: Direction.SOUTH,
    Direction.SOUTH: Direction.NORTH,
    Direction.EAST: Direction.WEST,
    Direction.WEST: Direction.EAST,
    Direction.DOWN: Direction.DOWN,
}

coords = st.integers(min_value=-1000, max_value=1000)
positions = st.builds(Position, coords, coords)
directions = st.sampled_from(list(Direction))
cardinals = st.sampled_from(CARDINALS)


# --- Direction ----------------------------------------------------------------


def test_every_direction_has_an_expected_delta_and_opposite() -> None:
    assert set(EXPECTED_DELTAS) == set(Direction)
    for d in Direction:
        assert d.delta == EXPECTED_DELTAS[d], d
        assert d.opposite is EXPECTED_OPPOSITES[d], d


@pytest.mark.parametrize("direction", list(Direction))
def test_step_moves_by_the_delta(direction: Direction) -> None:
    start = Position(5, 7)
    dx, dy = EXPECTED_DELTAS[direction]
    assert start.step(direction) == Position(5 + dx, 7 + dy)


def test_screen_coordinates_north_is_up() -> None:
    origin = Position(0, 0)
    assert origin.step(Direction.NORTH) == Position(0, -1)
    assert origin.step(Direction.SOUTH) == Position(0, 1)
    assert origin.step(Direction.EAST) == Position(1, 0)
    assert origin.step(Direction.WEST) == Position(-1, 0)
    assert origin.step(Direction.DOWN) == origin


def test_opposite_is_an_involution() -> None:
    for d in Direction:
        assert d.opposite.opposite is d


def test_opposite_deltas_cancel() -> None:
    for d in Direction:
        (ax, ay), (bx, by) = d.delta, d.opposite.delta
        assert (ax + bx, ay + by) == (0, 0)


def test_is_cardinal_only_false_for_down() -> None:
    assert [d for d in Direction if not d.is_cardinal] == [Direction.DOWN]
    assert set(CARDINALS) == set(Direction) - {Direction.DOWN}
    assert len(CARDINALS) == 4


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("north", Direction.NORTH),
        ("North", Direction.NORTH),
        ("NORTH", Direction.NORTH),
        ("  south ", Direction.SOUTH),
        ("EaSt", Direction.EAST),
        ("west\n", Direction.WEST),
        ("Down", Direction.DOWN),
        (Direction.EAST, Direction.EAST),
    ],
)
def test_parse_is_case_and_space_insensitive(raw: str, expected: Direction) -> None:
    assert Direction.parse(raw) is expected


@pytest.mark.parametrize("raw", ["up", "", "n", "northeast", "nord", "Direction.NORTH"])
def test_parse_rejects_unknown_names_listing_options(raw: str) -> None:
    with pytest.raises(ValueError) as info:
        Direction.parse(raw)
    message = str(info.value)
    assert repr(raw) in message
    for d in Direction:
        assert d.value in message
    assert "north, south, east, west, down" in message


def test_parse_error_is_not_chained() -> None:
    with pytest.raises(ValueError) as info:
        Direction.parse("sideways")
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__ is True


# --- Position -----------------------------------------------------------------


def test_offset() -> None:
    assert Position(2, 3).offset(-5, 4) == Position(-3, 7)
    assert Position(2, 3).offset(0, 0) == Position(2, 3)


def test_manhattan_and_chebyshev() -> None:
    a, b = Position(1, 2), Position(4, -2)
    assert a.manhattan(b) == 3 + 4
    assert a.chebyshev(b) == 4
    assert a.manhattan(a) == 0
    assert a.chebyshev(a) == 0
    assert Position(0, 0).chebyshev(Position(-3, 3)) == 3
    assert Position(0, 0).manhattan(Position(-3, 3)) == 6


def test_neighbors_are_the_four_cardinal_steps() -> None:
    p = Position(10, 10)
    assert p.neighbors() == (
        Position(10, 9),
        Position(11, 10),
        Position(10, 11),
        Position(9, 10),
    )
    assert all(p.manhattan(n) == 1 for n in p.neighbors())


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (Position(0, 0), Direction.DOWN),
        (Position(0, -5), Direction.NORTH),
        (Position(0, 5), Direction.SOUTH),
        (Position(5, 0), Direction.EAST),
        (Position(-5, 0), Direction.WEST),
        (Position(3, -1), Direction.EAST),
        (Position(-3, 2), Direction.WEST),
        (Position(1, -3), Direction.NORTH),
        (Position(-1, 3), Direction.SOUTH),
        # A tie on both axes goes to the horizontal direction.
        (Position(2, 2), Direction.EAST),
        (Position(-2, -2), Direction.WEST),
        (Position(2, -2), Direction.EAST),
    ],
)
def test_direction_to(target: Position, expected: Direction) -> None:
    assert Position(0, 0).direction_to(target) is expected


def test_position_is_frozen_and_ordered() -> None:
    p = Position(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5  # type: ignore[misc]
    assert sorted([Position(2, 0), Position(1, 5), Position(1, 2)]) == [
        Position(1, 2),
        Position(1, 5),
        Position(2, 0),
    ]
    assert len({Position(1, 2), Position(1, 2), Position(2, 1)}) == 2


@settings(max_examples=60, deadline=None)
@given(positions, directions)
def test_step_then_opposite_returns_to_start(p: Position, d: Direction) -> None:
    assert p.step(d).step(d.opposite) == p


@settings(max_examples=60, deadline=None)
@given(positions, cardinals)
def test_a_cardinal_step_is_one_away_in_that_direction(p: Position, d: Direction) -> None:
    q = p.step(d)
    assert p.manhattan(q) == 1
    assert p.chebyshev(q) == 1
    assert p.direction_to(q) is d
    assert q.direction_to(p) is d.opposite


@settings(max_examples=60, deadline=None)
@given(positions, positions)
def test_distance_relations(a: Position, b: Position) -> None:
    assert a.manhattan(b) == b.manhattan(a) >= 0
    assert a.chebyshev(b) == b.chebyshev(a) >= 0
    assert a.chebyshev(b) <= a.manhattan(b) <= 2 * a.chebyshev(b)
    assert (a.manhattan(b) == 0) == (a == b)


@settings(max_examples=60, deadline=None)
@given(positions, positions)
def test_direction_to_moves_closer(a: Position, b: Position) -> None:
    d = a.direction_to(b)
    if a == b:
        assert d is Direction.DOWN
    else:
        assert d.is_cardinal
        assert a.step(d).manhattan(b) == a.manhattan(b) - 1


# --- Rect -----------------------------------------------------------------------


def test_rect_edges_and_area() -> None:
    r = Rect(2, 3, 4, 5)
    assert (r.right, r.bottom, r.area) == (6, 8, 20)


def test_rect_rejects_negative_size() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        Rect(0, 0, -1, 3)
    with pytest.raises(ValueError, match="non-negative"):
        Rect(0, 0, 3, -1)
    assert Rect(0, 0, 0, 0).area == 0


def test_rect_around() -> None:
    r = Rect.around(Position(10, 20), 3)
    assert r == Rect(7, 17, 7, 7)
    assert r.contains(Position(10, 20))
    assert r.contains(Position(7, 17))
    assert r.contains(Position(13, 23))
    assert not r.contains(Position(14, 20))
    assert not r.contains(Position(10, 16))
    assert Rect.around(Position(4, 4), 0) == Rect(4, 4, 1, 1)
    with pytest.raises(ValueError, match="radius"):
        Rect.around(Position(0, 0), -1)


def test_rect_contains_is_half_open() -> None:
    r = Rect(0, 0, 3, 2)
    inside = {Position(x, y) for x in range(3) for y in range(2)}
    for x in range(-2, 6):
        for y in range(-2, 5):
            assert r.contains(Position(x, y)) == (Position(x, y) in inside)
    assert not Rect(5, 5, 0, 4).contains(Position(5, 5))


def test_rect_intersection() -> None:
    a = Rect(0, 0, 5, 5)
    assert a.intersection(Rect(3, 2, 10, 10)) == Rect(3, 2, 2, 3)
    assert a.intersection(Rect(1, 1, 2, 2)) == Rect(1, 1, 2, 2)
    assert a.intersection(a) == a
    # Touching edges share no cells.
    assert a.intersection(Rect(5, 0, 3, 3)) is None
    assert a.intersection(Rect(0, 5, 3, 3)) is None
    assert a.intersection(Rect(-4, -4, 2, 2)) is None
    assert Rect(3, 2, 10, 10).intersection(a) == a.intersection(Rect(3, 2, 10, 10))


def test_rect_clamp() -> None:
    r = Rect(2, 2, 3, 3)
    assert r.clamp(Position(0, 0)) == Position(2, 2)
    assert r.clamp(Position(10, 10)) == Position(4, 4)
    assert r.clamp(Position(3, 100)) == Position(3, 4)
    assert r.clamp(Position(-9, 3)) == Position(2, 3)
    assert r.clamp(Position(3, 3)) == Position(3, 3)
    with pytest.raises(ValueError, match="empty"):
        Rect(0, 0, 0, 5).clamp(Position(0, 0))


def test_rect_positions_row_by_row() -> None:
    assert list(Rect(1, 1, 2, 2).positions()) == [
        Position(1, 1),
        Position(2, 1),
        Position(1, 2),
        Position(2, 2),
    ]
    assert list(Rect(0, 0, 0, 3).positions()) == []


rects = st.builds(
    Rect,
    st.integers(-50, 50),
    st.integers(-50, 50),
    st.integers(0, 12),
    st.integers(0, 12),
)
nonempty_rects = st.builds(
    Rect,
    st.integers(-50, 50),
    st.integers(-50, 50),
    st.integers(1, 12),
    st.integers(1, 12),
)


@settings(max_examples=60, deadline=None)
@given(nonempty_rects, positions)
def test_clamp_always_lands_inside(r: Rect, p: Position) -> None:
    c = r.clamp(p)
    assert r.contains(c)
    assert r.clamp(c) == c
    if r.contains(p):
        assert c == p
    # Nothing inside the rectangle is closer to p than the clamped point.
    assert all(p.manhattan(c) <= p.manhattan(q) for q in r.positions())


@settings(max_examples=60, deadline=None)
@given(rects)
def test_positions_count_equals_area_and_all_inside(r: Rect) -> None:
    ps = list(r.positions())
    assert len(ps) == r.area
    assert len(set(ps)) == r.area
    assert all(r.contains(p) for p in ps)


@settings(max_examples=60, deadline=None)
@given(rects, rects)
def test_intersection_holds_exactly_the_shared_cells(a: Rect, b: Rect) -> None:
    shared = set(a.positions()) & set(b.positions())
    inter = a.intersection(b)
    if inter is None:
        assert shared == set()
    else:
        assert set(inter.positions()) == shared
        assert inter.area > 0


@settings(max_examples=40, deadline=None)
@given(positions, st.integers(0, 6))
def test_around_covers_the_chebyshev_ball(center: Position, radius: int) -> None:
    r = Rect.around(center, radius)
    assert r.area == (2 * radius + 1) ** 2
    assert all(center.chebyshev(p) <= radius for p in r.positions())


# --- agent names ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw", ["A", "Ember", "ember", "River-Stone", "x_1", "a" * 32, "Z9-_", "Ab" + "c" * 30]
)
def test_agent_name_accepts(raw: str) -> None:
    assert agent_name(raw) == raw


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "1abc",
        "_abc",
        "-abc",
        "has space",
        "a" * 33,
        "dot.name",
        "slash/name",
        "../etc",
        "émile",
        " Ember",
        "Ember ",
    ],
)
def test_agent_name_rejects(raw: str) -> None:
    with pytest.raises(ValueError, match="invalid agent name"):
        agent_name(raw)


@pytest.mark.parametrize("raw", [None, 5, b"Ember"])
def test_agent_name_rejects_non_strings(raw: object) -> None:
    with pytest.raises(ValueError, match="invalid agent name"):
        agent_name(raw)  # type: ignore[arg-type]


@pytest.mark.parametrize("raw", ["Ember\n", "Ember\r\n", "\nEmber", "Em\nber"])
def test_agent_name_rejects_newlines(raw: str) -> None:
    """Names become folder names: '$' alone would let a trailing newline through."""
    with pytest.raises(ValueError, match="invalid agent name"):
        agent_name(raw)


def test_directions_format_as_their_value() -> None:
    for d in Direction:
        assert str(d) == d.value
        assert f"{d}" == d.value
        assert d == d.value
