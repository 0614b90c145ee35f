"""Find the pot's top rim (rule 2.4) and use it to check the camera out of the plane.

The pot stands at the mat's centre; its top rim is a circle 48 mm across, 38 mm
up. The mat's edges and baselines fix the mapping of the mat's plane but say
little about what lies above it; the rim does. We cut colour profiles across
the rim where the camera predicts it, take the strongest colour change on each
(pots are white, red, black, clear or translucent: the sign of the step varies),
back-project those points onto the plane z = 38 mm and fit a circle there. A
camera that is right out of the plane puts that circle where the pot is, 24 mm
in radius; a wrong height or focal length shows as a wrong radius.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from calibration.edges import CurveSamples, profiles
from rules.board import POT_HEIGHT_MM, POT_TOP_DIAMETER_MM

FloatArray = npt.NDArray[np.float64]

#: The rim counts as found when this fraction of its profiles show an edge that
#: the circle fit keeps.
POT_FOUND_FRACTION = 0.5


@dataclass(frozen=True, eq=False)
class PotFit:
    """The pot's top rim as seen.

    Parameters
    ----------
    found : bool
        Whether enough of the rim was seen and it fitted a circle.
    centre_mm : (2,) ndarray
        Centre of the fitted rim on the plane z = 38 mm, mat mm (NaN if not found).
    radius_mm : float
        Fitted radius (rule 2.4: 24 mm), NaN if not found.
    rms_mm : float
        RMS distance of the rim points from the fitted circle, NaN if not found.
    found_fraction : float
        Fraction of profiles that showed an edge kept by the fit.
    """

    found: bool
    centre_mm: FloatArray
    radius_mm: float
    rms_mm: float
    found_fraction: float

    @classmethod
    def not_found(cls, fraction: float = 0.0) -> PotFit:
        """A rim that was not seen."""
        return cls(False, np.full(2, np.nan), float("nan"), float("nan"), fraction)


def _fit_circle(xy: FloatArray) -> tuple[FloatArray, float]:
    """Algebraic (Kasa) circle fit: centre (2,) and radius."""
    a = np.hstack([2 * xy, np.ones((len(xy), 1))])
    b = np.sum(xy**2, axis=1)
    sol, *_ = np.linalg.lstsq(a, b, rcond=None)
    centre = sol[:2]
    radius = float(np.sqrt(max(sol[2] + centre @ centre, 0.0)))
    return np.asarray(centre, np.float64), radius


def find_pot_rim(image_lab: npt.NDArray[np.float32], camera: CameraModel) -> PotFit:
    """Look for the pot's top rim where ``camera`` says it is.

    Parameters
    ----------
    image_lab : (H, W, 3) float32 ndarray
        The image in 8-bit-scale OpenCV Lab.
    camera : CameraModel
        Fitted to the mat (any of the two half-turn frames: the pot is central).
    """
    radius_mm = POT_TOP_DIAMETER_MM / 2
    ang = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    rim = np.stack(
        [radius_mm * np.cos(ang), radius_mm * np.sin(ang), np.full(len(ang), POT_HEIGHT_MM)],
        axis=1,
    )
    ahead = np.stack(
        [
            radius_mm * np.cos(ang + 1e-3),
            radius_mm * np.sin(ang + 1e-3),
            np.full(len(ang), POT_HEIGHT_MM),
        ],
        axis=1,
    )
    rim_px = camera.mat_to_image(rim)
    tangent = camera.mat_to_image(ahead) - rim_px
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    centre_px = camera.mat_to_image(np.array([[0.0, 0.0, POT_HEIGHT_MM]]))[0]
    flip = np.sum((rim_px - centre_px) * normal, axis=1) < 0
    normal[flip] *= -1
    # Search a band of +-8 mm around the predicted rim.
    mm_per_px = camera.mm_per_px_at([0.0, 0.0, POT_HEIGHT_MM])
    half_px = float(np.clip(8.0 / mm_per_px, 3.0, 40.0))
    # Average along the rim over no more than ~3 mm: it curves tightly.
    step = float(np.clip(1.5 / mm_per_px, 0.5, 3.0))
    offsets, values = profiles(
        image_lab, CurveSamples(rim_px, normal), half_px, along_px=(-step, 0.0, step)
    )
    valid = np.all(np.isfinite(values), axis=(1, 2))
    if valid.mean() < POT_FOUND_FRACTION:
        return PotFit.not_found(float(valid.mean()))
    grad = np.linalg.norm(np.gradient(np.nan_to_num(values), axis=1), axis=2)
    peak = grad.max(axis=1)
    # The rim's inner edge (the dark inside of the pot) is often the strongest
    # step; the outer edge is the rim: take the outermost local maximum that is
    # at least half the strongest.
    is_local_max = np.zeros_like(grad, bool)
    is_local_max[:, 1:-1] = (grad[:, 1:-1] >= grad[:, :-2]) & (grad[:, 1:-1] >= grad[:, 2:])
    candidate = is_local_max & (grad >= 0.5 * peak[:, None])
    last = grad.shape[1] - 1 - np.argmax(candidate[:, ::-1], axis=1)
    idx = np.where(candidate.any(axis=1), last, np.argmax(grad, axis=1))
    noise = np.median(grad, axis=1)
    strong = valid & (peak > 3.0 * np.maximum(noise, 0.3)) & (idx > 0) & (idx < len(offsets) - 1)
    points_px = rim_px + offsets[idx][:, None] * normal
    points_mm = camera.image_to_mat(points_px[strong], POT_HEIGHT_MM)
    if len(points_mm) < POT_FOUND_FRACTION * len(ang):
        return PotFit.not_found(float(strong.mean()))
    # Two passes: the second without points far off the first circle (winks, hands).
    keep = np.ones(len(points_mm), bool)
    centre, radius = _fit_circle(points_mm)
    for _ in range(2):
        dist = np.abs(np.linalg.norm(points_mm - centre, axis=1) - radius)
        keep = dist < max(1.0, 3.0 * 1.4826 * float(np.median(dist)))
        if keep.sum() < 3:
            return PotFit.not_found(float(strong.mean()))
        centre, radius = _fit_circle(points_mm[keep])
    residual = np.linalg.norm(points_mm[keep] - centre, axis=1) - radius
    fraction = float(keep.sum() / len(ang))
    rms = float(np.sqrt(np.mean(residual**2)))
    found = fraction >= POT_FOUND_FRACTION and abs(radius - radius_mm) < 6.0
    if not found:
        return PotFit.not_found(fraction)
    return PotFit(True, centre, radius, rms, fraction)
