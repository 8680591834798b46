"""Structures: enclosed areas with bounds and membership."""

from __future__ import annotations

import dataclasses

import pytest

from core.structures import Structure
from core.types import AgentName, Position, Rect

EMBER = AgentName("Ember")


def test_bounds_size_contains() -> None:
    interior = {Position(2, 3), Position(3, 3), Position(4, 5)}
    s = Structure("st1", interior, EMBER, 10)  # type: ignore[arg-type]
    assert isinstance(s.interior, frozenset)
    assert s.bounds == Rect(2, 3, 3, 3)
    assert s.size == 3
    for p in interior:
        assert s.contains(p)
    # Inside the bounds but not enclosed.
    assert not s.contains(Position(3, 4))
    assert not s.contains(Position(0, 0))
    assert (s.name, s.is_private) == (None, False)


def test_single_cell_structure() -> None:
    s = Structure("st1", frozenset({Position(7, 7)}), None, 0, name="Hut", is_private=True)
    assert s.bounds == Rect(7, 7, 1, 1)
    assert s.size == 1
    assert s.name == "Hut" and s.is_private


def test_bounds_enclose_every_interior_cell() -> None:
    interior = frozenset(Rect(1, 1, 3, 2).positions())
    s = Structure("st1", interior, EMBER, 0)
    assert s.bounds == Rect(1, 1, 3, 2)
    assert s.size == 6
    assert all(s.bounds.contains(p) for p in s.interior)


def test_validation() -> None:
    with pytest.raises(ValueError, match="at least one cell"):
        Structure("st1", frozenset(), EMBER, 0)
    with pytest.raises(ValueError, match="at least one cell"):
        Structure("st1", [], EMBER, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs an id"):
        Structure("", frozenset({Position(0, 0)}), EMBER, 0)


def test_duplicates_collapse() -> None:
    s = Structure("st1", [Position(0, 0), Position(0, 0)], EMBER, 0)  # type: ignore[arg-type]
    assert s.size == 1


def test_structure_is_frozen() -> None:
    s = Structure("st1", frozenset({Position(0, 0)}), EMBER, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.is_private = True  # type: ignore[misc]
