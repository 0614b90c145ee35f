"""A pinhole camera over the mat for synthetic close-ups, shared by the review's tests.

The camera stands on the mat's -y side and looks at the origin from
``distance_mm``, tilted ``tilt_deg`` from vertical about the mat's x axis;
image x runs along mat x.
"""

from __future__ import annotations

import math

import numpy as np

from vision.closeup_geometry import MatPlane, PinholeIntrinsics


def camera_over_origin(
    tilt_deg: float, distance_mm: float, size_wh: tuple[int, int], hfov_deg: float
) -> tuple[PinholeIntrinsics, np.ndarray, np.ndarray]:
    """Intrinsics, (3, 3) world-to-camera rotation and (3,) translation, mm."""
    intr = PinholeIntrinsics.from_hfov(size_wh[0], size_wh[1], hfov_deg)
    t = math.radians(tilt_deg)
    centre = np.array([0.0, -distance_mm * math.sin(t), distance_mm * math.cos(t)])
    forward = -centre / np.linalg.norm(centre)
    right = np.array([1.0, 0.0, 0.0])
    down = np.cross(forward, right)
    rot = np.vstack([right, down, forward])
    return intr, rot, -rot @ centre


def project(intr: PinholeIntrinsics, rot: np.ndarray, trans: np.ndarray, pts: np.ndarray):
    """(n, 2) image px of (n, 3) mat points, mm."""
    cam = pts @ rot.T + trans
    return np.column_stack(
        [
            intr.focal_px * cam[:, 0] / cam[:, 2] + intr.principal_xy_px[0],
            intr.focal_px * cam[:, 1] / cam[:, 2] + intr.principal_xy_px[1],
        ]
    )


def true_plane(intr: PinholeIntrinsics, rot: np.ndarray, trans: np.ndarray) -> MatPlane:
    """The mat plane as this camera sees it (normal away from the camera)."""
    normal = rot @ np.array([0.0, 0.0, -1.0])
    return MatPlane(intr, normal, float(trans @ normal))
