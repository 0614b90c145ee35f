"""Rectify the mat plane in a close-up from the winks alone.

The mat's edges are usually out of view, but every wink is a circle of known
diameter (rule 2.1.1: 22 or 16 mm) lying in the mat plane. The plane's tilt is
the one that makes the winks' rims circles again when the image rays are cut
with it (metric rectification from circles); the scale then follows from the
known diameters.

Conventions: camera frame as OpenCV (x right, y down, z forward). The plane
has unit normal ``normal`` pointing away from the camera (into the table) and
lies at ``distance_mm`` from the camera centre: ``normal . X = distance_mm``.
A point ``height_mm`` above the mat satisfies ``normal . X = distance_mm -
height_mm``. Plane coordinates (``plane_xy_mm``) are millimetres along two
unit vectors in the plane, with the origin where the camera's perpendicular
meets the plane (the point the camera looks straight down on).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from scipy import optimize

from rules.board import LARGE_WINK_DIAMETER_MM, SMALL_WINK_DIAMETER_MM, WINK_THICKNESS_MM

FloatArray = npt.NDArray[np.float64]

#: Typical phone main camera: about 68 degrees across the long side.
DEFAULT_HFOV_DEG = 68.0
#: How far off a close-up of a dispute is typically taken with that lens, mm.
TYPICAL_DISTANCE_MM = 220.0
#: Radius of the rounding of a wink's edges, mm. The outline seen from an angle is
#: where the full-radius part of the side wall ends, this far inside the faces: the
#: wall's visible height is the thickness less twice this. Measured on the
#: generator's winks (bevel 0.25-0.35 mm): modelling the wall as the full
#: thickness tilted the fitted plane 1-4 degrees too far and put a bias of
#: +0.3 to +1.5 mm on plan gaps seen at 35-45 degrees.
EDGE_ROUNDING_MM = 0.3

#: One-sigma error of a wink's apparent radius on the mat once its outline is
#: found: fitted on the scenes' true planes, flat whole winks of the close-up
#: sets 500-509, 600-611 and 1000-1019 came out 0.005 mm large (median), with a
#: robust spread of 0.068 mm (102 winks; plain standard deviation 0.126).
RADIUS_SIGMA_MM = 0.07


class RectificationError(ValueError):
    """The winks in view do not determine the mat plane."""


@dataclass(frozen=True)
class PinholeIntrinsics:
    """An undistorted pinhole camera: focal length and principal point, pixels."""

    focal_px: float
    principal_xy_px: tuple[float, float]

    @classmethod
    def from_hfov(cls, width_px: int, height_px: int, hfov_deg: float) -> PinholeIntrinsics:
        """Principal point at the image centre; focal length from the field of view."""
        focal = 0.5 * width_px / math.tan(math.radians(hfov_deg) / 2)
        return cls(focal, ((width_px - 1) / 2, (height_px - 1) / 2))

    def rays(self, image_xy_px: npt.ArrayLike) -> FloatArray:
        """(n, 3) ray directions (z = 1) through pixels."""
        pts = np.asarray(image_xy_px, dtype=np.float64).reshape(-1, 2)
        out = np.empty((len(pts), 3))
        out[:, 0] = (pts[:, 0] - self.principal_xy_px[0]) / self.focal_px
        out[:, 1] = (pts[:, 1] - self.principal_xy_px[1]) / self.focal_px
        out[:, 2] = 1.0
        return out

    def project(self, camera_xyz: FloatArray) -> FloatArray:
        """(n, 2) pixels of camera-frame points."""
        p = np.asarray(camera_xyz, dtype=np.float64).reshape(-1, 3)
        return np.column_stack(
            [
                self.focal_px * p[:, 0] / p[:, 2] + self.principal_xy_px[0],
                self.focal_px * p[:, 1] / p[:, 2] + self.principal_xy_px[1],
            ]
        )


def _normal_from_angles(tilt_rad: float, azimuth_rad: float) -> FloatArray:
    s = math.sin(tilt_rad)
    return np.array([s * math.cos(azimuth_rad), s * math.sin(azimuth_rad), math.cos(tilt_rad)])


def _plane_basis(normal: FloatArray) -> tuple[FloatArray, FloatArray]:
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = helper - normal * float(helper @ normal)
    e1 /= np.linalg.norm(e1)
    # np.cross's own products and differences, without its set-up: estimate_plane
    # makes a new plane, and so a new basis, at each of hundreds of trial normals.
    n0, n1, n2 = normal[0], normal[1], normal[2]
    e2 = np.array([n1 * e1[2] - n2 * e1[1], n2 * e1[0] - n0 * e1[2], n0 * e1[1] - n1 * e1[0]])
    return e1, e2


@dataclass(frozen=True, eq=False)
class MatPlane:
    """The mat plane in the camera frame.

    Parameters
    ----------
    intrinsics : PinholeIntrinsics
    normal : (3,) ndarray
        Unit normal, pointing away from the camera.
    distance_mm : float
        Distance from the camera centre to the plane along the normal.
    """

    intrinsics: PinholeIntrinsics
    normal: FloatArray
    distance_mm: float

    @cached_property
    def basis(self) -> tuple[FloatArray, FloatArray]:
        """Two unit vectors spanning the plane (plane x and y), camera frame."""
        return _plane_basis(self.normal)

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and the plane's normal."""
        return math.degrees(math.acos(min(1.0, abs(float(self.normal[2])))))

    def to_plane(self, image_xy_px: npt.ArrayLike, height_mm: npt.ArrayLike = 0.0) -> FloatArray:
        """Cut pixel rays with the plane ``height_mm`` above the mat: (n, 2) plane mm."""
        rays = self.intrinsics.rays(image_xy_px)
        return self.cut_rays(rays, rays @ self.normal, height_mm)

    def cut_rays(
        self, rays: FloatArray, rays_along_normal: FloatArray, height_mm: npt.ArrayLike = 0.0
    ) -> FloatArray:
        """:meth:`to_plane` of rays already cast: (n, 3) ``rays`` and ``rays @ normal``.

        A rim cut at several heights (:func:`fit_wink_circle` cuts each ten
        times) casts its rays once.
        """
        h = np.asarray(height_mm, dtype=np.float64)
        # One height for all rays is subtracted once (the same difference per ray):
        # review cuts thousands of small rims a photo, and broadcasting cost more.
        if h.ndim == 0:
            lift = self.distance_mm - float(h)
        else:
            lift = self.distance_mm - (
                h if h.shape == (len(rays),) else np.broadcast_to(h, (len(rays),))
            )
        lam = lift / rays_along_normal
        pts = rays * lam[:, None]
        e1, e2 = self.basis
        out = np.empty((len(pts), 2))
        out[:, 0] = pts @ e1
        out[:, 1] = pts @ e2
        return out

    def to_image(self, plane_xy_mm: npt.ArrayLike, height_mm: npt.ArrayLike = 0.0) -> FloatArray:
        """Project plane points ``height_mm`` above the mat into the image: (n, 2) px."""
        p = np.asarray(plane_xy_mm, dtype=np.float64).reshape(-1, 2)
        h = np.broadcast_to(np.asarray(height_mm, dtype=np.float64), (len(p),))
        e1, e2 = self.basis
        xyz = (
            p[:, :1] * e1[None, :]
            + p[:, 1:] * e2[None, :]
            + (self.distance_mm - h)[:, None] * self.normal[None, :]
        )
        return self.intrinsics.project(xyz)

    def mm_per_px_at(self, image_xy_px: npt.ArrayLike) -> float:
        """Size of one pixel on the mat near a point, mm (geometric mean of both axes)."""
        q = np.asarray(image_xy_px, dtype=np.float64).reshape(2)
        pts = np.array([q, q + [1.0, 0.0], q + [0.0, 1.0]])
        p = self.to_plane(pts)
        return float(math.sqrt(np.linalg.norm(p[1] - p[0]) * np.linalg.norm(p[2] - p[0])))


def fit_circle(points_xy: FloatArray) -> tuple[FloatArray, float, float]:
    """Algebraic (Kasa) circle fit: centre (2,), radius and rms residual, same units."""
    p = np.asarray(points_xy, dtype=np.float64)
    a = np.column_stack([2 * p[:, 0], 2 * p[:, 1], np.ones(len(p))])
    b = (p**2).sum(axis=1)
    sol, *_ = np.linalg.lstsq(a, b, rcond=None)
    centre = sol[:2]
    radius = math.sqrt(max(sol[2] + centre @ centre, 1e-12))
    resid = np.hypot(p[:, 0] - centre[0], p[:, 1] - centre[1]) - radius
    return centre, radius, float(np.sqrt(np.mean(resid**2)))


def fit_circles(points_xy: FloatArray, counts: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """:func:`fit_circle` of several point sets at once: centres (g, 2) and radii (g,).

    Parameters
    ----------
    points_xy : (n, 2) ndarray
        The sets one after another.
    counts : (g,) array_like of int
        How many points each set has, at least 3.
    """
    p = np.asarray(points_xy, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # About each set's mean: the same circle, better conditioned normal equations.
    mean = np.add.reduceat(p, starts, axis=0) / counts[:, None]
    q = p - np.repeat(mean, counts, axis=0)
    qx, qy = q[:, 0], q[:, 1]
    qq = qx * qx + qy * qy
    # Rows (2 qx, 2 qy, 1) against qq: the 3x3 normal equations of each set.
    # Filled in place, not stacked: estimate_plane's optimiser fits hundreds of times.
    terms = np.empty((len(q), 8))
    terms[:, 0] = 4 * qx * qx
    terms[:, 1] = 4 * qx * qy
    terms[:, 2] = 2 * qx
    terms[:, 3] = 4 * qy * qy
    terms[:, 4] = 2 * qy
    terms[:, 5] = 2 * qx * qq
    terms[:, 6] = 2 * qy * qq
    terms[:, 7] = qq
    sums = np.add.reduceat(terms, starts, axis=0)
    # Columns xx, xy, x1, yy, y1 of the sums, and the count, into each symmetric 3x3.
    normal = np.empty((len(counts), 3, 3))
    normal[:, 0, :] = sums[:, 0:3]
    normal[:, 1, 0] = sums[:, 1]
    normal[:, 1, 1:] = sums[:, 3:5]
    normal[:, 2, 0] = sums[:, 2]
    normal[:, 2, 1] = sums[:, 4]
    normal[:, 2, 2] = counts
    try:
        sol = np.linalg.solve(normal, sums[:, 5:8, None])[..., 0]
    except np.linalg.LinAlgError:
        # A set on one line: the least-squares fit of each set says what it can.
        fits = [fit_circle(p[a : a + n]) for a, n in zip(starts, counts, strict=True)]
        return np.array([c for c, _, _ in fits]), np.array([r for _, r, _ in fits])
    centre_q = sol[:, :2]
    radius = np.sqrt(np.maximum(sol[:, 2] + np.sum(centre_q**2, axis=1), 1e-12))
    return centre_q + mean, radius


def rim_heights_mm(
    plane_xy_mm: FloatArray,
    centre_xy_mm: FloatArray,
    base_mm: float | FloatArray,
    thickness_mm: float,
    rounding_mm: float = EDGE_ROUNDING_MM,
) -> FloatArray:
    """Height of each silhouette point of a wink whose underside is at ``base_mm``.

    Seen from above at an angle, the outline on the side facing the camera is
    the lower end of the wink's side wall and on the far side its upper end;
    with rounded edges those lie ``rounding_mm`` inside the faces. The
    camera's foot is the origin of plane coordinates. ``base_mm`` may vary per
    point (a leaning wink), and so may ``centre_xy_mm``, (2,) or (n, 2) (the
    points of several winks at once).
    """
    towards_camera = -np.asarray(centre_xy_mm)
    near = np.sum((plane_xy_mm - centre_xy_mm) * towards_camera, axis=-1) > 0
    base = np.asarray(base_mm, dtype=np.float64)
    if base.shape != (len(plane_xy_mm),):
        base = np.broadcast_to(base, (len(plane_xy_mm),))
    wall_mm = min(rounding_mm, thickness_mm / 2)
    return np.where(near, base + wall_mm, base + thickness_mm - wall_mm)


@dataclass(frozen=True)
class Support:
    """How a wink rests: its underside height along one direction in plan.

    ``flat`` winks lie level at ``height_mm`` (0 on the mat, about one wink's
    thickness on another wink). A ``leaning`` wink has its far edge on the mat
    and rises linearly to ``height_mm`` at its edge towards ``towards_xy_mm``
    (it leans on the wink there).

    With ``under_radius_mm`` (the radius of the wink leant on, centred at
    ``towards_xy_mm``) it rests instead on that wink's near rim: the underside
    reaches ``height_mm`` where the rim is, and rises on past it. A wink
    that covers much of the one beneath tilts more steeply than one resting
    on it at its own edge.
    """

    height_mm: float = 0.0
    leaning: bool = False
    towards_xy_mm: tuple[float, float] | None = None
    under_radius_mm: float | None = None

    def underside_mm(
        self, plane_xy_mm: FloatArray, centre_xy_mm: FloatArray, radius_mm: float
    ) -> FloatArray:
        """(n,) underside height below each plan point."""
        if not self.leaning or self.towards_xy_mm is None:
            return np.full(len(plane_xy_mm), self.height_mm)
        u = np.asarray(self.towards_xy_mm) - centre_xy_mm
        norm = float(np.linalg.norm(u))
        if norm < 1e-9:
            return np.full(len(plane_xy_mm), self.height_mm)
        along = (plane_xy_mm - centre_xy_mm) @ (u / norm)
        if self.under_radius_mm is None:
            return np.asarray(self.height_mm * np.clip((along + radius_mm) / (2 * radius_mm), 0, 1))
        # From the far edge to the near rim of the wink beneath; no less than the
        # radius: a wink whose centre is over the other lies on it nearly level.
        reach = float(np.clip(radius_mm + norm - self.under_radius_mm, radius_mm, 2 * radius_mm))
        return np.asarray(self.height_mm * np.maximum((along + radius_mm) / reach, 0))


@dataclass(frozen=True, eq=False)
class SolidRim:
    """Outline points of a round body standing on the mat, each at a known height and radius.

    The body's horizontal cross-sections are circles about one vertical axis
    (a pot: its top rim 48 mm across at 38 mm, its base 38 mm across on the
    mat), so every point cut with the plane at its height lies its radius
    from one plan centre.

    Parameters
    ----------
    image_px : (n, 2) ndarray
        Outline points, px.
    heights_mm : (n,) ndarray
        Each point's height above the mat, mm.
    radii_mm : (n,) ndarray
        The body's radius at that height, mm.
    """

    image_px: FloatArray
    heights_mm: FloatArray
    radii_mm: FloatArray

    def subsampled(self, count: int) -> SolidRim:
        """About ``count`` of the points, evenly taken."""
        step = max(1, len(self.image_px) // count)
        return SolidRim(self.image_px[::step], self.heights_mm[::step], self.radii_mm[::step])

    def centre_mm(self, plane: MatPlane) -> FloatArray:
        """(2,) plan centre of the body on ``plane``: points' centroid, refined with their radii."""
        pts = plane.to_plane(self.image_px, self.heights_mm)
        start = pts.mean(axis=0)

        def resid(c: FloatArray) -> FloatArray:
            return np.asarray(np.hypot(pts[:, 0] - c[0], pts[:, 1] - c[1]) - self.radii_mm)

        return np.asarray(optimize.least_squares(resid, x0=start, method="lm").x)


def fit_circle_known_radius(
    points_xy: FloatArray, radius: float, start_xy: FloatArray
) -> tuple[FloatArray, float]:
    """Centre (2,) of a circle of given radius through points, and the rms residual.

    With the radius known, a short visible arc (a wink partly under another)
    still fixes the centre.
    """
    p = np.asarray(points_xy, dtype=np.float64)
    # The coordinates as contiguous columns: each trial centre's offsets are
    # two subtractions, not an (n, 2) one read back by strided columns.
    px, py = np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1])
    centre = np.asarray(start_xy, dtype=np.float64).copy()
    # Gauss-Newton with step halving (a descent method, as MINPACK's
    # Levenberg-Marquardt is), in numpy: review calls this hundreds of times
    # a photo, and scipy's set-up cost more than the fit.
    dx, dy = px - centre[0], py - centre[1]
    dist = np.hypot(dx, dy)
    resid = dist - radius
    cost = float(resid @ resid)
    jac = np.empty((len(p), 2))
    for _ in range(_KNOWN_RADIUS_MAX_ITER):
        # Filled as one (n, 2) array, so that its products are the same sums.
        floor_dist = np.maximum(dist, 1e-12)
        np.divide(-dx, floor_dist, out=jac[:, 0])
        np.divide(-dy, floor_dist, out=jac[:, 1])
        try:
            step = np.linalg.solve(jac.T @ jac, -(jac.T @ resid))
        except np.linalg.LinAlgError:
            break
        scale = 1.0
        while scale >= 1e-6:
            trial = centre + scale * step
            t_dx, t_dy = px - trial[0], py - trial[1]
            t_dist = np.hypot(t_dx, t_dy)
            t_resid = t_dist - radius
            t_cost = float(t_resid @ t_resid)
            if t_cost <= cost:
                break
            scale *= 0.5
        else:
            break
        moved = scale * float(np.hypot(step[0], step[1]))
        centre, dx, dy, dist, resid, cost = trial, t_dx, t_dy, t_dist, t_resid, t_cost
        if moved <= _KNOWN_RADIUS_XTOL * (1.0 + float(np.hypot(centre[0], centre[1]))):
            break
    return centre, float(np.sqrt(np.mean(resid**2)))


#: Iterations and relative step at which :func:`fit_circle_known_radius` stops
#: (MINPACK's default tolerance is 1e-8: this is tighter).
_KNOWN_RADIUS_MAX_ITER = 100
_KNOWN_RADIUS_XTOL = 1e-12


def fit_wink_circle(
    plane: MatPlane,
    rim_image_px: FloatArray,
    *,
    base_mm: float = 0.0,
    thickness_mm: float = WINK_THICKNESS_MM,
    radius_mm: float | None = None,
    support: Support | None = None,
) -> tuple[FloatArray, float, float]:
    """Plan-view circle of a wink from its image rim: centre (2,) mm, radius mm, rms mm.

    Each rim point is cut with the plane at the height it really has (lower
    or upper rim, raised or leaning wink), which removes the parallax.
    With ``radius_mm`` given, only the centre is fitted (for partly hidden rims).
    """
    support = support or Support(height_mm=base_mm)
    rays = plane.intrinsics.rays(rim_image_px)
    along = rays @ plane.normal
    pts = plane.cut_rays(rays, along, support.height_mm + thickness_mm / 2)
    centre, radius, rms = fit_circle(pts)
    r_model = radius_mm if radius_mm is not None else radius
    flat = plane.cut_rays(rays, along, support.height_mm)
    for _ in range(3):
        base = support.underside_mm(flat, centre, r_model)
        heights = rim_heights_mm(plane.cut_rays(rays, along, base), centre, base, thickness_mm)
        pts = plane.cut_rays(rays, along, heights)
        if radius_mm is None:
            centre, radius, rms = fit_circle(pts)
            r_model = radius
        else:
            centre, rms = fit_circle_known_radius(pts, radius_mm, centre)
            radius = radius_mm
    return centre, radius, rms


def estimate_plane(
    intrinsics: PinholeIntrinsics,
    rims_image_px: list[FloatArray],
    *,
    diameters_mm: list[float] | None = None,
    thickness_mm: float = WINK_THICKNESS_MM,
) -> MatPlane:
    """The mat plane that makes the given wink rims circles.

    Parameters
    ----------
    intrinsics : PinholeIntrinsics
    rims_image_px : list of (k_i, 2) ndarray
        Rim points of winks lying flat on the mat.
    diameters_mm : list of float, optional
        Each wink's diameter; when None, sizes are told apart by the fitted
        radii (two size classes 22 and 16 mm; all one size is taken as large).

    Raises
    ------
    RectificationError
        When no wink is given.
    """
    if not rims_image_px:
        raise RectificationError("no wink rims to rectify the mat plane from")
    subsample = [r[:: max(1, len(r) // 150)] for r in rims_image_px]
    # All rims in one array: the optimiser calls circularity hundreds of times.
    all_px = np.vstack(subsample)
    all_rays = intrinsics.rays(all_px)
    counts = np.array([len(r) for r in subsample])

    def circularity(params: FloatArray, distance_mm: float | None) -> FloatArray:
        plane = MatPlane(intrinsics, _normal_from_angles(params[0], params[1]), distance_mm or 1.0)
        along = all_rays @ plane.normal
        p = plane.cut_rays(all_rays, along, 0.0 if distance_mm is None else thickness_mm / 2)
        c, r = fit_circles(p, counts)
        if distance_mm is not None:
            # The outline is the lower rim on the camera's side, the upper rim beyond.
            heights = rim_heights_mm(p, np.repeat(c, counts, axis=0), 0.0, thickness_mm)
            p = plane.cut_rays(all_rays, along, heights)
            c, r = fit_circles(p, counts)
        c_each, r_each = np.repeat(c, counts, axis=0), np.repeat(r, counts)
        return np.asarray(
            (np.hypot(p[:, 0] - c_each[:, 0], p[:, 1] - c_each[:, 1]) - r_each) / r_each
        )

    def solve(x0: list[float], distance_mm: float | None, nfev: int) -> optimize.OptimizeResult:
        return optimize.least_squares(
            circularity,
            x0=x0,
            args=(distance_mm,),
            bounds=([0.0, x0[1] - 4.0], [1.25, x0[1] + 4.0]),
            method="trf",
            loss="soft_l1",
            f_scale=0.003,
            max_nfev=nfev,
        )

    best = None
    for tilt0, az0 in _initial_normals(intrinsics, rims_image_px):
        sol = solve([tilt0, az0], None, 40)
        if best is None or sol.cost < best.cost:
            best = sol
    assert best is not None

    def scale(params: FloatArray) -> float:
        unit = MatPlane(intrinsics, _normal_from_angles(params[0], params[1]), 1.0)
        radii = np.array([fit_circle(unit.to_plane(r))[1] for r in subsample])
        sizes = (
            diameters_mm
            if diameters_mm is not None
            else assign_diameters_mm(radii, typical_distance_mm(intrinsics))
        )
        return float(np.median(np.asarray(sizes) / 2 / radii))

    distance = scale(best.x)
    # Once the scale is known, the wink's thickness can be allowed for.
    best = solve(list(best.x), distance, 30)
    normal = _normal_from_angles(best.x[0], best.x[1])
    distance = scale(best.x)
    plane = MatPlane(intrinsics, normal, distance)
    fitted = np.array([fit_wink_circle(plane, r, thickness_mm=thickness_mm)[1] for r in subsample])
    unit = MatPlane(intrinsics, normal, 1.0)
    sizes = (
        diameters_mm
        if diameters_mm is not None
        else assign_diameters_mm(
            [fit_circle(unit.to_plane(r))[1] for r in subsample], typical_distance_mm(intrinsics)
        )
    )
    distance *= float(np.median(np.asarray(sizes) / 2 / fitted))
    return MatPlane(intrinsics, normal, distance)


def _initial_normals(
    intrinsics: PinholeIntrinsics, rims_image_px: list[FloatArray]
) -> list[tuple[float, float]]:
    """Starting tilts from the roundest-looking rim: a circle seen at tilt t has axes 1 : cos t.

    The minor axis points along the tilt, but the ellipse alone cannot say
    which way; both are tried.
    """
    longest = max(rims_image_px, key=len)
    centre = longest.mean(axis=0)
    cov = np.cov((longest - centre).T)
    evals, evecs = np.linalg.eigh(cov)
    ratio = math.sqrt(max(evals[0], 1e-12) / max(evals[1], 1e-12))
    tilt = math.acos(min(1.0, ratio))
    minor = evecs[:, 0]
    az = math.atan2(minor[1], minor[0])
    starts = [(max(tilt, 0.02), az), (max(tilt, 0.02), az + math.pi), (0.02, 0.0)]
    return starts


def typical_distance_mm(intrinsics: PinholeIntrinsics) -> float:
    """How far off a close-up is typically taken through this lens, mm.

    :data:`TYPICAL_DISTANCE_MM` for a phone's main lens. Through a longer
    lens (a photo taken zoomed in) one stands further off to frame the pair
    alike, so what stays typical is the stretch of mat across the photo:
    the distance grows with the focal length.
    """
    width_px = 2 * intrinsics.principal_xy_px[0] + 1
    default_focal_px = 0.5 * width_px / math.tan(math.radians(DEFAULT_HFOV_DEG) / 2)
    return TYPICAL_DISTANCE_MM * intrinsics.focal_px / default_focal_px


def assign_diameters_mm(
    radii: npt.ArrayLike, typical_distance_mm: float = TYPICAL_DISTANCE_MM
) -> list[float]:
    """Large or small for each wink from fitted radii in one common unit.

    The scale (mm per unit) and the sizes are chosen together: the scale
    that makes every radius closest to 11 or 8 mm wins, each wink's miss
    capped so that one bad fit cannot pull the rest. When all winks are
    alike, two scales fit equally (all large, or all small); the one that
    puts the camera nearer ``typical_distance_mm`` (see
    :func:`typical_distance_mm`) is taken and the caller should say the
    scale is a guess.
    """
    r = np.asarray(radii, dtype=np.float64)
    sizes = np.array([LARGE_WINK_DIAMETER_MM, SMALL_WINK_DIAMETER_MM]) / 2
    r_ref = float(np.median(r))
    # Scales for which the median wink is 4-16 mm in radius: a generous range.
    scales = np.exp(np.linspace(math.log(4.0 / r_ref), math.log(16.0 / r_ref), 600))
    miss = np.log(scales[:, None, None] * r[None, :, None] / sizes[None, None, :])
    cost = np.minimum(np.min(miss**2, axis=2), 0.1**2).sum(axis=1)
    # Radii are measured with the plane at unit distance, so the scale is the distance in mm.
    prior = 1e-4 * np.log(scales / typical_distance_mm) ** 2
    best = int(np.argmin(cost + prior))
    k = scales[best]
    return nearest_diameters_mm(k * r)


def nearest_diameters_mm(radii_mm: npt.ArrayLike) -> list[float]:
    """The wink diameter, 22 or 16 mm, nearest each radius (on a log scale), mm."""
    r = np.asarray(radii_mm, dtype=np.float64).reshape(-1)
    sizes = np.array([LARGE_WINK_DIAMETER_MM, SMALL_WINK_DIAMETER_MM]) / 2
    pick = np.argmin(np.abs(np.log(r[:, None] / sizes[None, :])), axis=1)
    return [float(2 * sizes[i]) for i in pick]


def fit_plane_to_circles(
    plane: MatPlane,
    rims_image_px: list[FloatArray],
    diameters_mm: list[float],
    *,
    thickness_mm: float = WINK_THICKNESS_MM,
    points_per_rim: int = 80,
    solids: tuple[SolidRim, ...] = (),
) -> MatPlane:
    """Refine a plane jointly with circles of known size lying flat on it.

    Unlike :func:`estimate_plane`, which asks only that each rim rectify to
    some circle, every wink here must rectify to a circle of its own known
    diameter. How the winks' sizes in the photo change across it is a
    first-order cue to the tilt, where the rims' roundness is only a
    second-order one near a straight-down view, so the tilt comes out better
    from the same winks. Each rim counts equally; a robust loss limits a
    stretch of rim that belongs to something else.

    Parameters
    ----------
    plane : MatPlane
        Starting plane (e.g. from :func:`estimate_plane`); its intrinsics are kept.
    rims_image_px : list of (k_i, 2) ndarray
        Visible rim points of winks lying flat on the mat (not raised, not leaning).
    diameters_mm : list of float
        Each wink's diameter, mm.
    solids : tuple of SolidRim
        Round bodies standing on the mat (the pot), each with its own free
        centre and counted as one rim. Their outline points at different
        heights about one axis fix the plane's normal directly.

    Returns
    -------
    MatPlane
        The refined plane; the start when no rim is given.
    """
    if not rims_image_px and not solids:
        return plane
    intr = plane.intrinsics
    rims = [r[:: max(1, len(r) // points_per_rim)] for r in rims_image_px]
    bodies = tuple(b.subsampled(2 * points_per_rim) for b in solids)
    tilt0 = math.acos(min(1.0, float(plane.normal[2])))
    az0 = math.atan2(float(plane.normal[1]), float(plane.normal[0]))
    # Each wink's centre is a free parameter, held as its image point so that
    # it does not depend on the plane's in-plane basis, which turns with the normal.
    starts = [
        plane.to_image(fit_wink_circle(plane, r, thickness_mm=thickness_mm)[0][None, :])[0]
        for r in rims
    ] + [plane.to_image(b.centre_mm(plane)[None, :])[0] for b in bodies]
    x0 = np.array(
        [max(tilt0, 1e-3), az0, math.log(plane.distance_mm), *np.concatenate(starts)],
        dtype=np.float64,
    )

    last: list[tuple[FloatArray, FloatArray]] = []

    def residuals(x: FloatArray) -> FloatArray:
        trial = MatPlane(intr, _normal_from_angles(x[0], x[1]), math.exp(x[2]))
        f = _circle_residuals(trial, rims, x[3:].reshape(-1, 2), diameters_mm, thickness_mm, bodies)
        last[:] = [(x.copy(), f.copy())]
        return f

    n = len(rims) + len(bodies)
    lower = np.array([0.0, az0 - 4.0, x0[2] - 1.5, *([-np.inf] * (2 * n))])
    upper = np.array([1.25, az0 + 4.0, x0[2] + 1.5, *([np.inf] * (2 * n))])
    counts = [len(r) for r in rims] + [len(b.image_px) for b in bodies]

    def jacobian(x: FloatArray) -> FloatArray:
        # The optimiser asks for the Jacobian where it last evaluated the residuals.
        f0 = last[0][1] if last and np.array_equal(last[0][0], x) else residuals(x)
        return _forward_jacobian(residuals, x, f0, (lower, upper), 3, counts)

    sol = optimize.least_squares(
        residuals,
        x0,
        jac=jacobian,
        bounds=(lower, upper),
        method="trf",
        loss="soft_l1",
        # About 0.05 mm off the circle before a rim point counts as an outlier.
        f_scale=0.05 / math.sqrt(points_per_rim),
        x_scale="jac",
        max_nfev=60,
    )
    return MatPlane(intr, _normal_from_angles(sol.x[0], sol.x[1]), math.exp(sol.x[2]))


def _forward_jacobian(
    fun: Callable[[FloatArray], FloatArray],
    x: FloatArray,
    f0: FloatArray,
    bounds: tuple[FloatArray, FloatArray],
    n_shared: int,
    counts: list[int],
) -> FloatArray:
    """scipy's two-point Jacobian of residuals in blocks, from far fewer evaluations.

    The first ``n_shared`` parameters move every residual; then each block
    ``i`` of ``counts[i]`` residuals (one wink's rim) depends on those and on
    its own two parameters only (its centre). Its two columns are found by
    stepping the first, then the second, parameter of every block at once: a
    block's residuals see only their own step, so each entry comes out the
    same as stepping one parameter at a time, with ``n_shared + 2``
    evaluations instead of ``n_shared + 2 * len(counts)``. The steps are
    scipy's (``least_squares(jac="2-point")``): ``sqrt(eps) * max(1, |x|)``,
    turned back where a bound is in the way.

    Returns
    -------
    (m, n) ndarray
    """
    lower, upper = bounds
    sign = np.where(x >= 0, 1.0, -1.0)
    step = np.sqrt(np.finfo(np.float64).eps) * sign * np.maximum(1.0, np.abs(x))
    beyond = (x + step < lower) | (x + step > upper)
    fits = np.abs(step) <= np.maximum(x - lower, upper - x)
    step[beyond & fits] *= -1
    jac = np.zeros((len(f0), len(x)))
    for j in range(n_shared):
        x1 = x.copy()
        x1[j] += step[j]
        jac[:, j] = (fun(x1) - f0) / (x1[j] - x[j])
    ends = np.cumsum(counts)
    for k in range(2):
        cols = np.arange(n_shared + k, len(x), 2)
        x1 = x.copy()
        x1[cols] += step[cols]
        change = fun(x1) - f0
        for col, start, end in zip(cols, ends - counts, ends, strict=True):
            jac[start:end, col] = change[start:end] / (x1[col] - x[col])
    return jac


def _circle_residuals(
    plane: MatPlane,
    rims: list[FloatArray],
    centres_image_px: FloatArray,
    diameters_mm: list[float],
    thickness_mm: float,
    solids: tuple[SolidRim, ...] = (),
) -> FloatArray:
    """Each rim point's distance off its wink's circle of known size on ``plane``, mm.

    Each rim is weighted by one over the square root of its length, so that
    each wink counts equally. These are what :func:`fit_plane_to_circles`
    minimises and :func:`plane_spread` linearises. ``centres_image_px`` holds
    the winks' centres and then the solids', all as image points of the mat.
    """
    centres = plane.to_plane(centres_image_px, 0.0)
    out = []
    for rim, centre, diameter in zip(rims, centres, diameters_mm, strict=False):
        rays = plane.intrinsics.rays(rim)
        along = rays @ plane.normal
        heights = rim_heights_mm(
            plane.cut_rays(rays, along, thickness_mm / 2), centre, 0.0, thickness_mm
        )
        p = plane.cut_rays(rays, along, heights)
        miss = np.hypot(p[:, 0] - centre[0], p[:, 1] - centre[1]) - diameter / 2
        out.append(1.0 / math.sqrt(len(rim)) * miss)
    for body, centre in zip(solids, centres[len(rims) :], strict=True):
        p = plane.to_plane(body.image_px, body.heights_mm)
        miss = np.hypot(p[:, 0] - centre[0], p[:, 1] - centre[1]) - body.radii_mm
        out.append(1.0 / math.sqrt(len(p)) * miss)
    return np.concatenate(out)


def tilted(plane: MatPlane, step: FloatArray) -> MatPlane:
    """The plane with its normal turned by small angles and its distance scaled.

    ``step`` is (3,): radians towards the plane's first and second basis
    vectors, and the change of the log distance.
    """
    e1, e2 = plane.basis
    normal = plane.normal + step[0] * e1 + step[1] * e2
    return MatPlane(
        plane.intrinsics,
        normal / np.linalg.norm(normal),
        plane.distance_mm * math.exp(float(step[2])),
    )


@dataclass(frozen=True)
class PlaneSpread:
    """How far a fitted plane could plausibly be off: its one-sigma principal steps.

    ``steps`` is (k, 3): each row a one-sigma step for :func:`tilted` along one
    principal direction of the fit's covariance of (turn towards the first
    basis vector, turn towards the second, log distance); k is 3, or 0 when
    the fit's spread could not be measured. ``tilt_sigma_deg`` is the
    one-sigma angle the normal could be off by (both turns together).
    """

    steps: FloatArray
    tilt_sigma_deg: float


def plane_spread(
    plane: MatPlane,
    rims_image_px: list[FloatArray],
    diameters_mm: list[float],
    *,
    thickness_mm: float = WINK_THICKNESS_MM,
    points_per_rim: int = 80,
    sectors: int = 12,
    radius_sigma_mm: float = RADIUS_SIGMA_MM,
) -> PlaneSpread:
    """The spread of a plane fitted to circles of known size, from the fit itself.

    The same residuals as :func:`fit_plane_to_circles` (each wink a circle of
    its known size on the plane, its centre free), linearised at ``plane``
    and averaged over ``sectors`` stretches of each rim; each wink's radius
    is also left free within ``radius_sigma_mm`` of its known size. The
    covariance of the plane's three parameters is the (3, 3) block of the
    inverse of the information (the sectors' residual variance, the radius
    prior), the winks' centres and radii marginalised out. Few winks, short
    arcs or ragged rims leave the plane loosely fixed and give large steps;
    many round winks spread over the view give small ones.

    Parameters
    ----------
    plane : MatPlane
        The fitted plane.
    rims_image_px : list of (k_i, 2) ndarray
        Rim points of the winks it was fitted to, px.
    diameters_mm : list of float
        Their diameters, mm.
    sectors : int
        Stretches per rim whose mean misfit counts as one observation.
    radius_sigma_mm : float
        One-sigma error of each wink's apparent radius, mm.

    Returns
    -------
    PlaneSpread
        Zero steps when no rim is given; no steps and an infinite tilt sigma
        when the rims are too short to measure the spread.
    """
    if not rims_image_px:
        return PlaneSpread(np.zeros((0, 3)), 0.0)
    rims = [r[:: max(1, len(r) // points_per_rim)] for r in rims_image_px]
    centres = np.array(
        [
            plane.to_image(fit_wink_circle(plane, r, thickness_mm=thickness_mm)[0][None, :])[0]
            for r in rims
        ]
    )

    def residuals(x: FloatArray) -> FloatArray:
        return _circle_residuals(
            tilted(plane, x[:3]),
            rims,
            centres + x[3:].reshape(-1, 2),
            diameters_mm,
            thickness_mm,
        )

    n_params = 3 + 2 * len(rims)
    # Steps of about 0.01 degrees, 1e-5 of the distance and 0.05 px.
    h = np.array([2e-4, 2e-4, 1e-5, *([0.05] * (2 * len(rims)))])
    base = residuals(np.zeros(n_params))
    jac = np.empty((len(base), n_params))
    for k in range(n_params):
        dx = np.zeros(n_params)
        dx[k] = h[k]
        jac[:, k] = (residuals(dx) - residuals(-dx)) / (2 * h[k])
    # A rim's misfit is not independent from point to point: the outline's
    # errors (its edge profile, a neighbour's shadow) run along stretches of
    # it. So the residuals and their derivatives are averaged over sectors of
    # each rim, which are taken as the independent observations.
    group = np.concatenate(
        [
            k * sectors
            + np.floor(
                (np.arctan2(r[:, 1] - c[1], r[:, 0] - c[0]) + np.pi) / (2 * np.pi) * sectors
            ).clip(0, sectors - 1)
            for k, (r, c) in enumerate(zip(rims, centres, strict=True))
        ]
    ).astype(int)
    used = np.unique(group)
    count = np.bincount(group, minlength=len(rims) * sectors)[used]
    base = np.bincount(group, weights=base, minlength=len(rims) * sectors)[used] / count
    jac = np.column_stack(
        [
            np.bincount(group, weights=jac[:, k], minlength=len(rims) * sectors)[used] / count
            for k in range(n_params)
        ]
    )
    dof = len(base) - n_params
    if dof <= 0:
        return PlaneSpread(np.zeros((0, 3)), math.inf)
    variance = max(float(np.sum(base**2)) / dof, 1e-12)
    # Each wink's outline may be a little larger or smaller than its known size
    # (edge profile, thickness): a free radius per wink, held near its size by
    # a prior of radius_sigma_mm. Seen nearly straight down, the winks' sizes
    # across the photo are what fixes the tilt, so this is most of its spread there.
    own_rim = (
        np.column_stack(
            [
                np.where(np.arange(len(rims)).repeat(sectors)[used] == k, -1.0, 0.0)
                for k in range(len(rims))
            ]
        )
        / np.sqrt(np.array([len(r) for r in rims]))[None, :]
    )
    jac = np.column_stack([jac, own_rim])
    information = jac.T @ jac / variance
    information[n_params:, n_params:] += np.eye(len(rims)) / radius_sigma_mm**2
    try:
        cov_all = np.linalg.inv(information)
    except np.linalg.LinAlgError:
        return PlaneSpread(np.zeros((0, 3)), math.inf)
    cov = cov_all[:3, :3]
    evals, evecs = np.linalg.eigh(0.5 * (cov + cov.T))
    steps = (evecs * np.sqrt(np.clip(evals, 0.0, None))).T
    tilt_sigma = math.sqrt(max(float(cov[0, 0] + cov[1, 1]), 0.0))
    return PlaneSpread(steps, math.degrees(tilt_sigma))
