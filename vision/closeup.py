"""Find the winks in a close-up photo: sub-pixel rims and robust ellipse fits.

A close-up (a phone 15-40 cm above a disputed pair) shows each wink as a large,
well-resolved ellipse. Winks differ from the felt in colour or brightness, so
a map of the colour distance from the local felt colour separates them; the
half-level iso-line of that map, traced by marching squares on the full
resolution image, gives sub-pixel rim points. Touching winks merge into one
blob, so ellipses are pulled out of each blob's rim one at a time by RANSAC
on short arcs, the way a person would trace each visible arc.

Everything returned is in the project's own types (:class:`ImageEllipse`,
:class:`CloseupWink`); no raw OpenCV output leaves this module.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from skimage import measure

from rules.board import LARGE_WINK_DIAMETER_MM, SMALL_WINK_DIAMETER_MM, Colour

FloatArray = npt.NDArray[np.float64]

#: Rims are traced at full resolution: a 0.3 mm gap is only a few pixels, and
#: at half resolution (measured: about as fast in the median, faster in the
#: worst case) neighbouring rims pull on each other more.
_WORK_SCALE = 1
#: Blob finding works at a quarter of the resolution (4032 -> 1008 px wide).
_COARSE_SCALE = 4
#: The felt colour is a median over a window several winks wide.
_BACKGROUND_SCALE = 16
#: Weight of the lightness difference in the colour distance: low, so soft
#: shadows on the felt do not look like winks, but not zero, so dark or pale
#: winks on a similar hue still do.
_LIGHTNESS_WEIGHT = 0.6
#: Darkening of the felt (CIELAB L units, 0-255 scale) that is taken for a shadow.
_SHADOW_ALLOWANCE = 30.0
#: Colour distance (CIELAB units) above which a coarse pixel may be a wink.
_BLOB_THRESHOLD = 9.0
#: Colour distance above which a full-resolution pixel inside a blob counts as wink
#: colour. The felt's own texture stays under ~4 (median 1-3 in the close-ups); a
#: green wink on green felt is only 11-16 away from it.
_SOLID_THRESHOLD = 1.2 * _BLOB_THRESHOLD
#: CIELAB chroma above which a pixel's own hue, not that of its difference from
#: the felt, tells its colour (the winks measured 26-66, grey felt under 10).
_OWN_HUE_CHROMA = 20.0
#: RANSAC: rim points within this many pixels of an ellipse support it.
_INLIER_PX = 2.0
#: Iso-line chains shorter than this (points) are texture on a wink or the felt,
#: not a rim worth fitting.
_MIN_CHAIN_POINTS = 60
#: How far inside a wink's silhouette the half-level edge against the felt lies, px:
#: the median of 293 flat, whole winks rectified with the true camera in 127
#: generated close-ups (radius 0.39 px short; 10th-90th percentile about -1 to +0.2 px).
OUTLINE_INSET_PX = 0.39


class NoWinksFoundError(ValueError):
    """The photo shows nothing that looks like a wink."""


@dataclass(frozen=True)
class ImageEllipse:
    """An ellipse in the image, pixels.

    Parameters
    ----------
    centre_xy_px : (2,) tuple of float
    semi_axes_px : (2,) tuple of float
        Semi-major then semi-minor axis.
    angle_rad : float
        Direction of the major axis from the image x axis (towards +y, i.e. down).
    """

    centre_xy_px: tuple[float, float]
    semi_axes_px: tuple[float, float]
    angle_rad: float

    def points(self, n: int = 180) -> FloatArray:
        """(n, 2) points on the ellipse, pixels."""
        t = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return ellipse_points(self, t)

    def contains(self, image_xy_px: npt.ArrayLike, margin_px: float = 0.0) -> npt.NDArray[np.bool_]:
        """Whether points lie inside the ellipse grown by ``margin_px``."""
        u = _to_unit_circle(self, np.asarray(image_xy_px, dtype=np.float64), margin_px)
        return np.asarray(np.hypot(u[:, 0], u[:, 1]) <= 1.0)

    def contains_grid(
        self, xs_px: FloatArray, ys_px: FloatArray, margin_px: float = 0.0
    ) -> npt.NDArray[np.bool_]:
        """:meth:`contains` of the grid of columns ``xs_px`` and rows ``ys_px``: (rows, columns).

        Broadcast along rows and columns, not built point by point: the same
        sums and products per point, several times faster on a wink's core.
        """
        a, b = self.semi_axes_px
        c, s = math.cos(self.angle_rad), math.sin(self.angle_rad)
        dx = np.asarray(xs_px, dtype=np.float64) - self.centre_xy_px[0]
        dy = (np.asarray(ys_px, dtype=np.float64) - self.centre_xy_px[1])[:, None]
        x = dx * c + dy * s
        y = -dx * s + dy * c
        return np.asarray(np.hypot(x / (a + margin_px), y / (b + margin_px)) <= 1.0)

    def distance_px(self, image_xy_px: npt.ArrayLike) -> FloatArray:
        """Approximate signed distance of points from the rim (positive outside), pixels."""
        pts = np.asarray(image_xy_px, dtype=np.float64).reshape(-1, 2)
        u = _to_unit_circle(self, pts, 0.0)
        rho = np.hypot(u[:, 0], u[:, 1])
        # Scale the radial excess by the local radius of the ellipse along that ray.
        a, b = self.semi_axes_px
        cos_t, sin_t = u[:, 0] / np.maximum(rho, 1e-12), u[:, 1] / np.maximum(rho, 1e-12)
        local_r = np.hypot(a * cos_t, b * sin_t)
        return np.asarray((rho - 1.0) * local_r)

    def outward_normals(self, image_xy_px: npt.ArrayLike) -> FloatArray:
        """(n, 2) unit normals, pointing outwards, of the ellipse's level curves at points."""
        pts = np.asarray(image_xy_px, dtype=np.float64).reshape(-1, 2)
        a, b = self.semi_axes_px
        c, s = math.cos(self.angle_rad), math.sin(self.angle_rad)
        d = pts - np.asarray(self.centre_xy_px)
        x, y = d[:, 0] * c + d[:, 1] * s, -d[:, 0] * s + d[:, 1] * c
        nx, ny = x / (a * a), y / (b * b)
        norm = np.maximum(np.hypot(nx, ny), 1e-12)
        return np.column_stack([(nx * c - ny * s) / norm, (nx * s + ny * c) / norm])


def ellipse_points(ellipse: ImageEllipse, t: FloatArray) -> FloatArray:
    """Points at parameter angles ``t`` (radians) on the ellipse, (n, 2) pixels."""
    a, b = ellipse.semi_axes_px
    c, s = math.cos(ellipse.angle_rad), math.sin(ellipse.angle_rad)
    x = a * np.cos(t)
    y = b * np.sin(t)
    cx, cy = ellipse.centre_xy_px
    return np.column_stack([cx + c * x - s * y, cy + s * x + c * y])


def _to_unit_circle(ellipse: ImageEllipse, pts: FloatArray, margin_px: float) -> FloatArray:
    a, b = ellipse.semi_axes_px
    c, s = math.cos(ellipse.angle_rad), math.sin(ellipse.angle_rad)
    d = pts.reshape(-1, 2) - np.asarray(ellipse.centre_xy_px)
    x = d[:, 0] * c + d[:, 1] * s
    y = -d[:, 0] * s + d[:, 1] * c
    return np.column_stack([x / (a + margin_px), y / (b + margin_px)])


@dataclass(frozen=True, eq=False)
class CloseupWink:
    """One wink found in a close-up photo.

    Parameters
    ----------
    id : str
        Short label for the user, e.g. ``"W3"`` (the photo cannot tell which
        of a colour's winks it is).
    colour : Colour or None
        None when the colour could not be told.
    ellipse : ImageEllipse
        Fit of the visible silhouette (top face and side wall), pixels.
    rim_image_px : (k, 2) ndarray
        The sub-pixel rim points that support the fit, pixels.
    rim_visible_fraction : float
        Share of the rim seen (1 for an unoccluded wink).
    fit_rms_px : float
        Root-mean-square distance of the rim points from the ellipse, pixels.
    """

    id: str
    colour: Colour | None
    ellipse: ImageEllipse
    rim_image_px: FloatArray
    rim_visible_fraction: float
    fit_rms_px: float


# --------------------------------------------------------------------------
# Ellipse fitting
# --------------------------------------------------------------------------


def fit_ellipse_direct(points_xy: FloatArray) -> ImageEllipse | None:
    """Least-squares ellipse through points (Halir & Flusser's stable direct fit).

    Returns None when the points do not determine an ellipse (too few,
    collinear, or the best conic is not an ellipse).
    """
    pts = np.asarray(points_xy, dtype=np.float64).reshape(-1, 2)
    if len(pts) < 5:
        return None
    mean = pts.mean(axis=0)
    scale = float(np.sqrt(((pts - mean) ** 2).sum(axis=1).mean())) or 1.0
    x = (pts[:, 0] - mean[0]) / scale
    y = (pts[:, 1] - mean[1]) / scale
    d1 = np.column_stack([x * x, x * y, y * y])
    d2 = np.column_stack([x, y, np.ones_like(x)])
    s1, s2, s3 = d1.T @ d1, d1.T @ d2, d2.T @ d2
    try:
        t = -np.linalg.solve(s3, s2.T)
    except np.linalg.LinAlgError:
        return None
    m = s1 + s2 @ t
    m = np.array([m[2] / 2, -m[1], m[0] / 2])
    try:
        evals, evecs = np.linalg.eig(m)
    except np.linalg.LinAlgError:
        return None
    evecs = np.real(evecs)
    cond = 4 * evecs[0] * evecs[2] - evecs[1] ** 2
    ok = np.flatnonzero(cond > 0)
    if len(ok) == 0:
        return None
    a1 = evecs[:, ok[0]]
    conic = np.concatenate([a1, t @ a1])
    return _conic_to_ellipse(conic, mean, scale)


def _conic_to_ellipse(
    conic: FloatArray | list[float], mean: FloatArray | list[float], scale: float
) -> ImageEllipse | None:
    # Python floats: the same double arithmetic as numpy's scalars, several times faster.
    a, b, c, d, e, f = np.asarray(conic, dtype=np.float64).tolist()
    mean_x, mean_y = float(mean[0]), float(mean[1])
    den = b * b - 4 * a * c
    if den >= 0:
        return None
    x0 = (2 * c * d - b * e) / den
    y0 = (2 * a * e - b * d) / den
    num = 2 * (a * e * e + c * d * d - b * d * e + den * f)
    root = math.sqrt((a - c) ** 2 + b * b)
    s1 = num * (a + c + root)
    s2 = num * (a + c - root)
    if s1 <= 0 or s2 <= 0:
        return None
    ax1 = math.sqrt(s1) / -den
    ax2 = math.sqrt(s2) / -den
    # ax1 lies along the angle below; keep the major axis first.
    if abs(b) < 1e-15:
        theta = 0.0 if a < c else math.pi / 2
    else:
        theta = math.atan2(c - a - root, b)
    if ax1 < ax2:
        ax1, ax2 = ax2, ax1
        theta += math.pi / 2
    theta = (theta + math.pi / 2) % math.pi - math.pi / 2
    return ImageEllipse(
        centre_xy_px=(float(x0 * scale + mean_x), float(y0 * scale + mean_y)),
        semi_axes_px=(float(ax1 * scale), float(ax2 * scale)),
        angle_rad=float(theta),
    )


def _fit_ellipses_direct(samples_xy: FloatArray) -> list[ImageEllipse | None]:
    """:func:`fit_ellipse_direct` of each of a stack of point sets, bit for bit.

    RANSAC fits hundreds of five-point samples a round, and one fit at a time
    was mostly numpy's per-call overhead. Every step here is the single
    fit's on a stack (numpy's stacked matmul, solve and eig call the same
    LAPACK and BLAS routines on each matrix), so the ellipses are exactly
    those of fitting the sets one by one.

    Parameters
    ----------
    samples_xy : (t, n, 2) float ndarray
        ``t`` sets of ``n >= 5`` points, pixels.

    Returns
    -------
    list of ImageEllipse or None
        One per set, None where :func:`fit_ellipse_direct` gives None.
    """
    pts = np.asarray(samples_xy, dtype=np.float64)
    if len(pts) == 0:
        return []
    if pts.shape[1] < 5:
        return [None] * len(pts)
    mean = pts.mean(axis=1)
    scale = np.sqrt(((pts - mean[:, None, :]) ** 2).sum(axis=2).mean(axis=1))
    scale[scale == 0] = 1.0
    x = (pts[:, :, 0] - mean[:, 0:1]) / scale[:, None]
    y = (pts[:, :, 1] - mean[:, 1:2]) / scale[:, None]
    d1 = np.stack([x * x, x * y, y * y], axis=2)
    d2 = np.stack([x, y, np.ones_like(x)], axis=2)
    d1_t, d2_t = d1.transpose(0, 2, 1), d2.transpose(0, 2, 1)
    s1, s2, s3 = d1_t @ d1, d1_t @ d2, d2_t @ d2
    try:
        t = -np.linalg.solve(s3, s2.transpose(0, 2, 1))
        m = s1 + s2 @ t
        m = np.stack([m[:, 2] / 2, -m[:, 1], m[:, 0] / 2], axis=1)
        evecs = np.real(np.linalg.eig(m)[1])
    except np.linalg.LinAlgError:
        # One degenerate set fails the whole stack; fit them one by one instead.
        return [fit_ellipse_direct(p) for p in pts]
    cond = 4 * evecs[:, 0] * evecs[:, 2] - evecs[:, 1] ** 2
    good = cond > 0
    first = np.argmax(good, axis=1)
    a1 = evecs[np.arange(len(pts)), :, first]
    means, scales = mean.tolist(), scale.tolist()
    out: list[ImageEllipse | None] = [None] * len(pts)
    for i in np.flatnonzero(good.any(axis=1)).tolist():
        # One matrix-vector product at a time, as in the single fit.
        conic = a1[i].tolist() + (t[i] @ a1[i]).tolist()
        out[i] = _conic_to_ellipse(conic, means[i], scales[i])
    return out


class _RimIndex:
    """Rim points sorted by x, to find those near an ellipse without looking at all.

    A cluttered blob (a pot, a ball) has tens of thousands of rim points,
    and RANSAC asks hundreds of times which lie near a wink-sized ellipse.
    """

    def __init__(self, rim_xy: FloatArray) -> None:
        self.xy = rim_xy
        self._order = np.argsort(rim_xy[:, 0], kind="stable")
        self._sorted_x = rim_xy[self._order, 0]

    def near(
        self,
        ellipse: ImageEllipse,
        tol_px: float,
        among: npt.NDArray[np.bool_] | None = None,
    ) -> npt.NDArray[np.bool_]:
        """Which points lie within ``tol_px`` of the rim (``ImageEllipse.distance_px``).

        The same answer as testing every point: that distance is the point's
        distance from the centre less the ellipse's radius along the same
        ray, at most the semi-major axis, so a point nearer than ``tol_px``
        lies within ``semi-major + tol_px`` of the centre. Only those are
        tested (with a pixel to spare).
        """
        reach = max(ellipse.semi_axes_px) + tol_px + 1.0
        cx, cy = ellipse.centre_xy_px
        lo, hi = np.searchsorted(self._sorted_x, [cx - reach, cx + reach])
        rows = self._order[lo:hi]
        rows = rows[np.abs(self.xy[rows, 1] - cy) <= reach]
        if among is not None:
            rows = rows[among[rows]]
        out = np.zeros(len(self.xy), dtype=bool)
        out[rows] = np.abs(ellipse.distance_px(self.xy[rows])) < tol_px
        return out


def _ransac_arcs(
    rim_xy: FloatArray,
    chains: list[FloatArray],
    *,
    min_semi_minor_px: float,
    max_semi_major_px: float,
    rng: np.random.Generator,
    is_wink: Callable[[ImageEllipse, FloatArray], bool] | None = None,
) -> list[tuple[ImageEllipse, npt.NDArray[np.bool_]]]:
    """Pull ellipses out of one blob's rim, best supported first.

    Minimal samples are drawn from short stretches of one contour chain, so
    that all five points usually belong to the same wink even when several
    winks touch. With ``is_wink``, an ellipse it refuses (one through arcs of
    two winks, say) does not use up the rim: the next best supported trial
    is tried instead, so a wink partly hidden in a pile can still be found.
    """
    found: list[tuple[ImageEllipse, npt.NDArray[np.bool_]]] = []
    remaining = np.ones(len(rim_xy), dtype=bool)
    rim = _RimIndex(rim_xy)
    offsets = np.cumsum([0] + [len(c) for c in chains])
    lengths = np.array([len(c) for c in chains], dtype=np.float64)
    pick = lengths / lengths.sum()
    # rng.choice(len(chains), p=pick) is one rng.random() looked up in this
    # table (numpy's own steps); drawing it so saves ~10 us of checks a draw,
    # with the same draws.
    pick_cdf = pick.cumsum()
    pick_cdf /= pick_cdf[-1]
    for _ in range(8):
        if remaining.sum() < 30:
            break
        # A round's samples do not depend on its fits (``remaining`` changes only
        # between rounds), so they are drawn first, in the same order, and fitted
        # in one batch.
        samples: list[npt.NDArray[np.intp]] = []
        for trial_no in range(50):
            k = int(pick_cdf.searchsorted(rng.random(), side="right"))
            lo, hi = int(offsets[k]), int(offsets[k + 1])
            n = hi - lo
            if n < 20:
                continue
            span = max(10, n // 2 if trial_no % 2 else n // 4)
            start = int(rng.integers(n))
            idx = lo + (start + np.sort(rng.choice(span, 5, replace=False))) % n
            if remaining[idx].all():
                samples.append(idx)
        trials: list[tuple[float, ImageEllipse, npt.NDArray[np.bool_]]] = []
        fits = _fit_ellipses_direct(rim_xy[np.array(samples)]) if samples else []
        for model in fits:
            if model is None or not _plausible(model, min_semi_minor_px, max_semi_major_px):
                continue
            inl = rim.near(model, _INLIER_PX, remaining)
            # Support is rim length explained, relative to the ellipse's perimeter,
            # so one large wink does not always beat a well-seen small one.
            support = inl.sum() / math.sqrt(model.semi_axes_px[0])
            trials.append((float(support), model, inl))
        if not trials:
            break
        trials.sort(key=lambda t: -t[0])
        refused: list[ImageEllipse] = []
        accepted: ImageEllipse | None = None
        for _, trial_model, _ in trials:
            # Only a few distinct runners-up: each check costs a look at the image.
            if len(refused) >= (6 if is_wink is not None else 1):
                break
            if any(_same_wink(trial_model, r) for r in refused):
                continue
            model = _refit(trial_model, rim, remaining, min_semi_minor_px, max_semi_major_px)
            support = rim.near(model, _INLIER_PX, remaining)
            if is_wink is None or is_wink(model, rim_xy[support]):
                accepted = model
                break
            refused.append(trial_model)
        if accepted is None:
            # Nothing here is a wink; the refused fits may share rim with one
            # that is (the visible arc of a wink in a pile), so no rim is used
            # up: the next round draws fresh samples.
            continue
        model = accepted
        inl = rim.near(model, _INLIER_PX, remaining)
        coverage = _angular_coverage(model, rim_xy[inl])
        if inl.sum() < 40 or coverage < 0.35:
            # Too little rim: mark the sample's points spent and try the rest.
            remaining &= ~inl
            continue
        if any(_same_wink(model, other) for other, _ in found):
            remaining &= ~inl
            continue
        found.append((model, inl))
        remaining &= ~rim.near(model, 2 * _INLIER_PX)
    return found


def _refit(
    model: ImageEllipse,
    rim: _RimIndex,
    remaining: npt.NDArray[np.bool_],
    min_semi_minor_px: float,
    max_semi_major_px: float,
) -> ImageEllipse:
    """A RANSAC model refitted to the rim points near it, in narrowing bands."""
    for tol in (3 * _INLIER_PX, 2 * _INLIER_PX, _INLIER_PX, _INLIER_PX):
        band = rim.near(model, tol, remaining)
        refit = fit_ellipse_direct(rim.xy[band])
        if refit is None or not _plausible(refit, min_semi_minor_px, max_semi_major_px):
            break
        model = refit
    return model


def _same_wink(e1: ImageEllipse, e2: ImageEllipse) -> bool:
    """Two fits of one wink: centres closer than a third of the smaller minor axis."""
    gap = math.hypot(
        e1.centre_xy_px[0] - e2.centre_xy_px[0], e1.centre_xy_px[1] - e2.centre_xy_px[1]
    )
    return gap < min(e1.semi_axes_px[1], e2.semi_axes_px[1]) / 3


def _plausible(e: ImageEllipse, min_semi_minor_px: float, max_semi_major_px: float) -> bool:
    a, b = e.semi_axes_px
    # Up to 45 degrees from vertical plus a wink's own tilt: b/a above ~0.45.
    return min_semi_minor_px <= b and a <= max_semi_major_px and b / a > 0.45


def _angular_coverage(e: ImageEllipse, pts: FloatArray) -> float:
    """Share of the ellipse's parameter angle covered by points (36 bins)."""
    if len(pts) == 0:
        return 0.0
    u = _to_unit_circle(e, pts, 0.0)
    ang = np.arctan2(u[:, 1], u[:, 0])
    bins = np.unique(((ang + np.pi) / (2 * np.pi) * 36).astype(int) % 36)
    return len(bins) / 36.0


# --------------------------------------------------------------------------
# Colour
# --------------------------------------------------------------------------

#: Hue angle (degrees, atan2(b*, a*) of the difference from the felt) of each colour.
_HUE_DEG = {Colour.RED: 20.0, Colour.YELLOW: 85.0, Colour.GREEN: 150.0, Colour.BLUE: -80.0}


def _classify_colour(delta_lab: FloatArray) -> Colour | None:
    """Colour from the median CIELAB difference to the felt, or None if grey."""
    da, db = float(delta_lab[1]), float(delta_lab[2])
    if math.hypot(da, db) < 4.0:
        return None
    hue = math.degrees(math.atan2(db, da))
    best = min(_HUE_DEG, key=lambda c: abs((hue - _HUE_DEG[c] + 180) % 360 - 180))
    return best


def felt_contrast(image_bgr: npt.NDArray[np.uint8], ellipse: ImageEllipse) -> float:
    """Colour distance (CIELAB units, as the detector measures it) of a wink from the felt.

    The felt is the photo's median colour; the wink's colour the median over
    the middle of its ellipse. Winks on felt of nearly their own colour (green
    on green felt) come out under ~18; others 25 and more.
    """
    small = image_bgr[::16, ::16]
    felt = np.median(cv2.cvtColor(small, cv2.COLOR_BGR2LAB).reshape(-1, 3), axis=0)
    a, b = ellipse.semi_axes_px
    core = ImageEllipse(ellipse.centre_xy_px, (0.6 * a, 0.6 * b), ellipse.angle_rad)
    cx, cy = ellipse.centre_xy_px
    h, w = image_bgr.shape[:2]
    x0, x1 = max(0, int(cx - a)), min(w, int(cx + a) + 1)
    y0, y1 = max(0, int(cy - a)), min(h, int(cy + a) + 1)
    if x1 <= x0 or y1 <= y0:
        return float("nan")
    lab = _lab(image_bgr[y0:y1, x0:x1])
    dist = colour_distance(lab, felt)
    return _median_inside(dist, replace(core, centre_xy_px=(cx - x0, cy - y0)))


# --------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------


def _lab(image_bgr: npt.NDArray[np.uint8]) -> FloatArray:
    # float32: these maps are large and precision beyond 1e-6 is not needed.
    return cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB).astype(np.float32)


def colour_distance(lab: FloatArray, felt_lab: FloatArray) -> FloatArray:
    """How far each Lab pixel is from the felt's colour, shadows of the felt forgiven."""
    felt = np.asarray(felt_lab, dtype=np.float32)
    # One channel at a time and in place: on a 12 MP photo's crops the (h, w, 3)
    # temporaries took longer than the arithmetic (same values, ~2.5x faster).
    d_l = lab[..., 0] - felt[..., 0]
    # Shadows on the felt are darker but keep its hue: forgive darkening up to
    # _SHADOW_ALLOWANCE, so that only winks (a hue, or much darker, or lighter) stand out.
    dist = np.where(d_l < 0, np.maximum(0.0, -d_l - _SHADOW_ALLOWANCE), d_l)
    dist *= _LIGHTNESS_WEIGHT
    dist *= dist
    d_ab = lab[..., 1] - felt[..., 1]
    d_ab *= d_ab
    dist += d_ab
    np.subtract(lab[..., 2], felt[..., 2], out=d_ab)
    d_ab *= d_ab
    dist += d_ab
    return np.sqrt(dist, out=dist)


def find_closeup_winks(
    image_bgr: npt.NDArray[np.uint8], *, seed: int = 0
) -> tuple[CloseupWink, ...]:
    """All winks in a close-up photo, ordered by distance from the image centre.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    seed : int
        RANSAC seed; results are reproducible for a given seed.

    Raises
    ------
    NoWinksFoundError
        When nothing in the photo fits a wink.
    """
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError(f"expected a colour image (H, W, 3), but got shape {image_bgr.shape}")
    height, width = image_bgr.shape[:2]
    rng = np.random.default_rng(seed)
    coarse = cv2.resize(
        image_bgr,
        (max(1, width // _COARSE_SCALE), max(1, height // _COARSE_SCALE)),
        interpolation=cv2.INTER_AREA,
    )
    coarse_lab = _lab(coarse)
    bg_small = cv2.resize(
        coarse,
        (max(1, width // _BACKGROUND_SCALE), max(1, height // _BACKGROUND_SCALE)),
        interpolation=cv2.INTER_AREA,
    )
    ksize = max(3, (min(bg_small.shape[:2]) // 3) | 1)
    bg_small = cv2.medianBlur(bg_small, ksize)
    felt_coarse = _lab(cv2.resize(bg_small, (coarse.shape[1], coarse.shape[0])))
    # The felt's hue is one colour across the photo; only its brightness
    # varies with the light. A local median is pulled by a pot or a pile of
    # winks, so the hue is taken from the whole photo, where felt dominates.
    felt_coarse[..., 1:] = np.median(coarse_lab[..., 1:].reshape(-1, 2), axis=0)
    dist_coarse = colour_distance(coarse_lab, felt_coarse)
    mask = (dist_coarse > _BLOB_THRESHOLD).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n_labels, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)

    # A wink is 16-22 mm across; 15-40 cm away that is about 1/25 to 1/4 of
    # the image width. Overhead webcam frames are handled elsewhere.
    min_semi_minor_px = width / 120.0
    max_semi_major_px = width / 5.0
    winks: list[CloseupWink] = []
    for label in range(1, n_labels):
        x0, y0, w, h, area = stats[label]
        if area * _COARSE_SCALE**2 < math.pi * min_semi_minor_px**2 * 0.5:
            continue
        pad = 3
        xa = max(0, (x0 - pad) * _COARSE_SCALE)
        ya = max(0, (y0 - pad) * _COARSE_SCALE)
        xb = min(width, (x0 + w + pad) * _COARSE_SCALE)
        yb = min(height, (y0 + h + pad) * _COARSE_SCALE)
        roi = image_bgr[ya:yb, xa:xb]
        work = _WORK_SCALE
        if work > 1:
            roi = cv2.resize(
                roi, (roi.shape[1] // work, roi.shape[0] // work), interpolation=cv2.INTER_AREA
            )
        found_here = _winks_in_blob(
            roi,
            felt_lab=np.median(felt_coarse[labels == label].reshape(-1, 3), axis=0),
            offset_xy=(0, 0),
            min_semi_minor_px=min_semi_minor_px / work,
            max_semi_major_px=max_semi_major_px / work,
            rng=rng,
        )
        winks.extend(_rescaled(w, work, (xa, ya)) for w in found_here)
    if not winks:
        raise NoWinksFoundError(
            "no winks found in the photo: nothing there has a wink's colour and round outline; "
            "take the photo closer to the winks, in good light"
        )
    # Crops of neighbouring blobs overlap a little: keep one fit per wink.
    winks.sort(key=lambda k: -len(k.rim_image_px))
    unique: list[CloseupWink] = []
    for k in winks:
        if not any(_same_wink(k.ellipse, u.ellipse) for u in unique):
            unique.append(k)
    winks = unique
    centre = np.array([width / 2, height / 2])
    winks.sort(key=lambda k: float(np.hypot(*(np.asarray(k.ellipse.centre_xy_px) - centre))))
    return tuple(
        CloseupWink(
            id=f"W{i + 1}",
            colour=k.colour,
            ellipse=k.ellipse,
            rim_image_px=k.rim_image_px,
            rim_visible_fraction=k.rim_visible_fraction,
            fit_rms_px=k.fit_rms_px,
        )
        for i, k in enumerate(winks)
    )


def _rescaled(w: CloseupWink, factor: int, offset_xy: tuple[int, int]) -> CloseupWink:
    """A wink found in a shrunk crop, in full-image pixels.

    Shrinking by ``factor`` with area averaging puts the centre of shrunk
    pixel i at full-resolution coordinate ``factor * i + (factor - 1) / 2``.
    """
    shift = (factor - 1) / 2

    def full(p: FloatArray) -> FloatArray:
        return np.asarray(p) * factor + shift + np.asarray(offset_xy, dtype=np.float64)

    cx, cy = full(np.asarray(w.ellipse.centre_xy_px))
    a, b = w.ellipse.semi_axes_px
    return CloseupWink(
        id=w.id,
        colour=w.colour,
        ellipse=ImageEllipse((float(cx), float(cy)), (a * factor, b * factor), w.ellipse.angle_rad),
        rim_image_px=full(w.rim_image_px),
        rim_visible_fraction=w.rim_visible_fraction,
        fit_rms_px=w.fit_rms_px * factor,
    )


def _hidden_rim_is_covered(
    model: ImageEllipse, rim_px: FloatArray, covered: FloatArray, min_share: float = 0.8
) -> bool:
    """Whether the stretches of the ellipse with no rim point found lie under other winks.

    A wink partly hidden in a pile has its unseen rim under the winks on top
    of it; an ellipse strung across arcs of several winks passes over bare
    felt somewhere.
    """
    pts = model.points(72)
    if len(rim_px) == 0:
        return False
    # Which stretches of the ellipse (5-degree bins of its angle) have rim points.
    u = _to_unit_circle(model, rim_px, 0.0)
    seen_bins = np.unique(
        ((np.arctan2(u[:, 1], u[:, 0]) + np.pi) / (2 * np.pi) * 72).astype(int) % 72
    )
    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    ang = np.arctan2(np.sin(t), np.cos(t))
    bins = ((ang + np.pi) / (2 * np.pi) * 72).astype(int) % 72
    hidden = ~np.isin(bins, seen_bins)
    if not hidden.any():
        return True
    h, w = covered.shape[:2]
    xy = np.round(pts[hidden]).astype(int)
    ok = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
    if not ok.any():
        return True  # hidden by the edge of the crop, nothing to check
    under = covered[xy[ok, 1], xy[ok, 0]] > 0.6
    return float(np.mean(under)) >= min_share


def _median_inside(values: FloatArray, ellipse: ImageEllipse) -> float:
    return _stat_inside(values, ellipse, np.median)


def _stat_inside(values: FloatArray, ellipse: ImageEllipse, stat: Callable[..., Any]) -> float:
    cx, cy = ellipse.centre_xy_px
    a = ellipse.semi_axes_px[0]
    y0, y1 = max(0, int(cy - a)), min(values.shape[0], int(cy + a) + 1)
    x0, x1 = max(0, int(cx - a)), min(values.shape[1], int(cx + a) + 1)
    if y1 <= y0 or x1 <= x0:
        return float("nan")  # wholly off the crop
    # Every other pixel of the box; row by row, as the values are taken.
    inside = ellipse.contains_grid(np.arange(x0, x1, 2), np.arange(y0, y1, 2))
    if inside.sum() < 5:
        return float("nan")
    return float(stat(values[y0:y1:2, x0:x1:2][inside]))


def _to_true_edge(
    rim_px: FloatArray, ellipse: ImageEllipse, felt_distance: FloatArray
) -> FloatArray:
    """Rim points moved to half-way up the colour step from the felt, pixels.

    The colour-share line the rims are traced on lies about a pixel inside a
    wink's edge against the felt (the darker side wall and the blur pull the
    share down before the edge): every length came out ~1 % long and plan
    gaps ~0.2 mm wide. Against the felt the edge is where the colour distance
    from the felt is half-way between its levels just inside and just
    outside, whatever the blur. Points against another wink are left as they
    are.
    """
    if len(rim_px) == 0:
        return rim_px
    normal = ellipse.outward_normals(rim_px)
    steps = np.arange(-6.0, 6.01, 0.5)
    xs = (rim_px[:, 0:1] + normal[:, 0:1] * steps[None, :]).astype(np.float32)
    ys = (rim_px[:, 1:2] + normal[:, 1:2] * steps[None, :]).astype(np.float32)
    prof = cv2.remap(
        np.ascontiguousarray(felt_distance, dtype=np.float32),
        xs,
        ys,
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    ).astype(np.float64)
    inner = np.median(prof[:, steps <= -3.5], axis=1)
    outer = np.median(prof[:, steps >= 3.5], axis=1)
    level = (inner + outer) / 2
    # Where the profile last stands above the half level, going outwards.
    above = prof >= level[:, None]
    n_steps = len(steps)
    last = n_steps - 1 - np.argmax(above[:, ::-1], axis=1)
    against_felt = (inner - outer > 2 * _BLOB_THRESHOLD) & (outer < 0.35 * inner)
    ok = against_felt & above.any(axis=1) & (last + 1 < n_steps)
    rows = np.flatnonzero(ok)
    i = last[rows]
    v0, v1 = prof[rows, i], prof[rows, i + 1]
    den = np.where(v0 != v1, v0 - v1, 1.0)
    frac = np.where(v0 != v1, (v0 - level[rows]) / den, 0.0)
    shift = np.zeros(len(rim_px))
    shift[rows] = steps[i] + frac * (steps[1] - steps[0])
    # The half level still lies a little inside the silhouette (the rounded
    # edge's shading starts before it ends): measured against the generator's
    # cameras, flat whole winks came out OUTLINE_INSET_PX small all round.
    shift[rows] += OUTLINE_INSET_PX
    shift = np.clip(shift, -2.0, 2.0)
    return np.asarray(rim_px + normal * shift[:, None])


def iso_chains(values: FloatArray, level: float, min_points: int) -> list[FloatArray]:
    """The iso-lines of ``values`` at ``level`` with at least ``min_points`` points.

    Exactly the chains of ``skimage.measure.find_contours(values, level)``
    that long, in the same order, as (n, 2) ``image_xy`` pixel arrays. A
    large blob of wink colour (a pot, a ball, a pile) is speckled with
    texture that traces thousands of tiny chains, and assembling those took
    most of the time: specks too small to give a chain that long are evened
    out first (see :func:`_without_specks`).

    One exception: a value exactly at ``level`` is taken as a hair (one
    floating-point step) below it. There skimage puts a point on the pixel's
    centre, where two chains can meet, and the array joiner of
    :func:`_find_contours` hands the whole map back to skimage; a blurred
    share map hits 0.5 exactly on about one pixel in a million, and that
    fallback cost 0.17 s on a pot's map. The chains then differ from
    skimage's only round that pixel, by far less than a pixel.

    Parameters
    ----------
    values : (h, w) float ndarray
    level : float
    min_points : int

    Returns
    -------
    list of (n, 2) float ndarray
        ``(x_px, y_px)`` along each chain.
    """
    evened = _without_specks(np.asarray(values), level, min_points)
    at_level = evened == level
    if at_level.any():
        evened = np.where(at_level, np.nextafter(evened.dtype.type(level), -np.inf), evened)
    return [c[:, ::-1] for c in _find_contours(evened, level) if len(c) >= min_points]


#: Marching squares as skimage draws each cell's segments (bit 1: upper left above
#: the level, 2: upper right, 4: lower left, 8: lower right), low values on the
#: left going from the first side to the second; sides 0 top, 1 bottom, 2 left,
#: 3 right. Cells 6 and 9 (saddles, low values joined) hold a second segment.
_CELL_SEGMENT = {
    1: (0, 2), 2: (3, 0), 3: (3, 2), 4: (2, 1), 5: (0, 1), 6: (3, 0), 7: (3, 1),
    8: (1, 3), 9: (0, 2), 10: (1, 0), 11: (1, 2), 12: (2, 3), 13: (0, 3), 14: (2, 0),
}  # fmt: skip
_SADDLE_SEGMENT = {6: (2, 1), 9: (1, 3)}
_FROM_SIDE = np.array([_CELL_SEGMENT.get(k, (-1, -1))[0] for k in range(16)], dtype=np.int8)
_TO_SIDE = np.array([_CELL_SEGMENT.get(k, (-1, -1))[1] for k in range(16)], dtype=np.int8)


class _ExactLevelError(ValueError):
    """A pixel lies exactly at the level (or is not finite): chains can meet there."""


def _find_contours(values: FloatArray, level: float) -> list[FloatArray]:
    """``skimage.measure.find_contours(values, level)``, the same arrays, with numpy.

    skimage joins its marching-squares segments one at a time in Python, which
    took most of the time on a pot's hundred thousand segments. Here the
    segments are joined as arrays, and each chain comes out as skimage's
    assembly leaves it: chains ordered by their first segment in scan order;
    an open chain from its free end; a closed one starting (and ending) at the
    end point of its last segment in scan order, the one that closed it. The
    points are computed with skimage's arithmetic. Where a pixel is exactly at
    the level (chains could meet on it) skimage itself is asked.

    Parameters
    ----------
    values : (h, w) float ndarray
    level : float

    Returns
    -------
    list of (n, 2) float ndarray
        ``(row, col)`` along each chain.
    """
    v = np.asarray(values, dtype=np.float64)
    h, w = v.shape
    above = (v > level).view(np.uint8)
    case = above[:-1, :-1] | (above[:-1, 1:] << 1)
    case |= above[1:, :-1] << 2
    case |= above[1:, 1:] << 3
    # Cases 1..14 (uint8 wraps 0 round to 255): the cells a chain crosses.
    cells = np.flatnonzero((case - 1) < 14)
    if len(cells) == 0:
        return []
    cell_case = case.ravel()[cells]
    saddle = (cell_case == 6) | (cell_case == 9)
    n_seg = len(cells) + int(saddle.sum())
    # Segments in skimage's order: cell by cell, a saddle's second one right after.
    first_at = np.arange(len(cells)) + np.concatenate([[0], np.cumsum(saddle)[:-1]])
    second_at = first_at[saddle] + 1
    seg_cell = np.empty(n_seg, dtype=np.intp)
    from_side = np.empty(n_seg, dtype=np.int8)
    to_side = np.empty(n_seg, dtype=np.int8)
    seg_cell[first_at], seg_cell[second_at] = cells, cells[saddle]
    from_side[first_at], to_side[first_at] = _FROM_SIDE[cell_case], _TO_SIDE[cell_case]
    six = cell_case[saddle] == 6
    from_side[second_at] = np.where(six, _SADDLE_SEGMENT[6][0], _SADDLE_SEGMENT[9][0])
    to_side[second_at] = np.where(six, _SADDLE_SEGMENT[6][1], _SADDLE_SEGMENT[9][1])
    row, col = np.divmod(seg_cell, w - 1)
    # Each point lies on one pixel edge: horizontal edges (between (r, c) and
    # (r, c + 1)) numbered first, then vertical ones (between (r, c) and (r + 1, c)).
    n_horizontal = h * (w - 1)

    def edge_of(side: npt.NDArray[np.int8]) -> npt.NDArray[np.intp]:
        return np.select(
            [side == 0, side == 1, side == 2],
            [row * (w - 1) + col, (row + 1) * (w - 1) + col, n_horizontal + row * w + col],
            n_horizontal + row * w + col + 1,
        )

    edge_from, edge_to = edge_of(from_side), edge_of(to_side)
    from_order = np.argsort(edge_from, kind="stable")
    from_sorted = edge_from[from_order]
    to_sorted = np.sort(edge_to)
    if np.any(from_sorted[1:] == from_sorted[:-1]) or np.any(to_sorted[1:] == to_sorted[:-1]):
        return measure.find_contours(v, level)
    # The segment that starts where each one ends (-1 at an open chain's end).
    at = np.minimum(np.searchsorted(from_sorted, edge_to), n_seg - 1)
    succ = np.where(from_sorted[at] == edge_to, from_order[at], -1)
    # Pointer doubling, as many rounds as the longest chain could need.
    rounds = int(np.ceil(np.log2(n_seg))) + 1
    seg = np.arange(n_seg)
    jump = np.where(succ < 0, seg, succ)
    latest = seg.copy()
    for _ in range(rounds):
        latest = np.maximum(latest, latest[jump])
        jump = jump[jump]
    # A closed chain is cut after its latest segment, so that every chain is
    # a run from a head to a last segment.
    closed = succ[jump] >= 0
    succ = np.where(closed & (latest == seg), -1, succ)
    jump = np.where(succ < 0, seg, succ)
    to_last = (succ >= 0).astype(np.intp)
    for _ in range(rounds):
        to_last = to_last + to_last[jump]
        jump = jump[jump]
    last = jump
    order = np.lexsort((-to_last, last))
    last_in_order = last[order]
    starts = np.flatnonzero(np.r_[True, last_in_order[1:] != last_in_order[:-1]])
    ends = np.r_[starts[1:], n_seg]
    first_seg = np.minimum.reduceat(order, starts)

    def points(edge: npt.NDArray[np.intp]) -> FloatArray:
        horizontal = edge < n_horizontal
        e = np.where(horizontal, edge, edge - n_horizontal)
        r = np.where(horizontal, e // (w - 1), e // w)
        c = np.where(horizontal, e % (w - 1), e % w)
        lo = v[r, c]
        hi = v[np.where(horizontal, r, r + 1), np.where(horizontal, c + 1, c)]
        if np.any(lo == level) or np.any(hi == level) or not np.isfinite(lo + hi).all():
            raise _ExactLevelError
        frac = (level - lo) / (hi - lo)
        return np.column_stack(
            [np.where(horizontal, r, r + frac), np.where(horizontal, c + frac, c)]
        )

    try:
        # A chain is its head segment's start, then every segment's end.
        to_rc = points(edge_to[order])
        head_rc = points(edge_from[order[starts]])
    except _ExactLevelError:
        return measure.find_contours(v, level)
    return [
        np.concatenate([head_rc[k : k + 1], to_rc[starts[k] : ends[k]]])
        for k in np.argsort(first_seg, kind="stable").tolist()
    ]


def _without_specks(values: FloatArray, level: float, min_points: int) -> FloatArray:
    """``values`` with every speck whose iso-line chains are all too short evened out.

    A speck is a connected part of the pixels above ``level`` (4-connected,
    as marching squares joins them by default) or of those at or below it
    (8-connected). Each point of a chain lies on one pixel edge between the
    two sides, so a chain round a part crossing ``c`` edges has at most
    ``c + 1`` points. A part with ``c + 1 < min_points`` is set to the other
    side: its chains vanish, and no other chain changes, because a 2 x 2
    cell that holds a speck's pixel holds no pixel of another part on the
    same side (they would be one part), and a chain through a cell uses only
    the values along its own pixel edges. The parts above are evened first;
    the parts below are then taken from what is left. (One exception: a
    value exactly at ``level`` puts chain points on a pixel's centre, where
    two chains could meet; the blurred float maps here do not hit it.)
    """
    out = values
    for above, connectivity, fill in ((True, 4, level - 1.0), (False, 8, level + 1.0)):
        high = out > level
        side = high if above else ~high
        n_parts, labels = cv2.connectedComponents(side.astype(np.uint8), connectivity=connectivity)
        if n_parts <= 1:
            continue
        # Crossed pixel edges at each pixel; of the two pixels along an edge
        # exactly one is on this side, so a part's sum is its own crossings.
        across = high[:, 1:] != high[:, :-1]
        down = high[1:, :] != high[:-1, :]
        edges = np.zeros(high.shape, dtype=np.uint8)
        edges[:, 1:] += across
        edges[:, :-1] += across
        edges[1:, :] += down
        edges[:-1, :] += down
        # Only pixels on a crossing add anything; a pot's map has a million
        # pixels but a tenth of them on one, and weighted bincount is slow per pixel.
        on_edge = np.flatnonzero(edges)
        crossings = np.bincount(
            labels.ravel()[on_edge], weights=edges.ravel()[on_edge], minlength=n_parts
        )
        small = crossings + 1 < min_points
        small[0] = False
        if not small.any():
            continue
        out = np.where(small[labels], np.asarray(fill, dtype=out.dtype), out)
    return out


#: A share below minus this is clearly negative (no pixel holds less than
#: none of a colour); each unit of it costs a mix this many units of share.
_NEGATIVE_SHARE = 0.1
_NEGATIVE_WEIGHT = 10.0


def _unmix(delta: FloatArray, basis: FloatArray) -> FloatArray:
    """Pixels' colour differences from the felt as shares of the basis colours.

    Parameters
    ----------
    delta : (n, 3) float32 ndarray
        Pixel minus felt colour (BGR).
    basis : (3, k) float32 ndarray
        The colours' differences from the felt, k <= 4.

    Returns
    -------
    (n, k) float32 ndarray

    With four colours (three winks and the shadow) a BGR pixel has no unique
    mix; each pixel takes the three-colour mix with no clearly negative share
    and the least total share, the simplest mix that explains it. Without
    this a shadow on the felt, forced into three wink colours, came out as
    half a wink and drew a halo round the winks. Two wink colours that add up
    to the shadow (:func:`_shadow_made_of_winks`) are unmixed the same way
    (:func:`_unmix_degenerate`); other bases of up to three colours by their
    pseudo-inverse.
    """
    k = basis.shape[1]
    if k == 3 and _shadow_made_of_winks(basis):
        return _unmix_degenerate(delta, basis)
    if k <= 3:
        mix = np.linalg.pinv(basis).astype(np.float32)  # (k, 3)
        # As (k, n), each colour's shares one contiguous row (as below): the
        # caller scatters them colour by colour; the same products as delta @ mix.T.
        return np.asarray((mix @ delta.T).T)
    m = k - 1
    cols = [[c for c in range(k) if c != drop] for drop in range(k)]
    mixes = np.concatenate([np.linalg.pinv(basis[:, c]).T for c in cols], axis=1)  # (3, k*m)
    # One row per (dropped colour, share): these maps have millions of pixels,
    # and numpy sums and picks along long contiguous rows far faster than
    # along a short last axis.
    subs = mixes.astype(np.float32).T @ delta.T  # (k*m, n): row drop*m + i
    choice = np.zeros(len(delta), dtype=np.intp)
    least: npt.NDArray[np.float32] | None = None
    # In place in a few buffers: the same float32 operations, without a fresh
    # million-pixel temporary for each.
    term = np.empty(len(delta), dtype=np.float32)
    for drop in range(k):
        rows = subs[drop * m : (drop + 1) * m]
        total = np.abs(rows[0])
        negative = np.negative(rows[0])
        negative -= _NEGATIVE_SHARE
        np.maximum(negative, 0.0, out=negative)
        for i in range(1, m):
            np.abs(rows[i], out=term)
            total += term
            np.negative(rows[i], out=term)
            term -= _NEGATIVE_SHARE
            np.maximum(term, 0.0, out=term)
            negative += term
        negative *= _NEGATIVE_WEIGHT
        cost = total
        cost += negative
        if least is None:
            least = cost
        else:
            # Strictly less: a tie keeps the first mix, as argmin would.
            choice[cost < least] = drop
            np.minimum(least, cost, out=least)
    out = np.zeros((k, len(delta)), dtype=np.float32)
    for drop in range(k):
        here = choice == drop
        for i, c in enumerate(cols[drop]):
            np.copyto(out[c], subs[drop * m + i], where=here)
    return out.T


#: A basis whose condition number is above this has a colour all but made of
#: the others. Over 42 close-ups the bases' conditions were 1-40 or 50-4600
#: (docs/benchmarks.md, "Session 27").
UNMIX_MAX_CONDITION = 50.0
#: Weight of a sub-mix's residual (over the basis colours' median length)
#: against its total share: a residual of one colour's length costs as much as
#: ten of that colour.
_RESIDUAL_WEIGHT = 10.0


def _shadow_made_of_winks(basis: FloatArray) -> bool:
    """Whether two wink colours of opposite hue add up to the shadow.

    Two complementary colours, differences from the felt pointing apart, can
    sum to a darkening of the felt: on blue-grey felt a blue wink differs
    from it as a shadow less some yellow does (condition 530 in
    `closeup_07016`), and the exact mix read a yellow wink's pixels as 1.6
    blue plus 1.7 yellow, which traced blue ellipses inside it. Over 42
    close-ups the two wink colours of the bases above
    :data:`UNMIX_MAX_CONDITION` were 125-158 degrees apart or 1-58 (one
    wink's pixels split in two hue classes, or a wink colour alike the
    shadow, such as a dark grey wink): those are left to the exact mix, which
    the review was measured on (docs/benchmarks.md, "Session 27").
    """
    first, second = basis[:, 0], basis[:, 1]
    cosine = float(first @ second) / float(np.linalg.norm(first) * np.linalg.norm(second))
    return bool(
        cosine < 0.0
        and np.linalg.cond(basis) > UNMIX_MAX_CONDITION
        and all(np.linalg.cond(basis[:, [c, 2]]) <= UNMIX_MAX_CONDITION for c in (0, 1))
    )


def _unmix_degenerate(delta: FloatArray, basis: FloatArray) -> FloatArray:
    """:func:`_unmix` for two wink colours and a shadow made of them.

    The exact mix then turns pixel noise into large shares of opposite sign.
    Each pixel takes, of the exact mix and the least-squares mixes of all
    colours but one, the one with the least total share, no clearly negative
    share, and little left unexplained (:data:`_RESIDUAL_WEIGHT`): the
    simplest mix that explains it, as for four colours. A pixel half of one
    wink and half of the other reads as less of one and a shadow, which moves
    an overlap's measured edge by about what other felts' blur does (0.1-0.2
    mm, tests/vision/test_review.py).

    Parameters
    ----------
    delta : (n, 3) float32 ndarray
        Pixel minus felt colour (BGR).
    basis : (3, 3) float32 ndarray
        The two wink colours' differences from the felt, then the shadow's.

    Returns
    -------
    (n, 3) float32 ndarray
    """
    k = basis.shape[1]
    scale = float(np.median(np.linalg.norm(basis, axis=0)))
    subsets = [list(range(k)), *([c for c in range(k) if c != drop] for drop in range(k))]
    least = np.full(len(delta), np.inf, dtype=np.float32)
    out = np.zeros((len(delta), k), dtype=np.float32)
    for cols in subsets:
        sub = basis[:, cols]
        shares = delta @ np.linalg.pinv(sub).astype(np.float32).T  # (n, len(cols))
        residual = np.linalg.norm(delta - shares @ sub.T, axis=1) / scale
        cost = (
            np.abs(shares).sum(axis=1)
            + _NEGATIVE_WEIGHT * np.maximum(-shares - _NEGATIVE_SHARE, 0.0).sum(axis=1)
            + _RESIDUAL_WEIGHT * residual
        )
        better = cost < least
        least = np.where(better, cost, least)
        out[better] = 0.0
        out[np.ix_(better, cols)] = shares[better]
    return out


#: At most this many winks are recovered from one colour's unexplained outline.
_MAX_RECOVERED = 3
#: A neighbour's ellipse is tried as the missing wink's at its own size and at
#: the other size's (22 and 16 mm): at one place in the photo a wink's outline
#: scales with its diameter.
_SIZE_RATIOS = (
    1.0,
    LARGE_WINK_DIAMETER_MM / SMALL_WINK_DIAMETER_MM,
    SMALL_WINK_DIAMETER_MM / LARGE_WINK_DIAMETER_MM,
)


def _distances_and_normals(
    template: ImageEllipse, centre_xy_px: FloatArray, pts: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``distance_px`` and ``outward_normals`` of ``pts`` for ``template`` moved to a centre.

    The same arithmetic as those two methods of an :class:`ImageEllipse` with
    ``template``'s axes and angle centred at ``centre_xy_px``, the points
    turned into its frame once for both: the centre fit asks for both at
    every step, hundreds of times a photo.

    Parameters
    ----------
    template : ImageEllipse
    centre_xy_px : (2,) ndarray
    pts : (n, 2) float64 ndarray

    Returns
    -------
    distances : (n,) ndarray, pixels
    normals : (n, 2) ndarray
    """
    a, b = template.semi_axes_px
    c, s = math.cos(template.angle_rad), math.sin(template.angle_rad)
    d = pts - np.asarray((float(centre_xy_px[0]), float(centre_xy_px[1])))
    x = d[:, 0] * c + d[:, 1] * s
    y = -d[:, 0] * s + d[:, 1] * c
    ux, uy = x / a, y / b
    rho = np.hypot(ux, uy)
    cos_t, sin_t = ux / np.maximum(rho, 1e-12), uy / np.maximum(rho, 1e-12)
    distances = (rho - 1.0) * np.hypot(a * cos_t, b * sin_t)
    nx, ny = x / (a * a), y / (b * b)
    norm = np.maximum(np.hypot(nx, ny), 1e-12)
    normals = np.column_stack([(nx * c - ny * s) / norm, (nx * s + ny * c) / norm])
    return distances, normals


def _condition_2x2(m: FloatArray) -> float:
    """``np.linalg.cond(m)`` of a (2, 2) matrix: its largest singular value over its least.

    In closed form (the largest squared singular value over the absolute
    determinant), without an SVD's call: the centre fit asks it at every step.
    Within rounding of numpy's; a singular matrix gives infinity.
    """
    p, q, r, t = float(m[0, 0]), float(m[0, 1]), float(m[1, 0]), float(m[1, 1])
    total = p * p + q * q + r * r + t * t
    spread = math.hypot(p * p + q * q - r * r - t * t, 2.0 * (p * r + q * t))
    det = abs(p * t - q * r)
    if det == 0.0:
        return math.inf
    return 0.5 * (total + spread) / det


def _centre_with_shape(template: ImageEllipse, pts: FloatArray, start_xy: FloatArray) -> FloatArray:
    """The centre that puts ``pts`` on an ellipse of ``template``'s axes and angle.

    Iteratively reweighted least squares on the points' distances from the
    rim (moving the centre by d changes a distance by minus the outward
    normal dotted with d), points off by more than two pixels down-weighted.
    A step is at most half the ellipse's minor semi-axis, so that one
    iteration cannot jump to another part of the outline.

    Parameters
    ----------
    template : ImageEllipse
        Gives the axes and angle; its centre is not used.
    pts : (n, 2) ndarray
        Outline points, pixels.
    start_xy : (2,) ndarray
        Where the centre starts, pixels.

    Returns
    -------
    (2,) ndarray
        The centre, pixels.
    """
    centre = np.asarray(start_xy, dtype=np.float64)
    max_step_px = 0.5 * template.semi_axes_px[1]
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    for _ in range(20):
        d, n = _distances_and_normals(template, centre, pts)
        w = 1.0 / np.maximum(1.0, np.abs(d) / 2.0)
        a = (n * w[:, None]).T @ n
        # All the points' normals alike (a short straight stretch): the
        # centre is not fixed along it.
        if _condition_2x2(a) > 1e6:
            break
        step = np.linalg.solve(a, (n * (w * d)[:, None]).sum(axis=0))
        length = float(np.hypot(*step))
        if length > max_step_px:
            step *= max_step_px / length
        centre = centre + step
        if length < 0.05:
            break
    return centre


def _unexplained_outline_winks(
    colour: Colour,
    rim: FloatArray,
    is_wink: Callable[[ImageEllipse, FloatArray], bool],
    found: list[CloseupWink],
    dist: FloatArray,
) -> list[CloseupWink]:
    """Winks of ``colour`` whose outline the winks found leave unexplained.

    In a chain of winks of one colour (a pile), the middle wink's rim shows
    only as two short arcs against the felt: too little of one arc for an
    ellipse of its own, and no colour edge where it lies on or under its
    neighbours (fresh close-up 7707 read a chain of three as two). The blob's
    outline there is explained by none of the winks found, and a wink of the
    same colour near it gives the ellipse's shape (at the same place in the
    photo, at its own size or scaled to the other one, :data:`_SIZE_RATIOS`):
    only the centre is fitted, from both arcs at once. It must explain as
    much rim as RANSAC asks of a wink (40 points, 35 % of the way round) and
    pass the same test of a wink's middle.

    Parameters
    ----------
    colour : Colour
    rim : (n, 2) ndarray
        The colour's outline points (its share's half-way line), blob pixels.
    is_wink : callable
        The blob's test of an ellipse's middle, for this colour.
    found : list of CloseupWink
        The winks found in the blob so far, blob pixels.
    dist : (h, w) ndarray
        Colour distance from the felt, for the rim's true edge.

    Returns
    -------
    list of CloseupWink
        The winks recovered, blob pixels, at most :data:`_MAX_RECOVERED`.
    """

    def explains(w: CloseupWink) -> npt.NDArray[np.bool_]:
        # On its outline, or inside it: a wink under it shows no outline
        # there, and a line inside it (its wall, a highlight) taken for a
        # recovered wink's rim would read as that wink lying in front.
        return np.asarray(w.ellipse.distance_px(rim) < 2 * _INLIER_PX)

    recovered: list[CloseupWink] = []
    explained = np.zeros(len(rim), dtype=bool)
    for w in found:
        explained |= explains(w)
    for _ in range(_MAX_RECOVERED):
        winks = found + recovered
        templates = [w for w in winks if w.colour is colour]
        if not templates:
            break
        left = rim[~explained]
        if len(left) < 40:
            break
        best: tuple[float, ImageEllipse, npt.NDArray[np.bool_]] | None = None
        # The two neighbours with most unexplained outline round them.
        around = [np.hypot(*(left - np.asarray(t.ellipse.centre_xy_px)).T) for t in templates]
        ranked = sorted(
            range(len(templates)),
            key=lambda k: -int((around[k] < 4 * templates[k].ellipse.semi_axes_px[0]).sum()),
        )
        for k, scale in itertools.product(ranked[:2], _SIZE_RATIOS):
            template = templates[k]
            a, b = (scale * v for v in template.ellipse.semi_axes_px)
            shape = ImageEllipse(template.ellipse.centre_xy_px, (a, b), template.ellipse.angle_rad)
            # The missing wink touches or overlaps its neighbour: its rim lies
            # within the neighbour's radius and its own diameter (and a margin).
            near = around[k] < 1.3 * (template.ellipse.semi_axes_px[0] + 2 * a)
            if near.sum() < 40:
                continue
            # Enough points to place a centre; all of them are counted below.
            local = left[near][:: max(1, int(near.sum()) // 200)]
            middle = local.mean(axis=0)
            starts = [middle] + [
                middle + 0.6 * b * np.array([math.cos(t), math.sin(t)])
                for t in np.linspace(0.0, 2 * math.pi, 4, endpoint=False)
            ]
            for start in starts:
                c = _centre_with_shape(shape, local, start)
                e = ImageEllipse((float(c[0]), float(c[1])), (a, b), shape.angle_rad)
                inl = np.abs(e.distance_px(left)) < _INLIER_PX
                # Rim explained over the square root of the major semi-axis, as
                # RANSAC's support, so a larger ellipse does not win by size alone.
                support = float(inl.sum()) / math.sqrt(a)
                if best is None or support > best[0]:
                    best = (support, e, inl)
        if best is None:
            break
        _, model, inl = best
        n_in = int(inl.sum())
        pts = left[inl]
        if (
            n_in < 40
            or _angular_coverage(model, pts) < 0.35
            or any(_same_wink(model, w.ellipse) for w in winks)
            or not is_wink(model, pts)
        ):
            break
        pts = _to_true_edge(pts, model, dist)
        c = _centre_with_shape(model, pts, np.asarray(model.centre_xy_px))
        model = ImageEllipse((float(c[0]), float(c[1])), model.semi_axes_px, model.angle_rad)
        recovered.append(_fitted_wink(colour, model, pts))
        explained |= explains(recovered[-1])
    return recovered


def _fitted_wink(colour: Colour, model: ImageEllipse, rim_px: FloatArray) -> CloseupWink:
    """A wink of ``colour`` fitted by ``model`` to its rim points (blob pixels, no id yet)."""
    resid = model.distance_px(rim_px)
    return CloseupWink(
        id="",
        colour=colour,
        ellipse=model,
        rim_image_px=rim_px,
        rim_visible_fraction=_angular_coverage(model, rim_px),
        fit_rms_px=float(np.sqrt(np.mean(resid**2))),
    )


def _winks_in_blob(
    roi_bgr: npt.NDArray[np.uint8],
    *,
    felt_lab: FloatArray,
    offset_xy: tuple[int, int],
    min_semi_minor_px: float,
    max_semi_major_px: float,
    rng: np.random.Generator,
) -> list[CloseupWink]:
    """The winks in one blob, one colour layer at a time.

    Each pixel's colour is unmixed into the wink colours present in the blob
    (and a darkening of the felt, for shadows). The 0.5 iso-line of a colour's
    share is then the sub-pixel edge of that colour's winks, both against the
    felt and against a wink of another colour lying on or under it.
    """
    lab = _lab(roi_bgr)
    dist = colour_distance(lab, felt_lab)
    felt_bgr = (
        cv2.cvtColor(np.clip(felt_lab, 0, 255).astype(np.uint8).reshape(1, 1, 3), cv2.COLOR_LAB2BGR)
        .reshape(3)
        .astype(np.float64)
    )
    # Each channel's difference from the felt as one contiguous row (B, G, R):
    # medians along a row, and _unmix's products, read these faster than the
    # columns of an (h, w, 3) map (the same float32 values).
    felt_f32 = felt_bgr.astype(np.float32)
    shape_hw = roi_bgr.shape[:2]
    delta_rows = np.empty((3, shape_hw[0] * shape_hw[1]), dtype=np.float32)
    for c, plane in enumerate(cv2.split(roi_bgr)):
        np.subtract(plane.reshape(-1), felt_f32[c], out=delta_rows[c], dtype=np.float32)
    solid = dist > _SOLID_THRESHOLD
    # Interior pixels only (away from edges), to learn each colour's look.
    grad = cv2.morphologyEx(dist, cv2.MORPH_GRADIENT, np.ones((5, 5), np.uint8))
    solid &= grad < 0.5 * dist
    if solid.sum() < 200:
        return []
    # Flat indices and take, a* and b* one array each: boolean indexing of an
    # (h, w, 3) map by an (h, w) mask was ~6x slower on a pot's million
    # pixels, and numpy works down a long array faster than along (n, 2) rows.
    solid_at = np.flatnonzero(solid)
    lab_flat = lab.reshape(-1)
    a_solid, b_solid = lab_flat.take(3 * solid_at + 1), lab_flat.take(3 * solid_at + 2)
    d_a, d_b = a_solid - felt_lab[1], b_solid - felt_lab[2]
    # A wink of the felt's own hue (green on green felt) differs from the felt
    # only in shade and saturation, so the hue of the difference can point
    # anywhere (a paler green wink looks "red"). Where the pixel itself is
    # clearly coloured its own hue decides.
    own_a, own_b = a_solid - 128.0, b_solid - 128.0
    own_hue = np.hypot(own_a, own_b) >= _OWN_HUE_CHROMA
    hue_a, hue_b = np.where(own_hue, own_a, d_a), np.where(own_hue, own_b, d_b)
    chroma = np.hypot(d_a, d_b)
    names = list(_HUE_DEG)
    # The nearest colour's hue is the one with the largest cosine to the
    # pixel's (a*, b*) direction: the same as the least angle, without angles.
    # The first of equal cosines wins, as with argmax.
    cls = np.zeros(len(solid_at), dtype=np.intp)
    best: FloatArray | None = None
    for k, c in enumerate(names):
        unit = np.array(
            [math.cos(math.radians(_HUE_DEG[c])), math.sin(math.radians(_HUE_DEG[c]))],
            dtype=np.float32,
        )
        cosine = hue_a * unit[0] + hue_b * unit[1]
        if best is None:
            best = cosine
        else:
            cls[cosine > best] = k
            np.maximum(best, cosine, out=best)
    cls[chroma < 4.0] = -1
    min_px = max(300, int(0.02 * len(solid_at)))
    present = []
    for k, colour in enumerate(names):
        here_at = solid_at[cls == k]
        if len(here_at) >= min_px:
            median_bgr = np.array([np.median(row.take(here_at)) for row in delta_rows])
            present.append((len(here_at), colour, median_bgr.astype(np.float32)))
    if not present:
        return []
    present.sort(key=lambda p: -p[0])
    present = present[:3]
    # The wink colours present, and a darkening of the felt (a shadow).
    basis = [p[2] for p in present] + [-felt_bgr.astype(np.float32)]
    # Only near strongly coloured pixels: elsewhere the felt's texture makes noise.
    solid_u8 = (dist > _SOLID_THRESHOLD).astype(np.uint8)
    near_wink = cv2.dilate(solid_u8, np.ones((9, 9), np.uint8)).astype(bool)
    # Unmixed a little wider than used, so the blur below sees true values at the edge.
    unmixed = cv2.dilate(solid_u8, np.ones((13, 13), np.uint8)).astype(bool)
    unmixed_at = np.flatnonzero(unmixed)
    # Passed as the transpose of contiguous channel rows: _unmix multiplies by
    # delta.T, which BLAS then reads as it lies (a third faster on a pot's blob).
    mixed = _unmix(delta_rows.take(unmixed_at, axis=1).T, np.column_stack(basis).astype(np.float32))
    # One contiguous map per colour: each is blurred and traced on its own, and
    # scattering into, summing and copying out of an (h, w, k) stack took longer.
    shares = np.zeros((len(basis), *shape_hw), dtype=np.float32)
    for c in range(len(basis)):
        shares[c].reshape(-1)[unmixed_at] = mixed[:, c]

    # Share of any wink colour (not the shadow term): 1 on winks, 0 on the felt.
    # Summed from zero, as numpy's sum does, so even the sign of a zero is the same.
    total_share = np.zeros(shape_hw, dtype=np.float32)
    for c in range(len(present)):
        total_share += shares[c]
    covered = cv2.GaussianBlur(total_share, (0, 0), 0.8)
    candidates: list[tuple[float, ImageEllipse, FloatArray, Colour]] = []
    layers: list[tuple[Colour, FloatArray, Callable[[ImageEllipse, FloatArray], bool]]] = []
    for k, (_, colour, _) in enumerate(present):
        share = cv2.GaussianBlur(shares[k], (0, 0), 0.8)
        share[~near_wink] = 0.0
        chains = iso_chains(share, 0.5, _MIN_CHAIN_POINTS)
        if not chains:
            continue
        rim = np.vstack(chains)
        own = (share > 0.5).astype(np.float32)

        def is_wink(
            model: ImageEllipse,
            rim_px: FloatArray,
            share: FloatArray = share,
            own: FloatArray = own,
        ) -> bool:
            """Not an ellipse through a gap between winks: its middle is this colour,
            or (a wink partly under others) covered by winks, not felt, with its
            own colour still showing over a good part of it and the unseen part
            of its rim lying under other winks."""
            a, b = model.semi_axes_px
            core = ImageEllipse(model.centre_xy_px, (0.6 * a, 0.6 * b), model.angle_rad)
            if _median_inside(share, core) > 0.6:
                return True
            return (
                _median_inside(covered, core) > 0.6
                and _stat_inside(own, core, np.mean) > 0.2
                and _hidden_rim_is_covered(model, rim_px, covered)
            )

        layers.append((colour, rim, is_wink))
        for model, inl in _ransac_arcs(
            rim,
            chains,
            min_semi_minor_px=min_semi_minor_px,
            max_semi_major_px=max_semi_major_px,
            rng=rng,
            is_wink=is_wink,
        ):
            if is_wink(model, rim[inl]):
                candidates.append((-float(inl.sum()), model, rim[inl], colour))
    candidates.sort(key=lambda c: c[0])
    out: list[CloseupWink] = []
    for _, model, pts, colour in candidates:
        if any(_same_wink(model, other.ellipse) for other in out):
            continue
        pts = _to_true_edge(pts, model, dist)
        model = fit_ellipse_direct(pts) or model
        out.append(_fitted_wink(colour, model, pts))
    for colour, rim, is_wink in layers:
        out += _unexplained_outline_winks(colour, rim, is_wink, out, dist)
    return [
        CloseupWink(
            id="",
            colour=w.colour,
            ellipse=ImageEllipse(
                (
                    w.ellipse.centre_xy_px[0] + offset_xy[0],
                    w.ellipse.centre_xy_px[1] + offset_xy[1],
                ),
                w.ellipse.semi_axes_px,
                w.ellipse.angle_rad,
            ),
            rim_image_px=w.rim_image_px + np.asarray(offset_xy, dtype=np.float64),
            rim_visible_fraction=w.rim_visible_fraction,
            fit_rms_px=w.fit_rms_px,
        )
        for w in out
    ]
