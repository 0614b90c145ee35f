"""Sub-pixel edge and line points across predicted mat curves.

Both samplers take a curve predicted by the current camera (a segment of a mat
line, projected with lens distortion, so it may be slightly bent), cut short
intensity profiles across it in the full-resolution image, and return where on
each profile the feature is: the felt/table step for :func:`step_points`, a
thin painted line (a baseline) for :func:`ridge_points`. Profiles are averaged
over a few pixels along the curve to beat felt texture and sensor noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel

FloatArray = npt.NDArray[np.float64]

#: Profile sampling step across the curve, px.
STEP_PX = 0.5
#: Offsets along the curve averaged into one profile, px.
ALONG_PX = (-8.0, -6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0)
#: With ``on_slopes``, a thin line's height is also measured over the mean of
#: its profile this far either side, px: a slope of light across the profile
#: (the mat's edge near a baseline's end, a shadow) does not change that.
RIDGE_SIDE_PX = 2.0


@dataclass(frozen=True, eq=False)
class CurveSamples:
    """Points along a projected mat segment and the unit normals across it.

    Parameters
    ----------
    image_xy_px : (N, 2) ndarray
    normal_xy : (N, 2) ndarray
        Unit normals in the image, pointing away from ``inside_mat_xy_mm``.
    """

    image_xy_px: FloatArray
    normal_xy: FloatArray


def sample_curve(
    camera: CameraModel,
    start_mm: FloatArray,
    end_mm: FloatArray,
    inside_mat_xy_mm: FloatArray,
    *,
    spacing_px: float = 6.0,
    trim: float = 0.04,
) -> CurveSamples:
    """Project the mat segment ``start_mm``-``end_mm`` and sample it every ``spacing_px``."""
    ends_px = camera.mat_to_image(np.array([start_mm, end_mm]))
    length_px = float(np.linalg.norm(ends_px[1] - ends_px[0]))
    if not np.isfinite(length_px):
        length_px = 0.0
    # The cap keeps a wild camera (a wrong hypothesis) from asking for huge maps.
    n = int(np.clip(length_px * (1 - 2 * trim) / spacing_px, 4, 2000))
    frac = np.linspace(trim, 1 - trim, n)
    delta = 1e-3
    pts_mm = start_mm[None, :] + frac[:, None] * (end_mm - start_mm)[None, :]
    ahead_mm = start_mm[None, :] + (frac + delta)[:, None] * (end_mm - start_mm)[None, :]
    pts_px = camera.mat_to_image(pts_mm)
    tangent = camera.mat_to_image(ahead_mm) - pts_px
    # A wild camera (a wrong hypothesis) can give degenerate tangents: their
    # NaN profiles are then simply not found.
    with np.errstate(invalid="ignore", divide="ignore"):
        tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    inward_px = camera.mat_to_image(pts_mm + 0.02 * (inside_mat_xy_mm[None, :] - pts_mm))
    flip = np.sum((inward_px - pts_px) * normal, axis=1) > 0
    normal[flip] *= -1
    return CurveSamples(pts_px, normal)


def profiles(
    image_lab: npt.NDArray[np.float32],
    curve: CurveSamples,
    half_width_px: float,
    along_px: tuple[float, ...] = ALONG_PX,
) -> tuple[FloatArray, FloatArray]:
    """Colour profiles across the curve: offsets (M,) and values (N, M, 3).

    Each profile is the mean of parallel profiles shifted by ``along_px`` along
    the curve's tangent (keep them short on tight curves).
    """
    offsets = np.arange(-half_width_px, half_width_px + 1e-9, STEP_PX)
    tangent = np.stack([curve.normal_xy[:, 1], -curve.normal_xy[:, 0]], axis=1)
    along = np.asarray(along_px)
    # Shape (N, A, M, 2): point + a * tangent + u * normal.
    pts = (
        curve.image_xy_px[:, None, None, :]
        + along[None, :, None, None] * tangent[:, None, None, :]
        + offsets[None, None, :, None] * curve.normal_xy[:, None, None, :]
    )
    n, a, m, _ = pts.shape
    map_xy = pts.reshape(n, a * m, 2).astype(np.float32)
    sampled = cv2.remap(
        image_lab,
        map_xy[:, :, 0],
        map_xy[:, :, 1],
        interpolation=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(np.nan, np.nan, np.nan),
    )
    values = np.asarray(sampled, np.float64).reshape(n, a, m, 3).mean(axis=1)
    return offsets, values


def _mad_sigma(values: FloatArray) -> FloatArray:
    """Robust spread of each row of ``values`` (N, M): 1.4826 times its MAD, shape (N,)."""
    centred = values - np.median(values, axis=1, keepdims=True)
    return np.asarray(1.4826 * np.median(np.abs(centred), axis=1), np.float64)


def _parabolic_peak(values: FloatArray, idx: npt.NDArray[np.int_]) -> FloatArray:
    """Sub-sample position of the maxima at ``idx`` in each row of ``values``."""
    rows = np.arange(len(values))
    i = np.clip(idx, 1, values.shape[1] - 2)
    left, mid, right = values[rows, i - 1], values[rows, i], values[rows, i + 1]
    denom = left - 2 * mid + right
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(np.abs(denom) > 1e-12, 0.5 * (left - right) / denom, 0.0)
    return np.asarray(i + np.clip(shift, -0.5, 0.5), np.float64)


def step_points(
    image_lab: npt.NDArray[np.float32],
    curve: CurveSamples,
    half_width_px: float,
    *,
    search_px: float | None = None,
    min_contrast: float = 3.0,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Where the felt ends along each profile: the strongest inside-to-outside colour step.

    Returns
    -------
    image_xy_px : (N, 2) ndarray
    found : (N,) ndarray of bool
        False where the profile has no clear step (occluded, off the image).
    """
    offsets, values = profiles(image_lab, curve, half_width_px)
    valid = np.all(np.isfinite(values), axis=(1, 2))
    k = max(2, len(offsets) // 6)
    # The felt/table colour difference is the same along one edge: project every
    # profile onto its median direction, which ignores winks and texture.
    diff = values[:, -k:, :].mean(axis=1) - values[:, :k, :].mean(axis=1)
    if not np.any(valid):
        return curve.image_xy_px.copy(), valid
    direction = np.median(diff[valid], axis=0)
    norm = float(np.linalg.norm(direction))
    if norm < 1e-6:
        return curve.image_xy_px.copy(), np.zeros(len(valid), bool)
    direction /= norm
    scalar = np.nan_to_num(values @ direction)
    scalar = cv2.GaussianBlur(scalar, (0, 0), sigmaX=1.5, sigmaY=0.01)
    grad = np.gradient(scalar, axis=1)
    # Look for the step only near the prediction, but judge the noise on the
    # whole profile.
    window = np.abs(offsets) <= (half_width_px if search_px is None else search_px)
    idx = np.argmax(np.where(window[None, :], grad, -np.inf), axis=1)
    pos = _parabolic_peak(grad, idx)
    offset_px = np.interp(pos, np.arange(len(offsets)), offsets)
    peak = grad[np.arange(len(grad)), idx] / STEP_PX
    noise = _mad_sigma(grad)
    found = valid & (peak * STEP_PX > 4 * noise) & (peak * 2 > min_contrast)
    found &= (idx > 1) & (idx < len(offsets) - 2)
    xy = curve.image_xy_px + offset_px[:, None] * curve.normal_xy
    return np.asarray(xy, np.float64), found


def ridge_points(
    image_lab: npt.NDArray[np.float32],
    curve: CurveSamples,
    half_width_px: float,
    *,
    min_contrast: float = 4.0,
    on_slopes: bool = False,
) -> tuple[FloatArray, npt.NDArray[np.bool_], float]:
    """Where a thin line crosses each profile, dark or light.

    The line must stand out of the whole profile. With ``on_slopes``, also
    found where it stands only out of the profile :data:`RIDGE_SIDE_PX` either
    side: a line about a pixel wide on a slope of light, whose spread hides it
    from the first test. (Only to tell whether a line is there at all: the
    camera fits keep to the first test, whose choices their checks were
    measured on.)

    Returns
    -------
    image_xy_px : (N, 2) ndarray
    found : (N,) ndarray of bool
    contrast : float
        Median lightness difference between the line and the felt around it
        (positive for a light line), in Lab L units (0-255 scale).
    """
    offsets, values = profiles(image_lab, curve, half_width_px)
    valid = np.all(np.isfinite(values), axis=(1, 2))
    light = np.asarray(
        cv2.GaussianBlur(np.nan_to_num(values[:, :, 0]), (0, 0), sigmaX=1.0, sigmaY=0.01),
        np.float64,
    )
    background = np.median(light, axis=1, keepdims=True)
    dev = light - background
    if not np.any(valid):
        return curve.image_xy_px.copy(), valid, 0.0
    # One sign along the whole baseline: decide it from all profiles together.
    sign = 1.0 if np.median(dev[valid].max(axis=1)) > np.median(-dev[valid].min(axis=1)) else -1.0
    signed = sign * dev
    rows = np.arange(len(signed))
    idx = np.argmax(signed, axis=1)
    pos = _parabolic_peak(signed, idx)
    peak = signed[rows, idx]
    found = valid & (peak > np.maximum(min_contrast, 4 * _mad_sigma(signed)))
    found &= (idx > 1) & (idx < len(offsets) - 2)
    if on_slopes:
        side = int(round(RIDGE_SIDE_PX / STEP_PX))
        over = signed[:, side:-side] - 0.5 * (signed[:, : -2 * side] + signed[:, 2 * side :])
        idx_over = np.argmax(over, axis=1)
        thin = (
            valid & ~found & (over[rows, idx_over] > np.maximum(min_contrast, 4 * _mad_sigma(over)))
        )
        pos = np.where(thin, _parabolic_peak(over, idx_over) + side, pos)
        peak = np.where(thin, over[rows, idx_over], peak)
        found |= thin
    offset_px = np.interp(pos, np.arange(len(offsets)), offsets)
    xy = curve.image_xy_px + offset_px[:, None] * curve.normal_xy
    contrast = float(sign * np.median(peak[found])) if np.any(found) else 0.0
    return np.asarray(xy, np.float64), found, contrast
