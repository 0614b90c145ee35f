"""Circle fits of the close-up reader: known answers, and agreement with the reference fits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from rules.board import WINK_THICKNESS_MM
from vision.closeup_geometry import (
    _KNOWN_RADIUS_MAX_ITER,
    _KNOWN_RADIUS_XTOL,
    DEFAULT_HFOV_DEG,
    TYPICAL_DISTANCE_MM,
    MatPlane,
    PinholeIntrinsics,
    Support,
    _forward_jacobian,
    _plane_basis,
    assign_diameters_mm,
    fit_circle,
    fit_circle_known_radius,
    fit_circles,
    fit_wink_circle,
    rim_heights_mm,
    typical_distance_mm,
)


def _arc(
    rng: np.random.Generator, centre_xy: np.ndarray, radius: float, span_rad: float, n: int
) -> np.ndarray:
    angles = rng.uniform(0.0, 2 * np.pi) + rng.uniform(0.0, span_rad, n)
    return centre_xy + radius * np.column_stack([np.cos(angles), np.sin(angles)])


def test_circles_fitted_together_are_the_circles_fitted_one_by_one() -> None:
    rng = np.random.default_rng(0)
    # Rims far from the origin, as plane mm are: the one-by-one fit is the reference.
    sets = []
    for _ in range(5):
        n = int(rng.integers(20, 150))
        arc = _arc(rng, rng.uniform(-400, 400, 2), rng.uniform(6, 12), 4.0, n)
        sets.append(arc + rng.normal(0.0, 0.05, (n, 2)))
    centres, radii = fit_circles(np.vstack(sets), [len(s) for s in sets])
    for points, centre, radius in zip(sets, centres, radii, strict=True):
        ref_centre, ref_radius, _ = fit_circle(points)
        assert centre == pytest.approx(ref_centre, abs=1e-8)
        assert radius == pytest.approx(ref_radius, abs=1e-8)


def test_exact_circles_fitted_together_give_their_centres_and_radii() -> None:
    rng = np.random.default_rng(1)
    truth = [((10.0, -3.0), 11.0), ((250.0, 80.0), 8.0)]
    sets = [_arc(rng, np.array(c), r, 2 * np.pi, 40) for c, r in truth]
    centres, radii = fit_circles(np.vstack(sets), [40, 40])
    assert centres == pytest.approx(np.array([c for c, _ in truth]), abs=1e-9)
    assert radii == pytest.approx([r for _, r in truth], abs=1e-9)


@pytest.mark.parametrize(
    ("span_rad", "start_off_mm"),
    [
        (6.0, 0.5),  # a whole rim, started near
        (1.2, 2.0),  # a third of a rim (a wink half under another), started 2 mm off
        (0.5, 1.0),  # a short arc
    ],
)
def test_known_radius_fit_finds_the_centre_of_an_exact_arc(
    span_rad: float, start_off_mm: float
) -> None:
    rng = np.random.default_rng(2)
    centre = np.array([120.0, -45.0])
    points = _arc(rng, centre, 11.0, span_rad, 60)
    got, rms = fit_circle_known_radius(points, 11.0, centre + start_off_mm * np.array([0.6, 0.8]))
    assert got == pytest.approx(centre, abs=1e-7)
    assert rms == pytest.approx(0.0, abs=1e-7)


def test_known_radius_fit_agrees_with_minpack_on_noisy_arcs() -> None:
    rng = np.random.default_rng(3)
    for _ in range(100):
        centre, radius = rng.uniform(-300, 300, 2), rng.uniform(5, 15)
        points = _arc(rng, centre, radius, rng.uniform(0.3, 6.3), int(rng.integers(8, 200)))
        points += rng.normal(0.0, 0.1, points.shape)
        start = centre + rng.normal(0.0, 2.0, 2)
        got, _ = fit_circle_known_radius(points, radius, start)

        def resid(c: np.ndarray, points: np.ndarray = points, radius: float = radius) -> np.ndarray:
            return np.hypot(points[:, 0] - c[0], points[:, 1] - c[1]) - radius

        reference = optimize.least_squares(resid, x0=start, method="lm").x
        # MINPACK stops at a relative step of 1e-8.
        assert got == pytest.approx(reference, abs=1e-5)


def test_a_set_on_one_line_among_circles_gives_no_error() -> None:
    rng = np.random.default_rng(4)
    circle = _arc(rng, np.array([5.0, 5.0]), 8.0, 2 * np.pi, 30)
    line = np.column_stack([np.linspace(0.0, 10.0, 10), np.zeros(10)])
    centres, radii = fit_circles(np.vstack([circle, line]), [30, 10])
    # The circle is still fitted; the line gets whatever the least-squares fit gives.
    assert centres[0] == pytest.approx([5.0, 5.0], abs=1e-9)
    assert radii[0] == pytest.approx(8.0, abs=1e-9)


def _block_residuals(counts: list[int], calls: list[int]):
    """Residuals of circles sharing a scale and an offset: block i is circle i's rim."""
    angles = [np.linspace(0.0, 2 * np.pi, n, endpoint=False) for n in counts]

    def fun(x: np.ndarray) -> np.ndarray:
        calls.append(1)
        scale, shift_x, shift_y = x[:3]
        out = []
        for i, t in enumerate(angles):
            cx, cy = x[3 + 2 * i : 5 + 2 * i]
            px = scale * (np.cos(t) * 10.0 + 3.0) + shift_x
            py = scale * (np.sin(t) * 10.0 - 2.0) + shift_y
            out.append(np.hypot(px - cx, py - cy) - 10.0)
        return np.concatenate(out)

    return fun


def test_block_jacobian_is_the_one_parameter_at_a_time_jacobian_from_fewer_calls() -> None:
    counts = [7, 12, 5, 9]
    calls: list[int] = []
    fun = _block_residuals(counts, calls)
    x = np.array([1.1, 0.4, -0.3, 3.2, -1.9, 3.5, -2.4, 2.9, -1.7, 3.1, -2.2])
    lower = np.array([0.0, -1.0, -1.0, *([-np.inf] * 8)])
    # The scale's forward step would cross its upper bound: it is taken backwards.
    upper = np.array([1.1, 1.0, 1.0, *([np.inf] * 8)])
    f0 = fun(x)
    calls.clear()
    jac = _forward_jacobian(fun, x, f0, (lower, upper), 3, counts)
    assert len(calls) == 3 + 2  # not 3 + 2 * 4
    # One parameter at a time, with the same steps.
    step = np.sqrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(x)) * np.where(x >= 0, 1, -1)
    step[0] = -step[0]
    expected = np.empty_like(jac)
    for j in range(len(x)):
        x1 = x.copy()
        x1[j] += step[j]
        expected[:, j] = (fun(x1) - f0) / (x1[j] - x[j])
    np.testing.assert_array_equal(jac, expected)
    # And close to the true derivatives: d/d(centre x) of a rim's residual is -(px - cx) / dist.
    px = 1.1 * (np.cos(np.linspace(0, 2 * np.pi, 7, endpoint=False)) * 10 + 3) + 0.4
    py = 1.1 * (np.sin(np.linspace(0, 2 * np.pi, 7, endpoint=False)) * 10 - 2) - 0.3
    dist = np.hypot(px - 3.2, py + 1.9)
    np.testing.assert_allclose(jac[:7, 3], -(px - 3.2) / dist, atol=1e-6)


def test_plane_basis_is_the_normal_crossed_exactly_as_numpy_crosses_it() -> None:
    rng = np.random.default_rng(7)
    normals = rng.normal(size=(200, 3))
    normals[:, 2] = np.abs(normals[:, 2]) + 0.3
    normals[::10] = [0.95, 0.1, 0.3]  # the other helper axis
    for normal in normals / np.linalg.norm(normals, axis=1)[:, None]:
        e1, e2 = _plane_basis(normal)
        assert np.array_equal(e2, np.cross(normal, e1))


def test_one_height_cuts_the_rays_as_that_height_given_per_ray() -> None:
    rng = np.random.default_rng(8)
    normal = np.array([0.1, -0.2, 1.0]) / np.linalg.norm([0.1, -0.2, 1.0])
    plane = MatPlane(PinholeIntrinsics.from_hfov(4032, 3024, 66.0), normal, 231.7)
    pixels = rng.uniform(0.0, 4000.0, (300, 2))
    for height_mm in (0.0, 0.85, 38.0):
        per_ray = plane.to_plane(pixels, np.full(len(pixels), height_mm))
        assert np.array_equal(plane.to_plane(pixels, height_mm), per_ray)


def _wink_circle_cut_by_cut(plane, rim_px, radius_mm, support, thickness_mm=WINK_THICKNESS_MM):
    """fit_wink_circle as first written: every cut casts the rim's rays again."""
    pts = plane.to_plane(rim_px, support.height_mm + thickness_mm / 2)
    centre, radius, rms = fit_circle(pts)
    r_model = radius_mm if radius_mm is not None else radius
    for _ in range(3):
        flat = plane.to_plane(rim_px, support.height_mm)
        base = support.underside_mm(flat, centre, r_model)
        heights = rim_heights_mm(plane.to_plane(rim_px, base), centre, base, thickness_mm)
        pts = plane.to_plane(rim_px, heights)
        if radius_mm is None:
            centre, radius, rms = fit_circle(pts)
            r_model = radius
        else:
            centre, rms = fit_circle_known_radius(pts, radius_mm, centre)
            radius = radius_mm
    return centre, radius, rms


@pytest.mark.parametrize(
    ("radius_mm", "support"),
    [
        (None, Support()),
        (11.0, Support(height_mm=1.6)),
        (8.0, Support(height_mm=1.9, leaning=True, towards_xy_mm=(30.0, 5.0))),
    ],
)
def test_a_wink_circle_fitted_from_rays_cast_once_is_the_cut_by_cut_fit(radius_mm, support):
    rng = np.random.default_rng(9)
    normal = np.array([0.2, 0.1, 1.0]) / np.linalg.norm([0.2, 0.1, 1.0])
    plane = MatPlane(PinholeIntrinsics.from_hfov(4032, 3024, 66.0), normal, 240.0)
    ring = plane.to_image(_arc(rng, np.array([20.0, 5.0]), 11.0, 4.0, 300), 0.8)
    rim_px = ring + rng.normal(0.0, 0.3, ring.shape)
    got = fit_wink_circle(plane, rim_px, radius_mm=radius_mm, support=support)
    want = _wink_circle_cut_by_cut(plane, rim_px, radius_mm, support)
    assert np.array_equal(got[0], want[0])
    assert got[1:] == want[1:]


@pytest.mark.parametrize(
    ("centre_gap_mm", "under_radius_mm", "want_reach_mm"),
    [
        (17.0, 11.0, 17.0),  # 22 mm wink 5 mm over a large one: rests on its rim 17 mm on
        (30.0, 8.0, 22.0),  # barely over a small one: reaches it at its own edge
        (6.0, 11.0, 11.0),  # centre over the one beneath: rests on it from its centre on
    ],
)
def test_a_wink_leaning_on_the_rim_beneath_reaches_its_height_there(
    centre_gap_mm, under_radius_mm, want_reach_mm
):
    radius_mm = 11.0
    support = Support(
        height_mm=1.6,
        leaning=True,
        towards_xy_mm=(centre_gap_mm, 0.0),
        under_radius_mm=under_radius_mm,
    )
    # Points along the lean, from the far edge (-11) through the centre (0).
    along_mm = np.array([-radius_mm, -radius_mm + want_reach_mm, 0.0, radius_mm])
    heights = support.underside_mm(np.column_stack([along_mm, np.zeros(4)]), np.zeros(2), radius_mm)
    assert heights[0] == pytest.approx(0.0)
    assert heights[1] == pytest.approx(1.6)
    # Linear from the far edge, past the rim beneath too.
    assert heights[2] == pytest.approx(1.6 * radius_mm / want_reach_mm)
    assert heights[3] == pytest.approx(1.6 * 2 * radius_mm / want_reach_mm)


def _known_radius_fit_on_offsets(points_xy, radius, start_xy):
    """fit_circle_known_radius as first written, on (n, 2) offsets."""
    p = np.asarray(points_xy, dtype=np.float64)
    centre = np.asarray(start_xy, dtype=np.float64).copy()
    offset = p - centre
    dist = np.hypot(offset[:, 0], offset[:, 1])
    resid = dist - radius
    cost = float(resid @ resid)
    for _ in range(_KNOWN_RADIUS_MAX_ITER):
        jac = -offset / np.maximum(dist, 1e-12)[:, None]
        try:
            step = np.linalg.solve(jac.T @ jac, -(jac.T @ resid))
        except np.linalg.LinAlgError:
            break
        scale = 1.0
        while scale >= 1e-6:
            trial = centre + scale * step
            t_offset = p - trial
            t_dist = np.hypot(t_offset[:, 0], t_offset[:, 1])
            t_resid = t_dist - radius
            t_cost = float(t_resid @ t_resid)
            if t_cost <= cost:
                break
            scale *= 0.5
        else:
            break
        moved = scale * float(np.hypot(step[0], step[1]))
        centre, offset, dist, resid, cost = trial, t_offset, t_dist, t_resid, t_cost
        if moved <= _KNOWN_RADIUS_XTOL * (1.0 + float(np.hypot(centre[0], centre[1]))):
            break
    return centre, float(np.sqrt(np.mean(resid**2)))


def test_known_radius_fit_on_coordinate_columns_is_the_fit_on_offsets() -> None:
    rng = np.random.default_rng(10)
    for _ in range(50):
        centre = rng.uniform(-300, 300, 2)
        radius = rng.uniform(6.0, 25.0)
        n = int(rng.integers(5, 400))
        arc = _arc(rng, centre, radius, rng.uniform(0.3, 6.3), n) + rng.normal(0, 0.1, (n, 2))
        start = centre + rng.normal(0.0, 2.0, 2)
        got = fit_circle_known_radius(arc, radius, start)
        want = _known_radius_fit_on_offsets(arc, radius, start)
        assert np.array_equal(got[0], want[0])
        assert got[1] == want[1]


def test_the_typical_distance_is_the_main_lens_one_and_grows_with_the_focal_length() -> None:
    main = PinholeIntrinsics.from_hfov(4032, 3024, DEFAULT_HFOV_DEG)
    assert typical_distance_mm(main) == pytest.approx(TYPICAL_DISTANCE_MM)
    # Twice the focal length (a 2x lens), the same photo size: framed alike from twice as far.
    tele = PinholeIntrinsics(2 * main.focal_px, main.principal_xy_px)
    assert typical_distance_mm(tele) == pytest.approx(2 * TYPICAL_DISTANCE_MM)


def test_winks_all_alike_are_sized_for_the_typical_distance_given() -> None:
    # Two alike rims 0.0314 camera distances across: large at 350 mm, small at 255 mm.
    radii = [11.0 / 350.0, 11.0 / 350.0]
    assert assign_diameters_mm(radii) == [16.0, 16.0]  # nearer the main lens's 22 cm
    assert assign_diameters_mm(radii, typical_distance_mm=440.0) == [22.0, 22.0]  # a 2x lens
