"""Draw a calibration over its image: mat outline, baselines, pot and axes."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fit import HALF_LENGTH_MM, HALF_WIDTH_MM, MAT_CORNERS_MM
from calibration.result import Calibration
from rules.board import POT_BASE_DIAMETER_MM, POT_HEIGHT_MM, POT_TOP_DIAMETER_MM, Colour

UInt8Array = npt.NDArray[np.uint8]

_BGR = {
    Colour.BLUE: (255, 80, 0),
    Colour.GREEN: (0, 170, 0),
    Colour.RED: (0, 0, 230),
    Colour.YELLOW: (0, 220, 255),
}


def _polyline(
    image: UInt8Array,
    pts_px: npt.NDArray[np.float64],
    colour: tuple[int, int, int],
    thickness: int,
    closed: bool = False,
) -> None:
    finite = pts_px[np.all(np.isfinite(pts_px), axis=1)]
    if len(finite) >= 2:
        cv2.polylines(
            image,
            [np.rint(finite * 16).astype(np.int32)],
            closed,
            colour,
            thickness,
            cv2.LINE_AA,
            shift=4,
        )


def draw_calibration(image_bgr: UInt8Array, cal: Calibration) -> UInt8Array:
    """A copy of the image with the calibration drawn on it.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    cal : Calibration

    Returns
    -------
    (H, W, 3) uint8 ndarray
    """
    out = image_bgr.copy()
    cam = cal.camera
    thick = max(1, round(max(out.shape[:2]) / 800))
    # The outline is drawn through many points so that lens distortion shows.
    t = np.linspace(0.0, 1.0, 100)[:, None]
    for i in range(4):
        a, b = MAT_CORNERS_MM[i], MAT_CORNERS_MM[(i + 1) % 4]
        _polyline(out, cam.mat_to_image(a + t * (b - a)), (255, 0, 255), thick)
    for bl in cal.baselines:
        colour = (255, 255, 0) if bl.found else (128, 128, 128)
        _polyline(out, bl.image_xy_px, colour, thick)
    ang = np.linspace(0, 2 * np.pi, 60)
    circle = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    base = np.hstack([circle * POT_BASE_DIAMETER_MM / 2, np.zeros((60, 1))])
    top = np.hstack([circle * POT_TOP_DIAMETER_MM / 2, np.full((60, 1), POT_HEIGHT_MM)])
    _polyline(out, cam.mat_to_image(base), (0, 255, 255), thick, closed=True)
    _polyline(out, cam.mat_to_image(top), (0, 255, 255), thick, closed=True)
    axes = {
        (0, 0, 255): (300.0, 0.0, 0.0),
        (0, 200, 0): (0.0, 300.0, 0.0),
        (255, 0, 0): (0.0, 0.0, 150.0),
    }
    origin = cam.mat_to_image(np.zeros((1, 3)))[0]
    font_scale = 0.5 * thick
    for colour, tip in axes.items():
        end = cam.mat_to_image(np.array([tip]))[0]
        if np.all(np.isfinite(end)):
            cv2.arrowedLine(
                out,
                tuple(np.rint(origin).astype(int)),
                tuple(np.rint(end).astype(int)),
                colour,
                thick + 1,
                cv2.LINE_AA,
                tipLength=0.08,
            )
    for label, tip in (("x", (330.0, 0.0, 0.0)), ("y", (0.0, 330.0, 0.0))):
        pos = cam.mat_to_image(np.array([tip]))[0]
        if np.all(np.isfinite(pos)):
            cv2.putText(
                out,
                label,
                tuple(np.rint(pos).astype(int)),
                cv2.FONT_HERSHEY_SIMPLEX,
                font_scale * 1.5,
                (255, 255, 255),
                thick,
                cv2.LINE_AA,
            )
    if cal.corners_mm is not None:
        for wink_colour, (x, y) in cal.corners_mm.items():
            inset = np.array(
                [[x - np.sign(x) * 0.08 * HALF_LENGTH_MM, y - np.sign(y) * 0.15 * HALF_WIDTH_MM]]
            )
            pos = cam.mat_to_image(inset)[0]
            if np.all(np.isfinite(pos)):
                cv2.putText(
                    out,
                    wink_colour.value,
                    tuple(np.rint(pos).astype(int)),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    font_scale * 1.5,
                    _BGR[wink_colour],
                    thick + 1,
                    cv2.LINE_AA,
                )
    caption = (
        f"rms {cal.reprojection_rms_px:.2f} px / {cal.reprojection_rms_mm:.2f} mm, "
        f"sigma {cal.mapping_sigma_mm:.2f} mm, baselines {sum(b.found for b in cal.baselines)}/4, "
        f"orientation {'known' if cal.orientation_known else 'UNKNOWN'}"
    )
    # White over a wider black stroke stays readable on any background.
    for colour, stroke in (((0, 0, 0), thick + 2), ((255, 255, 255), thick)):
        cv2.putText(
            out,
            caption,
            (10, 30 * thick),
            cv2.FONT_HERSHEY_SIMPLEX,
            font_scale * 1.2,
            colour,
            stroke,
            cv2.LINE_AA,
        )
    return out
