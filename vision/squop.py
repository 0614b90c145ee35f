"""Squops (rule 8.2) and piles (rule 8.2.2) from detections and the image.

Wink A squops wink B when some part of A is vertically above some part of B:
their plan views overlap, whether or not they touch. For every pair of winks
that might overlap this module

1. decides which wink is on top from image evidence (the two layerings
   rendered and compared with the pixels; the lens where the two image discs
   overlap shows the upper wink's colour; the upper wink's rim is a visible
   edge inside the lower disc while the lower rim is hidden under the upper
   face) -- two winks of one colour stay uncertain;
2. corrects the upper wink's plan position for its height (parallax), using
   the camera pose;
3. measures the signed plan-view separation with shapely (positive gap,
   negative overlap) and compares it with its uncertainty.

A call whose separation lies within ``k_sigma`` standard deviations of zero,
or whose upper wink the image cannot tell, is flagged ``uncertain``: the best
guess is still given, but an umpire should look at it close up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt
import shapely
from scipy.spatial import cKDTree

from calibration.camera import CameraModel
from rules.board import WINK_THICKNESS_MM, Colour, WinkSize
from vision.detections import WinkDetections

FloatArray = npt.NDArray[np.float64]

#: How many standard deviations a separation must clear to be called confidently.
K_SIGMA = 3.0
#: Plan outlines of tilted winks are not exact circles of the nominal diameter,
#: and real winks vary by a few tenths of a millimetre: a floor on the error.
MODEL_SIGMA_MM = 0.15
#: No centre is trusted to better than this, whatever the detector says: on the
#: shared scenes and the sample images the detector's centre errors were a
#: median 3.7 times its reported ``centre_sigma_mm`` (median error 0.6 mm).
CENTRE_SIGMA_FLOOR_MM = 0.5
#: One-sigma error of the height model for a wink lying on others, mm.
Z_SIGMA_MM = 0.7
#: Height of a free wink's top face above the mat, mm (rule 2.1.1 thickness).
FLAT_TOP_Z_MM = WINK_THICKNESS_MM
#: How much higher a wink's top face sits when it leans on one wink, or lies
#: on two or more, than the highest wink beneath it (half a thickness when
#: leaning on an edge, a full one when lying flat on top).
RAISE_ON_ONE_MM = 0.7 * WINK_THICKNESS_MM
RAISE_ON_MANY_MM = 1.0 * WINK_THICKNESS_MM
#: Below this combined evidence the upper wink is not told confidently.
UPPER_CONFIDENCE_MIN = 0.4
#: Pairs further apart than the sum of radii plus this are never candidates:
#: covers parallax of a raised wink in oblique views plus measurement error.
CANDIDATE_MARGIN_MM = 8.0
_RIM_POINTS = 64


# --------------------------------------------------------------------------
# Plan-view geometry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanOverlap:
    """How two discs meet in plan view.

    Parameters
    ----------
    separation_mm : float
        Signed: the gap between the outlines when positive; when negative,
        minus the smallest horizontal shift that would separate them.
    area_mm2 : float
        Area of the lens where the discs overlap (0 when apart).
    """

    separation_mm: float
    area_mm2: float


def disc(centre_mm: Sequence[float], radius_mm: float) -> shapely.Polygon:
    """A plan-view disc as a shapely polygon (256 vertices, area within 0.01 %)."""
    return shapely.Point(float(centre_mm[0]), float(centre_mm[1])).buffer(radius_mm, quad_segs=64)


def plan_overlap(
    centre_a_mm: Sequence[float],
    radius_a_mm: float,
    centre_b_mm: Sequence[float],
    radius_b_mm: float,
) -> PlanOverlap:
    """Signed separation and lens area of two discs in plan view.

    Parameters
    ----------
    centre_a_mm, centre_b_mm : (2,) array_like
        Plan-view centres, mat mm.
    radius_a_mm, radius_b_mm : float
        Radii, mm.

    Returns
    -------
    PlanOverlap
        Separation measured with shapely: the distance between the outlines
        when apart, else the length of the lens along the line of centres
        (the shift that separates them; for one disc inside the other, the
        full ``r_a + r_b - d``).
    """
    a = disc(centre_a_mm, radius_a_mm)
    b = disc(centre_b_mm, radius_b_mm)
    if not a.intersects(b):
        return PlanOverlap(separation_mm=float(a.distance(b)), area_mm2=0.0)
    lens = a.intersection(b)
    ca = np.asarray(centre_a_mm, dtype=float)[:2]
    cb = np.asarray(centre_b_mm, dtype=float)[:2]
    d = float(np.hypot(*(cb - ca)))
    if d <= abs(radius_a_mm - radius_b_mm) or d == 0.0:
        # One inside the other: the lens is the smaller disc.
        return PlanOverlap(separation_mm=d - radius_a_mm - radius_b_mm, area_mm2=float(lens.area))
    u = (cb - ca) / d
    reach = radius_a_mm + radius_b_mm + d
    line = shapely.LineString([ca - reach * u, cb + reach * u])
    depth = float(lens.intersection(line).length)
    return PlanOverlap(separation_mm=-depth, area_mm2=float(lens.area))


def separation_mm(
    centre_a_mm: FloatArray, radius_a_mm: float, centre_b_mm: FloatArray, radius_b_mm: float
) -> float:
    """Fast signed separation of two discs, ``d - r_a - r_b`` (see :func:`plan_overlap`)."""
    return float(np.hypot(*(centre_b_mm - centre_a_mm))) - radius_a_mm - radius_b_mm


def correct_parallax(
    camera: CameraModel, image_xy_px: npt.ArrayLike, z_mm: npt.ArrayLike
) -> FloatArray:
    """Plan-view position of image points that lie at height ``z_mm``.

    Parameters
    ----------
    image_xy_px : (N, 2) array_like
        Image points, e.g. the centres of winks' top faces.
    z_mm : float or (N,) array_like
        Height of each point above the mat.

    Returns
    -------
    mat_xy_mm : (N, 2) ndarray
    """
    return camera.image_to_mat(image_xy_px, z_mm)


def top_z_mm(size: WinkSize | str, level_raise_mm: float = 0.0) -> float:
    """Height of a wink's top face: flat on the mat, plus any raise from winks below."""
    del size  # both sizes share the nominal thickness (rule 2.1.1)
    return FLAT_TOP_Z_MM + level_raise_mm


# --------------------------------------------------------------------------
# Which wink is on top: image evidence
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class UpperEvidence:
    """Image evidence on which of two winks (a, b) is on top.

    Parameters
    ----------
    score : float
        In [-1, 1]: positive says ``a`` is on top, negative ``b``; the
        magnitude is the confidence (0 when nothing could be told).
    colour_score, edge_score, rim_score : float or None
        The parts it combines, None when that cue was not available.
    """

    score: float
    colour_score: float | None = None
    edge_score: float | None = None
    rim_score: float | None = None
    model_score: float | None = None

    @property
    def cues(self) -> str:
        """A short description of the cues used, for the report."""
        parts = []
        for name, value in (
            ("model", self.model_score),
            ("colour", self.colour_score),
            ("edge", self.edge_score),
            ("rim", self.rim_score),
        ):
            if value is not None:
                parts.append(f"{name} {value:+.2f}")
        return ", ".join(parts) if parts else "no image cue"


def _image_rims_px(
    camera: CameraModel, mat_xy_mm: FloatArray, radius_mm: FloatArray, z_mm: FloatArray
) -> FloatArray:
    """Each wink's top rim projected into the image, shape (n, _RIM_POINTS, 2)."""
    n = len(mat_xy_mm)
    if n == 0:
        return np.zeros((0, _RIM_POINTS, 2))
    angles = np.linspace(0.0, 2.0 * math.pi, _RIM_POINTS, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    pts = mat_xy_mm[:, None, :] + radius_mm[:, None, None] * ring[None, :, :]
    z = np.broadcast_to(z_mm[:, None, None], (n, _RIM_POINTS, 1))
    xyz = np.concatenate([pts, z], axis=2).reshape(-1, 3)
    return camera.mat_to_image(xyz).reshape(n, _RIM_POINTS, 2)


def _inside_polygon(poly_px: FloatArray, pts_px: FloatArray) -> FloatArray:
    """Signed distance (px) of points to a convex polygon's edge lines: positive inside.

    For a convex polygon the smallest distance to its edge lines is the
    distance to the outline for inside points (and a lower bound outside).
    """
    if len(pts_px) == 0:
        return np.zeros(0)
    p = poly_px
    q = np.roll(p, -1, axis=0)
    edge = q - p
    length = np.hypot(edge[:, 0], edge[:, 1])
    ok = length > 1e-9
    p, edge, length = p[ok], edge[ok], length[ok]
    normal = np.stack([-edge[:, 1], edge[:, 0]], 1) / length[:, None]
    # Orientation: make normals point inwards.
    area2 = float(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))
    if area2 < 0:
        normal = -normal
    dist = np.einsum("mkd,kd->mk", pts_px[:, None, :] - p[None, :, :], normal)
    return np.asarray(dist.min(axis=1), dtype=float)


def _bilinear(img: FloatArray, pts: FloatArray) -> FloatArray:
    h, w = img.shape[:2]
    x = np.clip(pts[:, 0], 0, w - 1.001)
    y = np.clip(pts[:, 1], 0, h - 1.001)
    x0 = np.floor(x).astype(int)
    y0 = np.floor(y).astype(int)
    fx = x - x0
    fy = y - y0
    return np.asarray(
        img[y0, x0] * (1 - fx) * (1 - fy)
        + img[y0, x0 + 1] * fx * (1 - fy)
        + img[y0 + 1, x0] * (1 - fx) * fy
        + img[y0 + 1, x0 + 1] * fx * fy,
        dtype=float,
    )


def _fill(shape: tuple[int, int], poly_px: FloatArray) -> npt.NDArray[np.uint8]:
    shift = 4  # fillPoly's sub-pixel bits
    mask = np.zeros(shape, np.uint8)
    cv2.fillPoly(mask, [np.round(poly_px * (1 << shift)).astype(np.int32)], 1, cv2.LINE_8, shift)
    return mask


#: Lightness counts half in colour comparisons: shading changes it as much as
#: a different wink colour does.
_LAB_WEIGHTS = np.array([0.5, 1.0, 1.0])


def upper_evidence(
    image_bgr: npt.NDArray[np.uint8],
    rim_a_px: FloatArray,
    rim_b_px: FloatArray,
    *,
    other_rims_px: Sequence[FloatArray] = (),
    colour_a_lab: FloatArray | None = None,
    colour_b_lab: FloatArray | None = None,
    rim_points_a_px: FloatArray | None = None,
    rim_points_b_px: FloatArray | None = None,
    rim_visible_a: float = 1.0,
    rim_visible_b: float = 1.0,
    same_colour: bool = False,
) -> UpperEvidence:
    """Which of two overlapping winks is on top, from the image.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    rim_a_px, rim_b_px : (k, 2) ndarray
        The winks' top rims projected into the image, pixels, densely
        sampled (under a pixel apart).
    other_rims_px : sequence of (k, 2) ndarray
        Rims of other winks nearby: pixels inside them are not used.
    colour_a_lab, colour_b_lab : (3,) ndarray, optional
        The typical Lab colour (OpenCV 8-bit scale) of each wink's colour
        class. When the classes differ these are compared with the lens;
        otherwise each wink's own uncovered part is.
    rim_points_a_px, rim_points_b_px : (m, 2) ndarray, optional
        Rim edge points the detector used in its fits.
    rim_visible_a, rim_visible_b : float
        Fraction of each rim the detector saw.
    same_colour : bool
        The two winks are of one colour. Shading and edges are weak evidence
        then (measured: no better than chance on the shared scenes), so the
        score is capped below :data:`UPPER_CONFIDENCE_MIN` and the call
        stays uncertain.

    Returns
    -------
    UpperEvidence
        Score > 0 when ``a`` is on top, the weighted mean of:

        * model (weight 1): the frame is rendered both ways -- flat discs of
          the two colours over the felt, blurred like the camera -- and the
          render that fits the pixels better wins;
        * colour (weight 1): the lens where the image discs overlap shows
          the upper wink's colour (or its shade, for two winks of one
          colour);
        * edge (weight 0.6, skipped when the two above agree clearly): the
          upper rim is a visible edge inside the lower disc, while the lower
          rim is hidden under the upper face.

        Cues that disagree cut the score to 30%. A rim cue (the detector's
        rim points of each wink inside the other disc) is reported when
        given but not weighed: on the shared scenes it picked the upper wink
        about half the time.
    """
    h, w = image_bgr.shape[:2]
    both = np.vstack([rim_a_px, rim_b_px])
    x0 = max(int(np.floor(both[:, 0].min())) - 3, 0)
    y0 = max(int(np.floor(both[:, 1].min())) - 3, 0)
    x1 = min(int(np.ceil(both[:, 0].max())) + 4, w)
    y1 = min(int(np.ceil(both[:, 1].max())) + 4, h)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return UpperEvidence(score=0.0)
    roi = image_bgr[y0:y1, x0:x1]
    lab = cv2.cvtColor(roi, cv2.COLOR_BGR2LAB).astype(np.float64)
    offset = np.array([x0, y0], dtype=float)
    poly_a = rim_a_px - offset
    poly_b = rim_b_px - offset
    shape = (roi.shape[0], roi.shape[1])
    mask_a = _fill(shape, poly_a)
    mask_b = _fill(shape, poly_b)
    others = np.zeros(shape, np.uint8)
    for rim in other_rims_px:
        others |= _fill(shape, rim - offset)
    kernel = np.ones((3, 3), np.uint8)
    clear = 1 - cv2.dilate(others, kernel)
    inner_a = cv2.erode(mask_a, kernel) & clear
    inner_b = cv2.erode(mask_b, kernel) & clear
    # The lens keeps its rim pixels: a thin lens has no interior at all.
    lens = (mask_a & mask_b & (1 - others)).astype(bool)
    only_a = (inner_a & (1 - cv2.dilate(mask_b, kernel))).astype(bool)
    only_b = (inner_b & (1 - cv2.dilate(mask_a, kernel))).astype(bool)

    ref_a = ref_b = None
    min_separation = 15.0
    if colour_a_lab is not None and colour_b_lab is not None:
        ref_a, ref_b = np.asarray(colour_a_lab, float), np.asarray(colour_b_lab, float)
        if float(np.hypot.reduce((ref_a - ref_b) * _LAB_WEIGHTS)) < 15.0:
            ref_a = ref_b = None  # one colour class: compare the shades instead
    if ref_a is None and only_a.sum() >= 3 and only_b.sum() >= 3:
        ref_a = np.median(lab[only_a], axis=0)
        ref_b = np.median(lab[only_b], axis=0)
        min_separation = 6.0
    separated = (
        ref_a is not None
        and ref_b is not None
        and float(np.hypot.reduce((ref_a - ref_b) * _LAB_WEIGHTS)) >= min_separation
    )

    colour_score: float | None = None
    n_lens = int(lens.sum())
    if n_lens >= 1 and separated and ref_a is not None and ref_b is not None:
        axis = (ref_a - ref_b) * _LAB_WEIGHTS
        norm2 = float(axis @ axis)
        t = (lab[lens] - ref_b) * _LAB_WEIGHTS @ axis / norm2
        # Each lens pixel votes for the nearer colour.
        vote = float(np.mean(np.clip(2.0 * t - 1.0, -1.0, 1.0)))
        strength = min(1.0, n_lens / 3.0) * min(1.0, math.sqrt(norm2) / 25.0)
        colour_score = vote * strength

    model_score: float | None = None
    if separated and ref_a is not None and ref_b is not None:
        model_score = _layer_model_score(lab, poly_a, poly_b, others, ref_a, ref_b)

    edge_score: float | None = None
    # The edge cue is the weakest: skip it when the colour cues already
    # agree clearly, and for one colour, where it is no better than chance.
    settled = (
        model_score is not None
        and colour_score is not None
        and abs(model_score + colour_score) >= 1.2
        and model_score * colour_score > 0
    )
    if not settled and not same_colour:
        edge_score = _edge_score(lab, poly_a, poly_b, mask_a, mask_b, clear)

    rim_score: float | None = None
    if rim_points_a_px is not None and rim_points_b_px is not None:
        frac_a = _rim_points_inside(poly_a, poly_b, rim_points_a_px - offset, rim_visible_a)
        frac_b = _rim_points_inside(poly_b, poly_a, rim_points_b_px - offset, rim_visible_b)
        if frac_a is not None and frac_b is not None:
            rim_score = float(np.clip(frac_a - frac_b, -1.0, 1.0))

    weighted = [
        (s, wgt)
        # The rim cue is reported but not weighed: against the shared scenes it
        # picked the upper wink in only about half of the pairs (the detector's
        # rim sampling drops points for reasons other than cover).
        for s, wgt in ((model_score, MODEL_WEIGHT), (colour_score, 1.0), (edge_score, 0.6))
        if s is not None
    ]
    if not weighted:
        return UpperEvidence(score=0.0)
    total = sum(wgt for _, wgt in weighted)
    score = sum(s * wgt for s, wgt in weighted) / total
    # Cues that disagree leave little confidence.
    signs = {np.sign(s) for s, _ in weighted if abs(s) > 0.2}
    if len(signs) > 1:
        score *= 0.3
    if same_colour:
        cap = 0.8 * UPPER_CONFIDENCE_MIN
        score = float(np.clip(score, -cap, cap))
    return UpperEvidence(
        score=float(np.clip(score, -1.0, 1.0)),
        colour_score=colour_score,
        edge_score=edge_score,
        rim_score=rim_score,
        model_score=model_score,
    )


#: Weight of the layered-render cue against the lens colour vote (1.0).
MODEL_WEIGHT = 1.0
#: Camera blur assumed when rendering the two hypotheses, pixels (one sigma).
RENDER_BLUR_PX = 0.8


def _edge_score(
    lab: FloatArray,
    poly_a: FloatArray,
    poly_b: FloatArray,
    mask_a: npt.NDArray[np.uint8],
    mask_b: npt.NDArray[np.uint8],
    clear: npt.NDArray[np.uint8],
) -> float | None:
    """Gradient on a's rim inside b against b's rim inside a: positive for a on top."""
    grad = np.zeros(lab.shape[:2])
    for c in range(3):
        gx = cv2.Sobel(lab[:, :, c], cv2.CV_64F, 1, 0, ksize=3)
        gy = cv2.Sobel(lab[:, :, c], cv2.CV_64F, 0, 1, ksize=3)
        grad += np.hypot(gx, gy) * _LAB_WEIGHTS[c]
    # Rim samples well inside the other disc, away from where the rims
    # cross, and not under a third wink: depth inside a disc from its mask's
    # distance transform.
    depth_a = cv2.distanceTransform(mask_a, cv2.DIST_L2, 3) * clear
    depth_b = cv2.distanceTransform(mask_b, cv2.DIST_L2, 3) * clear
    a_in_b = poly_a[_bilinear(depth_b, poly_a) > 1.0]
    b_in_a = poly_b[_bilinear(depth_a, poly_b) > 1.0]
    if len(a_in_b) >= 3 and len(b_in_a) >= 3:
        g_a = float(np.mean(_bilinear(grad, a_in_b)))
        g_b = float(np.mean(_bilinear(grad, b_in_a)))
        if g_a + g_b > 1e-6:
            return (g_a - g_b) / (g_a + g_b)
    return None


def _layer_model_score(
    lab: FloatArray,
    poly_a: FloatArray,
    poly_b: FloatArray,
    others: npt.NDArray[np.uint8],
    colour_a: FloatArray,
    colour_b: FloatArray,
) -> float | None:
    """Render "a over b" and "b over a" and ask which matches the ROI better.

    Each wink is a flat disc of its colour with sub-pixel coverage (4x
    supersampled), over the felt (the median of the ROI outside both discs),
    blurred like a camera. Only pixels where the two renders differ can tell
    them apart; the score is the normalised difference of their squared
    errors there, in [-1, 1], positive for ``a`` on top.
    """
    h, w = lab.shape[:2]
    up = 4
    cover = []
    for poly in (poly_a, poly_b):
        hi = np.zeros((h * up, w * up), np.uint8)
        pts = np.round((poly + 0.5) * up * 16 - 0.5 * 16).astype(np.int32)
        cv2.fillPoly(hi, [pts], 255, cv2.LINE_8, 4)
        cover.append(cv2.resize(hi, (w, h), interpolation=cv2.INTER_AREA).astype(float) / 255.0)
    cov_a, cov_b = cover
    free = (cov_a == 0) & (cov_b == 0) & (others == 0)
    if free.sum() < 5:
        return None
    felt = np.median(lab[free], axis=0)
    # The two renders share everything but the lens: "a over b" is
    # common + both * a, "b over a" is common + both * b, and the blur is
    # linear, so blur each part once.
    weights = _LAB_WEIGHTS.astype(np.float32)
    col_a = (colour_a * weights).astype(np.float32)
    col_b = (colour_b * weights).astype(np.float32)
    col_f = (felt * weights).astype(np.float32)
    only_a = (cov_a * (1 - cov_b)).astype(np.float32)
    only_b = (cov_b * (1 - cov_a)).astype(np.float32)
    neither = ((1 - cov_a) * (1 - cov_b)).astype(np.float32)
    both = cv2.GaussianBlur((cov_a * cov_b).astype(np.float32), (0, 0), RENDER_BLUR_PX)
    common = only_a[:, :, None] * col_a + only_b[:, :, None] * col_b + neither[:, :, None] * col_f
    common = cv2.GaussianBlur(common, (0, 0), RENDER_BLUR_PX)
    step = float(np.linalg.norm(col_a - col_b))
    usable = (both * step > 4.0) & (others == 0)
    if not usable.any():
        return None
    residual = (lab.astype(np.float32) * weights)[usable] - common[usable]
    lens = both[usable][:, None]
    err_a = float(((residual - lens * col_a) ** 2).sum())
    err_b = float(((residual - lens * col_b) ** 2).sum())
    if err_a + err_b <= 1e-9:
        return None
    strength = min(1.0, float(both[usable].sum()) * step / 60.0)
    return (err_b - err_a) / (err_a + err_b) * strength


def _rim_points_inside(
    own_poly: FloatArray, other_poly: FloatArray, rim_points: FloatArray, visible: float
) -> float | None:
    """How much of the own rim arc inside the other disc the detector saw, in [0, 1]."""
    if len(rim_points) < 4:
        return None
    arc_fraction = float(np.mean(_inside_polygon(other_poly, own_poly) > 0.5))
    if arc_fraction < 0.05:
        return None
    expected = arc_fraction * len(rim_points) / max(visible, 0.05)
    seen = float(np.sum(_inside_polygon(other_poly, rim_points) > 0.5))
    return min(1.0, seen / max(expected, 1.0))


def colour_references_lab(
    image_bgr: npt.NDArray[np.uint8], image_xy_px: FloatArray, colours: Sequence[Colour]
) -> dict[Colour, FloatArray]:
    """Typical Lab colour of each colour class in this frame.

    The median over the winks of the class of the pixels around each
    wink's centre: robust to a few winks being partly covered or shaded.
    """
    h, w = image_bgr.shape[:2]
    xi = np.round(image_xy_px[:, 0]).astype(int)
    yi = np.round(image_xy_px[:, 1]).astype(int)
    ok = (xi >= 1) & (xi < w - 1) & (yi >= 1) & (yi < h - 1)
    if not ok.any():
        return {}
    offsets = np.array([-1, 0, 1])
    rows = (yi[ok][:, None, None] + offsets[None, :, None]).repeat(3, axis=2)
    cols = (xi[ok][:, None, None] + offsets[None, None, :]).repeat(3, axis=1)
    patches = image_bgr[rows, cols]  # (m, 3, 3, 3): one 3x3 patch per wink
    lab = cv2.cvtColor(patches.reshape(-1, 3, 3), cv2.COLOR_BGR2LAB).astype(float)
    per_wink = np.median(lab.reshape(-1, 9, 3), axis=1)
    kept = [c for c, k in zip(colours, ok, strict=True) if k]
    out: dict[Colour, FloatArray] = {}
    for colour in set(kept):
        sel = np.array([c == colour for c in kept])
        out[colour] = np.median(per_wink[sel], axis=0)
    return out


# --------------------------------------------------------------------------
# Calls for all pairs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SquopCall:
    """The verdict on one pair of winks (detection indices).

    Parameters
    ----------
    upper, lower : int
        Detection indices; for a pair called apart, ``upper`` is the one the
        evidence put higher (meaningless when ``upper_confidence`` is 0).
    separation_mm : float
        Signed plan-view separation after parallax correction: negative is an
        overlap (a squop), positive a gap.
    sigma_mm : float
        One-sigma uncertainty of ``separation_mm``.
    squop : bool
        The best call: whether ``upper`` squops ``lower``.
    upper_confidence : float
        In [0, 1], how clearly the image showed which wink is on top.
    uncertain : bool
        True when the call could be wrong within the measurement's
        uncertainty; an umpire should review it close up.
    reason : str
        Why, in words.
    """

    upper: int
    lower: int
    separation_mm: float
    sigma_mm: float
    squop: bool
    upper_confidence: float
    uncertain: bool
    reason: str

    @property
    def margin_mm(self) -> float:
        """How far the separation clears its uncertainty band (negative: inside it)."""
        return abs(self.separation_mm) - K_SIGMA * self.sigma_mm


@dataclass(frozen=True)
class SquopAnalysis:
    """Squop calls for a frame, with the parallax-corrected positions.

    Parameters
    ----------
    calls : tuple of SquopCall
        One per candidate pair (winks close enough to possibly overlap).
    mat_xy_mm : (n, 2) ndarray
        Plan-view centres corrected for each wink's height.
    top_z_mm : (n,) ndarray
        Height of each wink's top face used for that correction.
    level : (n,) ndarray of int
        0 for a wink on the mat, 1 for one on a wink, and so on.
    """

    calls: tuple[SquopCall, ...]
    mat_xy_mm: FloatArray
    top_z_mm: FloatArray
    level: npt.NDArray[np.int64]
    evidence: dict[tuple[int, int], UpperEvidence] = field(default_factory=dict)

    def squops(self) -> list[tuple[int, int]]:
        """(upper, lower) index pairs called as squops."""
        return [(c.upper, c.lower) for c in self.calls if c.squop]


def pile_ids(n: int, squop_pairs: Sequence[tuple[int, int]]) -> npt.NDArray[np.int64]:
    """Rule 8.2.2 pile id (1, 2, ...) per wink joined by squops; 0 for winks in no pile.

    Parameters
    ----------
    n : int
        Number of winks.
    squop_pairs : sequence of (upper, lower) int pairs
    """
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for up, low in squop_pairs:
        parent[find(up)] = find(low)
    members: dict[int, int] = {}
    for i in range(n):
        members[find(i)] = members.get(find(i), 0) + 1
    out = np.zeros(n, dtype=np.int64)
    labels: dict[int, int] = {}
    for i in range(n):
        r = find(i)
        if members[r] >= 2:
            out[i] = labels.setdefault(r, len(labels) + 1)
    return out


def nominal_radius_mm(sizes: npt.NDArray[np.object_]) -> FloatArray:
    """Nominal radius of each wink from its size class, mm."""
    return np.array([WinkSize(s).diameter_mm / 2.0 for s in sizes], dtype=float)


def analyse_squops(
    detections: WinkDetections,
    camera: CameraModel,
    image_bgr: npt.NDArray[np.uint8] | None,
    *,
    k_sigma: float = K_SIGMA,
    exclude: npt.NDArray[np.bool_] | None = None,
    extra_sigma_mm: npt.ArrayLike | None = None,
) -> SquopAnalysis:
    """Call every squop among the detections.

    Parameters
    ----------
    detections : WinkDetections
    camera : CameraModel
    image_bgr : (H, W, 3) uint8 ndarray or None
        The frame, for the evidence on which wink is on top. Without it every
        overlap's upper wink is uncertain.
    k_sigma : float
        Separations within ``k_sigma`` standard deviations of zero are flagged.
    exclude : (n,) bool ndarray, optional
        Winks taking no part (e.g. potted ones).
    extra_sigma_mm : (n,) array_like, optional
        More uncertainty of each wink's outline, added in quadrature: e.g. a
        size class in doubt (a radius 3 mm off).

    Returns
    -------
    SquopAnalysis
    """
    n = len(detections)
    radius = nominal_radius_mm(detections.size)
    flat_z = np.array([top_z_mm(s) for s in detections.size], dtype=float)
    # The detector's own height guesses (``detections.z_mm``) are not used:
    # on the shared scenes and samples a third of the winks it put high were
    # lower winks. Heights come from the squop calls below.
    image_xy = np.asarray(detections.image_xy_px, dtype=float)
    if n == 0:
        return SquopAnalysis(
            calls=(), mat_xy_mm=np.zeros((0, 2)), top_z_mm=flat_z, level=np.zeros(0, np.int64)
        )
    plan_flat = correct_parallax(camera, image_xy, flat_z)
    # How far the plan position moves per mm of height: the parallax lever.
    plan_up = correct_parallax(camera, image_xy, flat_z + 1.0)
    lever = np.hypot(*(plan_up - plan_flat).T)
    sigma_centre = np.hypot(
        np.maximum(np.asarray(detections.centre_sigma_mm, dtype=float), CENTRE_SIGMA_FLOOR_MM),
        MODEL_SIGMA_MM,
    )
    if extra_sigma_mm is not None:
        sigma_centre = np.hypot(sigma_centre, np.asarray(extra_sigma_mm, dtype=float))
    active = np.ones(n, bool) if exclude is None else ~np.asarray(exclude, bool)

    tree = cKDTree(plan_flat)
    pairs = sorted(
        (i, j)
        for i, j in tree.query_pairs(2 * radius.max() + CANDIDATE_MARGIN_MM)
        if active[i]
        and active[j]
        and np.hypot(*(plan_flat[i] - plan_flat[j])) < radius[i] + radius[j] + CANDIDATE_MARGIN_MM
    )
    rims_flat = _image_rims_px(camera, plan_flat, radius, flat_z)
    refs = (
        colour_references_lab(image_bgr, image_xy, list(detections.colour))
        if image_bgr is not None
        else {}
    )
    rim_extent = np.abs(rims_flat - image_xy[:, None, :]).max(axis=(1, 2))
    evidence: dict[tuple[int, int], UpperEvidence] = {}

    def evidence_for(i: int, j: int) -> UpperEvidence:
        if (i, j) not in evidence:
            if image_bgr is None:
                evidence[(i, j)] = UpperEvidence(score=0.0)
            else:
                reach = np.hypot(*(image_xy - image_xy[i]).T) - rim_extent
                nearby = [
                    rims_flat[k]
                    for k in np.flatnonzero(reach < rim_extent[i] + rim_extent[j] + 2)
                    if k not in (i, j) and active[k]
                ]
                evidence[(i, j)] = upper_evidence(
                    image_bgr,
                    rims_flat[i],
                    rims_flat[j],
                    other_rims_px=nearby,
                    colour_a_lab=refs.get(detections.colour[i]),
                    colour_b_lab=refs.get(detections.colour[j]),
                    same_colour=detections.colour[i] is detections.colour[j],
                )
        return evidence[(i, j)]

    # Pass 1: with every wink flat, which pairs could overlap under either
    # hypothesis of which is on top, and which is on top.
    plan_raised = correct_parallax(camera, image_xy, flat_z + RAISE_ON_ONE_MM)
    above: dict[tuple[int, int], float] = {}  # (upper, lower) -> confidence
    for i, j in pairs:
        sep_i_up = separation_mm(plan_raised[i], radius[i], plan_flat[j], radius[j])
        sep_j_up = separation_mm(plan_flat[i], radius[i], plan_raised[j], radius[j])
        sigma = math.hypot(sigma_centre[i], sigma_centre[j])
        if min(sep_i_up, sep_j_up) > k_sigma * sigma + 0.5:
            continue
        ev = evidence_for(i, j)
        # Only a wink that really lies on another is raised: when the pair
        # overlaps whichever is on top, or the image clearly shows one on top
        # of the other. A weak cue on a near-miss must not lift a flat wink.
        overlaps_anyway = max(sep_i_up, sep_j_up) < 0.0
        clearly_shown = abs(ev.score) >= UPPER_CONFIDENCE_MIN and min(sep_i_up, sep_j_up) < 0.0
        if overlaps_anyway or clearly_shown:
            if ev.score >= 0:
                above[(i, j)] = ev.score
            else:
                above[(j, i)] = -ev.score

    # Heights: each wink's level is the longest chain of winks beneath it.
    level = _levels(n, above)
    n_below = np.zeros(n, dtype=int)
    for up, _low in above:
        n_below[up] += 1
    z_final = flat_z.copy()
    for i in np.argsort(level, kind="stable"):
        lowers = [low for (up, low) in above if up == i]
        if lowers and level[i] > 0:
            base = max(z_final[low] for low in lowers)
            z_final[i] = base + (RAISE_ON_MANY_MM if len(lowers) >= 2 else RAISE_ON_ONE_MM)
    plan_final = correct_parallax(camera, image_xy, z_final)

    # Pass 2: final separations with corrected positions.
    calls = []
    for i, j in pairs:
        sep = separation_mm(plan_final[i], radius[i], plan_final[j], radius[j])
        raised = [k for k in (i, j) if level[k] > 0]
        z_sigma = np.array([lever[k] * Z_SIGMA_MM for k in raised]) if raised else np.zeros(1)
        sigma = float(np.sqrt(sigma_centre[i] ** 2 + sigma_centre[j] ** 2 + np.sum(z_sigma**2)))
        if (i, j) in above:
            up, low, conf = i, j, above[(i, j)]
        elif (j, i) in above:
            up, low, conf = j, i, above[(j, i)]
        else:
            if sep <= k_sigma * sigma:
                ev = evidence_for(i, j)
                up, low, conf = (i, j, ev.score) if ev.score >= 0 else (j, i, -ev.score)
            else:
                up, low, conf = (i, j, 0.0) if level[i] >= level[j] else (j, i, 0.0)
        # Height ordering beats a weak image cue: a wink resting on others is on top.
        if level[low] > level[up] and conf < UPPER_CONFIDENCE_MIN:
            up, low = low, up
        squop = sep < 0.0
        near = abs(sep) < k_sigma * sigma
        unclear_upper = squop and conf < UPPER_CONFIDENCE_MIN
        uncertain = near or unclear_upper
        kind = "overlap" if squop else "gap"
        if near:
            reason = (
                f"{kind} {abs(sep):.2f} mm is within {k_sigma:g} sigma "
                f"({k_sigma * sigma:.2f} mm) of touching"
            )
        else:
            reason = f"{kind} {abs(sep):.1f} mm"
        if unclear_upper:
            reason += f", and the image does not show clearly which wink is on top ({conf:.2f})"
        calls.append(
            SquopCall(
                upper=int(up),
                lower=int(low),
                separation_mm=float(sep),
                sigma_mm=sigma,
                squop=bool(squop),
                upper_confidence=float(conf),
                uncertain=uncertain,
                reason=reason,
            )
        )
    return SquopAnalysis(
        calls=tuple(calls),
        mat_xy_mm=plan_final,
        top_z_mm=z_final,
        level=level,
        evidence=evidence,
    )


def _levels(n: int, above: dict[tuple[int, int], float]) -> npt.NDArray[np.int64]:
    """Longest chain of winks beneath each wink.

    ``above`` maps (upper, lower) to the confidence of that call. A cycle
    (A over B over C over A) cannot be real: its weakest call is dropped from
    ``above`` (in place) until none is left.
    """
    while True:
        cycle = _find_cycle(n, list(above))
        if not cycle:
            break
        del above[min(cycle, key=lambda e: above[e])]
    level = np.zeros(n, dtype=np.int64)
    for _ in range(n):
        changed = False
        for up, low in above:
            if level[up] < level[low] + 1:
                level[up] = level[low] + 1
                changed = True
        if not changed:
            break
    return level


def _find_cycle(n: int, edges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The edges of one directed cycle, or [] when there is none."""
    succ: dict[int, list[int]] = {}
    for up, low in edges:
        succ.setdefault(up, []).append(low)
    state = [0] * n  # 0 new, 1 on the stack, 2 done
    stack: list[int] = []

    def visit(v: int) -> list[tuple[int, int]]:
        state[v] = 1
        stack.append(v)
        for w in succ.get(v, []):
            if state[w] == 1:
                path = stack[stack.index(w) :] + [w]
                return list(zip(path[:-1], path[1:], strict=True))
            if state[w] == 0:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return []

    for v in range(n):
        if state[v] == 0:
            found = visit(v)
            if found:
                return found
    return []
