"""One frame in, one board out: detection, hidden regions, squops, statuses.

``prepare_context`` does once what a still camera allows doing once (the
mat's outline and mask in the image, the pot's mask, the frame size);
``analyze_frame`` then analyses each frame with it::

    context = prepare_context(calibration)
    analysis = analyze_frame(image_bgr, context)
    analysis.board            # rules.board.Board, validated, with tiddlies
    analysis.hidden_regions   # parts of the mat nobody can see (hands)
    analysis.timings_ms       # per stage

A frame with hands over the mat is analysed, with the hidden parts reported
rather than guessed; winks seen there are not trusted.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from calibration.fit import MAT_CORNERS_MM
from rules.board import (
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    POT_BASE_DIAMETER_MM,
    POT_HEIGHT_MM,
    POT_TOP_DIAMETER_MM,
    Board,
    Colour,
)
from vision.board_builder import BoardAssembly, assemble_board
from vision.colour import column_medians
from vision.detections import WinkDetections
from vision.squop import K_SIGMA
from vision.status import DEFAULT_CORNERS_MM, corners_from_unplayed

FloatArray = npt.NDArray[np.float64]
Detector = Callable[..., WinkDetections]

#: Hidden-region search runs on a frame shrunk by this factor (speed).
HIDDEN_SCALE = 8
#: A blob over the mat smaller than this is not a hidden region (winks and
#: small piles are smaller; hands, mugs and phones are larger), mm^2.
HIDDEN_MIN_AREA_MM2 = 3000.0
#: Colour distance (Lab units) from the felt above which a pixel is not felt.
FELT_DISTANCE = 14.0
#: Felt under a brighter light (a lamp's hot spot) keeps its hue: every
#: channel is the felt's times one gain, as sRGB's power law keeps ratios
#: (a hot spot on generated green felt: 1.40, 1.39, 1.40). A pixel that is
#: the felt's colour brightened by a gain in this range ...
BRIGHTER_FELT_GAIN = (1.0, 2.0)
#: ... to within this angle between the two as BGR vectors (degrees) is felt.
#: Felt at 1/8 scale lies within 1.1 degrees of its neighbourhood's (99th
#: percentile, lit or not); skin on green felt 22-28 degrees away.
BRIGHTER_FELT_ANGLE_DEG = 2.0
#: Only a felt this far from grey (degrees between it and the grey axis as
#: BGR vectors) has a hue that tells brighter felt from a pale object: on
#: grey, beige and off-white felt (1-6 degrees) a white sleeve or paper is
#: the felt brightened, so the model would hide it (pasted pale objects
#: found 180 -> 146 of 180 on grey felt); green felt is 15 degrees away.
BRIGHTER_FELT_MIN_HUE_DEG = 10.0
#: A channel this bright may be clipped, so its ratio says nothing.
BRIGHTER_FELT_CLIPPED = 250.0
#: When this much of the mat is not felt, the mat is not where the
#: calibration says: a wrong calibration or a photo without the mat.
NOT_A_MAT_FRACTION = 0.6
#: A view coarser than this somewhere on the mat (mm per pixel) gets a note
#: that winks will be missed. 1080p webcams over the mat, and tripods at the
#: side, see the far corner at 1.3-2.0 mm a pixel (shared scenes, samples and
#: generated sets); the same scenes at 1280x720 at 1.95-3.0, where recall fell
#: from 98.9 to 93.9 % and exact tiddlies from 3 to 0 of 8 (docs/benchmarks.md,
#: "A 720p webcam").
COARSE_VIEW_MM_PER_PX = 2.2
#: What a view that coarse means, and what to do (said by ``analyze``, ``count``
#: and ``calibrate``).
COARSE_VIEW_ADVICE = (
    "at this resolution winks partly under others and faint winks are often missed; "
    "a 1080p camera, or one nearer the mat, sees them"
)
#: Below this Lab distance between just inside and just outside the mat's
#: edge, no edge is where the calibration puts one (the shared scenes' mats
#: show 11-103 across their edges; a bare table about 2).
MIN_EDGE_CONTRAST = 5.0


class MatNotVisibleError(ValueError):
    """The calibrated mat area of the frame does not look like a mat."""


class DetectorUnavailableError(ValueError):
    """No wink detector is installed and no detections were given."""


@dataclass(frozen=True)
class HiddenRegion:
    """A part of the mat covered by something that is neither felt nor a wink.

    Parameters
    ----------
    image_polygon_px : (k, 2) ndarray
        Outline in the image, pixels.
    mat_polygon_mm : (k, 2) ndarray
        The same outline on the mat (z = 0), mm.
    area_mm2 : float
        Plan area on the mat.
    """

    image_polygon_px: FloatArray
    mat_polygon_mm: FloatArray
    area_mm2: float

    def contains_mat_xy(self, mat_xy_mm: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether plan-view points lie inside the region."""
        pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float))
        contour = self.mat_polygon_mm.astype(np.float32).reshape(-1, 1, 2)
        return np.array(
            [cv2.pointPolygonTest(contour, (float(p[0]), float(p[1])), False) >= 0 for p in pts],
            dtype=bool,
        )

    def to_json_dict(self) -> dict[str, Any]:
        """JSON form: outlines rounded to 0.1 px / 0.1 mm."""
        return {
            "area_mm2": round(self.area_mm2, 0),
            "image_polygon_px": np.round(self.image_polygon_px, 1).tolist(),
            "mat_polygon_mm": np.round(self.mat_polygon_mm, 1).tolist(),
        }


@dataclass(frozen=True, eq=False)
class FrameContext:
    """What a still camera lets us compute once and reuse for every frame.

    Parameters
    ----------
    camera : CameraModel
    corners_mm : mapping of Colour to (2,) tuple
        Each colour's corner (rule 5.2) in the canonical frame.
    pot_centre_mm : (2,) tuple
    colour_reference : object or None
        The calibration's colour reference, passed on to the detector.
    mat_polygon_px : (k, 2) ndarray
        The mat's outline in the image (edges sampled, distortion included).
    mat_mask_small : (h, w) uint8 ndarray
        The mat without the pot, in the frame shrunk by ``HIDDEN_SCALE``.
    mm2_per_px_small : (h, w) ndarray
        Mat area of each shrunk pixel, mm^2.
    edge_bands_px : tuple of pairs of (k, 2) ndarray
        Per side of the mat in view, points just inside and just outside
        its edge in the image: the mat's edge must show there.
    mat_out_of_view_fraction : float
        Fraction of the mat's area outside the frame.
    orientation_known : bool
        False when the calibration could not tell blue's corner.
    corners_read : bool
        The corners were read (by the calibration, or given), not the
        default layout.
    mapping_sigma_mm : float
        The calibration's one-sigma uncertainty of where a pixel lies on the
        mat (its largest over the mat), mm; 0 for a bare camera taken as exact.
    """

    camera: CameraModel
    corners_mm: Mapping[Colour, tuple[float, float]]
    pot_centre_mm: tuple[float, float]
    colour_reference: Any
    mat_polygon_px: FloatArray
    mat_mask_small: npt.NDArray[np.uint8]
    mm2_per_px_small: FloatArray
    edge_bands_px: tuple[tuple[FloatArray, FloatArray], ...]
    mat_out_of_view_fraction: float = 0.0
    orientation_known: bool = True
    corners_read: bool = False
    mapping_sigma_mm: float = 0.0


def coarsest_mm_per_px(camera: CameraModel) -> float:
    """The size of a pixel on the mat at its corner farthest from ``camera``, mm."""
    return max(camera.mm_per_px_at([*corner, 0.0]) for corner in MAT_CORNERS_MM)


def _mat_outline_mm(step_mm: float = 20.0) -> FloatArray:
    pts = []
    for a, b in zip(MAT_CORNERS_MM, np.roll(MAT_CORNERS_MM, -1, axis=0), strict=True):
        k = max(1, int(np.hypot(*(b - a)) / step_mm))
        pts.append(a + (np.arange(k)[:, None] / k) * (b - a))
    return np.vstack(pts)


def _camera_of(calibration_or_camera: Any) -> CameraModel:
    if isinstance(calibration_or_camera, CameraModel):
        return calibration_or_camera
    camera = getattr(calibration_or_camera, "camera", None)
    if isinstance(camera, CameraModel):
        return camera
    raise TypeError(
        f"expected a CameraModel or a calibration with .camera, got "
        f"{type(calibration_or_camera).__name__}"
    )


def _corners_of(calibration: Any) -> Mapping[Colour, tuple[float, float]] | None:
    """Corner positions from a calibration, when it reports them."""
    for name in ("corners_mm", "corner_mm"):
        value = getattr(calibration, name, None)
        if isinstance(value, Mapping) and len(value) == 4:
            return {Colour(k): (float(v[0]), float(v[1])) for k, v in value.items()}
    return None


def _mapping_sigma_of(calibration: Any) -> float:
    """The calibration's stated mapping uncertainty, mm; 0 when it states none."""
    value = getattr(calibration, "mapping_sigma_mm", None)
    if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
        return float(value)
    return 0.0


def _colour_reference_of(calibration: Any) -> Any:
    """The detector's kind of colour reference, when the calibration carries one.

    Calibration's own ``.colour`` (mean Lab per wink colour seen behind the
    baselines) is *not* passed on, although
    :func:`vision.colour.reference_from_calibration` converts it: measured
    through the whole pipeline with calibration from each photo, it found
    more winks on the shared overhead scenes (recall 91.7% to 93.1%) but
    fewer on the samples (80.3% to 78.8%), and it made one confidently wrong
    call on a marginal squop pair (1 of 37) where there was none without it
    (docs/benchmarks.md).
    """
    from vision.colour import ColourReference

    for name in ("colour_reference", "colour"):
        value = getattr(calibration, name, None)
        if isinstance(value, ColourReference):
            return value
    return None


def prepare_context(
    calibration_or_camera: Any,
    *,
    corners_mm: Mapping[Colour, Sequence[float]] | None = None,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> FrameContext:
    """Precompute, once per still camera, what every frame's analysis reuses.

    Parameters
    ----------
    calibration_or_camera : Calibration or CameraModel
        A calibration (anything with ``.camera``; its ``colour_reference``
        and corners are used when present) or a bare camera.
    corners_mm : mapping of Colour to (2,) array_like, optional
        Overrides the corners; default: the calibration's, else the
        canonical layout.
    pot_centre_mm : (2,) array_like
    """
    camera = _camera_of(calibration_or_camera)
    corners_read = corners_mm is not None or _corners_of(calibration_or_camera) is not None
    if corners_mm is None:
        corners_mm = _corners_of(calibration_or_camera) or DEFAULT_CORNERS_MM
    corners = {Colour(k): (float(v[0]), float(v[1])) for k, v in corners_mm.items()}
    pot = (float(pot_centre_mm[0]), float(pot_centre_mm[1]))
    w, h = camera.image_size_wh
    outline_px = camera.mat_to_image(_mat_outline_mm())
    sw, sh = (w + HIDDEN_SCALE - 1) // HIDDEN_SCALE, (h + HIDDEN_SCALE - 1) // HIDDEN_SCALE
    mask = np.zeros((sh, sw), np.uint8)
    cv2.fillPoly(mask, [np.round(outline_px / HIDDEN_SCALE).astype(np.int32)], 1)
    # The pot: its base and rim circles, and everything between them.
    angles = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], 1)
    base = np.hstack([pot + ring * POT_BASE_DIAMETER_MM / 2, np.zeros((48, 1))])
    rim = np.hstack([pot + ring * POT_TOP_DIAMETER_MM / 2, np.full((48, 1), POT_HEIGHT_MM)])
    pot_px = camera.mat_to_image(np.vstack([base, rim])) / HIDDEN_SCALE
    hull = cv2.convexHull(pot_px.astype(np.float32)).reshape(-1, 2)
    pot_mask = np.zeros_like(mask)
    cv2.fillPoly(pot_mask, [np.round(hull).astype(np.int32)], 1)
    pot_mask = cv2.dilate(pot_mask, np.ones((3, 3), np.uint8))
    mask &= 1 - pot_mask
    # Keep clear of the mat's edge: at this scale a pixel or two of table or
    # shadow along it would look like something lying on the felt.
    mask = cv2.erode(mask, np.ones((5, 5), np.uint8))
    # Mat area per shrunk pixel, from the local scale on a coarse grid.
    grid_y, grid_x = np.mgrid[0:sh:4, 0:sw:4]
    centres = np.stack([grid_x.ravel(), grid_y.ravel()], 1).astype(float) * HIDDEN_SCALE
    mat_a = camera.image_to_mat(centres, 0.0)
    mat_b = camera.image_to_mat(centres + [HIDDEN_SCALE, 0], 0.0)
    mat_c = camera.image_to_mat(centres + [0, HIDDEN_SCALE], 0.0)
    e1, e2 = mat_b - mat_a, mat_c - mat_a
    area = np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]).reshape(grid_x.shape)
    area = np.nan_to_num(area, nan=0.0, posinf=0.0)
    area_full = cv2.resize(area.astype(np.float32), (sw, sh), interpolation=cv2.INTER_LINEAR)
    grid = np.stack(
        np.meshgrid(
            np.linspace(-MAT_LENGTH_MM / 2, MAT_LENGTH_MM / 2, 61),
            np.linspace(-MAT_WIDTH_MM / 2, MAT_WIDTH_MM / 2, 31),
        ),
        axis=-1,
    ).reshape(-1, 2)
    grid_px = camera.mat_to_image(grid)
    in_view = np.all((grid_px >= -0.5) & (grid_px < np.array([w, h]) - 0.5), axis=1)
    return FrameContext(
        mat_out_of_view_fraction=float(1.0 - in_view.mean()),
        orientation_known=bool(getattr(calibration_or_camera, "orientation_known", True)),
        corners_read=corners_read,
        mapping_sigma_mm=_mapping_sigma_of(calibration_or_camera),
        edge_bands_px=_edge_bands(camera),
        camera=camera,
        corners_mm=corners,
        pot_centre_mm=pot,
        colour_reference=_colour_reference_of(calibration_or_camera),
        mat_polygon_px=outline_px,
        mat_mask_small=mask,
        mm2_per_px_small=area_full.astype(np.float64),
    )


def _edge_bands(
    camera: CameraModel, offset_mm: float = 30.0
) -> tuple[tuple[FloatArray, FloatArray], ...]:
    """Per mat side, image points ``offset_mm`` inside and outside its edge, in the frame."""
    hx, hy = MAT_LENGTH_MM / 2, MAT_WIDTH_MM / 2
    w, h = camera.image_size_wh
    sides = []
    t = np.linspace(-0.85, 0.85, 40)[:, None]
    for along, normal, half_along, half_normal in (
        ((1, 0), (0, 1), hx, hy),
        ((1, 0), (0, -1), hx, hy),
        ((0, 1), (1, 0), hy, hx),
        ((0, 1), (-1, 0), hy, hx),
    ):
        base = t * half_along * np.array(along, float)
        n = np.array(normal, float)
        inside = camera.mat_to_image(base + (half_normal - offset_mm) * n)
        out_mm = base + (half_normal + offset_mm) * n
        outside = camera.mat_to_image(np.hstack([out_mm, np.full((len(out_mm), 1), -3.0)]))
        ok = np.all((inside >= 0) & (inside < [w, h]) & (outside >= 0) & (outside < [w, h]), axis=1)
        if ok.sum() >= 10:
            sides.append((inside[ok], outside[ok]))
    return tuple(sides)


def mat_edge_contrast(image_bgr: npt.NDArray[np.uint8], context: FrameContext) -> float | None:
    """How clearly the mat's edge shows where the calibration puts it.

    For each side of the mat in view, the Lab distance between the median
    colour just inside and just outside it; the median over the sides. None
    when no side is in the frame.
    """
    if not context.edge_bands_px:
        return None
    rows, cols, starts = _edge_band_pixels(context)
    # One colour conversion for every band's pixels (it works pixel by pixel).
    bgr = image_bgr[rows, cols].reshape(-1, 1, 3)
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(float)
    medians = [
        column_medians(lab[start:stop]) for start, stop in zip(starts[:-1], starts[1:], strict=True)
    ]
    contrasts = [
        float(np.linalg.norm(inside - outside))
        for inside, outside in zip(medians[0::2], medians[1::2], strict=True)
    ]
    return float(np.median(contrasts))


# context -> the edge bands' pixels (rows, columns) and where each band starts
_EDGE_BAND_PIXELS: weakref.WeakKeyDictionary[
    FrameContext, tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], list[int]]
] = weakref.WeakKeyDictionary()


def _edge_band_pixels(
    context: FrameContext,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], list[int]]:
    """The nearest pixels of every side's inside and outside band, in turn, made once."""
    cached = _EDGE_BAND_PIXELS.get(context)
    if cached is None:
        bands = [pts for pair in context.edge_bands_px for pts in pair]
        xy = np.round(np.vstack(bands)).astype(int)
        starts = np.concatenate([[0], np.cumsum([len(b) for b in bands])]).tolist()
        cached = (xy[:, 1], xy[:, 0], starts)
        _EDGE_BAND_PIXELS[context] = cached
    return cached


#: Side of the cells whose median felt colour is the local background, in
#: shrunk pixels (24 x 8 = 192 full-frame pixels, about 250-300 mm on the mat
#: at 1080p: larger than a hand).
FELT_CELL_PX = 24


def _felt_background(
    lab: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_], felt: FloatArray
) -> npt.NDArray[np.float32]:
    """Median felt colour per cell, smoothly interpolated; ``felt`` where no mat."""
    sh, sw = mask.shape
    rows = max(1, round(sh / FELT_CELL_PX))
    cols = max(1, round(sw / FELT_CELL_PX))
    cells = np.empty((rows, cols, 3), np.float32)
    ys = np.linspace(0, sh, rows + 1).astype(int)
    xs = np.linspace(0, sw, cols + 1).astype(int)
    for r in range(rows):
        for c in range(cols):
            cell_mask = mask[ys[r] : ys[r + 1], xs[c] : xs[c + 1]]
            if cell_mask.mean() >= 0.3:
                cells[r, c] = np.median(
                    lab[ys[r] : ys[r + 1], xs[c] : xs[c + 1]][cell_mask], axis=0
                )
            else:
                cells[r, c] = felt
    if rows == 1 and cols == 1:
        return np.broadcast_to(cells[0, 0], (sh, sw, 3)).astype(np.float32)
    return cv2.resize(cells, (sw, sh), interpolation=cv2.INTER_LINEAR)


#: A still camera's felt medians are reused for this many frames ...
FELT_REUSE_FRAMES = 15
#: ... unless the mat's mean lightness (Lab L, 0-255) moves by more than this.
FELT_REUSE_LIGHTNESS = 3.0

# context -> (whole-mat felt Lab, per-cell background, mean L when made, frames used)
_FELT_COLOURS: weakref.WeakKeyDictionary[
    FrameContext, tuple[FloatArray, npt.NDArray[np.float32], float, int]
] = weakref.WeakKeyDictionary()


def _cached_felt_colours(
    context: FrameContext, lab: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]
) -> tuple[FloatArray, npt.NDArray[np.float32]]:
    """The whole mat's median felt colour and the per-cell background, reused while steady."""
    lightness = float(cv2.mean(lab[:, :, 0], mask=mask.view(np.uint8))[0])
    cached = _FELT_COLOURS.get(context)
    if cached is not None:
        felt, background, made_at, used = cached
        steady = abs(lightness - made_at) <= FELT_REUSE_LIGHTNESS
        if steady and used < FELT_REUSE_FRAMES and background.shape[:2] == mask.shape:
            _FELT_COLOURS[context] = (felt, background, made_at, used + 1)
            return felt, background
    felt = np.median(lab[mask], axis=0)
    background = _felt_background(lab, mask, felt)
    _FELT_COLOURS[context] = (felt, background, lightness, 1)
    return felt, background


def _shrunk_over(
    image_bgr: npt.NDArray[np.uint8], mask_small: npt.NDArray[np.uint8], size_wh: tuple[int, int]
) -> npt.NDArray[np.uint8]:
    """The frame shrunk to ``size_wh`` by area averaging, where ``mask_small`` is set.

    When the frame is a whole number of ``HIDDEN_SCALE`` blocks, each shrunk
    pixel is the mean of its own block, so only the blocks under the mask's
    bounding box (the mat, often half the frame) are averaged; the rest
    stay black, as nothing reads them.
    """
    h, w = image_bgr.shape[:2]
    whole_blocks = (w, h) == (size_wh[0] * HIDDEN_SCALE, size_wh[1] * HIDDEN_SCALE)
    found = cv2.findNonZero(mask_small) if whole_blocks else None
    if found is None:
        return np.asarray(cv2.resize(image_bgr, size_wh, interpolation=cv2.INTER_AREA))
    left, top, width, height = cv2.boundingRect(found)
    small = np.zeros((size_wh[1], size_wh[0], 3), np.uint8)
    block = image_bgr[
        top * HIDDEN_SCALE : (top + height) * HIDDEN_SCALE,
        left * HIDDEN_SCALE : (left + width) * HIDDEN_SCALE,
    ]
    small[top : top + height, left : left + width] = cv2.resize(
        block, (width, height), interpolation=cv2.INTER_AREA
    )
    return small


def _farther_than(
    first: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]],
    second: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]],
    bar: float,
) -> npt.NDArray[np.bool_]:
    """``min(hypot(a1, b1) + l1, hypot(a2, b2) + l2) > bar`` for two ``(a, b, l)``, exactly.

    np.hypot on float32 is a libm call per pixel; the square root of the
    sum of squares is within a few float32 steps of it (under 1e-5 at
    Lab distances), so only pixels that close to the bar are judged by
    np.hypot itself.
    """

    def fast(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32], light: Any) -> Any:
        return np.sqrt(a * a + b * b) + light

    distance = np.minimum(fast(*first), fast(*second))
    close = np.flatnonzero(np.abs(distance - np.float32(bar)) <= 1e-3)
    if len(close):

        def exact(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32], light: Any) -> Any:
            return np.hypot(a.reshape(-1)[close], b.reshape(-1)[close]) + light.reshape(-1)[close]

        distance.reshape(-1)[close] = np.minimum(exact(*first), exact(*second))
    return np.asarray(distance > bar)


def _lab8_to_bgr(lab: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """8-bit-scaled Lab (as ``cv2.COLOR_BGR2LAB`` gives for uint8), shape (..., 3), to BGR 0-255."""
    flat = lab.reshape(-1, 1, 3).astype(np.float32)
    real = np.concatenate((flat[..., :1] * (100.0 / 255.0), flat[..., 1:] - 128.0), axis=-1).astype(
        np.float32
    )
    return np.asarray(cv2.cvtColor(real, cv2.COLOR_LAB2BGR) * 255.0).reshape(lab.shape)


def _brighter_felt(
    bgr: npt.NDArray[np.float32], felt_bgr: npt.NDArray[np.float32]
) -> npt.NDArray[np.bool_]:
    """Where ``bgr`` is ``felt_bgr`` under a brighter light: same hue, channels scaled alike.

    Only where the felt has a hue (:data:`BRIGHTER_FELT_MIN_HUE_DEG`).

    Parameters
    ----------
    bgr : (..., 3) float32 array
        Pixels, 0-255.
    felt_bgr : (..., 3) float32 array
        The felt's colour at each (or one for all, broadcast), 0-255.
    """
    dot = (bgr * felt_bgr).sum(axis=-1)
    felt2 = np.maximum((felt_bgr * felt_bgr).sum(axis=-1), 1e-6)
    # cos^2 of the felt's angle from grey: (sum of channels)^2 / (3 |felt|^2).
    felt_grey_cos2 = felt_bgr.sum(axis=-1) ** 2 / (3.0 * felt2)
    hued = felt_grey_cos2 <= np.cos(np.radians(BRIGHTER_FELT_MIN_HUE_DEG)) ** 2
    here2 = np.maximum((bgr * bgr).sum(axis=-1), 1e-6)
    gain = dot / felt2
    cos_min = np.cos(np.radians(BRIGHTER_FELT_ANGLE_DEG))
    return np.asarray(
        (gain >= BRIGHTER_FELT_GAIN[0])
        & (gain <= BRIGHTER_FELT_GAIN[1])
        & (dot > 0)
        & (dot * dot >= (cos_min * cos_min) * here2 * felt2)
        & (bgr.max(axis=-1) < BRIGHTER_FELT_CLIPPED)
        & hued
    )


def find_hidden_regions(
    image_bgr: npt.NDArray[np.uint8], context: FrameContext
) -> tuple[tuple[HiddenRegion, ...], float]:
    """Large blobs over the mat that are neither felt nor winks (hands, mugs).

    Works on the frame shrunk by ``HIDDEN_SCALE``: the felt's colour is the
    median of each hand-sized-plus cell of the mat (lighting changes it
    across the mat), and what differs from it in a blob larger than
    ``HIDDEN_MIN_AREA_MM2`` after an opening that removes winks and lines is
    reported.

    Returns
    -------
    regions : tuple of HiddenRegion
    not_felt_fraction : float
        Fraction of the mat's area that does not look like felt.
    """
    mask = context.mat_mask_small.astype(bool)
    sh, sw = mask.shape
    small = _shrunk_over(image_bgr, context.mat_mask_small, (sw, sh))
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    if mask.sum() < 50:
        return (), 1.0
    # The felt's colour drifts across the mat with the lighting (a dim pink
    # felt is less saturated than a bright one): compare each pixel with the
    # median felt of its neighbourhood, cells larger than a hand so that a
    # hand does not become its own background. A still camera reuses both
    # medians for a few frames (as the detector reuses its felt model).
    felt, background = _cached_felt_colours(context, lab, mask)
    local_a = lab[:, :, 1] - background[:, :, 1]
    local_b = lab[:, :, 2] - background[:, :, 2]
    local_light = 0.5 * np.maximum(np.abs(lab[:, :, 0] - background[:, :, 0]) - 10.0, 0.0)
    # And with the whole mat's felt colour, lightness allowed to drift slowly:
    # a pixel is not felt only when it differs from both (each model has its
    # own false alarms: cells at a lighting edge, colour fading in the dim).
    m = mask.astype(np.float32)
    tiny = (max(sw // 8, 4), max(sh // 8, 4))
    num = cv2.GaussianBlur(
        cv2.resize(lab[:, :, 0] * m, tiny, interpolation=cv2.INTER_AREA), (0, 0), 1.5
    )
    den = cv2.GaussianBlur(cv2.resize(m, tiny, interpolation=cv2.INTER_AREA), (0, 0), 1.5)
    light_tiny = np.where(den > 1e-3, num / np.maximum(den, 1e-3), felt[0]).astype(np.float32)
    light = cv2.resize(light_tiny, (sw, sh), interpolation=cv2.INTER_LINEAR)
    overall_a = lab[:, :, 1] - felt[1]
    overall_b = lab[:, :, 2] - felt[2]
    overall_light = 0.5 * np.maximum(np.abs(lab[:, :, 0] - light) - 10.0, 0.0)
    # Not felt: unlike both the local and the whole mat's felt.
    unlike = _farther_than(
        (local_a, local_b, local_light), (overall_a, overall_b, overall_light), FELT_DISTANCE
    )
    # Nor the felt under a lamp's hot spot, which both models see as too
    # light and, in Lab, too saturated (a 38 cm^2 "hand" of bare green felt
    # in a generated game, which held the referee's start back for good).
    # Judged only where both models said "not felt" (a few per cent of the mat).
    unlike &= mask
    where = np.flatnonzero(unlike)
    if len(where):
        here = small.reshape(-1, 3)[where].astype(np.float32)
        local = _lab8_to_bgr(background.reshape(-1, 3)[where])
        whole = _lab8_to_bgr(felt.astype(np.float32))[None, :]
        lit = _brighter_felt(here, local) | _brighter_felt(here, whole)
        unlike.reshape(-1)[where[lit]] = False
    not_felt = unlike.astype(np.uint8)
    weights = context.mm2_per_px_small
    total_area = float(weights[mask].sum())
    frac = float(weights[not_felt.astype(bool)].sum() / max(total_area, 1e-9))
    # At 1/8 scale a wink is 1-2 pixels and a line 1 pixel: the opening
    # removes both; the closing joins a hand's fingers.
    opened = cv2.morphologyEx(not_felt, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    opened = cv2.morphologyEx(opened, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    n, labels, _, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
    regions = []
    for k in range(1, n):
        blob = labels == k
        area = float(weights[blob].sum())
        if area < HIDDEN_MIN_AREA_MM2:
            continue
        contours, _ = cv2.findContours(
            blob.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
        )
        contour = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(float)
        # One shrunk pixel of margin, then back to full-frame pixel centres.
        hull = cv2.convexHull(contour.astype(np.float32)).reshape(-1, 2).astype(float)
        centre = hull.mean(axis=0)
        grown = centre + (hull - centre) * 1.0 + np.sign(hull - centre) * 1.0
        image_poly = (grown + 0.5) * HIDDEN_SCALE - 0.5
        mat_poly = context.camera.image_to_mat(image_poly, 0.0)
        regions.append(
            HiddenRegion(image_polygon_px=image_poly, mat_polygon_mm=mat_poly, area_mm2=area)
        )
    return tuple(regions), frac


@dataclass(frozen=True)
class FrameAnalysis:
    """Everything one frame told us.

    Parameters
    ----------
    board : Board
        Validated, with tiddlies (rule 19.1).
    detections : WinkDetections
        The detections the board was built from (those inside hidden regions
        dropped); ``assembly.detection_ids`` follows their order.
    assembly : BoardAssembly
        The squop calls and the id of each kept detection.
    hidden_regions : tuple of HiddenRegion
    notes : tuple of str
        Inferences and dropped detections, in words.
    reviews : tuple of str
        Calls an umpire should check close up.
    timings_ms : dict of str to float
        Time per stage and in total.
    camera : CameraModel or None
        The camera in the frame the board is in: the calibration's, or that
        turned through 180 degrees when the unplayed winks showed the
        calibration had picked the turned frame.
    orientation_known : bool
        False when neither the calibration (corner colours) nor the unplayed
        winks showed which corner is blue's: the board may then be turned
        through 180 degrees.
    """

    board: Board
    detections: WinkDetections
    assembly: BoardAssembly
    hidden_regions: tuple[HiddenRegion, ...]
    notes: tuple[str, ...]
    reviews: tuple[str, ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    camera: CameraModel | None = None
    orientation_known: bool = True


def _default_detector() -> Detector:
    try:
        from vision.detect import detect_winks
    except ImportError as exc:
        raise DetectorUnavailableError(
            f"the wink detector (vision.detect) cannot be imported: {exc}"
        ) from None
    return detect_winks


def analyze_frame(
    image_bgr: npt.NDArray[np.uint8],
    calibration_or_camera: Any,
    *,
    detections: WinkDetections | None = None,
    detector: Detector | None = None,
    previous: Board | None = None,
    k_sigma: float = K_SIGMA,
) -> FrameAnalysis:
    """Analyse one frame from a calibrated camera.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    calibration_or_camera : FrameContext, Calibration or CameraModel
        Pass a :class:`FrameContext` from :func:`prepare_context` to reuse
        the per-camera work between frames.
    detections : WinkDetections, optional
        Use these instead of running the detector (tests, benchmarks).
    detector : callable, optional
        ``detector(image_bgr, camera, colour_reference=..., mat_polygon_mm=...)``;
        default ``vision.detect.detect_winks``.
    previous : Board, optional
        The previous frame's board, so that winks keep their ids.
    k_sigma : float
        Calls within this many standard deviations are flagged uncertain.

    Raises
    ------
    ValueError
        If the image's size differs from the camera's.
    MatNotVisibleError
        If most of the calibrated mat area does not look like felt.
    DetectorUnavailableError
        If no detections were given and the detector is not installed.
    """
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    context = (
        calibration_or_camera
        if isinstance(calibration_or_camera, FrameContext)
        else prepare_context(calibration_or_camera)
    )
    camera = context.camera
    h, w = image_bgr.shape[:2]
    if (w, h) != tuple(camera.image_size_wh):
        raise ValueError(
            f"the image is {w}x{h} but the calibration is for "
            f"{camera.image_size_wh[0]}x{camera.image_size_wh[1]}: calibrate this camera first"
        )
    t0 = time.perf_counter()
    hidden, not_felt = find_hidden_regions(image_bgr, context)
    timings["hidden_regions"] = (time.perf_counter() - t0) * 1000.0
    contrast = mat_edge_contrast(image_bgr, context)
    if contrast is not None and contrast < MIN_EDGE_CONTRAST:
        raise MatNotVisibleError(
            f"no mat edge where the calibration puts the mat (contrast {contrast:.1f}, "
            f"want at least {MIN_EDGE_CONTRAST:g}): this photo does not look like a mat, "
            "or the calibration is for another camera"
        )
    if not_felt > NOT_A_MAT_FRACTION:
        raise MatNotVisibleError(
            f"{100 * not_felt:.0f}% of where the calibration puts the mat does not look like "
            "a mat: is the mat in this photo, and is the calibration for this camera?"
        )
    t0 = time.perf_counter()
    if detections is None:
        detect = detector or _default_detector()
        detections = detect(
            image_bgr,
            camera,
            colour_reference=context.colour_reference,
            mat_polygon_mm=MAT_CORNERS_MM,
        )
    timings["detect"] = (time.perf_counter() - t0) * 1000.0
    notes: list[str] = []
    used = detections
    if hidden and len(detections):
        inside = np.zeros(len(detections), bool)
        for region in hidden:
            inside |= region.contains_mat_xy(detections.mat_xy_mm)
        if inside.any():
            notes.append(f"{int(inside.sum())} detection(s) inside hidden regions were not trusted")
            used = detections[~inside]
    for region in hidden:
        notes.append(
            f"part of the mat is hidden ({region.area_mm2 / 100:.0f} cm^2 around "
            f"x={region.mat_polygon_mm[:, 0].mean():.0f} mm, "
            f"y={region.mat_polygon_mm[:, 1].mean():.0f} mm): winks there are not reported"
        )
    corners = context.corners_mm
    pot_centre_mm = context.pot_centre_mm
    corners_read = context.corners_read
    orientation_known = context.orientation_known
    if not orientation_known:
        # Corners the calibration could not orient are not a reading.
        corners_read = False
        found = corners_from_unplayed(used.mat_xy_mm, list(used.colour)) if len(used) else None
        if found is None:
            notes.append(
                "the corner colours could not be read: the board may be turned through 180 "
                "degrees, so which baseline is whose is not known (unplayed winks may be wrong)"
            )
        else:
            notes.append(
                "the corner colours could not be read; the winks behind the baselines "
                "showed which corner is whose"
            )
            if found[Colour.BLUE][1] < 0:
                # The calibration picked the turned frame: turn it back so that
                # blue's corner has y > 0 (the canonical frame).
                camera = camera.with_half_turn()
                used = replace(used, mat_xy_mm=-used.mat_xy_mm)
                hidden = tuple(replace(r, mat_polygon_mm=-r.mat_polygon_mm) for r in hidden)
                found = {c: (-x, -y) for c, (x, y) in found.items()}
                pot_centre_mm = (-pot_centre_mm[0], -pot_centre_mm[1])
            corners = found
            corners_read = True
            orientation_known = True
    coarsest = coarsest_mm_per_px(context.camera)
    if coarsest > COARSE_VIEW_MM_PER_PX:
        notes.append(
            f"the camera sees the mat at up to {coarsest:.1f} mm a pixel: {COARSE_VIEW_ADVICE}"
        )
    if context.mat_out_of_view_fraction > 0.005:
        notes.append(
            f"{100 * context.mat_out_of_view_fraction:.0f}% of the mat is outside the frame: "
            "winks there are not reported"
        )
    t0 = time.perf_counter()
    assembly = assemble_board(
        used,
        camera,
        image_bgr,
        corners_mm=corners,
        corners_read=corners_read,
        pot_centre_mm=pot_centre_mm,
        hidden_area=bool(hidden) or context.mat_out_of_view_fraction > 0.005,
        previous=previous,
        k_sigma=k_sigma,
        mapping_sigma_mm=context.mapping_sigma_mm,
    )
    timings["assemble"] = (time.perf_counter() - t0) * 1000.0
    timings["total"] = (time.perf_counter() - t_start) * 1000.0
    return FrameAnalysis(
        board=assembly.board,
        detections=used,
        assembly=assembly,
        hidden_regions=hidden,
        notes=tuple(notes) + assembly.notes,
        reviews=assembly.reviews,
        timings_ms=timings,
        camera=camera,
        orientation_known=orientation_known,
    )


#: Mean absolute change (8-bit levels) over the shrunk mat and the table round
#: it below which a frame counts as unchanged: sensor noise is about 1-2
#: levels after shrinking.
UNCHANGED_MEAN_LEVELS = 1.5
#: Shrunk pixels of the mat and the table round it that may change by more
#: than CHANGED_LEVELS in an unchanged frame: none. Sensor noise averaged over
#: a shrunk pixel stays far below that, while a wink nudged 2 mm changes only
#: two pixels, by about 20 levels (a share of the mat's pixels let such a
#: nudge through).
UNCHANGED_MAX_PIXELS = 0


#: A frame whose change over the mat fits in a box of at most this share of
#: the mat's area is searched for winks only round the change (see
#: :class:`StillCameraAnalyzer`); a larger change is searched whole.
WINDOW_MAX_MAT_SHARE = 0.2
#: Shrunk pixels that changed by more than this (8-bit levels) are a change.
CHANGED_LEVELS = 12
#: ... or by more than this, when the caller saw a shot played since the last
#: frame: a small green wink brought into play on green felt at the far end
#: of an oblique view changed no shrunk pixel by more than 10 levels
#: (generated game q3631), and the referee saw no shot. A still view is the
#: mean of several frames, whose noise stays well under this.
CHANGED_LEVELS_AFTER_MOTION = 6
#: How far beyond a changed shrunk pixel the centre of a wink that changed can
#: lie: a large wink's radius with room for blur, mm. The pixel's own extent
#: on the mat is added (:func:`_change_boxes_mm`): 12-15 mm from overhead,
#: 20-25 mm from a tripod at the side.
CHANGE_REACH_MM = 14.0
#: After this many frames searched round their changes alone, the next
#: changed frame is searched whole: it refreshes what the windows borrow from
#: the last whole frame (the felt model, the felt's noise, the radius bias),
#: which a slow change of light would otherwise leave behind.
WINDOW_MAX_RUN = 15
#: Fresh fits this far outside the change are taken too (a wink at its border), mm.
MERGE_TOLERANCE_MM = 5.0
#: The window searched reaches this much beyond, so that every wink whose
#: centre is within reach of the change lies wholly inside it, mm.
WINDOW_PAD_MM = 26.0


class StillCameraAnalyzer:
    """Analyse the frames of a still camera one after another.

    Holds what carries from frame to frame: the per-camera context, the last
    board (so winks keep their ids) and a shrunk copy of the last frame. A
    frame that has not changed over the mat and the table round it since the
    last one (between shots, most frames) returns the last analysis at the
    cost of a resize.

    A frame that changed only in one part of the mat (a shot moved a wink or
    two) is searched for winks only there: winks whose centres lie within
    :data:`CHANGE_REACH_MM` of the change are found afresh, in a window
    :data:`WINDOW_PAD_MM` wider (:func:`vision.detect.detect_winks` with
    ``window_mm``), and the last frame's winks elsewhere are kept. The board
    is then built afresh from them all, on this frame. When a colour comes
    out with more or fewer winks than before (one went off the mat, into the
    pot or anywhere outside the window, or the window saw a phantom), when
    part of the mat was hidden, or when the board's turn is not known, the
    whole frame is searched instead. The felt is modelled afresh wherever
    the frame is searched: winks that left a spot leave an old model tinted.

    ``previous``, a board from before the first frame (a game resumed from
    its record), gives the first frame's winks their ids there.

    Unlike the value types this is a session object: ``analyze`` updates it.
    """

    def __init__(
        self,
        calibration_or_camera: Any,
        *,
        detector: Detector | None = None,
        previous: Board | None = None,
        **context_options: Any,
    ) -> None:
        self.detector = detector
        # Ids to keep from before the first frame (a game resumed from its record).
        self._first_previous = previous
        self.context = (
            calibration_or_camera
            if isinstance(calibration_or_camera, FrameContext)
            else prepare_context(calibration_or_camera, **context_options)
        )
        self._last_small: npt.NDArray[np.int16] | None = None
        self._last: FrameAnalysis | None = None
        self._watch = watched_small(self.context)
        # Whether the last analysis came from the default detector (and not
        # from detections given by the caller), so that its winks can be kept.
        self._last_detected = False
        # Changed frames searched round their changes since the last whole one.
        self._window_run = 0

    def _shrunk(self, image_bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.int16]:
        sh, sw = self.context.mat_mask_small.shape
        small = cv2.resize(image_bgr, (sw, sh), interpolation=cv2.INTER_AREA)
        return small.astype(np.int16)

    def analyze(
        self,
        image_bgr: npt.NDArray[np.uint8],
        *,
        detections: WinkDetections | None = None,
        after_motion: bool = False,
    ) -> FrameAnalysis:
        """The analysis of this frame (the last one again when nothing moved).

        ``after_motion``: the caller saw motion over the mat since the last
        frame (a shot was played), so a fainter change than a frame's noise
        allows in general (:data:`CHANGED_LEVELS_AFTER_MOTION`) is enough for
        the frame to be searched again.
        """
        t0 = time.perf_counter()
        small = self._shrunk(image_bgr)
        levels = CHANGED_LEVELS_AFTER_MOTION if after_motion else CHANGED_LEVELS
        # Each shrunk pixel's change since the last frame, in 8-bit levels.
        change_small = (
            None if self._last_small is None else np.abs(small - self._last_small).max(axis=2)
        )
        if self._last is not None and change_small is not None and detections is None:
            # Over the mat and the table round it, as the search round a
            # change: the mat's own mask keeps well inside its edge, and a
            # wink moved there alone (beside the far edge of an oblique view
            # that is tens of mm) would leave the frame "unchanged".
            change = change_small[self._watch]
            if (
                float(change.mean()) < UNCHANGED_MEAN_LEVELS
                and int(np.count_nonzero(change > levels)) <= UNCHANGED_MAX_PIXELS
            ):
                timings = {"total": (time.perf_counter() - t0) * 1000.0, "reused": 1.0}
                return FrameAnalysis(
                    board=self._last.board,
                    detections=self._last.detections,
                    assembly=self._last.assembly,
                    hidden_regions=self._last.hidden_regions,
                    notes=self._last.notes,
                    reviews=self._last.reviews,
                    timings_ms=timings,
                    camera=self._last.camera,
                    orientation_known=self._last.orientation_known,
                )
        previous = self._last.board if self._last is not None else self._first_previous
        analysis = None
        if detections is None:
            analysis = self._analyze_change(image_bgr, change_small, previous, levels=levels)
        if analysis is None:
            if detections is None and self.detector is None:
                # The frame changed since the last one (else it was reused above).
                from vision.detect import forget_felt_model

                forget_felt_model(self.context.camera)
            analysis = analyze_frame(
                image_bgr,
                self.context,
                detections=detections,
                detector=self.detector,
                previous=previous,
            )
        self._last, self._last_small = analysis, small
        self._last_detected = detections is None and self.detector is None
        self._window_run = self._window_run + 1 if analysis.timings_ms.get("window") else 0
        return analysis

    def _analyze_change(
        self,
        image_bgr: npt.NDArray[np.uint8],
        change_small: npt.NDArray[np.int16] | None,
        previous: Board | None,
        *,
        levels: int = CHANGED_LEVELS,
    ) -> FrameAnalysis | None:
        """The analysis from a search round the change alone, or None to search the whole frame.

        ``change_small`` is each shrunk pixel's change since the last frame
        (None for the first frame); a pixel is changed when that is more
        than ``levels``.
        """
        last = self._last
        if (
            last is None
            or change_small is None
            or not self._last_detected
            or self._window_run >= WINDOW_MAX_RUN
            or self.detector is not None
            or last.hidden_regions
            or not self.context.orientation_known
            or last.camera is not self.context.camera
        ):
            return None
        changed = (change_small > levels) & self._watch
        boxes = _change_boxes_mm(changed, self.context.camera)
        area_mm2 = sum(float(np.prod(high_mm - low_mm)) for low_mm, high_mm in boxes)
        if not boxes or area_mm2 > WINDOW_MAX_MAT_SHARE * MAT_LENGTH_MM * MAT_WIDTH_MM:
            return None
        from vision.detect import detect_winks

        t0 = time.perf_counter()
        parts = []
        for low_mm, high_mm in boxes:
            part = detect_winks(
                image_bgr,
                self.context.camera,
                colour_reference=self.context.colour_reference,
                mat_polygon_mm=MAT_CORNERS_MM,
                window_mm=(*(low_mm - WINDOW_PAD_MM), *(high_mm + WINDOW_PAD_MM)),
            )
            inside = (part.mat_xy_mm >= low_mm - MERGE_TOLERANCE_MM) & (
                part.mat_xy_mm <= high_mm + MERGE_TOLERANCE_MM
            )
            parts.append(part[np.all(inside, axis=1)])
        found = WinkDetections.concatenate(parts)

        def within(detections: WinkDetections) -> npt.NDArray[np.bool_]:
            xy = detections.mat_xy_mm
            hit = np.zeros(len(detections), dtype=bool)
            for low_mm, high_mm in boxes:
                hit |= np.all((xy >= low_mm) & (xy <= high_mm), axis=1)
            return hit

        # A wink at the border of the change can be fitted just inside it in
        # one frame and just outside in the other: the fresh fits reach a
        # little further, and a kept wink that one of them finds again goes.
        fresh = found
        kept = last.detections[~within(last.detections)]
        if len(kept) and len(fresh):
            apart_mm = np.hypot(*(kept.mat_xy_mm[:, None, :] - fresh.mat_xy_mm[None, :, :]).T).T
            again = (apart_mm < 0.5 * np.minimum.outer(kept.radius_mm, fresh.radius_mm)) & (
                kept.colour[:, None] == fresh.colour[None, :]
            )
            kept = kept[~again.any(axis=1)]
        # No wink is found twice by two windows: boxes whose windows could
        # overlap were joined (see _change_boxes_mm).
        merged = WinkDetections.concatenate([kept, fresh])
        # A shot neither makes nor loses winks: a colour found more or fewer
        # times than before is one the window saw wrong (a phantom where a
        # wink left a crowded corner, found in a live game) or a wink that
        # went where the window does not reach, so the whole frame decides.
        for colour in Colour:
            if np.sum(merged.colour == colour) != np.sum(last.detections.colour == colour):
                return None
        detect_ms = (time.perf_counter() - t0) * 1000.0
        analysis = analyze_frame(image_bgr, self.context, detections=merged, previous=previous)
        timings = dict(analysis.timings_ms)
        timings["detect"] = detect_ms
        timings["total"] = timings.get("total", 0.0) + detect_ms
        timings["window"] = 1.0
        return replace(analysis, timings_ms=timings)


def _change_boxes_mm(
    changed: npt.NDArray[np.bool_], camera: CameraModel
) -> list[tuple[FloatArray, FloatArray]]:
    """Boxes ``(low, high)`` on the mat, mm, round each place the shrunk frame changed.

    Each patch of changed pixels gives a box reaching beyond its pixels'
    centres on the mat by :data:`CHANGE_REACH_MM` plus three quarters of the
    largest pixel's extent there (a pixel's corner is 0.71 of its side from
    its centre); boxes whose searched windows would overlap are joined, so
    that no wink is searched for twice.
    """
    count, labels = cv2.connectedComponents(
        cv2.dilate(changed.astype(np.uint8), np.ones((3, 3), np.uint8)), connectivity=8
    )
    boxes = []
    for k in range(1, count):
        rows, cols = np.nonzero((labels == k) & changed)
        if len(rows) == 0:
            continue
        centres_px = (np.column_stack([cols, rows]) + 0.5) * HIDDEN_SCALE - 0.5
        on_mat_mm = camera.image_to_mat(centres_px, 0.0)
        across_mm = camera.image_to_mat(centres_px + [HIDDEN_SCALE, 0.0], 0.0) - on_mat_mm
        down_mm = camera.image_to_mat(centres_px + [0.0, HIDDEN_SCALE], 0.0) - on_mat_mm
        pixel_mm = float(np.max(np.maximum(np.hypot(*across_mm.T), np.hypot(*down_mm.T))))
        reach_mm = CHANGE_REACH_MM + 0.75 * pixel_mm
        boxes.append((on_mat_mm.min(axis=0) - reach_mm, on_mat_mm.max(axis=0) + reach_mm))
    joined = True
    while joined and len(boxes) > 1:
        joined = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                (lo_a, hi_a), (lo_b, hi_b) = boxes[i], boxes[j]
                pad = 2 * WINDOW_PAD_MM
                if np.all(lo_a <= hi_b + pad) and np.all(lo_b <= hi_a + pad):
                    boxes[i] = (np.minimum(lo_a, lo_b), np.maximum(hi_a, hi_b))
                    del boxes[j]
                    joined = True
                    break
            if joined:
                break
    return boxes


def watched_small(context: FrameContext) -> npt.NDArray[np.bool_]:
    """Where, at the shrunk scale, a change can concern the board: the mat and table round it."""
    sh, sw = context.mat_mask_small.shape
    from vision.detect import TABLE_MARGIN_MM

    hx, hy = MAT_LENGTH_MM / 2 + TABLE_MARGIN_MM, MAT_WIDTH_MM / 2 + TABLE_MARGIN_MM
    corners = np.array([[-hx, -hy, 0.0], [hx, -hy, 0.0], [hx, hy, 0.0], [-hx, hy, 0.0]])
    # Along each side, so that lens distortion bends the outline as it does the table.
    steps = np.linspace(0.0, 1.0, 16, endpoint=False)[:, None]
    ends = zip(corners, np.roll(corners, -1, 0), strict=True)
    outline = np.vstack([a + steps * (b - a) for a, b in ends])
    outline_px = context.camera.mat_to_image(outline) / HIDDEN_SCALE
    watch = np.zeros((sh, sw), np.uint8)
    cv2.fillPoly(watch, [np.round(outline_px).astype(np.int32)], 1)
    return watch.astype(bool)
