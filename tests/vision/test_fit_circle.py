"""Robust circle fits: exact answers, arcs, outliers and degenerate input."""

from __future__ import annotations

import numpy as np
import pytest

from vision.fit import CircleFitFailure, arc_fraction, arc_fractions, fit_circle, fit_circles


def _circle(centre: tuple[float, float], radius: float, start_deg: float, stop_deg: float, n: int):
    angle = np.radians(np.linspace(start_deg, stop_deg, n, endpoint=False))
    return np.column_stack([centre[0] + radius * np.cos(angle), centre[1] + radius * np.sin(angle)])


def test_exact_points_give_exact_circle_with_free_radius() -> None:
    pts = _circle((12.5, -40.0), 11.0, 0, 360, 40)
    fit = fit_circle(pts)
    assert fit
    np.testing.assert_allclose(fit.centre_mm, [12.5, -40.0], atol=1e-6)
    assert fit.radius_mm == pytest.approx(11.0, abs=1e-6)
    assert fit.arc_fraction == pytest.approx(1.0)


def test_short_arc_with_known_radius_recovers_centre() -> None:
    # A wink three-quarters hidden: only 100 degrees of its rim is seen.
    rng = np.random.default_rng(1)
    pts = _circle((3.0, 4.0), 8.0, 20, 120, 15) + rng.normal(0, 0.1, (15, 2))
    fit = fit_circle(pts, radius_mm=8.0, initial_centre_mm=(1.0, 2.0))
    assert fit
    assert np.linalg.norm(fit.centre_mm - [3.0, 4.0]) < 0.3
    assert fit.arc_fraction < 0.4


def test_points_of_a_neighbour_are_rejected_as_outliers() -> None:
    rim = _circle((0.0, 0.0), 8.0, 0, 360, 36)
    # Six crossings on an occluder's outline, 3 mm inside the true rim.
    occluder = _circle((0.0, 0.0), 5.0, 0, 60, 6)
    fit = fit_circle(np.vstack([rim, occluder]), radius_mm=8.0, initial_centre_mm=(0.5, 0.5))
    assert fit
    np.testing.assert_allclose(fit.centre_mm, [0.0, 0.0], atol=1e-3)
    assert not fit.inliers[-6:].any()
    assert fit.inliers[:-6].all()


def test_centre_sigma_grows_when_the_arc_shrinks() -> None:
    full = fit_circle(_circle((0, 0), 8.0, 0, 360, 36), radius_mm=8.0, initial_centre_mm=(0, 0))
    arc = fit_circle(_circle((0, 0), 8.0, 0, 90, 9), radius_mm=8.0, initial_centre_mm=(0, 0))
    assert full and arc
    assert arc.centre_sigma_mm > 2 * full.centre_sigma_mm


@pytest.mark.parametrize(
    ("points", "reason"),
    [
        # too few points to fit anything
        (np.zeros((3, 2)), "only 3 rim points"),
        # all on one line: no circle
        (np.column_stack([np.arange(8.0), np.arange(8.0)]), "collinear"),
    ],
)
def test_degenerate_input_fails_with_a_reason(points: np.ndarray, reason: str) -> None:
    fit = fit_circle(points)
    assert isinstance(fit, CircleFitFailure)
    assert not fit
    assert reason in fit.reason


def test_batch_fit_matches_single_fits_and_ignores_zero_weights() -> None:
    a = _circle((1.0, 2.0), 8.0, 0, 360, 20)
    b = _circle((-5.0, 7.0), 11.0, 0, 360, 20)
    junk = np.full((20, 2), 500.0)
    pts = np.stack([a, np.vstack([b[:10], junk[:10]])])
    weights = np.stack([np.ones(20), np.r_[np.ones(10), np.zeros(10)]])
    fits = fit_circles(pts, weights, [[0.0, 0.0], [-4.0, 6.0]])
    assert fits.ok.all()
    np.testing.assert_allclose(fits.centre_mm, [[1.0, 2.0], [-5.0, 7.0]], atol=1e-5)
    np.testing.assert_allclose(fits.radius_mm, [8.0, 11.0], atol=1e-5)


def test_batch_fit_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="must be"):
        fit_circles(np.zeros((2, 5, 2)), np.ones((2, 4)), np.zeros((2, 2)))


def test_arc_fraction_counts_directions_not_points() -> None:
    many_in_one_place = _circle((0, 0), 8.0, 0, 10, 50)
    assert arc_fraction(many_in_one_place, (0, 0)) == pytest.approx(1 / 24)
    assert arc_fraction(np.zeros((0, 2)), (0, 0)) == 0.0


def test_arc_fractions_count_only_the_chosen_points_of_each_circle() -> None:
    angles = np.radians(np.arange(0.0, 360.0, 10.0) + 5.0)
    ring = 8.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    points = np.stack([ring, ring + [3.0, -2.0]])
    chosen = np.ones((2, len(angles)), dtype=bool)
    # The second circle's points in the upper half only: half its directions.
    chosen[1] = angles < np.pi
    arcs = arc_fractions(points, [[0.0, 0.0], [3.0, -2.0]], chosen)
    np.testing.assert_allclose(arcs, [1.0, 0.5])
    assert arcs[1] == arc_fraction(points[1][chosen[1]], [3.0, -2.0])


def test_arc_fractions_match_binning_by_degrees_also_on_the_bins_edges() -> None:
    # The known answer: np.degrees, % 360 and // 15 as written, per point.
    rng = np.random.default_rng(4)
    edges = np.radians(np.arange(-180.0, 181.0, 15.0))
    angle = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, 3000),
            edges,
            np.nextafter(edges, 10.0),
            np.nextafter(edges, -10.0),
        ]
    )
    rng.shuffle(angle)
    n, k = 50, len(angle) // 50
    angle = angle[: n * k].reshape(n, k)
    off_x, off_y = np.cos(angle), np.sin(angle)
    chosen = rng.random((n, k)) < 0.1
    bins = (np.degrees(np.arctan2(off_y, off_x)) % 360.0 // 15.0).astype(int)
    want = [len(np.unique(bins[i][chosen[i] & (bins[i] < 24)])) / 24 for i in range(n)]
    got = arc_fractions(np.stack([off_x, off_y], axis=2), np.zeros((n, 2)), chosen)
    np.testing.assert_array_equal(got, want)


def _fit_circles_one_sum_at_a_time(pts, prior, centre, radius, scale_mm=0.6, iterations=10):
    """The batch fit as first written, each sum and each entry of Cramer's rule on its own.

    The reference for :func:`fit_circles`, which computes the same values
    with fewer numpy calls: returns centre, radius, rms, inliers, sigma.
    """
    fixed = radius is not None
    if fixed:
        radius = np.asarray(radius, float).copy()
    else:
        dist0 = np.linalg.norm(pts - centre[:, None, :], axis=2)
        radius = (dist0 * prior).sum(1) / np.maximum(prior.sum(1), 1e-9)
    cutoff = 4.685 * scale_mm
    centre_x, centre_y = centre[:, 0].copy(), centre[:, 1].copy()
    pts_x, pts_y = pts[..., 0], pts[..., 1]
    weight = prior
    for _ in range(iterations):
        off_x, off_y = pts_x - centre_x[:, None], pts_y - centre_y[:, None]
        dist = np.maximum(np.sqrt(off_x * off_x + off_y * off_y), 1e-9)
        resid = dist - radius[:, None]
        weight = prior * np.maximum(1.0 - np.square(resid / cutoff), 0.0) ** 2
        ux, uy = off_x / dist, off_y / dist
        a00 = (weight * ux * ux).sum(1) + 1e-9
        a01 = (weight * ux * uy).sum(1)
        a11 = (weight * uy * uy).sum(1) + 1e-9
        g0 = -(weight * ux * resid).sum(1)
        g1 = -(weight * uy * resid).sum(1)
        if fixed:
            det2 = a00 * a11 - a01 * a01
            steps = np.array([-((a11 * g0 - a01 * g1) / det2), -((a00 * g1 - a01 * g0) / det2)])
        else:
            a02, a12 = (weight * ux).sum(1), (weight * uy).sum(1)
            a22 = weight.sum(1) + 1e-9
            g2 = -(weight * resid).sum(1)
            c00 = a11 * a22 - a12 * a12
            c01 = a02 * a12 - a01 * a22
            c02 = a01 * a12 - a02 * a11
            c11 = a00 * a22 - a02 * a02
            c12 = a01 * a02 - a00 * a12
            c22 = a00 * a11 - a01 * a01
            det3 = a00 * c00 + a01 * c01 + a02 * c02
            steps = np.array(
                [
                    -((c00 * g0 + c01 * g1 + c02 * g2) / det3),
                    -((c01 * g0 + c11 * g1 + c12 * g2) / det3),
                    -((c02 * g0 + c12 * g1 + c22 * g2) / det3),
                ]
            )
        steps = np.clip(steps, -3.0, 3.0)
        centre_x, centre_y = centre_x + steps[0], centre_y + steps[1]
        if not fixed:
            radius = radius + steps[2]
        if float(np.abs(steps).max(initial=0.0)) < 1e-3:
            break
    off_x, off_y = pts_x - centre_x[:, None], pts_y - centre_y[:, None]
    dist = np.maximum(np.sqrt(off_x * off_x + off_y * off_y), 1e-9)
    resid = dist - radius[:, None]
    inliers = (np.abs(resid) < cutoff * 0.6) & (prior > 0)
    w_in = weight * inliers
    rms = np.sqrt((resid**2 * w_in).sum(1) / np.maximum(w_in.sum(1), 1e-12))
    ux, uy = off_x / dist, off_y / dist
    info_xx, info_xy = (w_in * ux * ux).sum(1), (w_in * ux * uy).sum(1)
    info_yy = (w_in * uy * uy).sum(1)
    det = info_xx * info_yy - info_xy**2
    trace = info_xx + info_yy
    small_eig = 0.5 * (trace - np.sqrt(np.maximum(trace**2 - 4 * det, 0.0)))
    with np.errstate(divide="ignore"):
        sigma = np.where(
            small_eig > 1e-6,
            np.maximum(rms, 0.15) / np.sqrt(np.maximum(small_eig, 1e-12)),
            np.inf,
        )
    return np.column_stack([centre_x, centre_y]), radius, rms, inliers, sigma


@pytest.mark.parametrize(
    ("fixed", "n_rims", "scale_mm"),
    [
        (False, 1, 0.8),  # one free-radius fit, as for a single seed
        (False, 30, 0.8),  # a frame's seeds, free radius (the detector's scale)
        (True, 60, 0.6),  # a frame's seeds at both wink sizes, fixed radius
    ],
)
def test_batch_fit_computes_what_the_sums_one_at_a_time_compute_to_the_bit(
    fixed: bool, n_rims: int, scale_mm: float
) -> None:
    # 36 rays a rim: most on a circle with noise, some on a neighbour (2-4 mm
    # inside), some absent (weight 0), some weak (crossings into other winks).
    rng = np.random.default_rng(7 + n_rims)
    true_centre = rng.uniform(-500, 500, (n_rims, 2))
    true_radius = rng.choice([8.0, 11.0], n_rims)
    angle = np.radians(np.arange(36) * 10.0)
    radial = true_radius[:, None] + rng.normal(0, 0.3, (n_rims, 36))
    radial -= rng.uniform(2, 4, (n_rims, 36)) * (rng.random((n_rims, 36)) < 0.15)
    pts = true_centre[:, None, :] + radial[..., None] * np.stack([np.cos(angle), np.sin(angle)], 1)
    prior = rng.choice([0.0, 0.35, 0.6, 1.0], (n_rims, 36), p=[0.2, 0.1, 0.1, 0.6])
    start = true_centre + rng.normal(0, 1.5, (n_rims, 2))
    radius = true_radius + 0.3 if fixed else None
    fits = fit_circles(pts, prior, start, radius_mm=radius, scale_mm=scale_mm)
    centre, radius_mm, rms, inliers, sigma = _fit_circles_one_sum_at_a_time(
        pts, prior, start, radius, scale_mm
    )
    np.testing.assert_array_equal(fits.centre_mm, centre)
    np.testing.assert_array_equal(fits.radius_mm, radius_mm)
    np.testing.assert_array_equal(fits.rms_mm, rms)
    np.testing.assert_array_equal(fits.inliers, inliers)
    np.testing.assert_array_equal(fits.centre_sigma_mm, sigma)
