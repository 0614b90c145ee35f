"""A saved calibration is refused when no real camera could be it, or the camera moved."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from synthetic import look_at_camera, render_mat

from calibration import FailureReason, camera_moved, implausible_camera
from calibration.camera import CameraModel

SIZE_WH = (1280, 720)


@pytest.fixture(scope="module")
def camera() -> CameraModel:
    return look_at_camera(SIZE_WH, (0.0, -300.0, 1900.0), k1=-0.05)


@pytest.fixture(scope="module")
def photo(camera: CameraModel) -> np.ndarray:
    return render_mat(camera, table_grain=0.15)


def _moved_across_the_mat(camera: CameraModel, dx_mm: float, dy_mm: float) -> CameraModel:
    """The same camera shifted over the mat (as if knocked): the mat moves in its picture."""
    shift = camera.rotation @ np.array([dx_mm, dy_mm, 0.0])
    return replace(camera, translation_mm=camera.translation_mm + shift)


def test_the_camera_that_took_the_photo_is_plausible_and_still_fits(
    camera: CameraModel, photo: np.ndarray
) -> None:
    assert implausible_camera(camera) is None
    assert camera_moved(photo, camera) is None


@pytest.mark.parametrize(
    ("dx_mm", "dy_mm"),
    [
        (50.0, 0.0),  # knocked a little along the mat: the short edges show it
        (0.0, -50.0),  # a little across it: the long edges show it
        (250.0, 0.0),  # far: an edge lands on the table, the inside band is not felt
        (0.0, 300.0),  # far across
    ],
)
def test_a_camera_moved_since_calibration_is_refused(
    camera: CameraModel, photo: np.ndarray, dx_mm: float, dy_mm: float
) -> None:
    failure = camera_moved(photo, _moved_across_the_mat(camera, dx_mm, dy_mm))
    assert failure is not None and not failure
    assert failure.reason is FailureReason.CAMERA_MOVED
    assert "moved" in failure.message


@pytest.mark.parametrize(
    ("change", "quoted"),
    [
        ({"rotation": 2.0 * np.eye(3)}, "not a rotation"),  # scaled, det 8
        ({"rotation": np.diag([1.0, 1.0, -1.0])}, "not a rotation"),  # a mirror, det -1
        ({"dist_coeffs": np.array([50.0, 50.0, 0.0, 0.0, 0.0])}, "[50.0, 50.0"),  # k1, k2 typo
        ({"dist_coeffs": np.array([-0.1, 0.0, 0.5, 0.0, 0.0])}, "distortion"),  # p1 far too big
        ({"camera_matrix": np.diag([-900.0, -900.0, 1.0])}, "not positive"),  # focal sign flipped
        ({"translation_mm": np.array([0.0, 0.0, np.nan])}, "not finite"),  # a NaN in the file
    ],
)
def test_a_camera_no_real_camera_can_be_is_refused_quoting_the_fault(
    camera: CameraModel, change: dict[str, np.ndarray], quoted: str
) -> None:
    failure = implausible_camera(replace(camera, **change))
    assert failure is not None
    assert failure.reason is FailureReason.CAMERA_IMPLAUSIBLE
    assert quoted in failure.message


def test_a_camera_below_the_mat_is_refused(camera: CameraModel) -> None:
    # The same camera mirrored through the mat's plane: it looks up at the mat from below.
    flip = np.diag([1.0, -1.0, -1.0])
    below = replace(
        camera,
        rotation=camera.rotation @ flip,
        translation_mm=camera.translation_mm.copy(),
    )
    failure = implausible_camera(below)
    assert failure is not None
    assert "below the mat" in failure.message
