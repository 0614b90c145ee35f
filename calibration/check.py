"""Whether a saved calibration can be used: a real camera, and the mat still where it says.

A calibration file is made once and reused for every later frame or photo.
It may have been edited by hand, come from another camera, or the camera may
have been knocked since. Each check returns None when the calibration can be
used, or a falsy :class:`~calibration.mat.CalibrationFailure` that says why not.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from calibration.fit import edge_lines
from calibration.mat import CalibrationFailure, FailureReason
from calibration.pipeline import band_steps, edge_band_colours, median_lab_at

FloatArray = npt.NDArray[np.float64]

#: Largest plausible radial (k1, k2, k3, ...) and tangential (p1, p2) distortion
#: coefficients, in OpenCV's model. Webcam and phone lenses have |k1|, |k2| well
#: under 1 and tangential terms of a few thousandths; beyond these is a typing
#: slip or another model's (e.g. fisheye) numbers, which would bend the mat wildly.
MAX_RADIAL_COEFFICIENT = 2.0
MAX_TANGENTIAL_COEFFICIENT = 0.1
#: How far R^T R may be from the identity and still be a rotation (rounding in a file).
ROTATION_TOLERANCE = 1e-3
#: Offsets of the mat's edges (mm, along the outward normal) at which the colour
#: step is compared with the step at the calibrated edge. Mostly inwards: on
#: the felt nothing steps like its edge, but outside the table's own edge
#: against the floor may step more (a fresh scene had one 120 mm out). A move
#: outwards on one edge is a move inwards on the opposite one.
_SEARCH_OFFSETS_MM = np.arange(-120.0, 41.0, 20.0)
#: The step at a calibrated edge must be at least this share of the strongest
#: step within the search: on 53 scenes (shared, samples, five felts) the
#: calibration's own camera gave at least 0.80 on every edge, and the same
#: camera moved 50 mm across the mat at most 0.23 (searching 120 mm both ways).
MIN_STEP_AT_EDGE = 0.5
#: The band just inside each edge must be the felt: its colour off the felt's
#: (measured round the pot) by at most this many times the edge's step. The
#: calibration's own camera gave at most 3.1 (a pale mat on a pale table, its
#: bands shaded by the light's fall-off); a camera moved 250 mm puts an inside
#: band on the table, 5-300 times.
MAX_INSIDE_OFF_FELT = 4.0


def implausible_camera(camera: CameraModel) -> CalibrationFailure | None:
    """Why ``camera`` cannot be a real camera over the mat, or None if it can.

    A rotation that is not one, a camera below the mat or looking away from
    it, a non-positive focal length, or a lens distortion no webcam or phone
    has.
    """
    matrix = camera.camera_matrix
    values = np.concatenate(
        [matrix.ravel(), camera.dist_coeffs, camera.rotation.ravel(), camera.translation_mm]
    )
    if not np.all(np.isfinite(values)):
        return _implausible("a number in it is not finite (NaN or infinity)")
    if matrix[0, 0] <= 0 or matrix[1, 1] <= 0:
        return _implausible(
            f"its focal length ({matrix[0, 0]:.6g}, {matrix[1, 1]:.6g} px) is not positive"
        )
    rotation = camera.rotation
    off = float(np.abs(rotation.T @ rotation - np.eye(3)).max())
    if off > ROTATION_TOLERANCE or np.linalg.det(rotation) <= 0:
        return _implausible(
            f"its R is not a rotation (R^T R is off the identity by {off:.3g}, "
            f"det R = {np.linalg.det(rotation):.3g})"
        )
    centre_mm = -rotation.T @ camera.translation_mm
    if centre_mm[2] <= 0:
        return _implausible(
            f"it puts the camera {abs(centre_mm[2]):.0f} mm below the mat's top, not above it"
        )
    if camera.translation_mm[2] <= 0:
        return _implausible("it puts the mat's centre behind the camera")
    coefficients = camera.dist_coeffs.ravel()
    tangential = coefficients[2:4]
    radial = np.delete(coefficients, [2, 3])
    if (
        np.abs(radial).max() > MAX_RADIAL_COEFFICIENT
        or np.abs(tangential).max() > MAX_TANGENTIAL_COEFFICIENT
    ):
        return _implausible(
            f"its lens distortion {np.round(coefficients, 4).tolist()} is more than any "
            f"webcam or phone lens has (|k| at most {MAX_RADIAL_COEFFICIENT}, |p| at most "
            f"{MAX_TANGENTIAL_COEFFICIENT})"
        )
    return None


def _implausible(why: str) -> CalibrationFailure:
    return CalibrationFailure(FailureReason.CAMERA_IMPLAUSIBLE, f"not a real camera: {why}")


def camera_moved(
    image_bgr: npt.NDArray[np.uint8], camera: CameraModel
) -> CalibrationFailure | None:
    """Why the photo does not show the mat where ``camera`` puts it, or None if it does.

    A mat's edge is where felt gives way to table, so across each edge the
    camera predicts, the colour must step more than it does a little to
    either side, and the band just inside must be the felt. A camera knocked
    after calibration moves the mat in the picture: an edge predicted on
    plain felt or plain table fails one of the two. An edge whose outside is
    not in the picture is not judged. A turn about the mat's centre keeps each
    edge's middle near its line: one of a few degrees is not seen (see
    ``benchmarks/calibration_file_check.py``).

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    camera : CameraModel
        In the mat frame, for an image of this size.
    """
    lab = np.asarray(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2Lab), np.float32)
    bands_by_offset = [edge_band_colours(lab, camera, offset_mm=d) for d in _SEARCH_OFFSETS_MM]
    steps = np.array([band_steps(b) for b in bands_by_offset])
    zero = list(_SEARCH_OFFSETS_MM).index(0.0)
    bands, at_edge = bands_by_offset[zero], steps[zero]
    felt = _felt_round_the_pot(lab, camera)
    names = [line.name for line in edge_lines()]
    for i, name in enumerate(names):
        column = steps[:, i]
        if not np.isfinite(at_edge[i]) or not np.any(np.isfinite(column)):
            continue
        strongest = int(np.nanargmax(column))
        if at_edge[i] < MIN_STEP_AT_EDGE * column[strongest]:
            return _moved(
                f"the colour steps most {abs(_SEARCH_OFFSETS_MM[strongest]):.0f} mm "
                f"{'outside' if _SEARCH_OFFSETS_MM[strongest] > 0 else 'inside'} the mat's "
                f"{name} where the calibration puts it"
            )
        if np.all(np.isfinite(felt)) and np.all(np.isfinite(bands[i, 0])):
            off_felt = float(np.linalg.norm(bands[i, 0] - felt))
            if off_felt > MAX_INSIDE_OFF_FELT * max(at_edge[i], 1e-6):
                return _moved(
                    f"just inside the mat's {name} the photo is not the felt's colour "
                    f"(off it by {off_felt:.0f} Lab units, the edge's step is {at_edge[i]:.0f})"
                )
    return None


def _felt_round_the_pot(lab: npt.NDArray[np.float32], camera: CameraModel) -> FloatArray:
    """The median colour of rings 200-400 mm round the centre: felt, whatever lies on it.

    NaN when the rings are not in the picture.
    """
    angles = np.linspace(0.0, 2 * np.pi, 90, endpoint=False)
    ring = np.column_stack([1.6 * np.cos(angles), np.sin(angles)])
    return median_lab_at(lab, camera, np.vstack([r * ring for r in (200.0, 300.0, 400.0)]))


def _moved(why: str) -> CalibrationFailure:
    return CalibrationFailure(
        FailureReason.CAMERA_MOVED,
        f"the photo does not show the mat where the calibration puts it: {why}; "
        "the camera has moved since, or the file is another camera's, or the mat is "
        "not in this photo",
    )
