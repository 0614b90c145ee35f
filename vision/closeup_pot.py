"""Find the pot's top rim in a close-up, as evidence for the mat plane.

The pot (rule 2.4) stands on the mat; its top rim is a circle of
:data:`~rules.board.POT_TOP_DIAMETER_MM` lying :data:`~rules.board.POT_HEIGHT_MM`
above it, parallel to it, and more than twice a large wink's size: when it is
in view it fixes the plane's tilt better than a few small winks.

The pot widens upwards, so from straight above its top rim is its whole
outline; seen from more than a few degrees off its axis, the near side of the
outline is the wall's edge instead. Only the stretch of the top rim where the
wall faces away from the camera is taken: there the rim is the pot's
silhouette against whatever lies behind it (usually felt). Its place is
predicted from a first mat plane (from the winks), and each rim point is found
along the predicted outline's normal where the colour changes from the pot's
to the felt's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from rules.board import POT_BASE_DIAMETER_MM, POT_HEIGHT_MM, POT_TOP_DIAMETER_MM
from vision.closeup import CloseupWink, colour_distance
from vision.closeup_geometry import MatPlane, SolidRim, fit_circle, fit_circle_known_radius

FloatArray = npt.NDArray[np.float64]

#: Shrink factor of the map the pot is first looked for in.
_COARSE_SCALE = 8
#: Colour distance from the felt (CIELAB units, lightness weighted as below)
#: above which a coarse pixel is not felt.
_NOT_FELT = 12.0
#: A blob is a pot candidate when its area is this share of the predicted
#: silhouette's (within the photo) or more, and at most its inverse.
_AREA_RATIO = 0.45
#: Rim points are searched this far either side of the predicted outline, as a
#: share of the predicted rim's semi-major axis, narrowing over the refinements.
_SEARCH_SHARES = (0.4, 0.12, 0.04, 0.02)
_MIN_SEARCH_PX = 4.0
#: The wall must face away from the camera by at least this angle (degrees)
#: for the rim there to count as silhouette.
_SILHOUETTE_MARGIN_DEG = 3.0
#: An edge counts when the colour distance from the felt drops by at least
#: this across it and is felt-like (under _FELT_LIKE) outside it.
_MIN_STEP = 8.0
_FELT_LIKE = 14.0
#: Rim points further than this (mm) off the fitted circle, or three times the
#: median miss, are not the rim (a wink or shadow against it).
_INLIER_MM = 0.6
#: Least rim points, and least arc (degrees) they span, for a rim to be used.
MIN_RIM_POINTS = 40
MIN_RIM_ARC_DEG = 100.0
#: Rim points beyond this rms off a circle of the pot's size (mm) on the plane they
#: were found with are no rim. Loose: that first plane (from the winks) may be a
#: few degrees off, which alone puts a true rim 0.8 mm rms off (two winks seen
#: nearly straight down, 7 degrees off, in the tests); the rim's fit on its own
#: plane is judged by the caller.
MAX_RIM_RMS_MM = 1.5


@dataclass(frozen=True, eq=False)
class PotRim:
    """The pot's top rim as found in a photo.

    Parameters
    ----------
    rim_image_px : (n, 2) ndarray
        Points on the outer top edge where it is the pot's silhouette, px.
    diameter_mm : float
        Its diameter as a free circle fitted on the plane it was found with
        (:data:`~rules.board.POT_TOP_DIAMETER_MM` for a true pot on a true plane).
    rms_mm : float
        The points' rms off a circle of the pot's known size on that plane.
    arc_deg : float
        How much of the rim the points span, degrees.
    """

    rim_image_px: FloatArray
    diameter_mm: float
    rms_mm: float
    arc_deg: float

    def solid(self) -> SolidRim:
        """The rim as a circle of the pot's size at its height, for the plane fit."""
        n = len(self.rim_image_px)
        return SolidRim(
            self.rim_image_px,
            np.full(n, POT_HEIGHT_MM),
            np.full(n, POT_TOP_DIAMETER_MM / 2),
        )


@dataclass(frozen=True)
class NoPotFound:
    """No pot rim fit to use, and why (a failure value, not an error)."""

    reason: str


def _ring(centre_xy_mm: FloatArray, radius_mm: float, angles: FloatArray) -> FloatArray:
    return np.asarray(centre_xy_mm)[None, :] + radius_mm * np.column_stack(
        [np.cos(angles), np.sin(angles)]
    )


def _silhouette_hull_px(plane: MatPlane, centre_xy_mm: FloatArray) -> FloatArray:
    """(k, 2) convex hull of the pot's projected base and top rings, px."""
    a = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    pts = np.vstack(
        [
            plane.to_image(_ring(centre_xy_mm, POT_BASE_DIAMETER_MM / 2, a), 0.0),
            plane.to_image(_ring(centre_xy_mm, POT_TOP_DIAMETER_MM / 2, a), POT_HEIGHT_MM),
        ]
    )
    return np.asarray(cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2), dtype=np.float64)


def _candidates(
    image_bgr: npt.NDArray[np.uint8],
    plane: MatPlane,
    winks: tuple[CloseupWink, ...],
    felt_lab: FloatArray,
) -> list[FloatArray]:
    """Plan centres (mm) of blobs about the size a pot would have where they are."""
    h, w = image_bgr.shape[:2]
    small = cv2.resize(
        image_bgr, (w // _COARSE_SCALE, h // _COARSE_SCALE), interpolation=cv2.INTER_AREA
    )
    dist = colour_distance(cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32), felt_lab)
    mask = (dist > _NOT_FELT).astype(np.uint8)
    # Winks are not the pot: cut them out (a wink against the pot would join it).
    for wk in winks:
        e = wk.ellipse
        cv2.ellipse(
            mask,
            (
                (e.centre_xy_px[0] / _COARSE_SCALE, e.centre_xy_px[1] / _COARSE_SCALE),
                (2.3 * e.semi_axes_px[0] / _COARSE_SCALE, 2.3 * e.semi_axes_px[1] / _COARSE_SCALE),
                math.degrees(e.angle_rad),
            ),
            0,
            -1,
        )
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
    scored = []
    for label in range(1, n):
        area = float(stats[label, cv2.CC_STAT_AREA])
        if area < 60:
            continue
        centroid_px = (np.asarray(centroids[label]) + 0.5) * _COARSE_SCALE - 0.5
        centre = plane.to_plane(centroid_px[None, :], POT_HEIGHT_MM / 2)[0]
        hull = _silhouette_hull_px(plane, centre) / _COARSE_SCALE
        predicted = np.zeros(mask.shape, np.uint8)
        cv2.fillPoly(predicted, [np.round(hull).astype(np.int32)], 1)
        expected = float(predicted.sum())
        if expected < 30:
            continue
        ratio = area / expected
        if _AREA_RATIO <= ratio <= 1 / _AREA_RATIO:
            scored.append((abs(math.log(ratio)), centre))
    return [c for _, c in sorted(scored, key=lambda s: s[0])[:3]]


def _wall_away(
    plane: MatPlane,
    centre_xy_mm: FloatArray,
    angles: FloatArray,
    radius_mm: float,
    height_mm: float,
) -> FloatArray:
    """(n,) sine of the angle by which the wall at rim points faces away from the camera.

    Positive: the wall there faces away, and the top rim is the silhouette;
    negative: it faces the camera, and the base is the silhouette.
    """
    e1, e2 = plane.basis
    radial = np.cos(angles)[:, None] * e1[None, :] + np.sin(angles)[:, None] * e2[None, :]
    ring = _ring(centre_xy_mm, radius_mm, angles)
    xyz = (
        ring[:, :1] * e1[None, :]
        + ring[:, 1:] * e2[None, :]
        + (plane.distance_mm - height_mm) * plane.normal[None, :]
    )
    # The wall's outward normal: radial, tipped down by the cone's slope (the
    # plane's normal points into the table, so "down" is +normal).
    slope = (POT_TOP_DIAMETER_MM - POT_BASE_DIAMETER_MM) / 2 / POT_HEIGHT_MM
    wall = radial + slope * plane.normal[None, :]
    wall /= np.linalg.norm(wall, axis=1)[:, None]
    return np.asarray(np.sum(wall * xyz, axis=1) / np.linalg.norm(xyz, axis=1))


def _sample(dist_map: FloatArray, pts_xy: FloatArray) -> FloatArray:
    xs = np.ascontiguousarray(pts_xy[..., 0], dtype=np.float32)
    ys = np.ascontiguousarray(pts_xy[..., 1], dtype=np.float32)
    return np.asarray(
        cv2.remap(dist_map, xs, ys, cv2.INTER_LINEAR, borderValue=float("nan")), dtype=np.float64
    )


class _FeltDistances:
    """A photo's colour distance from the felt (CIELAB), converted box by box as asked for.

    A rim's refinements look in boxes round the same pot, the first the
    largest: a box inside one already converted is cut from it. The
    conversion is pixel by pixel, so the values are the same; ~25 ms less a pot.
    """

    def __init__(self, image_bgr: npt.NDArray[np.uint8], felt_lab: FloatArray) -> None:
        self.image_bgr = image_bgr
        self.felt_lab = felt_lab
        self._boxes: list[tuple[npt.NDArray[np.int_], npt.NDArray[np.int_], FloatArray]] = []

    def over(self, lo: npt.NDArray[np.int_], hi: npt.NDArray[np.int_]) -> FloatArray:
        """The distances of pixels ``lo`` (x, y) up to but not including ``hi``."""
        for box_lo, box_hi, dist in self._boxes:
            if np.all(box_lo <= lo) and np.all(hi <= box_hi):
                (x0, y0), (x1, y1) = lo - box_lo, hi - box_lo
                return dist[y0:y1, x0:x1]
        crop = self.image_bgr[lo[1] : hi[1], lo[0] : hi[0]]
        dist = colour_distance(
            cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32), self.felt_lab
        )
        self._boxes.append((lo, hi, dist))
        return dist


def _edge_points(
    image_bgr: npt.NDArray[np.uint8],
    felt_lab: FloatArray,
    predicted_px: FloatArray,
    outward: FloatArray,
    search_px: float,
    *,
    felt_distances: _FeltDistances | None = None,
) -> FloatArray:
    """Where the colour along each outward normal turns from the pot's to the felt's: (m, 2) px.

    ``felt_distances`` (of ``image_bgr`` from ``felt_lab``) keeps the colour
    distances converted for earlier calls.
    """
    h, w = image_bgr.shape[:2]
    reach = search_px + 10.0
    lo = np.floor(np.maximum(predicted_px.min(axis=0) - reach, 0)).astype(int)
    hi = np.ceil(np.minimum(predicted_px.max(axis=0) + reach + 1, [w, h])).astype(int)
    if np.any(hi - lo < 3):
        return np.zeros((0, 2))
    raw = (felt_distances or _FeltDistances(image_bgr, felt_lab)).over(lo, hi)
    dist = np.asarray(cv2.GaussianBlur(raw.astype(np.float32), (0, 0), 1.0), dtype=np.float64)
    step = 0.5
    offsets = np.arange(-search_px - 8.0, search_px + 8.0 + step / 2, step)
    grid = (predicted_px - lo)[:, None, :] + offsets[None, :, None] * outward[:, None, :]
    prof = _sample(dist, grid)
    out = []
    band = np.abs(offsets) <= search_px
    # Mean colour distance 3-8 px inside and outside each sample along the profile.
    side = np.ones(11) / 11
    shift = int(round(5.5 / step))
    # All profiles as one row: a sample 5 or more from its profile's ends sums the
    # same 11 values as convolving its profile alone, and only those are read (the
    # band stops 8 px = 16 samples short of the ends, and the sides reach 11).
    mean = np.convolve(prof.ravel(), side, mode="same").reshape(prof.shape)
    inside_mean = np.roll(mean, shift, axis=1)
    outside_mean = np.roll(mean, -shift, axis=1)
    # The strongest drop into felt: other edges (the opening's, potted winks')
    # have the pot's colour on both sides.
    drop = -np.gradient(prof, step, axis=1)
    ok = band & (outside_mean <= _FELT_LIKE) & (inside_mean - outside_mean >= _MIN_STEP)
    strongest = np.argmax(np.where(ok, drop, -np.inf), axis=1)
    for k in np.flatnonzero(np.all(np.isfinite(prof), axis=1) & ok.any(axis=1)):
        p = prof[k]
        i = int(strongest[k])
        level_in, level_out = float(inside_mean[k, i]), float(outside_mean[k, i])
        # The edge is where the colour is halfway between the two sides.
        half = 0.5 * (level_in + level_out)
        j = i
        while j > 0 and p[j] < half:
            j -= 1
        while j < len(p) - 1 and p[j + 1] >= half:
            j += 1
        if j >= len(p) - 1 or p[j] == p[j + 1]:
            continue
        t = offsets[j] + step * (p[j] - half) / (p[j] - p[j + 1])
        out.append(predicted_px[k] + t * outward[k])
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def _arc_deg(plane_xy_mm: FloatArray, centre_xy_mm: FloatArray) -> float:
    a = np.degrees(np.arctan2(*(plane_xy_mm - centre_xy_mm).T[::-1]))
    return 10.0 * len(np.unique(np.floor(a / 10.0)))


def _top_rim_edge(
    image_bgr: npt.NDArray[np.uint8],
    plane: MatPlane,
    winks: tuple[CloseupWink, ...],
    felt_lab: FloatArray,
    centre_xy_mm: FloatArray,
    share: float,
    *,
    felt_distances: _FeltDistances | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Silhouette points of the pot's top rim, and its refitted centre.

    Returns (m, 2) px points (empty when too few are found) and the (2,) plan
    centre on ``plane`` of a circle of the pot's top size at its height
    through them.
    """
    radius_mm, height_mm = POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM
    h, w = image_bgr.shape[:2]
    angles = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    centre = np.asarray(centre_xy_mm, dtype=np.float64)
    ring_px = plane.to_image(_ring(centre, radius_mm, angles), height_mm)
    semi_major = 0.5 * float(np.max(np.ptp(ring_px, axis=0)))
    away = _wall_away(plane, centre, angles, radius_mm, height_mm)
    margin = math.sin(math.radians(_SILHOUETTE_MARGIN_DEG))
    # The top rim is the silhouette where the wall below it faces away.
    use = away > margin
    use &= np.all((ring_px > 5) & (ring_px < [w - 6, h - 6]), axis=1)
    for wk in winks:
        use &= ~wk.ellipse.contains(ring_px, margin_px=0.1 * wk.ellipse.semi_axes_px[0])
    none = np.zeros((0, 2))
    if use.sum() < MIN_RIM_POINTS:
        return none, centre
    tangent = np.gradient(ring_px, axis=0)
    outward = np.column_stack([tangent[:, 1], -tangent[:, 0]])
    outward /= np.linalg.norm(outward, axis=1)[:, None]
    centre_px = plane.to_image(centre[None, :], height_mm)[0]
    flip = np.sum(outward * (ring_px - centre_px), axis=1) < 0
    outward[flip] *= -1
    pts = _edge_points(
        image_bgr,
        felt_lab,
        ring_px[use],
        outward[use],
        max(_MIN_SEARCH_PX, share * semi_major),
        felt_distances=felt_distances,
    )
    if len(pts) < MIN_RIM_POINTS:
        return none, centre
    on_plane = plane.to_plane(pts, height_mm)
    inlier = np.ones(len(pts), dtype=bool)
    for _ in range(4):
        centre, _ = fit_circle_known_radius(on_plane[inlier], radius_mm, centre)
        miss = np.abs(np.hypot(*(on_plane - centre).T) - radius_mm)
        inlier = miss < max(_INLIER_MM, 3 * float(np.median(miss)))
        if inlier.sum() < MIN_RIM_POINTS:
            return none, centre
    return pts[inlier], centre


def _refine(
    image_bgr: npt.NDArray[np.uint8],
    plane: MatPlane,
    winks: tuple[CloseupWink, ...],
    felt_lab: FloatArray,
    centre_xy_mm: FloatArray,
) -> PotRim | NoPotFound:
    """The pot's top rim near a pot predicted at ``centre_xy_mm`` on ``plane``.

    (The base's near arc can be found the same way, but on the benchmark's
    close-ups adding it to the fit made the plane's tilt no better.)
    """
    radius = POT_TOP_DIAMETER_MM / 2
    centre = np.asarray(centre_xy_mm, dtype=np.float64)
    rim = np.zeros((0, 2))
    felt_distances = _FeltDistances(image_bgr, felt_lab)
    for share in _SEARCH_SHARES:
        rim, centre = _top_rim_edge(
            image_bgr, plane, winks, felt_lab, centre, share, felt_distances=felt_distances
        )
        if len(rim) == 0:
            return NoPotFound("too few points of the pot's top rim found against the felt")
    on_plane = plane.to_plane(rim, POT_HEIGHT_MM)
    centre, rms = fit_circle_known_radius(on_plane, radius, centre)
    _, free_radius, _ = fit_circle(on_plane)
    arc = _arc_deg(on_plane, centre)
    if arc < MIN_RIM_ARC_DEG:
        return NoPotFound(f"the rim found spans only {arc:.0f} degrees")
    if rms > MAX_RIM_RMS_MM:
        return NoPotFound(f"the rim found is {rms:.2f} mm rms off a circle of the pot's size")
    return PotRim(rim, 2 * free_radius, rms, arc)


def find_pot_rim(
    image_bgr: npt.NDArray[np.uint8],
    plane: MatPlane,
    winks: tuple[CloseupWink, ...],
) -> PotRim | NoPotFound:
    """The pot's top rim, found near where a pot would look its size on ``plane``.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    plane : MatPlane
        A first mat plane (from the winks); it sets where to look and how big
        the rim should look.
    winks : tuple of CloseupWink
        Winks found: their outlines are no pot's.

    Returns
    -------
    PotRim or NoPotFound
        The candidate whose rim fits a circle of the pot's size best; whether
        its size on a refitted plane is the pot's is for the caller to judge.
    """
    small = image_bgr[::16, ::16]
    felt_lab = np.median(cv2.cvtColor(small, cv2.COLOR_BGR2LAB).reshape(-1, 3), axis=0).astype(
        np.float64
    )
    candidates = _candidates(image_bgr, plane, winks, felt_lab)
    if not candidates:
        return NoPotFound("nothing in the photo has the pot's size and a colour off the felt's")
    best: PotRim | NoPotFound = NoPotFound("no candidate rim fitted")
    for centre in candidates:
        found = _refine(image_bgr, plane, winks, felt_lab, centre)
        if isinstance(found, PotRim) and (
            not isinstance(best, PotRim) or found.rms_mm < best.rms_mm
        ):
            best = found
        elif isinstance(best, NoPotFound) and isinstance(found, NoPotFound):
            best = found
    return best
