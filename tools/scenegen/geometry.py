"""Exact plan-view geometry of winks: outlines, signed gaps, squops, statuses.

A wink is a disc of radius ``r`` and thickness ``h`` whose rim is rounded with
radius ``b`` (the bevel). As a solid it is the Minkowski sum of a thinner
"core" disc (radius ``r - b``, thickness ``h - 2b``) and a ball of radius
``b``. Its plan view (vertical projection) is therefore the convex hull of the
projected core rims, grown by ``b``; signed gaps between two winks follow from
the Minkowski difference of the two core hulls, minus both bevels. Squops are
decided from these solids, never from a picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import shapely
from scipy.spatial import ConvexHull
from shapely.geometry import Point, Polygon

from rules.board import (
    BASELINE_DISTANCE_MM,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    POT_BASE_DIAMETER_MM,
    Colour,
    WinkSize,
)

FloatArray = npt.NDArray[np.float64]

HALF_LENGTH_MM = MAT_LENGTH_MM / 2
HALF_WIDTH_MM = MAT_WIDTH_MM / 2
POT_BASE_RADIUS_MM = POT_BASE_DIAMETER_MM / 2

#: Pairs within this plan-view separation are "marginal" (scenes README).
MARGINAL_MM = 1.5
#: Pot gaps are reported below this (scenes README).
POT_GAP_REPORT_MM = 5.0

_RIM_SAMPLES = 96


@dataclass(frozen=True)
class WinkSolid:
    """One wink as an exact solid in mat mm.

    ``placement`` is how the layout put it there (``played``, ``unplayed``,
    ``potted``, ``off``); the status is computed from the geometry.
    """

    id: str
    colour: Colour
    size: WinkSize
    radius_mm: float
    thickness_mm: float
    bevel_mm: float
    centre_mm: tuple[float, float, float]
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    placement: str = "played"

    @property
    def centre(self) -> FloatArray:
        return np.asarray(self.centre_mm, dtype=np.float64)

    @property
    def normal(self) -> FloatArray:
        n = np.asarray(self.axis, dtype=np.float64)
        return n / np.linalg.norm(n)

    @property
    def tilt_deg(self) -> float:
        return float(np.degrees(np.arccos(np.clip(self.normal[2], -1.0, 1.0))))

    def with_centre(self, centre_mm: Sequence[float]) -> WinkSolid:
        c = tuple(float(v) for v in centre_mm)
        return replace(self, centre_mm=(c[0], c[1], c[2]))

    def with_pose(self, centre_mm: Sequence[float], axis: Sequence[float]) -> WinkSolid:
        n = np.asarray(axis, dtype=np.float64)
        n = n / np.linalg.norm(n)
        c = tuple(float(v) for v in centre_mm)
        return replace(
            self, centre_mm=(c[0], c[1], c[2]), axis=(float(n[0]), float(n[1]), float(n[2]))
        )

    def with_placement(self, placement: str) -> WinkSolid:
        return replace(self, placement=placement)


def disc_basis(normal: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Two unit vectors spanning the disc's plane, shape (3,) each."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(normal, helper)
    u /= np.linalg.norm(u)
    v = np.cross(normal, u)
    return u, v


def rim_points(
    wink: WinkSolid, offset_mm: float, radius_mm: float, n: int = _RIM_SAMPLES
) -> FloatArray:
    """Points on a circle in the disc's frame: ``offset_mm`` along the axis, shape (n, 3)."""
    normal = wink.normal
    u, v = disc_basis(normal)
    ang = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    circle = np.cos(ang)[:, None] * u[None, :] + np.sin(ang)[:, None] * v[None, :]
    return wink.centre[None, :] + offset_mm * normal[None, :] + radius_mm * circle


def core_rims(wink: WinkSolid, n: int = _RIM_SAMPLES) -> FloatArray:
    """Top and bottom rims of the core disc, shape (2n, 3)."""
    half = wink.thickness_mm / 2 - wink.bevel_mm
    r = wink.radius_mm - wink.bevel_mm
    return np.vstack([rim_points(wink, half, r, n), rim_points(wink, -half, r, n)])


def core_plan_hull(wink: WinkSolid) -> FloatArray:
    """Plan-view convex hull of the core, counter-clockwise vertices, shape (k, 2)."""
    pts = core_rims(wink)[:, :2]
    hull = ConvexHull(pts)
    return np.asarray(pts[hull.vertices], dtype=np.float64)


def plan_polygon(wink: WinkSolid) -> Polygon:
    """The exact plan-view outline (core hull grown by the bevel)."""
    core = Polygon(core_plan_hull(wink))
    return core.buffer(wink.bevel_mm, quad_segs=16) if wink.bevel_mm > 0 else core


def lowest_z(wink: WinkSolid) -> float:
    """Height of the solid's lowest point, mm."""
    n = wink.normal
    sin_t = float(np.hypot(n[0], n[1]))
    cos_t = float(abs(n[2]))
    half = wink.thickness_mm / 2 - wink.bevel_mm
    r = wink.radius_mm - wink.bevel_mm
    return float(wink.centre[2] - half * cos_t - r * sin_t - wink.bevel_mm)


def mid_plane_z(wink: WinkSolid, plan_xy_mm: Sequence[float]) -> float:
    """Height of the disc's mid-plane above a plan point, mm."""
    n = wink.normal
    c = wink.centre
    dx = plan_xy_mm[0] - c[0]
    dy = plan_xy_mm[1] - c[1]
    return float(c[2] - (n[0] * dx + n[1] * dy) / n[2])


def signed_plan_gap(a: WinkSolid, b: WinkSolid) -> float:
    """Signed plan-view separation of two winks, mm.

    Positive is the gap between the outlines; negative is an overlap, given
    as the smallest horizontal shift that separates them (the penetration
    depth, from the Minkowski difference of the two convex outlines).
    """
    ha = core_plan_hull(a)
    hb = core_plan_hull(b)
    diff = (ha[:, None, :] - hb[None, :, :]).reshape(-1, 2)
    hull = ConvexHull(diff)
    verts = diff[hull.vertices]
    # Signed distance of the origin to the convex polygon: the hull's
    # equations give outward normals n and offsets d with n.p + d <= 0 inside.
    eq = hull.equations  # (m, 3): nx, ny, d
    side = eq[:, 2]  # n . 0 + d
    if np.all(side <= 0):
        depth = float(-np.max(side))
        core_gap = -depth
    else:
        core_gap = float(Polygon(verts).exterior.distance(Point(0.0, 0.0)))
    return core_gap - a.bevel_mm - b.bevel_mm


def plan_gap_quick(a: WinkSolid, b: WinkSolid) -> float:
    """A cheap lower bound on the plan gap from centre distance and radii, mm."""
    d = float(np.hypot(a.centre[0] - b.centre[0], a.centre[1] - b.centre[1]))
    return d - a.radius_mm - b.radius_mm - 1.0


def upper_of(a: WinkSolid, b: WinkSolid) -> str:
    """Which of two plan-overlapping winks is above the other, by id."""
    overlap = plan_polygon(a).intersection(plan_polygon(b))
    if overlap.is_empty:
        raise ValueError(f"winks {a.id!r} and {b.id!r} do not overlap in plan view")
    cx, cy = overlap.centroid.x, overlap.centroid.y
    za = mid_plane_z(a, (cx, cy))
    zb = mid_plane_z(b, (cx, cy))
    return a.id if za > zb else b.id


def mat_polygon() -> Polygon:
    """The mat's outline in plan view."""
    return shapely.box(-HALF_LENGTH_MM, -HALF_WIDTH_MM, HALF_LENGTH_MM, HALF_WIDTH_MM)


def corner_direction(corner_xy: Sequence[float]) -> FloatArray:
    """Unit vector from the mat centre towards a corner, shape (2,)."""
    d = np.asarray(corner_xy, dtype=np.float64)
    return d / np.linalg.norm(d)


def beyond_baseline_mm(plan_xy: npt.ArrayLike, corner_xy: Sequence[float]) -> float:
    """How far a point lies beyond the corner's baseline (p . d - 914.4), mm."""
    return float(np.dot(plan_xy, corner_direction(corner_xy)) - BASELINE_DISTANCE_MM)


def baseline_ends(corner_xy: Sequence[float]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where a baseline meets the long edge (p1) and the short edge (p2)."""
    d = corner_direction(corner_xy)
    cx, cy = float(corner_xy[0]), float(corner_xy[1])
    p1 = ((BASELINE_DISTANCE_MM - d[1] * cy) / d[0], cy)
    p2 = (cx, (BASELINE_DISTANCE_MM - d[0] * cx) / d[1])
    return (float(p1[0]), float(p1[1])), (float(p2[0]), float(p2[1]))


@dataclass(frozen=True)
class SceneFacts:
    """Everything the ground truth says about the winks, computed from the solids."""

    status: dict[str, str]
    squops: dict[str, list[str]]
    squopped_by: dict[str, list[str]]
    pile: dict[str, int | None]
    nearest_gap: dict[str, float | None]
    nearest_id: dict[str, str | None]
    pot_gap: dict[str, float | None]
    pair_gaps: dict[tuple[str, str], float]
    marginal_pairs: list[dict[str, object]]


def pot_base_gap(wink: WinkSolid, pot_xy: Sequence[float] = (0.0, 0.0)) -> float:
    """Plan gap between the wink's outline and the pot's base circle, mm."""
    poly = plan_polygon(wink)
    return float(poly.distance(Point(pot_xy[0], pot_xy[1])) - POT_BASE_RADIUS_MM)


def compute_facts(winks: Sequence[WinkSolid]) -> SceneFacts:
    """Statuses, squops, piles, gaps and marginal pairs from the solids."""
    active = [w for w in winks if w.placement != "potted"]
    pair_gaps: dict[tuple[str, str], float] = {}
    squops: dict[str, list[str]] = {w.id: [] for w in winks}
    squopped_by: dict[str, list[str]] = {w.id: [] for w in winks}
    for i, a in enumerate(active):
        for b in active[i + 1 :]:
            quick = plan_gap_quick(a, b)
            gap = signed_plan_gap(a, b) if quick < 5.0 else quick + 1.0
            key = (a.id, b.id) if a.id < b.id else (b.id, a.id)
            pair_gaps[key] = gap
            if gap < 0:
                up = upper_of(a, b)
                low = b.id if up == a.id else a.id
                squops[up].append(low)
                squopped_by[low].append(up)

    mat = mat_polygon()
    status: dict[str, str] = {}
    for w in winks:
        if w.placement == "potted":
            status[w.id] = "potted"
        elif not mat.contains(plan_polygon(w)):
            status[w.id] = "off"
        elif squopped_by[w.id]:
            status[w.id] = "squopped"
        elif w.placement == "unplayed":
            status[w.id] = "unplayed"
        else:
            status[w.id] = "free"

    # Piles: connected squop groups, numbered in wink order.
    parent = {w.id: w.id for w in winks}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for up, lows in squops.items():
        for low in lows:
            parent[find(up)] = find(low)
    pile: dict[str, int | None] = {}
    numbers: dict[str, int] = {}
    for w in winks:
        if squops[w.id] or squopped_by[w.id]:
            root = find(w.id)
            if root not in numbers:
                numbers[root] = len(numbers) + 1
            pile[w.id] = numbers[root]
        else:
            pile[w.id] = None

    polys = {w.id: plan_polygon(w) for w in winks}
    nearest_gap: dict[str, float | None] = {}
    nearest_id: dict[str, str | None] = {}
    pot_gap: dict[str, float | None] = {}
    for w in winks:
        if w.placement == "potted":
            nearest_gap[w.id] = None
            nearest_id[w.id] = None
            pot_gap[w.id] = None
            continue
        best: tuple[float, str] | None = None
        for o in active:
            if o.id == w.id:
                continue
            key = (w.id, o.id) if w.id < o.id else (o.id, w.id)
            gap = pair_gaps[key]
            if gap > 4.0:
                gap = float(polys[w.id].distance(polys[o.id]))
            if best is None or gap < best[0]:
                best = (gap, o.id)
        nearest_gap[w.id] = None if best is None else best[0]
        nearest_id[w.id] = None if best is None else best[1]
        pg = float(polys[w.id].distance(Point(0.0, 0.0)) - POT_BASE_RADIUS_MM)
        pot_gap[w.id] = pg if pg < POT_GAP_REPORT_MM and lowest_z(w) > -0.5 else None

    marginal: list[dict[str, object]] = []
    for (ia, ib), gap in sorted(pair_gaps.items()):
        if abs(gap) <= MARGINAL_MM:
            is_squop = gap < 0
            upper = None
            if is_squop:
                upper = ia if ib in squops[ia] else ib
            marginal.append(
                {"ids": [ia, ib], "plan_gap_mm": gap, "squop": is_squop, "upper": upper}
            )
    return SceneFacts(
        status=status,
        squops=squops,
        squopped_by=squopped_by,
        pile=pile,
        nearest_gap=nearest_gap,
        nearest_id=nearest_id,
        pot_gap=pot_gap,
        pair_gaps=pair_gaps,
        marginal_pairs=marginal,
    )
