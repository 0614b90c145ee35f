"""Find the mat's outline from its four baselines when its edges are too faint.

A felt close to the table's colour (beige felt on a pale wooden top) shows
edges of a few Lab units under the wood's grain, too faint and too broken for
the line search of :mod:`calibration.mat`. The baselines (rule 2.3.1) stay
plain: thin lines of strong contrast on the felt, which grain does not
imitate in pairs at the right angles and distances. Rule 2.3.1 fixes where
they are on the mat, so two of them, matched end for end, give a homography
from the mat to the image; the two others then either show where it predicts
them or the match was wrong. The outline this gives is within a few pixels,
for :func:`calibration.pipeline.fit_from_outline` (with ``rough=True``) to
refine.
"""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares

from calibration.fit import MAT_CORNERS_MM, baseline_segment_mm
from calibration.mat import (
    MatQuad,
    _clockwise,
    _line_shown_fraction,
    _profiles_across,
    _uniformity,
)

FloatArray = npt.NDArray[np.float64]
UInt8Array = npt.NDArray[np.uint8]

#: Widths the line segments are looked for at, px: far baselines in an oblique
#: view are a pixel wide at full size, and a grainy near one is clearer smaller.
_SEARCH_WIDTHS_PX = (960, 1920)
#: Width of the copy on which the predicted baselines are checked, px.
_CHECK_WIDTH_PX = 960
#: Shortest segment considered, as a fraction of the search copy's width.
_MIN_SEGMENT_FRACTION = 0.025
#: Most segments paired (the longest): pairs grow with its square.
_MAX_SEGMENTS = 40
#: Lightness step (8-bit Lab L) of a line against the felt either side.
_LINE_CONTRAST_L = 6.0
#: A predicted baseline counts as shown when this fraction of it shows a line.
_SHOWN_FRACTION = 0.5
#: Hypotheses refitted to all the segments and ranked again.
_REFINED_COUNT = 12
#: Outlines whose corners differ by less than this fraction of the image
#: diagonal are one (the fit refines either the same way).
_SAME_OUTLINE_FRACTION = 0.015
#: The mat and its baselines, in the order used for hypotheses.
_BASELINE_ENDS_MM = np.array([baseline_segment_mm(c)[:2] for c in MAT_CORNERS_MM])


def _line_segments(image_bgr: UInt8Array) -> FloatArray:
    """Thin dark or light straight lines ``(x1, y1, x2, y2)`` in full-size pixels."""
    found = []
    lsd = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))
    for width in _SEARCH_WIDTHS_PX:
        scale = min(1.0, width / image_bgr.shape[1])
        small = cv2.resize(image_bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        light = cv2.cvtColor(cv2.GaussianBlur(small, (0, 0), 0.7), cv2.COLOR_BGR2Lab)[:, :, 0]
        # A thin line is what the black-hat (dark) or top-hat (light) keeps;
        # the felt/table step and lighting are gone from both.
        for op in (cv2.MORPH_BLACKHAT, cv2.MORPH_TOPHAT):
            ridge = cv2.GaussianBlur(cv2.morphologyEx(light, op, kernel), (0, 0), 1.0)
            segs = lsd.detect(ridge)[0]
            if segs is None:
                continue
            segs = np.asarray(segs, np.float64).reshape(-1, 4)
            length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
            segs = segs[length >= _MIN_SEGMENT_FRACTION * small.shape[1]]
            found.append((segs + 0.5) / scale - 0.5)
        if scale == 1.0:
            break
    if not found:
        return np.zeros((0, 4))
    segs = np.vstack(found)
    length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    return np.asarray(segs[np.argsort(-length)][:_MAX_SEGMENTS], np.float64)


def _shown_fractions(hom: FloatArray, light: npt.NDArray[np.float32], scale: float) -> FloatArray:
    """Per baseline, the fraction of points along its predicted line that show a thin line.

    ``hom`` maps mat mm to full-size pixels; ``light`` is the check copy, ``scale``
    its size over the full size. A line shows as a dip (or rise) of one sign
    against the felt a few pixels either side, all along.
    """
    frac = np.linspace(0.1, 0.9, 24)[:, None]
    ends = cv2.perspectiveTransform(_BASELINE_ENDS_MM.reshape(1, -1, 2), hom).reshape(4, 2, 2)
    ends = (ends + 0.5) * scale - 0.5
    shown = np.zeros(4)
    for b in range(4):
        pts = ends[b, 0] + frac * (ends[b, 1] - ends[b, 0])
        across = _profiles_across(light, pts, ends[b, 1] - ends[b, 0], np.arange(-7.0, 7.5, 1.0))
        if across is None:
            continue
        shown[b] = _line_shown_fraction(across[0], core_margin=4, min_contrast=_LINE_CONTRAST_L)
    return shown


def _plausible(hom: FloatArray, size_wh: tuple[int, int]) -> bool:
    """Whether ``hom`` puts a whole, convex, not tiny mat in the picture, as a camera would."""
    w, h = size_wh
    corners = cv2.perspectiveTransform(MAT_CORNERS_MM.reshape(1, -1, 2), hom).reshape(4, 2)
    if not np.all(np.isfinite(corners)):
        return False
    if np.any(corners < -1.0) or np.any(corners[:, 0] > w) or np.any(corners[:, 1] > h):
        return False
    # A camera in front of the mat sees every mat point with the same sign of
    # the homography's last row (no point at infinity between them).
    depth = np.c_[MAT_CORNERS_MM, np.ones(4)] @ hom[2]
    if not (np.all(depth > 0) or np.all(depth < 0)):
        return False
    area = abs(float(cv2.contourArea(corners.astype(np.float32))))
    hull = cv2.convexHull(corners.astype(np.float32), returnPoints=False)
    return len(hull) == 4 and area >= 0.05 * w * h


def _ridge_points(
    hom: FloatArray, light: npt.NDArray[np.float32], scale: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mat points along each baseline, where the line crosses there, and the normal.

    Returns ``(mat_mm (K, 2), image_px (K, 2), normal (K, 2))`` in full-size
    pixels, for the points along a predicted baseline that show the line.
    """
    frac = np.linspace(0.1, 0.9, 24)[:, None]
    mats, images, normals = [], [], []
    offsets = np.arange(-7.0, 7.5, 0.5)
    for on_long, on_short in _BASELINE_ENDS_MM:
        pts_mm = on_long + frac * (on_short - on_long)
        pts = cv2.perspectiveTransform(pts_mm.reshape(1, -1, 2), hom).reshape(-1, 2)
        pts = (pts + 0.5) * scale - 0.5
        across = _profiles_across(light, pts, pts[-1] - pts[0], offsets)
        if across is None:
            continue
        vals, normal = across
        dev = vals - np.median(vals, axis=1, keepdims=True)
        sign = 1.0 if np.median(dev.max(axis=1)) > np.median(-dev.min(axis=1)) else -1.0
        idx = np.argmax(sign * dev, axis=1)
        ok = (sign * dev[np.arange(len(dev)), idx] > _LINE_CONTRAST_L) & (idx > 0)
        ok &= idx < len(offsets) - 1
        if ok.sum() < 6:
            continue
        found = pts[ok] + offsets[idx[ok], None] * normal[None, :]
        mats.append(pts_mm[ok])
        images.append((found + 0.5) / scale - 0.5)
        normals.append(np.tile(normal, (int(ok.sum()), 1)))
    if not mats:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2))
    return np.vstack(mats), np.vstack(images), np.vstack(normals)


def _across_line_residual(
    params: FloatArray, mat_mm: FloatArray, image_px: FloatArray, normal: FloatArray
) -> FloatArray:
    """Distances (px) across their lines from where the homography puts the points."""
    hom = np.append(params, 1.0).reshape(3, 3)
    proj = cv2.perspectiveTransform(mat_mm.reshape(1, -1, 2), hom).reshape(-1, 2)
    return np.asarray(np.sum((proj - image_px) * normal, axis=1), np.float64)


def _refined(hom: FloatArray, light: npt.NDArray[np.float32], scale: float) -> FloatArray:
    """The homography refitted to where the four baselines cross across their lines.

    Only the distance across each line counts (where along it a point lies
    is not seen), so the four lines, two numbers each, fix the homography.
    """
    for _ in range(3):
        mat_mm, image_px, normal = _ridge_points(hom, light, scale)
        if len(mat_mm) < 24:
            return hom
        start = hom.reshape(-1)[:8] / hom[2, 2]

        fitted = least_squares(
            _across_line_residual,
            start,
            args=(mat_mm, image_px, normal),
            loss="soft_l1",
            f_scale=1.0 / scale,
            x_scale="jac",
        )
        hom = np.append(fitted.x, 1.0).reshape(3, 3)
    return hom


def find_mat_quads_from_baselines(
    image_bgr: UInt8Array, *, max_count: int = 3
) -> tuple[MatQuad, ...]:
    """Outlines of the mat implied by pairs of line segments taken for its baselines.

    Every pair of thin straight lines is matched to two of the four baselines
    (each way round); the homography that match gives must put a whole mat in
    the picture, and is scored by how much of all four predicted baselines
    shows a line. Only those showing all four are kept, best first.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    max_count : int

    Returns
    -------
    tuple of MatQuad
        Possibly empty. ``side_support`` is NaN (the edges were not used).
    """
    h, w = image_bgr.shape[:2]
    segs = _line_segments(image_bgr)
    scale = min(1.0, _CHECK_WIDTH_PX / w)
    small = cv2.resize(image_bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    light = np.asarray(
        cv2.cvtColor(cv2.GaussianBlur(small, (0, 0), 0.7), cv2.COLOR_BGR2Lab)[:, :, 0], np.float32
    )
    ends_mm = _BASELINE_ENDS_MM.astype(np.float32)
    scored: list[tuple[float, FloatArray]] = []
    for i, j in itertools.combinations(range(len(segs)), 2):
        a, b = segs[i].reshape(2, 2), segs[j].reshape(2, 2)
        # Two baselines are tens of their widths apart, and neither holds the other.
        if np.linalg.norm(a.mean(axis=0) - b.mean(axis=0)) < 0.5 * max(
            np.linalg.norm(a[1] - a[0]), np.linalg.norm(b[1] - b[0])
        ):
            continue
        # The mat's symmetries map any baseline to the first: only the second's
        # corner and both ends' order are unknown.
        for other, flip_a, flip_b in itertools.product((1, 2, 3), (False, True), (False, True)):
            src = np.vstack([ends_mm[0], ends_mm[other]])
            dst = np.vstack([a[::-1] if flip_a else a, b[::-1] if flip_b else b])
            try:
                hom = np.asarray(
                    cv2.getPerspectiveTransform(src, dst.astype(np.float32)), np.float64
                )
            except cv2.error:
                continue  # degenerate: three of the four ends in a line
            if not _plausible(hom, (w, h)):
                continue
            shown = _shown_fractions(hom, light, scale)
            if np.all(shown >= _SHOWN_FRACTION):
                scored.append((float(shown.sum()), hom))
    scored.sort(key=lambda s: -s[0])
    # Refit the best few to every segment end where a baseline should end, and
    # rank them again: a homography from two baselines is extrapolated to the
    # far corners, one from all of them is not.
    refined = []
    for _, hom in scored[:_REFINED_COUNT]:
        hom = _refined(hom, light, scale)
        if _plausible(hom, (w, h)):
            refined.append((float(_shown_fractions(hom, light, scale).sum()), hom))
    refined.sort(key=lambda s: -s[0])
    tiny_scale = 160 / w
    tiny = cv2.resize(image_bgr, None, fx=tiny_scale, fy=tiny_scale, interpolation=cv2.INTER_AREA)
    lab_tiny = cv2.cvtColor(tiny, cv2.COLOR_BGR2Lab).astype(np.float32)
    chosen: list[MatQuad] = []
    same_px = _SAME_OUTLINE_FRACTION * float(np.hypot(w, h))
    for _, hom in refined:
        corners = cv2.perspectiveTransform(MAT_CORNERS_MM.reshape(1, -1, 2), hom).reshape(4, 2)
        corners = _clockwise(np.asarray(corners, np.float64))
        # Several pairs of the same four baselines give the same outline.
        if any(np.abs(q.corners_image_xy_px - corners).max() < same_px for q in chosen):
            continue
        uniformity, felt = _uniformity(lab_tiny, (corners + 0.5) * tiny_scale - 0.5)
        chosen.append(
            MatQuad(
                corners_image_xy_px=corners,
                side_support=np.full(4, np.nan),
                uniformity=uniformity,
                felt_lab=felt,
            )
        )
        if len(chosen) >= max_count:
            break
    return tuple(chosen)
