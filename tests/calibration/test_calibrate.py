"""calibrate(): known answers on rendered mats, the canonical frame, manual corners, JSON."""

from __future__ import annotations

import numpy as np
import pytest

from calibration import (
    Calibration,
    CalibrationFailure,
    FailureReason,
    MatFit,
    MatPartlyOutOfFrameError,
    NoMatFoundError,
    calibrate,
    find_mat,
)
from calibration.fit import MAT_CORNERS_MM
from rules.board import Colour
from tests.calibration.synthetic import look_at_camera, mat_grid_mm, render_mat

GRID_MM = mat_grid_mm(31, 15)
SIZE_WH = (800, 450)


def _mapping_error_mm(cal: Calibration, truth, *, turned: bool = False) -> np.ndarray:
    """How far our mapping puts the true images of grid points, in mm."""
    ours = cal.camera.image_to_mat(truth.mat_to_image(GRID_MM))
    return np.linalg.norm((-ours if turned else ours) - GRID_MM, axis=1)


@pytest.fixture(scope="module")
def overhead():
    # Webcam 1.7 m up, a little off-centre, blue-grey felt, blue's corner at (-x, +y).
    truth = look_at_camera(SIZE_WH, (250.0, -300.0, 1700.0))
    return truth, render_mat(truth, pot_bgr=(235, 235, 235))


@pytest.fixture(scope="module")
def overhead_cal(overhead):
    return calibrate(overhead[1])


def test_overhead_mapping_is_within_a_third_of_a_pixel(overhead, overhead_cal) -> None:
    truth, _ = overhead
    # About 3 mm per pixel at this size: 1 mm is a third of a pixel.
    assert _mapping_error_mm(overhead_cal, truth).max() < 1.0
    corners = overhead_cal.camera.mat_to_image(MAT_CORNERS_MM)
    np.testing.assert_allclose(corners, truth.mat_to_image(MAT_CORNERS_MM), atol=0.3)


def test_overhead_distortion_and_baselines_are_found(overhead_cal) -> None:
    assert overhead_cal.camera.dist_coeffs[0] == pytest.approx(-0.08, abs=0.02)
    assert all(b.found for b in overhead_cal.baselines)
    assert overhead_cal.reprojection_rms_px < 0.5


def test_the_pot_rim_is_found_at_the_centre_and_48_mm_across(overhead_cal) -> None:
    pot = overhead_cal.pot
    assert pot is not None and pot.found
    # Rule 2.4: at the centre, 48 mm across the top; 1 mm is a third of a pixel here.
    assert np.hypot(*pot.centre_mm) < 1.0
    assert pot.radius_mm == pytest.approx(24.0, abs=1.0)


def test_corner_winks_fix_blue_at_its_corner(overhead_cal) -> None:
    assert overhead_cal.orientation_known
    assert overhead_cal.corners_mm is not None
    # Rule 5.2: clockwise from above, blue, green, red, yellow.
    assert overhead_cal.corners_mm[Colour.BLUE] == pytest.approx((-914.4, 457.2))
    assert overhead_cal.corners_mm[Colour.GREEN] == pytest.approx((914.4, 457.2))
    assert overhead_cal.corners_mm[Colour.RED] == pytest.approx((914.4, -457.2))
    assert overhead_cal.colour.source == "winks"
    assert set(overhead_cal.colour.wink_lab) == set(Colour)
    blue_lab = overhead_cal.colour.wink_lab[Colour.BLUE]
    assert blue_lab[2] < 128 - 20  # b* well towards blue


def test_blue_corner_below_the_x_axis_turns_the_frame_half_round() -> None:
    truth = look_at_camera(SIZE_WH, (250.0, -300.0, 1700.0))
    image = render_mat(truth, blue_corner_mm=(914.4, -457.2), seed=1)
    cal = calibrate(image)
    assert cal.orientation_known
    assert cal.corners_mm is not None
    assert cal.corners_mm[Colour.BLUE][1] > 0
    # The truth's frame has blue at y < 0: ours is it turned through 180 degrees.
    assert _mapping_error_mm(cal, truth, turned=True).max() < 1.0


def test_one_corner_of_red_winks_is_enough_to_fix_the_frame() -> None:
    truth = look_at_camera(SIZE_WH, (-150.0, 250.0, 1750.0))
    image = render_mat(truth, blue_corner_mm=(914.4, 457.2), wink_colours=(Colour.RED,), seed=4)
    cal = calibrate(image)
    assert cal.orientation_known
    assert cal.corners_mm is not None
    # Blue at (+x, +y) puts red, two corners on, at (-x, -y).
    assert cal.corners_mm[Colour.RED] == pytest.approx((-914.4, -457.2))
    assert set(cal.colour.wink_lab) == {Colour.RED}
    assert _mapping_error_mm(cal, truth).max() < 1.0


def test_oblique_view_without_winks_maps_well_but_orientation_is_unknown() -> None:
    # Tripod at the side of the table, about 45 degrees from vertical, grey felt.
    truth = look_at_camera(SIZE_WH, (-2000.0, -300.0, 1900.0), k1=-0.05)
    image = render_mat(truth, blue_corner_mm=None, felt_bgr=(150, 150, 145), seed=2)
    cal = calibrate(image)
    assert not cal.orientation_known
    assert cal.corners_mm is None
    assert cal.colour.source == "felt"
    err = min(_mapping_error_mm(cal, truth).max(), _mapping_error_mm(cal, truth, turned=True).max())
    # The far side is ~6 mm per pixel here.
    assert err < 2.0


def test_hand_given_corners_a_few_pixels_off_are_refined(overhead) -> None:
    truth, image = overhead
    rng = np.random.default_rng(3)
    rough = truth.mat_to_image(MAT_CORNERS_MM) + rng.normal(0.0, 2.0, (4, 2))
    cal = calibrate(image, corners_image_px=rough[[2, 0, 3, 1]])  # any order will do
    assert cal.method == "manual-corners"
    assert _mapping_error_mm(cal, truth).max() < 1.0


def test_known_distortion_is_kept(overhead) -> None:
    truth, image = overhead
    cal = calibrate(image, dist_coeffs=[-0.08, 0.0, 0.0, 0.0, 0.0])
    assert cal.camera.dist_coeffs[0] == -0.08
    assert _mapping_error_mm(cal, truth).max() < 1.0


def test_calibration_survives_a_json_round_trip(overhead_cal) -> None:
    again = Calibration.from_json_dict(overhead_cal.to_json_dict())
    np.testing.assert_allclose(again.camera.camera_matrix, overhead_cal.camera.camera_matrix)
    np.testing.assert_allclose(again.camera.rotation, overhead_cal.camera.rotation)
    np.testing.assert_allclose(again.corners_image_xy_px, overhead_cal.corners_image_xy_px)
    assert again.corners_mm == overhead_cal.corners_mm
    assert again.orientation_known == overhead_cal.orientation_known
    assert set(again.colour.wink_lab) == set(overhead_cal.colour.wink_lab)
    assert again.to_json_dict() == overhead_cal.to_json_dict()


def test_find_mat_returns_a_fit_or_a_falsy_failure(overhead) -> None:
    _, image = overhead
    found = find_mat(image)
    assert isinstance(found, MatFit) and found
    table = np.full((450, 800, 3), (90, 120, 160), np.uint8)
    failure = find_mat(table)
    assert isinstance(failure, CalibrationFailure) and not failure
    assert failure.reason is FailureReason.NO_MAT


def test_a_mat_without_baselines_needs_its_corners_by_hand() -> None:
    # Rule A.2 allows a mat with no baselines; found automatically, four edges
    # alone could be any rectangle (a table, planks), so the corners must be given.
    truth = look_at_camera(SIZE_WH, (250.0, -300.0, 1700.0))
    felt = (150, 135, 120)
    image = render_mat(truth, felt_bgr=felt, line_bgr=felt, blue_corner_mm=None, seed=5)
    # Refused, never accepted silently (which refusal depends on what else is in view).
    with pytest.raises((NoMatFoundError, MatPartlyOutOfFrameError)):
        calibrate(image)
    cal = calibrate(image, corners_image_px=truth.mat_to_image(MAT_CORNERS_MM))
    assert not any(b.found for b in cal.baselines)
    err = min(_mapping_error_mm(cal, truth).max(), _mapping_error_mm(cal, truth, turned=True).max())
    assert err < 2.0
