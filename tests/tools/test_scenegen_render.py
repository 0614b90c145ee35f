"""The renderer draws things where the camera model says they are."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from tools.groundtruth import load_scene
from tools.scenegen.render import make_canvas

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"


def _barrel_camera() -> CameraModel:
    rotation, _ = cv2.Rodrigues(np.array([2.9, 0.3, 0.1]))
    position = np.array([200.0, -150.0, 1600.0])
    return CameraModel(
        (480, 270),
        np.array([[310.0, 0, 241.3], [0, 310.0, 133.9], [0, 0, 1]]),
        np.array([-0.09, 0.02, 0.0, 0.0, 0.0]),
        rotation,
        -rotation @ position,
    )


def test_distortion_warp_sends_each_pixel_to_its_undistorted_canvas_point() -> None:
    cam = _barrel_camera()
    canvas = make_canvas(cam)
    rng = np.random.default_rng(3)
    mat_pts = np.column_stack(
        [rng.uniform(-600, 600, 200), rng.uniform(-300, 300, 200), 0 * rng.uniform(size=200)]
    )
    image_px = cam.mat_to_image(mat_pts)
    w, h = cam.image_size_wh
    keep = (
        (image_px[:, 0] > 1)
        & (image_px[:, 0] < w - 2)
        & (image_px[:, 1] > 1)
        & (image_px[:, 1] < h - 2)
    )
    assert keep.sum() > 50
    image_px, mat_pts = image_px[keep], mat_pts[keep]
    sampled_x = cv2.remap(
        canvas.map_x,
        image_px[:, :1].astype(np.float32),
        image_px[:, 1:].astype(np.float32),
        cv2.INTER_LINEAR,
    )
    sampled_y = cv2.remap(
        canvas.map_y,
        image_px[:, :1].astype(np.float32),
        image_px[:, 1:].astype(np.float32),
        cv2.INTER_LINEAR,
    )
    warped = np.column_stack([sampled_x.ravel(), sampled_y.ravel()])
    np.testing.assert_allclose(warped, canvas.project(mat_pts), atol=0.02)


@pytest.mark.parametrize("stem", ["overhead_00101", "overhead_00103", "oblique_00101"])
def test_mat_edges_in_the_picture_sit_on_the_projected_mat_outline(stem: str) -> None:
    scene = load_scene(SAMPLES / f"{stem}.json")
    grey = cv2.imread(str(SAMPLES / f"{stem}.jpg")).astype(np.float32).mean(axis=2)
    cam = scene.camera
    half_l, half_w = scene.mat.length_mm / 2, scene.mat.width_mm / 2
    offsets = []
    for t in np.linspace(-0.8, 0.8, 60):
        for point, normal in (
            ((t * half_l, half_w), (0.0, 1.0)),
            ((t * half_l, -half_w), (0.0, -1.0)),
            ((half_l, t * half_w), (1.0, 0.0)),
            ((-half_l, t * half_w), (-1.0, 0.0)),
        ):
            p = np.array(point)
            a, b = cam.mat_to_image(np.array([p, p + 5.0 * np.array(normal)]))
            d = (b - a) / np.linalg.norm(b - a)
            steps = np.arange(-6, 6.01, 0.25)
            pts = (a[None, :] + steps[:, None] * d[None, :]).astype(np.float32)
            profile = cv2.remap(grey, pts[:, :1], pts[:, 1:], cv2.INTER_LINEAR).ravel()
            inside, outside = profile[:8].mean(), profile[-8:].mean()
            if abs(inside - outside) < 15:
                continue  # too little contrast here to place the edge
            f = (profile - (inside + outside) / 2) * np.sign(inside - outside)
            crossing = np.where((f[:-1] > 0) & (f[1:] <= 0))[0]
            if len(crossing) != 1:
                continue
            i = crossing[0]
            offsets.append(steps[i] + 0.25 * f[i] / (f[i] - f[i + 1]))
    assert len(offsets) > 60
    # Each edge crossing is noisy; their median says whether the drawing is biased.
    assert abs(float(np.median(offsets))) < 0.15
