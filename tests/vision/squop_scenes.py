"""Synthetic frames with a known answer for the squop, status and pipeline tests.

A camera 2 m above the pot looking straight down (or tilted), a felt mat on a
dark table, the pot, and winks drawn as filled discs at their heights, lower
winks first so that upper ones cover them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.board import (
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    POT_HEIGHT_MM,
    POT_TOP_DIAMETER_MM,
    Colour,
    WinkSize,
)
from vision.detections import WinkDetections

FELT_BGR = (150, 175, 190)
TABLE_BGR = (40, 45, 50)
WINK_BGR = {
    Colour.BLUE: (170, 70, 30),
    Colour.GREEN: (60, 150, 40),
    Colour.RED: (40, 40, 200),
    Colour.YELLOW: (40, 200, 225),
}


def overhead_camera(
    width: int = 1920, height: int = 1080, tilt_deg: float = 0.0, height_mm: float = 1600.0
) -> CameraModel:
    """A camera above the pot, optionally tilted about the x axis."""
    focal = 0.62 * width * height_mm / MAT_LENGTH_MM
    k = np.array([[focal, 0, (width - 1) / 2], [0, focal, (height - 1) / 2], [0, 0, 1.0]])
    down = np.diag([1.0, -1.0, -1.0])  # looking down, image y along -mat y
    t = np.radians(tilt_deg)
    tilt = np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
    rotation = tilt @ down
    position = np.array([0.0, -np.tan(t) * height_mm, height_mm])
    return CameraModel(
        image_size_wh=(width, height),
        camera_matrix=k,
        dist_coeffs=np.zeros(5),
        rotation=rotation,
        translation_mm=-rotation @ position,
    )


def camera_at(position_mm: tuple[float, float, float]) -> CameraModel:
    """A camera at ``position_mm`` looking at the mat's centre (image y towards -z)."""
    centre = np.asarray(position_mm, dtype=float)
    forward = -centre / np.linalg.norm(centre)
    right = np.cross(forward, [0.0, 1.0, 0.0] if abs(forward[1]) < 0.9 else [1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])
    return CameraModel(
        image_size_wh=(1920, 1080),
        camera_matrix=np.array([[1150.0, 0, 959.5], [0, 1150.0, 539.5], [0, 0, 1]]),
        dist_coeffs=np.zeros(5),
        rotation=rotation,
        translation_mm=-rotation @ centre,
    )


@dataclass(frozen=True)
class SceneWink:
    """One wink of a synthetic scene: plan centre and the height of its top face."""

    colour: Colour
    size: WinkSize
    x_mm: float
    y_mm: float
    top_z_mm: float = 1.5

    @property
    def radius_mm(self) -> float:
        return self.size.diameter_mm / 2


def _rim_px(camera: CameraModel, x: float, y: float, z: float, r: float) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    pts = np.stack([x + r * np.cos(a), y + r * np.sin(a), np.full_like(a, z)], 1)
    return camera.mat_to_image(pts)


def _fill(image: np.ndarray, poly_px: np.ndarray, bgr: Sequence[int]) -> None:
    cv2.fillPoly(image, [np.round(poly_px * 16).astype(np.int32)], bgr, cv2.LINE_AA, 4)


def render(camera: CameraModel, winks: Sequence[SceneWink], *, pot: bool = True) -> np.ndarray:
    """The frame: table, mat, pot and winks, lowest first."""
    w, h = camera.image_size_wh
    image = np.full((h, w, 3), TABLE_BGR, np.uint8)
    hx, hy = MAT_LENGTH_MM / 2, MAT_WIDTH_MM / 2
    mat = camera.mat_to_image(np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]]))
    _fill(image, mat, FELT_BGR)
    if pot:
        _fill(image, _rim_px(camera, 0, 0, POT_HEIGHT_MM, POT_TOP_DIAMETER_MM / 2), (235, 235, 235))
        _fill(
            image,
            _rim_px(camera, 0, 0, POT_HEIGHT_MM, POT_TOP_DIAMETER_MM / 2 - 2),
            (200, 200, 200),
        )
    for wk in sorted(winks, key=lambda k: k.top_z_mm):
        rim = _rim_px(camera, wk.x_mm, wk.y_mm, wk.top_z_mm, wk.radius_mm)
        _fill(image, rim, tuple(int(0.6 * c) for c in WINK_BGR[wk.colour]))  # dark side
        inner = _rim_px(camera, wk.x_mm, wk.y_mm, wk.top_z_mm, wk.radius_mm - 0.8)
        _fill(image, inner, WINK_BGR[wk.colour])
    return image


def detections_for(
    camera: CameraModel,
    winks: Sequence[SceneWink],
    *,
    centre_sigma_mm: float = 0.2,
    noise_mm: Sequence[Sequence[float]] | None = None,
) -> WinkDetections:
    """What a detector would report: each top face's image centre, plan position as if flat.

    ``noise_mm`` optionally shifts each image centre by that many mm (x, y) on the mat.
    """
    n = len(winks)
    top = np.array([[k.x_mm, k.y_mm, k.top_z_mm] for k in winks], float).reshape(n, 3)
    if noise_mm is not None:
        top[:, :2] += np.asarray(noise_mm, float)
    image_xy = camera.mat_to_image(top) if n else np.zeros((0, 2))
    mat_xy = camera.image_to_mat(image_xy, 1.5) if n else np.zeros((0, 2))
    return WinkDetections(
        image_xy_px=image_xy,
        mat_xy_mm=mat_xy,
        z_mm=np.full(n, 1.5),
        radius_mm=np.array([k.radius_mm for k in winks], float),
        colour=np.array([k.colour for k in winks], dtype=object),
        size=np.array([k.size for k in winks], dtype=object),
        confidence=np.full(n, 0.9),
        rim_visible_fraction=np.ones(n),
        centre_sigma_mm=np.full(n, centre_sigma_mm),
    )
