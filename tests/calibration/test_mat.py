"""The mat outline search's building blocks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from calibration.mat import _quads_in_view


def _quads_one_at_a_time(
    pairs: list[tuple[int, int, float]], crossing: np.ndarray, size_wh: tuple[int, int]
) -> tuple[list[tuple[int, int, int, int]], list[np.ndarray]]:
    """The filter as the search wrote it before it was vectorised: the reference."""
    w, h = size_wh
    kept, corners = [], []
    for (i, j, ta), (k, m, tb) in itertools.combinations(pairs, 2):
        if len({i, j, k, m}) < 4:
            continue
        if abs((ta - tb + np.pi / 2) % np.pi - np.pi / 2) < np.deg2rad(25):
            continue
        quad = crossing[[i, k, j, m], [k, j, m, i]]
        if not np.all(np.isfinite(quad)):
            continue
        if np.any(quad < -1.5) or np.any(quad[:, 0] > w + 0.5) or np.any(quad[:, 1] > h + 0.5):
            continue
        kept.append((i, j, k, m))
        corners.append(quad)
    return kept, corners


@pytest.mark.parametrize("seed", [0, 1, 2])  # three random sets of lines and corners
def test_vectorised_quad_filter_keeps_what_the_loop_keeps_in_its_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_lines, size_wh = 14, (640, 480)
    # Corners scattered over and beyond the picture, some missing (parallel lines).
    crossing = rng.uniform(-100.0, 740.0, size=(n_lines, n_lines, 2))
    crossing[rng.random((n_lines, n_lines)) < 0.1] = np.nan
    pairs = [
        (i, j, float(rng.uniform(-np.pi / 2, np.pi / 2)))
        for i, j in itertools.combinations(range(n_lines), 2)
        if rng.random() < 0.5
    ]
    expected, expected_corners = _quads_one_at_a_time(pairs, crossing, size_wh)
    lines, corners = _quads_in_view(pairs, crossing, size_wh)
    assert len(expected) > 0
    assert [tuple(row) for row in lines.tolist()] == expected
    np.testing.assert_array_equal(corners, np.array(expected_corners))


def test_fewer_than_two_pairs_make_no_quad() -> None:
    crossing = np.zeros((2, 2, 2))
    lines, corners = _quads_in_view([(0, 1, 0.0)], crossing, (640, 480))
    assert lines.shape == (0, 4)
    assert corners.shape == (0, 4, 2)
