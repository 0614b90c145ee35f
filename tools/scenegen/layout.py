"""Game content: where the 24 winks, the pot and the distractors are.

Layouts are built from small physical constructions (a wink leaning on
another's edge, one wink lying flat on two, marginal pairs placed at an
exact plan-view gap by bisection, a stack in the pot, ...). Statuses and
squops are not decided here: :func:`geometry.compute_facts` derives them
from the solids afterwards, so the ground truth cannot disagree with the
geometry.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from shapely.geometry import Point, Polygon
from shapely.geometry.base import BaseGeometry

from rules.board import Colour, WinkSize, standard_wink_ids
from tools.scenegen.geometry import (
    HALF_LENGTH_MM,
    HALF_WIDTH_MM,
    POT_BASE_RADIUS_MM,
    WinkSolid,
    beyond_baseline_mm,
    lowest_z,
    plan_gap_quick,
    plan_polygon,
    rim_points,
    signed_plan_gap,
)

#: Mat corners clockwise seen from above (x right, y up): the order of
#: blue, green, red, yellow (rule 5.2) starting from blue's corner.
CORNERS_CLOCKWISE: tuple[tuple[float, float], ...] = (
    (-HALF_LENGTH_MM, HALF_WIDTH_MM),
    (HALF_LENGTH_MM, HALF_WIDTH_MM),
    (HALF_LENGTH_MM, -HALF_WIDTH_MM),
    (-HALF_LENGTH_MM, -HALF_WIDTH_MM),
)

POT_MATERIALS = ("white", "translucent-blue", "translucent-red", "clear", "black")


@dataclass(frozen=True)
class Distractor:
    """A non-wink object: ``kind`` is squidger, sheet, mug, phone or pen.

    ``centre_mm`` is the plan centre on its supporting plane (height
    ``base_z_mm``); ``size_mm`` is (length, width, height) or for discs and
    cylinders (diameter, diameter, height); ``angle_rad`` turns it in plan.
    """

    kind: str
    centre_mm: tuple[float, float]
    base_z_mm: float
    size_mm: tuple[float, float, float]
    angle_rad: float
    colour_bgr: tuple[int, int, int]

    def footprint(self) -> Polygon:
        """The plan-view outline."""
        if self.kind in ("squidger", "mug"):
            return Point(self.centre_mm).buffer(self.size_mm[0] / 2, quad_segs=16)
        hl, hw = self.size_mm[0] / 2, self.size_mm[1] / 2
        c, s = math.cos(self.angle_rad), math.sin(self.angle_rad)
        pts = [
            (self.centre_mm[0] + c * dx - s * dy, self.centre_mm[1] + s * dx + c * dy)
            for dx, dy in ((-hl, -hw), (hl, -hw), (hl, hw), (-hl, hw))
        ]
        return Polygon(pts)


@dataclass
class Layout:
    """A whole scene's content before rendering."""

    corners: dict[Colour, tuple[float, float]]
    winks: list[WinkSolid]
    pot_material: str
    mat_thickness_mm: float
    distractors: list[Distractor] = field(default_factory=list)
    mat_present: bool = True
    #: (kind, ids) of constructions a closeup may be aimed at.
    disputable: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    @property
    def table_z_mm(self) -> float:
        return -self.mat_thickness_mm


class _Placer:
    """Keeps placed winks and obstacles and answers "is this spot clear?"."""

    def __init__(self, rng: np.random.Generator, corners: dict[Colour, tuple[float, float]]):
        self.rng = rng
        self.corners = corners
        self.placed: dict[str, WinkSolid] = {}
        self.obstacles: list[BaseGeometry] = []

    def clear(self, wink: WinkSolid, ignore: Sequence[str] = (), min_gap: float = 2.5) -> bool:
        for other in self.placed.values():
            if other.id in ignore or other.placement == "potted":
                continue
            if plan_gap_quick(wink, other) < min_gap and signed_plan_gap(wink, other) < min_gap:
                return False
        poly = plan_polygon(wink)
        for obs in self.obstacles:
            if poly.distance(obs) < 4.0:
                return False
        return True

    def pot_clear(self, wink: WinkSolid, margin: float = 6.0) -> bool:
        d = math.hypot(wink.centre[0], wink.centre[1])
        return d - wink.radius_mm > POT_BASE_RADIUS_MM + 5.0 + margin

    def in_play_area(self, xy: npt.ArrayLike, radius: float, margin: float = 8.0) -> bool:
        xy = np.asarray(xy, dtype=np.float64)
        if abs(xy[0]) > HALF_LENGTH_MM - radius - margin:
            return False
        if abs(xy[1]) > HALF_WIDTH_MM - radius - margin:
            return False
        return all(
            beyond_baseline_mm(xy, corner) < -radius - margin for corner in self.corners.values()
        )

    def random_play_xy(self, near_pot: bool) -> np.ndarray:
        for _ in range(200):
            if near_pot:
                xy = self.rng.normal(0.0, [170.0, 120.0])
            else:
                xy = self.rng.uniform(
                    [-HALF_LENGTH_MM, -HALF_WIDTH_MM], [HALF_LENGTH_MM, HALF_WIDTH_MM]
                )
            if self.in_play_area(xy, 25.0, 20.0) and math.hypot(*xy) > 45.0:
                return np.asarray(xy, dtype=np.float64)
        return np.array([150.0, 100.0])

    def add(self, *winks: WinkSolid) -> None:
        for w in winks:
            self.placed[w.id] = w


# --------------------------------------------------------------------------
# Constructions
# --------------------------------------------------------------------------


def flat_at(template: WinkSolid, xy: npt.ArrayLike, base_z: float = 0.0) -> WinkSolid:
    """The wink lying flat with its bottom at ``base_z``."""
    xy = np.asarray(xy, dtype=np.float64)
    return template.with_pose(
        (xy[0], xy[1], base_z + template.thickness_mm / 2), (0.0, 0.0, 1.0)
    ).with_placement(template.placement)


def tipped_over_edge(
    template: WinkSolid, xy: npt.ArrayLike, outward: npt.ArrayLike, beyond_mm: float, table_z: float
) -> WinkSolid:
    """The wink with its centre ``beyond_mm`` past the mat's edge, tipped over it.

    Its underside rests on the felt's edge and its low rim on the table
    (``table_z``, below the felt's top at 0). ``outward`` (unit, plan) points
    off the mat, square to the edge; ``beyond_mm`` must be under the radius
    less the bevel.

    Raises
    ------
    ValueError
        When ``beyond_mm`` is not between 0 and the radius less the bevel, or
        no tilt up to 45 degrees brings the low rim down to the table.
    """
    if not 0.0 < beyond_mm < template.radius_mm - template.bevel_mm:
        raise ValueError(
            f"beyond_mm {beyond_mm!r}: a wink tips over the edge only with its centre past it "
            f"by less than its radius less the bevel ({template.radius_mm - template.bevel_mm} mm)"
        )
    e = np.asarray(outward, dtype=np.float64)
    xy = np.asarray(xy, dtype=np.float64)
    half = template.thickness_mm / 2

    def pose(tilt: float) -> WinkSolid:
        # Tipped outwards about the edge: the underside is at 0 over the edge.
        axis = (math.sin(tilt) * e[0], math.sin(tilt) * e[1], math.cos(tilt))
        centre_z = half / math.cos(tilt) - beyond_mm * math.tan(tilt)
        return template.with_pose((xy[0], xy[1], centre_z), axis)

    # lowest_z falls as the wink tips further; table_z is below 0.
    tilt = _bisect(lambda t: -lowest_z(pose(t)), 0.0, math.radians(45.0), -table_z)
    tipped = pose(tilt)
    if abs(lowest_z(tipped) - table_z) > 1e-6:
        raise ValueError(
            f"a wink {beyond_mm} mm past the edge cannot reach a table {-table_z} mm down"
        )
    return tipped.with_placement(template.placement)


def _bisect(f: Callable[[float], float], lo: float, hi: float, target: float) -> float:
    """Solve f(x) = target for an increasing f on [lo, hi]."""
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _top_points(lower: WinkSolid) -> np.ndarray:
    """Points on the lower wink's top face and rounded rim, shape (N, 3)."""
    half, r, bev = lower.thickness_mm / 2, lower.radius_mm, lower.bevel_mm
    return np.vstack(
        [
            rim_points(lower, half, r - bev, 96),
            rim_points(
                lower, half - bev * (1 - math.sqrt(0.5)), r - bev * (1 - math.sqrt(0.5)), 96
            ),
            rim_points(lower, half - bev, r, 96),
            lower.centre[None, :] + half * lower.normal[None, :],
        ]
    )


def lean_on(
    upper: WinkSolid, lower: WinkSolid, direction: np.ndarray, target_gap_mm: float
) -> WinkSolid:
    """The upper wink with its low edge on the mat and its underside resting on the lower.

    ``direction`` (unit, plan) points from the lower's centre to the upper's;
    the upper tilts so its low side is away from the lower, just enough
    that its underside clears every point of the lower's top (so the solids
    touch but do not intersect, also when the lower is itself tilted). Its
    centre distance is solved so that the exact plan gap is
    ``target_gap_mm`` (negative: overlap).
    """
    e = direction / np.linalg.norm(direction)
    lower_xy = lower.centre[:2]
    top = _top_points(lower)

    def pose(xy: np.ndarray, tilt: float) -> WinkSolid:
        axis = (math.sin(tilt) * e[0], math.sin(tilt) * e[1], math.cos(tilt))
        w = upper.with_pose((xy[0], xy[1], 0.0), axis)
        return w.with_centre((xy[0], xy[1], -lowest_z(w)))

    def build(dist: float) -> WinkSolid:
        xy = lower_xy + dist * e
        under = top[np.hypot(top[:, 0] - xy[0], top[:, 1] - xy[1]) <= upper.radius_mm]
        if len(under) == 0:
            return pose(xy, 0.0)

        def clearance(tilt: float) -> float:
            w = pose(xy, tilt)
            n = w.normal
            mid = w.centre[2] - (n[0] * (under[:, 0] - xy[0]) + n[1] * (under[:, 1] - xy[1])) / n[2]
            underside = mid - (w.thickness_mm / 2) / n[2]
            return float(np.min(underside - under[:, 2]))

        tilt = _bisect(clearance, 0.0, math.radians(45.0), 0.0)
        return pose(xy, tilt)

    lo = max(abs(upper.radius_mm - lower.radius_mm), 2.0)
    hi = upper.radius_mm + lower.radius_mm + 3.0
    dist = _bisect(lambda d: signed_plan_gap(build(d), lower), lo, hi, target_gap_mm)
    return build(dist)


def place_at_gap(
    mover: WinkSolid, fixed: WinkSolid, direction: np.ndarray, target_gap_mm: float
) -> WinkSolid:
    """Slide ``mover`` (pose kept) along ``direction`` from ``fixed`` to an exact plan gap."""
    e = direction / np.linalg.norm(direction)
    base = fixed.centre[:2]

    def build(dist: float) -> WinkSolid:
        xy = base + dist * e
        return mover.with_centre((xy[0], xy[1], mover.centre[2]))

    hi = mover.radius_mm + fixed.radius_mm + 4.0
    dist = _bisect(lambda d: signed_plan_gap(build(d), fixed), 0.0, hi, target_gap_mm)
    return build(dist)


def _unit(angle: float) -> np.ndarray:
    return np.array([math.cos(angle), math.sin(angle)])


def _marginal_gap(rng: np.random.Generator, squop: bool) -> float:
    g = float(rng.uniform(0.2, 1.5))
    return -g if squop else g


# --------------------------------------------------------------------------
# The whole layout
# --------------------------------------------------------------------------


def make_templates(rng: np.random.Generator) -> list[WinkSolid]:
    """The 24 winks in standard id order, with this set's thickness and bevel."""
    thick_large = float(rng.uniform(1.6, 1.95))
    thick_small = thick_large - float(rng.uniform(0.25, 0.4))
    bevel = float(rng.uniform(0.2, 0.35))
    out = []
    for colour in Colour:
        for wid in standard_wink_ids(colour):
            size = WinkSize.LARGE if "-L" in wid else WinkSize.SMALL
            h = thick_large if size is WinkSize.LARGE else thick_small
            out.append(
                WinkSolid(
                    id=wid,
                    colour=colour,
                    size=size,
                    radius_mm=size.diameter_mm / 2,
                    thickness_mm=round(h, 4),
                    bevel_mm=round(bevel, 4),
                    centre_mm=(0.0, 0.0, h / 2),
                )
            )
    return out


def assign_corners(rng: np.random.Generator) -> dict[Colour, tuple[float, float]]:
    """Blue's corner at random; green, red, yellow follow clockwise (rule 5.2)."""
    k = int(rng.integers(4))
    return {c: CORNERS_CLOCKWISE[(k + i) % 4] for i, c in enumerate(Colour)}


def _place_unplayed(placer: _Placer, w: WinkSolid, corner: tuple[float, float]) -> bool:
    rng = placer.rng
    sx, sy = np.sign(corner[0]), np.sign(corner[1])
    for _ in range(300):
        # Sample in the corner triangle, then keep points well behind the baseline.
        u = rng.uniform(0, 250.0)
        v = rng.uniform(0, 250.0)
        xy = np.array([corner[0] - sx * u, corner[1] - sy * v])
        margin = w.radius_mm + 3.0
        if abs(xy[0]) > HALF_LENGTH_MM - margin or abs(xy[1]) > HALF_WIDTH_MM - margin:
            continue
        if beyond_baseline_mm(xy, corner) < w.radius_mm + 3.0:
            continue
        cand = flat_at(w.with_placement("unplayed"), xy)
        if placer.clear(cand, min_gap=3.0):
            placer.add(cand)
            return True
    return False


def _place_potted(placer: _Placer, winks: list[WinkSolid]) -> None:
    rng = placer.rng
    z = 2.5
    for w in winks:
        room = max(16.5 - w.radius_mm - 0.5, 0.5)
        xy = rng.uniform(-room, room, 2) * 0.7
        tilt = math.radians(float(rng.uniform(0.5, 4.0)))
        phi = float(rng.uniform(0, 2 * math.pi))
        axis = (math.sin(tilt) * math.cos(phi), math.sin(tilt) * math.sin(phi), math.cos(tilt))
        zc = z + w.thickness_mm / 2 + w.radius_mm * math.sin(tilt)
        placer.add(w.with_pose((xy[0], xy[1], zc), axis).with_placement("potted"))
        z += w.thickness_mm + 2 * w.radius_mm * math.sin(tilt) * 0.5 + 0.2


def _try(placer: _Placer, build: Callable[[np.ndarray], list[WinkSolid] | None]) -> bool:
    """Try a construction at random anchors until it fits."""
    for attempt in range(60):
        anchor = placer.random_play_xy(near_pot=attempt % 3 != 2)
        got = build(anchor)
        if got is None:
            continue
        ids = [w.id for w in got]
        if all(
            placer.clear(w, ignore=ids)
            and placer.pot_clear(w)
            and placer.in_play_area(w.centre[:2], w.radius_mm, 3.0)
            for w in got
        ):
            placer.add(*got)
            return True
    return False


def make_layout(
    rng: np.random.Generator, *, start: bool = False, tip_over_edge: bool = False
) -> Layout:
    """A game in progress (or, with ``start``, the rule 5.2 starting position).

    ``tip_over_edge`` puts a wink off the mat in a game in progress (not in
    the starting position), tipped over the mat's edge: its centre past the
    edge by less than its radius. A scene so made is not the same seed's
    scene without it; without it, every draw is as it always was.
    """
    corners = assign_corners(rng)
    templates = make_templates(rng)
    placer = _Placer(rng, corners)
    layout = Layout(
        corners=corners,
        winks=[],
        pot_material=str(rng.choice(POT_MATERIALS)),
        mat_thickness_mm=round(float(rng.uniform(2.0, 4.0)), 3),
    )
    layout.distractors = make_distractors(rng, layout, on_mat=not start)
    for d in layout.distractors:
        placer.obstacles.append(d.footprint())

    if start:
        for w in templates:
            _place_unplayed(placer, w, corners[w.colour])
        layout.winks = [placer.placed[w.id] for w in templates if w.id in placer.placed]
        return layout

    pool = list(templates)
    order = rng.permutation(len(pool))
    pool = [pool[i] for i in order]

    def take(size: WinkSize | None = None) -> WinkSolid:
        for i, w in enumerate(pool):
            if size is None or w.size is size:
                return pool.pop(i)
        return pool.pop()

    # Potted winks, stacked in the pot.
    n_potted = int(rng.choice([0, 1, 2, 2, 3, 4]))
    _place_potted(placer, [take() for _ in range(n_potted)])

    # Marginal squops: the upper wink leans on the lower's edge.
    for _ in range(int(rng.integers(1, 3))):
        up, low = take(), take()

        def lean_marginal(
            anchor: np.ndarray, up: WinkSolid = up, low: WinkSolid = low
        ) -> list[WinkSolid]:
            lower = flat_at(low, anchor)
            e = _unit(float(rng.uniform(0, 2 * math.pi)))
            return [lower, lean_on(up, lower, e, _marginal_gap(rng, True))]

        if _try(placer, lean_marginal):
            layout.disputable.append(("marginal", (up.id, low.id)))
        else:
            pool.extend([up, low])

    # Marginal gaps: both flat, or the upper one tilted on a third wink.
    for _ in range(int(rng.integers(1, 3))):
        a, b = take(), take()
        tilted = rng.random() < 0.4 and len(pool) > 6
        c = take() if tilted else None

        def gap_pair(
            anchor: np.ndarray, a: WinkSolid = a, b: WinkSolid = b, c: WinkSolid | None = c
        ) -> list[WinkSolid] | None:
            gap = _marginal_gap(rng, False)
            if c is None:
                wa = flat_at(a, anchor)
                e = _unit(float(rng.uniform(0, 2 * math.pi)))
                return [wa, place_at_gap(flat_at(b, anchor), wa, e, gap)]
            base = flat_at(c, anchor)
            e = _unit(float(rng.uniform(0, 2 * math.pi)))
            wa = lean_on(a, base, e, float(rng.uniform(-7.0, -3.0)))
            side = np.array([-e[1], e[0]]) * (1 if rng.random() < 0.5 else -1)
            wb = place_at_gap(flat_at(b, anchor), wa, side, gap)
            if signed_plan_gap(wb, base) < 2.5:
                return None
            return [base, wa, wb]

        if _try(placer, gap_pair):
            layout.disputable.append(("marginal", (a.id, b.id)))
        else:
            pool.extend([w for w in (a, b, c) if w is not None])

    # One wink flat on two, sometimes with a marginal neighbour under its edge.
    if rng.random() < 0.6 and len(pool) >= 4:
        top = take(WinkSize.LARGE)
        b1, b2 = take(), take()
        extra = take() if rng.random() < 0.5 else None

        def bridge(
            anchor: np.ndarray,
            top: WinkSolid = top,
            b1: WinkSolid = b1,
            b2: WinkSolid = b2,
            extra: WinkSolid | None = extra,
        ) -> list[WinkSolid] | None:
            e = _unit(float(rng.uniform(0, 2 * math.pi)))
            span = b1.radius_mm + b2.radius_mm + float(rng.uniform(1.0, 4.0))
            w1 = flat_at(b1, anchor - e * span / 2)
            w2 = flat_at(b2, anchor + e * span / 2)
            z = max(w1.thickness_mm, w2.thickness_mm)
            if extra is not None:
                z = max(z, extra.thickness_mm + 0.05)
            shift = float(rng.uniform(-1.5, 1.5))
            wt = flat_at(top, anchor + e * shift, base_z=z)
            got = [w1, w2, wt]
            if extra is not None:
                side = np.array([-e[1], e[0]]) * (1 if rng.random() < 0.5 else -1)
                squop = bool(rng.random() < 0.5)
                gap = _marginal_gap(rng, squop)
                we = place_at_gap(flat_at(extra, anchor), wt, side, gap)
                if min(signed_plan_gap(we, w1), signed_plan_gap(we, w2)) < 2.5:
                    return None
                got.append(we)
            return got

        if _try(placer, bridge):
            layout.disputable.append(("pile", (top.id, b1.id)))
            if extra is not None:
                layout.disputable.append(("marginal", (top.id, extra.id)))
        else:
            pool.extend([w for w in (top, b1, b2, extra) if w is not None])

    # Ordinary squops: a lean with a deep overlap, sometimes a chain of three.
    for _ in range(int(rng.integers(1, 4))):
        if len(pool) < 6:
            break
        up, low = take(), take()
        third = take() if rng.random() < 0.35 else None

        def deep(
            anchor: np.ndarray,
            up: WinkSolid = up,
            low: WinkSolid = low,
            third: WinkSolid | None = third,
        ) -> list[WinkSolid] | None:
            lower = flat_at(low, anchor)
            e = _unit(float(rng.uniform(0, 2 * math.pi)))
            wu = lean_on(up, lower, e, float(rng.uniform(-9.0, -2.5)))
            got = [lower, wu]
            if third is not None:
                e2 = _unit(math.atan2(e[1], e[0]) + float(rng.uniform(-0.6, 0.6)))
                wt = lean_on(third, wu, e2, float(rng.uniform(-6.0, -2.0)))
                if signed_plan_gap(wt, lower) < 2.5:
                    return None
                got.append(wt)
            return got

        if _try(placer, deep):
            if third is not None:
                layout.disputable.append(("pile", (third.id, up.id)))
        else:
            pool.extend([w for w in (up, low, third) if w is not None])

    # A wink touching the pot base.
    if rng.random() < 0.6 and pool:
        w = take()
        for _ in range(40):
            ang = float(rng.uniform(0, 2 * math.pi))
            dist = POT_BASE_RADIUS_MM + w.radius_mm + 0.03
            cand = flat_at(w, _unit(ang) * dist)
            if placer.clear(cand):
                placer.add(cand)
                break
        else:
            pool.append(w)

    # Off the mat: on the table, or straddling the edge.
    if (rng.random() < 0.55 or tip_over_edge) and pool:
        w = take()
        for _ in range(60):
            straddle = rng.random() < 0.5 or tip_over_edge
            along = float(rng.uniform(-0.8, 0.8))
            long_edge = rng.random() < 0.6
            sign = 1.0 if rng.random() < 0.5 else -1.0
            if straddle:
                out = -float(rng.uniform(0.2, 0.85)) * w.radius_mm
                base_z = 0.0
            else:
                out = w.radius_mm + float(rng.uniform(3.0, 120.0))
                base_z = layout.table_z_mm
            if tip_over_edge:
                out = -out
            if long_edge:
                xy = (along * HALF_LENGTH_MM * 0.8, sign * (HALF_WIDTH_MM + out))
                outward = (0.0, sign)
            else:
                xy = (sign * (HALF_LENGTH_MM + out), along * HALF_WIDTH_MM * 0.5)
                outward = (sign, 0.0)
            if tip_over_edge:
                cand = tipped_over_edge(
                    w.with_placement("off"), xy, outward, out, layout.table_z_mm
                )
            else:
                cand = flat_at(w.with_placement("off"), xy, base_z=base_z)
            if placer.clear(cand):
                placer.add(cand)
                break
        else:
            pool.append(w)

    # Unplayed winks behind their baselines.
    n_unplayed = min(int(rng.integers(0, 7)), len(pool))
    for _ in range(n_unplayed):
        w = take()
        if not _place_unplayed(placer, w, corners[w.colour]):
            pool.append(w)

    # The rest lie free, spread over the mat and clustered near the pot.
    for w in list(pool):
        for _attempt in range(200):
            spot = placer.random_play_xy(near_pot=rng.random() < 0.55)
            cand = flat_at(w, spot)
            if placer.clear(cand, min_gap=3.0) and placer.pot_clear(cand, margin=2.0):
                placer.add(cand)
                pool.remove(w)
                break
    if pool:
        raise RuntimeError(f"could not place {[w.id for w in pool]!r}")
    layout.winks = [placer.placed[w.id] for w in templates]
    return layout


# --------------------------------------------------------------------------
# Distractors
# --------------------------------------------------------------------------


def make_distractors(rng: np.random.Generator, layout: Layout, *, on_mat: bool) -> list[Distractor]:
    """Squidgers (rule 2.2), a score sheet and one hand-sized object."""
    out: list[Distractor] = []
    tz = layout.table_z_mm

    def table_xy(extra: float) -> tuple[float, float]:
        side = int(rng.integers(4))
        if side < 2:
            return (
                float(rng.uniform(-HALF_LENGTH_MM, HALF_LENGTH_MM)),
                (1 if side == 0 else -1) * (HALF_WIDTH_MM + extra + float(rng.uniform(5, 60))),
            )
        return (
            (1 if side == 2 else -1) * (HALF_LENGTH_MM + extra + float(rng.uniform(5, 60))),
            float(rng.uniform(-HALF_WIDTH_MM, HALF_WIDTH_MM) * 0.8),
        )

    squidger_colours = [(40, 40, 40), (30, 30, 120), (200, 200, 200), (120, 80, 40), (60, 110, 60)]
    for _ in range(int(rng.integers(1, 4))):
        dia = float(rng.uniform(25.0, 51.0))
        if on_mat and rng.random() < 0.4:
            xy = (
                float(rng.uniform(-HALF_LENGTH_MM * 0.8, HALF_LENGTH_MM * 0.8)),
                float(rng.choice([-1, 1]) * rng.uniform(250.0, HALF_WIDTH_MM - dia)),
            )
            base = 0.0
        else:
            xy = table_xy(dia / 2)
            base = tz
        colour = squidger_colours[int(rng.integers(len(squidger_colours)))]
        out.append(Distractor("squidger", xy, base, (dia, dia, 4.0), 0.0, colour))
    out.append(
        Distractor(
            "sheet",
            table_xy(110.0),
            tz,
            (210.0, 148.0, 0.2),
            float(rng.uniform(-0.5, 0.5)),
            (235, 238, 240),
        )
    )
    kind = str(rng.choice(["mug", "phone", "pen"]))
    size = {"mug": (82.0, 82.0, 95.0), "phone": (150.0, 72.0, 8.0), "pen": (140.0, 9.0, 9.0)}[kind]
    colour = [(30, 30, 30), (180, 60, 40), (220, 220, 220), (40, 90, 160)][int(rng.integers(4))]
    out.append(
        Distractor(kind, table_xy(size[0] / 2), tz, size, float(rng.uniform(0, math.pi)), colour)
    )
    return _without_overlaps(out)


def make_clutter(rng: np.random.Generator, layout: Layout) -> list[Distractor]:
    """A bare table with things on it: for images that must not be taken for a mat."""
    out = make_distractors(rng, layout, on_mat=False)
    tz = layout.table_z_mm
    colours = [(30, 30, 30), (180, 60, 40), (220, 220, 220), (40, 90, 160), (60, 140, 200)]
    for _ in range(int(rng.integers(5, 10))):
        kind = str(rng.choice(["squidger", "sheet", "mug", "phone", "pen", "book"]))
        size = {
            "squidger": (float(rng.uniform(25, 51)),) * 2 + (4.0,),
            "sheet": (210.0, 148.0, 0.2),
            "mug": (82.0, 82.0, 95.0),
            "phone": (150.0, 72.0, 8.0),
            "pen": (140.0, 9.0, 9.0),
            "book": (240.0, 170.0, 25.0),
        }[kind]
        xy = (float(rng.uniform(-900, 900)), float(rng.uniform(-450, 450)))
        colour = colours[int(rng.integers(len(colours)))]
        if kind == "sheet":
            colour = (235, 238, 240)
        out.append(
            Distractor(
                "box" if kind == "book" else kind,
                xy,
                tz,
                size,
                float(rng.uniform(0, math.pi)),
                colour,
            )
        )
    return _without_overlaps(out)


def _without_overlaps(out: list[Distractor]) -> list[Distractor]:
    """Keep distractors from overlapping each other."""
    kept: list[Distractor] = []
    for d in out:
        if all(d.footprint().distance(k.footprint()) > 5.0 for k in kept):
            kept.append(d)
    return kept
