"""Find the mat: a felt rectangle seen as a quadrilateral, then its edges to sub-pixel.

Two stages:

1. :func:`find_mat_quad` works on a small copy of the image. It finds long
   straight segments (OpenCV's LSD on the L, a and b channels), merges them into
   lines, and scores every quadrilateral that four of them make: how much of each
   side is backed by an edge of the right orientation, and how uniform the
   colour inside is (felt is uniform; a table with a mat on it is not). The
   best one is the mat. A quadrilateral that needs the image border as a side
   means the mat runs out of the frame.
2. :func:`edge_points` samples intensity profiles across a predicted edge in the
   full-resolution image and returns the sub-pixel position of the step on each,
   for the camera fit in :mod:`calibration.fit`.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fit import MAT_CORNERS_MM, baseline_segment_mm

FloatArray = npt.NDArray[np.float64]
UInt8Array = npt.NDArray[np.uint8]

#: Width of the working copy used to find the quadrilateral, pixels.
WORK_WIDTH_PX = 640
#: The smallest image side we accept, pixels.
MIN_IMAGE_SIDE_PX = 200
#: Sizes (as fractions 1/f of the working copy) also searched for faint edges
#: when the working copy alone shows no mat (:func:`find_mat_quads`).
COARSE_FACTORS = (2.0, 3.0)
#: Outlines from the faint-edge search must show at least this much baseline
#: (:func:`_baseline_evidence`, 0-4: two baselines' worth).
MIN_COARSE_BASELINE_EVIDENCE = 2.0
#: Lightness step (8-bit Lab L) of a baseline against the felt beside it.
_LINE_CONTRAST_L = 8.0
#: Fraction of the inside that must match the felt's median colour.
_MIN_UNIFORMITY = 0.6


class FailureReason(enum.StrEnum):
    """Why calibration could not be done."""

    NO_MAT = "no-mat"
    """No felt rectangle: no four long edges that enclose a uniform region."""
    MAT_PARTLY_OUT_OF_FRAME = "mat-partly-out-of-frame"
    """The uniform region runs into the image border: a side or corner is not in view."""
    IMAGE_TOO_SMALL = "image-too-small"
    """Fewer than :data:`MIN_IMAGE_SIDE_PX` pixels on a side."""
    FIT_FAILED = "fit-failed"
    """Edges were found but no camera explains them (the residual is too large)."""
    NO_BASELINES = "no-baselines"
    """A rectangle fits a camera but shows too few baselines to be trusted as the mat."""
    EVIDENCE_DISAGREES = "evidence-disagrees"
    """A camera fits the outline's edges but misses the baselines it found: the
    outline is probably not the mat's (a board's or paper's edge taken for one)."""
    FAINT_EDGES_UNVERIFIED = "faint-edges-unverified"
    """The mat's baselines were found but its edges are too faint against the
    table: the pot's rim does not vouch for the camera fitted to them, or the
    edges and baselines disagree too much to pin it down."""
    CAMERA_IMPLAUSIBLE = "camera-implausible"
    """A saved camera no real camera can be: not a rotation, below the mat, a
    lens distortion no webcam or phone has."""
    CAMERA_MOVED = "camera-moved"
    """A saved camera that does not put the mat where the photo shows it: the
    camera has moved since it was calibrated."""


@dataclass(frozen=True)
class CalibrationFailure:
    """A failed estimation: falsy, and says why.

    Parameters
    ----------
    reason : FailureReason
    message : str
        What was not found and what to do about it.
    """

    reason: FailureReason
    message: str

    def __bool__(self) -> bool:
        return False


@dataclass(frozen=True, eq=False)
class MatQuad:
    """The mat's outline found on the working copy, scaled to full-resolution pixels.

    Parameters
    ----------
    corners_image_xy_px : (4, 2) ndarray
        Corners in the image, in order around the quadrilateral (clockwise in the
        image, i.e. with y pointing down), pixels.
    side_support : (4,) ndarray
        Fraction of each side (from corner i to corner i+1) backed by an edge.
    uniformity : float
        Fraction of the inside whose colour is close to its median colour.
    felt_lab : (3,) ndarray
        Median 8-bit OpenCV Lab colour of the inside.
    """

    corners_image_xy_px: FloatArray
    side_support: FloatArray
    uniformity: float
    felt_lab: FloatArray

    def __bool__(self) -> bool:
        return True


# --------------------------------------------------------------------------
# Stage 1: the quadrilateral
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    """``x cos(theta) + y sin(theta) = rho`` on the working copy."""

    theta: float
    rho: float
    border: bool = False
    length_px: float = 0.0

    @property
    def normal(self) -> FloatArray:
        return np.array([np.cos(self.theta), np.sin(self.theta)])

    @property
    def direction(self) -> FloatArray:
        return np.array([-np.sin(self.theta), np.cos(self.theta)])


def _resize_to_width(image_bgr: UInt8Array, width_px: int) -> tuple[UInt8Array, float]:
    scale = width_px / image_bgr.shape[1]
    height_px = max(1, int(round(image_bgr.shape[0] * scale)))
    small = cv2.resize(image_bgr, (width_px, height_px), interpolation=cv2.INTER_AREA)
    return np.asarray(small, dtype=np.uint8), scale


def _orientation_field(lab: npt.NDArray[np.float32]) -> tuple[FloatArray, FloatArray]:
    """Edge normal angle and strength from the colour structure tensor (Di Zenzo)."""
    # Chroma is weighted up because felt and table often differ more in hue
    # than in lightness, and lightness carries the lighting gradient.
    weights = (1.0, 2.0, 2.0)
    jxx = np.zeros(lab.shape[:2], np.float64)
    jxy = np.zeros_like(jxx)
    jyy = np.zeros_like(jxx)
    for c, w in enumerate(weights):
        gx = cv2.Sobel(lab[:, :, c], cv2.CV_64F, 1, 0, ksize=3) * (w / 8)
        gy = cv2.Sobel(lab[:, :, c], cv2.CV_64F, 0, 1, ksize=3) * (w / 8)
        jxx += gx * gx
        jxy += gx * gy
        jyy += gy * gy
    theta = 0.5 * np.arctan2(2 * jxy, jxx - jyy)
    strength = np.sqrt(0.5 * (jxx + jyy + np.sqrt((jxx - jyy) ** 2 + 4 * jxy**2)))
    return theta, strength


def _segments(lab_u8: UInt8Array, min_length_px: float) -> FloatArray:
    """Straight segments ``(x1, y1, x2, y2)`` from LSD on each Lab channel."""
    # A low gradient threshold (quant 1 instead of 2) catches grey felt on a pale table.
    lsd = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD, 0.8, 0.6, 1.0)
    found = []
    for c in range(3):
        channel = lab_u8[:, :, c]
        if c > 0:
            # a and b span a narrow range: stretch them so LSD's gradient
            # threshold sees hue edges.
            lo, hi = float(channel.min()), float(channel.max())
            stretched = (channel.astype(np.float64) - lo) * (255.0 / max(hi - lo, 1.0))
            channel = np.clip(stretched, 0, 255).astype(np.uint8)
        lines = lsd.detect(channel)[0]
        if lines is not None:
            found.append(np.asarray(lines, np.float64).reshape(-1, 4))
    if not found:
        return np.zeros((0, 4))
    segs = np.vstack(found)
    length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    return segs[length >= min_length_px]


def _merge_segments(segs: FloatArray, min_total_px: float) -> list[_Line]:
    """Group collinear segments and fit one line to each group."""
    if len(segs) == 0:
        return []
    d = segs[:, 2:] - segs[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    theta = (np.arctan2(d[:, 1], d[:, 0]) + np.pi / 2) % np.pi
    mid = (segs[:, :2] + segs[:, 2:]) / 2
    rho = mid[:, 0] * np.cos(theta) + mid[:, 1] * np.sin(theta)
    order = np.argsort(-length)
    used = np.zeros(len(segs), bool)
    lines: list[_Line] = []
    for i in order:
        if used[i]:
            continue
        dtheta = np.abs((theta - theta[i] + np.pi / 2) % np.pi - np.pi / 2)
        # Distance of each segment's midpoint from line i.
        dist = np.abs(mid[:, 0] * np.cos(theta[i]) + mid[:, 1] * np.sin(theta[i]) - rho[i])
        member = (~used) & (dtheta < np.deg2rad(3.0)) & (dist < 4.0)
        used |= member
        total = float(length[member].sum())
        if total < min_total_px:
            continue
        pts = np.vstack([segs[member, :2], segs[member, 2:]])
        w = np.repeat(length[member], 1)
        w = np.concatenate([w, w])
        centre = (pts * w[:, None]).sum(0) / w.sum()
        cov = ((pts - centre).T * w) @ (pts - centre)
        evals, evecs = np.linalg.eigh(cov)
        normal = evecs[:, 0]
        t = float(np.arctan2(normal[1], normal[0]))
        r = float(centre @ normal)
        if r < 0:
            t, r = t + np.pi, -r
        lines.append(_Line(theta=t, rho=r, length_px=total))
    return lines


def _support_profile(
    line: _Line, theta_map: FloatArray, strength_map: FloatArray, edge_level: float
) -> tuple[FloatArray, FloatArray]:
    """Along the line: parameter t (px) and whether an aligned edge is there (0/1)."""
    h, w = theta_map.shape
    p0 = line.normal * line.rho
    d = line.direction
    t = np.arange(-np.hypot(w, h), np.hypot(w, h), 1.0)
    pts = p0[None, :] + t[:, None] * d[None, :]
    # Half a pixel of slack keeps the image border itself (x = 0, y = 0) inside.
    inside = (
        (pts[:, 0] >= -0.5) & (pts[:, 0] <= w - 0.5) & (pts[:, 1] >= -0.5) & (pts[:, 1] <= h - 0.5)
    )
    t, pts = t[inside], pts[inside]
    if line.border:
        return t, np.full(len(t), 0.8)
    ok = np.zeros(len(t), bool)
    # Lens distortion bends long edges by a pixel or two on the working copy.
    for off in (-2.0, -1.0, 0.0, 1.0, 2.0):
        q = np.rint(pts + off * line.normal[None, :]).astype(int)
        q[:, 0] = np.clip(q[:, 0], 0, w - 1)
        q[:, 1] = np.clip(q[:, 1], 0, h - 1)
        th = theta_map[q[:, 1], q[:, 0]]
        st = strength_map[q[:, 1], q[:, 0]]
        aligned = np.abs(np.cos(th - line.theta)) > np.cos(np.deg2rad(12.0))
        ok |= aligned & (st > edge_level)
    return t, ok.astype(np.float64)


def _side_support(t: FloatArray, prof: FloatArray, a: float, b: float) -> float:
    lo, hi = min(a, b), max(a, b)
    # Ignore the ends: corners are often occluded or rounded.
    span = hi - lo
    sel = (t >= lo + 0.05 * span) & (t <= hi - 0.05 * span)
    expected = max(1.0, 0.9 * span)
    return float(prof[sel].sum() / expected)


def _uniformity(
    lab_tiny: npt.NDArray[np.float32], corners_tiny: FloatArray
) -> tuple[float, FloatArray]:
    """Fraction of the inside that is one colour under smooth shading, and that colour.

    Lamps and vignetting shade felt smoothly, so each Lab channel is first
    fitted with a quadratic in x and y (robustly, twice); a table showing round
    a mat is a step that no quadratic follows.
    """
    mask = np.zeros(lab_tiny.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.rint(corners_tiny).astype(np.int32)], 1)
    eroded = cv2.erode(mask, np.ones((5, 5), np.uint8))
    rows, cols = np.nonzero(eroded)
    if len(rows) < 20:
        return 0.0, np.zeros(3)
    inside = lab_tiny[rows, cols].astype(np.float64)
    med = np.median(inside, axis=0)
    scale = float(max(lab_tiny.shape[:2]))
    x, y = cols / scale, rows / scale
    design = np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=1)
    keep = np.ones(len(inside), bool)
    resid = inside - med
    for _ in range(2):
        coef, *_ = np.linalg.lstsq(design[keep], inside[keep], rcond=None)
        resid = inside - design @ coef
        keep = (np.hypot(resid[:, 1], resid[:, 2]) < 6.0) & (np.abs(resid[:, 0]) < 15.0)
        if keep.sum() < 20:
            break
    return float(keep.mean()), np.asarray(med, np.float64)


def _quads_in_view(
    pairs: list[tuple[int, int, float]], crossing: FloatArray, size_wh: tuple[int, int]
) -> tuple[npt.NDArray[np.intp], FloatArray]:
    """Two pairs of opposite sides that can bound the mat: line indices (n, 4), corners (n, 4, 2).

    Every two pairs of four different lines, whose directions differ by at
    least 25 degrees, and whose four corners (``crossing``, (L, L, 2) px) lie
    in the picture, in the order of :func:`itertools.combinations`. A cluttered
    photo has tens of thousands of such combinations: they are judged all at
    once here, and only the few left one at a time. The corners of lines
    (i, j, k, m) run i-k, k-j, j-m, m-i round the quadrilateral.
    """
    w, h = size_wh
    if len(pairs) < 2:
        return np.empty((0, 4), np.intp), np.empty((0, 4, 2))
    lines = np.array([(i, j) for i, j, _ in pairs], np.intp)
    theta = np.array([t for _, _, t in pairs], np.float64)
    first, second = np.triu_indices(len(pairs), 1)
    i, j = lines[first, 0], lines[first, 1]
    k, m = lines[second, 0], lines[second, 1]
    distinct = (i != k) & (i != m) & (j != k) & (j != m)
    dfam = np.abs((theta[first] - theta[second] + np.pi / 2) % np.pi - np.pi / 2)
    keep = distinct & (dfam >= np.deg2rad(25))
    i, j, k, m = i[keep], j[keep], k[keep], m[keep]
    quad = np.stack([crossing[i, k], crossing[k, j], crossing[j, m], crossing[m, i]], axis=1)
    # NaN (parallel lines) fails every comparison, so it is not "in view".
    in_view = (
        np.all(quad >= -1.5, axis=(1, 2))
        & np.all(quad[:, :, 0] <= w + 0.5, axis=1)
        & np.all(quad[:, :, 1] <= h + 0.5, axis=1)
    )
    lines_ijkm = np.asarray(np.column_stack([i, j, k, m])[in_view], np.intp)
    return lines_ijkm, np.asarray(quad[in_view], np.float64)


def find_mat_quad(image_bgr: UInt8Array) -> MatQuad | CalibrationFailure:
    """Find the mat's outline roughly (to a pixel or two of the working copy).

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray

    Returns
    -------
    MatQuad or CalibrationFailure
    """
    found = find_mat_quads(image_bgr, max_count=1)
    if isinstance(found, CalibrationFailure):
        return found
    return found[0][0]


def find_mat_quads(
    image_bgr: UInt8Array, *, max_count: int = 3, coarse: bool = False
) -> tuple[tuple[MatQuad, ...], bool] | CalibrationFailure:
    """The best few outlines that could be the mat, best first.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    max_count : int
    coarse : bool
        Also look for edges on copies a half and a third the working size, and
        count an edge seen there as support. A felt close to the table's colour
        on a grained or textured table makes a step of a few Lab units that the
        texture breaks into pieces too short for the line detector; averaged
        over more pixels, the step stays and the texture fades. Slower, and
        more lines mean more outlines to judge, so it is the fallback.

    Returns
    -------
    (quads, partial_in_view) or CalibrationFailure
        ``partial_in_view`` says whether a uniform region running out of the
        picture was also seen: if none of the quads fits a camera, the mat is
        probably only partly in view.
    """
    h_full, w_full = image_bgr.shape[:2]
    if min(h_full, w_full) < MIN_IMAGE_SIDE_PX:
        return CalibrationFailure(
            FailureReason.IMAGE_TOO_SMALL,
            f"the image is {w_full}x{h_full} pixels; calibration needs at least "
            f"{MIN_IMAGE_SIDE_PX} pixels on each side (use the camera's full resolution)",
        )
    small, scale = _resize_to_width(image_bgr, WORK_WIDTH_PX)
    h, w = small.shape[:2]
    lab_u8 = np.asarray(
        cv2.cvtColor(cv2.GaussianBlur(small, (0, 0), 1.5), cv2.COLOR_BGR2Lab), np.uint8
    )
    theta_map, strength_map = _orientation_field(lab_u8.astype(np.float32))
    edge_level = float(np.percentile(strength_map, 60))

    segs = _segments(lab_u8, min_length_px=w / 25)
    coarse_maps: list[tuple[FloatArray, FloatArray, float]] = []
    if coarse:
        found_segs = [segs]
        for factor in COARSE_FACTORS:
            coarse_bgr, _ = _resize_to_width(small, int(round(w / factor)))
            coarse_lab = np.asarray(
                cv2.cvtColor(cv2.GaussianBlur(coarse_bgr, (0, 0), 1.0), cv2.COLOR_BGR2Lab),
                np.uint8,
            )
            up = w / coarse_lab.shape[1]
            found_segs.append(_segments(coarse_lab, min_length_px=coarse_lab.shape[1] / 25) * up)
            c_theta, c_strength = _orientation_field(coarse_lab.astype(np.float32))
            coarse_maps.append(
                (
                    np.asarray(
                        cv2.resize(c_theta, (w, h), interpolation=cv2.INTER_NEAREST), np.float64
                    ),
                    np.asarray(
                        cv2.resize(c_strength, (w, h), interpolation=cv2.INTER_LINEAR), np.float64
                    ),
                    float(np.percentile(c_strength, 60)),
                )
            )
        segs = np.asarray(np.vstack(found_segs), np.float64)
    lines = _merge_segments(segs, min_total_px=w / 12)
    # The longest lines first; a mat edge is among the longest in any view of it.
    lines.sort(key=lambda ln: -ln.length_px)
    lines = lines[:36]
    borders = [
        _Line(theta=0.0, rho=0.0, border=True),
        _Line(theta=np.pi / 2, rho=0.0, border=True),
        _Line(theta=0.0, rho=float(w - 1), border=True),
        _Line(theta=np.pi / 2, rho=float(h - 1), border=True),
    ]
    all_lines = lines + borders
    profiles = [_support_profile(ln, theta_map, strength_map, edge_level) for ln in all_lines]
    for c_theta, c_strength, c_level in coarse_maps:
        profiles = [
            (
                t,
                np.asarray(
                    np.maximum(prof, _support_profile(ln, c_theta, c_strength, c_level)[1]),
                    np.float64,
                ),
            )
            for ln, (t, prof) in zip(all_lines, profiles, strict=True)
        ]

    tiny, tiny_scale = _resize_to_width(np.asarray(cv2.medianBlur(small, 5), np.uint8), 160)
    lab_tiny = cv2.cvtColor(tiny, cv2.COLOR_BGR2Lab).astype(np.float32)
    tiny_from_work = tiny_scale

    # Pairs of roughly opposite sides (oblique views converge them by up to ~60 degrees).
    n = len(all_lines)
    pairs = []
    for i, j in itertools.combinations(range(n), 2):
        a, b = all_lines[i], all_lines[j]
        dtheta = abs((a.theta - b.theta + np.pi / 2) % np.pi - np.pi / 2)
        if dtheta > np.deg2rad(70):
            continue
        centre = np.array([w / 2, h / 2])
        gap = abs(centre @ a.normal - a.rho) + abs(centre @ b.normal - b.rho)
        sep = abs(abs(centre @ a.normal - a.rho) - abs(centre @ b.normal - b.rho))
        # Opposite sides lie on either side of something: demand a real gap.
        if min(gap, sep + gap) < 0.08 * min(w, h):
            continue
        # Mean direction of the pair: average the doubled angles (lines are mod 180).
        mean2 = np.arctan2(
            np.sin(2 * a.theta) + np.sin(2 * b.theta), np.cos(2 * a.theta) + np.cos(2 * b.theta)
        )
        pairs.append((i, j, float(mean2 / 2)))

    # Every pairwise intersection once (Cramer's rule), NaN for parallel lines,
    # and its position along each line.
    normals = np.array([ln.normal for ln in all_lines])
    rhos = np.array([ln.rho for ln in all_lines])
    det = normals[:, None, 0] * normals[None, :, 1] - normals[:, None, 1] * normals[None, :, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross_x = (rhos[:, None] * normals[None, :, 1] - normals[:, None, 1] * rhos[None, :]) / det
        cross_y = (normals[:, None, 0] * rhos[None, :] - rhos[:, None] * normals[None, :, 0]) / det
    parallel = np.abs(det) < 1e-6
    cross_x[parallel] = np.nan
    cross_y[parallel] = np.nan
    crossing = np.stack([cross_x, cross_y], axis=2)
    directions = np.array([ln.direction for ln in all_lines])
    feet = normals * rhos[:, None]
    along = np.einsum("ijk,ik->ij", crossing - feet[:, None, :], directions)

    candidates = []
    in_view, quads = _quads_in_view(pairs, crossing, (w, h))
    for (i, j, k, m), quad in zip(in_view.tolist(), quads, strict=True):
        hull = cv2.convexHull(quad.astype(np.float32), returnPoints=False)
        if len(hull) != 4:
            continue
        area = abs(float(cv2.contourArea(quad.astype(np.float32))))
        if area < 0.05 * w * h:
            continue
        side_len = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
        pair_a, pair_b = side_len[0] + side_len[2], side_len[1] + side_len[3]
        # A 2:1 mat seen up to ~55 degrees from vertical stays within 5:1 in the image;
        # a strip of table between two edges does not.
        if max(pair_a, pair_b) > 5.0 * min(pair_a, pair_b):
            continue
        sides = ((i, k, m), (k, i, j), (j, k, m), (m, i, j))
        support = []
        for line_idx, e1, e2 in sides:
            t1, t2 = float(along[line_idx, e1]), float(along[line_idx, e2])
            t_line, prof_line = profiles[line_idx]
            support.append(_side_support(t_line, prof_line, t1, t2))
        s = np.array(support)
        if s.min() < 0.5:
            continue
        n_border = sum(all_lines[q].border for q in (i, j, k, m))
        # The image border alone says nothing: a mat partly out of frame still
        # shows at least one of its edges.
        if n_border == 4:
            continue
        border = n_border > 0
        # Larger is better: a strip of table between two edges is uniform too.
        score = float(s.min() * s.mean() * np.sqrt(area / (w * h)))
        candidates.append((score, quad, s, border))

    if not candidates:
        return CalibrationFailure(
            FailureReason.NO_MAT,
            "no mat found: no four long straight edges enclose a felt-coloured region; "
            "make sure the whole mat is in view (not too close) and lit, or give the four "
            "corners by hand",
        )
    candidates.sort(key=lambda c: -c[0])

    Scored = tuple[float, FloatArray, FloatArray, float, FloatArray]

    def uniform_ones(use_border: bool, limit: int) -> list[Scored]:
        found: list[Scored] = []
        for score, quad, s, border in candidates:
            if border != use_border:
                continue
            uni, felt = _uniformity(lab_tiny, quad * tiny_from_work)
            if uni >= _MIN_UNIFORMITY:
                found.append((score * uni**2, quad, s, uni, felt))
            if len(found) >= limit:
                break
        found.sort(key=lambda c: -c[0])
        return found

    # A whole mat in view beats any explanation that needs the image border.
    whole = uniform_ones(use_border=False, limit=60)
    # A uniform region running off the picture suggests a mat partly in view,
    # unless it merely holds a whole rectangle (a mat with a margin of table).
    partial_in_view = any(
        not any(_inside(w_[1], p_[1]) for w_ in whole)
        for p_ in uniform_ones(use_border=True, limit=10)
    )
    if not whole:
        if partial_in_view:
            return CalibrationFailure(
                FailureReason.MAT_PARTLY_OUT_OF_FRAME,
                "no whole mat in view: not all four of its edges were found, and a uniform "
                "region (perhaps the mat) runs out of the picture; move the camera back or zoom "
                "out until the whole mat and some table show, or give the four corners by hand",
            )
        return CalibrationFailure(
            FailureReason.NO_MAT,
            "no mat found: the straight edges in view do not enclose a uniform felt region; "
            "make sure the whole mat is in view, or give the four corners by hand",
        )
    if coarse:
        # Faint edges make many outlines of table and floor as good as the mat's;
        # the baselines (rule 2.3.1), thin lines of strong contrast, tell the mat.
        light = np.asarray(lab_u8[:, :, 0], np.float32)
        evidence = [_baseline_evidence(c[1], light) for c in whole]
        order = sorted(range(len(whole)), key=lambda k: -evidence[k])
        whole = [whole[k] for k in order if evidence[k] >= MIN_COARSE_BASELINE_EVIDENCE]
        if not whole:
            return CalibrationFailure(
                FailureReason.NO_MAT,
                "no mat found: no outline of faint edges shows the mat's baselines; make "
                "sure the whole mat is in view, or give the four corners by hand",
            )
    best = whole[0]
    # A mat lies on a table, and a pale mat on a pale table top can make the table
    # look like the best rectangle: prefer a good rectangle inside the best one
    # whose colour differs from the ring around it.
    while not coarse:
        inner = [
            c for c in whole if c is not best and _nested_mat(c, best, lab_tiny, tiny_from_work)
        ]
        if not inner:
            break
        best = inner[0]
    ranked = [best] + [c for c in whole if c is not best]
    chosen: list[MatQuad] = []
    for _, quad, s, uni, felt in ranked:
        full = (_clockwise(quad) + 0.5) / scale - 0.5
        if any(np.abs(q.corners_image_xy_px - full).max() < 3.0 / scale for q in chosen):
            continue
        chosen.append(
            MatQuad(corners_image_xy_px=full, side_support=s, uniformity=uni, felt_lab=felt)
        )
        if len(chosen) >= max_count:
            break
    return tuple(chosen), partial_in_view


def _baseline_evidence(quad_work: FloatArray, light: npt.NDArray[np.float32]) -> float:
    """How plainly the outline shows the four baselines where a mat would have them.

    The outline's corners map the mat onto the working copy (either pair of
    sides may be the long one; the better is kept). Along each predicted
    baseline the lightness is compared with the felt a few pixels either side:
    a thin line shows as a dip (or a rise) of one sign. Returns the sum over
    the baselines of the fraction of points showing one, 0-4.
    """
    h, w = light.shape
    best = 0.0
    ccw = np.asarray(quad_work, np.float64)[::-1]
    for shift in (0, 1):
        corners = np.roll(ccw, -shift, axis=0)
        hom = cv2.getPerspectiveTransform(
            MAT_CORNERS_MM.astype(np.float32), corners.astype(np.float32)
        )
        total = 0.0
        for corner in MAT_CORNERS_MM:
            on_long, on_short, _ = baseline_segment_mm(corner)
            frac = np.linspace(0.1, 0.9, 24)[:, None]
            ends = cv2.perspectiveTransform(
                np.array([[on_long, on_short]], np.float64), hom
            ).reshape(2, 2)
            pts = ends[0] + frac * (ends[1] - ends[0])
            across = _profiles_across(light, pts, ends[1] - ends[0], np.arange(-7.0, 7.5, 1.0))
            if across is None:
                continue
            shown = _line_shown_fraction(across[0], core_margin=3, min_contrast=_LINE_CONTRAST_L)
            total += float(shown)
        best = max(best, total)
    return best


def _profiles_across(
    light: npt.NDArray[np.float32],
    points_px: npt.ArrayLike,
    along_px: npt.ArrayLike,
    offsets_px: npt.ArrayLike,
) -> tuple[npt.NDArray[np.float32], FloatArray] | None:
    """Lightness profiles across a straight segment, and the segment's unit normal.

    Parameters
    ----------
    light : (H, W) float32 ndarray
    points_px : (n, 2) ndarray
        Points on the segment.
    along_px : (2,) ndarray
        The segment's direction and length, px.
    offsets_px : (m,) ndarray
        Where each profile is sampled along the normal.

    Returns
    -------
    (n, m) float32 ndarray and (2,) ndarray, or None
        None when the segment is under 8 px long (or not finite) or a profile
        leaves the picture.
    """
    along = np.asarray(along_px, np.float64)
    points = np.asarray(points_px, np.float64)
    offsets = np.asarray(offsets_px, np.float64)
    length = float(np.hypot(*along))
    if not np.isfinite(length) or length < 8.0:
        return None
    normal = np.array([-along[1], along[0]]) / length
    xy = points[:, None, :] + offsets[None, :, None] * normal[None, None, :]
    vals = cv2.remap(
        light,
        xy[:, :, 0].astype(np.float32),
        xy[:, :, 1].astype(np.float32),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=np.nan,
    )
    if not np.all(np.isfinite(vals)):
        return None
    return np.asarray(vals, np.float32), np.asarray(normal, np.float64)


def _line_shown_fraction(
    vals: npt.NDArray[np.float32], *, core_margin: int, min_contrast: float
) -> float:
    """Share of the profiles (n, m) across a predicted baseline that show a thin line there.

    The middle (all but ``core_margin`` samples at each end) is compared with
    the felt two samples in from either end: a line is a dip (or a rise) of
    more than ``min_contrast`` L units with little of the other sign. Texture
    makes both; a line makes one clearly, and the same all along.
    """
    side = 0.5 * (vals[:, :2].mean(axis=1) + vals[:, -2:].mean(axis=1))
    core = vals[:, core_margin:-core_margin]
    dip = side - core.min(axis=1)
    rise = core.max(axis=1) - side
    return max(
        float(np.mean((dip > min_contrast) & (rise < 0.5 * dip))),
        float(np.mean((rise > min_contrast) & (dip < 0.5 * rise))),
    )


def _inside(inner_quad: FloatArray, outer_quad: FloatArray) -> bool:
    """Whether every corner of ``inner_quad`` lies within ``outer_quad`` (2 px slack)."""
    contour = outer_quad.astype(np.float32).reshape(-1, 1, 2)
    return all(
        cv2.pointPolygonTest(contour, (float(x), float(y)), True) > -2.0 for x, y in inner_quad
    )


def _nested_mat(
    inner: tuple[float, FloatArray, FloatArray, float, FloatArray],
    outer: tuple[float, FloatArray, FloatArray, float, FloatArray],
    lab_tiny: npt.NDArray[np.float32],
    tiny_from_work: float,
) -> bool:
    """Whether ``inner`` is a felt rectangle lying on the region ``outer`` outlines."""
    inner_quad, outer_quad = inner[1], outer[1]
    contour = outer_quad.astype(np.float32).reshape(-1, 1, 2)
    inside = all(
        cv2.pointPolygonTest(contour, (float(x), float(y)), True) > 2.0 for x, y in inner_quad
    )
    area_in = abs(float(cv2.contourArea(inner_quad.astype(np.float32))))
    area_out = abs(float(cv2.contourArea(outer_quad.astype(np.float32))))
    if not inside or area_in < 0.25 * area_out or min(inner[2]) < 0.6:
        return False
    ring = np.zeros(lab_tiny.shape[:2], np.uint8)
    cv2.fillPoly(ring, [np.rint(outer_quad * tiny_from_work).astype(np.int32)], 1)
    cv2.fillPoly(ring, [np.rint(inner_quad * tiny_from_work).astype(np.int32)], 0)
    ring_core = cv2.erode(ring, np.ones((3, 3), np.uint8))
    pixels = lab_tiny[ring_core > 0]
    if len(pixels) < 20:
        return False
    ring_lab = np.median(pixels, axis=0)
    return bool(np.linalg.norm(ring_lab - inner[4]) > 8.0)


def _clockwise(quad: FloatArray) -> FloatArray:
    """Order corners clockwise in the image (y down), starting at the top-left-most."""
    centre = quad.mean(axis=0)
    ang = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    q = quad[np.argsort(ang)]
    start = int(np.argmin(q.sum(axis=1)))
    return np.roll(q, -start, axis=0)
