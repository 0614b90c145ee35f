"""A tiny renderer of a mat seen by a known camera, for known-answer tests.

Every pixel is back-projected onto the table plane and coloured by what lies
there: felt, baseline, a wink behind a baseline, or table. Rendered at twice the
size and averaged down, so edges are anti-aliased like a real photo's.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from rules.board import BASELINE_DISTANCE_MM, Colour

HALF_LENGTH_MM, HALF_WIDTH_MM = 914.4, 457.2
CLOCKWISE = (Colour.BLUE, Colour.GREEN, Colour.RED, Colour.YELLOW)
WINK_BGR = {
    Colour.BLUE: (200, 60, 20),
    Colour.GREEN: (40, 150, 30),
    Colour.RED: (30, 30, 200),
    Colour.YELLOW: (20, 210, 230),
}


def mat_grid_mm(n_long: int, n_short: int) -> npt.NDArray[np.float64]:
    """(n_long * n_short, 2) points in mm evenly covering the mat, edges included."""
    return np.stack(
        [
            g.ravel()
            for g in np.meshgrid(
                np.linspace(-HALF_LENGTH_MM, HALF_LENGTH_MM, n_long),
                np.linspace(-HALF_WIDTH_MM, HALF_WIDTH_MM, n_short),
            )
        ],
        axis=1,
    )


def look_at_camera(
    size_wh: tuple[int, int],
    position_mm: tuple[float, float, float],
    *,
    focal_per_width: float = 0.7,
    k1: float = -0.08,
    target_mm: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> CameraModel:
    """A camera at ``position_mm`` looking at ``target_mm``, image x roughly along mat x."""
    pos = np.asarray(position_mm, np.float64)
    forward = np.asarray(target_mm, np.float64) - pos
    forward /= np.linalg.norm(forward)
    down_hint = np.array([0.0, -1.0, 0.0])
    right = np.cross(down_hint, forward)
    if np.linalg.norm(right) < 1e-6:
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])
    w, h = size_wh
    f = focal_per_width * w
    k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
    return CameraModel(
        image_size_wh=size_wh,
        camera_matrix=k,
        dist_coeffs=np.array([k1, 0.0, 0.0, 0.0, 0.0]),
        rotation=rotation,
        translation_mm=-rotation @ pos,
    )


def render_mat(
    camera: CameraModel,
    *,
    blue_corner_mm: tuple[float, float] | None = (-HALF_LENGTH_MM, HALF_WIDTH_MM),
    felt_bgr: tuple[int, int, int] = (150, 135, 120),
    table_bgr: tuple[int, int, int] = (90, 120, 160),
    line_bgr: tuple[int, int, int] = (235, 235, 235),
    pot_bgr: tuple[int, int, int] | None = None,
    seed: int = 0,
    supersample: int = 2,
    wink_colours: tuple[Colour, ...] = CLOCKWISE,
    table_grain: float = 0.0,
) -> npt.NDArray[np.uint8]:
    """The image ``camera`` would take of a mat with baselines and unplayed winks.

    ``blue_corner_mm`` puts two winks of each colour behind each baseline, blue at
    that corner and the others clockwise (rule 5.2); None leaves the corners empty.
    ``table_grain`` (0-1) stripes the table like wood grain.
    ``wink_colours`` limits which corners hold winks. ``pot_bgr`` stands a pot
    (rule 2.4: 38 mm high, 38 mm across the base, 48 mm across the top) at the
    centre: its top face in that colour, its wall darker.
    """
    w, h = camera.image_size_wh
    ss = supersample
    xs = (np.arange(w * ss) + 0.5) / ss - 0.5
    ys = (np.arange(h * ss) + 0.5) / ss - 0.5
    gx, gy = np.meshgrid(xs, ys)
    mat = camera.image_to_mat(np.stack([gx.ravel(), gy.ravel()], axis=1))
    x, y = mat[:, 0], mat[:, 1]
    img = np.empty((len(x), 3), np.float64)
    img[:] = table_bgr
    if table_grain:
        grain = 1.0 + table_grain * np.sin(y / 7.0 + 3.0 * np.sin(x / 90.0))
        img *= grain[:, None]
    on_mat = (np.abs(x) <= HALF_LENGTH_MM) & (np.abs(y) <= HALF_WIDTH_MM)
    img[on_mat] = felt_bgr
    corners = np.array(
        [
            [sx * HALF_LENGTH_MM, sy * HALF_WIDTH_MM]
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
        ]
    )
    for corner in corners:
        d = corner / np.linalg.norm(corner)
        line = on_mat & (np.abs(x * d[0] + y * d[1] - BASELINE_DISTANCE_MM) < 3.0)
        img[line] = line_bgr
    if blue_corner_mm is not None:
        # Counter-clockwise order of `corners`; colours run clockwise from blue.
        blue_at = int(np.argmin(np.linalg.norm(corners - np.asarray(blue_corner_mm), axis=1)))
        for i, corner in enumerate(corners):
            colour = CLOCKWISE[(blue_at - i) % 4]
            if colour not in wink_colours:
                continue
            d = corner / np.linalg.norm(corner)
            side = np.array([-d[1], d[0]])
            for k in (-1, 1):
                centre = d * (BASELINE_DISTANCE_MM + 45) + side * 25 * k
                disc = (x - centre[0]) ** 2 + (y - centre[1]) ** 2 < 11.0**2
                img[disc] = WINK_BGR[colour]
    if pot_bgr is not None:
        # The pot's wall: the ray passes inside the cone between base and top.
        near = (
            np.linalg.norm(camera.image_to_mat(np.stack([gx.ravel(), gy.ravel()], 1), 19.0), axis=1)
            < 80
        )
        idx = np.flatnonzero(near)
        pts = np.stack([gx.ravel()[idx], gy.ravel()[idx]], axis=1)
        wall = np.zeros(len(idx), bool)
        for z in np.linspace(0.0, 38.0, 39):
            r = np.linalg.norm(camera.image_to_mat(pts, z), axis=1)
            wall |= r <= 19.0 + 5.0 * z / 38.0
        img[idx[wall]] = np.asarray(pot_bgr) * 0.6
        top = np.linalg.norm(camera.image_to_mat(pts, 38.0), axis=1) <= 24.0
        img[idx[top]] = pot_bgr
    big = img.reshape(h * ss, w * ss, 3).astype(np.float32)
    small = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)
    rng = np.random.default_rng(seed)
    noisy = small + rng.normal(0.0, 2.0, small.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)
