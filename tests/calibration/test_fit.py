"""The camera fit: rule 2.3.1 geometry, focal length from a homography, exact recoveries."""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.fit import (
    MAT_CORNERS_MM,
    N_CAMERA_PARAMS,
    CameraFit,
    Observations,
    _camera_from_params,
    _params_from_camera,
    _residuals_mm_batch,
    baseline_segment_mm,
    edge_lines,
    fit_camera,
    focal_from_homography,
    initial_camera,
    mapping_sigma_mm,
    residuals_mm,
    side_face_shift_mm,
)
from rules.board import BASELINE_DISTANCE_MM
from tests.calibration.synthetic import look_at_camera, mat_grid_mm

GRID_MM = mat_grid_mm(21, 11)


@pytest.mark.parametrize(
    ("corner", "on_long", "on_short"),
    [
        # The ETwA mat: baseline meets the long edge 120.67 mm and the short edge
        # 241.34 mm from the corner (shared scenes' ground truth gives 793.73, 215.861).
        ((914.4, 457.2), (793.73, 457.2), (914.4, 215.861)),
        ((-914.4, 457.2), (-793.73, 457.2), (-914.4, 215.861)),
        ((-914.4, -457.2), (-793.73, -457.2), (-914.4, -215.861)),
        ((914.4, -457.2), (793.73, -457.2), (914.4, -215.861)),
    ],
)
def test_baseline_ends_lie_where_rule_2_3_1_puts_them(corner, on_long, on_short) -> None:
    long_mm, short_mm, line = baseline_segment_mm(np.asarray(corner))
    np.testing.assert_allclose(long_mm, on_long, atol=0.01)
    np.testing.assert_allclose(short_mm, on_short, atol=0.01)
    # Both ends are 3 ft from the centre along the diagonal, at right angles to it.
    for end in (long_mm, short_mm):
        assert np.dot(end, line.normal) == pytest.approx(BASELINE_DISTANCE_MM)


def test_focal_length_from_a_tilted_view_of_the_mat_is_recovered() -> None:
    cam = look_at_camera((1920, 1080), (-1800.0, -400.0, 1800.0), k1=0.0)
    h, _ = cv2.findHomography(MAT_CORNERS_MM, cam.mat_to_image(MAT_CORNERS_MM))
    assert focal_from_homography(h, (1920, 1080)) == pytest.approx(0.7 * 1920, rel=1e-3)


def test_focal_length_is_unknowable_looking_straight_down() -> None:
    cam = look_at_camera((1920, 1080), (0.0, 0.0, 1800.0), k1=0.0)
    h, _ = cv2.findHomography(MAT_CORNERS_MM, cam.mat_to_image(MAT_CORNERS_MM))
    assert focal_from_homography(h, (1920, 1080)) is None


def _exact_observations(cam) -> Observations:
    pts, normals, offsets, kinds, edges = [], [], [], [], []
    t = np.linspace(0.05, 0.95, 40)[:, None]
    for i, line in enumerate(edge_lines()):
        a, b = MAT_CORNERS_MM[i], MAT_CORNERS_MM[(i + 1) % 4]
        pts.append(cam.mat_to_image(a + t * (b - a)))
        normals.append(np.tile(line.normal, (len(t), 1)))
        offsets.append(np.full(len(t), line.offset_mm))
        kinds.append(np.zeros(len(t), int))
        edges.append(np.full(len(t), i))
    for corner in MAT_CORNERS_MM:
        a, b, line = baseline_segment_mm(corner)
        pts.append(cam.mat_to_image(a + t * (b - a)))
        normals.append(np.tile(line.normal, (len(t), 1)))
        offsets.append(np.full(len(t), line.offset_mm))
        kinds.append(np.ones(len(t), int))
        edges.append(np.full(len(t), -1))
    return Observations(
        np.vstack(pts),
        np.vstack(normals),
        np.concatenate(offsets),
        np.concatenate(kinds),
        np.concatenate(edges),
    )


@pytest.mark.parametrize(
    "position_mm",
    [
        (300.0, -200.0, 1700.0),  # webcam above the mat, slightly off-centre
        (-2100.0, -300.0, 2000.0),  # tripod at the side, about 45 degrees
    ],
)
def test_fit_recovers_the_camera_from_exact_edge_and_baseline_points(position_mm) -> None:
    truth = look_at_camera((1920, 1080), position_mm, k1=-0.09)
    obs = _exact_observations(truth)
    start = initial_camera(truth.mat_to_image(MAT_CORNERS_MM) + 1.5, (1920, 1080))
    fit = fit_camera(start, obs, fit_edge_offsets=True)
    err = np.linalg.norm(fit.camera.image_to_mat(truth.mat_to_image(GRID_MM)) - GRID_MM, axis=1)
    assert err.max() < 0.05
    assert fit.camera.dist_coeffs[0] == pytest.approx(-0.09, abs=0.005)
    np.testing.assert_allclose(fit.edge_offsets_mm, 0.0, atol=0.05)


def test_fit_keeps_given_distortion_when_told_not_to_fit_it() -> None:
    truth = look_at_camera((1920, 1080), (300.0, -200.0, 1700.0), k1=-0.09)
    start = initial_camera(
        truth.mat_to_image(MAT_CORNERS_MM), (1920, 1080), np.array([-0.09, 0, 0, 0, 0])
    )
    fit = fit_camera(start, _exact_observations(truth), fit_distortion=False)
    assert fit.camera.dist_coeffs[0] == -0.09
    err = np.linalg.norm(fit.camera.image_to_mat(truth.mat_to_image(GRID_MM)) - GRID_MM, axis=1)
    assert err.max() < 0.05


@pytest.mark.parametrize(
    "fixed_dist",
    [
        None,  # radial distortion only, as the fit estimates it
        np.array([0.002, -0.0015, 0.01]),  # a lens calibration's tangential terms and k3, given
    ],
)
def test_batched_residuals_agree_with_the_camera_model(fixed_dist) -> None:
    # The fit's vectorised residuals must be the camera's own back-projection,
    # for the parameters it starts from and for ones far off them.
    truth = look_at_camera((1920, 1080), (-2100.0, -300.0, 2000.0), k1=-0.09)
    obs = _exact_observations(truth)
    params = np.tile(_params_from_camera(truth), (4, 1))
    params[1, 1] += 0.2  # k1 off
    params[2, 0] += 0.1  # focal length off by a tenth
    params[3, 5:8] += 0.01  # turned
    params[3, N_CAMERA_PARAMS:] = [1.0, -2.0, 0.5, 0.0]  # edges moved out and in
    batch = _residuals_mm_batch(params, obs, fixed_dist)
    for row, p in zip(batch, params, strict=True):
        camera = _camera_from_params(p, (1920, 1080), fixed_dist)
        np.testing.assert_allclose(row, residuals_mm(camera, obs, p[N_CAMERA_PARAMS:]), atol=1e-8)
    # The true camera's residuals are zero: the points lie on their lines.
    assert fixed_dist is not None or np.abs(batch[0]).max() < 1e-6


def test_fit_keeps_given_tangential_distortion() -> None:
    # --distortion k1,k2,p1,p2,k3 from a lens calibration: all five terms are
    # the lens's, and the fit must not drop p1, p2 and k3.
    given = np.array([-0.09, 0.003, 0.0015, -0.001, 0.002])
    truth = look_at_camera((1920, 1080), (300.0, -200.0, 1700.0), k1=-0.09)
    truth = CameraModel(
        truth.image_size_wh, truth.camera_matrix, given, truth.rotation, truth.translation_mm
    )
    start = initial_camera(truth.mat_to_image(MAT_CORNERS_MM) + 1.0, (1920, 1080), given)
    fit = fit_camera(start, _exact_observations(truth), fit_distortion=False)
    np.testing.assert_array_equal(fit.camera.dist_coeffs, given)
    err = np.linalg.norm(fit.camera.image_to_mat(truth.mat_to_image(GRID_MM)) - GRID_MM, axis=1)
    assert err.max() < 0.05


@pytest.mark.parametrize(
    ("position_mm", "expected_mm"),
    [
        # Straight above the pot: no side face in view.
        ((0.0, 0.0, 1800.0), (0.0, 0.0, 0.0, 0.0)),
        # Tripod 1185.6 mm beyond the x- edge, 2 m up: only x- shows its side,
        # whose foot (4 mm down) projects 1185.6 * 4 / 2004 mm outwards.
        ((-2100.0, -300.0, 2000.0), (0.0, 0.0, 0.0, 1185.6 * 4.0 / 2004.0)),
        # Beyond the y+ and x+ edges at once (a corner view).
        ((1414.4, 957.2, 1000.0), (0.0, 500.0 * 4 / 1004, 500.0 * 4 / 1004, 0.0)),
    ],
)
def test_side_face_shift_is_the_mat_thickness_seen_from_the_camera(
    position_mm, expected_mm
) -> None:
    cam = look_at_camera((1920, 1080), position_mm, k1=0.0)
    np.testing.assert_allclose(side_face_shift_mm(cam), expected_mm, atol=1e-6)


def _with_points_moved(
    truth: CameraModel, obs: Observations, which: np.ndarray, shift_mm: np.ndarray
) -> Observations:
    """``obs`` with the points ``which`` seen ``shift_mm`` (mat plane, (k, 2) or (2,)) away."""
    image_xy = obs.image_xy_px.copy()
    image_xy[which] = truth.mat_to_image(truth.image_to_mat(obs.image_xy_px[which]) + shift_mm)
    return Observations(image_xy, obs.line_normal, obs.line_offset_mm, obs.kind, obs.edge_index)


def _fit_from_rough_corners(
    truth: CameraModel, obs: Observations, **options: bool
) -> tuple[CameraFit, np.ndarray]:
    """Fit from corners 1.5 px off; the result and its mapping error over the mat grid, mm."""
    start = initial_camera(truth.mat_to_image(MAT_CORNERS_MM) + 1.5, (1920, 1080))
    fit = fit_camera(start, obs, fit_edge_offsets=True, **options)
    err = np.linalg.norm(fit.camera.image_to_mat(truth.mat_to_image(GRID_MM)) - GRID_MM, axis=1)
    return fit, err


def test_fit_absorbs_a_near_edge_seen_at_its_side_face_foot() -> None:
    truth = look_at_camera((1920, 1080), (-2100.0, -300.0, 2000.0), k1=-0.05)
    obs = _exact_observations(truth)
    # The x- edge (index 3) is seen 3.5 mm outside, where its side face meets the table.
    obs = _with_points_moved(truth, obs, obs.edge_index == 3, np.array([-3.5, 0.0]))
    fit, err = _fit_from_rough_corners(truth, obs)
    # The widened prior still pulls a little; a flat 1.5 mm prior gave 0.63 mm here.
    assert err.max() < 0.2
    np.testing.assert_allclose(fit.edge_offsets_mm, [0.0, 0.0, 0.0, 3.5], atol=0.2)


def test_an_edge_seen_unevenly_along_its_length_does_not_drag_the_mapping() -> None:
    truth = look_at_camera((1920, 1080), (-2100.0, -300.0, 2000.0), k1=-0.05)
    obs = _exact_observations(truth)
    # The y+ edge (index 2) blurred into the table: found 1 to 4 mm outside,
    # growing along it, with 1 mm of scatter (as on a shared oblique scene).
    rng = np.random.default_rng(3)
    on_y_plus = obs.edge_index == 2
    mat_xy = truth.image_to_mat(obs.image_xy_px[on_y_plus])
    out_mm = 2.5 + 1.5 * mat_xy[:, 0] / 914.4 + rng.normal(0.0, 1.0, len(mat_xy))
    obs = _with_points_moved(truth, obs, on_y_plus, out_mm[:, None] * [0.0, 1.0])
    _, err = _fit_from_rough_corners(truth, obs)
    # Weighting every line alike gave 2.5 mm here.
    assert err.max() < 0.5


def test_with_two_baselines_only_edges_showing_their_side_face_may_move() -> None:
    truth = look_at_camera((1920, 1080), (-2100.0, -300.0, 2000.0), k1=-0.05)
    obs = _exact_observations(truth)
    # Only the two baselines at the near (x-) end were seen.
    obs = obs.subset((obs.kind == 0) | (obs.line_normal[:, 0] < 0))
    obs = _with_points_moved(truth, obs, obs.edge_index == 3, np.array([-3.5, 0.0]))
    fit, err = _fit_from_rough_corners(truth, obs, side_faces_only=True)
    assert err.max() < 0.2
    # The three edges whose side faces are hidden stay where the mat ends.
    np.testing.assert_array_equal(fit.edge_offsets_mm[:3], 0.0)
    assert fit.edge_offsets_mm[3] == pytest.approx(3.5, abs=0.2)


def test_stated_mapping_error_keeps_a_systematic_part_when_the_fit_is_exact() -> None:
    truth = look_at_camera((1920, 1080), (-2100.0, -300.0, 2000.0), k1=-0.05)
    start = initial_camera(truth.mat_to_image(MAT_CORNERS_MM) + 1.5, (1920, 1080))
    fit = fit_camera(start, _exact_observations(truth), fit_edge_offsets=True)
    # The far corners are the coarsest: 0.3 px of edge bias there, however small the
    # residuals.
    coarsest = max(fit.camera.mm_per_px_at([x, y, 0.0]) for x, y in MAT_CORNERS_MM)
    assert mapping_sigma_mm(fit) == pytest.approx(0.3 * coarsest, rel=0.02)


def test_a_fit_trying_an_absurd_focal_length_warns_nobody() -> None:
    """A log focal past exp's range (a fit walking away) gives an infinite focal, silently."""
    params = np.zeros(N_CAMERA_PARAMS)
    params[0] = 800.0  # exp(800) overflows a float
    params[10] = 1500.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        camera = _camera_from_params(params, (640, 480))
    assert np.isinf(camera.camera_matrix[0, 0])
