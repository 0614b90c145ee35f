"""A calibrated camera: pixels to mat millimetres and back.

The model is OpenCV's pinhole camera with radial/tangential distortion
(k1, k2, p1, p2, k3) and a pose ``x_cam = R @ X_mat + t``. Mat coordinates
are millimetres with the origin at the pot's centre, x along the long side,
y along the short side, z up, the mat's top surface at z = 0. Pixel (0, 0)
is the centre of the top-left pixel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class CameraModel:
    """Intrinsics, distortion and pose of one camera looking at the mat.

    Parameters
    ----------
    image_size_wh : (2,) tuple of int
        Image width and height in pixels.
    camera_matrix : (3, 3) ndarray
        ``[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` in pixels.
    dist_coeffs : (5,) ndarray
        OpenCV order k1, k2, p1, p2, k3.
    rotation : (3, 3) ndarray
        Mat-to-camera rotation R.
    translation_mm : (3,) ndarray
        Mat-to-camera translation t in mm.
    """

    image_size_wh: tuple[int, int]
    camera_matrix: FloatArray
    dist_coeffs: FloatArray
    rotation: FloatArray
    translation_mm: FloatArray

    def __post_init__(self) -> None:
        checks = (
            ("camera_matrix", self.camera_matrix, (3, 3)),
            ("rotation", self.rotation, (3, 3)),
            ("translation_mm", self.translation_mm, (3,)),
        )
        for name, value, shape in checks:
            if np.shape(value) != shape:
                raise ValueError(f"{name} must have shape {shape}, but got shape {np.shape(value)}")
        if np.shape(self.dist_coeffs) not in ((4,), (5,), (8,)):
            raise ValueError(
                "dist_coeffs must have 4, 5 or 8 entries, "
                f"but got shape {np.shape(self.dist_coeffs)}"
            )

    # ---- construction ----------------------------------------------------

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> CameraModel:
        """Build from the ``camera`` block of a scene or calibration file.

        Accepts ``width``, ``height``, ``K``, ``dist``, ``R``, ``t`` as in
        ``shared/scenes/README.md``.
        """
        missing = [k for k in ("width", "height", "K", "dist", "R", "t") if k not in data]
        if missing:
            raise ValueError(f"camera block is missing {missing!r}")
        return cls(
            image_size_wh=(int(data["width"]), int(data["height"])),
            camera_matrix=np.asarray(data["K"], dtype=np.float64),
            dist_coeffs=np.asarray(data["dist"], dtype=np.float64),
            rotation=np.asarray(data["R"], dtype=np.float64),
            translation_mm=np.asarray(data["t"], dtype=np.float64).reshape(3),
        )

    def to_json_dict(self) -> dict[str, Any]:
        """The ``camera`` block: the inverse of :meth:`from_json_dict`."""
        return {
            "width": self.image_size_wh[0],
            "height": self.image_size_wh[1],
            "K": self.camera_matrix.tolist(),
            "dist": self.dist_coeffs.tolist(),
            "R": self.rotation.tolist(),
            "t": self.translation_mm.tolist(),
        }

    def with_half_turn(self) -> CameraModel:
        """The same camera in the mat frame turned through 180 degrees about the pot.

        The mat looks the same both ways round; this is the other of the two
        frames, e.g. once the corner colours show which end is blue's.
        """
        return CameraModel(
            image_size_wh=self.image_size_wh,
            camera_matrix=self.camera_matrix.copy(),
            dist_coeffs=self.dist_coeffs.copy(),
            rotation=self.rotation @ np.diag([-1.0, -1.0, 1.0]),
            translation_mm=self.translation_mm.copy(),
        )

    # ---- derived -------------------------------------------------------------

    @property
    def rvec(self) -> FloatArray:
        """Rotation as a Rodrigues vector, shape (3,)."""
        rvec, _ = cv2.Rodrigues(self.rotation)
        return np.asarray(rvec, dtype=np.float64).reshape(3)

    @property
    def position_mm(self) -> FloatArray:
        """Camera centre in mat mm, shape (3,): ``-R.T @ t``."""
        return np.asarray(-self.rotation.T @ self.translation_mm, dtype=np.float64)

    def mm_per_px_at(self, mat_xyz_mm: Sequence[float]) -> float:
        """Approximate size of one pixel on the mat at a point, in mm.

        Uses the distance from the camera and the focal length; good enough
        for choosing kernel sizes and tolerances, not for measurement.
        """
        point = np.asarray(mat_xyz_mm, dtype=np.float64).reshape(3)
        depth_mm = float((self.rotation @ point + self.translation_mm)[2])
        focal_px = float(np.sqrt(self.camera_matrix[0, 0] * self.camera_matrix[1, 1]))
        return depth_mm / focal_px

    # ---- mapping ---------------------------------------------------------------

    def mat_to_image(self, mat_xyz_mm: npt.ArrayLike) -> FloatArray:
        """Project mat points into the image, distortion included.

        Parameters
        ----------
        mat_xyz_mm : (N, 3) or (N, 2) array_like
            Points in mat mm; (N, 2) means z = 0.

        Returns
        -------
        image_xy_px : (N, 2) ndarray
        """
        pts = np.asarray(mat_xyz_mm, dtype=np.float64)
        if pts.ndim == 1:
            pts = pts[None, :]
        if pts.shape[1] == 2:
            pts = np.hstack([pts, np.zeros((len(pts), 1))])
        if pts.shape[1] != 3:
            raise ValueError(f"mat_xyz_mm must have shape (N, 2) or (N, 3), but got {pts.shape}")
        if len(pts) == 0:
            return np.zeros((0, 2))
        image_xy, _ = cv2.projectPoints(
            pts.reshape(-1, 1, 3),
            self.rvec,
            self.translation_mm,
            self.camera_matrix,
            self.dist_coeffs,
        )
        return np.asarray(image_xy, dtype=np.float64).reshape(-1, 2)

    def undistort_image_points(self, image_xy_px: npt.ArrayLike) -> FloatArray:
        """Remove lens distortion: normalised camera coordinates, shape (N, 2)."""
        pts = np.asarray(image_xy_px, dtype=np.float64).reshape(-1, 1, 2)
        if len(pts) == 0:
            return np.zeros((0, 2))
        norm = cv2.undistortPointsIter(
            pts,
            self.camera_matrix,
            self.dist_coeffs,
            np.eye(3),
            np.eye(3),  # P = identity: return normalised camera coordinates
            (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-10),
        )
        return np.asarray(norm, dtype=np.float64).reshape(-1, 2)

    def image_to_mat(
        self, image_xy_px: npt.ArrayLike, z_mm: float | npt.ArrayLike = 0.0
    ) -> FloatArray:
        """Back-project image points onto the horizontal plane z = ``z_mm``.

        Parameters
        ----------
        image_xy_px : (N, 2) array_like
        z_mm : float or (N,) array_like
            Height of the plane each point lies on, e.g. 0 for the mat's top,
            a wink's thickness for a wink lying on another.

        Returns
        -------
        mat_xy_mm : (N, 2) ndarray
        """
        norm = self.undistort_image_points(image_xy_px)
        rays_cam = np.hstack([norm, np.ones((len(norm), 1))])
        rays_mat = rays_cam @ self.rotation  # R.T @ ray, row-wise
        origin = self.position_mm
        z = np.broadcast_to(np.asarray(z_mm, dtype=np.float64), (len(norm),))
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = (z - origin[2]) / rays_mat[:, 2]
        mat_xyz = origin[None, :] + scale[:, None] * rays_mat
        return np.asarray(mat_xyz[:, :2], dtype=np.float64)
