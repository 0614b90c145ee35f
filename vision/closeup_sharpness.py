"""How soft a close-up photo is, read from the winks' rims against the felt.

A phone photo can be out of focus or shaken. Its winks' outlines then come
out a little small or large, and since the winks' known diameters set the
scale, every plan distance moves with them; on the generator's photos
blurred by 2-8 px the measured overlap moved by a few tenths of a
millimetre, up to about 0.7 mm (more where the blur also changed which
winks the plane was fitted to). The review's uncertainty has
to allow for that (see ``vision.review.soft_sigma_mm``), so the blur is
measured, as the sigma of the Gaussian that would blur a sharp step into
the rim's profile.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt
from scipy.ndimage import gaussian_filter1d

from vision.closeup import ImageEllipse

FloatArray = npt.NDArray[np.float64]

#: Profiles across the rim: this many round the ellipse, reaching this far
#: either side of it (px), sampled this finely (px).
_PROFILES = 72
_REACH_PX = 16.0
_STEP_PX = 0.25
#: Samples at each end of a profile averaged for the wink's and the felt's colour.
_END_SAMPLES = 8
#: A profile counts when its ends differ by at least this much (length of the
#: BGR difference) and its outer end is the felt's colour within
#: :data:`_FELT_BGR`: a rim against felt, not against another wink, the pot
#: or a shadow.
_MIN_STEP_BGR = 40.0
_FELT_BGR = 25.0
#: Each profile is smoothed by a Gaussian of this sigma (px) before its slope is taken.
_SMOOTH_PX = 2.0
#: Fewer profiles against felt than this give no reading.
_MIN_PROFILES = 8


def felt_bgr(image_bgr: npt.NDArray[np.uint8]) -> FloatArray:
    """(3,) the photo's median colour, BGR: the felt, which fills most of a close-up."""
    return np.asarray(np.median(image_bgr[::16, ::16].reshape(-1, 3), axis=0), np.float64)


def rim_blur_px(image_bgr: npt.NDArray[np.uint8], ellipse: ImageEllipse, felt: FloatArray) -> float:
    """The blur of a wink's rim where it lies against the felt, px.

    Along each profile across the rim the colour is projected onto the step
    from the wink's colour to the felt's, so that it runs from 0 inside to 1
    outside. A sharp step blurred by a Gaussian of sigma ``s`` rises at most
    ``1 / (s sqrt(2 pi))`` per pixel, so each profile's steepest rise gives
    an ``s``; the reading is their median. It is a Gaussian-equivalent
    sigma: the rims of the generator's sharp 12 MP close-ups read a median
    of 2.0 px, 90 % under 3.3 (the rim's bevel and the JPEG soften the step
    a little), and blurred by 2, 4 and 8 px medians of 2.9, 4.6 and 7.7 px.
    Profiles reach 16 px either side, so beyond about 8 px it reads short.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    ellipse : ImageEllipse
        The wink's fitted outline.
    felt : (3,) ndarray
        The felt's colour, BGR (:func:`felt_bgr`).

    Returns
    -------
    float
        Sigma in pixels; NaN when fewer than 8 profiles see the rim against felt.
    """
    (cx, cy), (a, b), angle = ellipse.centre_xy_px, ellipse.semi_axes_px, ellipse.angle_rad
    theta = np.linspace(0.0, 2.0 * np.pi, _PROFILES, endpoint=False)
    along_x, along_y = a * np.cos(theta), b * np.sin(theta)
    # The outward normal in the ellipse's own axes, then turned into the image.
    nx, ny = along_x / (a * a), along_y / (b * b)
    norm = np.hypot(nx, ny)
    nx, ny = nx / norm, ny / norm
    c, s = math.cos(angle), math.sin(angle)
    rim_x = cx + c * along_x - s * along_y
    rim_y = cy + s * along_x + c * along_y
    out_x, out_y = c * nx - s * ny, s * nx + c * ny
    t = np.arange(-_REACH_PX, _REACH_PX + _STEP_PX / 2, _STEP_PX)
    # Only the wink's neighbourhood is turned to float: a 12 MP photo would take 40 ms.
    h, w = image_bgr.shape[:2]
    reach = max(a, b) + _REACH_PX + 2.0
    x0, y0 = max(0, int(cx - reach)), max(0, int(cy - reach))
    x1, y1 = min(w, int(cx + reach) + 2), min(h, int(cy + reach) + 2)
    if x1 <= x0 or y1 <= y0:
        return float("nan")
    map_x = (rim_x[:, None] + out_x[:, None] * t[None, :] - x0).astype(np.float32)
    map_y = (rim_y[:, None] + out_y[:, None] * t[None, :] - y0).astype(np.float32)
    prof = cv2.remap(
        image_bgr[y0:y1, x0:x1].astype(np.float32),
        map_x,
        map_y,
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(np.nan, np.nan, np.nan),
    ).astype(np.float64)  # (profiles, samples, 3)
    inside = prof[:, :_END_SAMPLES].mean(axis=1)
    outside = prof[:, -_END_SAMPLES:].mean(axis=1)
    step = outside - inside
    height = np.linalg.norm(step, axis=1)
    ok = (
        np.all(np.isfinite(prof), axis=(1, 2))
        & (height > _MIN_STEP_BGR)
        & (np.linalg.norm(outside - felt, axis=1) < _FELT_BGR)
    )
    if ok.sum() < _MIN_PROFILES:
        return float("nan")
    unit = step[ok] / height[ok, None]
    rise = np.einsum("psc,pc->ps", prof[ok] - inside[ok, None, :], unit) / height[ok, None]
    # The steepest rise of a noisy profile is too steep: smoothed first by a
    # known Gaussian, taken back out in quadrature below. On a drawn disc with
    # noise of 4 grey levels this reads 8 px of blur as 7.3 px, against 3.9 unsmoothed.
    smoothed = gaussian_filter1d(rise, _SMOOTH_PX / _STEP_PX, axis=1, mode="nearest")
    steepest = np.gradient(smoothed, _STEP_PX, axis=1).max(axis=1)
    sigmas = 1.0 / (np.maximum(steepest, 1e-9) * math.sqrt(2.0 * math.pi))
    return math.sqrt(max(float(np.median(sigmas)) ** 2 - _SMOOTH_PX**2, 0.0))
