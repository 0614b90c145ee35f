"""Camera poses and lenses for each profile (see the scenes README)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from tools.scenegen.geometry import HALF_LENGTH_MM, HALF_WIDTH_MM

MAT_CORNERS_MM = np.array(
    [
        [-HALF_LENGTH_MM, -HALF_WIDTH_MM, 0.0],
        [HALF_LENGTH_MM, -HALF_WIDTH_MM, 0.0],
        [HALF_LENGTH_MM, HALF_WIDTH_MM, 0.0],
        [-HALF_LENGTH_MM, HALF_WIDTH_MM, 0.0],
    ]
)


@dataclass(frozen=True)
class SampledCamera:
    """A camera and the descriptive numbers that go into the ground truth."""

    model: CameraModel
    info: dict[str, Any] = field(default_factory=dict)


def scaled(sampled: SampledCamera, factor: float) -> SampledCamera:
    """The same camera with an image ``factor`` times the size (pose unchanged).

    Pixel centres sit at integers, so a pixel coordinate ``u`` becomes
    ``(u + 0.5) * s - 0.5`` with ``s`` the exact ratio of the rounded sizes.
    """
    w, h = sampled.model.image_size_wh
    new_w, new_h = max(8, round(w * factor)), max(8, round(h * factor))
    sx, sy = new_w / w, new_h / h
    k = sampled.model.camera_matrix.copy()
    k[0, 0] *= sx
    k[1, 1] *= sy
    k[0, 2] = (k[0, 2] + 0.5) * sx - 0.5
    k[1, 2] = (k[1, 2] + 0.5) * sy - 0.5
    model = CameraModel(
        (new_w, new_h),
        k,
        sampled.model.dist_coeffs.copy(),
        sampled.model.rotation.copy(),
        sampled.model.translation_mm.copy(),
    )
    return SampledCamera(model, dict(sampled.info))


def look_at(
    position: npt.ArrayLike, target: npt.ArrayLike, right_hint: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Rotation (world to OpenCV camera) looking from ``position`` at ``target``.

    ``right_hint`` is the world direction that should run left to right in
    the image (made perpendicular to the optical axis).
    """
    pos = np.asarray(position, dtype=np.float64)
    z = np.asarray(target, dtype=np.float64) - pos
    z /= np.linalg.norm(z)
    h = np.asarray(right_hint, dtype=np.float64)
    x = h - np.dot(h, z) * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    rot = np.vstack([x, y, z])
    return rot, -rot @ pos


def intrinsics(width: int, height: int, hfov_deg: float, rng: np.random.Generator) -> np.ndarray:
    """Square pixels, principal point a little off centre."""
    f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
    cx = (width - 1) / 2 + float(rng.normal(0, width * 0.006))
    cy = (height - 1) / 2 + float(rng.normal(0, height * 0.006))
    return np.array([[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]])


def _fits(model: CameraModel, points_mm: np.ndarray, margin_px: float) -> bool:
    cam = (model.rotation @ points_mm.T).T + model.translation_mm
    if np.any(cam[:, 2] <= 100.0):
        return False
    px = model.mat_to_image(points_mm)
    w, h = model.image_size_wh
    return bool(
        np.all(px[:, 0] > margin_px)
        and np.all(px[:, 0] < w - 1 - margin_px)
        and np.all(px[:, 1] > margin_px)
        and np.all(px[:, 1] < h - 1 - margin_px)
    )


def _info(model: CameraModel, extra: dict[str, float]) -> dict[str, Any]:
    pos = model.position_mm
    hfov = 2 * math.degrees(math.atan((model.image_size_wh[0] / 2) / model.camera_matrix[0, 0]))
    return {
        "position_mm": pos.tolist(),
        "model": (
            "opencv pinhole + radial/tangential distortion (k1,k2,p1,p2,k3); "
            "x_cam = R*X_world + t; pixel (0,0) = centre of top-left pixel"
        ),
        **extra,
        "hfov_deg": hfov,
    }


def _optical_axis_tilt_deg(model: CameraModel) -> float:
    z_axis_world = model.rotation[2]  # camera z in world coordinates
    return math.degrees(math.acos(min(1.0, abs(float(z_axis_world[2])))))


def overhead(rng: np.random.Generator) -> SampledCamera:
    """A 1080p webcam 1.3-2.0 m above the mat, tilted 0-20 degrees, any yaw."""
    margin_pts = np.vstack([MAT_CORNERS_MM * [1.03, 1.06, 1.0]])
    for _ in range(400):
        height = float(rng.uniform(1300.0, 2000.0))
        tilt = math.radians(float(rng.uniform(0.0, 20.0)))
        az = float(rng.uniform(0, 2 * math.pi))
        target = np.array([rng.normal(0, 60.0), rng.normal(0, 40.0), 0.0])
        dist = height / math.cos(tilt)
        pos = target + dist * np.array(
            [math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)]
        )
        yaw = float(rng.choice([0.0, math.pi]) + rng.uniform(-0.6, 0.6))
        rot, t = look_at(pos, target, (math.cos(yaw), math.sin(yaw), 0.0))
        k = intrinsics(1920, 1080, float(rng.uniform(68.0, 82.0)), rng)
        dist_coeffs = np.array(
            [float(rng.uniform(-0.11, -0.03)), float(rng.uniform(0.0, 0.03)), 0.0, 0.0, 0.0]
        )
        model = CameraModel((1920, 1080), k, dist_coeffs, rot, t)
        if _fits(model, margin_pts, 20.0):
            info = _info(
                model, {"height_mm": float(pos[2]), "tilt_deg": _optical_axis_tilt_deg(model)}
            )
            return SampledCamera(model, info)
    raise RuntimeError("no overhead camera fitted the mat; this is a generator bug")


def oblique(rng: np.random.Generator) -> SampledCamera:
    """A tripod at the side of the table, 35-55 degrees from vertical, whole mat in view."""
    width, height = (1920, 1080) if rng.random() < 0.5 else (2560, 1440)
    for _ in range(400):
        angle = math.radians(float(rng.uniform(35.0, 55.0)))
        dist = float(rng.uniform(1900.0, 3200.0))
        # From a long side or a short side, a little off the middle.
        az = float(rng.choice([0.0, 0.5, 1.0, 1.5]) * math.pi + rng.uniform(-0.35, 0.35))
        target = np.array([rng.normal(0, 40.0), rng.normal(0, 30.0), 0.0])
        pos = target + dist * np.array(
            [math.sin(angle) * math.cos(az), math.sin(angle) * math.sin(az), math.cos(angle)]
        )
        # Level horizon: "right" is horizontal and perpendicular to the view direction.
        right = (-math.sin(az), math.cos(az), 0.0)
        rot, t = look_at(pos, target, right)
        k = intrinsics(width, height, float(rng.uniform(58.0, 72.0)), rng)
        dist_coeffs = np.array(
            [float(rng.uniform(-0.1, -0.02)), float(rng.uniform(0.0, 0.03)), 0.0, 0.0, 0.0]
        )
        model = CameraModel((width, height), k, dist_coeffs, rot, t)
        if _fits(model, MAT_CORNERS_MM * [1.02, 1.04, 1.0], 15.0):
            info = _info(
                model,
                {
                    "distance_mm": float(np.linalg.norm(pos - target)),
                    "angle_from_vertical_deg": _optical_axis_tilt_deg(model),
                },
            )
            return SampledCamera(model, info)
    raise RuntimeError("no oblique camera fitted the mat; this is a generator bug")


def closeup(rng: np.random.Generator, target_mm: npt.ArrayLike) -> SampledCamera:
    """A phone 15-40 cm from a target point, 0-45 degrees from vertical."""
    target = np.asarray(target_mm, dtype=np.float64) + [
        float(rng.normal(0, 6.0)),
        float(rng.normal(0, 6.0)),
        0.0,
    ]
    angle = math.radians(float(rng.uniform(0.0, 45.0)))
    dist = float(rng.uniform(150.0, 400.0))
    az = float(rng.uniform(0, 2 * math.pi))
    pos = target + dist * np.array(
        [math.sin(angle) * math.cos(az), math.sin(angle) * math.sin(az), math.cos(angle)]
    )
    roll = float(rng.uniform(0, 2 * math.pi))
    hint = (math.cos(roll), math.sin(roll), 0.0)
    if angle > math.radians(8):
        # A hand-held phone keeps its horizon roughly level.
        base = math.atan2(math.cos(az), -math.sin(az)) + float(rng.normal(0, 0.15))
        hint = (math.cos(base), math.sin(base), 0.0)
    rot, t = look_at(pos, target, hint)
    k = intrinsics(4032, 3024, float(rng.uniform(64.0, 72.0)), rng)
    dist_coeffs = np.array(
        [float(rng.uniform(-0.03, 0.03)), float(rng.uniform(-0.02, 0.02)), 0.0, 0.0, 0.0]
    )
    model = CameraModel((4032, 3024), k, dist_coeffs, rot, t)
    info = _info(
        model,
        {
            "distance_mm": float(np.linalg.norm(pos - target)),
            "angle_from_vertical_deg": _optical_axis_tilt_deg(model),
        },
    )
    return SampledCamera(model, info)


def partial(rng: np.random.Generator) -> SampledCamera:
    """An overhead webcam aimed off-centre, so part of the mat is out of frame."""
    for _ in range(400):
        height = float(rng.uniform(1300.0, 2000.0))
        tilt = math.radians(float(rng.uniform(0.0, 15.0)))
        az = float(rng.uniform(0, 2 * math.pi))
        target = np.array(
            [float(rng.choice([-1, 1]) * rng.uniform(450.0, 750.0)), rng.normal(0, 80.0), 0.0]
        )
        pos = target + (height / math.cos(tilt)) * np.array(
            [math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)]
        )
        yaw = float(rng.choice([0.0, math.pi]) + rng.uniform(-0.4, 0.4))
        rot, t = look_at(pos, target, (math.cos(yaw), math.sin(yaw), 0.0))
        k = intrinsics(1920, 1080, float(rng.uniform(55.0, 70.0)), rng)
        dist_coeffs = np.array([float(rng.uniform(-0.08, -0.02)), 0.01, 0.0, 0.0, 0.0])
        model = CameraModel((1920, 1080), k, dist_coeffs, rot, t)
        corners_in = sum(_fits(model, c[None, :], 0.0) for c in MAT_CORNERS_MM)
        if 1 <= corners_in <= 2 and _fits(model, np.zeros((1, 3)), 100.0):
            info = _info(
                model, {"height_mm": float(pos[2]), "tilt_deg": _optical_axis_tilt_deg(model)}
            )
            return SampledCamera(model, info)
    raise RuntimeError("no partial-view camera found; this is a generator bug")


def nomat(rng: np.random.Generator) -> SampledCamera:
    """An overhead webcam over a table with no mat on it."""
    return overhead(rng)
