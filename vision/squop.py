"""Squops (rule 8.2) and piles (rule 8.2.2) from detections and the image.

Wink A squops wink B when some part of A is vertically above some part of B:
their plan views overlap, whether or not they touch. For every pair of winks
that might overlap this module

1. decides which wink is on top from image evidence (the two layerings
   fitted to the pixels, each outline free to move by the detector's error
   and to take either size; the lens where the two image discs
   overlap shows the upper wink's colour; the upper wink's rim is a visible
   edge inside the lower disc while the lower rim is hidden under the upper
   face) -- for two winks of one colour the upper rim's unbroken arc across
   the lower face tells: confidently when the arc is strong (it was right on
   every such pair measured), else as a best guess flagged uncertain, from
   the faces' shading when the arc is weak;
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import shapely
from scipy.spatial import cKDTree

from calibration.camera import CameraModel
from rules.board import WINK_THICKNESS_MM, Colour, WinkSize
from vision.colour import column_medians
from vision.detections import WinkDetections

FloatArray = npt.NDArray[np.float64]

#: How many standard deviations a separation must clear to be called confidently.
K_SIGMA = 3.0
#: Plan outlines of tilted winks are not exact circles of the nominal diameter,
#: and real winks vary by a few tenths of a millimetre: a floor on the error.
MODEL_SIGMA_MM = 0.15
#: No centre is trusted to better than this, whatever the detector says: on the
#: shared scenes even free winks seen whole err by a median of 0.5 mm. (The
#: detector's own sigma is already scaled for its rim points erring together:
#: see :data:`vision.detect.RIM_SIGMA_FACTOR`.)
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
#: A pair of one colour whose arc cue (see :func:`_arc_score`) reaches this
#: is oriented by it rather than by the other calls' heights. Measured with
#: ground-truth-derived detections on the shared scenes, samples and generated
#: seeds 1100-1137 (2 noise draws): clear same-colour pairs in piles with the
#: right upper wink 44 of 68 before the arc cue, 41 with it but not told, 54
#: told at 0.1 (53 at 0.25); the pair stays uncertain either way.
SAME_COLOUR_TOLD_MIN = 0.1
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
    # math.hypot on the two floats: numpy's per-call overhead was most of
    # the cost over a frame's thousand-odd calls.
    dx = float(centre_b_mm[0]) - float(centre_a_mm[0])
    dy = float(centre_b_mm[1]) - float(centre_a_mm[1])
    return math.hypot(dx, dy) - float(radius_a_mm) - float(radius_b_mm)


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
    colour_score, edge_score, rim_score, model_score, arc_score : float or None
        The parts it combines, None when that cue was not available or not
        needed.
    model_llr : float or None
        The layering fit's log-likelihood ratio behind ``model_score``.
    """

    score: float
    colour_score: float | None = None
    edge_score: float | None = None
    rim_score: float | None = None
    model_score: float | None = None
    model_llr: float | None = None
    arc_score: float | None = None
    faces_score: float | None = None

    @property
    def cues(self) -> str:
        """A short description of the cues used, for the report."""
        parts = []
        for name, value in (
            ("model", self.model_score),
            ("colour", self.colour_score),
            ("edge", self.edge_score),
            ("rim", self.rim_score),
            ("arc", self.arc_score),
            ("faces", self.faces_score),
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


#: The image around two winks: Lab ROI (h, w, 3), its offset (x, y) in the
#: frame, the mask of other winks over it, and the pixels clear of them.
PairRoi = tuple[FloatArray, FloatArray, npt.NDArray[Any], npt.NDArray[Any]]


def _pair_roi(
    image_bgr: npt.NDArray[np.uint8],
    rim_a_px: FloatArray,
    rim_b_px: FloatArray,
    other_rims_px: Sequence[FloatArray],
) -> PairRoi | None:
    """The image around two winks: Lab ROI, its offset (x, y), the other
    winks' mask, and the pixels clear of them (that mask dilated, inverted)."""
    h, w = image_bgr.shape[:2]
    both = np.vstack([rim_a_px, rim_b_px])
    x0 = max(int(np.floor(both[:, 0].min())) - 3, 0)
    y0 = max(int(np.floor(both[:, 1].min())) - 3, 0)
    x1 = min(int(np.ceil(both[:, 0].max())) + 4, w)
    y1 = min(int(np.ceil(both[:, 1].max())) + 4, h)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    lab = cv2.cvtColor(image_bgr[y0:y1, x0:x1], cv2.COLOR_BGR2LAB).astype(np.float64)
    offset = np.array([x0, y0], dtype=float)
    shape = (y1 - y0, x1 - x0)
    others = np.zeros(shape, np.uint8)
    for rim in other_rims_px:
        others |= _fill(shape, rim - offset)
    clear = 1 - cv2.dilate(others, np.ones((3, 3), np.uint8))
    return lab, offset, others, clear


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
    scale_range_a: tuple[float, float] = (1.0, 1.0),
    scale_range_b: tuple[float, float] = (1.0, 1.0),
    model_llr: float | None = None,
    pair_roi: PairRoi | None = None,
    faces_fit: bool = True,
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
    scale_range_a, scale_range_b : (2,) tuple of float
        How far each outline may be scaled in the layering fit (see
        :func:`layering_log_likelihood_ratios`).
    model_llr : float, optional
        The layering fit's result when already computed (in a batch).
    pair_roi : PairRoi, optional
        The image around the pair when already cut out.
    faces_fit : bool
        Whether, for one colour, a weak arc cue may give way to the faces'
        shading fit (:func:`_faces_score`; not for oblique views, see
        :data:`FACES_MAX_LEVER`).
    same_colour : bool
        The two winks are of one colour. Only the arc cue is weighed then,
        or when it is weaker than :data:`ARC_WEAK` the faces' shading fit
        (:func:`_faces_score`, never over :data:`ARC_WEAK`). An arc cue of
        :data:`UPPER_CONFIDENCE_MIN` or more makes a confident call: on the
        development sets (ground-truth-derived detections, shared scenes,
        samples, seeds 1100-1131 and 301-406, 2 noise draws) all 61 clear
        same-colour pairs with such a cue were right; weaker ones stay
        uncertain, a best guess for the umpire to confirm.

    Returns
    -------
    UpperEvidence
        Score > 0 when ``a`` is on top, the weighted mean of:

        * model (weight 1): both layerings are fitted to the pixels (see
          :func:`layering_log_likelihood_ratios`), each wink's outline free
          to move a pixel or two and to take either size, and the better fit
          wins: ``tanh(llr / FIT_LLR_SCALE)``. Not run for two winks of one
          colour, nor when the lens colour alone is decisive
          (:data:`COLOUR_DECISIVE`);
        * colour (weight 1): the lens where the image discs overlap shows
          the upper wink's colour (for two winks of one colour its shade is
          reported but not weighed);
        * arc (weight 1, one colour only, see :func:`_arc_score`): the
          upper wink's rim runs unbroken across the lower wink's face; when
          weaker than :data:`ARC_WEAK`, replaced on overhead views by the
          faces' shading fit (:func:`_faces_score`);
        * edge (weight 0.6, skipped when the two above agree clearly): the
          upper rim is a visible edge inside the lower disc, while the lower
          rim is hidden under the upper face.

        Cues that disagree cut the score to 30%. A rim cue (the detector's
        rim points of each wink inside the other disc) is reported when
        given but not weighed: on the shared scenes it picked the upper wink
        about half the time.
    """
    cues = _cheap_cues(
        image_bgr,
        rim_a_px,
        rim_b_px,
        other_rims_px=other_rims_px,
        colour_a_lab=colour_a_lab,
        colour_b_lab=colour_b_lab,
        rim_points_a_px=rim_points_a_px,
        rim_points_b_px=rim_points_b_px,
        rim_visible_a=rim_visible_a,
        rim_visible_b=rim_visible_b,
        same_colour=same_colour,
        pair_roi=pair_roi,
        faces_fit=faces_fit,
    )
    if cues is None:
        return UpperEvidence(score=0.0)
    if model_llr is None and cues.needs_fit:
        centres, invs = _ellipses_through(np.stack([rim_a_px, rim_b_px]))
        pixels = _pair_pixels(
            cues.roi,
            (centres[0], invs[0]),
            (centres[1], invs[1]),
            scale_range_a,
            scale_range_b,
        )
        if pixels is not None:
            model_llr = float(layering_log_likelihood_ratios([pixels])[0])
    return _combined_evidence(cues, model_llr)


#: A lens vote at least this strong settles two colours without the layering
#: fit (and without the edge cue); the call is then confident on the vote
#: alone, so this is not below :data:`UPPER_CONFIDENCE_MIN`. Measured on the
#: clear two-colour pairs of the shared scenes, samples and generated seeds
#: 1100-1155: with ground-truth-derived detections all 210 votes over 0.3
#: picked the upper wink; with the detector's, all 191 over 0.2 (of 218
#: pairs; the wrong votes were all under 0.2). It saves the fit on about two
#: thirds of the pairs; the benchmark's squop figures on those sets were the
#: same as with 0.5 and with the fit always run (one clear pair fewer
#: flagged uncertain).
COLOUR_DECISIVE = UPPER_CONFIDENCE_MIN


@dataclass(frozen=True, eq=False)
class _Cues:
    """The cheap cues of one pair and the pixels they came from (internal).

    ``needs_fit``: whether the layering fit should run (two colours told
    apart, and the lens vote not decisive on its own). ``felt_factor``
    scales the fit's score down for winks of nearly the felt's colour.
    """

    roi: PairRoi
    poly_a: FloatArray
    poly_b: FloatArray
    mask_a: npt.NDArray[np.uint8]
    mask_b: npt.NDArray[np.uint8]
    separated: bool
    same_colour: bool
    colour_score: float | None
    arc_score: float | None
    faces_score: float | None
    rim_score: float | None
    felt_factor: float

    @property
    def needs_fit(self) -> bool:
        return (
            self.separated
            and not self.same_colour
            and (self.colour_score is None or abs(self.colour_score) < COLOUR_DECISIVE)
        )


def _cheap_cues(
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
    pair_roi: PairRoi | None = None,
    faces_fit: bool = True,
) -> _Cues | None:
    """Everything of :func:`upper_evidence` but the layering fit and the edge cue.

    ``faces_fit``: whether a weak arc cue may give way to the faces' shading
    fit (see :data:`FACES_MAX_LEVER`).
    """
    if pair_roi is None:
        pair_roi = _pair_roi(image_bgr, rim_a_px, rim_b_px, other_rims_px)
    if pair_roi is None:
        return None
    lab, offset, others, clear = pair_roi
    poly_a = rim_a_px - offset
    poly_b = rim_b_px - offset
    shape = (lab.shape[0], lab.shape[1])
    mask_a = _fill(shape, poly_a)
    mask_b = _fill(shape, poly_b)
    kernel = np.ones((3, 3), np.uint8)
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
        ref_a = column_medians(lab[only_a])
        ref_b = column_medians(lab[only_b])
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

    decisive = colour_score is not None and abs(colour_score) >= COLOUR_DECISIVE
    felt_factor = 1.0
    if separated and not same_colour and not decisive and ref_a is not None and ref_b is not None:
        # A wink of nearly the felt's colour (green on green felt) hardly
        # shows its outline: which disc is whole is then told by shading
        # and noise, so the fit counts for less.
        outside = (clear & (1 - cv2.dilate(mask_a | mask_b, kernel))).astype(bool)
        if outside.sum() >= 5:
            felt = column_medians(lab[outside])
            contrast = min(
                float(np.hypot.reduce((ref_a - felt) * _LAB_WEIGHTS)),
                float(np.hypot.reduce((ref_b - felt) * _LAB_WEIGHTS)),
            )
            felt_factor = min(1.0, contrast / FELT_CONTRAST_FULL)

    arc_score: float | None = None
    faces_score: float | None = None
    if same_colour:
        arc_score = _arc_score(lab[:, :, 0], poly_a, poly_b, mask_a, mask_b, clear)
        if faces_fit and (arc_score is None or abs(arc_score) < ARC_WEAK):
            faces_score = _faces_score(lab[:, :, 0], poly_a, poly_b, clear)

    rim_score: float | None = None
    if rim_points_a_px is not None and rim_points_b_px is not None:
        frac_a = _rim_points_inside(poly_a, poly_b, rim_points_a_px - offset, rim_visible_a)
        frac_b = _rim_points_inside(poly_b, poly_a, rim_points_b_px - offset, rim_visible_b)
        if frac_a is not None and frac_b is not None:
            rim_score = float(np.clip(frac_a - frac_b, -1.0, 1.0))
    return _Cues(
        roi=pair_roi,
        poly_a=poly_a,
        poly_b=poly_b,
        mask_a=mask_a,
        mask_b=mask_b,
        separated=separated,
        same_colour=same_colour,
        colour_score=colour_score,
        arc_score=arc_score,
        faces_score=faces_score,
        rim_score=rim_score,
        felt_factor=felt_factor,
    )


def _combined_evidence(cues: _Cues, model_llr: float | None) -> UpperEvidence:
    """The cues weighed together (see :func:`upper_evidence`), with the fit's result if any."""
    same_colour = cues.same_colour
    colour_score = cues.colour_score
    model_score: float | None = None
    if cues.separated and model_llr is not None and not same_colour:
        model_score = math.tanh(model_llr / FIT_LLR_SCALE) * cues.felt_factor

    edge_score: float | None = None
    # The edge cue is the weakest: skip it when the colour cues already
    # agree clearly or the lens vote is decisive on its own, and for one
    # colour, where it is no better than chance.
    settled = (
        model_score is not None
        and colour_score is not None
        and abs(model_score + colour_score) >= 1.2
        and model_score * colour_score > 0
    ) or (model_score is None and colour_score is not None and not cues.needs_fit)
    if not settled and not same_colour:
        lab, _, _, clear = cues.roi
        edge_score = _edge_score(lab, cues.poly_a, cues.poly_b, cues.mask_a, cues.mask_b, clear)
    arc_score = cues.arc_score
    if cues.faces_score is not None:
        # A weak arc cue gives way to the faces' shading fit (see
        # :data:`ARC_WEAK`); the score stays under :data:`ARC_WEAK`.
        arc_score = None

    weighted = [
        (s, wgt)
        # The rim cue is reported but not weighed: against the shared scenes it
        # picked the upper wink in only about half of the pairs (the detector's
        # rim sampling drops points for reasons other than cover). For one
        # colour the shade vote is not weighed either (it picked the upper
        # wink in 9 of 17 pairs where it said anything): the arc cue is.
        for s, wgt in (
            (model_score, MODEL_WEIGHT),
            (None if same_colour else colour_score, COLOUR_WEIGHT),
            (edge_score, EDGE_WEIGHT),
            (arc_score, ARC_WEIGHT),
            (cues.faces_score, ARC_WEIGHT),
        )
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
    return UpperEvidence(
        score=float(np.clip(score, -1.0, 1.0)),
        colour_score=colour_score,
        edge_score=edge_score,
        rim_score=cues.rim_score,
        model_score=model_score,
        model_llr=model_llr,
        arc_score=cues.arc_score,
        faces_score=cues.faces_score,
    )


#: Weight of the layering fit against the lens colour vote (1.0).
MODEL_WEIGHT = 1.0
COLOUR_WEIGHT = 1.0
EDGE_WEIGHT = 0.6
ARC_WEIGHT = 1.0

#: Offsets (px) along a rim's outward normal at which the arc cue samples.
_ARC_OFFSETS_PX = np.arange(-2.5, 2.51, 0.25)
#: Rim samples this far (px) inside the other disc count for the arc cue:
#: nearer the crossings the two rims' profiles mix.
_ARC_MIN_DEPTH_PX = 2.0
#: Where the arc cue looks for a rim: up to this far (px) from where the
#: detections put it, absorbing centre errors of a pixel.
_ARC_SEARCH_PX = 1.0
#: Half width (px) of the arc cue's dip and step.
_ARC_HALF_WIDTH_PX = 1.25
#: Face lightness (OpenCV 8-bit L) from which the arc cue counts in full.
#: Measured on 60 clear same-colour pairs (ground-truth-derived detections,
#: shared scenes, samples, seeds 1100-1155): cues over 0.1 were right for 45
#: of 53 unscaled and 43 of 48 scaled this way (blue faces have L 20-100,
#: yellow 120-215).
ARC_LIGHTNESS_FULL = 80.0
#: Added to the arc cue's denominators (8-bit L): dips and steps of a few
#: hundredths of a unit on plain faces must not make a strong relative cue.
ARC_NOISE_L = 1.0


def _arc_profile(
    lightness: FloatArray, poly: FloatArray, depth_other: FloatArray
) -> tuple[float, float] | None:
    """Dip and step of the lightness across a rim's arc inside the other disc.

    The mean lightness profile across the arc (along the outward normal) is
    searched within :data:`_ARC_SEARCH_PX` of the nominal rim for the darkest
    narrow line (``dip``: the wall of an upper wink's rim, darker than the
    faces on both sides) and the largest change across it (``step``: two
    faces shaded differently, the upper one being tilted). The lower wink's
    rim inside the upper disc lies under the upper face: neither shows.
    """
    inside = _bilinear(depth_other, poly) > _ARC_MIN_DEPTH_PX
    pts = poly[inside]
    if len(pts) < 3:
        return None
    normal = pts - poly.mean(axis=0)
    normal /= np.maximum(np.hypot(normal[:, 0], normal[:, 1]), 1e-9)[:, None]
    # All offsets in one bilinear call: (offsets * points, 2).
    ts = _ARC_OFFSETS_PX
    samples = pts[None, :, :] + ts[:, None, None] * normal[None, :, :]
    mean = _bilinear(lightness, samples.reshape(-1, 2)).reshape(len(ts), len(pts)).mean(axis=1)
    step_idx = int(round(_ARC_HALF_WIDTH_PX / (ts[1] - ts[0])))
    centre = np.flatnonzero(np.abs(ts) <= _ARC_SEARCH_PX + 1e-9)
    lo, hi = mean[centre - step_idx], mean[centre + step_idx]
    dip = float(np.max(0.5 * (lo + hi) - mean[centre]))
    step = float(np.max(np.abs(hi - lo)))
    return dip, step


def _arc_score(
    lightness: FloatArray,
    poly_a: FloatArray,
    poly_b: FloatArray,
    mask_a: npt.NDArray[np.uint8],
    mask_b: npt.NDArray[np.uint8],
    clear: npt.NDArray[np.uint8],
) -> float | None:
    """Which of two winks of one colour is on top, from their rims' arcs; > 0 for a.

    The upper wink's rim runs unbroken across the lower wink's face, a thin
    dark line (its wall) with the faces on its two sides shaded differently;
    the lower wink's rim is cut where the upper covers it. Half the relative
    difference of the two arcs' dips plus half that of their steps, scaled
    down on dark faces (see :data:`ARC_LIGHTNESS_FULL`). Measured on
    ground-truth-derived detections (one noise draw) of the 60 clear
    same-colour pairs of the shared scenes, samples and generated seeds
    1100-1155: the sign was right for 78 %, for 43 of the 48 over 0.1 and
    35 of the 36 over 0.3 (on the held-out /tmp/vis2 sets, 22 of 23 pairs).
    With the floor :data:`ARC_NOISE_L` (2 noise draws): development scenes
    (shared, samples, seeds 1100-1111) 28 of 28 over 0.4 and 34 of 35 over
    0.3; seeds 1112-1131 12 of 12 and 21 of 21; seeds 301-406 22 of 22 and
    34 of 34.
    """
    depth_a = cv2.distanceTransform(mask_a, cv2.DIST_L2, 3) * clear
    depth_b = cv2.distanceTransform(mask_b, cv2.DIST_L2, 3) * clear
    prof_a = _arc_profile(lightness, poly_a, depth_b)
    prof_b = _arc_profile(lightness, poly_b, depth_a)
    if prof_a is None or prof_b is None:
        return None
    (dip_a, step_a), (dip_b, step_b) = prof_a, prof_b
    dip = (dip_a - dip_b) / (abs(dip_a) + abs(dip_b) + ARC_NOISE_L)
    step = (step_a - step_b) / (step_a + step_b + ARC_NOISE_L)
    # A rim's wall is a fraction of its face's brightness: on a dark face
    # (a blue wink) the line hardly shows, and the cue was no better than
    # chance there (8 of 13 pairs right), so it counts for less.
    kernel = np.ones((3, 3), np.uint8)
    faces = ((cv2.erode(mask_a, kernel) | cv2.erode(mask_b, kernel)) & clear).astype(bool)
    if not faces.any():
        return None
    face_lightness = float(np.median(lightness[faces]))
    return 0.5 * (dip + step) * min(1.0, face_lightness / ARC_LIGHTNESS_FULL)


#: An arc cue weaker than this gives way to the faces' shading fit (see
#: :func:`_faces_score`). On the clear same-colour pairs with arc cues under
#: 0.2 (ground-truth-derived detections, 2 noise draws) the fit's sign was
#: right for 19 of 32 on the development scenes (shared scenes, samples,
#: seeds 1100-1111) against the arc's 12, and on two sets not tuned on 27 of
#: 32 against 23 (seeds 1112-1131 and /tmp/vis2's 301-406).
ARC_WEAK = 0.2
#: The faces' fit's log-likelihood ratio that makes its score reach 76 % of
#: :data:`ARC_WEAK`: at most a best guess, never a confident call.
FACES_LLR_SCALE = 4.0
#: The faces' fit runs only where the camera looks down on both winks
#: steeply enough: a plan shift of at most this many mm per mm of height
#: (about 35 degrees from vertical). From the side each wink's wall shows
#: as a band of its own shade, which the fit's two planes do not model: on
#: the oblique frames of seeds 401-406 and 1128-1131 (3 noise draws) it
#: turned 6 right best guesses wrong and 2 wrong ones right. The clear
#: same-colour pairs of the overhead development sets had levers of 0.02
#: to 0.63, those of the oblique frames 0.76 to 1.35.
FACES_MAX_LEVER = 0.7
#: Edge spread (px) of a face's outline in the faces' fit, and of the upper
#: rim's dark wall line across the lower face (a Gaussian's sigma).
_FACES_EDGE_PX = 0.5
_FACES_WALL_PX = 0.7
#: The fit uses pixels at least this far (px) inside the pair's outline:
#: the outer rim mixes felt into both hypotheses alike.
_FACES_INSET_PX = 1.5


def _faces_score(
    lightness: FloatArray, poly_a: FloatArray, poly_b: FloatArray, clear: npt.NDArray[np.uint8]
) -> float | None:
    """Which of two winks of one colour is on top, from their faces' shading; > 0 for a.

    Each layering is fitted to the lightness over both faces by least
    squares: the upper disc and the rest of the lower one each a plane (a
    tilted wink is shaded differently, and each face has its own gradient),
    plus a dark line along the upper rim across the lower face. The
    layering whose boundary follows the image's step leaves the smaller
    residual; the difference of the two residual sums over twice the
    better one's per-pixel variance (a log-likelihood ratio) is scaled by
    :data:`FACES_LLR_SCALE` into ``ARC_WEAK * tanh(llr / scale)``.
    """
    rows, cols = np.nonzero(clear)
    if len(rows) < 20:
        return None
    pts = np.stack([cols, rows], axis=1).astype(float)
    # Signed distance (px, positive inside) to each rim's ellipse: exact for
    # a circle, and the projected rims are very nearly circles.
    centres, invs = _ellipses_through(np.stack([poly_a, poly_b]))
    depths = []
    for centre, inv in zip(centres, invs, strict=True):
        off = pts - centre
        reach = np.hypot(off[:, 0], off[:, 1])
        unit = np.hypot(*(off @ inv.T).T)
        depths.append(reach / np.maximum(unit, 1e-9) - reach)
    depth_a, depth_b = depths
    keep = np.maximum(depth_a, depth_b) > _FACES_INSET_PX
    n = int(keep.sum())
    if n < 20:
        return None
    value = lightness[rows[keep], cols[keep]]
    depth_a, depth_b, pts = depth_a[keep], depth_b[keep], pts[keep]
    # Centred and scaled coordinates keep the least-squares system well conditioned.
    xy = (pts - pts.mean(axis=0)) / 5.0
    sse = []
    for depth_up, depth_low in ((depth_a, depth_b), (depth_b, depth_a)):
        up = 1.0 / (1.0 + np.exp(-depth_up / _FACES_EDGE_PX))
        wall = np.exp(-(depth_up**2) / (2 * _FACES_WALL_PX**2)) * (depth_low > 0.5)
        low = 1.0 - up
        design = np.stack(
            [up, up * xy[:, 0], up * xy[:, 1], low, low * xy[:, 0], low * xy[:, 1], wall]
        )
        # Normal equations: seven unknowns, and lstsq's overhead is most of
        # the cost at this size.
        gram = design @ design.T + 1e-9 * np.eye(7)
        coef = np.linalg.solve(gram, design @ value)
        resid = value - coef @ design
        sse.append(float(resid @ resid))
    variance = max(min(sse) / max(n - 7, 1), 1e-6)
    llr = (sse[1] - sse[0]) / (2.0 * variance)
    return ARC_WEAK * math.tanh(llr / FACES_LLR_SCALE)


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


# --------------------------------------------------------------------------
# Which wink is on top: the two layerings fitted to the pixels
# --------------------------------------------------------------------------

#: Edge spread of a wink's outline in the image (camera blur and pixel
#: footprint together), one sigma in pixels.
EDGE_SIGMA_PX = 0.85
#: How far each wink's fitted outline may move from where the detections put
#: it, pixels. Detected centres of partly covered winks are a pixel or two off
#: at ~1 px/mm, and the lens that tells the layers apart is only a few pixels
#: wide: with the detected outlines held fixed, such errors inverted a third
#: of the calls the ground-truth centres got right.
MAX_SHIFT_PX = 2.0
#: Gauss-Newton steps per layering (measured: a third and fourth step moved
#: no call on the shared scenes and samples).
FIT_STEPS = 2
#: Log-likelihood ratio (in units of the fit's own pixel noise) that counts as
#: a score of tanh(1) = 0.76. Pixel noise is correlated (blur, JPEG) and the
#: flat-disc model is not exact, so the raw ratio overstates the evidence.
FIT_LLR_SCALE = 20.0
#: Price of moving an outline, in squared residual (weighted Lab) per pixel
#: squared: a one-pixel move must explain about fifty pixels' worth of noise
#: to be taken. Without it, on ground-truth-derived detections (centres right
#: to 0.3 mm) the free outlines wandered into noise and lost 3 of 213 clear
#: pairs; with it none, and the same calls on the detector's detections.
SHIFT_PRIOR_WEIGHT = 1000.0
_SHIFT_MASK = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
_NO_CHANGE = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 1.0])
#: Lab distance (weighted) between each wink's colour and the felt at which
#: the fit counts in full.
FELT_CONTRAST_FULL = 25.0
#: A logistic edge profile with the slope of a Gaussian blur of EDGE_SIGMA_PX.
_LOGISTIC_GAIN = 1.702 / EDGE_SIGMA_PX
#: The per-pixel arrays of the fit are single precision (sums are double).
_F32 = np.float32


@dataclass(frozen=True)
class _PairPixels:
    """What the layering fit of one pair needs.

    ``image_xy_px`` (n, 2) are the pixels used (not under a third wink),
    ``values`` (n, 3) their weighted Lab colours; each outline is an ellipse
    ``centre + inverse(shape_inv) @ unit circle`` with the scale it may take
    relative to the detected size, ``(low, high)``.
    """

    image_xy_px: FloatArray
    values: FloatArray
    centre_a: FloatArray
    shape_inv_a: FloatArray
    centre_b: FloatArray
    shape_inv_b: FloatArray
    scale_a: tuple[float, float]
    scale_b: tuple[float, float]


def _ellipses_through(rims_px: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Centres (k, 2) and inverse shape matrices (k, 2, 2) of ellipses through projected rims.

    A small disc's rim (k, m, 2), sampled evenly in angle, projects to an
    ellipse ``c + M (cos t, sin t)``; the rim's covariance is ``M M^T / 2``,
    which gives the symmetric ``M``.
    """
    centre = rims_px.mean(axis=1)
    off = rims_px - centre[:, None, :]
    cov = np.einsum("kmi,kmj->kij", off, off) / rims_px.shape[1]
    vals, vecs = np.linalg.eigh(2.0 * cov)
    inv = np.einsum("kij,kj,klj->kil", vecs, 1.0 / np.sqrt(np.maximum(vals, 1e-9)), vecs)
    return centre, inv


def _pair_pixels(
    roi: PairRoi,
    ellipse_a: tuple[FloatArray, FloatArray],
    ellipse_b: tuple[FloatArray, FloatArray],
    scale_a: tuple[float, float],
    scale_b: tuple[float, float],
) -> _PairPixels | None:
    """The pixels of the pair's image clear of other winks, for the layering fit."""
    lab, offset_px, _, clear = roi
    usable = clear.astype(bool)
    # Every other pixel, checkerboard fashion: blur makes neighbours carry
    # much the same information, and it halves the fit's cost (same calls on
    # all but one of 217 clear two-colour pairs, measured).
    usable = usable & ((np.arange(usable.shape[0])[:, None] + np.arange(usable.shape[1])) % 2 == 0)
    rows, cols = np.nonzero(usable)
    if len(rows) < 20:
        return None
    centre_a, inv_a = ellipse_a
    centre_b, inv_b = ellipse_b
    return _PairPixels(
        image_xy_px=np.stack([cols, rows], axis=1) + offset_px,
        values=lab[rows, cols] * _LAB_WEIGHTS,
        centre_a=centre_a,
        shape_inv_a=inv_a,
        centre_b=centre_b,
        shape_inv_b=inv_b,
        scale_a=scale_a,
        scale_b=scale_b,
    )


def _coverage(
    dx: npt.NDArray[np.floating[Any]],
    dy: npt.NDArray[np.floating[Any]],
    inv: npt.NDArray[np.floating[Any]],
    scale: npt.NDArray[np.floating[Any]],
    with_grad: bool,
) -> tuple[npt.NDArray[np.floating[Any]], npt.NDArray[np.floating[Any]] | None]:
    """Blurred coverage of scaled ellipses at pixels, and its gradient.

    ``dx``, ``dy`` (N,) are each pixel minus its ellipse's centre, ``inv``
    (4, N) the ellipse's inverse shape matrix (row-major) and ``scale`` (N,)
    its scale. The gradient (3, N) is with respect to the centre (x, y) and
    the scale. Arrays are laid out pixel-last: numpy's inner loops then run
    over the pixels rather than over 3 or 4 components (measured 5x faster).
    """
    m00, m01, m10, m11 = inv
    u0 = m00 * dx + m01 * dy
    u1 = m10 * dx + m11 * dy
    # sqrt of sums rather than np.hypot, and a logistic edge rather than the
    # normal CDF: each several times faster on these arrays (measured).
    rho = np.maximum(np.sqrt(u0 * u0 + u1 * u1), 1e-6)
    r = np.maximum(np.sqrt(dx * dx + dy * dy), 1e-6)
    ratio = scale / rho
    # Signed distance to the outline along the ray from the centre, pixels.
    inside_px = r * (ratio - 1.0)
    # Clipped: far outside an outline (close-ups, many px per mm) exp would
    # overflow float32 and warn, although the coverage is 0 either way.
    cover = 1.0 / (1.0 + np.exp(np.clip(-_LOGISTIC_GAIN * inside_px, -80.0, 80.0)))
    if not with_grad:
        return cover, None
    density = _LOGISTIC_GAIN * cover * (1.0 - cover)
    # d(inside)/d(offset) = (ratio - 1) offset / r - r ratio / rho^2 * M^T u
    k_r = (ratio - 1.0) / r
    k_rho = r * ratio / (rho * rho)
    grad = np.empty((3, len(dx)), dtype=dx.dtype)
    grad[0] = (k_rho * (u0 * m00 + u1 * m10) - k_r * dx) * density
    grad[1] = (k_rho * (u0 * m01 + u1 * m11) - k_r * dy) * density
    grad[2] = (r / rho) * density
    return cover, grad


def layering_log_likelihood_ratios(pairs: Sequence[_PairPixels]) -> FloatArray:
    """For each pair, how much better "a over b" fits the pixels than "b over a".

    Each layering is rendered as two flat discs over the felt -- the upper
    disc whole, the lower one where the upper does not cover it -- with
    blurred edges; the three colours are solved for by least squares, and
    both outlines may move by up to :data:`MAX_SHIFT_PX` and change scale
    within their range (a size class may be wrong), by Gauss-Newton. The
    per-pixel work for all pairs and both layerings is done in one batch.

    Returns
    -------
    (len(pairs),) ndarray
        ``(err_b - err_a) / (2 sigma^2)``, ``sigma^2`` the better fit's mean
        squared residual per value (at least 1): positive for ``a`` on top.
    """
    if not pairs:
        return np.zeros(0)
    # Segment 2k fits "a over b" for pair k, segment 2k + 1 "b over a".
    ups: list[tuple[FloatArray, FloatArray, tuple[float, float]]] = []
    lows: list[tuple[FloatArray, FloatArray, tuple[float, float]]] = []
    for pair in pairs:
        a = (pair.centre_a, pair.shape_inv_a, pair.scale_a)
        b = (pair.centre_b, pair.shape_inv_b, pair.scale_b)
        ups += [a, b]
        lows += [b, a]
    sizes = np.repeat([len(pair.image_xy_px) for pair in pairs], 2)
    n_seg = len(sizes)
    seg = np.repeat(np.arange(n_seg), sizes)
    starts = (np.cumsum(sizes) - sizes).astype(np.intp)
    xy = np.concatenate([np.vstack([q.image_xy_px, q.image_xy_px]) for q in pairs]).T.astype(_F32)
    values = np.concatenate([np.vstack([q.values, q.values]) for q in pairs]).T.astype(_F32)
    discs = []
    for group in (ups, lows):
        centre = np.array([d[0] for d in group]).T.astype(_F32)[:, seg]
        discs.append(
            (
                xy[0] - centre[0],
                xy[1] - centre[1],
                np.array([d[1].ravel() for d in group]).T.astype(_F32)[:, seg],
                np.array([d[2] for d in group]),
            )
        )
    (up_dx, up_dy, up_inv, up_scale), (low_dx, low_dy, low_inv, low_scale) = discs
    # Parameters per segment: upper (dx, dy, scale), lower (dx, dy, scale).
    params = np.tile([0.0, 0.0, 1.0, 0.0, 0.0, 1.0], (n_seg, 1))
    shift = np.full((n_seg, 2), MAX_SHIFT_PX)
    lo = np.column_stack([-shift, up_scale[:, 0], -shift, low_scale[:, 0]])
    hi = np.column_stack([shift, up_scale[:, 1], shift, low_scale[:, 1]])
    gram_i, gram_j = np.triu_indices(3)
    # The 21 distinct entries of each 6x6 normal matrix, and which product of
    # model derivatives (upper-upper, upper-lower, lower-lower) weighs each.
    jtj_i, jtj_j = np.triu_indices(6)
    jtj_kind = (jtj_i >= 3).astype(int) + (jtj_j >= 3).astype(int)
    value_energy = np.add.reduceat((values * values).sum(axis=0), starts, dtype=float)
    err = np.zeros(n_seg)
    for step in range(FIT_STEPS + 1):
        last = step == FIT_STEPS
        p = params.T.astype(_F32)[:, seg]
        w_up, g_up = _coverage(up_dx - p[0], up_dy - p[1], up_inv, p[2], not last)
        w_low, g_low = _coverage(low_dx - p[3], low_dy - p[4], low_inv, p[5], not last)
        vis_low = (1.0 - w_up) * w_low
        basis = np.stack([w_up, vis_low, 1.0 - w_up - vis_low])  # (3 layers, N)
        # Colours of the upper wink, the lower one and the felt per segment,
        # by least squares (segment sums of the normal equations).
        gram = np.empty((n_seg, 3, 3))
        gram[:, gram_i, gram_j] = np.add.reduceat(
            basis[gram_i] * basis[gram_j], starts, axis=1, dtype=float
        ).T
        gram[:, gram_j, gram_i] = gram[:, gram_i, gram_j]
        rhs = np.add.reduceat(
            (basis[:, None, :] * values[None, :, :]).reshape(9, -1), starts, axis=1, dtype=float
        ).T.reshape(-1, 3, 3)
        colours = np.linalg.solve(gram + 1e-6 * np.eye(3), rhs)  # (segment, layer, channel)
        if last:
            # Sum of squared residuals from the segment sums alone:
            # |v|^2 - 2 <C, B^T v> + <C, B^T B C>.
            err = (
                value_energy
                - 2.0 * (colours * rhs).sum(axis=(1, 2))
                + (colours * (gram @ colours)).sum(axis=(1, 2))
            )
            err += SHIFT_PRIOR_WEIGHT * (((params - _NO_CHANGE) * _SHIFT_MASK) ** 2).sum(axis=1)
            break
        assert g_up is not None and g_low is not None
        # Model derivative per channel: d/d(up cover) = D0 - w_low D1, d/d(low
        # cover) = (1 - w_up) D1, with D0 = upper - felt, D1 = lower - felt.
        # Their products with each other and with the residual reduce to
        # per-segment dot products of colours, so no per-pixel colour arrays.
        d0 = colours[:, 0] - colours[:, 2]
        d1 = colours[:, 1] - colours[:, 2]
        d0d0, d0d1, d1d1 = (d0 * d0).sum(1), (d0 * d1).sum(1), (d1 * d1).sum(1)
        d0c = np.einsum("sc,slc->sl", d0, colours)  # (segment, layer)
        d1c = np.einsum("sc,slc->sl", d1, colours)
        v_d0 = (values * d0.T.astype(_F32)[:, seg]).sum(axis=0)
        v_d1 = (values * d1.T.astype(_F32)[:, seg]).sum(axis=0)
        model_d0 = (basis * d0c.T.astype(_F32)[:, seg]).sum(axis=0)
        model_d1 = (basis * d1c.T.astype(_F32)[:, seg]).sum(axis=0)
        res_d1 = v_d1 - model_d1  # residual . D1
        res_up = (v_d0 - model_d0) - w_low * res_d1
        res_low = (1.0 - w_up) * res_d1
        k00, k01, k11 = (x.astype(_F32)[seg] for x in (d0d0, d0d1, d1d1))
        open_up = 1.0 - w_up
        dots = np.stack(
            [
                k00 - 2.0 * w_low * k01 + w_low * w_low * k11,
                open_up * (k01 - w_low * k11),
                open_up * open_up * k11,
            ]
        )
        grad = np.concatenate([g_up, g_low])  # (6, N)
        jtj = np.empty((n_seg, 6, 6))
        jtj[:, jtj_i, jtj_j] = np.add.reduceat(
            grad[jtj_i] * grad[jtj_j] * dots[jtj_kind], starts, axis=1, dtype=float
        ).T
        jtj[:, jtj_j, jtj_i] = jtj[:, jtj_i, jtj_j]
        toward = np.concatenate([g_up * res_up, g_low * res_low])
        jtr = np.add.reduceat(toward, starts, axis=1, dtype=float).T
        # A Gaussian prior on the shifts (MAP rather than least squares).
        jtj += SHIFT_PRIOR_WEIGHT * _SHIFT_MASK[None, :, None] * np.eye(6)
        jtr -= SHIFT_PRIOR_WEIGHT * _SHIFT_MASK * (params - _NO_CHANGE)
        damping = 1e-3 * np.trace(jtj, axis1=1, axis2=2) / 6.0 + 1e-9
        moves = np.linalg.solve(jtj + damping[:, None, None] * np.eye(6), jtr[:, :, None])
        params = np.clip(params + moves[:, :, 0], lo, hi)
    err_a, err_b = err[0::2], err[1::2]
    n_values = 3.0 * sizes[0::2]
    sigma2 = np.maximum(np.minimum(err_a, err_b) / np.maximum(n_values - 15.0, 1.0), 1.0)
    return np.asarray((err_b - err_a) / (2.0 * sigma2), dtype=float)


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
        out[colour] = column_medians(per_wink[sel])
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
    colour_lab: Mapping[Colour, FloatArray] | None = None,
    base_z_mm: Callable[[FloatArray, FloatArray, FloatArray], FloatArray] | None = None,
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
    colour_lab : mapping of Colour to (3,) ndarray, optional
        :func:`colour_references_lab` of these detections in ``image_bgr``,
        when the caller has it already.
    base_z_mm : callable, optional
        ``base_z_mm(image_xy_px, top_z_mm, radius_mm)``: for winks lying on
        nothing, (k, 2) image centres of their top faces, (k,) heights of
        those faces flat on the mat and (k,) radii, how much lower each one
        is than flat on the mat, mm (0 on the mat, negative off it, see
        :func:`vision.status.base_z_off_mat_mm`). Its top face, and so its
        plan position, is that much lower, and so is any wink on it. Squops
        are sought with every wink on the mat's level first, and a wink
        within reach of another (a candidate pair) stays on the mat's level:
        one lying on another at the mat's edge looks further out than it is.

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
        and separation_mm(plan_flat[i], radius[i], plan_flat[j], radius[j]) < CANDIDATE_MARGIN_MM
    )
    rims_flat = _image_rims_px(camera, plan_flat, radius, flat_z)
    refs: Mapping[Colour, FloatArray] = {}
    if colour_lab is not None:
        refs = colour_lab
    elif image_bgr is not None:
        refs = colour_references_lab(image_bgr, image_xy, list(detections.colour))
    rim_extent = np.abs(rims_flat - image_xy[:, None, :]).max(axis=(1, 2))
    scale_range = [_scale_range(r) for r in radius]
    evidence: dict[tuple[int, int], UpperEvidence] = {}

    model_llr: dict[tuple[int, int], float] = {}

    def nearby_rims(i: int, j: int) -> list[FloatArray]:
        reach = np.hypot(*(image_xy - image_xy[i]).T) - rim_extent
        return [
            rims_flat[k]
            for k in np.flatnonzero(reach < rim_extent[i] + rim_extent[j] + 2)
            if k not in (i, j) and active[k]
        ]

    def evidence_for(i: int, j: int) -> UpperEvidence:
        if (i, j) not in evidence:
            if image_bgr is None:
                evidence[(i, j)] = UpperEvidence(score=0.0)
            else:
                evidence[(i, j)] = upper_evidence(
                    image_bgr,
                    rims_flat[i],
                    rims_flat[j],
                    other_rims_px=nearby_rims(i, j),
                    colour_a_lab=refs.get(detections.colour[i]),
                    colour_b_lab=refs.get(detections.colour[j]),
                    same_colour=detections.colour[i] is detections.colour[j],
                    scale_range_a=scale_range[i],
                    scale_range_b=scale_range[j],
                    model_llr=model_llr.get((i, j)),
                    faces_fit=max(lever[i], lever[j]) <= FACES_MAX_LEVER,
                )
        return evidence[(i, j)]

    # Pass 1: with every wink flat, which pairs could overlap under either
    # hypothesis of which is on top, and which is on top.
    plan_raised = correct_parallax(camera, image_xy, flat_z + RAISE_ON_ONE_MM)
    close = []
    for i, j in pairs:
        sep_i_up = separation_mm(plan_raised[i], radius[i], plan_flat[j], radius[j])
        sep_j_up = separation_mm(plan_flat[i], radius[i], plan_raised[j], radius[j])
        sigma = math.hypot(sigma_centre[i], sigma_centre[j])
        if min(sep_i_up, sep_j_up) <= k_sigma * sigma + 0.5:
            close.append((i, j, sep_i_up, sep_j_up))
    if image_bgr is not None:
        # The cheap cues of every close pair first; then the layering fits of
        # the pairs those leave open, in one batch: per pair they would cost
        # several times more in array overhead.
        batch = []
        pair_cues: dict[tuple[int, int], _Cues | None] = {}
        ell_centre, ell_inv = _ellipses_through(rims_flat)
        for i, j, sep_i_up, sep_j_up in close:
            cues = _cheap_cues(
                image_bgr,
                rims_flat[i],
                rims_flat[j],
                other_rims_px=nearby_rims(i, j),
                colour_a_lab=refs.get(detections.colour[i]),
                colour_b_lab=refs.get(detections.colour[j]),
                same_colour=detections.colour[i] is detections.colour[j],
                # The faces' fit gives only a best guess of the upper wink:
                # not wanted where neither layering would overlap.
                faces_fit=max(lever[i], lever[j]) <= FACES_MAX_LEVER
                and min(sep_i_up, sep_j_up) < 0.0,
            )
            pair_cues[(i, j)] = cues
            # Two winks of one colour differ only in shading: the fit picked
            # the upper one no better than chance there (9 right, 6 wrong of
            # 31 pairs on the shared scenes and samples), so it is not run.
            if cues is None or not cues.needs_fit:
                continue
            pixels = _pair_pixels(
                cues.roi,
                (ell_centre[i], ell_inv[i]),
                (ell_centre[j], ell_inv[j]),
                scale_range[i],
                scale_range[j],
            )
            if pixels is not None:
                batch.append(((i, j), pixels))
        llrs = layering_log_likelihood_ratios([pixels for _, pixels in batch])
        model_llr = {key: float(llr) for (key, _), llr in zip(batch, llrs, strict=True)}
        for key, cues in pair_cues.items():
            evidence[key] = (
                UpperEvidence(score=0.0)
                if cues is None
                else _combined_evidence(cues, model_llr.get(key))
            )
    above: dict[tuple[int, int], float] = {}  # (upper, lower) -> confidence
    weak: list[tuple[int, int, float, bool]] = []
    for i, j, sep_i_up, sep_j_up in close:
        ev = evidence_for(i, j)
        # Only a wink that really lies on another is raised: when the pair
        # overlaps whichever is on top, or the image clearly shows one on top
        # of the other. A weak cue on a near-miss must not lift a flat wink.
        overlaps_anyway = max(sep_i_up, sep_j_up) < 0.0
        clearly_shown = abs(ev.score) >= UPPER_CONFIDENCE_MIN and min(sep_i_up, sep_j_up) < 0.0
        if clearly_shown:
            key = (i, j) if ev.score >= 0 else (j, i)
            above[key] = abs(ev.score)
        elif overlaps_anyway:
            # Two winks of one colour are told only by a clear arc cue.
            told = ev.score != 0.0 and (
                detections.colour[i] is not detections.colour[j]
                or abs(ev.score) >= SAME_COLOUR_TOLD_MIN
            )
            weak.append((i, j, ev.score, told))
    above = _with_weak_pairs(n, above, weak)

    # Heights: each wink's level is the longest chain of winks beneath it.
    level = _levels(n, above)
    n_below = np.zeros(n, dtype=int)
    for up, _low in above:
        n_below[up] += 1
    z_final = flat_z.copy()
    # Not a wink within reach of another: one lying on another by the mat's
    # edge, its upper wink unclear, looks further out than it is, and would
    # be put lower still.
    near_another = np.zeros(n, bool)
    for i, j in pairs:
        near_another[[i, j]] = True
    on_nothing = (level == 0) & ~near_another
    if base_z_mm is not None and on_nothing.any():
        z_final[on_nothing] += base_z_mm(
            image_xy[on_nothing], flat_z[on_nothing], radius[on_nothing]
        )
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


def _scale_range(radius_mm: float) -> tuple[float, float]:
    """How far a wink's outline may be scaled in the layering fit.

    Either size class, and a few per cent more: partly covered winks get the
    wrong class from the detector (on the shared overhead scenes 5% of
    detections, mostly lower winks of a squop), and a lens drawn for the
    wrong radius can point at the wrong upper wink.
    """
    small = WinkSize.SMALL.diameter_mm / 2.0
    large = WinkSize.LARGE.diameter_mm / 2.0
    return (min(small, radius_mm) / radius_mm * 0.97, max(large, radius_mm) / radius_mm * 1.03)


def _with_weak_pairs(
    n: int,
    above: dict[tuple[int, int], float],
    weak: Sequence[tuple[int, int, float, bool]],
) -> dict[tuple[int, int], float]:
    """``above`` (clear calls) plus the pairs that overlap but whose upper wink is unclear.

    Each weak pair is ``(i, j, score, told)``: ``score`` > 0 says ``i`` is on
    top, ``told`` whether that score means anything (two colours and some
    image evidence, or one colour with an arc cue of at least
    :data:`SAME_COLOUR_TOLD_MIN`). A pair the image cannot tell is
    oriented by the clear calls: a wink they show resting on others is above
    one they do not, since a wink lying on the mat cannot be above a raised
    one without resting on it and so being raised itself. Measured on the
    shared scenes, samples and two generated sets (GT-derived detections):
    761 -> 776 clear pairs with the right upper wink, two-colour pairs
    unchanged. A told pair, and a tie, go by the score.
    """
    out = dict(above)
    shown = _levels(n, dict(above))
    for i, j, score, told in weak:
        if shown[i] != shown[j] and not told:
            key = (i, j) if shown[i] > shown[j] else (j, i)
        else:
            key = (i, j) if score >= 0 else (j, i)
        # The confidence is the image's support for the chosen direction:
        # none when the clear calls overrode a score that favoured the other.
        agrees = (score >= 0) == (key == (i, j))
        out[key] = abs(score) if agrees else 0.0
    return out


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
