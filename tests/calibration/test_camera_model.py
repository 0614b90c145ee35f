"""CameraModel: known projections, round trips and shape checks."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import CameraModel


def _looking_down(
    height_mm: float = 1500.0, dist: tuple[float, ...] = (0, 0, 0, 0, 0)
) -> CameraModel:
    # Camera straight above the mat centre: x_cam = X, y_cam = -Y, z_cam = height - Z.
    rotation = np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]])
    return CameraModel(
        image_size_wh=(1920, 1080),
        camera_matrix=np.array([[1200.0, 0, 959.5], [0, 1200.0, 539.5], [0, 0, 1]]),
        dist_coeffs=np.asarray(dist, dtype=float),
        rotation=rotation,
        translation_mm=np.array([0.0, 0.0, height_mm]),
    )


def test_mat_centre_projects_to_principal_point() -> None:
    cam = _looking_down()
    np.testing.assert_allclose(cam.mat_to_image([[0.0, 0.0, 0.0]]), [[959.5, 539.5]], atol=1e-9)


def test_known_point_projects_by_pinhole_formula() -> None:
    cam = _looking_down(height_mm=1500.0)
    # 300 mm along +x at 1500 mm depth: 1200 * 300 / 1500 = 240 px right of centre.
    np.testing.assert_allclose(cam.mat_to_image([[300.0, 0.0]]), [[1199.5, 539.5]], atol=1e-9)
    assert cam.position_mm == pytest.approx([0.0, 0.0, 1500.0])


@pytest.mark.parametrize(
    ("dist", "z_mm"),
    [
        ((0, 0, 0, 0, 0), 0.0),  # ideal pinhole, mat surface
        ((-0.12, 0.05, 0.001, -0.0005, 0.0), 0.0),  # webcam barrel distortion
        ((-0.12, 0.05, 0.0, 0.0, 0.0), 3.0),  # a wink lying on another wink
    ],
)
def test_image_to_mat_inverts_mat_to_image(dist: tuple[float, ...], z_mm: float) -> None:
    cam = _looking_down(dist=dist)
    rng = np.random.default_rng(3)
    mat_xy = rng.uniform([-900, -450], [900, 450], size=(50, 2))
    mat_xyz = np.hstack([mat_xy, np.full((50, 1), z_mm)])
    back = cam.image_to_mat(cam.mat_to_image(mat_xyz), z_mm=z_mm)
    np.testing.assert_allclose(back, mat_xy, atol=1e-3)


def test_raised_point_seen_off_centre_shifts_outwards_on_the_mat_plane() -> None:
    # Parallax: a point 3 mm up, 900 mm off-centre, seen from 1500 mm, appears
    # 900 * 3 / (1500 - 3) = 1.80 mm further out when read on the mat plane.
    cam = _looking_down(height_mm=1500.0)
    seen = cam.image_to_mat(cam.mat_to_image([[900.0, 0.0, 3.0]]), z_mm=0.0)
    assert seen[0, 0] - 900.0 == pytest.approx(900.0 * 3.0 / 1497.0, abs=1e-3)


def test_json_round_trip() -> None:
    cam = _looking_down(dist=(-0.1, 0.02, 0, 0, 0))
    again = CameraModel.from_json_dict(cam.to_json_dict())
    np.testing.assert_allclose(again.mat_to_image([[10.0, 20.0]]), cam.mat_to_image([[10.0, 20.0]]))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("camera_matrix", np.eye(2), "camera_matrix must have shape"),  # 2x2 intrinsics
        ("rotation", np.eye(4), "rotation must have shape"),  # 4x4 rotation
        ("dist_coeffs", np.zeros(3), "dist_coeffs must have 4, 5 or 8"),  # 3 coefficients
    ],
)
def test_bad_shapes_are_rejected_with_what_was_expected(
    field: str, value: np.ndarray, message: str
) -> None:
    good = _looking_down()
    kwargs = {
        "image_size_wh": good.image_size_wh,
        "camera_matrix": good.camera_matrix,
        "dist_coeffs": good.dist_coeffs,
        "rotation": good.rotation,
        "translation_mm": good.translation_mm,
        field: value,
    }
    with pytest.raises(ValueError, match=message):
        CameraModel(**kwargs)


def test_missing_camera_fields_are_named() -> None:
    with pytest.raises(ValueError, match="'K'"):
        CameraModel.from_json_dict({"width": 10, "height": 10, "dist": [0] * 5, "R": [], "t": []})


def test_half_turn_maps_each_point_to_its_opposite() -> None:
    cam = _looking_down(dist=(-0.1, 0.02, 0, 0, 0))
    turned = cam.with_half_turn()
    points = np.array([[300.0, -120.0, 0.0], [-850.0, 400.0, 1.7]])
    opposite = points * np.array([-1.0, -1.0, 1.0])
    np.testing.assert_allclose(turned.mat_to_image(opposite), cam.mat_to_image(points), atol=1e-9)
    np.testing.assert_allclose(turned.with_half_turn().rotation, cam.rotation)
