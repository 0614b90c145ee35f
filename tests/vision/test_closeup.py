"""The close-up reader's building blocks (vision/closeup.py), against plain references."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import measure

from vision.closeup import (
    UNMIX_MAX_CONDITION,
    ImageEllipse,
    _condition_2x2,
    _distances_and_normals,
    _find_contours,
    _fit_ellipses_direct,
    _RimIndex,
    _stat_inside,
    _unmix,
    ellipse_points,
    fit_ellipse_direct,
    iso_chains,
)


def _speckled_blobs(seed: int) -> np.ndarray:
    """A share-like map: three discs of ~1 with blurred noise over them and the felt."""
    rng = np.random.default_rng(seed)
    values = np.zeros((260, 300), dtype=np.float32)
    for centre_xy, radius_px in (((80, 90), 55), ((190, 120), 40), ((150, 210), 30)):
        cv2.circle(values, centre_xy, radius_px, 1.0, -1)
    noise = cv2.GaussianBlur(rng.normal(0.0, 1.0, values.shape).astype(np.float32), (0, 0), 1.2)
    # Enough noise that both the discs and the felt break into many specks.
    return cv2.GaussianBlur(values, (0, 0), 0.8) + 0.9 * noise


@pytest.mark.parametrize(
    ("seed", "level", "min_points"),
    [
        (0, 0.5, 60),  # the reader's own setting
        (1, 0.5, 60),  # another speckle
        (2, 0.3, 20),  # a lower level and shorter chains kept
        (3, 0.7, 120),  # a higher level, only long chains kept
    ],
)
def test_long_iso_chains_are_exactly_those_of_find_contours(seed, level, min_points):
    values = _speckled_blobs(seed)
    expected = [c[:, ::-1] for c in measure.find_contours(values, level) if len(c) >= min_points]
    got = iso_chains(values, level, min_points)
    # The test means something only if specks were there to drop.
    assert len(measure.find_contours(values, level)) > 3 * len(expected)
    assert len(got) == len(expected) > 0
    for got_chain, expected_chain in zip(got, expected, strict=True):
        np.testing.assert_array_equal(got_chain, expected_chain)


def test_iso_chains_of_a_clean_disc_trace_its_rim():
    values = np.zeros((120, 120), dtype=np.float32)
    cv2.circle(values, (60, 50), 30, 1.0, -1)
    (chain,) = iso_chains(cv2.GaussianBlur(values, (0, 0), 1.0), 0.5, 60)
    radius_px = np.hypot(chain[:, 0] - 60, chain[:, 1] - 50)
    # cv2.circle's filled disc reaches about half a pixel past its radius.
    assert np.all(np.abs(radius_px - 30.5) < 1.0)


def test_a_value_exactly_at_the_level_is_read_a_hair_below_it():
    values = np.zeros((120, 120), dtype=np.float32)
    cv2.circle(values, (60, 50), 30, 1.0, -1)
    values = cv2.GaussianBlur(values, (0, 0), 1.0)
    # A pixel on the rim exactly at the level: skimage would put a chain point on its centre.
    row, col = 50, int(np.argmin(np.abs(values[50, :60] - 0.5)))
    values[row, col] = 0.5
    nudged = values.copy()
    nudged[row, col] = np.nextafter(np.float32(0.5), np.float32(-np.inf))
    expected = [c[:, ::-1] for c in measure.find_contours(nudged, 0.5) if len(c) >= 60]
    got = iso_chains(values, 0.5, 60)
    assert len(got) == len(expected) == 1
    np.testing.assert_array_equal(got[0], expected[0])
    # The chain still runs through that pixel's centre, to well within a pixel.
    assert np.min(np.hypot(got[0][:, 0] - col, got[0][:, 1] - row)) < 1e-3


def _unmix_by_search(delta: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Each pixel's mix found one pixel at a time: every three-colour mix, least cost wins."""
    k = basis.shape[1]
    out = np.zeros((len(delta), k), dtype=np.float32)
    for row, pixel in enumerate(delta):
        best_cost, best = np.inf, None
        for drop in range(k):
            cols = [c for c in range(k) if c != drop]
            shares = (np.linalg.pinv(basis[:, cols]).astype(np.float32) @ pixel).astype(np.float32)
            cost = np.abs(shares).sum() + 10.0 * np.maximum(-shares - 0.1, 0.0).sum()
            if cost < best_cost:
                best_cost, best = cost, (cols, shares)
        cols, shares = best
        out[row, cols] = shares
    return out


def test_unmix_gives_each_pixel_its_simplest_three_colour_mix():
    rng = np.random.default_rng(4)
    basis = rng.normal(0.0, 60.0, (3, 4)).astype(np.float32)
    delta = rng.normal(0.0, 40.0, (300, 3)).astype(np.float32)
    np.testing.assert_allclose(_unmix(delta, basis), _unmix_by_search(delta, basis), atol=1e-4)


@pytest.mark.parametrize("k", [2, 3])
def test_unmix_of_few_colours_is_each_pixel_times_the_pseudo_inverse(k):
    rng = np.random.default_rng(5)
    basis = rng.normal(0.0, 60.0, (3, k)).astype(np.float32)
    delta = rng.normal(0.0, 40.0, (100_003, 3)).astype(np.float32)
    mix = np.linalg.pinv(basis).astype(np.float32)
    assert np.array_equal(_unmix(delta, basis), delta @ mix.T)


#: Differences from blue-grey felt (BGR): a blue wink, a yellow wink, a
#: shadow; the blue is all but the shadow less some yellow (condition 530).
BLUE_YELLOW_SHADOW = np.array(
    [[0.0, -83.0, -100.0], [-155.0, 45.0, 110.0], [-177.0, -152.0, -117.0]]
)


@pytest.mark.parametrize(
    ("pixel", "shares"),
    [
        # With noise the exact mix swings along the colours' near-dependence
        # (1.6 blue plus 1.7 yellow in close-up 7016); these rows test that.
        (BLUE_YELLOW_SHADOW[1] + [6.0, -4.0, 3.0], [0.0, 1.0, 0.0]),  # a noisy yellow wink
        (BLUE_YELLOW_SHADOW[0] + [-5.0, 4.0, -3.0], [1.0, 0.0, 0.0]),  # a noisy blue wink
        (0.3 * BLUE_YELLOW_SHADOW[2] + [4.0, -3.0, 5.0], [0.0, 0.0, 0.3]),  # a noisy shadow
        # Exact colours, guards that the simplest mix is still the right one.
        (BLUE_YELLOW_SHADOW[1], [0.0, 1.0, 0.0]),  # a yellow wink: not blue as well
        (BLUE_YELLOW_SHADOW[0], [1.0, 0.0, 0.0]),  # a blue wink
        (0.5 * BLUE_YELLOW_SHADOW[0], [0.5, 0.0, 0.0]),  # a blue wink's edge on the felt
        (0.3 * BLUE_YELLOW_SHADOW[2], [0.0, 0.0, 0.3]),  # a shadow on the felt
    ],
)
def test_unmix_of_two_colours_that_add_up_to_a_shadow_gives_the_simplest_mix(pixel, shares):
    basis = BLUE_YELLOW_SHADOW.T.astype(np.float32)
    assert np.linalg.cond(basis) > UNMIX_MAX_CONDITION
    got = _unmix(np.asarray([pixel], np.float32), basis)[0]
    np.testing.assert_allclose(got, shares, atol=0.05)


def test_unmix_of_two_alike_colours_and_a_shadow_stays_the_exact_mix():
    # One wink's pixels split in two hue classes (the generator's
    # `closeup_07013`): ill-conditioned too, but not two colours that make a
    # shadow, so the exact mix the review was measured on is kept.
    basis = np.array([[-30.0, -14.0, 21.0], [-27.0, -10.0, 27.0], [-62.0, -64.0, -64.0]]).T
    basis = basis.astype(np.float32)
    assert np.linalg.cond(basis) > UNMIX_MAX_CONDITION
    delta = np.random.default_rng(6).normal(0.0, 30.0, (50, 3)).astype(np.float32)
    mix = np.linalg.pinv(basis).astype(np.float32)
    assert np.array_equal(_unmix(delta, basis), delta @ mix.T)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_unmix_of_channel_rows_passed_transposed_is_that_of_the_pixels(k):
    # The close-up reader hands _unmix its contiguous channel rows, transposed.
    rng = np.random.default_rng(8)
    basis = rng.normal(0.0, 60.0, (3, k)).astype(np.float32)
    delta = rng.normal(0.0, 40.0, (50_001, 3)).astype(np.float32)
    rows = np.ascontiguousarray(delta.T)
    assert np.array_equal(_unmix(rows.T, basis), _unmix(delta, basis))


def test_distances_and_normals_are_those_of_the_moved_ellipse():
    rng = np.random.default_rng(9)
    pts = rng.uniform(0.0, 600.0, (500, 2))
    for _ in range(20):
        template = ImageEllipse(
            tuple(rng.uniform(0.0, 600.0, 2)),
            (float(rng.uniform(40.0, 300.0)), float(rng.uniform(20.0, 40.0))),
            float(rng.uniform(-np.pi, np.pi)),
        )
        centre = rng.uniform(100.0, 500.0, 2)
        moved = ImageEllipse(
            (float(centre[0]), float(centre[1])), template.semi_axes_px, template.angle_rad
        )
        distances, normals = _distances_and_normals(template, centre, pts)
        assert np.array_equal(distances, moved.distance_px(pts))
        assert np.array_equal(normals, moved.outward_normals(pts))


@pytest.mark.parametrize(
    "matrix",
    [
        [[3.0, 1.0], [1.0, 2.0]],  # a well-conditioned normal matrix
        [[1.0, 0.0], [0.0, 1e-7]],  # nearly singular: above the centre fit's 1e6 bar
        [[2.0, 2.0 + 1e-9], [2.0, 2.0]],  # all normals alike, rounded
        [[-4.0, 7.0], [0.5, 3.0]],  # not symmetric
    ],
)
def test_condition_of_a_2x2_matrix_is_numpys(matrix):
    m = np.array(matrix)
    np.testing.assert_allclose(_condition_2x2(m), np.linalg.cond(m), rtol=1e-6)


def test_condition_of_a_singular_2x2_matrix_is_infinite():
    assert _condition_2x2(np.array([[1.0, 2.0], [2.0, 4.0]])) == np.inf


def test_rim_points_near_an_ellipse_are_those_found_by_testing_every_point():
    rng = np.random.default_rng(5)
    # Rim-like points over a cluttered blob, many of them near the ellipses tried.
    points_xy = rng.uniform(0.0, 800.0, (20000, 2))
    index = _RimIndex(points_xy)
    among = rng.random(len(points_xy)) < 0.7
    for _ in range(40):
        ellipse = ImageEllipse(
            tuple(rng.uniform(100.0, 700.0, 2)),
            (float(rng.uniform(40.0, 150.0)), float(rng.uniform(20.0, 40.0))),
            float(rng.uniform(-np.pi, np.pi)),
        )
        for tol_px in (2.0, 6.0):
            every = np.abs(ellipse.distance_px(points_xy)) < tol_px
            assert every.sum() > 0
            np.testing.assert_array_equal(index.near(ellipse, tol_px), every)
            np.testing.assert_array_equal(index.near(ellipse, tol_px, among), every & among)


def _five_point_arcs(rng: np.random.Generator, n_sets: int) -> np.ndarray:
    """RANSAC-like samples: five noisy points on short arcs of random ellipses, pixels."""
    sets = []
    for _ in range(n_sets):
        ellipse = ImageEllipse(
            tuple(rng.uniform(0.0, 1000.0, 2)),
            (float(rng.uniform(40.0, 300.0)), float(rng.uniform(20.0, 40.0))),
            float(rng.uniform(-np.pi, np.pi)),
        )
        t = rng.uniform(0.0, 2 * np.pi) + np.sort(rng.uniform(0.0, rng.uniform(0.2, 3.0), 5))
        sets.append(ellipse_points(ellipse, t) + rng.normal(0.0, rng.uniform(0.0, 2.0), (5, 2)))
    return np.array(sets)


def test_ellipses_fitted_in_a_batch_are_those_fitted_one_by_one():
    rng = np.random.default_rng(6)
    samples = _five_point_arcs(rng, 400)
    # Scattered points too, like the texture in a pot that RANSAC samples from.
    samples[::4] = rng.uniform(0.0, 50.0, samples[::4].shape)
    expected = [fit_ellipse_direct(p) for p in samples]
    assert all(e is not None for e in expected)
    assert _fit_ellipses_direct(samples) == expected


def test_a_degenerate_set_in_a_batch_leaves_the_other_fits_as_they_are():
    samples = _five_point_arcs(np.random.default_rng(7), 20)
    # Five points on one line: the direct fit's scatter matrix is singular.
    samples[3] = np.column_stack([np.arange(5.0), np.full(5, 7.0)])
    expected = [fit_ellipse_direct(p) for p in samples]
    assert expected[3] is None
    assert _fit_ellipses_direct(samples) == expected


@pytest.mark.parametrize(
    ("crop", "level"),
    [
        ((slice(None), slice(None)), 0.5),  # closed chains, many of them specks
        ((slice(30, 200), slice(40, 250)), 0.5),  # blobs cut by the border: open chains
        ((slice(None), slice(None)), 0.3),  # another level
    ],
)
def test_chains_joined_as_arrays_are_those_of_find_contours(crop, level):
    values = _speckled_blobs(8)[crop]
    expected = measure.find_contours(values, level)
    got = _find_contours(values, level)
    assert len(got) == len(expected) > 50
    for got_chain, expected_chain in zip(got, expected, strict=True):
        np.testing.assert_array_equal(got_chain, expected_chain)


def test_pixels_exactly_at_the_level_give_find_contours_own_chains():
    # A disc of exactly 0.5 inside: chains meet on pixel centres, skimage's own case.
    values = np.zeros((40, 50))
    cv2.circle(values, (20, 20), 10, 0.5, -1)
    cv2.circle(values, (20, 20), 6, 1.0, -1)
    values[5:9, 30:45] = 1.0
    expected = measure.find_contours(values, 0.5)
    got = _find_contours(values, 0.5)
    assert len(got) == len(expected) > 1
    for got_chain, expected_chain in zip(got, expected, strict=True):
        np.testing.assert_array_equal(got_chain, expected_chain)


@pytest.mark.parametrize(
    ("centre_xy_px", "semi_axes_px", "angle_rad", "margin_px"),
    [
        ((40.3, 31.7), (22.5, 14.2), 0.4, 0.0),
        ((12.0, 50.5), (9.1, 9.1), -2.0, 1.5),  # partly off the map
    ],
)
def test_an_ellipse_holds_the_same_grid_points_and_stats_as_point_by_point(
    centre_xy_px, semi_axes_px, angle_rad, margin_px
):
    ellipse = ImageEllipse(centre_xy_px, semi_axes_px, angle_rad)
    xs, ys = np.arange(-3, 81, 2), np.arange(5, 70, 2)
    gx, gy = np.meshgrid(xs, ys)
    points = np.column_stack([gx.ravel(), gy.ravel()]).astype(np.float64)
    grid = ellipse.contains_grid(xs, ys, margin_px)
    assert np.array_equal(grid.ravel(), ellipse.contains(points, margin_px))
    values = np.random.default_rng(4).random((64, 80)).astype(np.float32)
    # _stat_inside as first written: every grid point tested and taken on its own.
    a = semi_axes_px[0]
    y0, y1 = max(0, int(centre_xy_px[1] - a)), min(64, int(centre_xy_px[1] + a) + 1)
    x0, x1 = max(0, int(centre_xy_px[0] - a)), min(80, int(centre_xy_px[0] + a) + 1)
    rows, cols = np.mgrid[y0:y1:2, x0:x1:2]
    inside = ellipse.contains(np.column_stack([cols.ravel(), rows.ravel()]).astype(np.float64))
    for stat in (np.median, np.mean):
        want = float(stat(values[rows.ravel()[inside], cols.ravel()[inside]]))
        assert _stat_inside(values, ellipse, stat) == want
