"""The calibration result, its JSON file form, and the errors calibration raises."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from calibration.colour import ColourReference
from calibration.pot import PotFit
from rules.board import Colour

FloatArray = npt.NDArray[np.float64]

CALIBRATION_FORMAT = "winkref-calibration/1"


class CalibrationError(ValueError):
    """Calibration could not be done from this input."""


class UnreadableImageError(CalibrationError):
    """The image file is missing, unreadable or not an image."""


class ImageTooSmallError(CalibrationError):
    """The image has too few pixels to find the mat in."""


class ImageShapeError(CalibrationError):
    """The image is too long and narrow to be a camera's photo (a panorama or a strip)."""


class NoMatFoundError(CalibrationError):
    """No felt rectangle was found (or its edges fit no camera)."""


class MatPartlyOutOfFrameError(CalibrationError):
    """The mat runs out of the picture."""


class BadCornersError(CalibrationError):
    """Corners given by hand are malformed or outside the image."""


@dataclass(frozen=True, eq=False)
class BaselineResult:
    """One baseline (rule 2.3.1) as seen.

    Parameters
    ----------
    corner_mm : (2,) ndarray
        Its corner in the canonical frame.
    found : bool
        Whether the painted line was seen along most of its length.
    rms_residual_mm : float
        RMS distance of its points from the rule 2.3.1 line (NaN if not found).
    image_xy_px : (2, 2) ndarray
        Its ends, on the long and the short edge, in the image.
    """

    corner_mm: FloatArray
    found: bool
    rms_residual_mm: float
    image_xy_px: FloatArray


@dataclass(frozen=True, eq=False)
class Calibration:
    """Everything later stages need to turn pixels into mat millimetres.

    Parameters
    ----------
    camera : CameraModel
        Intrinsics, distortion and pose in the canonical mat frame (blue's
        corner at y > 0 when ``orientation_known``).
    corners_image_xy_px : (4, 2) ndarray
        The mat corners (-x,-y), (+x,-y), (+x,+y), (-x,+y) in the image.
    baselines : tuple of BaselineResult
        One per corner, same order as the corners.
    pot_image_xy_px : (2, 2) ndarray
        Where the camera puts the pot's base centre (z = 0) and top centre
        (z = 38 mm); predicted from the pose, not detected.
    reprojection_rms_px : float
        RMS distance of the edge and baseline points from the fitted lines, px.
    reprojection_rms_mm : float
        The same on the mat, mm.
    mapping_sigma_mm : float
        Largest one-sigma uncertainty of the image-to-mat mapping over the mat,
        mm: the fit's covariance, a systematic edge bias (0.3 px or more), and
        how much the mapping moves when any one edge or baseline is left out
        (see :func:`calibration.fit.mapping_sigma_mm`).
    edge_offsets_mm : (4,) ndarray
        How far outside each true edge the felt's visible edge lies (thickness,
        shadow), edges y-, x+, y+, x-.
    orientation_known : bool
        False when the corner colours could not be read: the frame may then be
        turned through 180 degrees.
    colour : ColourReference
    image_size_wh : (2,) tuple of int
    method : str
        ``"auto"`` or ``"manual-corners"``.
    corners_mm : dict of Colour to (x, y), or None
        Which mat corner belongs to which colour (rule 5.2), canonical frame;
        None when the orientation is unknown.
    pot : PotFit or None
        The pot's top rim as found (rule 2.4), a check of the camera: its
        centre should be at the mat's centre. Not used in the fit.
    """

    camera: CameraModel
    corners_image_xy_px: FloatArray
    baselines: tuple[BaselineResult, ...]
    pot_image_xy_px: FloatArray
    reprojection_rms_px: float
    reprojection_rms_mm: float
    mapping_sigma_mm: float
    edge_offsets_mm: FloatArray
    orientation_known: bool
    colour: ColourReference
    image_size_wh: tuple[int, int]
    method: str = "auto"
    corners_mm: dict[Colour, tuple[float, float]] | None = None
    pot: PotFit | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The calibration file's JSON form."""
        return {
            "format": CALIBRATION_FORMAT,
            "method": self.method,
            "image_size_wh": list(self.image_size_wh),
            "camera": self.camera.to_json_dict(),
            "corners_image_xy_px": self.corners_image_xy_px.tolist(),
            "baselines": [
                {
                    "corner_mm": b.corner_mm.tolist(),
                    "found": b.found,
                    "rms_residual_mm": None
                    if not np.isfinite(b.rms_residual_mm)
                    else b.rms_residual_mm,
                    "image_xy_px": b.image_xy_px.tolist(),
                }
                for b in self.baselines
            ],
            "pot_image_xy_px": self.pot_image_xy_px.tolist(),
            "reprojection_rms_px": self.reprojection_rms_px,
            "reprojection_rms_mm": self.reprojection_rms_mm,
            "mapping_sigma_mm": self.mapping_sigma_mm,
            "edge_offsets_mm": self.edge_offsets_mm.tolist(),
            "orientation_known": self.orientation_known,
            "colour": self.colour.to_json_dict(),
            "corners_mm": None
            if self.corners_mm is None
            else {c.value: list(xy) for c, xy in self.corners_mm.items()},
            "pot": None
            if self.pot is None
            else {
                "found": self.pot.found,
                "centre_mm": None if not self.pot.found else self.pot.centre_mm.tolist(),
                "radius_mm": None if not self.pot.found else self.pot.radius_mm,
                "rms_mm": None if not self.pot.found else self.pot.rms_mm,
                "found_fraction": self.pot.found_fraction,
            },
        }

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any], *, where: str = "calibration") -> Calibration:
        """Parse a calibration file's JSON form.

        Raises
        ------
        CalibrationError
            When a field is missing or malformed, naming ``where`` and the field.
        """
        if data.get("format") != CALIBRATION_FORMAT:
            raise CalibrationError(
                f"{where}: format is {data.get('format')!r}, expected {CALIBRATION_FORMAT!r}; "
                "run 'winkref calibrate' again to make a new file"
            )
        try:
            return cls(
                camera=CameraModel.from_json_dict(data["camera"]),
                corners_image_xy_px=np.asarray(data["corners_image_xy_px"], np.float64).reshape(
                    4, 2
                ),
                baselines=tuple(
                    BaselineResult(
                        corner_mm=np.asarray(b["corner_mm"], np.float64),
                        found=bool(b["found"]),
                        rms_residual_mm=float("nan")
                        if b["rms_residual_mm"] is None
                        else float(b["rms_residual_mm"]),
                        image_xy_px=np.asarray(b["image_xy_px"], np.float64),
                    )
                    for b in data["baselines"]
                ),
                pot_image_xy_px=np.asarray(data["pot_image_xy_px"], np.float64),
                reprojection_rms_px=float(data["reprojection_rms_px"]),
                reprojection_rms_mm=float(data["reprojection_rms_mm"]),
                mapping_sigma_mm=float(data["mapping_sigma_mm"]),
                edge_offsets_mm=np.asarray(data["edge_offsets_mm"], np.float64),
                orientation_known=bool(data["orientation_known"]),
                colour=ColourReference.from_json_dict(data["colour"]),
                image_size_wh=(int(data["image_size_wh"][0]), int(data["image_size_wh"][1])),
                method=str(data.get("method", "auto")),
                corners_mm=None
                if data.get("corners_mm") is None
                else {Colour(k): (float(v[0]), float(v[1])) for k, v in data["corners_mm"].items()},
                pot=_pot_from_json(data.get("pot")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"{where}: malformed calibration file ({exc!r})") from None


def _pot_from_json(data: Mapping[str, Any] | None) -> PotFit | None:
    if data is None:
        return None
    if not data["found"]:
        return PotFit.not_found(float(data["found_fraction"]))
    return PotFit(
        True,
        np.asarray(data["centre_mm"], np.float64),
        float(data["radius_mm"]),
        float(data["rms_mm"]),
        float(data["found_fraction"]),
    )
