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
    # These fits run on many tiny arrays, where each numpy call's overhead
    # costs as much as its arithmetic: x and y are the two contiguous planes
    # of one array (numpy is also slow on a trailing axis of 2), so that one
    # call does what two did, and every sum an iteration needs comes from
    # one reduction over the points, of rows written into one buffer made
    # once. Each value is computed by the same operations as when written
    # out one by one (see :func:`_free_radius_steps`).
    pts_xy = np.ascontiguousarray(np.moveaxis(pts, 2, 0))  # (2, n, k)
    centre_xy = np.ascontiguousarray(centre.T)  # (2, n)
    k = pts.shape[1]
    off_xy = np.empty((2, n, k))
    square_xy = np.empty((2, n, k))
    dist = np.empty((n, k))
    taper = np.empty((n, k))
    # ux, uy and the radial residual.
    plain = np.empty((3, n, k))
    unit_xy, resid = plain[:2], plain[2]
    # Rows summed over the points: w ux, w uy, w, w ux ux, w ux uy,
    # w ux resid, w uy uy, w uy resid, w resid (the first three the
    # weighted unit vector and weight the others are made from; a fixed
    # radius needs neither w nor the sums of the first three or w resid).
    rows = np.empty((9, n, k))
    weighted_xy = rows[:2]
    summed = rows if not fixed else rows[3:8]

    def _radial_residual(centre_xy: FloatArray, radius: FloatArray) -> None:
        """Into the buffers: each point's offset from its circle's centre, distance and residual."""
        np.subtract(pts_xy, centre_xy[:, :, None], out=off_xy)
        np.multiply(off_xy, off_xy, out=square_xy)
        np.add(square_xy[0], square_xy[1], out=dist)
        np.sqrt(dist, out=dist)
        np.maximum(dist, 1e-9, out=dist)
        np.subtract(dist, radius[:, None], out=resid)

    for _ in range(iterations):
        _radial_residual(centre_xy, radius)
        # taper = max(1 - (resid / cutoff)^2, 0); weight = prior * taper^2
        np.divide(resid, cutoff, out=taper)
        np.square(taper, out=taper)
        np.subtract(1.0, taper, out=taper)
        np.maximum(taper, 0.0, out=taper)
        np.square(taper, out=taper)
        weight = np.multiply(prior, taper, out=rows[2])
        np.divide(off_xy, dist, out=unit_xy)
        np.multiply(weight, unit_xy, out=weighted_xy)
        np.multiply(rows[0], plain, out=rows[3:6])
        np.multiply(rows[1], plain[1:], out=rows[6:8])
        if not fixed:
            np.multiply(weight, resid, out=rows[8])
        sums = np.add.reduce(summed, -1)
        # Normal equations of the residual's Jacobian (-ux, -uy[, -1]),
        # solved in closed form (Cramer's rule) for the many tiny systems.
        steps = _free_radius_steps(sums) if not fixed else _fixed_radius_steps(sums)
        np.maximum(steps, -3.0, out=steps)
        np.minimum(steps, 3.0, out=steps)
        centre_xy = centre_xy + steps[:2]
        if not fixed:
            radius = radius + steps[2]
        if float(np.abs(steps).max(initial=0.0)) < 1e-3:
            break
    if weight is rows[2]:
        # The last iteration's weights outlive the buffer's reuse below.
        weight = weight.copy()
    centre = np.ascontiguousarray(centre_xy.T)
    _radial_residual(centre_xy, radius)
    inliers = (np.abs(resid) < cutoff * 0.6) & (prior > 0)
    n_in = inliers.sum(1)
    # Rows summed: w_in ux ux, w_in ux uy, w_in uy uy, w_in resid^2, w_in.
    final = rows[:5]
    w_in = np.multiply(weight, inliers, out=final[4])
    np.multiply(np.square(resid), w_in, out=final[3])
    np.divide(off_xy, dist, out=unit_xy)
    np.multiply(w_in, unit_xy, out=weighted_xy)
    np.multiply(weighted_xy[0], unit_xy, out=square_xy)
    np.multiply(weighted_xy[1], unit_xy[1], out=final[2])
    final[:2] = square_xy
    info_xx, info_xy, info_yy, sum_r2w, sum_w = np.add.reduce(final, -1)
    rms = np.sqrt(sum_r2w / np.maximum(sum_w, 1e-12))
    off_x, off_y = off_xy
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


# Where each entry of the free-radius normal equations lies among the sums
# of :func:`fit_circles`: a00, a11, a22 (which get 1e-9 added), a01, a02, a12.
_FREE_ENTRIES = [3, 6, 2, 4, 0, 1]
# The six cofactors c00, c01, c02, c11, c12, c22 are L1 * R1 - L2 * R2 of
# these of the above (c00 = a11 a22 - a12 a12, c01 = a02 a12 - a01 a22,
# c02 = a01 a12 - a02 a11, c11 = a00 a22 - a02 a02, c12 = a01 a02 - a00 a12,
# c22 = a00 a11 - a01 a01): L1, R1, L2, R2.
_FREE_COFACTOR_TERMS = [1, 4, 3, 0, 3, 0, 2, 5, 5, 2, 4, 1, 5, 3, 4, 4, 0, 3, 5, 2, 1, 4, 5, 3]
# The symmetric cofactor matrix, row by row, from the six cofactors.
_FREE_COFACTORS = [0, 1, 2, 1, 3, 4, 2, 4, 5]


def _free_radius_steps(sums: FloatArray) -> FloatArray:
    """(3, n) Gauss-Newton steps of centre x, y and radius, from :func:`fit_circles`' sums.

    ``sums`` (9, n): of w ux, w uy, w, w ux ux, w ux uy, w ux resid, w uy
    uy, w uy resid, w resid. Exactly Cramer's rule written out entry by
    entry (``a00 = sum w ux ux + 1e-9``, ``g0 = -sum w ux resid``, ``c00 =
    a11 * a22 - a12 * a12``, ``det = a00 * c00 + a01 * c01 + a02 * c02``,
    ``step0 = -((c00 * g0 + c01 * g1 + c02 * g2) / det)``, ...), each
    operation done on stacked rows: a third of the numpy calls.
    """
    n = sums.shape[-1]
    entries = sums.take(_FREE_ENTRIES, axis=0)
    entries[:3] += 1e-9
    terms = entries.take(_FREE_COFACTOR_TERMS, axis=0).reshape(2, 2, 6, n)
    pairs = terms[:, 0] * terms[:, 1]
    cofactors = pairs[0] - pairs[1]
    # a00 c00, a01 c01, a02 c02
    first_row = entries.take([0, 3, 4], axis=0) * cofactors[:3]
    det = first_row[0] + first_row[1]
    det += first_row[2]
    gradient = -sums.take([5, 7, 8], axis=0)
    terms = cofactors.take(_FREE_COFACTORS, axis=0).reshape(3, 3, n) * gradient[None]
    steps = terms[:, 0] + terms[:, 1]
    steps += terms[:, 2]
    steps /= det
    return np.negative(steps, out=steps)


def _fixed_radius_steps(sums: FloatArray) -> FloatArray:
    """(2, n) Gauss-Newton steps of the centre (Cramer's rule).

    ``sums`` (5, n): of w ux ux, w ux uy, w ux resid, w uy uy, w uy resid.
    """
    a00 = sums[0] + 1e-9
    a01 = sums[1]
    a11 = sums[3] + 1e-9
    g0 = -sums[2]
    g1 = -sums[4]
    steps = np.empty((2, sums.shape[-1]))
    det2 = a00 * a11 - a01 * a01
    np.negative((a11 * g0 - a01 * g1) / det2, out=steps[0])
    np.negative((a00 * g1 - a01 * g0) / det2, out=steps[1])
    return steps


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
