"""Connected-region labelling against a plain breadth-first flood fill."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from generation.regions import label_regions, largest_region, largest_region_share


def reference_labels(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flood fill from each unlabelled True cell in row-major order (4 neighbours)."""
    height, width = mask.shape
    labels = np.zeros((height, width), dtype=np.int32)
    sizes = [0]
    for y in range(height):
        for x in range(width):
            if not mask[y, x] or labels[y, x]:
                continue
            label = len(sizes)
            labels[y, x] = label
            queue = deque([(y, x)])
            size = 0
            while queue:
                cy, cx = queue.popleft()
                size += 1
                for ny, nx in ((cy - 1, cx), (cy + 1, cx), (cy, cx - 1), (cy, cx + 1)):
                    if 0 <= ny < height and 0 <= nx < width and mask[ny, nx] and not labels[ny, nx]:
                        labels[ny, nx] = label
                        queue.append((ny, nx))
            sizes.append(size)
    return labels, np.array(sizes, dtype=np.int64)


def assert_matches_reference(mask: np.ndarray) -> None:
    labels, sizes = label_regions(mask)
    expected_labels, expected_sizes = reference_labels(mask)
    assert labels.dtype == np.int32
    assert sizes.dtype == np.int64
    assert labels.shape == mask.shape
    np.testing.assert_array_equal(labels, expected_labels)
    np.testing.assert_array_equal(sizes, expected_sizes)


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.bool_,
        st.tuples(st.integers(1, 24), st.integers(1, 24)),
        elements=st.booleans(),
    )
)
def test_matches_flood_fill_on_arbitrary_masks(mask: np.ndarray) -> None:
    assert_matches_reference(mask)


@pytest.mark.parametrize("density", [0.2, 0.45, 0.55, 0.6, 0.8])
def test_matches_flood_fill_on_seeded_random_masks(density: float) -> None:
    rng = np.random.default_rng(int(density * 100))
    for _ in range(20):
        height, width = rng.integers(1, 60, size=2)
        assert_matches_reference(rng.random((height, width)) < density)


def test_serpentine_path_is_one_region() -> None:
    # Vertical stripes joined alternately at the top and bottom: one long winding path,
    # the hardest shape for merging runs.
    mask = np.zeros((30, 41), dtype=bool)
    mask[1:-1, ::2] = True
    for i, x in enumerate(range(0, 39, 2)):
        mask[0 if i % 2 else 29, x : x + 3] = True
    labels, sizes = label_regions(mask)
    assert sizes.tolist() == [0, int(mask.sum())]
    assert_matches_reference(mask)


def test_diagonal_contact_does_not_connect() -> None:
    mask = np.array([[True, False], [False, True]])
    labels, sizes = label_regions(mask)
    assert labels.tolist() == [[1, 0], [0, 2]]
    assert sizes.tolist() == [0, 1, 1]


def test_checkerboard_is_all_single_cells() -> None:
    mask = (np.indices((7, 9)).sum(axis=0) % 2) == 0
    labels, sizes = label_regions(mask)
    assert sizes.size - 1 == int(mask.sum())
    assert (sizes[1:] == 1).all()
    assert labels[mask].tolist() == list(range(1, int(mask.sum()) + 1))


def test_runs_offset_by_one_column_connect_only_when_they_overlap() -> None:
    touching = np.array([[True, True, False, False], [False, True, True, False]])
    corner_only = np.array([[True, True, False, False], [False, False, True, True]])
    assert label_regions(touching)[1].tolist() == [0, 4]
    assert label_regions(corner_only)[1].tolist() == [0, 2, 2]


def test_u_shape_keeps_the_first_label() -> None:
    # The two arms start as separate runs and only meet in the bottom row.
    mask = np.array(
        [
            [True, False, False, True],
            [True, False, False, True],
            [True, True, True, True],
        ]
    )
    labels, sizes = label_regions(mask)
    assert np.unique(labels[mask]).tolist() == [1]
    assert sizes.tolist() == [0, 8]


def test_labels_follow_first_appearance() -> None:
    # The region whose first cell comes first in row-major order is 1, even though the
    # other region is larger and reaches further left lower down.
    mask = np.array(
        [
            [False, False, True, False],
            [True, False, False, False],
            [True, True, False, False],
        ]
    )
    labels, sizes = label_regions(mask)
    assert labels.tolist() == [[0, 0, 1, 0], [2, 0, 0, 0], [2, 2, 0, 0]]
    assert sizes.tolist() == [0, 1, 3]


def test_empty_mask() -> None:
    mask = np.zeros((4, 5), dtype=bool)
    labels, sizes = label_regions(mask)
    assert labels.shape == (4, 5)
    assert not labels.any()
    assert sizes.tolist() == [0]
    assert not largest_region(mask).any()
    assert largest_region(mask).shape == (4, 5)
    assert largest_region_share(mask) == 1.0


def test_zero_sized_mask() -> None:
    labels, sizes = label_regions(np.zeros((0, 3), dtype=bool))
    assert labels.shape == (0, 3)
    assert sizes.tolist() == [0]
    assert largest_region_share(np.zeros((3, 0), dtype=bool)) == 1.0


def test_full_mask_is_one_region() -> None:
    mask = np.ones((6, 9), dtype=bool)
    labels, sizes = label_regions(mask)
    assert (labels == 1).all()
    assert sizes.tolist() == [0, 54]
    assert largest_region(mask).all()
    assert largest_region_share(mask) == 1.0


def test_single_row() -> None:
    mask = np.array([[True, True, False, True, False, True, True, True]])
    labels, sizes = label_regions(mask)
    assert labels.tolist() == [[1, 1, 0, 2, 0, 3, 3, 3]]
    assert sizes.tolist() == [0, 2, 1, 3]


def test_single_column() -> None:
    mask = np.array([[True], [False], [True], [True], [True]])
    labels, sizes = label_regions(mask)
    assert labels.ravel().tolist() == [1, 0, 2, 2, 2]
    assert sizes.tolist() == [0, 1, 3]


def test_sizes_sum_to_the_mask_and_match_label_counts() -> None:
    mask = np.random.default_rng(7).random((120, 90)) < 0.58
    labels, sizes = label_regions(mask)
    assert int(sizes.sum()) == int(mask.sum())
    np.testing.assert_array_equal(np.bincount(labels.ravel(), minlength=sizes.size)[1:], sizes[1:])


def test_largest_region_and_share() -> None:
    mask = np.array(
        [
            [True, True, False, True],
            [True, False, False, False],
        ]
    )
    largest = largest_region(mask)
    assert largest.tolist() == [[True, True, False, False], [True, False, False, False]]
    assert largest_region_share(mask) == 0.75


def test_largest_region_tie_takes_the_first() -> None:
    mask = np.array([[True, False, True]])
    assert largest_region(mask).tolist() == [[True, False, False]]
    assert largest_region_share(mask) == 0.5


def test_rejects_non_boolean_masks() -> None:
    with pytest.raises(ValueError, match="boolean"):
        label_regions(np.ones((3, 3), dtype=np.uint8))


def test_rejects_masks_that_are_not_two_dimensional() -> None:
    with pytest.raises(ValueError, match="2-D"):
        label_regions(np.ones(5, dtype=bool))
