"""Vision by day and night, and the distance buckets sense_others reports."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.constants import (
    DEFAULT_VISION_RADIUS,
    HEARTH_TZ_NAME,
    MAX_PLACE_NAME_LENGTH,
    MAX_SIGN_LENGTH,
    MAX_SPEECH_LENGTH,
    SENSE_FAR_MAX,
    SENSE_NEARBY_MAX,
    distance_bucket,
    effective_vision_radius,
)


def test_default_radius_by_day_and_night() -> None:
    assert DEFAULT_VISION_RADIUS == 3
    assert effective_vision_radius(3, is_night=False) == 3
    assert effective_vision_radius(3, is_night=True) == 2


@pytest.mark.parametrize(
    ("radius", "night"),
    [(0, 0), (1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (10, 6)],
)
def test_night_radius_table(radius: int, night: int) -> None:
    assert effective_vision_radius(radius, is_night=True) == night
    assert effective_vision_radius(radius, is_night=False) == radius


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1, max_value=1000))
def test_night_never_below_one_nor_above_day(radius: int) -> None:
    night = effective_vision_radius(radius, is_night=True)
    assert 1 <= night <= radius


@pytest.mark.parametrize("night", [True, False])
@pytest.mark.parametrize("radius", [-1, -3])
def test_negative_radius_raises(radius: int, night: bool) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        effective_vision_radius(radius, is_night=night)


@pytest.mark.parametrize(
    ("distance", "bucket"),
    [
        (0, "nearby"),
        (1, "nearby"),
        (10, "nearby"),
        (11, "far"),
        (29, "far"),
        (30, "far"),
        (31, "very far"),
        (500, "very far"),
    ],
)
def test_distance_bucket_boundaries(distance: int, bucket: str) -> None:
    assert distance_bucket(distance) == bucket


def test_bucket_constants_agree_with_the_boundaries() -> None:
    assert (SENSE_NEARBY_MAX, SENSE_FAR_MAX) == (10, 30)
    assert distance_bucket(SENSE_NEARBY_MAX) == "nearby"
    assert distance_bucket(SENSE_NEARBY_MAX + 1) == "far"
    assert distance_bucket(SENSE_FAR_MAX) == "far"
    assert distance_bucket(SENSE_FAR_MAX + 1) == "very far"


def test_limits_and_timezone() -> None:
    assert MAX_SIGN_LENGTH == 500
    assert MAX_SPEECH_LENGTH == 2000
    assert MAX_PLACE_NAME_LENGTH == 60
    assert HEARTH_TZ_NAME == "America/New_York"
