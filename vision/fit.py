"""Robust circle fits to rim points, in mat millimetres.

A wink's rim, seen in the plane of its mid-height, is a circle of known
diameter (16 or 22 mm). Rim points come from sub-pixel edge crossings along
rays (see :mod:`vision.detect`); some belong to a neighbour or an
occluder, so the fit is iteratively reweighted (Tukey's biweight) and may
hold the radius at a known value, which lets a short visible arc fix the
centre.

Failures are values (:class:`CircleFitFailure`) carrying the reason, never
a silent NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Arc coverage is measured in bins of this many degrees.
_ARC_BIN_DEG = 15.0


@dataclass(frozen=True)
class CircleFit:
    """A fitted circle.

    Parameters
    ----------
    centre_mm : (2,) ndarray
    radius_mm : float
    rms_mm : float
        Root-mean-square radial residual of the inliers.
    inliers : (k,) ndarray of bool
        Which input points the fit kept.
    arc_fraction : float
        Fraction of the circle's angle covered by inliers, in [0, 1].
    centre_sigma_mm : float
        One-sigma centre uncertainty from the residuals and the arc's
        geometry (a short arc constrains the centre poorly across it).
    """

    centre_mm: FloatArray
    radius_mm: float
    rms_mm: float
    inliers: BoolArray
    arc_fraction: float
    centre_sigma_mm: float

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True)
class CircleFitFailure:
    """Why no circle could be fitted. Falsy, like scikit-image's ``FailedEstimation``."""

    reason: str

    def __bool__(self) -> bool:
        return False


def arc_fraction(points_mm: npt.ArrayLike, centre_mm: npt.ArrayLike) -> float:
    """Fraction of directions around ``centre_mm`` that hold a point.

    Parameters
    ----------
    points_mm : (k, 2) array_like
    centre_mm : (2,) array_like

    Returns
    -------
    float in [0, 1], in steps of 1/24.
    """
    pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return 0.0
    offsets = pts - np.asarray(centre_mm, dtype=np.float64)
    angle = np.degrees(np.arctan2(offsets[:, 1], offsets[:, 0])) % 360.0
    bins = np.unique((angle // _ARC_BIN_DEG).astype(int))
    return float(len(bins) * _ARC_BIN_DEG / 360.0)


def arc_fractions(
    points_mm: npt.ArrayLike, centre_mm: npt.ArrayLike, chosen: npt.ArrayLike
) -> FloatArray:
    """Per circle, the fraction of directions around its centre that hold a chosen point.

    As :func:`arc_fraction` for many circles at once.

    Parameters
    ----------
    points_mm : (n, k, 2) array_like
    centre_mm : (n, 2) array_like
    chosen : (n, k) array_like of bool
        Which points count.

    Returns
    -------
    (n,) ndarray
        In [0, 1], in steps of 1/24.
    """
    pts = np.asarray(points_mm, dtype=np.float64)
    centre = np.asarray(centre_mm, dtype=np.float64).reshape(-1, 2)
    return _arcs_from_offsets(
        pts[..., 0] - centre[:, 0, None],
        pts[..., 1] - centre[:, 1, None],
        np.asarray(chosen, dtype=bool),
    )


def _arcs_from_offsets(off_x: FloatArray, off_y: FloatArray, chosen: BoolArray) -> FloatArray:
    """(n,) share of the :data:`_ARC_BIN_DEG` bins around each centre holding a chosen point."""
    n = len(off_x)
    # As np.degrees(...) % 360.0 // _ARC_BIN_DEG, with the same results but
    # faster: np.degrees multiplies by 180 / pi; % 360 adds 360 to a
    # negative angle (and turns -0.0 into 0.0, as adding 0.0 does); floor
    # division is the floor of the quotient, one less where rounding the
    # quotient up reached the next whole number.
    angle = np.arctan2(off_y, off_x) * (180.0 / np.pi)
    angle += (angle < 0.0) * 360.0
    quotient = np.floor(angle / _ARC_BIN_DEG)
    quotient -= quotient * _ARC_BIN_DEG > angle
    n_bins = int(round(360.0 / _ARC_BIN_DEG))
    occupied = np.zeros((n, n_bins + 1), dtype=bool)
    bins = np.where(chosen, quotient.astype(np.int64), n_bins)
    occupied[np.arange(n)[:, None], bins] = True
    return np.asarray(occupied[:, :n_bins].sum(1) / n_bins, dtype=np.float64)


@dataclass(frozen=True)
class CircleFits:
    """Many circles fitted at once (parallel arrays); see :func:`fit_circles`.

    Parameters
    ----------
    centre_mm : (n, 2) ndarray
    radius_mm : (n,) ndarray
    rms_mm : (n,) ndarray
    inliers : (n, k) ndarray of bool
    arc_fraction : (n,) ndarray
    centre_sigma_mm : (n,) ndarray
    ok : (n,) ndarray of bool
        False where too few points agreed on a circle (the other fields are
        then meaningless).
    """

    centre_mm: FloatArray
    radius_mm: FloatArray
    rms_mm: FloatArray
    inliers: BoolArray
    arc_fraction: FloatArray
    centre_sigma_mm: FloatArray
    ok: BoolArray

    def take(self, which: slice | npt.NDArray[np.intp]) -> CircleFits:
        """The fits picked by ``which`` (a slice or indices along n)."""
        return CircleFits(
            centre_mm=self.centre_mm[which],
            radius_mm=self.radius_mm[which],
            rms_mm=self.rms_mm[which],
            inliers=self.inliers[which],
            arc_fraction=self.arc_fraction[which],
            centre_sigma_mm=self.centre_sigma_mm[which],
            ok=self.ok[which],
        )


def fit_circles(
    points_mm: npt.ArrayLike,
    weights: npt.ArrayLike,
    initial_centre_mm: npt.ArrayLike,
    *,
    radius_mm: npt.ArrayLike | None = None,
    scale_mm: float = 0.6,
    iterations: int = 10,
    min_points: int = 5,
) -> CircleFits:
    """Fit ``n`` circles at once by iteratively reweighted Gauss-Newton.

    Parameters
    ----------
    points_mm : (n, k, 2) array_like
        Up to ``k`` rim points per circle; pad with anything and weight 0.
    weights : (n, k) array_like
        Prior weight of each point (0 = absent; lower for points next to
        another wink, which may belong to it).
    initial_centre_mm : (n, 2) array_like
    radius_mm : (n,) array_like, optional
        Hold each radius at this value (known wink size); otherwise fit it.
    scale_mm : float
        Tukey scale: residuals beyond ``4.685 * scale_mm`` get no weight.
    iterations : int
    min_points : int
        Fewer inliers than this and ``ok`` is False.

    Returns
    -------
    CircleFits
    """
    pts = np.asarray(points_mm, dtype=np.float64)
    prior = np.asarray(weights, dtype=np.float64)
    centre = np.array(initial_centre_mm, dtype=np.float64).reshape(-1, 2)
    n = len(centre)
    if pts.shape[:1] != (n,) or pts.ndim != 3 or prior.shape != pts.shape[:2]:
        raise ValueError(
            f"points_mm must be (n, k, 2) and weights (n, k) with n = {n}, "
            f"but got {pts.shape} and {prior.shape}"
        )
    fixed = radius_mm is not None
    if fixed:
        radius = np.asarray(radius_mm, dtype=np.float64).reshape(n).copy()
    else:
        dist0 = np.linalg.norm(pts - centre[:, None, :], axis=2)
        radius = (dist0 * prior).sum(1) / np.maximum(prior.sum(1), 1e-9)
    cutoff = 4.685 * scale_mm
    weight = prior
    # x and y as separate contiguous planes: numpy is slow on a trailing
    # axis of 2, and these fits run on many tiny arrays.
    pts_x = np.ascontiguousarray(pts[..., 0])
    pts_y = np.ascontiguousarray(pts[..., 1])
    # np.add.reduce, np.maximum and np.minimum are what .sum(1) and np.clip
    # compute, without their Python wrappers: these fits run on many tiny
    # arrays, where the wrappers cost as much as the arithmetic.
    add = np.add.reduce
    # The centre as two arrays while iterating: stacking and slicing an
    # (n, 2) array each step costs more than the step's arithmetic.
    centre_x = centre[:, 0].copy()
    centre_y = centre[:, 1].copy()
    # Every sum the normal equations need is a sum over the points of a
    # product weighted[i] * plain[j], with weighted = (w ux, w uy[, w]) and
    # plain = (ux, uy, resid[, 1]): all of them come from one product and
    # one reduction (the same sums, row by row, as one reduction each), into
    # buffers made once: the per-call overhead, not the arithmetic, is the
    # cost of these tiny systems.
    n_weighted = 2 if fixed else 3
    n_plain = 3 if fixed else 4
    k = pts.shape[1]
    weighted = np.empty((n_weighted, n, k))
    plain = np.empty((n_plain, n, k))
    if not fixed:
        plain[3] = 1.0
    products = np.empty((n_weighted, n_plain, n, k))
    off_x = np.empty((n, k))
    off_y = np.empty((n, k))
    dist = np.empty((n, k))
    taper = np.empty((n, k))
    ux, uy, resid = plain[0], plain[1], plain[2]
    for _ in range(iterations):
        np.subtract(pts_x, centre_x[:, None], out=off_x)
        np.subtract(pts_y, centre_y[:, None], out=off_y)
        np.multiply(off_x, off_x, out=dist)
        np.multiply(off_y, off_y, out=taper)
        dist += taper
        np.sqrt(dist, out=dist)
        np.maximum(dist, 1e-9, out=dist)
        np.subtract(dist, radius[:, None], out=resid)
        # taper = max(1 - (resid / cutoff)^2, 0); weight = prior * taper^2
        np.divide(resid, cutoff, out=taper)
        np.square(taper, out=taper)
        np.subtract(1.0, taper, out=taper)
        np.maximum(taper, 0.0, out=taper)
        np.square(taper, out=taper)
        weight = np.multiply(prior, taper, out=weighted[2] if not fixed else None)
        np.divide(off_x, dist, out=ux)
        np.divide(off_y, dist, out=uy)
        np.multiply(weight, ux, out=weighted[0])
        np.multiply(weight, uy, out=weighted[1])
        np.multiply(weighted[:, None], plain[None], out=products)
        sums = add(products, -1)
        # Normal equations of the residual's Jacobian (-ux, -uy[, -1]),
        # solved in closed form (Cramer's rule) for the many tiny systems.
        a00 = sums[0, 0] + 1e-9  # sum w ux ux
        a01 = sums[0, 1]  # sum w ux uy
        a11 = sums[1, 1] + 1e-9  # sum w uy uy
        g0 = -sums[0, 2]  # -sum w ux resid
        g1 = -sums[1, 2]
        steps = np.empty((3 if not fixed else 2, n))
        if fixed:
            det2 = a00 * a11 - a01 * a01
            np.negative((a11 * g0 - a01 * g1) / det2, out=steps[0])
            np.negative((a00 * g1 - a01 * g0) / det2, out=steps[1])
        else:
            a02 = sums[0, 3]  # sum w ux
            a12 = sums[1, 3]  # sum w uy
            a22 = sums[2, 3] + 1e-9  # sum w
            g2 = -sums[2, 2]  # -sum w resid
            c00 = a11 * a22 - a12 * a12
            c01 = a02 * a12 - a01 * a22
            c02 = a01 * a12 - a02 * a11
            c11 = a00 * a22 - a02 * a02
            c12 = a01 * a02 - a00 * a12
            c22 = a00 * a11 - a01 * a01
            det3 = a00 * c00 + a01 * c01 + a02 * c02
            np.negative((c00 * g0 + c01 * g1 + c02 * g2) / det3, out=steps[0])
            np.negative((c01 * g0 + c11 * g1 + c12 * g2) / det3, out=steps[1])
            np.negative((c02 * g0 + c12 * g1 + c22 * g2) / det3, out=steps[2])
        np.maximum(steps, -3.0, out=steps)
        np.minimum(steps, 3.0, out=steps)
        centre_x = centre_x + steps[0]
        centre_y = centre_y + steps[1]
        if not fixed:
            radius = radius + steps[2]
        if float(np.abs(steps).max(initial=0.0)) < 1e-3:
            break
    centre = np.stack([centre_x, centre_y], axis=1)
    off_x = pts_x - centre[:, 0, None]
    off_y = pts_y - centre[:, 1, None]
    dist = np.maximum(np.sqrt(off_x * off_x + off_y * off_y), 1e-9)
    resid = dist - radius[:, None]
    inliers = (np.abs(resid) < cutoff * 0.6) & (prior > 0)
    n_in = inliers.sum(1)
    w_in = weight * inliers
    rms = np.sqrt((resid**2 * w_in).sum(1) / np.maximum(w_in.sum(1), 1e-12))
    ux, uy = off_x / dist, off_y / dist
    info_xx = (w_in * ux * ux).sum(1)
    info_xy = (w_in * ux * uy).sum(1)
    info_yy = (w_in * uy * uy).sum(1)
    det = info_xx * info_yy - info_xy**2
    trace = info_xx + info_yy
    # Smallest eigenvalue of the 2x2 information: the worst-constrained
    # direction (across a short arc). A floor on the noise keeps a lucky
    # near-zero rms from claiming precision.
    small_eig = 0.5 * (trace - np.sqrt(np.maximum(trace**2 - 4 * det, 0.0)))
    noise = np.maximum(rms, 0.15)
    with np.errstate(divide="ignore"):
        sigma = np.where(small_eig > 1e-6, noise / np.sqrt(np.maximum(small_eig, 1e-12)), np.inf)
    arcs = _arcs_from_offsets(off_x, off_y, inliers)
    ok = (n_in >= min_points) & np.isfinite(sigma) & np.isfinite(centre).all(1)
    return CircleFits(
        centre_mm=centre,
        radius_mm=radius,
        rms_mm=rms,
        inliers=inliers,
        arc_fraction=arcs,
        centre_sigma_mm=sigma,
        ok=ok,
    )


def fit_circle(
    points_mm: npt.ArrayLike,
    *,
    radius_mm: float | None = None,
    initial_centre_mm: npt.ArrayLike | None = None,
    weights: npt.ArrayLike | None = None,
    scale_mm: float = 0.6,
    iterations: int = 12,
    min_points: int = 5,
) -> CircleFit | CircleFitFailure:
    """Fit one circle to rim points, robustly (see :func:`fit_circles`).

    Parameters
    ----------
    points_mm : (k, 2) array_like
        Rim points in mat mm.
    radius_mm : float, optional
        Hold the radius at this value (known wink size); otherwise fit it.
    initial_centre_mm : (2,) array_like, optional
        Start here; otherwise from an algebraic (Kasa) fit.
    weights : (k,) array_like, optional
        Prior weight of each point.
    scale_mm, iterations, min_points
        As for :func:`fit_circles`.

    Returns
    -------
    CircleFit or CircleFitFailure
    """
    pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
    if len(pts) < min_points:
        return CircleFitFailure(f"only {len(pts)} rim points; need at least {min_points}")
    prior = np.ones(len(pts)) if weights is None else np.asarray(weights, dtype=np.float64)
    if prior.shape != (len(pts),):
        raise ValueError(f"weights must have shape ({len(pts)},), but got shape {prior.shape}")
    if initial_centre_mm is None:
        kasa = _kasa(pts, prior)
        if kasa is None:
            return CircleFitFailure("rim points are collinear or coincident")
        start = kasa[0]
    else:
        start = np.asarray(initial_centre_mm, dtype=np.float64).reshape(2)
    fits = fit_circles(
        pts[None],
        prior[None],
        start[None],
        radius_mm=None if radius_mm is None else [radius_mm],
        scale_mm=scale_mm,
        iterations=iterations,
        min_points=min_points,
    )
    if not fits.ok[0]:
        if not np.isfinite(fits.centre_sigma_mm[0]):
            return CircleFitFailure("rim points do not constrain the centre (arc too short)")
        return CircleFitFailure(
            f"only {int(fits.inliers[0].sum())} rim points agree on a circle; "
            f"need at least {min_points}"
        )
    return CircleFit(
        centre_mm=fits.centre_mm[0],
        radius_mm=float(fits.radius_mm[0]),
        rms_mm=float(fits.rms_mm[0]),
        inliers=fits.inliers[0],
        arc_fraction=float(fits.arc_fraction[0]),
        centre_sigma_mm=float(fits.centre_sigma_mm[0]),
    )


def _kasa(pts: FloatArray, weight: FloatArray) -> tuple[FloatArray, float] | None:
    """Algebraic circle fit (Kasa): least squares on ``x^2 + y^2 + D x + E y + F = 0``."""
    design = np.hstack([pts, np.ones((len(pts), 1))])
    rhs = -(pts**2).sum(axis=1)
    sw = np.sqrt(weight)
    sol, _, rank, _ = np.linalg.lstsq(design * sw[:, None], rhs * sw, rcond=None)
    if rank < 3:
        return None
    centre = -0.5 * sol[:2]
    r2 = float(centre @ centre - sol[2])
    if r2 <= 0:
        return None
    return centre, float(np.sqrt(r2))
