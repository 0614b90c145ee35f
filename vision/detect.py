"""Find every wink in a calibrated frame: centre, colour and size.

How
---
1. **Coarse bird's-eye view.** The frame (halved once to cut noise and
   aliasing) is remapped onto the plane of a wink's mid-height over the mat
   and a margin of table, at :data:`COARSE_PX_PER_MM`. The remap tables
   depend only on the camera, so they are cached: a still camera pays for
   them once.
2. **Felt model.** A wide median of that view is the felt (and table)
   colour around every point; colours are measured against it (see
   :mod:`vision.colour`). A still camera reuses it for
   :data:`FELT_REFRESH_FRAMES` frames unless the light changes.
3. **Candidates.** Pixels that differ from the felt (largest channel step,
   above a bar scaled to the felt's noise) and whose hue is near a wink
   colour are labelled; the peaks of the labels' distance transform seed
   one wink each. Anything holding a disc wider than a large wink
   (squidgers, mugs, boards) is dropped first.
4. **Rim fit.** From each seed, rays in mat mm are sampled in the *full*
   resolution frame (through a local affine of the camera model, so a
   16 mm wink 11 px across still gets sub-pixel samples). Along each ray
   the wink's coverage crosses 0.5 at the rim. The crossings are fitted
   with a robust circle (:mod:`vision.fit`), free radius first to choose
   the size (after the frame's radius bias, see
   :func:`estimate_radius_bias`, which a colour that measures apart from
   the others has of its own, see :func:`colour_radius_biases`), then at
   the known radius, which fixes the
   centre of a partly hidden wink from its visible arc. Crossings into
   another wink, or where the pot stands in front, get a low weight: they
   are the rim only when this wink is the upper one (or, by the pot, in
   front of it). A wink the pot hides in part (its shadow from the camera
   is known, see :class:`_PotShadow`) may be judged on the part left in
   view; a seed seen through the pot's opening is a potted wink, which
   the pot's wall may hide instead. A sample is another
   wink's by its hue, unless it lies on this wink's own line from the felt
   (the olive shading of a dark green wink, its blur into beige felt).
5. **More seeds.** Wink colour that the fits leave unexplained seeds again
   (a wink of one colour on or under another of the same colour), and a
   seed whose colour runs on along an axis is split in two; so is one
   fitted as a large wink that fails only as a circle, its middle all its
   own colour (two winks of one colour overlapping deeply, whose ends lie
   beyond the rays' reach on a few rays only; see :func:`_merged_blob`).
   Such a fit also goes to the second pass, and counts there only if it
   is split. A small wink
   far under a large one shows only a crescent a few mm wide, too thin for
   the coarse view: where a found wink's rays cross its rim into another
   wink's colour along a run of adjacent rays, and no found wink of that
   colour is there, a seed goes into the crescent (see
   :func:`_crescent_seeds`).
6. **Judging.** A wink is bounded (its colour does not run on), its rim is
   round and seen or hidden by another wink, its colour matches the other
   winks of that colour in the frame, and off the mat its rim is clean.
   Two fits of one size at nearly one centre are one wink, whatever their
   colours.
7. **Second pass.** Rays again from each found centre, so that they cross
   the rim square-on. A fit across two overlapping winks of one colour
   (one blob, its rim two arcs of different centres) is then split in two
   (see :func:`_split_merged`). A wink this pass loses keeps its first
   fit, away from the mat's edge and the pot, when its seed's rays saw
   mostly its own colour in its middle: from a fitted centre on the upper
   wink, a lower wink's rays see mostly the upper wink.
8. **Height.** The rim is fitted in the plane of mid-height, where a flat
   wink's silhouette (top face and lower edge) is centred on its plan-view
   centre. A wink whose rim is complete while it overlaps a cut one lies on
   it; its centre is moved for the extra height (parallax).

Speed: the coarse view and the felt model are a few hundred thousand pixels;
rays are about 1,500 samples per seed. ``benchmarks/detection.py`` measures
it; on the shared 1080p scenes it is about 35 ms of one core per frame with
a still camera (the remap tables and the felt model reused). What it costs:
the half-size frame and its warp (5 ms), candidates and seeds (8 ms), four
rounds of ray sampling (first seeds, split seeds, seeds in unexplained
colour, found winks; 10 ms) and their circle fits (5 ms). Seeds that repeat
a failed one are not fitted again.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from rules.board import (
    BASELINE_DISTANCE_MM,
    LARGE_WINK_DIAMETER_MM,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    POT_BASE_DIAMETER_MM,
    POT_HEIGHT_MM,
    POT_TOP_DIAMETER_MM,
    SMALL_WINK_DIAMETER_MM,
    WinkSize,
)
from vision.colour import (
    COLOURS,
    ColourReference,
    classify_hue,
    classify_hue_index,
    column_medians,
    hue_difference_deg,
    hue_saturation,
    opponent,
)
from vision.detections import WinkDetections
from vision.fit import CircleFits, arc_fractions, fit_circles
from vision.status import (
    MAT_THICKNESS_MM,
    POT_FLOOR_RADIUS_MM,
    beyond_mat_mm,
    pot_floor_seen_px,
)

FloatArray = npt.NDArray[np.float64]
_Array = TypeVar("_Array", bound=npt.NDArray[Any])

#: A rim crossing this far past a fitted circle shows the wink's colour
#: running on into another wink of its colour, mm.
RUNS_ON_MM = 2.0
#: Scale of the coarse bird's-eye view used to find candidates.
COARSE_PX_PER_MM = 0.5
#: Table around the mat searched for winks that went off, mm.
TABLE_MARGIN_MM = 150.0
#: A wink's thickness (rule 2.1.1 says about 1.5 mm; real winks run 1.5-2).
WINK_THICKNESS_MM = 1.7
#: Contrast with the felt (see :func:`vision.colour.felt_contrast`) that
#: marks something lying on it.
CANDIDATE_CONTRAST = 0.25
#: Largest channel difference from the felt, relative to its brightness,
#: that marks something lying on it (coarse view).
CANDIDATE_MEAN_CONTRAST = 0.15
#: A seed's contrast with the felt, in units of the felt's median contrast.
SEED_NOISE_RATIO = 8.0
#: Smallest channel difference from the felt (grey levels) that can be a wink.
MIN_GREY_STEP = 12
#: Saturation (see :func:`vision.colour.hue_saturation`) of a wink colour.
CANDIDATE_SATURATION = 0.05
#: Opponent-chroma distance from the felt's own colour.
CANDIDATE_CHROMA_STEP = 0.04
#: Anything fitted larger than this radius is a squidger or a mug, not a wink.
MAX_WINK_RADIUS_MM = 13.0
#: Least rim score (arc fraction over (0.3 mm + rms residual)) of a wink;
#: for a wink against the pot, the arc is a fraction of what the pot leaves
#: in view ...
MIN_RIM_SCORE = 0.55
#: ... when the pot hides at least this share of its rays ...
MIN_HIDDEN_BY_POT = 0.25
#: ... but at least this much of the whole rim must be seen.
MIN_ARC_BY_POT = 0.2
#: The same, for a wink on the table off the mat.
MIN_RIM_SCORE_OFF_MAT = 1.0
#: ... and for one lying wholly on the table, clear of the mat's edge (where
#: felt and table blur into wink-like colours) by this margin, mm ...
OFF_MAT_CLEAR_MM = 2.0
#: ... which needs only this.
MIN_RIM_SCORE_OFF_MAT_CLEAR = 0.8
#: A colour is part of a wide thing (a pot, a board) when it makes up at
#: least this share of the wink-coloured pixels within its reach.
WIDE_THING_COLOUR_SHARE = 0.25
#: Half-width of the band along each baseline where no seed grows, mm.
BASELINE_BAND_MM = 3.0
#: Half-width of the band along the mat's edge where felt and table mix, mm.
EDGE_BAND_MM = 15.0
#: Anything fitted smaller than this is noise.
MIN_WINK_RADIUS_MM = 6.0

#: Farthest a sample may lie from the felt-to-wink colour line (felt
#: brightness units) and still be a shade of the wink whatever its hue ...
OWN_SHADE_DISTANCE = 0.25
#: ... when it is at least this much more saturated than the felt.
OWN_SHADE_SATURATION = 0.03
#: Nor within this distance of the mat's edge, mm.
OWN_SHADE_EDGE_MM = 4.0
#: Samples below this coverage are left as they are (they end the ray anyway).
OWN_SHADE_MIN_COVER = 0.4
#: A sample nearer the shadow line than the line of a dark, greyish wink
#: is still a shade of it when its chromaticity has moved this share of the
#: way from the felt's towards the wink's ...
OWN_SHADE_CHROMA_SHARE = 0.25
#: ... and it is at most this much darker than the wink (felt brightness units).
OWN_SHADE_DARKER = 0.05
#: Such a wink's line from the felt lies within this angle of the shadow
#: line, degrees ...
OWN_SHADE_SHADOW_DEG = 25.0
#: ... its chromaticity at least this far from the felt's (opponent units;
#: a shadow moves the felt's by a few thousandths) ...
OWN_SHADE_CHROMA_STEP = 0.04
#: ... and it is at least this bright (felt brightness units; the
#: chromaticity's offset for near-black colours is 0.3).
OWN_SHADE_MIN_BRIGHTNESS = 0.3

_SMALL_R = SMALL_WINK_DIAMETER_MM / 2
_LARGE_R = LARGE_WINK_DIAMETER_MM / 2
_N_RAYS = 36
_RAY_START_MM = 1.0
_RAY_STOP_MM = 14.0
_RAY_STEP_MM = 0.33
#: Weight of a rim crossing that leads into another wink (whose outline it
#: may be), and of one into neither felt nor a wink; a clean one weighs 1.
_FOREIGN_WEIGHT = 0.35
_UNCLEAN_WEIGHT = 0.6


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


class UnreadableImageError(ValueError):
    """The image is not a colour frame of the size the camera was calibrated for."""


# --------------------------------------------------------------------------
# The cached bird's-eye view
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BirdsEyeView:
    """Remap tables from one camera's frame to a bird's-eye grid on a plane.

    Pixel ``(col, row)`` of the view is the mat point
    ``x = x_min_mm + (col + 0.5) / px_per_mm``,
    ``y = y_max_mm - (row + 0.5) / px_per_mm`` (rows run towards -y, so the
    view looks like the mat seen from above with +y up), at height ``z_mm``.

    Parameters
    ----------
    px_per_mm : float
    x_min_mm, y_max_mm : float
        Mat coordinates of the view's top-left corner.
    size_wh : (2,) tuple of int
    z_mm : float
        Height of the plane mapped.
    source_scale : float
        Image pyramid factor the tables index into (0.5: the halved frame).
    source_crop : (4,) tuple of int
        ``(top, bottom, left, right)`` of the full frame that the view sees
        (even, so that halving the crop gives the halved frame's pixels).
    map_fixed, map_frac : ndarray
        OpenCV fixed-point remap tables into the halved crop (kept inside
        ``vision``).
    valid : (h, w) ndarray of bool
        Whether the view pixel lies inside the frame.
    on_mat : (h, w) ndarray of bool
        Whether the view pixel lies on the (nominal) mat.
    near_edge : (h, w) ndarray of bool
        Within :data:`EDGE_BAND_MM` of the mat's edge.
    on_baseline : (h, w) ndarray of bool
        Within :data:`BASELINE_BAND_MM` of a baseline.
    on_mat_u8, valid_u8, mat_small_u8, edge_rows, edge_cols : ndarray
        The same masks as OpenCV wants them (and at 1/8 scale), and the
        edge band's pixel indices: precomputed because the camera is still.
    """

    px_per_mm: float
    x_min_mm: float
    y_max_mm: float
    size_wh: tuple[int, int]
    z_mm: float
    source_scale: float
    source_crop: tuple[int, int, int, int]
    map_fixed: npt.NDArray[np.int16]
    map_frac: npt.NDArray[np.uint16]
    valid: npt.NDArray[np.bool_]
    on_mat: npt.NDArray[np.bool_]
    near_edge: npt.NDArray[np.bool_]
    on_baseline: npt.NDArray[np.bool_]
    on_mat_u8: npt.NDArray[np.uint8]
    valid_u8: npt.NDArray[np.uint8]
    mat_small_u8: npt.NDArray[np.uint8]
    edge_rows: npt.NDArray[np.intp]
    edge_cols: npt.NDArray[np.intp]

    def view_to_mat(self, view_xy_px: npt.ArrayLike) -> FloatArray:
        """View pixels (col, row), shape (N, 2), to mat mm, shape (N, 2)."""
        pts = np.asarray(view_xy_px, dtype=np.float64).reshape(-1, 2)
        return np.column_stack(
            [
                self.x_min_mm + (pts[:, 0] + 0.5) / self.px_per_mm,
                self.y_max_mm - (pts[:, 1] + 0.5) / self.px_per_mm,
            ]
        )

    def mat_to_view(self, mat_xy_mm: npt.ArrayLike) -> FloatArray:
        """Mat mm, shape (N, 2), to view pixels (col, row), shape (N, 2)."""
        pts = np.asarray(mat_xy_mm, dtype=np.float64).reshape(-1, 2)
        return np.column_stack(
            [
                (pts[:, 0] - self.x_min_mm) * self.px_per_mm - 0.5,
                (self.y_max_mm - pts[:, 1]) * self.px_per_mm - 0.5,
            ]
        )

    def window(self, region_mm: Sequence[float]) -> BirdsEyeView | None:
        """The part of this view over ``region_mm`` = (x_min, y_min, x_max, y_max), in mat mm.

        Its pixels are this view's own (the same grid, remap tables and
        masks, sliced), so a frame warped into it reads exactly what the
        whole view reads there; the halved frame is cut to what the window
        needs. None when the region misses the view.
        """
        bounds = np.asarray(region_mm, dtype=np.float64).reshape(-1)
        if bounds.shape != (4,) or not np.all(np.isfinite(bounds)):
            raise ValueError(
                f"a window is (x_min, y_min, x_max, y_max) in mat mm, but got {region_mm!r}"
            )
        x_min_mm, y_min_mm, x_max_mm, y_max_mm = (float(v) for v in bounds)
        width, height = self.size_wh
        c0 = max(int(np.floor((x_min_mm - self.x_min_mm) * self.px_per_mm)), 0)
        c1 = min(int(np.ceil((x_max_mm - self.x_min_mm) * self.px_per_mm)), width)
        r0 = max(int(np.floor((self.y_max_mm - y_max_mm) * self.px_per_mm)), 0)
        r1 = min(int(np.ceil((self.y_max_mm - y_min_mm) * self.px_per_mm)), height)
        if c1 - c0 < 8 or r1 - r0 < 8:
            return None
        rows, cols = slice(r0, r1), slice(c0, c1)
        valid = self.valid[rows, cols]
        map_fixed = self.map_fixed[rows, cols].copy()
        crop = self.source_crop
        if valid.any():
            # The halved frame only where the window reads it, with the same
            # margins as the whole view's crop (halving smooths over 5 pixels).
            read = map_fixed[valid]
            left = max(int(read[:, 0].min()) - 3, 0)
            top = max(int(read[:, 1].min()) - 3, 0)
            top_full, bottom_full, left_full, right_full = self.source_crop
            right = min(int(read[:, 0].max()) + 5, (right_full - left_full + 1) // 2)
            bottom = min(int(read[:, 1].max()) + 5, (bottom_full - top_full + 1) // 2)
            crop = (
                top_full + 2 * top,
                min(top_full + 2 * bottom, bottom_full),
                left_full + 2 * left,
                min(left_full + 2 * right, right_full),
            )
            map_fixed[..., 0] -= left
            map_fixed[..., 1] -= top
        near_edge = self.near_edge[rows, cols]
        on_mat = self.on_mat[rows, cols]
        return dataclasses.replace(
            self,
            x_min_mm=self.x_min_mm + c0 / self.px_per_mm,
            y_max_mm=self.y_max_mm - r0 / self.px_per_mm,
            size_wh=(c1 - c0, r1 - r0),
            source_crop=crop,
            map_fixed=map_fixed,
            map_frac=self.map_frac[rows, cols],
            valid=valid,
            on_mat=on_mat,
            near_edge=near_edge,
            on_baseline=self.on_baseline[rows, cols],
            on_mat_u8=self.on_mat_u8[rows, cols],
            valid_u8=self.valid_u8[rows, cols],
            mat_small_u8=cv2.resize(
                on_mat.astype(np.uint8),
                (max((c1 - c0) // 8, 1), max((r1 - r0) // 8, 1)),
                interpolation=cv2.INTER_NEAREST,
            ),
            edge_rows=np.nonzero(near_edge)[0],
            edge_cols=np.nonzero(near_edge)[1],
        )

    def warp(self, frame_bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        """The full-size frame, halved and remapped into the view.

        Only :attr:`source_crop` is halved: the rest of the frame (beyond
        the mat and its table margin) does not show in the view.
        """
        top, bottom, left, right = self.source_crop
        # Halved and remapped with a fourth (empty) channel: OpenCV's pyrDown
        # and remap of four channels run faster than of three (pyrDown
        # about three times) by more than the two colour conversions cost,
        # and give each channel the same values (integer arithmetic, one
        # channel at a time).
        out = cv2.remap(
            cv2.pyrDown(cv2.cvtColor(frame_bgr[top:bottom, left:right], cv2.COLOR_BGR2BGRA)),
            self.map_fixed,
            self.map_frac,
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )
        return np.asarray(cv2.cvtColor(out, cv2.COLOR_BGRA2BGR), dtype=np.uint8)


def build_birds_eye_view(
    camera: CameraModel,
    *,
    px_per_mm: float = COARSE_PX_PER_MM,
    z_mm: float = WINK_THICKNESS_MM / 2,
    margin_mm: float = TABLE_MARGIN_MM,
) -> BirdsEyeView:
    """Remap tables for the mat plus ``margin_mm`` of table, at ``px_per_mm``.

    The projection is evaluated on a grid every 8 view pixels and
    interpolated (it is smooth), which makes building the tables cheap.
    Points the lens model cannot see (behind the camera, or so far outside
    the field of view that the distortion polynomial folds back) are marked
    invalid. The tables index into the halved frame (``cv2.pyrDown``).
    """
    source_scale = 0.5
    x_min = -MAT_LENGTH_MM / 2 - margin_mm
    y_max = MAT_WIDTH_MM / 2 + margin_mm
    width = int(np.ceil((MAT_LENGTH_MM + 2 * margin_mm) * px_per_mm))
    height = int(np.ceil((MAT_WIDTH_MM + 2 * margin_mm) * px_per_mm))
    step = 8
    cols = np.arange(0, width + step, step, dtype=np.float64)
    rows = np.arange(0, height + step, step, dtype=np.float64)
    grid_c, grid_r = np.meshgrid(cols, rows)
    mat_x = x_min + (grid_c + 0.5) / px_per_mm
    mat_y = y_max - (grid_r + 0.5) / px_per_mm
    pts = np.column_stack([mat_x.ravel(), mat_y.ravel(), np.full(mat_x.size, z_mm)])
    image_xy = camera.mat_to_image(pts)
    # Trust the distortion model only near the frame: compare with the
    # undistorted pinhole projection, which cannot fold back.
    cam_xyz = pts @ camera.rotation.T + camera.translation_mm
    in_front = cam_xyz[:, 2] > 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = cam_xyz[:, :2] / cam_xyz[:, 2:3]
    pin = norm * np.diag(camera.camera_matrix)[:2] + camera.camera_matrix[:2, 2]
    w_px, h_px = camera.image_size_wh
    near_frame = (
        in_front
        & (pin[:, 0] > -0.25 * w_px)
        & (pin[:, 0] < 1.25 * w_px)
        & (pin[:, 1] > -0.25 * h_px)
        & (pin[:, 1] < 1.25 * h_px)
    )
    image_xy[~near_frame] = -1000.0
    coarse = image_xy.reshape(len(rows), len(cols), 2).astype(np.float32) * source_scale
    # Interpolate the coarse grid up to every view pixel.
    full_c = (np.arange(width, dtype=np.float32) / step)[None, :].repeat(height, 0)
    full_r = (np.arange(height, dtype=np.float32) / step)[:, None].repeat(width, 1)
    map_x = cv2.remap(coarse[..., 0], full_c, full_r, cv2.INTER_LINEAR)
    map_y = cv2.remap(coarse[..., 1], full_c, full_r, cv2.INTER_LINEAR)
    src_w, src_h = w_px * source_scale, h_px * source_scale
    valid = (map_x >= 0) & (map_x <= src_w - 1) & (map_y >= 0) & (map_y <= src_h - 1)
    # The part of the frame the view reads, in halved pixels: each view
    # pixel's two neighbours either way, and two more, since the halving
    # smooths over 5 frame pixels; so the view's pixels come out as from
    # halving the whole frame. (Pixels outside the frame are invalid and
    # read whatever the border gives.)
    crop = (0, h_px, 0, w_px)
    if valid.any():
        seen_x, seen_y = map_x[valid], map_y[valid]
        left = max(int(np.floor(seen_x.min())) - 3, 0)
        top = max(int(np.floor(seen_y.min())) - 3, 0)
        # (An odd frame halves to one more pixel; a crop reaching the
        # frame's edge halves with the same border as the whole frame.)
        right = min(int(np.ceil(seen_x.max())) + 4, (w_px + 1) // 2)
        bottom = min(int(np.ceil(seen_y.max())) + 4, (h_px + 1) // 2)
        crop = (2 * top, min(2 * bottom, h_px), 2 * left, min(2 * right, w_px))
        map_x = map_x - left
        map_y = map_y - top
    map_fixed, map_frac = cv2.convertMaps(map_x, map_y, cv2.CV_16SC2)
    view_x = x_min + (np.arange(width) + 0.5) / px_per_mm
    view_y = y_max - (np.arange(height) + 0.5) / px_per_mm
    on_mat = (np.abs(view_x)[None, :] <= MAT_LENGTH_MM / 2) & (
        np.abs(view_y)[:, None] <= MAT_WIDTH_MM / 2
    )
    # Signed distance to the mat's edge (positive inside), for the band
    # where felt and table blur into each other.
    edge_dist = np.minimum(
        MAT_LENGTH_MM / 2 - np.abs(view_x)[None, :], MAT_WIDTH_MM / 2 - np.abs(view_y)[:, None]
    )
    near_edge = np.abs(edge_dist) < EDGE_BAND_MM
    # The baselines (rule 2.3.1): p . d = 914.4 mm for d the unit vector
    # towards each corner. Thin painted lines, which on coloured felt take
    # a wink-like hue at their blurred edges.
    corner_dir = np.array([MAT_LENGTH_MM / 2, MAT_WIDTH_MM / 2])
    corner_dir = corner_dir / np.linalg.norm(corner_dir)
    along = np.abs(view_x)[None, :] * corner_dir[0] + np.abs(view_y)[:, None] * corner_dir[1]
    on_baseline = (np.abs(along - BASELINE_DISTANCE_MM) < BASELINE_BAND_MM) & on_mat
    return BirdsEyeView(
        px_per_mm=px_per_mm,
        x_min_mm=x_min,
        y_max_mm=y_max,
        size_wh=(width, height),
        z_mm=z_mm,
        source_scale=source_scale,
        source_crop=crop,
        map_fixed=np.asarray(map_fixed),
        map_frac=np.asarray(map_frac),
        valid=np.asarray(valid),
        on_mat=on_mat,
        near_edge=near_edge,
        on_baseline=on_baseline,
        on_mat_u8=on_mat.astype(np.uint8),
        valid_u8=np.asarray(valid, dtype=np.uint8) * 255,
        mat_small_u8=cv2.resize(
            on_mat.astype(np.uint8), (width // 8, height // 8), interpolation=cv2.INTER_NEAREST
        ),
        edge_rows=np.nonzero(near_edge)[0],
        edge_cols=np.nonzero(near_edge)[1],
    )


_VIEW_CACHE: OrderedDict[str, BirdsEyeView] = OrderedDict()
_VIEW_CACHE_SIZE = 4


def _camera_key(camera: CameraModel) -> str:
    digest = hashlib.sha1()
    digest.update(repr(camera.image_size_wh).encode())
    for arr in (camera.camera_matrix, camera.dist_coeffs, camera.rotation, camera.translation_mm):
        digest.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return digest.hexdigest()


#: A still camera's felt model is reused for this many frames ...
FELT_REFRESH_FRAMES = 15
#: ... unless the view's mean brightness moves by more than this fraction.
FELT_REFRESH_BRIGHTNESS = 0.03

# camera key -> (felt model, view brightness when made, frames used)
_FELT_CACHE: dict[str, tuple[npt.NDArray[np.uint8], float, int]] = {}


# camera key -> (felt noise on the mat and on the table, each colour's
# radius bias mm, each colour's typical hue and saturation) of the last whole
# frame: a window of a later frame, mostly winks, is judged by them.
_FRAME_STATS: dict[str, tuple[tuple[float, float], FloatArray, dict[int, tuple[float, float]]]] = {}


def clear_caches(*, keep_views: bool = False) -> None:
    """Forget every camera's felt model and, unless ``keep_views``, its remap tables.

    Call it after moving the camera; benchmarks use it to time a cold start.
    """
    if not keep_views:
        _VIEW_CACHE.clear()
        _POT_CACHE.clear()
    _FELT_CACHE.clear()
    _FRAME_STATS.clear()


def forget_felt_model(camera: CameraModel) -> None:
    """Make the next whole frame from ``camera`` model its felt afresh.

    For a frame known to have changed since the model was made (a shot
    played): winks that left a crowded spot leave the old model tinted
    there, which shows as phantom winks.
    """
    _FELT_CACHE.pop(_camera_key(camera), None)


def _cached_felt_model(
    camera: CameraModel, view: BirdsEyeView, view_bgr: npt.NDArray[np.uint8]
) -> npt.NDArray[np.uint8]:
    """The felt model, rebuilt every few frames or when the light changes."""
    key = _camera_key(camera)
    brightness = _summed_channel_means(view_bgr)
    cached = _FELT_CACHE.get(key)
    if cached is not None:
        felt, made_at, used = cached
        steady = abs(brightness - made_at) <= FELT_REFRESH_BRIGHTNESS * max(made_at, 1.0)
        if steady and used < FELT_REFRESH_FRAMES and felt.shape == view_bgr.shape:
            _FELT_CACHE[key] = (felt, made_at, used + 1)
            return felt
    felt = _felt_model(view, view_bgr)
    _FELT_CACHE[key] = (felt, brightness, 1)
    while len(_FELT_CACHE) > _VIEW_CACHE_SIZE:
        _FELT_CACHE.pop(next(iter(_FELT_CACHE)))
    return felt


def _summed_channel_means(image_bgr: npt.NDArray[np.uint8]) -> float:
    """``sum(cv2.mean(image_bgr)[:3])``, to the bit, a tenth of its cost.

    cv2.mean multiplies each channel's sum by one over the pixel count;
    cv2.sumElems gives those sums ten times faster on a 3-channel image.
    """
    pixels = image_bgr.shape[0] * image_bgr.shape[1]
    if pixels == 0:
        return 0.0
    scale = 1.0 / pixels
    return float(sum(channel * scale for channel in cv2.sumElems(image_bgr)[:3]))


def cached_birds_eye_view(camera: CameraModel) -> BirdsEyeView:
    """The coarse view for this camera, built once per camera (LRU of 4)."""
    key = _camera_key(camera)
    view = _VIEW_CACHE.get(key)
    if view is None:
        view = build_birds_eye_view(camera)
        _VIEW_CACHE[key] = view
        while len(_VIEW_CACHE) > _VIEW_CACHE_SIZE:
            _VIEW_CACHE.popitem(last=False)
    else:
        _VIEW_CACHE.move_to_end(key)
    return view


# --------------------------------------------------------------------------
# Candidates in the coarse view
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Seed:
    mat_xy_mm: FloatArray  # (2,) on the view plane
    colour_index: int
    background_bgr: FloatArray  # (3,) felt colour around it, full-frame scale
    # (row, col) in the coarse view; None for a seed placed by geometry
    # (either side of a split, in a crescent), not found in the view.
    view_rc: tuple[int, int] | None = None

    def view_pixel(self) -> tuple[int, int]:
        """Where the seed was found in the coarse view, (row, col)."""
        if self.view_rc is None:
            raise RuntimeError(f"seed at {self.mat_xy_mm} mm was not found in the coarse view")
        return self.view_rc


def _felt_model(view: BirdsEyeView, view_bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Felt (or table) colour around every view pixel: an ~80 mm median at 1/8 scale.

    Mat and table are modelled apart, so that the colour step at the mat's
    edge does not tint either side: each side's median sees the other side
    filled with its own mean colour.
    """
    height, width = view_bgr.shape[:2]
    small = cv2.resize(view_bgr, view.mat_small_u8.shape[::-1], interpolation=cv2.INTER_AREA)
    big = []
    for region in (view.mat_small_u8, 1 - view.mat_small_u8):
        if not region.any():
            big.append(None)
            continue
        filled = np.empty_like(small)
        filled[:] = np.array(cv2.mean(small, mask=region)[:3], dtype=np.uint8)
        cv2.copyTo(small, region, filled)
        # Upsample each side on its own: interpolating across the mat's
        # edge would blend felt and table into a colour that is neither.
        big.append(
            cv2.resize(cv2.medianBlur(filled, 5), (width, height), interpolation=cv2.INTER_LINEAR)
        )
    if big[0] is None or big[1] is None:
        only = big[0] if big[0] is not None else big[1]
        assert only is not None  # one side is always present
        return np.asarray(only)
    felt = big[1]
    cv2.copyTo(big[0], view.on_mat_u8, felt)
    # Near the edge, where the calibrated edge and the seen one can differ
    # by a few mm, each pixel is compared with whichever side it resembles.
    rows, cols = view.edge_rows, view.edge_cols
    pix = view_bgr[rows, cols].astype(np.int16)
    mat_side = big[0][rows, cols]
    to_mat = np.abs(pix - mat_side).sum(1)
    to_table = np.abs(pix - felt[rows, cols]).sum(1)
    closer_mat = to_mat <= to_table
    felt[rows[closer_mat], cols[closer_mat]] = mat_side[closer_mat]
    return np.asarray(felt)


def _find_seeds(
    view: BirdsEyeView,
    view_bgr: npt.NDArray[np.uint8],
    felt_u8: npt.NDArray[np.uint8],
    reference: ColourReference,
    noise: tuple[float, float] | None = None,
) -> tuple[
    list[_Seed],
    npt.NDArray[np.uint8],
    npt.NDArray[np.int8],
    _SeedStrength,
    list[tuple[int, int, int, int]],
]:
    """Seeds, the wink-colour mask and labels they came from, the seeds' contrast bar, and boxes.

    The boxes (see :func:`_tile_boxes`) hold every labelled pixel and its
    neighbours, so every pixel of the mask and of any mask cut from it.

    ``noise`` (mat, table) replaces the felt noise measured on this view:
    a window of the frame, mostly winks, would overstate it.
    """
    # Cheap integer contrast first; the colour analysis then runs only on
    # the few percent of pixels that differ from the felt at all.
    # The largest channel difference: a yellow wink on cream felt differs
    # almost only in blue, which a grey conversion would all but ignore.
    diff_b, diff_g, diff_r = cv2.split(cv2.absdiff(view_bgr, felt_u8))
    diff = cv2.max(cv2.max(diff_b, diff_g), diff_r)
    rel = cv2.GaussianBlur(diff.astype(np.float32) * _inverse_brightness(felt_u8), (5, 5), 1.0)
    # Noisy surfaces (dark felt or table, a high-gain webcam) need a higher
    # bar; mat and table are judged apart.
    sub_rel = rel[::4, ::4]
    constants = _view_constants(view)
    bars = []
    noises = []
    for k, side in enumerate((True, False)):
        if noise is None:
            sample = sub_rel[constants.sub_mat if side else constants.sub_table]
            # np.median without its wrapper and its search for NaNs (the
            # contrast of bytes over a positive brightness has none).
            level = float(column_medians(sample[:, None])[0]) if len(sample) else 0.0
        else:
            level = noise[k]
        bars.append(max(CANDIDATE_MEAN_CONTRAST, 5.0 * level))
        noises.append(level)
    # And an absolute step, so that sensor noise on a dark table is not
    # mistaken for colour.
    candidate = cv2.bitwise_and(
        (rel > min(bars)).view(np.uint8), cv2.compare(diff, MIN_GREY_STEP, cv2.CMP_GE)
    )
    candidate = cv2.bitwise_and(candidate, view.valid_u8)
    # The candidate pixels by flat index, row by row: taking by flat index
    # costs a fraction of indexing by rows and columns.
    flat = _set_pixel_index(candidate)
    width = candidate.shape[1]
    bar = np.where(view.on_mat.reshape(-1).take(flat), bars[0], bars[1])
    keep = rel.reshape(-1).take(flat) > bar
    flat = flat[keep]
    label = np.full(view_bgr.shape[:2], -1, dtype=np.int8)
    if len(flat):
        opp_a, opp_b, felt_a, felt_b = _opponent_over_felt(
            view_bgr.reshape(-1, 3).take(flat, axis=0),
            felt_u8.reshape(-1, 3).take(flat, axis=0),
            reference,
        )
        # As np.degrees(...) % 360 and classify_hue's index (see _sample_rims).
        hue = np.arctan2(opp_b, opp_a) * _DEGREES_F32
        hue += (hue < 0.0) * np.float32(360.0)
        index = _hue_classes(hue, reference)
        step_needed = (
            np.where(view.near_edge.reshape(-1).take(flat), 2.0, 1.0) * CANDIDATE_CHROMA_STEP
        )
        # Unlike the felt in hue, not just darker: shadows and the edges of
        # dark things on coloured felt have the felt's hue. (The hypot of the
        # chroma step and of the colour, against their bars.)
        good = _saturated(opp_a, opp_b, CANDIDATE_SATURATION) & _saturated(
            opp_a - felt_a, opp_b - felt_b, step_needed
        )
        label.reshape(-1)[flat] = np.where(good, index, -1)
        # OpenCV's opening by a 2x2 square below can move a pixel by one.
        flat = flat[good]
        boxes = _tile_boxes(flat // width, flat % width, label.shape, grow=1)
    else:
        boxes = []
    # Baselines are not winks; a wink lying across one keeps its two sides.
    label.reshape(-1)[constants.baseline] = -1
    # One distance transform for all colours: a pixel whose right or lower
    # neighbour has another label counts as background, so touching winks
    # of different colours stay apart.
    fg = label >= 0
    fg[:, :-1] &= label[:, :-1] == label[:, 1:]
    fg[:-1, :] &= label[:-1, :] == label[1:, :]
    mask = cv2.morphologyEx(fg.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    # Whatever holds a disc wider than a large wink (with blur) is a
    # squidger, a mug, a board or a book: drop it, edges included. Any wink
    # colour counts, as such things need not keep to one hue.
    # (An opening by a disc, done with two distance transforms.)
    # One colour at a time, a squidger is wider than a large wink; across
    # colours (an orange board flickers between red and yellow) only much
    # wider things count, since a cluster of winks is wide too.
    # (At half scale: size matters here, not position.)
    # Across colours, only the colours that make up a good part of the wide
    # thing go: a wink of another colour against it (a yellow wink at a
    # blue pot's foot) is part of the wide region, but not of the thing.
    half_wh = (mask.shape[1] // 2, mask.shape[0] // 2)
    px_per_mm = view.px_per_mm / 2
    for region, radius_mm, by_colour in (
        (mask, MAX_WINK_RADIUS_MM + 2.0, False),
        (label >= 0, 24.0, True),
    ):
        big_r = radius_mm * px_per_mm
        small = cv2.resize(region.astype(np.uint8), half_wh, interpolation=cv2.INTER_NEAREST)
        inside = cv2.distanceTransform(small, cv2.DIST_L2, 3)
        core = (inside > big_r).astype(np.uint8)
        if not core.any():
            continue
        reach = _within_reach(core, big_r + 1.5)
        full = cv2.resize(reach.astype(np.uint8), mask.shape[::-1], interpolation=cv2.INTER_NEAREST)
        if by_colour:
            # Labels shifted by one into bytes: 0 is no colour.
            shifted = (label + 1).view(np.uint8)
            counts = np.bincount(shifted[full > 0], minlength=256)
            counts[0] = 0
            of_thing = counts >= WIDE_THING_COLOUR_SHARE * max(int(counts.sum()), 1)
            full &= of_thing[shifted]
        mask[full > 0] = 0
    _drop_rods(mask, view.px_per_mm)
    # A wink's middle stands well clear of the felt's noise; a blob of
    # noise on grainy felt only just passes the pixel bar.
    strength = _SeedStrength(
        rel,
        view.on_mat,
        SEED_NOISE_RATIO * noises[0],
        SEED_NOISE_RATIO * noises[1],
        (noises[0], noises[1]),
    )
    seeds = strength.strong(_seeds_from_mask(view, mask, label, felt_u8, boxes))
    return seeds, mask, label, strength, boxes


@dataclass(frozen=True)
class _ViewConstants:
    """What the seed search reads of a view every frame, made once per view."""

    sub_mat: npt.NDArray[np.bool_]  # (h/4, w/4) valid and on the mat, every 4th pixel
    sub_table: npt.NDArray[np.bool_]  # ... valid and off it
    baseline: npt.NDArray[np.intp]  # flat indices of ``on_baseline``


# id of a view -> (the view, its constants); a still camera's view is reused.
_VIEW_CONSTANTS: dict[int, tuple[BirdsEyeView, _ViewConstants]] = {}


def _view_constants(view: BirdsEyeView) -> _ViewConstants:
    """The view's :class:`_ViewConstants` (cached while the view lives)."""
    cached = _VIEW_CONSTANTS.get(id(view))
    if cached is not None and cached[0] is view:
        return cached[1]
    sub_valid = view.valid[::4, ::4]
    sub_on_mat = view.on_mat[::4, ::4]
    constants = _ViewConstants(
        sub_mat=sub_valid & sub_on_mat,
        sub_table=sub_valid & ~sub_on_mat,
        baseline=np.flatnonzero(view.on_baseline),
    )
    if len(_VIEW_CONSTANTS) >= 2 * _VIEW_CACHE_SIZE:
        _VIEW_CONSTANTS.clear()
    _VIEW_CONSTANTS[id(view)] = (view, constants)
    return constants


def _set_pixels(
    image: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Rows and columns of the nonzero pixels of a (h, w) uint8 image, row by row.

    As ``cv2.findNonZero``, faster on a sparse image (see :func:`_set_pixel_index`).
    """
    width = image.shape[1]
    index = _set_pixel_index(image)
    return index // width, index % width


def _set_pixel_index(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.intp]:
    """Flat indices of the nonzero pixels of a (h, w) uint8 image, in order.

    As ``np.flatnonzero``, faster on a sparse image: eight pixels at a time
    are read as one 64-bit word, and only the nonzero words are looked into.
    """
    flat = np.ascontiguousarray(image).reshape(-1)
    whole = len(flat) // 8 * 8
    words = np.flatnonzero(flat[:whole].view(np.uint64))
    within = np.flatnonzero(flat[:whole].reshape(-1, 8)[words])
    return np.concatenate(
        [words[within // 8] * 8 + within % 8, np.flatnonzero(flat[whole:]) + whole]
    )


def _drop_rods(mask: npt.NDArray[np.uint8], px_per_mm: float) -> None:
    """Clear, in place, the blobs of ``mask`` shaped like a pen or a pencil.

    A blob at least :data:`ROD_MIN_LENGTH_MM` long and
    :data:`ROD_MIN_ELONGATION` times longer than wide (its smallest
    enclosing rectangle) is cut into :data:`ROD_SLICE_MM` slices across its
    length (see :func:`_slice_widths`). About as wide all along, it is a
    pen's and goes: the ends of a pen otherwise pass for winks' rims. Where
    a slice bulges out of it (a wink of the pen's colour touching its
    side), the blob goes but for :data:`ROD_BULGE_KEEP_MM` round each
    bulge. Not told apart from a pen: a wink of its colour at its end, in
    line, if it widens the blob by less than :data:`ROD_WIDTH_SPREAD`
    allows; and five or more small winks of one colour touching in a
    straight line, whose waists do not show at the coarse view's 2 mm
    pixels. A blob whose width changes otherwise (narrowing) is kept.
    """
    # Outlines, not labelled components: a few contours on a sparse mask
    # cost a tenth of a millisecond, labelling the whole view forty times that.
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    # A rod at any angle spans at least its length over sqrt(2) along x or y.
    reach_px = ROD_MIN_LENGTH_MM * px_per_mm / np.sqrt(2.0)
    keep_px = ROD_BULGE_KEEP_MM * px_per_mm
    for outline in contours:
        left_px, top_px, width_px, height_px = cv2.boundingRect(outline)
        if max(width_px, height_px) < reach_px:
            continue
        (_, _), (side_a_px, side_b_px), angle_deg = cv2.minAreaRect(outline)
        # The rectangle runs through pixel centres: a pixel more each way.
        length_mm = (max(side_a_px, side_b_px) + 1.0) / px_per_mm
        across_mm = (min(side_a_px, side_b_px) + 1.0) / px_per_mm
        if length_mm < ROD_MIN_LENGTH_MM or length_mm < ROD_MIN_ELONGATION * across_mm:
            continue
        blob = np.zeros((height_px, width_px), np.uint8)
        cv2.drawContours(blob, [outline], -1, 1, cv2.FILLED, offset=(-left_px, -top_px))
        rows, cols = np.nonzero(blob)
        # The long side's direction: minAreaRect's angle is that of side a.
        theta = np.radians(angle_deg) + (0.0 if side_a_px >= side_b_px else np.pi / 2)
        along_px = cols * np.cos(theta) + rows * np.sin(theta)
        slices = _slice_widths(along_px, px_per_mm)
        if slices is None:
            continue
        index, counts = slices
        typical = float(np.median(counts))
        if counts.min() < ROD_WIDTH_SPREAD * typical:
            continue  # narrows: winks in a row, or not a straight thing at all
        bulge = np.flatnonzero(counts > typical / ROD_WIDTH_SPREAD)
        clear = np.ones(len(rows), dtype=bool)
        for b in bulge:
            in_bulge = index == b
            centre_rc = (rows[in_bulge].mean(), cols[in_bulge].mean())
            clear &= np.hypot(rows - centre_rc[0], cols - centre_rc[1]) > keep_px
        mask[rows[clear] + top_px, cols[clear] + left_px] = 0


def _slice_widths(
    along_px: FloatArray, px_per_mm: float
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None:
    """Each pixel's slice across a long blob, and the pixels in each slice.

    ``along_px`` is each pixel's position along the blob's long axis. The
    blob is cut into :data:`ROD_SLICE_MM` slices, the first and last slice's
    length left out at either end (a rounded or cut end is narrower); the
    pixels in a slice measure the blob's width there. Pixels at the ends get
    slice -1. None when fewer than three slices remain.
    """
    slice_px = max(1.0, ROD_SLICE_MM * px_per_mm)
    offset_px = along_px - along_px.min()
    span_px = float(offset_px.max())
    n_slices = int((span_px - 2 * slice_px) // slice_px)
    if n_slices < 3:
        return None
    index = np.floor((offset_px - slice_px) / slice_px).astype(np.intp)
    index[(index < 0) | (index >= n_slices)] = -1
    counts = np.bincount(index[index >= 0], minlength=n_slices)
    return index, counts


#: A wink-coloured blob at least this long (mm; three large winks in a row
#: span 66) ...
ROD_MIN_LENGTH_MM = 70.0
#: ... and this many times longer than wide is a pen or a pencil (a pen's
#: blob, its side and blur included, is about 20 mm wide in an overhead
#: view; a pen is about 140 mm long) ...
ROD_MIN_ELONGATION = 4.0
#: ... when, measured in slices this long (mm) ...
ROD_SLICE_MM = 6.0
#: ... no slice is narrower than this share of the median slice, nor wider
#: than its inverse (the long thin blobs of 11 generated frames that pass:
#: narrowest 0.76-1.0, widest 1.0-1.33 of their median).
ROD_WIDTH_SPREAD = 0.7
#: Round a slice that bulges out of a pen (a wink touching it), this much of
#: the blob is kept, mm: a large wink's diameter.
ROD_BULGE_KEEP_MM = 22.0


def _within_reach(core: npt.NDArray[np.uint8], reach_px: float) -> npt.NDArray[np.bool_]:
    """(h, w) whether each pixel lies within ``reach_px`` of a nonzero ``core`` pixel.

    The distance is OpenCV's 3x3 chamfer estimate of the Euclidean one, as
    from ``cv2.distanceTransform(1 - core, DIST_L2, 3)`` over the whole
    image, but computed only around the core's bounding box: the cheapest
    chamfer path between two pixels stays within their bounding box, and
    a chamfer step of ``0.955`` px or more makes every pixel beyond the
    margin farther than ``reach_px``. The core is small (a squidger, a mug),
    the image is the whole mat.
    """
    out = np.zeros(core.shape, dtype=bool)
    found = cv2.findNonZero(core)
    if found is None:
        return out
    left, top, width, height = cv2.boundingRect(found)
    margin = int(np.ceil(reach_px / 0.955)) + 1
    r0, c0 = max(top - margin, 0), max(left - margin, 0)
    r1 = min(top + height + margin, core.shape[0])
    c1 = min(left + width + margin, core.shape[1])
    crop = np.ascontiguousarray(1 - core[r0:r1, c0:c1])
    out[r0:r1, c0:c1] = cv2.distanceTransform(crop, cv2.DIST_L2, 3) <= reach_px
    return out


@dataclass(frozen=True)
class _SeedStrength:
    """Contrast with the felt that a seed's middle must reach, on the mat and off it."""

    rel: npt.NDArray[np.float32]  # (h, w) contrast of the coarse view
    on_mat: npt.NDArray[np.bool_]  # (h, w)
    bar_mat: float
    bar_table: float
    noise: tuple[float, float] = (0.0, 0.0)  # the felt's noise it was set from (mat, table)

    def is_strong(self, seeds: list[_Seed]) -> npt.NDArray[np.bool_]:
        """(n,) whether each seed stands clear of the felt's noise."""
        return np.array(
            [
                self.rel[seed.view_pixel()]
                >= (self.bar_mat if self.on_mat[seed.view_pixel()] else self.bar_table)
                for seed in seeds
            ],
            dtype=bool,
        ).reshape(-1)

    def strong(self, seeds: list[_Seed]) -> list[_Seed]:
        """The seeds that stand clear of the felt's noise."""
        return [seed for seed, ok in zip(seeds, self.is_strong(seeds), strict=True) if ok]


_INVERSE_BRIGHTNESS: dict[int, tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]] = {}


def _inverse_brightness(felt_u8: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """1 / (mean of B, G, R + 3) of the felt model; remembered while the model is reused."""
    cached = _INVERSE_BRIGHTNESS.get(id(felt_u8))
    if cached is not None and cached[0] is felt_u8:
        return cached[1]
    mean_weights = np.full((1, 3), 1.0 / 3.0, np.float32)
    inverse = 1.0 / (cv2.transform(felt_u8, mean_weights).astype(np.float32) + 3.0)
    _INVERSE_BRIGHTNESS.clear()
    _INVERSE_BRIGHTNESS[id(felt_u8)] = (felt_u8, inverse)
    return inverse


def _seeds_from_mask(
    view: BirdsEyeView,
    mask: npt.NDArray[np.uint8],
    label: npt.NDArray[np.int8],
    felt_u8: npt.NDArray[np.uint8],
    boxes: Sequence[tuple[int, int, int, int]] | None = None,
) -> list[_Seed]:
    """One seed per peak of the distance transform of wink-coloured pixels.

    ``boxes`` hold every set pixel of ``mask`` (see :func:`_distance_transform`);
    by default they are found.
    """
    if boxes is None:
        boxes = _set_pixel_boxes(mask)
    else:
        # Each box cut down to the set pixels it holds (the mask is a cut of
        # what the boxes were made round): they still hold every set pixel.
        tight = []
        for top, bottom, left, right in boxes:
            x, y, width, height = cv2.boundingRect(mask[top:bottom, left:right])
            if width:
                tight.append((top + y, top + y + height, left + x, left + x + width))
        boxes = tight
    dist = _distance_transform(mask, boxes)
    # A peak at least 2 mm inside its blob: lines (baselines) and the
    # fringes of other things are thinner than any visible part of a wink.
    min_dist = 2.0 * view.px_per_mm
    rows, cols, score = _distance_peaks(dist, min_dist, boxes)
    if len(rows) == 0:
        return []
    strength = dist[rows, cols] + 1e-3 * score
    kind = label[rows, cols].astype(np.int64)
    order = np.argsort(-strength)
    rows, cols, strength, kind = rows[order], cols[order], strength[order], kind[order]
    sep2 = (cols[:, None] - cols[None, :]) ** 2 + (rows[:, None] - rows[None, :]) ** 2
    same = kind[:, None] == kind[None, :]
    # A blob with a point farther than a large wink's radius (plus blur)
    # from its edge is a squidger (or a mug): no seeds anywhere near it.
    too_big = (MAX_WINK_RADIUS_MM + 2.0) * view.px_per_mm
    big = strength > too_big
    reach2 = (strength[:, None] + 4.0 * view.px_per_mm) ** 2
    suppressed = big | (same & big[:, None] & (sep2 < reach2)).any(axis=0)
    # Greedy non-maximum suppression, strongest first, per colour.
    near = same & (sep2 < (8.0 * view.px_per_mm) ** 2)
    chosen = []
    for i in range(len(rows)):
        if not suppressed[i]:
            suppressed |= near[i]
            chosen.append(i)
    pick = np.array(chosen, dtype=np.intp)
    mat_xy = view.view_to_mat(np.column_stack([cols[pick], rows[pick]]))
    felt = felt_u8[rows[pick], cols[pick]].astype(np.float64)
    return [
        _Seed(mat_xy[j], int(kind[i]), felt[j], (int(rows[i]), int(cols[i])))
        for j, i in enumerate(pick)
    ]


#: The wink-coloured pixels of each tile of this many pixels are
#: distance-transformed together, with this margin round them.
_DIST_TILE_PX = 128
_DIST_HALO_PX = 16


def _tile_boxes(
    rows: npt.NDArray[np.integer],
    cols: npt.NDArray[np.integer],
    shape: tuple[int, ...],
    grow: int = 0,
) -> list[tuple[int, int, int, int]]:
    """``(top, bottom, left, right)`` round the given pixels of each :data:`_DIST_TILE_PX` tile.

    Each box is grown by ``grow`` pixels (within ``shape``): it then holds
    every pixel within ``grow`` of its tile's pixels, and may overlap its
    neighbours' boxes by as much.
    """
    if len(rows) == 0:
        return []
    rows = np.asarray(rows, dtype=np.intp)
    cols = np.asarray(cols, dtype=np.intp)
    tiles_across = shape[1] // _DIST_TILE_PX + 1
    tile = (rows // _DIST_TILE_PX) * tiles_across + cols // _DIST_TILE_PX
    order = np.argsort(tile, kind="stable")
    tile, rows, cols = tile[order], rows[order], cols[order]
    starts = np.flatnonzero(np.concatenate([[True], tile[1:] != tile[:-1]]))
    return list(
        zip(
            np.maximum(np.minimum.reduceat(rows, starts) - grow, 0).tolist(),
            np.minimum(np.maximum.reduceat(rows, starts) + 1 + grow, shape[0]).tolist(),
            np.maximum(np.minimum.reduceat(cols, starts) - grow, 0).tolist(),
            np.minimum(np.maximum.reduceat(cols, starts) + 1 + grow, shape[1]).tolist(),
            strict=True,
        )
    )


def _set_pixel_boxes(image: npt.NDArray[np.uint8]) -> list[tuple[int, int, int, int]]:
    """:func:`_tile_boxes` round the nonzero pixels of a (h, w) uint8 image."""
    rows, cols = _set_pixels(image)
    return _tile_boxes(rows, cols, image.shape)


def _distance_transform(
    mask: npt.NDArray[np.uint8], boxes: Sequence[tuple[int, int, int, int]] | None = None
) -> npt.NDArray[np.float32]:
    """``cv2.distanceTransform(mask, cv2.DIST_L2, 5)``, exactly, from crops round the set pixels.

    The wink-coloured pixels are a fraction of a percent of the coarse
    view, so the transform runs only on a crop round each of ``boxes``
    (``(top, bottom, left, right)`` that hold every set pixel between them,
    as :func:`_tile_boxes` makes them; by default from the set pixels
    themselves), :data:`_DIST_HALO_PX` wider. A crop sees fewer zero
    pixels than the whole image, so it can only overstate a distance; a
    zero beyond its margin is at least ``halo + 1`` away (OpenCV's 5x5
    chamfer steps cost 1, 1.4 and 2.1969 for moves of 1, 1 and 2 pixels
    along x or y, in integer arithmetic), and the cheapest path to a zero
    inside the crop stays inside it. So a crop whose distances stay below
    the halo is exact; otherwise (a squidger, a mug) the whole image is
    transformed. (The 3x3 mask sums float steps, whose rounding depends on
    the path.) Pixels outside the boxes are zero, and so is their distance;
    where boxes overlap, each crop gives the same (exact) distances.
    """
    if boxes is None:
        boxes = _set_pixel_boxes(mask)
    dist = np.zeros(mask.shape, np.float32)
    height, width = mask.shape
    halo = _DIST_HALO_PX
    for top, bottom, left, right in boxes:
        r0, r1 = max(top - halo, 0), min(bottom + halo, height)
        c0, c1 = max(left - halo, 0), min(right + halo, width)
        crop = cv2.distanceTransform(np.ascontiguousarray(mask[r0:r1, c0:c1]), cv2.DIST_L2, 5)
        inner = crop[top - r0 : bottom - r0, left - c0 : right - c0]
        if float(inner.max()) >= halo:
            return np.asarray(cv2.distanceTransform(mask, cv2.DIST_L2, 5))
        dist[top:bottom, left:right] = inner
    return dist


#: The margin each box searched for peaks needs: the blur reaches 6 pixels,
#: the 5x5 maximum 2 more.
_PEAK_HALO_PX = 8


def _distance_peaks(
    dist: npt.NDArray[np.float32],
    min_dist: float,
    boxes: Sequence[tuple[int, int, int, int]] | None = None,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """Rows, columns and scores of the peaks of ``dist`` at least ``min_dist`` high.

    Blurring a little into the distance breaks its plateaus (a thin blob is
    all ridge), so that each blob has one peak, at its middle: the score is
    ``dist + 0.5 * blur(dist)``, and a peak is a 5x5 maximum of the score.
    Most of the view is bare felt, so this runs only in ``boxes``
    (``(top, bottom, left, right)``, which must hold every nonzero distance
    between them, as :func:`_tile_boxes` makes them; by default those round
    the nonzero distances); each carries a margin wide enough that its own
    pixels come out exactly as from the whole image.
    """
    height, width = dist.shape
    regions = _set_pixel_boxes((dist > 0).view(np.uint8)) if boxes is None else boxes
    kernel = np.ones((5, 5), np.uint8)
    found_rows, found_cols, found_scores = [], [], []
    for r0, r1, c0, c1 in regions:
        top, left = max(r0 - _PEAK_HALO_PX, 0), max(c0 - _PEAK_HALO_PX, 0)
        bottom = min(r1 + _PEAK_HALO_PX, height)
        right = min(c1 + _PEAK_HALO_PX, width)
        sub = np.ascontiguousarray(dist[top:bottom, left:right])
        score = sub + 0.5 * cv2.GaussianBlur(sub, (0, 0), 1.5)
        peaks = (sub >= min_dist) & (score >= cv2.dilate(score, kernel))
        # Only the region's own pixels: the margin belongs to its neighbours.
        inner = peaks[r0 - top : r1 - top, c0 - left : c1 - left]
        found = cv2.findNonZero(inner.view(np.uint8))
        if found is None:
            continue
        rows, cols = found[:, 0, 1], found[:, 0, 0]
        found_scores.append(score[rows + (r0 - top), cols + (c0 - left)])
        found_rows.append(rows + r0)
        found_cols.append(cols + c0)
    if not found_rows:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0, dtype=np.float32)
    rows_all = np.concatenate(found_rows).astype(np.intp)
    cols_all = np.concatenate(found_cols).astype(np.intp)
    scores_all = np.concatenate(found_scores).astype(np.float32)
    # Row-major order, as a search of the whole image gives them (ties in
    # strength are then broken the same way); a peak where two boxes
    # overlap is found by both, with the same (exact) score: once.
    order = np.unique(rows_all * width + cols_all, return_index=True)[1]
    return rows_all[order], cols_all[order], scores_all[order]


# --------------------------------------------------------------------------
# Rim fitting along rays in the full frame
# --------------------------------------------------------------------------


def _local_affines(
    camera: CameraModel, centres_mm: FloatArray, z_mm: FloatArray
) -> npt.NDArray[np.float64]:
    """(n, 2, 3) affine maps mat mm -> image px around each centre."""
    n = len(centres_mm)
    delta = 5.0
    offsets = np.array([[0.0, 0.0], [delta, 0.0], [0.0, delta]])
    pts = (centres_mm[:, None, :] + offsets[None, :, :]).reshape(-1, 2)
    pts3 = np.column_stack([pts, np.repeat(z_mm, 3)])
    img = camera.mat_to_image(pts3).reshape(n, 3, 2)
    col_x = (img[:, 1] - img[:, 0]) / delta
    col_y = (img[:, 2] - img[:, 0]) / delta
    origin = img[:, 0] - col_x * centres_mm[:, 0:1] - col_y * centres_mm[:, 1:2]
    return np.stack([col_x, col_y, origin], axis=2)


@dataclass(frozen=True)
class _Rims:
    """Rim crossings along ``r`` rays from each of ``n`` centres."""

    points_mm: FloatArray  # (n, r, 2) on the sampled plane
    weight: FloatArray  # (n, r): 0 no crossing, 1 into felt, less into another wink
    foreign: npt.NDArray[np.bool_]  # (n, r): the crossing leads into another wink
    foreign_colour: npt.NDArray[np.int8]  # (n, r): that wink's colour index, else -1
    covered: npt.NDArray[np.bool_]  # (n, r): another wink lies over this one along the ray
    runs_out: FloatArray  # (n,) fraction of rays still in this colour at their end
    run_axis: FloatArray  # (n, 2) main direction of those rays (unit, sign arbitrary)
    wink_colour: FloatArray  # (n, 3) in felt-brightness units
    own_fraction: FloatArray  # (n,) of samples within a small wink's radius: this colour
    felt_fraction: FloatArray  # (n,) ... and plain felt
    pot_hidden: npt.NDArray[np.bool_]  # (n, r): the pot stands in front of the rim on this ray


def _sample_rims(
    image_bgr: npt.NDArray[np.uint8],
    camera: CameraModel,
    centres_mm: FloatArray,
    colour_index: npt.NDArray[np.int64],
    felt_bgr: FloatArray,
    plane_z_mm: FloatArray,
    reference: ColourReference,
    outside_pot: npt.NDArray[np.bool_],
    n_rays: int = _N_RAYS,
    *,
    crescents: bool = False,
    floor_retry: bool = True,
) -> _Rims:
    """Rim crossings along rays from each centre (see :class:`_Rims`).

    ``outside_pot`` (n,) says which centres belong to winks outside the pot
    (see :func:`_outside_pot`). For those near it, samples the pot hides
    (see :class:`_PotShadow`) are not another wink, and a crossing just
    before them, or a ray that runs behind the pot without one, is marked
    ``pot_hidden``: :func:`_fit_rims` may then judge the rim on what the
    pot leaves in view. ``crescents`` says whether to find ``foreign_colour``
    (else all -1), which only seeds need. ``floor_retry`` says whether a
    centre in the pot whose colour runs on against the felt's is sampled
    again against the pot floor's (:func:`_pot_floor_bgr`).
    """
    n = len(centres_mm)
    near_pot = _near_pot(camera, centres_mm, plane_z_mm, _RAY_STOP_MM)
    in_pot = near_pot & ~outside_pot
    radii, unit, offsets, offsets_x, offsets_y = _ray_geometry(n_rays)
    n_s = len(radii)
    affine = _local_affines(camera, centres_mm, plane_z_mm)  # (n, 2, 3)
    # Image position = A @ (centre + offset) + b, for every sample.
    base = np.einsum("nij,nj->ni", affine[:, :, :2], centres_mm) + affine[:, :, 2]
    map_xy = np.empty((n, n_rays, n_s, 2), dtype=np.float32)
    term = np.empty((n, n_rays, n_s))
    along = np.empty((n, n_rays, n_s))
    for axis in (0, 1):
        # base + A[0] * x + A[1] * y, in that order, into reused buffers.
        np.multiply(affine[:, axis, 0, None, None], offsets_x, out=term)
        np.add(base[:, axis, None, None], term, out=along)
        np.multiply(affine[:, axis, 1, None, None], offsets_y, out=term)
        along += term
        map_xy[..., axis] = along
    # Samples where the pot stands in front, for winks outside it.
    pot_sample = np.zeros((n, n_rays, n_s), dtype=bool)
    behind_pot = near_pot & outside_pot
    pot = _pot_shadow(camera) if behind_pot.any() else None
    if pot is not None:
        behind_pot &= np.isclose(plane_z_mm, pot.plane_z_mm)
        rows = np.flatnonzero(behind_pot)
        pot_sample[rows] = pot.lookup(pot.hidden, centres_mm[rows, None, None, :] + offsets)
    map_xy = map_xy.reshape(n * n_rays, n_s, 2)
    # remap takes at most 32767 rows per call.
    chunks = [
        cv2.remap(
            image_bgr,
            map_xy[start : start + 30000],
            None,
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT,
        )
        for start in range(0, len(map_xy), 30000)
    ]
    # One contiguous plane per channel (numpy casts a strided channel of
    # bytes to float several times slower, and reduces over a trailing
    # axis of 3 slowly).
    sample_planes = cv2.split(chunks[0] if len(chunks) == 1 else np.concatenate(chunks))
    felt = reference.normalise(felt_bgr, felt_bgr).astype(np.float32)
    scale = (
        1.0
        / (felt_bgr.astype(np.float32).mean(axis=-1, keepdims=True) + np.float32(1.0))
        / np.asarray(reference.white_bgr, dtype=np.float32)
    ).astype(np.float32)  # (n, 3): what normalise divides by, inverted
    planes = [
        np.multiply(
            sample_planes[c].reshape(n, n_rays, n_s), scale[:, c, None, None], dtype=np.float32
        )
        for c in range(3)
    ]
    diffs = [planes[c] - felt[:, c, None, None] for c in range(3)]
    contrast = np.sqrt(diffs[0] * diffs[0] + diffs[1] * diffs[1] + diffs[2] * diffs[2])
    # As vision.colour.hue_saturation, per plane.
    total = planes[0] + planes[1] + planes[2] + np.float32(0.3)
    opp_a = (planes[2] - planes[1]) / total
    opp_b = (np.float32(0.5) * (planes[2] + planes[1]) - planes[0]) / total
    # As np.degrees (which multiplies float32 by this float32 constant), faster.
    hue = np.arctan2(opp_b, opp_a) * _DEGREES_F32
    # As % 360 (which numpy computes as hue + 360 for negative hues), faster
    # than np.where; a -0.0 becomes +0.0, the same whole degree.
    hue += (hue < 0.0) * np.float32(360.0)
    label = _hue_classes(hue, reference)
    vivid = _saturated(opp_a, opp_b, CANDIDATE_SATURATION) & (contrast > CANDIDATE_CONTRAST)
    own = (label == colour_index[:, None, None]) & vivid
    # The wink's own colour: the mean of its clearly-coloured core samples.
    core = own & (radii < 0.5 * _SMALL_R)[None, None, :]
    n_core = core.sum(axis=(1, 2))
    core_f = core.astype(np.float32)
    mean_core = (
        np.column_stack([np.einsum("nrs,nrs->n", planes[c], core_f) for c in range(3)])
        / np.maximum(n_core, 1)[:, None]
    )
    wink = np.where((n_core >= 8)[:, None], mean_core, reference.prototypes[colour_index])
    if pot is not None:
        # Not from what the pot hides (a translucent pot tints it);
        # when the pot hides the middle, from the rest of the disc.
        rows = np.flatnonzero(behind_pot)
        for within_mm in (0.5 * _SMALL_R, _SMALL_R - 1.0):
            clear = own[rows] & ~pot_sample[rows] & (radii < within_mm)
            n_clear = clear.sum(axis=(1, 2))
            clear_f = clear.astype(np.float32)
            mean_clear = (
                np.column_stack(
                    [np.einsum("nrs,nrs->n", planes[c][rows], clear_f) for c in range(3)]
                )
                / np.maximum(n_clear, 1)[:, None]
            )
            enough = n_clear >= 8
            wink[rows[enough]] = mean_clear[enough]
            rows = rows[~enough]
    weak = np.linalg.norm(wink - felt, axis=1) < 0.2
    wink[weak] = reference.prototypes[colour_index[weak]]
    direction = wink - felt
    alpha = (
        diffs[0] * direction[:, 0, None, None]
        + diffs[1] * direction[:, 1, None, None]
        + diffs[2] * direction[:, 2, None, None]
    ) / ((direction**2).sum(1)[:, None, None])
    # Another wink's colour ends this wink even where its coverage along
    # this wink's colour direction stays high (red and yellow share much).
    other = (label >= 0) & (label != colour_index[:, None, None]) & vivid
    other = _unlike_own_colour(
        other,
        (planes, alpha, (opp_a, opp_b)),
        felt,
        direction,
        label,
        reference,
        centres_mm,
        offsets,
        near_pot,
    )
    # The pot is not another wink; where it stands, this wink may show over
    # it (nearer the camera) or not, so its samples are judged as usual.
    other &= ~pot_sample
    inside = (alpha >= 0.5) & ~other
    # The rim is the first fall below 0.5 after the ray has been inside.
    # (As np.maximum.accumulate along the ray, which is slow on bool.)
    first_in = np.argmax(inside, axis=2)
    seen = (np.arange(n_s) >= first_in[..., None]) & inside.any(axis=2)[..., None]
    fall = seen[..., :-1] & inside[..., :-1] & ~inside[..., 1:]
    has = fall.any(axis=2)
    j = np.argmax(fall, axis=2)  # (n, rays)
    # Samples picked along each ray by flat index (as np.take_along_axis,
    # without its cost): ray_start is each ray's first sample.
    ray_start = (np.arange(n * n_rays) * n_s).reshape(n, n_rays)
    a0 = alpha.reshape(-1).take(ray_start + j)
    a1 = alpha.reshape(-1).take(ray_start + j + 1)
    frac = np.clip((a0 - 0.5) / np.maximum(a0 - a1, 1e-6), 0.0, 1.0)
    rim_r = radii[j] + frac * _RAY_STEP_MM
    points = centres_mm[:, None, :] + unit[None, :, :] * rim_r[..., None]
    # Beyond the rim: felt (a clean rim point) or another wink?
    beyond = np.clip(j[..., None] + np.arange(4, 13), 0, n_s - 1)
    contrast_beyond = contrast.reshape(-1).take(ray_start[..., None] + beyond)
    # The felt's own texture and noise at full resolution, per wink: the
    # median contrast of the outermost samples, which are mostly felt.
    felt_noise = column_medians(contrast[..., -6:].reshape(n, -1).T)
    clean_bar = np.maximum(0.5 * CANDIDATE_CONTRAST, 2.5 * felt_noise)
    clean = _mean(contrast_beyond, 2) < clean_bar[:, None]
    # Into another wink (not a shadow or the felt's texture).
    # (More than 0.3 of the 9 samples: 3 or more.)
    n_other_beyond = other.reshape(-1).take(ray_start[..., None] + beyond).sum(axis=2)
    other_beyond = n_other_beyond >= 3
    # The pot (at the mat's centre) hides winks that touch it. Outside it, a
    # ray whose rim lies where the pot stands in front or just before, or
    # that runs behind the pot without a rim, is hidden as if covered (the
    # pot's edge is not the wink's, and the wink's own edge seen through a
    # clear pot cannot be told from the pot's shading). For a wink seen in
    # the pot, a crossing where the pot's wall stands in front is not its rim.
    by_pot = np.zeros(points.shape[:2], dtype=bool)
    if in_pot.any():
        by_pot[in_pot] = _behind_pot(camera, points[in_pot], plane_z_mm[in_pot])
    pot_hidden = np.zeros(points.shape[:2], dtype=bool)
    if pot is not None:
        rows = np.flatnonzero(behind_pot)
        ahead = np.clip(
            j[rows, :, None] + np.arange(1 + int(np.ceil(POT_EDGE_MM / _RAY_STEP_MM))), 0, n_s - 1
        )
        pot_edge = pot_sample.reshape(-1).take(ray_start[rows, :, None] + ahead).any(axis=2)
        pot_in_reach = pot_sample[rows][..., radii <= _LARGE_R + 2.0].any(axis=2)
        pot_hidden[rows] = np.where(has[rows], pot_edge, pot_in_reach)
    # A crossing just before the pot may still be the rim, where a wink in
    # front of the pot's overhang ends before it: it stays, weak, and
    # counts as hidden only when the fit leaves it out.
    foreign = has & ((~clean & other_beyond) | by_pot | pot_hidden)
    # Which colour the crossing leads into: the commonest among those beyond.
    # (Not only where it counts as foreign: on grainy felt a thin crescent of
    # another wink may not raise the mean contrast past the felt's bar.)
    foreign_colour = np.full(points.shape[:2], -1, dtype=np.int8)
    # Not a crossing well inside a small wink's rim (allowing for a seed
    # 2 mm off the middle): that is the edge of a wink lying over this one.
    into_wink = (
        has
        & (n_other_beyond >= CRESCENT_MIN_BEYOND)
        & (rim_r >= _SMALL_R - CRESCENT_ON_RIM_MM - 2.0)
        & ~by_pot
        & ~pot_hidden
    )
    if crescents and into_wink.any():
        # Only runs of adjacent rays make a crescent seed: the rays that end
        # one (round the circle), and the rays before them.
        span = CRESCENT_MIN_RAYS - 1
        wrapped = np.concatenate([into_wink[:, -span:], into_wink], axis=1)
        run_end = wrapped[:, span:].copy()
        for shift in range(1, span + 1):
            run_end &= wrapped[:, span - shift : wrapped.shape[1] - shift]
        wrapped = np.concatenate([run_end, run_end[:, :span]], axis=1)
        into_wink = run_end
        for shift in range(1, span + 1):
            into_wink |= wrapped[:, shift : shift + n_rays]
    if crescents and into_wink.any():
        # Not this wink's own blur into the felt, whatever its hue (a red
        # wink's into green felt turns yellow): another wink's colour lies
        # off the line from the felt towards this wink's, and nearer the
        # line towards the colour of its hue (the reference's colour, which
        # the light may shift: or else far off its own line). Judged on the
        # mean colour of the samples beyond in another wink's hue.
        seed_at, ray_at = np.nonzero(into_wink)
        at = (seed_at * n_rays + ray_at)[:, None] * n_s + beyond[seed_at, ray_at]  # (k, 9)
        labels = np.where(other.reshape(-1).take(at), label.reshape(-1).take(at), -1)
        labelled = (labels >= 0).astype(np.float32)
        away = np.column_stack([(d.reshape(-1).take(at) * labelled).sum(axis=1) for d in diffs])
        away /= labelled.sum(axis=1)[:, None]
        votes = np.column_stack([(labels == k).sum(axis=1) for k in range(len(COLOURS))])
        into = np.argmax(votes, axis=1)
        off_line = _off_line(away, direction[seed_at])
        on_other = _off_line(away, reference.prototypes[into] - felt[seed_at])
        unlike = (off_line >= CRESCENT_OFF_LINE) | (
            (off_line >= CRESCENT_NEAR_OTHER[0]) & (off_line >= CRESCENT_NEAR_OTHER[1] * on_other)
        )
        foreign_colour[seed_at, ray_at] = np.where(unlike, into, -1)
    weight = np.where(
        has,
        np.where(clean & ~pot_hidden, 1.0, np.where(foreign, _FOREIGN_WEIGHT, _UNCLEAN_WEIGHT)),
        0.0,
    )
    # The share of this wink's middle in its own colour and in felt, of
    # what the pot leaves in view.
    core_all = radii < _SMALL_R - 1.5
    # (Its own colour over all of it when the pot hides nearly all: seen
    # through a clear pot. Not the felt: a white pot looks like pale felt.)
    seen_core = ~pot_sample[..., core_all]
    n_seen = np.maximum(seen_core.sum(axis=(1, 2)), 1)
    felt_core = (contrast[..., core_all] < 0.5 * CANDIDATE_CONTRAST) & seen_core
    mostly_hidden = _mean(seen_core, (1, 2)) < 0.25
    seen_core[mostly_hidden] = True
    n_own = np.maximum(seen_core.sum(axis=(1, 2)), 1)
    own_core = own[..., core_all] & seen_core
    rims = _Rims(
        points_mm=points,
        weight=weight,
        foreign=foreign,
        foreign_colour=foreign_colour,
        covered=_mean(other[..., radii < _SMALL_R - 1.0], 2) > 0.3,
        runs_out=_mean(~has & inside[..., -1] & ~pot_hidden, 1),
        run_axis=_principal_axis(unit, ~has & inside[..., -1] & ~pot_hidden),
        wink_colour=wink.astype(np.float64),
        own_fraction=own_core.sum(axis=(1, 2)) / n_own,
        felt_fraction=felt_core.sum(axis=(1, 2)) / n_seen,
        pot_hidden=pot_hidden,
    )
    # A wink in the pot lies on the pot's floor, not on the felt. Where its
    # colour runs on past every rim against the felt's colour, the floor is
    # unlike the felt (an opaque pot's floor in its own shadow): its rim is
    # looked for against the floor's colour.
    retry = np.flatnonzero(in_pot & (rims.runs_out > POT_FLOOR_RETRY_RUNS_OUT))
    floor_bgr = _pot_floor_bgr(image_bgr, camera) if floor_retry and len(retry) else None
    if floor_bgr is not None:
        again = _sample_rims(
            image_bgr,
            camera,
            centres_mm[retry],
            colour_index[retry],
            np.tile(floor_bgr, (len(retry), 1)),
            plane_z_mm[retry],
            reference,
            outside_pot[retry],
            n_rays,
            crescents=crescents,
            floor_retry=False,
        )
        rims = _with_rows(rims, retry, again, np.arange(len(retry)))
    return rims


def _opponent_over_felt(
    pixel_bgr: npt.NDArray[np.uint8], felt_bgr: npt.NDArray[np.uint8], reference: ColourReference
) -> tuple[
    npt.NDArray[np.float32],
    npt.NDArray[np.float32],
    npt.NDArray[np.float32],
    npt.NDArray[np.float32],
]:
    """(k,) opponent ``a``, ``b`` of pixels (k, 3) and of the felt there (k, 3), normalised by it.

    Exactly :func:`vision.colour.opponent` of ``reference.normalise(pixel,
    felt)`` and of ``reference.normalise(felt, felt)`` (the same float32
    operations in the same order: a sum over B, G, R is ``(B + G) + R``),
    one channel plane at a time: numpy reduces over a trailing axis of 3
    slowly, and these are the many candidate pixels of a frame.
    """
    gains = np.asarray(reference.white_bgr, dtype=np.float32)
    felt = [felt_bgr[:, c].astype(np.float32) for c in range(3)]
    brightness = (felt[0] + felt[1] + felt[2]) / np.float32(3.0) + np.float32(1.0)
    out = []
    for planes in ([pixel_bgr[:, c].astype(np.float32) for c in range(3)], felt):
        ratio = [planes[c] / (brightness * gains[c]) for c in range(3)]
        total = ratio[0] + ratio[1] + ratio[2] + np.float32(0.3)
        blue, green, red = ratio[0] / total, ratio[1] / total, ratio[2] / total
        out += [red - green, np.float32(0.5) * (red + green) - blue]
    return out[0], out[1], out[2], out[3]


# (prototype ratios, white gains) -> the hue class of each whole degree, 0-360.
_HUE_CLASS_TABLES: dict[tuple[Any, ...], npt.NDArray[np.int8]] = {}


def _hue_classes(
    hue_deg: npt.NDArray[np.float32], reference: ColourReference
) -> npt.NDArray[np.int8]:
    """``classify_hue_index(hue_deg, reference)``, from a table made once per reference.

    Hues in [0, 360]; a whole degree's class is that of its truncation, as
    there, and int16 indices are cheaper to take by than numpy's own.
    """
    key = (tuple(tuple(reference.ratio_bgr[c]) for c in COLOURS), tuple(reference.white_bgr))
    table = _HUE_CLASS_TABLES.get(key)
    if table is None:
        table = classify_hue_index(np.arange(361, dtype=np.float32), reference)
        if len(_HUE_CLASS_TABLES) >= 8:
            _HUE_CLASS_TABLES.clear()
        _HUE_CLASS_TABLES[key] = table
    return np.asarray(table.take(hue_deg.astype(np.int16)))


def _mean(values: npt.NDArray[Any], axis: int | tuple[int, ...]) -> npt.NDArray[Any]:
    """``values.mean(axis=axis)``: the same sum and division, without numpy's wrapper.

    As numpy's own: integers summed as float64, floats in their own type,
    then divided by the count; booleans counted in 16 bits, which gives the
    same whole numbers faster. On the detector's small arrays numpy's
    wrapper and its bool-to-float sum cost more than the counting.
    """
    shape = values.shape
    count = shape[axis] if isinstance(axis, int) else math.prod(shape[a] for a in axis)
    if values.dtype == np.bool_ and count < 2**16:
        # Counted as bytes into 16 bits (exact), then divided as float64.
        counts = np.add.reduce(values.view(np.uint8), axis=axis, dtype=np.uint16)
        return np.asarray(counts / count)
    if values.dtype.kind in "biu":
        return np.asarray(np.add.reduce(values, axis=axis, dtype=np.float64) / count)
    return np.asarray(np.add.reduce(values, axis=axis) / count)


#: What np.degrees multiplies a float32 by.
_DEGREES_F32 = np.float32(np.float32(180.0) / np.float32(np.pi))


@functools.lru_cache(maxsize=4)
def _ray_geometry(
    n_rays: int,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """The rays' sample radii (s,), directions (r, 2) and offsets (r, s, 2), x (r, s), y (r, s), mm.

    The same for every call: made once (read-only).
    """
    radii = np.arange(_RAY_START_MM, _RAY_STOP_MM, _RAY_STEP_MM)
    angles = np.linspace(0.0, 2 * np.pi, n_rays, endpoint=False)
    unit = np.column_stack([np.cos(angles), np.sin(angles)])
    offsets = unit[:, None, :] * radii[None, :, None]  # (rays, samples, 2)
    geometry = (
        radii,
        unit,
        offsets,
        np.ascontiguousarray(offsets[..., 0]),
        np.ascontiguousarray(offsets[..., 1]),
    )
    for array in geometry:
        array.flags.writeable = False
    return geometry


def _saturated(
    opp_a: npt.NDArray[np.float32],
    opp_b: npt.NDArray[np.float32],
    bar: float | npt.NDArray[np.float64],
) -> npt.NDArray[np.bool_]:
    """``np.hypot(opp_a, opp_b) > bar``, exactly, at a fraction of its cost.

    ``np.hypot`` on float32 is a scalar libm call per element; the square
    root of the sum of squares is within a few units in the last place of
    it (relative 1e-6 at most), so only the samples that close to the bar
    are judged by ``np.hypot`` itself. ``bar`` is one number, or one per
    element (float64, as ``opp_a``'s shape).
    """
    length = np.sqrt(opp_a * opp_a + opp_b * opp_b)
    above = length > bar
    if np.ndim(bar) == 0:
        scalar = float(bar)
        near = np.abs(length - np.float32(scalar)) <= np.float32(1e-6 * max(scalar, 1e-3))
    else:
        near = np.abs(length - bar) <= 1e-6 * np.maximum(bar, 1e-3)
    close = np.flatnonzero(near)
    if len(close):
        exact = np.hypot(opp_a.reshape(-1)[close], opp_b.reshape(-1)[close])
        above.reshape(-1)[close] = exact > (bar if np.ndim(bar) == 0 else bar.reshape(-1)[close])
    return above


def _off_line(colour: npt.ArrayLike, towards: npt.ArrayLike) -> FloatArray:
    """(k,) distance of each ``colour`` (k, 3) from the half-line ``t * towards`` (k, 3), t >= 0."""
    colour = np.asarray(colour, dtype=np.float64)
    towards = np.asarray(towards, dtype=np.float64)
    cover = np.maximum((colour * towards).sum(axis=1) / (towards * towards).sum(axis=1), 0.0)
    return np.asarray(np.linalg.norm(colour - cover[:, None] * towards, axis=1))


def _unlike_own_colour(
    other: npt.NDArray[np.bool_],
    samples: tuple[list[npt.NDArray[np.float32]], npt.NDArray[np.float32], npt.NDArray[np.float32]],
    felt: npt.NDArray[np.float32],
    direction: FloatArray,
    label: npt.NDArray[np.int8],
    reference: ColourReference,
    centres_mm: FloatArray,
    offsets_mm: FloatArray,
    near_pot: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """``other`` less the samples that are a shade of this wink, whatever their hue.

    Hue is a poor guide near black: the dark bevel of a dark green wink
    turns olive (red rises as blue clips at 0), and the blur from it into
    beige felt passes through olive too, so hue alone calls them yellow and
    ends the ray well inside the rim (a red wink's blur into green felt
    turns yellow the same way). A sample of another wink lies on the line
    from the felt towards *that* colour; a shade or blur of this one lies
    on the line towards its own. Each line is a half-line from the felt
    (coverage >= 0, darker shades included).

    Parameters
    ----------
    other : (n, r, s) ndarray of bool
        Samples whose hue is another wink colour's.
    samples : tuple
        B, G, R planes (list of 3 (n, r, s) ndarray, felt-brightness
        units), coverage along this wink's colour direction (n, r, s) and
        the opponent chromaticity ``(a, b)`` (each (n, r, s)), whose
        length is the saturation.
    felt, direction : (n, 3) ndarray
        The felt's colour and this wink's colour minus the felt's, per seed.
    label : (n, r, s) ndarray of int8
        Hue class of each sample.
    reference : ColourReference
    centres_mm : (n, 2) ndarray
        Where the rays start.
    offsets_mm : (r, s, 2) ndarray
        Each sample's offset from its ray's start.
    near_pot : (n,) ndarray of bool
        Whose rays reach the pot, whose dark wall and shading take any
        chromaticity: there only hue and the lines tell a shade.

    Returns
    -------
    (n, r, s) ndarray of bool
    """
    planes, alpha, (opp_a, opp_b) = samples
    n_rays, n_steps = other.shape[1:]
    # Only samples that would otherwise count as inside matter (the ray
    # ends at the first sample that is not); a margin below the 0.5 bar
    # keeps the blur just outside the rim, which says whether felt follows.
    flat = np.flatnonzero(other & (alpha >= OWN_SHADE_MIN_COVER))
    if len(flat) == 0:
        return other
    seed = flat // (n_rays * n_steps)
    near_edge = _near_mat_edge(centres_mm, _RAY_STOP_MM + OWN_SHADE_EDGE_MM)
    if near_edge.any():
        # Near the mat's edge the felt model mixes felt and table, and the
        # blur between the two can pass for a shade of a wink.
        # (Only the samples of seeds near it can be: a sample lies within
        # _RAY_STOP_MM of its seed, so a seed farther than that plus
        # OWN_SHADE_EDGE_MM from the edge has every sample away from it.)
        at_edge = np.flatnonzero(near_edge[seed])
        where_mm = (
            centres_mm[seed[at_edge]]
            + offsets_mm.reshape(-1, 2)[flat[at_edge] % (n_rays * n_steps)]
        )
        away = np.ones(len(flat), dtype=bool)
        away[at_edge] = ~_near_mat_edge(where_mm, OWN_SHADE_EDGE_MM)
        flat, seed = flat[away], seed[away]
    # Per seed, the lines' directions from the felt: 0 this wink's colour,
    # 1 black (the felt's own shadow line), 2 + k wink colour k. A shadow
    # or a black thing (the pot) also lies near a dark wink's line, since
    # all dark colours are near each other: a shade of this wink must be
    # close to its line, and nearer to it than to the shadow line or else
    # more colourful than the felt.
    felt_f = felt.astype(np.float32)
    towards = np.concatenate(
        [
            direction.astype(np.float32)[:, None, :],
            -felt_f[:, None, :],
            reference.prototypes.astype(np.float32)[None, :, :] - felt_f[:, None, :],
        ],
        axis=1,
    )  # (n, 6, 3)
    n_lines = towards.shape[1]
    # One plane per channel: numpy reduces over a trailing axis of 3 slowly.
    towards_c = [np.ascontiguousarray(towards[..., c]).reshape(-1) for c in range(3)]
    inverse_len2 = (1.0 / np.maximum((towards**2).sum(axis=2), 1e-9)).astype(np.float32)
    inverse_len2 = inverse_len2.reshape(-1)
    from_felt = [plane.reshape(-1)[flat] - felt_f[seed, c] for c, plane in enumerate(planes)]

    def dist2_to_line(
        line: npt.NDArray[np.intp], pick: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float32]:
        """Squared distance of samples ``pick`` from the half-line felt + t * towards, t >= 0."""
        at = seed[pick] * n_lines + line
        t_c = [towards_c[c][at] for c in range(3)]
        off = [from_felt[c][pick] for c in range(3)]
        cover = (off[0] * t_c[0] + off[1] * t_c[1] + off[2] * t_c[2]) * inverse_len2[at]
        cover = np.maximum(cover, np.float32(0.0))
        return sum((off[c] - cover * t_c[c]) ** 2 for c in range(3))

    # A shade of this wink: near its own line, nearer it than the other
    # colour's line, and nearer it than the shadow line or more colourful
    # than the felt. Each test is made only on the samples that passed the
    # ones before it (the same values, a fraction of the work).
    every = np.arange(len(flat))
    own_d2 = dist2_to_line(np.zeros(len(flat), dtype=np.intp), every)
    pick = np.flatnonzero(own_d2 < OWN_SHADE_DISTANCE**2)
    other_d2 = dist2_to_line(2 + label.reshape(-1)[flat[pick]].astype(np.intp), pick)
    pick = pick[own_d2[pick] < other_d2]
    shadow_d2 = dist2_to_line(np.ones(len(pick), dtype=np.intp), pick)
    nearer_own = own_d2[pick] < shadow_d2
    rest = pick[~nearer_own]
    rest_a, rest_b = opp_a.reshape(-1)[flat[rest]], opp_b.reshape(-1)[flat[rest]]
    sat = np.hypot(rest_a, rest_b)
    _, felt_sat = hue_saturation(felt)
    # A dark, greyish wink's line runs close to the shadow line, so nearness
    # alone cannot tell its edge from a shadow. The chromaticity can: a
    # shadow keeps the felt's, while the wink's edge (its colour blurred
    # wider than its brightness, as JPEG keeps colour at half resolution)
    # has moved part of the way towards the wink's own. Only for such a
    # wink (for any other the nearer line tells a shade from a shadow),
    # not a near-black one (whose chromaticity is mostly noise, see
    # vision.colour.opponent), and not by the pot or the mat's edge (where
    # the felt model misjudges the felt, and the pot and the table take
    # any chromaticity).
    felt_f64 = felt.astype(np.float64)
    shadow_cos = (direction * -felt_f64).sum(axis=1) / np.maximum(
        np.linalg.norm(direction, axis=1) * np.linalg.norm(felt_f64, axis=1), 1e-9
    )
    greyish = (
        (shadow_cos >= np.cos(np.radians(OWN_SHADE_SHADOW_DEG)))
        & ((felt_f64 + direction).mean(axis=1) >= OWN_SHADE_MIN_BRIGHTNESS)
        & ~near_pot
        & ~near_edge
    )
    felt_a, felt_b = opponent(felt_f64)
    wink_a, wink_b = opponent(felt_f64 + direction)
    to_a, to_b = (wink_a - felt_a)[seed[rest]], (wink_b - felt_b)[seed[rest]]
    reach2 = to_a * to_a + to_b * to_b
    share = ((rest_a - felt_a[seed[rest]]) * to_a + (rest_b - felt_b[seed[rest]]) * to_b) / (
        np.maximum(reach2, 1e-12)
    )
    # A mix of the wink and the felt is no darker than the wink.
    brightness = sum(plane.reshape(-1)[flat[rest]] for plane in planes) / np.float32(3.0)
    wink_brightness = ((felt_f64 + direction).mean(axis=1))[seed[rest]]
    towards_own = (
        greyish[seed[rest]]
        & (reach2 >= OWN_SHADE_CHROMA_STEP**2)
        & (share >= OWN_SHADE_CHROMA_SHARE)
        & (brightness >= wink_brightness - OWN_SHADE_DARKER)
    )
    own_shade = np.concatenate(
        [pick[nearer_own], rest[(sat > felt_sat[seed[rest]] + OWN_SHADE_SATURATION) | towards_own]]
    )
    kept = other.copy()
    kept.reshape(-1)[flat[own_shade]] = False
    return kept


def _colours_as_found(
    found: npt.NDArray[np.intp],
    found_colour: npt.NDArray[np.int64],
    wink_colour: FloatArray,
    reference: ColourReference,
) -> FloatArray:
    """(k, 3) each colour class's median over the ``found`` winks of it, else its prototype.

    ``found`` indexes ``wink_colour`` (felt-brightness units); ``found_colour``
    is each found wink's colour class.
    """
    own_colour = np.array(reference.prototypes, dtype=np.float64)
    for c in range(len(own_colour)):
        of_c = found[found_colour == c]
        if len(of_c):
            own_colour[c] = np.median(wink_colour[of_c], axis=0)
    return own_colour


def _blur_of_found(
    new: list[_Seed],
    fits: _Fits,
    seeds: list[_Seed],
    wink_colour: FloatArray,
    view_bgr: npt.NDArray[np.uint8],
    reference: ColourReference,
) -> npt.NDArray[np.bool_]:
    """(len(new),) whether each new seed is the blur round a found wink of another colour.

    Such a seed lies within :data:`BLUR_REACH_MM` of the found wink's rim,
    and its colour lies nearer the line from the felt to that wink's colour
    (a mix of the two) than the line from the felt to its own colour (as
    the frame's found winks of that colour show it, else its prototype),
    and within :data:`OWN_SHADE_DISTANCE` of it. A wink of the seed's colour
    there, as bright as a wink, lies on its own line.

    Parameters
    ----------
    new : list of _Seed
        Seeds from wink colour the fits left unexplained.
    fits : _Fits
        The fits so far, one row per seed of ``seeds``.
    seeds : list of _Seed
    wink_colour : (len(seeds), 3) ndarray
        Each fitted wink's colour, felt-brightness units.
    view_bgr : (h, w, 3) ndarray of uint8
        The coarse view the seeds were found in.
    reference : ColourReference
    """
    blur = np.zeros(len(new), dtype=bool)
    found = np.flatnonzero(fits.ok)
    if len(new) == 0 or len(found) == 0:
        return blur
    centres_mm = fits.circles.centre_mm[found]
    rims_mm = fits.circles.radius_mm[found]
    found_colour = np.array([seeds[i].colour_index for i in found])
    # Each colour as this frame shows it, so that the seed's own line is
    # measured as the other wink's is.
    own_colour = _colours_as_found(found, found_colour, wink_colour, reference)
    # Every new seed against every found wink at once (the same arithmetic
    # per pair as one seed at a time); only seeds near one are looked into.
    new_xy = np.array([seed.mat_xy_mm for seed in new])
    new_colour = np.array([seed.colour_index for seed in new])
    apart = centres_mm[None, :, :] - new_xy[:, None, :]
    gap_mm = np.hypot(apart[..., 0], apart[..., 1]) - rims_mm
    near_any = (gap_mm < BLUR_REACH_MM) & (found_colour[None, :] != new_colour[:, None])
    rows = np.flatnonzero(near_any.any(axis=1))
    if len(rows) == 0:
        return blur
    # The seeds near one, and each (seed, found wink) pair, at once: the same
    # arithmetic, row by row, as one seed at a time.
    felt_bgr = np.array([new[k].background_bgr for k in rows])
    pixel_bgr = np.array([view_bgr[new[k].view_pixel()] for k in rows])
    felt = reference.normalise(felt_bgr, felt_bgr)
    colour = reference.normalise(pixel_bgr, felt_bgr) - felt
    own_d = _off_line(colour, own_colour[new_colour[rows]] - felt)
    pair_seed, pair_found = np.nonzero(near_any[rows])
    other_d = _off_line(colour[pair_seed], wink_colour[found[pair_found]] - felt[pair_seed])
    hit = (other_d < own_d[pair_seed]) & (other_d < OWN_SHADE_DISTANCE)
    blur[rows] = np.bincount(pair_seed[hit], minlength=len(rows)) > 0
    return blur


#: A seed this far outside a found wink's rim, or nearer, may be its blur, mm.
BLUR_REACH_MM = 6.0


def _length_xy(vectors: FloatArray) -> FloatArray:
    """``np.linalg.norm(vectors, axis=-1)`` of (..., 2) vectors, to the bit, cheaper.

    numpy's norm squares and reduces the last axis (two values: ``x^2 +
    y^2``) and takes the square root; written out, without its wrapper and
    its slow reduction over a trailing axis of two.
    """
    x, y = vectors[..., 0], vectors[..., 1]
    return np.asarray(np.sqrt(x * x + y * y))


def _near_mat_edge(points_mm: FloatArray, within_mm: float) -> npt.NDArray[np.bool_]:
    """(n,) whether each point lies within ``within_mm`` of the (nominal) mat's edge."""
    edge_mm = np.minimum(
        MAT_LENGTH_MM / 2 - np.abs(points_mm[:, 0]), MAT_WIDTH_MM / 2 - np.abs(points_mm[:, 1])
    )
    return np.asarray(np.abs(edge_mm) <= within_mm)


def _near_pot(
    camera: CameraModel, centres_mm: FloatArray, plane_z_mm: FloatArray, reach_mm: float
) -> npt.NDArray[np.bool_]:
    """(n,) whether a point within ``reach_mm`` of a centre can lie behind the pot.

    A cheap screen for :func:`_behind_pot`: the camera's ray to a centre,
    seen in plan between the mat and the pot's top, is a segment; points
    within ``reach_mm`` of the centre have segments within ``reach_mm`` of it.
    """
    cam = camera.position_mm
    scale_top = (cam[2] - POT_HEIGHT_MM) / (cam[2] - plane_z_mm)  # (n,)
    start = centres_mm
    end = cam[:2] + (centres_mm - cam[:2]) * scale_top[:, None]
    seg = end - start
    along = np.clip(-(start * seg).sum(1) / np.maximum((seg * seg).sum(1), 1e-9), 0.0, 1.0)
    closest = _length_xy(start + seg * along[:, None])
    # 3 mm more for the ray below the plane (height 0) and rounding.
    pot_r = max(POT_TOP_DIAMETER_MM, POT_BASE_DIAMETER_MM) / 2 + 1.5
    return np.asarray(closest <= pot_r + reach_mm + 3.0)


def _behind_pot(
    camera: CameraModel, points_mm: FloatArray, plane_z_mm: FloatArray
) -> npt.NDArray[np.bool_]:
    """(n, r) whether the camera's ray to each point passes through the pot.

    The pot (rule 2.4) is a cone frustum on the mat's centre; the ray to a
    point on the plane ``plane_z_mm`` is tested at a few heights, with
    1.5 mm to spare.
    """
    cam = camera.position_mm
    heights = np.linspace(0.0, POT_HEIGHT_MM, 9)
    radius = (
        POT_BASE_DIAMETER_MM / 2
        + (POT_TOP_DIAMETER_MM - POT_BASE_DIAMETER_MM) / 2 * heights / POT_HEIGHT_MM
        + 1.5
    )
    # Where the ray through each point is at each height (plan view).
    scale = (cam[2] - heights[None, :]) / (cam[2] - plane_z_mm[:, None])  # (n, h)
    # x and y apart (numpy reduces a trailing axis of 2 slowly): the same
    # squares, summed as that reduction sums two, x^2 + y^2.
    at_x, at_y = (
        cam[axis] + (points_mm[..., axis] - cam[axis])[:, :, None] * scale[:, None, :]
        for axis in (0, 1)
    )  # (n, r, h) each
    inside = at_x * at_x + at_y * at_y <= radius**2
    return np.asarray(inside.any(axis=2))


#: The pot's shadow from the camera (below) is grown by this much: its edge
#: blurs into what lies beside it, and the calibration is not exact, mm.
POT_MARGIN_MM = 0.5
#: A seed this far inside the pot's opening is a wink in the pot; nearer its
#: edge, it is the visible part of a wink outside that the image shows over
#: the pot's rim (the generator paints winks nearer the camera than the
#: pot's middle over it), mm.
POT_OPENING_INSET_MM = 2.5
#: How much nearer the pot's axis than touching its foot a wink outside
#: the pot may be found (leaning on it, or measured short), mm.
POT_LEAN_MM = 3.0
#: A rim crossing followed within this distance by the pot's shadow is
#: where the pot starts to hide the wink, not surely the wink's rim, mm.
POT_EDGE_MM = 1.5
#: The plan masks below cover this far around the pot, mm, ...
_POT_REACH_MM = 160.0
#: ... at this scale, px per mm.
_POT_PX_PER_MM = 4.0


@dataclass(frozen=True, eq=False)
class _PotShadow:
    """Where the pot (rule 2.4) hides the mat from one camera, as plan masks.

    On the plane of a wink's mid-height on the mat, the points whose line
    of sight passes through the pot form the pot's shadow from the camera
    (the image's pot outline, seen on the mat). A convex solid's shadow from
    a point is the convex hull of its outline's shadows, so the frustum's is
    the hull of its base circle's and its rim circle's.

    Attributes
    ----------
    hidden : (h, w) ndarray of bool
        In the shadow (grown by :data:`POT_MARGIN_MM`) but not under the
        pot's foot, where no wink outside it can lie.
    opening : (h, w) ndarray of bool
        Seen through the pot's opening (the rim circle's shadow, shrunk by
        :data:`POT_OPENING_INSET_MM`): where potted winks show.
    plane_z_mm : float
        Height of the plane.
    """

    hidden: npt.NDArray[np.bool_]
    opening: npt.NDArray[np.bool_]
    plane_z_mm: float

    def lookup(self, mask: npt.NDArray[np.bool_], mat_xy_mm: FloatArray) -> npt.NDArray[np.bool_]:
        """``mask`` at mat points (..., 2) on the plane (nearest pixel); False beyond it."""
        col = np.rint((mat_xy_mm[..., 0] + _POT_REACH_MM) * _POT_PX_PER_MM).astype(np.intp)
        row = np.rint((mat_xy_mm[..., 1] + _POT_REACH_MM) * _POT_PX_PER_MM).astype(np.intp)
        size = mask.shape[0]
        within = (col >= 0) & (col < size) & (row >= 0) & (row < size)
        # By flat index (pixel 0 where beyond, then cleared): a fraction of
        # the cost of indexing by rows and columns where within.
        at = np.where(within, row * size + col, 0)
        return np.asarray(mask.reshape(-1).take(at) & within)


_POT_CACHE: OrderedDict[str, _PotShadow | None] = OrderedDict()


def _pot_circle_seen(
    camera_mm: FloatArray, radius_mm: float, height_mm: float, plane_z_mm: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """A horizontal circle about the pot's axis, as the camera sees it on each plane.

    Parameters
    ----------
    camera_mm : (3,) ndarray of float
        The camera's centre, mat mm (z up); above ``height_mm``.
    radius_mm : float
        The circle's radius, mm.
    height_mm : float
        Its height above the mat, mm (the pot's top rim: 38 mm).
    plane_z_mm : (n,) ndarray of float
        The planes it is seen on, mm.

    Returns
    -------
    centre_mm : (n, 2) ndarray of float
        Each plane's circle's centre, moved away from the camera.
    radius_mm : (n,) ndarray of float
        Its radius, enlarged as the plane lies farther from the camera.
    """
    # Along the camera's rays: X_plane = C + (X - C) (C_z - z) / (C_z - h).
    scale = (camera_mm[2] - plane_z_mm) / np.maximum(camera_mm[2] - height_mm, 1.0)
    return camera_mm[:2] * (1.0 - scale[:, None]), radius_mm * scale


def _pot_shadow(camera: CameraModel) -> _PotShadow | None:
    """The pot's plan masks for this camera (cached), or None when the camera is not above it."""
    key = _camera_key(camera)
    if key in _POT_CACHE:
        _POT_CACHE.move_to_end(key)
        return _POT_CACHE[key]
    plane_z = WINK_THICKNESS_MM / 2
    cam = camera.position_mm
    result: _PotShadow | None = None
    if cam[2] > POT_HEIGHT_MM + 1.0:
        angles = np.linspace(0.0, 2 * np.pi, 96, endpoint=False)
        ring = np.column_stack([np.cos(angles), np.sin(angles)])

        def shadow(radius_mm: float, z_mm: float) -> FloatArray:
            """A horizontal circle about the pot's axis, seen on the plane from the camera."""
            centre, radius = _pot_circle_seen(cam, radius_mm, z_mm, np.array([plane_z]))
            return np.asarray(centre[0] + ring * radius[0])

        # The wall where it meets the plane (the part below hides nothing).
        flare = (POT_TOP_DIAMETER_MM - POT_BASE_DIAMETER_MM) / 2 / POT_HEIGHT_MM
        foot = shadow(POT_BASE_DIAMETER_MM / 2 + flare * plane_z, plane_z)
        rim = shadow(POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM)
        size = int(2 * _POT_REACH_MM * _POT_PX_PER_MM) + 1

        def filled(points_mm: FloatArray) -> npt.NDArray[np.uint8]:
            # Sub-pixel vertices (4 fractional bits).
            px = np.rint((points_mm + _POT_REACH_MM) * _POT_PX_PER_MM * 16.0).astype(np.int32)
            mask = np.zeros((size, size), np.uint8)
            cv2.fillConvexPoly(mask, cv2.convexHull(px), 1, lineType=cv2.LINE_8, shift=4)
            return mask

        def disc(radius_mm: float) -> npt.NDArray[np.uint8]:
            width = 2 * int(round(radius_mm * _POT_PX_PER_MM)) + 1
            return np.asarray(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (width, width)))

        grid = (np.arange(size) / _POT_PX_PER_MM) - _POT_REACH_MM
        off_foot = np.hypot(grid[None, :], grid[:, None]) > POT_BASE_DIAMETER_MM / 2
        hidden = cv2.dilate(filled(np.vstack([foot, rim])), disc(POT_MARGIN_MM)).astype(bool)
        opening = cv2.erode(filled(rim), disc(POT_OPENING_INSET_MM)).astype(bool)
        result = _PotShadow(hidden=hidden & off_foot, opening=opening, plane_z_mm=plane_z)
    _POT_CACHE[key] = result
    while len(_POT_CACHE) > _VIEW_CACHE_SIZE:
        _POT_CACHE.popitem(last=False)
    return result


#: A wink in the pot whose colour runs on past this share of its rays,
#: judged against the felt, is judged again against the pot's floor.
POT_FLOOR_RETRY_RUNS_OUT = 0.5
#: The pot's floor is judged to show where at least this share of it is
#: seen through the opening (from a steep view the wall hides it).
POT_FLOOR_SEEN_MIN = 0.3


@functools.lru_cache(maxsize=_VIEW_CACHE_SIZE)
def _pot_floor_px(camera: CameraModel) -> npt.NDArray[np.float32] | None:
    """(k, 2) image points of the pot's floor seen through its opening, or None.

    :func:`vision.status.pot_floor_seen_px` on a ring every millimetre; None
    when too little of the floor shows (:data:`POT_FLOOR_SEEN_MIN`) or the
    camera is not above the pot.
    """
    if camera.position_mm[2] <= POT_HEIGHT_MM + 1.0:
        return None
    px, fraction = pot_floor_seen_px(camera, radii_mm=np.arange(1.0, POT_FLOOR_RADIUS_MM + 1e-9))
    return None if fraction < POT_FLOOR_SEEN_MIN else np.asarray(px, dtype=np.float32)


def _pot_floor_bgr(image_bgr: npt.NDArray[np.uint8], camera: CameraModel) -> FloatArray | None:
    """(3,) the colour of the pot's floor in this frame (BGR), or None when it does not show.

    A wink in the pot is seen against the floor, not the felt: a white pot's
    floor lies in its own shadow, grey, and from a dark wink's colour
    towards grey-beige felt, such a floor reads as more of the wink. The
    floor is the less colourful half of what the opening shows (winks in
    the pot are vivid), its median.
    """
    px = _pot_floor_px(camera)
    if px is None:
        return None
    samples = (
        cv2.remap(image_bgr, px[:, None, :], None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        .reshape(-1, 3)
        .astype(np.float64)
    )
    chroma = (samples.max(axis=1) - samples.min(axis=1)) / (samples.mean(axis=1) + 1.0)
    grey = chroma <= np.median(chroma)
    return np.asarray(np.median(samples[grey], axis=0), dtype=np.float64)


def _outside_pot(
    camera: CameraModel, centres_mm: FloatArray, plane_z_mm: FloatArray
) -> npt.NDArray[np.bool_]:
    """(n,) whether each seed shows outside the pot (not a potted wink).

    A seed sits on a wink's visible colour: seen through the pot's opening
    that is a wink in the pot, and so is one on the pot's floor seen
    through a clear wall (its plan position is then within the pot's
    foot); anywhere else the pot can only stand in front of the wink.
    Off the mat (a lower plane) the pot is far away.
    """
    pot = _pot_shadow(camera)
    outside = np.ones(len(centres_mm), dtype=bool)
    if pot is None or len(centres_mm) == 0:
        return outside
    on_mat = np.isclose(plane_z_mm, pot.plane_z_mm)
    on_foot = np.hypot(centres_mm[:, 0], centres_mm[:, 1]) < POT_BASE_DIAMETER_MM / 2
    outside[on_mat] = ~pot.lookup(pot.opening, centres_mm[on_mat]) & ~on_foot[on_mat]
    return outside


#: A rim point this close to the pot's top rim or foot (as seen, on the
#: wink's plane) lies on the pot's outline, mm.
POT_OUTLINE_MM = 1.5
#: A fit whose rim points lie on the pot's outline at least this often traces
#: the pot, not a wink. A wink against the pot's foot has about a fifth of
#: its points there (at most 0.35 over the shared, sample and 32 generated
#: scenes); the pot's lit wall and colour seen through it, 0.6-0.95.
POT_OUTLINE_FRACTION = 0.5


def _traces_pot_outline(
    circles: CircleFits, rims: _Rims, camera: CameraModel, plane_z_mm: FloatArray
) -> npt.NDArray[np.bool_]:
    """(n,) whether at least half of each fit's inlier rim points lie on the pot's outline.

    The pot's top rim, seen from the camera, lies on the wink's plane as a
    circle moved away from the camera and a little enlarged; its foot is
    the base circle. A wink touching the pot crosses those circles only at
    a few points; an arc of the pot's own edge (its lit wall, a tinted
    crescent, or a potted wink's colour cut off by the wall) lies along one.
    (Seen far off vertical, the pot's outline also has the two straight
    sides between foot and rim; an arc along those is not caught here.)

    Parameters
    ----------
    circles : CircleFits
        ``n`` fits; their ``inliers`` (n, rays) say which rim points count.
    rims : _Rims
        The same fits' rays; ``points_mm`` (n, rays, 2) are the rim points, mat mm.
    camera : CameraModel
        Where the camera stands, which moves the pot's top rim as seen.
    plane_z_mm : (n,) ndarray of float
        Each fit's plane height, mm.

    Returns
    -------
    (n,) ndarray of bool
        True where the fit traces the pot's outline (:data:`POT_OUTLINE_FRACTION`).
    """
    n = len(plane_z_mm)
    if n == 0:
        return np.zeros(0, dtype=bool)
    top_centre, top_r = _pot_circle_seen(
        camera.position_mm, POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM, plane_z_mm
    )
    points = rims.points_mm  # (n, rays, 2)
    from_top = _length_xy(points - top_centre[:, None, :]) - top_r[:, None]
    from_foot = _length_xy(points) - POT_BASE_DIAMETER_MM / 2
    on_outline = (np.abs(from_top) < POT_OUTLINE_MM) | (np.abs(from_foot) < POT_OUTLINE_MM)
    used = circles.inliers
    fraction = (on_outline & used).sum(axis=1) / np.maximum(used.sum(axis=1), 1)
    return np.asarray(used.any(axis=1) & (fraction >= POT_OUTLINE_FRACTION))


def _principal_axis(unit: FloatArray, chosen: npt.NDArray[np.bool_]) -> FloatArray:
    """(n, 2) main axis of the chosen ray directions (``unit`` is (r, 2))."""
    weight = chosen.astype(np.float64)
    sxx = weight @ (unit[:, 0] ** 2)
    syy = weight @ (unit[:, 1] ** 2)
    sxy = weight @ (unit[:, 0] * unit[:, 1])
    angle = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    return np.column_stack([np.cos(angle), np.sin(angle)])


@dataclass(frozen=True)
class _Fits:
    """Per seed: the chosen circle, its size, and whether it is a wink at all."""

    ok: npt.NDArray[np.bool_]
    large: npt.NDArray[np.bool_]
    size_confidence: FloatArray
    circles: CircleFits  # at the chosen size's radius
    occluded_fraction: FloatArray  # (n,) of rays whose rim another wink hides


def _free_fits(rims: _Rims, seeds_mm: FloatArray) -> CircleFits:
    """Circles with free radius: they measure the size."""
    # Crossings into another wink may be an occluder's outline, inside this
    # wink's true rim: they would shrink a free circle.
    weight = np.where(rims.foreign, 0.05 * rims.weight, rims.weight)
    return fit_circles(rims.points_mm, weight, seeds_mm, scale_mm=0.8)


def _clear_rims(free: CircleFits, rims: _Rims) -> npt.NDArray[np.bool_]:
    """Free fits whose radius can be trusted: most of the rim seen against felt, tight."""
    return (
        free.ok & (free.arc_fraction >= 0.6) & (free.rms_mm < 1.2) & (_mean(rims.foreign, 1) < 0.15)
    )


def estimate_radius_bias(radii_mm: npt.ArrayLike) -> float:
    """How much larger than nominal this frame's winks measure, mm.

    Blur, bloom and the camera's sharpening move the coverage-0.5 edge
    outwards or inwards by the same amount for every wink in a frame. With
    both sizes about, the measured radii form two clusters 3 mm apart; the
    offset that best fits them to 8 and 11 mm is the bias.

    Parameters
    ----------
    radii_mm : (n,) array_like
        Free-fit radii of winks whose rims were clearly seen.

    Returns
    -------
    float
        In [-1, 2.5]; 0 when fewer than 3 radii are given.
    """
    radii = np.asarray(radii_mm, dtype=np.float64).reshape(-1)
    radii = radii[(radii > MIN_RIM_RADIUS_MM) & (radii < MAX_RIM_RADIUS_MM)]
    if len(radii) < 3:
        return 0.0
    candidates = np.arange(-1.0, 2.5001, 0.05)
    resid = np.minimum(
        np.abs(radii[None, :] - _SMALL_R - candidates[:, None]),
        np.abs(radii[None, :] - _LARGE_R - candidates[:, None]),
    )
    # Robust: cap each wink's cost so a squidger or a bad fit cannot pull.
    cost = np.minimum(resid, 1.0).sum(axis=1)
    # The sizes are 3 mm apart, so a frame whose clear rims are mostly of one
    # size, or whose colours measure a little differently (a green wink on
    # green felt shows its dark bevel as its own shade), can fit about as
    # well with a bias a millimetre or more away; the wrong one loses the
    # other size's winks. Blur moves rims by a fraction of a millimetre, so
    # the smaller bias wins unless the rims clearly say otherwise.
    cost = cost + RADIUS_BIAS_PRIOR_PER_MM * np.abs(candidates)
    return float(candidates[int(np.argmin(cost))])


#: The radius bias's prior cost per mm away from none, in winks' worth of
#: misfit (see :func:`estimate_radius_bias`).
RADIUS_BIAS_PRIOR_PER_MM = 0.5
#: Free-fit radii outside these (mm) are a squidger's arc or a failed fit,
#: not a wink's rim, and say nothing of the radius bias.
MIN_RIM_RADIUS_MM = 5.0
MAX_RIM_RADIUS_MM = 15.0


def colour_radius_biases(radii_mm: npt.ArrayLike, colour_index: npt.ArrayLike) -> FloatArray:
    """Each colour's radius bias in this frame, mm, indexed like :data:`COLOURS`.

    Where a wink's edge seems to lie depends on its colour against the felt
    as well as on the blur: a green wink on green felt can show its dark
    bevel as its own shade and measure a millimetre larger than the winks
    of other colours beside it. Such a colour would pull the frame's bias
    (:func:`estimate_radius_bias`) its way, and the other colours' winks
    would then be fitted at the wrong radius and lost. So a colour whose own
    bias differs from that of the other colours' rims together (each from
    :data:`COLOUR_BIAS_MIN_RIMS` plausible rims or more) by more than chance
    allows (:data:`COLOUR_BIAS_SPLIT_MM`, more for fewer rims) keeps its
    own, and the rest share theirs; of several, the one furthest beyond
    its allowance. Otherwise, in most frames, every colour has the frame's bias:
    a few rims of one colour measure it less well than all.

    Parameters
    ----------
    radii_mm : (n,) array_like
        Free-fit radii of winks whose rims were clearly seen, mm.
    colour_index : (n,) array_like of int
        Their colours, as indices into :data:`COLOURS`.

    Returns
    -------
    (len(COLOURS),) ndarray of float
        The radius bias of each colour's winks, mm.
    """
    radii = np.asarray(radii_mm, dtype=np.float64).reshape(-1)
    index = np.asarray(colour_index, dtype=np.int64).reshape(-1)
    # Only the radii the estimate itself would use count towards the rims
    # a colour needs (a squidger's arc or a failed fit does not).
    plausible = np.isfinite(radii) & (radii > MIN_RIM_RADIUS_MM) & (radii < MAX_RIM_RADIUS_MM)
    radii, index = radii[plausible], index[plausible]
    biases = np.full(len(COLOURS), estimate_radius_bias(radii))
    best_excess, best = 0.0, None
    for k in range(len(COLOURS)):
        own, rest = radii[index == k], radii[index != k]
        fewest = min(len(own), len(rest))
        if fewest < COLOUR_BIAS_MIN_RIMS:
            continue
        own_bias, rest_bias = estimate_radius_bias(own), estimate_radius_bias(rest)
        # A few rims scatter by about half a millimetre each: the margin
        # shrinks as the rims on the scarcer side grow.
        allowed = COLOUR_BIAS_SPLIT_MM + COLOUR_BIAS_RIM_NOISE_MM / np.sqrt(fewest)
        excess = abs(own_bias - rest_bias) - allowed
        if excess > best_excess:
            best_excess, best = excess, (k, own_bias, rest_bias)
    if best is not None:
        k, own_bias, rest_bias = best
        biases[:] = rest_bias
        biases[k] = own_bias
    return biases


#: A colour needs this many plausible clear rims in the frame, and so do the
#: others together, for it to have a radius bias of its own ...
COLOUR_BIAS_MIN_RIMS = 4
#: ... which it has when it differs from theirs by more than this, mm (the
#: frame's bias itself runs from about -0.8 to +0.9 mm) ...
COLOUR_BIAS_SPLIT_MM = 0.75
#: ... plus this over the square root of the rims on the scarcer side, mm
#: (one rim's scatter about its size's radius: about 0.45 mm for the
#: nominal colours of generator seed 2211).
COLOUR_BIAS_RIM_NOISE_MM = 0.5


def _arc_starts(
    rims: _Rims, free: CircleFits, start: FloatArray, radii_mm: tuple[FloatArray, FloatArray]
) -> tuple[FloatArray, FloatArray]:
    """Starting centres for the fits at each known radius, (n, 2) each.

    The short arc the pot leaves in view fixes where the rim is, not its
    radius: a free circle through it may be much too large, and a fit at
    the known radius started from its centre then finds no rim within its
    reach. So for a wink the pot hides in part (at least
    :data:`MIN_HIDDEN_BY_POT` of its rays), and whose rim points lie to
    one side, each start is moved along the arc's direction until a circle
    of that radius passes through the arc's middle. Other winks start from
    the free fit's centre.

    ``radii_mm`` holds each row's small and large radius, bias included:
    two (n,) arrays, mm.
    """
    starts = [start, start]
    weight = rims.weight
    one_sided = (_mean(rims.pot_hidden, 1) >= MIN_HIDDEN_BY_POT) & free.ok
    rows = np.flatnonzero(one_sided)
    if len(rows) == 0:
        return start, start
    mid = (rims.points_mm[rows] * weight[rows, :, None]).sum(axis=1) / np.maximum(
        weight[rows].sum(axis=1), 1e-9
    )[:, None]
    towards = mid - free.centre_mm[rows]
    reach = _length_xy(towards)
    sided = reach > 0.5 * np.abs(free.radius_mm[rows])
    rows, towards, reach = rows[sided], towards[sided], reach[sided]
    unit = towards / np.maximum(reach, 1e-9)[:, None]
    moved = []
    for base, radius in zip(starts, radii_mm, strict=True):
        out = base.copy()
        out[rows] = free.centre_mm[rows] + unit * (free.radius_mm[rows] - radius[rows])[:, None]
        moved.append(out)
    return moved[0], moved[1]


def _fit_rims(
    rims: _Rims, seeds_mm: FloatArray, free: CircleFits, radius_bias_mm: FloatArray
) -> _Fits:
    """Choose the size from the free fit, then fit at the known radius for the centre.

    Parameters
    ----------
    rims : _Rims
        The rays' rim crossings of ``n`` seeds.
    seeds_mm : (n, 2) ndarray
        Where each seed's rays start, mat mm.
    free : CircleFits
        The free-radius fits of the same rims.
    radius_bias_mm : (n,) ndarray
        Each seed's radius bias, mm: that of its colour (see
        :func:`colour_radius_biases`).

    Returns
    -------
    _Fits
    """
    start = np.where(free.ok[:, None], free.centre_mm, seeds_mm)
    n = len(seeds_mm)
    small_r, large_r = _SMALL_R + radius_bias_mm, _LARGE_R + radius_bias_mm
    start_small, start_large = _arc_starts(rims, free, start, (small_r, large_r))
    # Both sizes in one call: many tiny fits cost numpy's per-call overhead.
    both = fit_circles(
        np.concatenate([rims.points_mm, rims.points_mm]),
        np.concatenate([rims.weight, rims.weight]),
        np.concatenate([start_small, start_large]),
        radius_mm=np.concatenate([small_r, large_r]),
    )
    small, large = both.take(slice(0, n)), both.take(slice(n, 2 * n))

    def score(fit: CircleFits) -> FloatArray:
        support = (rims.weight * fit.inliers).sum(axis=1)
        return np.where(fit.ok, support * fit.arc_fraction / (0.3 + fit.rms_mm), 0.0)

    score_small, score_large = score(small), score(large)
    mid_r = 0.5 * (small_r + large_r)
    free_good = _clear_rims(free, rims)
    choose_large = np.where(free_good, free.radius_mm > mid_r, score_large > score_small)
    by_score = 1.0 - np.minimum(score_small, score_large) / np.maximum(
        np.maximum(score_small, score_large), 1e-9
    )
    # Chosen between two fixed-radius fits of part of a rim, a size is only
    # as sure as how much of the rim was seen: a small circle can follow a
    # large wink's visible arc where the rest is hidden.
    arc_seen = np.where(choose_large, large.arc_fraction, small.arc_fraction)
    size_conf = np.where(
        free_good, np.clip(np.abs(free.radius_mm - mid_r) / 1.5, 0, 1), by_score * arc_seen
    )
    true_radius = free.radius_mm - radius_bias_mm
    wrong_size = free_good & (
        (true_radius > MAX_WINK_RADIUS_MM) | (true_radius < MIN_WINK_RADIUS_MM)
    )
    chosen_ok = np.where(choose_large, large.ok, small.ok)
    inliers = np.where(choose_large[:, None], large.inliers, small.inliers)
    arc = np.where(choose_large, large.arc_fraction, small.arc_fraction)
    # Rays that end on another wink inside the fitted circle: the rim is
    # hidden there (this wink lies under that one).
    # So do rays that start on another wink lying over this one's middle.
    occluded = _mean((rims.foreign & ~inliers) | rims.covered, 1)
    # The pot hides part of a wink that touches it: the rim may be judged
    # on the part the pot leaves in view, from the rim points clear of the
    # pot, when that part is much less than all of it (a blob of the pot's
    # shadow, against the pot along a short arc, must show a rim as round
    # as any wink's).
    by_pot = _mean(rims.pot_hidden, 1)
    judged = by_pot >= MIN_HIDDEN_BY_POT
    arc_clear = arc.copy()
    if judged.any():
        centre = np.where(choose_large[:, None], large.centre_mm, small.centre_mm)
        arc_clear[judged] = arc_fractions(
            rims.points_mm[judged], centre[judged], (inliers & ~rims.pot_hidden)[judged]
        )
    arc_in_view = np.minimum(arc_clear / np.maximum(1.0 - by_pot, 1e-6), 1.0)
    hidden = _mean(((rims.foreign | rims.pot_hidden) & ~inliers) | rims.covered, 1)
    rms = np.where(choose_large, large.rms_mm, small.rms_mm)
    # Where a wink of the same colour overlaps this one, its colour runs on
    # past this wink's rim: that part of the rim is hidden in the blob, as
    # much as one under another colour is.
    chosen_centre = np.where(choose_large[:, None], large.centre_mm, small.centre_mm)
    chosen_r = np.where(choose_large, large_r, small_r)
    past = _length_xy(rims.points_mm - chosen_centre[:, None, :]) - chosen_r[:, None]
    runs_on = _mean((rims.weight > 0) & ~rims.foreign & (past > RUNS_ON_MM), 1) + (rims.runs_out)
    # Not by the pot, whose wall, shadow and reflections run on in any hue.
    by_the_pot = np.hypot(seeds_mm[:, 0], seeds_mm[:, 1]) < POT_TOP_DIAMETER_MM / 2 + POT_HEIGHT_MM
    runs_on = np.where(by_the_pot | rims.pot_hidden.any(axis=1), 0.0, runs_on)
    ok = (
        chosen_ok
        & ~wrong_size
        # A wink is bounded: the colour does not run on past a wink's size
        # in many directions (it does at a mug's or a squidger's edge).
        & (rims.runs_out <= 0.5)
        # Its rim is seen, or hidden by another wink or the pot; not simply
        # missing. A round rim: enough of it, tight to the circle. Straight
        # edges (pens, paper corners) fit a wink-sized circle only loosely.
        & (
            (
                (arc >= 0.3)
                & (arc + occluded + runs_on >= 0.5)
                & (arc / (0.3 + rms) >= MIN_RIM_SCORE)
            )
            # Or so on the part the pot leaves in view (a wink in front of
            # the pot may show over it, so the first test still holds).
            | (
                judged
                & (arc_in_view >= 0.3)
                & (arc_clear >= MIN_ARC_BY_POT)
                & (arc + hidden >= 0.5)
                & (arc_in_view / (0.3 + rms) >= MIN_RIM_SCORE)
            )
        )
        & (rims.own_fraction >= 0.1)
        & (rims.felt_fraction <= 0.35)
        & ((rims.weight > 0).sum(axis=1) >= 6)
    )
    pick = choose_large
    circles = CircleFits(
        centre_mm=np.where(pick[:, None], large.centre_mm, small.centre_mm),
        radius_mm=np.where(pick, large.radius_mm, small.radius_mm),
        rms_mm=np.where(pick, large.rms_mm, small.rms_mm),
        inliers=np.where(pick[:, None], large.inliers, small.inliers),
        arc_fraction=np.where(pick, large.arc_fraction, small.arc_fraction),
        centre_sigma_mm=np.where(pick, large.centre_sigma_mm, small.centre_sigma_mm),
        ok=ok,
    )
    return _Fits(
        ok=ok,
        large=choose_large,
        size_confidence=size_conf,
        circles=circles,
        occluded_fraction=occluded,
    )


# --------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------


def detect_winks(
    image_bgr: npt.NDArray[np.uint8],
    camera: CameraModel,
    *,
    colour_reference: ColourReference | None = None,
    mat_polygon_mm: Sequence[Sequence[float]] | npt.ArrayLike | None = None,
    window_mm: Sequence[float] | None = None,
) -> WinkDetections:
    """Every wink visible in one calibrated frame (or in a window of it).

    Parameters
    ----------
    image_bgr : (h, w, 3) ndarray of uint8
        The frame, OpenCV channel order, the size the camera was calibrated at.
    camera : CameraModel
        Maps the canonical mat frame to this image.
    colour_reference : ColourReference, optional
        Wink colours relative to the felt, when calibration learned them.
    mat_polygon_mm : (k, 2) array_like, optional
        The mat's outline in mat mm; winks outside it lie on the table, a
        mat's thickness lower. Defaults to the regulation 6 x 3 ft mat.
    window_mm : (4,) sequence of float, optional
        ``(x_min, y_min, x_max, y_max)`` in mat mm: look only there, for a
        still camera whose frame changed only there. The felt model, the
        felt's noise and the colours' radius biases are then those of the last whole
        frame of this camera (a window, mostly winks, would misjudge them);
        without a whole frame seen before, the whole frame is searched.
        Winks cut by the window's border may be missed or misfitted: keep
        only those well inside it.

    Returns
    -------
    WinkDetections

    Raises
    ------
    UnreadableImageError
        When the image is not (h, w, 3) uint8 of the camera's size.
    """
    _check_image(image_bgr, camera)
    reference = colour_reference or ColourReference()
    view = cached_birds_eye_view(camera)
    key = _camera_key(camera)
    stats = _FRAME_STATS.get(key) if window_mm is not None else None
    cached_felt = _FELT_CACHE.get(key)
    window = None
    if stats is not None and cached_felt is not None:
        window = view.window(window_mm) if window_mm is not None else None
    if window is not None and cached_felt is not None:
        # A window is searched because the picture changed there, so the
        # felt is modelled afresh from it: the whole frame's model, made
        # before the change, holds the colour of winks that have since left
        # (a crowded corner's median is partly wink), and the felt bared
        # where they were would stand out from it as phantom winks.
        view = window
        view_bgr = view.warp(image_bgr)
        felt = _felt_model(view, view_bgr)
        # It still counts towards the whole model's refresh (FELT_REFRESH_FRAMES).
        _FELT_CACHE[key] = (cached_felt[0], cached_felt[1], cached_felt[2] + 1)
    else:
        stats = None
        view_bgr = view.warp(image_bgr)
        felt = _cached_felt_model(camera, view, view_bgr)
    seeds, mask, label, strength, boxes = _find_seeds(
        view, view_bgr, felt, reference, noise=None if stats is None else stats[0]
    )
    if not seeds:
        if stats is None:
            # No winks to judge a later window by: it will search whole.
            _FRAME_STATS.pop(key, None)
        return WinkDetections.empty()

    def first_pass(
        seeds: list[_Seed], bias: FloatArray | None, *, first: bool = False
    ) -> tuple[_Fits, FloatArray, FloatArray, _Rims, npt.NDArray[np.bool_]]:
        centres = np.array([s.mat_xy_mm for s in seeds])
        plane_z = view.z_mm + _base_height(centres, mat_polygon_mm)
        colour_index = np.array([s.colour_index for s in seeds], dtype=np.int64)
        felt_bgr = np.array([s.background_bgr for s in seeds])
        outside = _outside_pot(camera, centres, plane_z)
        rims = _sample_rims(
            image_bgr,
            camera,
            centres,
            colour_index,
            felt_bgr,
            plane_z,
            reference,
            outside,
            # Crescents are sought round the first seeds' winks only: the
            # seeds that follow are few and seldom lie on another wink.
            crescents=first,
        )
        free = _free_fits(rims, centres)
        if bias is None:
            # The frame's radius biases come from its clearest rims, not
            # where the pot hides part of one (a short arc measures the
            # radius poorly).
            clearest = _clear_rims(free, rims) & ~rims.pot_hidden.any(axis=1)
            bias = colour_radius_biases(free.radius_mm[clearest], colour_index[clearest])
        return (
            _fit_rims(rims, centres, free, bias[colour_index]),
            plane_z,
            bias,
            rims,
            outside,
        )

    fits, plane_z, bias, rims, outside = first_pass(
        seeds, None if stats is None else stats[1], first=True
    )
    # Every seed's rims, kept for the second pass's fallback.
    seed_rims = [rims]
    # Where each seed's rays crossed into another wink's colour, for
    # :func:`_crescent_seeds`.
    rim_points, foreign_colour = rims.points_mm, rims.foreign_colour
    # A seed between two overlapping winks of one colour fails: its colour
    # runs on along the pair's axis. Try a seed on each side.
    # So does a pair whose ends lie beyond the rays' reach on a few rays only,
    # fitted as one large wink (see :func:`_merged_blob`).
    split = np.flatnonzero(
        ~fits.ok
        & (
            (rims.runs_out > 0.25)
            | ((rims.runs_out > 0) & _merged_blob(fits, rims, camera, plane_z))
        )
    )
    axis_seeds = [
        _Seed(
            seeds[i].mat_xy_mm + side * 5.0 * rims.run_axis[i],
            seeds[i].colour_index,
            seeds[i].background_bgr,
        )
        for i in split
        for side in (-1.0, 1.0)
    ]

    def add_seeds(new: list[_Seed]) -> None:
        """Fit ``new`` seeds (with the frame's radius bias) and add them to the rest."""
        nonlocal seeds, fits, plane_z, outside, rim_points, foreign_colour
        more_fits, more_plane, _, more_rims, more_outside = first_pass(new, bias)
        seed_rims.append(more_rims)
        rim_points = np.concatenate([rim_points, more_rims.points_mm])
        foreign_colour = np.concatenate([foreign_colour, more_rims.foreign_colour])
        seeds = seeds + new
        fits = _concat_fits(fits, more_fits)
        plane_z = np.concatenate([plane_z, more_plane])
        outside = np.concatenate([outside, more_outside])

    if axis_seeds:
        add_seeds(axis_seeds)
    # Wink colour the fits leave unexplained is another wink: one of the
    # same colour lying on or under a found one merges into its blob.
    covered = mask.copy()
    painted = np.flatnonzero(fits.ok)
    painted_px = view.mat_to_view(fits.circles.centre_mm[painted]).tolist()
    painted_r_px = ((fits.circles.radius_mm[painted] + 1.5) * view.px_per_mm).tolist()
    for (col, row), radius_px in zip(painted_px, painted_r_px, strict=True):
        cv2.circle(covered, (round(col), round(row)), round(radius_px), 0, -1)
    # Seeds already tried (and failed) come back where nothing was painted
    # over them: the same rays would give the same failed fit.
    candidates = _seeds_from_mask(view, covered, label, felt, boxes)
    extra = candidates
    # By the mat's edge, where felt and table blur into wink-like colours,
    # such a seed must stand clear of the felt's noise as a first seed must;
    # elsewhere a faint one may be a wink of the felt's own colour.
    # (The nominal mat's edge, as for FALLBACK_EDGE_MM.)
    at_edge = _near_mat_edge(np.array([s.mat_xy_mm for s in extra]).reshape(-1, 2), EDGE_SEED_MM)
    keep = ~at_edge | strength.is_strong(extra)
    # Round a wink on felt of another hue, the blur mixes the two into a
    # third (a red wink on green felt has a yellow fringe): not a wink.
    wink_colour = np.concatenate([r.wink_colour for r in seed_rims])
    keep &= ~_blur_of_found(extra, fits, seeds, wink_colour, view_bgr, reference)
    extra = [s for s, ok in zip(extra, keep, strict=True) if ok]
    extra += _refit_seeds(fits, seeds, camera, plane_z)
    # A small wink far under a large one shows only a crescent, too thin for
    # the coarse view; the upper wink's rays cross into its colour. (Not
    # where a seed was just dropped: that colour is explained already.)
    extra = _untried(
        extra + _crescent_seeds(fits, seeds, rim_points, foreign_colour, candidates, reference),
        seeds,
    )
    if extra:
        add_seeds(extra)
    # Second pass, only for the winks found, with rays from the fitted
    # centre so that they cross the rim square-on.
    keep = np.flatnonzero(fits.ok & ~_arc_inside_same_colour(fits, seeds))
    # A blob of two overlapping winks of one colour, fitted as one large
    # circle, fails the rim test (two arcs are not one circle): it goes to
    # the second pass too, and counts only if it is split there.
    first_rims = _concat_rims(seed_rims)
    blob = np.flatnonzero(_merged_blob(fits, first_rims, camera, plane_z))
    keep = np.concatenate([keep, blob])
    is_blob = np.arange(len(keep)) >= len(keep) - len(blob)
    if len(keep) == 0:
        return WinkDetections.empty()
    centres = fits.circles.centre_mm[keep]
    colour_index = np.array([seeds[i].colour_index for i in keep], dtype=np.int64)
    felt_bgr = np.array([seeds[i].background_bgr for i in keep])
    plane_z = plane_z[keep]
    # Whether each wink is in the pot was seen at its seed, on its visible
    # colour: a centre the pot hides may project anywhere on the pot.
    rims = _sample_rims(
        image_bgr, camera, centres, colour_index, felt_bgr, plane_z, reference, outside[keep]
    )
    found = np.flatnonzero(fits.ok)
    rims = _into_found_winks(
        rims,
        centres,
        colour_index,
        keep,
        fits.circles.centre_mm[found],
        fits.circles.radius_mm[found],
        np.array([seeds[i].colour_index for i in found], dtype=np.int64),
        found,
    )
    free = _free_fits(rims, centres)
    seed_fits, fits = fits, _fit_rims(rims, centres, free, bias[colour_index])
    # The rays from the fitted centre may lose a wink the seed's rays found:
    # a crescent under another wink, whose fitted centre lies on the upper
    # wink, sees mostly the upper wink's colour. Such a wink keeps its first fit.
    # Not at the mat's edge or by the pot: there the table, the mat's border
    # and the pot's wall pass for a wink's rim from an off-centre seed, and
    # the second pass is what rejects them.
    lost = np.flatnonzero(~fits.ok & ~is_blob)
    lost = lost[
        ~_near_mat_edge(centres[lost], FALLBACK_EDGE_MM)
        & ~_near_pot(camera, centres[lost], plane_z[lost], _LARGE_R)
    ]
    # ... and only a wink whose own colour its first rays saw in its middle
    # (not felt, or an upper wink's colour over most of it).
    lost = lost[first_rims.own_fraction[keep[lost]] >= FALLBACK_MIN_OWN]
    if len(lost):
        first_rows = keep[lost]
        rims = _with_rows(rims, lost, first_rims, first_rows)
        fits = _with_fit_rows(fits, lost, seed_fits, first_rows)
        centres = centres.copy()
        centres[lost] = [seeds[i].mat_xy_mm for i in first_rows]
    # Two overlapping winks of one colour are one blob: a fit across both
    # is split into the two circles its rim points trace.
    fits = dataclasses.replace(fits, ok=fits.ok | is_blob)
    rims, fits, parent = _split_merged(rims, fits, centres, bias[colour_index], camera, plane_z)
    colour_index, plane_z, keep = colour_index[parent], plane_z[parent], keep[parent]
    if is_blob.any():
        was_split = np.bincount(parent, minlength=len(is_blob)) > 1
        fits = dataclasses.replace(fits, ok=fits.ok & ~(is_blob & ~was_split)[parent])
    # A wink outside the pot cannot lie under it: its centre is at least a
    # radius from the pot's foot (a little less when it leans on the pot).
    from_pot = np.hypot(fits.circles.centre_mm[:, 0], fits.circles.centre_mm[:, 1])
    under_pot = outside[keep] & (
        from_pot
        < POT_BASE_DIAMETER_MM / 2 + fits.circles.radius_mm - bias[colour_index] - POT_LEAN_MM
    )
    # Nor is the pot's own outline a wink on the mat: a lit crescent of its
    # wall, or a potted wink's colour seen through it, is cut by the pot's
    # rim or foot. (Whether or not its seed showed in the pot: a crescent on
    # the wall's lit side shows through the opening.)
    on_outline = (from_pot >= POT_BASE_DIAMETER_MM / 2) & _traces_pot_outline(
        fits.circles, rims, camera, plane_z
    )
    fits = dataclasses.replace(fits, ok=fits.ok & ~under_pot & ~on_outline)
    if stats is None:
        colour_stats = _colour_stats(rims.wink_colour, colour_index, fits.ok)
        _FRAME_STATS[key] = (strength.noise, bias, colour_stats)
        while len(_FRAME_STATS) > _VIEW_CACHE_SIZE:
            _FRAME_STATS.pop(next(iter(_FRAME_STATS)))
    else:
        colour_stats = stats[2]
    return _assemble(
        fits, rims, colour_index, plane_z, camera, bias[colour_index], colour_stats, reference
    )


def _into_found_winks(
    rims: _Rims,
    centres_mm: FloatArray,
    colour_index: npt.NDArray[np.int64],
    rows: npt.NDArray[np.intp],
    found_centre_mm: FloatArray,
    found_radius_mm: FloatArray,
    found_colour: npt.NDArray[np.int64],
    found_rows: npt.NDArray[np.intp],
) -> _Rims:
    """``rims`` with crossings into a found wink of another colour counted as foreign.

    A wink's colour is named only where it is vivid: a dim or greyish wink
    lying by another (a pale blue gone nearly grey) is not named, so
    the crossing into it looked like a ragged rim against the felt, and a
    free fit followed the upper wink's outline. Where the first pass found
    a wink of another colour there, the crossing leads into it.

    Parameters
    ----------
    rims : _Rims
        ``n`` winks' rim crossings.
    centres_mm : (n, 2) ndarray
        Where their rays start, mat mm.
    colour_index : (n,) ndarray of int
    rows : (n,) ndarray of int
        Each wink's row among the first pass's fits (itself is not another wink).
    found_centre_mm, found_radius_mm : (m, 2), (m,) ndarray
        The first pass's winks, mat mm.
    found_colour, found_rows : (m,) ndarray of int
        Their colour indices and their rows among the first pass's fits.
    """
    if len(found_rows) == 0:
        return rims
    # Even a crossing that looked clean: on grainy felt a dim wink's
    # contrast need not stand out from the felt's texture.
    unnamed = (rims.weight > 0) & ~rims.foreign & ~rims.pot_hidden
    if not unnamed.any():
        return rims
    out = rims.points_mm - centres_mm[:, None, :]
    unit = out / np.maximum(_length_xy(out), 1e-9)[..., None]
    beyond = rims.points_mm + INTO_FOUND_MM * unit  # (n, r, 2)
    gap = (
        _length_xy(beyond[:, :, None, :] - found_centre_mm[None, None])
        - found_radius_mm[None, None]
    )  # (n, r, m)
    # Not itself, nor itself seeded as another colour too (as _assemble
    # judges one wink seen twice).
    apart = _length_xy(centres_mm[:, None, :] - found_centre_mm[None]) >= (
        SAME_WINK_OTHER_COLOUR * found_radius_mm[None, :]
    )
    other = (
        (found_colour[None, :] != colour_index[:, None])
        & (found_rows[None, :] != rows[:, None])
        & apart
    )  # (n, m)
    into = unnamed & ((gap < 0.0) & other[:, None, :]).any(axis=2)
    if not into.any():
        return rims
    return dataclasses.replace(
        rims, foreign=rims.foreign | into, weight=np.where(into, _FOREIGN_WEIGHT, rims.weight)
    )


#: A crossing leads into a found wink when the point this far past it lies
#: inside that wink's circle, mm.
INTO_FOUND_MM = 1.5


#: A seed in wink colour the first fits leave unexplained must be as strong
#: as a first seed within this distance of the mat's edge, mm.
EDGE_SEED_MM = 30.0
#: A wink the second pass loses keeps its first fit only this far from the
#: mat's edge, mm.
FALLBACK_EDGE_MM = 30.0
#: ... and when at least this fraction of its first rays' samples within a
#: small wink's radius were its own colour.
FALLBACK_MIN_OWN = 0.5
#: A failed large fit is tried as two winks of one colour when at least this
#: much of its rim lies on its circle ...
BLOB_MIN_ARC = 0.4
#: ... and this fraction of the samples in its middle are its own colour.
BLOB_MIN_OWN = 0.9

#: A fit is tested for two winks of one colour when at least this many of
#: its clean rim crossings (into felt) lie off its circle.
SPLIT_MIN_STRAY = 8
#: ... and whose clean crossings span this much more along their main
#: axis than across it, mm.
SPLIT_MIN_ELONGATION_MM = 5.0
#: A rim point within this of a circle is explained by it, mm.
SPLIT_INLIER_MM = 1.0
#: Two circles must explain this many more rim points than one to split it.
SPLIT_MIN_GAIN = 5
#: ... and this share of all the clean crossings.
SPLIT_MIN_EXPLAINED = 0.5
#: Each of the two circles needs this much arc and this many rim points.
SPLIT_MIN_ARC = 0.25
SPLIT_MIN_POINTS = 6
#: Rays within this angle of each point where the two outlines meet, and
#: ending within this of it, show the waist between two winks (deg, mm).
SPLIT_WAIST_DEG = 20.0
SPLIT_WAIST_MM = 1.5
#: Each of the two circles reaches at least this far beyond the other, mm
#: (more in an oblique view, see :func:`_split_merged`).
SPLIT_MIN_REACH_MM = 6.0


def _split_merged(
    rims: _Rims,
    fits: _Fits,
    origins_mm: FloatArray,
    radius_bias_mm: FloatArray,
    camera: CameraModel,
    plane_z_mm: FloatArray,
) -> tuple[_Rims, _Fits, npt.NDArray[np.intp]]:
    """Fits across two overlapping winks of one colour, split into two.

    Rays from inside such a pair cross only the outline of their union (the
    colour runs on from one wink into the other), so one circle fitted to
    those crossings lies across both, usually at the large size, with
    crossings into felt well off it. Only fits that leave at least
    :data:`SPLIT_MIN_STRAY` clean crossings (not into another wink, not by
    the pot) more than :data:`SPLIT_INLIER_MM` off their circle, spread
    along one axis (:data:`SPLIT_MIN_ELONGATION_MM`), are tried: two
    circles of known radii (each pair of sizes) are fitted to those
    crossings, each crossing going to the circle that explains it better.
    Each model is then judged along the rays as sampled (see
    :func:`_ray_score`): where it says the colour gives way to felt. The
    pair replaces the fit when it explains at least :data:`SPLIT_MIN_GAIN`
    more rays than any single circle of either size, and at least
    :data:`SPLIT_MIN_EXPLAINED` of them; each circle has an arc of its own
    outside the other; each reaches :data:`SPLIT_MIN_REACH_MM` beyond the
    other (plus a wink's own elongation in an oblique view); and the waist
    where their outlines meet is seen on both sides. Elsewhere the fit is
    left as it was: a pair overlapping more deeply, or whose waist other
    winks hide, stays one detection.

    ``radius_bias_mm`` is each row's radius bias, (n,) mm (that of its
    colour); the pairs' known radii include it.

    Returns
    -------
    rims, fits
        With each split fit's row holding one circle and a new row (a copy
        of its rims) appended for the other.
    parent : (m,) ndarray of int
        The input row each output row comes from.
    """
    n = len(fits.ok)
    parent = np.arange(n)
    circles = fits.circles
    usable = (rims.weight >= 0.6) & ~rims.foreign & ~rims.pot_hidden
    resid = _length_xy(rims.points_mm - circles.centre_mm[:, None, :]) - circles.radius_mm[:, None]
    stray = usable & (np.abs(resid) > SPLIT_INLIER_MM)
    rows = np.flatnonzero(fits.ok & (stray.sum(axis=1) >= SPLIT_MIN_STRAY))
    if len(rows) == 0:
        return rims, fits, parent
    pts = rims.points_mm[rows]  # (m, r, 2)
    use = usable[rows]
    weight = use.astype(np.float64)
    # The union's outline is longest along the line through both centres:
    # start each circle at one end of it.
    centroid = (pts * weight[..., None]).sum(axis=1) / np.maximum(weight.sum(axis=1), 1)[:, None]
    off = pts - centroid[:, None, :]
    sxx = (weight * off[..., 0] ** 2).sum(axis=1)
    syy = (weight * off[..., 1] ** 2).sum(axis=1)
    sxy = (weight * off[..., 0] * off[..., 1]).sum(axis=1)
    angle = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    axis = np.column_stack([np.cos(angle), np.sin(angle)])
    along = (off * axis[:, None, :]).sum(axis=2)
    t_min = np.where(use, along, np.inf).min(axis=1)
    t_max = np.where(use, along, -np.inf).max(axis=1)
    # Two overlapping winks make a blob longer than it is wide; a round one
    # (most fits with stray crossings: shadows, ragged rims) is not tried.
    side = off[..., 1] * axis[:, None, 0] - off[..., 0] * axis[:, None, 1]
    width = np.where(use, side, -np.inf).max(axis=1) - np.where(use, side, np.inf).min(axis=1)
    long = (t_max - t_min) - width >= SPLIT_MIN_ELONGATION_MM
    if not long.any():
        return rims, fits, parent
    rows, pts, use, weight = rows[long], pts[long], use[long], weight[long]
    centroid, axis, t_min, t_max = centroid[long], axis[long], t_min[long], t_max[long]
    m = len(rows)
    small_r = _SMALL_R + radius_bias_mm[rows]
    large_r = _LARGE_R + radius_bias_mm[rows]
    pairs = [(small_r, small_r), (small_r, large_r), (large_r, small_r), (large_r, large_r)]
    n_pairs = len(pairs)
    ra = np.concatenate([a for a, _ in pairs])
    rb = np.concatenate([b for _, b in pairs])
    tile = np.tile(np.arange(m), n_pairs)
    centre_a = centroid[tile] + axis[tile] * (t_min[tile] + ra)[:, None]
    centre_b = centroid[tile] + axis[tile] * (t_max[tile] - rb)[:, None]
    pts_t, w_t = pts[tile], weight[tile]
    for _ in range(2):
        res_a = np.abs(_length_xy(pts_t - centre_a[:, None, :]) - ra[:, None])
        res_b = np.abs(_length_xy(pts_t - centre_b[:, None, :]) - rb[:, None])
        to_a = res_a <= res_b
        both = fit_circles(
            np.concatenate([pts_t, pts_t]),
            np.concatenate([w_t * to_a, w_t * ~to_a]),
            np.concatenate([centre_a, centre_b]),
            radius_mm=np.concatenate([ra, rb]),
            iterations=4,
        )
        centre_a, centre_b = both.centre_mm[: len(ra)], both.centre_mm[len(ra) :]
    from_a = _length_xy(pts_t - centre_a[:, None, :]) - ra[:, None]
    from_b = _length_xy(pts_t - centre_b[:, None, :]) - rb[:, None]
    res_a, res_b = np.abs(from_a), np.abs(from_b)
    # The outline of a union: each circle's crossings lie outside the other
    # circle (inside it the colour runs on). Two circles through the rim of
    # one wink explain its crossings only inside each other.
    # (The upper wink's edge may still show over the lower one: crossings
    # on it count as explained, but not as a circle's own.)
    in_a = use[tile] & (res_a < SPLIT_INLIER_MM) & (from_b > SPLIT_INLIER_MM)
    in_b = use[tile] & (res_b < SPLIT_INLIER_MM) & (from_a > SPLIT_INLIER_MM)
    # Judged along the rays, as they were sampled: where each model says the
    # colour first gives way to felt. (Distances to the circles alone
    # would let two small circles pass for a large wink's rim, whose
    # middle reaches out much farther than their waist.)
    origin = origins_mm[rows]
    seen_t = _length_xy(pts - origin[:, None, :])  # (m, r)
    ray = (pts - origin[:, None, :]) / np.maximum(seen_t, 1e-9)[..., None]
    exit_pair = _first_exit(
        origin[tile], ray[tile], np.stack([centre_a, centre_b], 1), np.stack([ra, rb], 1)
    )
    explained = _ray_score(seen_t[tile], exit_pair, use[tile]).reshape(n_pairs, m)
    arc_a = arc_fractions(pts_t, centre_a, in_a)
    arc_b = arc_fractions(pts_t, centre_b, in_b)
    separation = _length_xy(centre_a - centre_b)
    # Each wink reaches well beyond the other: a circle mostly inside the
    # other would only model a wink that is not quite round (a tilted one).
    reach = separation + np.minimum(ra, rb) - np.maximum(ra, rb)
    # Seen from the side, one wink's outline is itself two circles (its top
    # and its foot), apart by its thickness times the tangent of the view.
    cam = camera.position_mm
    slope = np.hypot(*(circles.centre_mm[rows] - cam[:2]).T) / (cam[2] - plane_z_mm[rows])
    own_reach = SPLIT_MIN_REACH_MM + 2.0 * WINK_THICKNESS_MM * slope
    # Where the two outlines meet, the union's outline turns sharply in:
    # a ray seen ending there is what tells two winks from one large wink
    # whose rim is ragged (and where other winks hide that waist, the
    # crossings cannot tell them apart).
    waist = np.ones(len(ra), dtype=bool)
    along_ab = (centre_b - centre_a) / np.maximum(separation, 1e-9)[:, None]
    foot = (ra**2 - rb**2 + separation**2) / (2 * np.maximum(separation, 1e-9))
    half_chord = np.sqrt(np.maximum(ra**2 - foot**2, 0.0))
    across = np.column_stack([-along_ab[:, 1], along_ab[:, 0]])
    for side in (-1.0, 1.0):
        cusp = centre_a + along_ab * foot[:, None] + side * across * half_chord[:, None]
        to_cusp = cusp - origin[tile]
        cusp_t = _length_xy(to_cusp)
        facing = (ray[tile] * to_cusp[:, None, :]).sum(axis=2) > np.cos(
            np.radians(SPLIT_WAIST_DEG)
        ) * np.maximum(cusp_t, 1e-9)[:, None]
        seen = use[tile] & facing & (np.abs(seen_t[tile] - cusp_t[:, None]) < SPLIT_WAIST_MM)
        waist &= seen.any(axis=1) & (half_chord > 0)
    valid = (
        waist
        & (in_a.sum(axis=1) >= SPLIT_MIN_POINTS)
        & (in_b.sum(axis=1) >= SPLIT_MIN_POINTS)
        & (arc_a >= SPLIT_MIN_ARC)
        & (arc_b >= SPLIT_MIN_ARC)
        & (reach >= own_reach[tile])
        & (separation <= ra + rb + SPLIT_INLIER_MM)
        & both.ok[: len(ra)]
        & both.ok[len(ra) :]
    ).reshape(n_pairs, m)
    score = np.where(valid, explained, -1)
    best = np.argmax(score, axis=0)  # (m,)
    best_explained = score[best, np.arange(m)]
    # One circle, for comparison: the chosen fit; the other size from the
    # same start; and either size from between the two circles (a wink
    # fitted at the wrong size, or from a poor start, is not two winks).
    pick = best * m + np.arange(m)
    middle = 0.5 * (centre_a[pick] + centre_b[pick])
    other_r = np.where(fits.large[rows], small_r, large_r)
    single_r = np.concatenate([other_r, small_r, large_r])
    singles = fit_circles(
        np.concatenate([pts] * 3),
        np.concatenate([weight] * 3),
        np.concatenate([circles.centre_mm[rows], middle, middle]),
        radius_mm=single_r,
        iterations=4,
    )
    single_centre = np.concatenate(
        [circles.centre_mm[rows][None], singles.centre_mm.reshape(3, m, 2)]
    )
    single_radius = np.concatenate([circles.radius_mm[rows][None], single_r.reshape(3, m)])
    one = np.full(m, -len(ray[0]), dtype=np.int64)
    for centre, radius in zip(single_centre, single_radius, strict=True):
        exit_one = _first_exit(origin, ray, centre[:, None, :], radius[:, None])
        one = np.maximum(one, _ray_score(seen_t, exit_one, use))
    split = (best_explained >= one + SPLIT_MIN_GAIN) & (
        best_explained >= SPLIT_MIN_EXPLAINED * use.sum(axis=1)
    )
    if not split.any():
        return rims, fits, parent
    # How sure the sizes are: the margin over the best pair with other sizes.
    runner_up = np.where(np.arange(n_pairs)[:, None] == best[None, :], -1, score).max(axis=0)
    size_conf = np.clip((best_explained - runner_up) / SPLIT_MIN_GAIN, 0.0, 1.0)
    chosen = np.flatnonzero(split)
    flat = best[chosen] * m + chosen  # index into the tiled arrays
    target = rows[chosen]
    new_parent = np.concatenate([parent, target])
    rims = _take_rims(rims, new_parent)
    fits = _take_fits(fits, new_parent)
    second = n + np.arange(len(chosen))
    sigma_a, sigma_b = both.centre_sigma_mm[: len(ra)], both.centre_sigma_mm[len(ra) :]
    for where, centre, radius, inl, arc, sigma, res in (
        (target, centre_a, ra, in_a, arc_a, sigma_a, res_a),
        (second, centre_b, rb, in_b, arc_b, sigma_b, res_b),
    ):
        c = fits.circles
        c.centre_mm[where] = centre[flat]
        c.radius_mm[where] = radius[flat]
        c.inliers[where] = inl[flat]
        c.arc_fraction[where] = arc[flat]
        c.centre_sigma_mm[where] = sigma[flat]
        c.rms_mm[where] = np.sqrt(
            (np.where(inl[flat], res[flat], 0.0) ** 2).sum(axis=1)
            / np.maximum(inl[flat].sum(axis=1), 1)
        )
        fits.large[where] = radius[flat] > 0.5 * (small_r + large_r)[chosen]
        fits.size_confidence[where] = size_conf[chosen]
    return rims, fits, new_parent


def _ray_score(
    seen_t: FloatArray, model_t: FloatArray, use: npt.NDArray[np.bool_]
) -> npt.NDArray[np.int64]:
    """(m,) rays a model's exit explains, less those whose colour runs on past it.

    A crossing before the model's exit may be an edge inside the blob (the
    upper wink's shading on the lower one); one well beyond it means the
    model leaves wink colour out.
    """
    diff = seen_t - np.where(np.isnan(model_t), -np.inf, model_t)
    near = use & (np.abs(diff) < SPLIT_INLIER_MM)
    beyond = use & (diff >= SPLIT_INLIER_MM)
    return np.asarray(near.sum(axis=1) - beyond.sum(axis=1), dtype=np.int64)


def _first_exit(
    origin_mm: FloatArray, ray: FloatArray, centre_mm: FloatArray, radius_mm: FloatArray
) -> FloatArray:
    """Where rays leave a union of circles, first, mm along each ray.

    Parameters
    ----------
    origin_mm : (m, 2) ndarray
        Where each set of rays starts.
    ray : (m, r, 2) ndarray
        Unit directions.
    centre_mm : (m, c, 2) ndarray
    radius_mm : (m, c) ndarray

    Returns
    -------
    (m, r) ndarray
        NaN for rays that start outside every circle.
    """
    from_centre = origin_mm[:, None, :] - centre_mm  # (m, c, 2)
    b = np.einsum("mrk,mck->mrc", ray, from_centre)
    c = (from_centre**2).sum(axis=2) - radius_mm**2  # (m, c)
    disc = b * b - c[:, None, :]
    root = np.sqrt(np.maximum(disc, 0.0))
    t_in = np.where(disc > 0, -b - root, np.inf)
    t_out = np.where(disc > 0, -b + root, -np.inf)
    leave = np.zeros(b.shape[:2])
    # Each pass may carry the exit on through one more circle that the ray
    # is in at the current exit.
    for _ in range(centre_mm.shape[1]):
        inside = (t_in <= leave[..., None] + 1e-6) & (t_out > leave[..., None])
        leave = np.maximum(leave, np.where(inside, t_out, 0.0).max(axis=2))
    return np.where(leave > 0, leave, np.nan)


def _take_rims(rims: _Rims, rows: npt.NDArray[np.intp]) -> _Rims:
    """The rims of the given seeds, copied (rows may repeat)."""
    return _Rims(**{f.name: getattr(rims, f.name)[rows].copy() for f in dataclasses.fields(rims)})


def _take_fits(fits: _Fits, rows: npt.NDArray[np.intp]) -> _Fits:
    """The fits of the given seeds, copied (rows may repeat)."""
    return _Fits(
        ok=fits.ok[rows].copy(),
        large=fits.large[rows].copy(),
        size_confidence=fits.size_confidence[rows].copy(),
        circles=fits.circles.take(rows),
        occluded_fraction=fits.occluded_fraction[rows].copy(),
    )


def _arc_inside_same_colour(fits: _Fits, seeds: list[_Seed]) -> npt.NDArray[np.bool_]:
    """(n,) fits that pass only as part of a same-colour blob, inside another fit.

    A wink whose rim is judged seen only because its colour runs on into
    another wink of its colour (see :func:`_fit_rims`) must reach out of
    that wink's circle by :data:`SPLIT_MIN_REACH_MM`: an arc of one wink's
    rim also fits a smaller circle inside it, whose other rays run on
    across the wink.
    """
    circles = fits.circles
    via_run_on = fits.ok & (circles.arc_fraction + fits.occluded_fraction < 0.5)
    if not via_run_on.any():
        return via_run_on
    colour_index = np.array([s.colour_index for s in seeds])
    centre_gap = _length_xy(circles.centre_mm[:, None, :] - circles.centre_mm[None, :, :])
    reach = centre_gap + circles.radius_mm[:, None] - circles.radius_mm[None, :]
    inside_other = (
        (colour_index[:, None] == colour_index[None, :])
        & (fits.ok & ~via_run_on)[None, :]
        & (reach < SPLIT_MIN_REACH_MM)
    )
    return np.asarray(via_run_on & inside_other.any(axis=1))


#: A run of at least this many adjacent rays of a found wink crossing into
#: one other colour, that no found wink of that colour explains, is a
#: crescent of a wink lying under it.
CRESCENT_MIN_RAYS = 4
#: ... each crossing within this of its fitted circle ...
CRESCENT_ON_RIM_MM = 1.5
#: ... each crossing followed by at least this many of its 9 samples beyond
#: in another wink's colour ...
CRESCENT_MIN_BEYOND = 5
#: ... whose colour lies at least this far off the line from the felt
#: towards the found wink's (its blur into the felt lies on it), in
#: felt-brightness units (see :func:`_unlike_own_colour`) ...
CRESCENT_OFF_LINE = 0.6
#: ... or at least ``[0]`` off it and ``[1]`` times nearer the line
#: towards the colour of its hue.
CRESCENT_NEAR_OTHER = (0.3, 2.0)
#: ... and not of the felt's hue, when the felt is at least this colourful
#: (green felt; beige felt is about 0.05-0.1, see :func:`vision.colour.hue_saturation`).
CRESCENT_FELT_SATURATION = 0.15
#: ... and not within this of the mat's edge, past the found wink's rim, mm.
CRESCENT_EDGE_MM = 15.0
#: A crescent seed goes this far out past the found wink's rim, mm.
CRESCENT_SEED_MM = 2.5
#: ... unless a seed of its colour still to be tried lies this near, mm
#: (that one may fail where the crescent's succeeds).
CRESCENT_PENDING_MM = 4.0


def _crescent_seeds(
    fits: _Fits,
    seeds: list[_Seed],
    rim_points_mm: FloatArray,
    foreign_colour: npt.NDArray[np.int8],
    pending: list[_Seed],
    reference: ColourReference,
) -> list[_Seed]:
    """Seeds in the crescents of winks under found ones, where the coarse view had none.

    A small wink lying 7-9 mm off the middle of a large one shows a crescent
    4-6 mm wide: about two pixels of the coarse view, which the blob rules
    of :func:`_find_seeds` drop. The found upper wink's rays, in the full
    frame, cross its rim into the crescent's colour along a run of adjacent
    rays. A seed goes just past the middle of that run, unless a found wink
    (or a seed still to be tried, ``pending``) of that colour is there.

    Parameters
    ----------
    fits : _Fits
        The fits of ``seeds`` so far.
    seeds : list of _Seed
        One per fit.
    rim_points_mm : (n, r, 2) ndarray of float64
        Each seed's rim crossings, mat mm.
    foreign_colour : (n, r) ndarray of int8
        The colour index each crossing leads into, -1 for none (see :class:`_Rims`).
    pending : list of _Seed
        Seeds about to be tried.
    reference : ColourReference

    Returns
    -------
    list of _Seed
    """
    rows = np.flatnonzero(fits.ok & ((foreign_colour >= 0).sum(axis=1) >= CRESCENT_MIN_RAYS))
    if len(rows) == 0:
        return []
    centres = fits.circles.centre_mm
    radii = fits.circles.radius_mm
    # Only crossings at the found wink's own rim: a wink under another
    # crosses into the upper one's colour inside its circle.
    towards = rim_points_mm[rows] - centres[rows, None, :]  # (m, r, 2)
    reach = _length_xy(towards)
    into_all = np.where(
        np.abs(reach - radii[rows, None]) <= CRESCENT_ON_RIM_MM, foreign_colour[rows], -1
    )
    # Where each crossing's seed would go, just past the rim; not where a
    # found wink of that colour (or a seed still to be tried) is.
    at_row, at_ray = np.nonzero(into_all >= 0)
    colour = into_all[at_row, at_ray]
    probe = (
        centres[rows[at_row]]
        + towards[at_row, at_ray]
        * ((radii[rows[at_row]] + CRESCENT_SEED_MM) / np.maximum(reach[at_row, at_ray], 1e-9))[
            :, None
        ]
    )
    found = np.flatnonzero(fits.ok)
    found_colour = np.array([seeds[f].colour_index for f in found])
    gap = np.hypot(*(probe[:, None, :] - centres[found]).transpose(2, 0, 1))
    explained = ((gap < radii[found] + 1.0) & (found_colour == colour[:, None])).any(axis=1)
    if pending:
        pending_xy = np.array([s.mat_xy_mm for s in pending])
        pending_colour = np.array([s.colour_index for s in pending])
        gap = np.hypot(*(probe[:, None, :] - pending_xy).transpose(2, 0, 1))
        explained |= ((gap < CRESCENT_PENDING_MM) & (pending_colour == colour[:, None])).any(axis=1)
    into_all[at_row[explained], at_ray[explained]] = -1
    enough = (into_all >= 0).sum(axis=1) >= CRESCENT_MIN_RAYS
    rows, into_all = rows[enough], into_all[enough]
    if len(rows) == 0:
        return []
    # Not the felt's own hue, on coloured felt: a wink's blur into it passes
    # through hues of the felt's colour (yellow into green felt: green).
    # Nor by the mat's edge, where felt and table blur into wink colours.
    felt = np.array([seeds[i].background_bgr for i in rows])
    felt_hue, felt_sat = hue_saturation(reference.normalise(felt, felt))
    felt_index = np.where(
        felt_sat > CRESCENT_FELT_SATURATION, classify_hue(felt_hue, reference)[0], -1
    )
    rows_ok = ~_near_mat_edge(centres[rows], radii[rows] + CRESCENT_EDGE_MM)
    out: list[_Seed] = []
    n_rays = foreign_colour.shape[1]
    for i, into, felt_k in zip(rows[rows_ok], into_all[rows_ok], felt_index[rows_ok], strict=True):
        for k in set(into[into >= 0].tolist()) - {seeds[i].colour_index, int(felt_k)}:
            hit = into == k
            # Runs of adjacent rays, round the circle: start where a run begins.
            for start in np.flatnonzero(hit & ~np.roll(hit, 1)):
                run = [start]
                while hit[(run[-1] + 1) % n_rays] and len(run) < n_rays:
                    run.append((run[-1] + 1) % n_rays)
                if len(run) >= CRESCENT_MIN_RAYS:
                    mid = rim_points_mm[i, run].mean(axis=0) - centres[i]
                    mid /= max(float(np.linalg.norm(mid)), 1e-9)
                    xy = centres[i] + mid * (radii[i] + CRESCENT_SEED_MM)
                    out.append(_Seed(xy, int(k), seeds[i].background_bgr))
    return out


#: Two fits of different colours and one size whose centres are closer
#: than this fraction of the radius are one wink seen twice.
SAME_WINK_OTHER_COLOUR = 0.3

#: A new seed this close to one already tried (same colour) is the same seed, mm.
SAME_SEED_MM = 2.0
#: A failed fit is tried again from its own centre (:func:`_refit_seeds`)
#: when it traced at least this fraction of a rim.
REFIT_MIN_ARC = 0.5


def _refit_seeds(
    fits: _Fits, seeds: list[_Seed], camera: CameraModel, plane_z_mm: FloatArray
) -> list[_Seed]:
    """Seeds at the centres of failed fits that traced much of a rim, off their seed.

    A seed off a wink's centre (a blob's peak pulled aside by a neighbour)
    casts rays that cross the far rim obliquely: its rim points scatter
    and a real wink can fail the rim test on its residual alone. Rays from
    the fitted centre cross the rim square-on, as the second pass's do; the
    fit they give must pass the same tests. Not at the mat's edge or by the
    pot, where the table's and the pot's edges fit a wink-sized arc and the
    second pass is what rejects them.

    Parameters
    ----------
    fits : _Fits
        The fits of ``seeds``, one row each.
    seeds : list of _Seed
        The seeds fitted.
    camera : CameraModel
        For where the pot stands in view.
    plane_z_mm : (n,) ndarray of float
        Each seed's plane height, mm.

    Returns
    -------
    list of _Seed
        New seeds, of the failed seeds' colours, placed by geometry (no
        view pixel).
    """
    centre = fits.circles.centre_mm
    start = np.array([s.mat_xy_mm for s in seeds]).reshape(-1, 2)
    moved = _length_xy(centre - start) >= SAME_SEED_MM
    rows = np.flatnonzero(
        # (A NaN centre or arc compares False: no seed from a fit that did not converge.)
        ~fits.ok & moved & (fits.circles.arc_fraction >= REFIT_MIN_ARC)
    )
    rows = rows[
        ~_near_mat_edge(centre[rows], FALLBACK_EDGE_MM)
        & ~_near_pot(camera, centre[rows], plane_z_mm[rows], _LARGE_R)
    ]
    return [_Seed(centre[i].copy(), seeds[i].colour_index, seeds[i].background_bgr) for i in rows]


def _untried(new: list[_Seed], tried: list[_Seed]) -> list[_Seed]:
    """The seeds of ``new`` not within :data:`SAME_SEED_MM` of a tried one of their colour."""
    if not new or not tried:
        return new
    new_xy = np.array([s.mat_xy_mm for s in new])
    tried_xy = np.array([s.mat_xy_mm for s in tried])
    same_colour = np.array([s.colour_index for s in new])[:, None] == np.array(
        [s.colour_index for s in tried]
    )
    dist = _length_xy(new_xy[:, None, :] - tried_xy[None, :, :])
    repeat = (same_colour & (dist < SAME_SEED_MM)).any(axis=1)
    return [seed for seed, again in zip(new, repeat, strict=True) if not again]


def _merged_blob(
    fits: _Fits, rims: _Rims, camera: CameraModel, plane_z_mm: FloatArray
) -> npt.NDArray[np.bool_]:
    """(n,) failed fits that may be two overlapping winks of one colour.

    Fitted large, their middle all their own colour, bounded, with half
    their rim or more on the circle (the two winks' far arcs), away from
    the mat's edge and the pot.
    """
    circles = fits.circles
    candidate = (
        ~fits.ok
        & fits.large
        & (circles.arc_fraction >= BLOB_MIN_ARC)
        & (circles.rms_mm < 1.2)
        & (rims.own_fraction >= BLOB_MIN_OWN)
        & (rims.runs_out <= 0.5)
        & (rims.felt_fraction <= 0.05)
    )
    rows = np.flatnonzero(candidate)
    if len(rows):
        centres = circles.centre_mm[rows]
        candidate[rows] = ~_near_mat_edge(centres, FALLBACK_EDGE_MM) & ~_near_pot(
            camera, centres, plane_z_mm[rows], _LARGE_R
        )
    return candidate


def _concat_rims(parts: list[_Rims]) -> _Rims:
    """Several sets of rims as one (same order)."""
    if len(parts) == 1:
        return parts[0]
    return _Rims(
        **{
            f.name: np.concatenate([getattr(part, f.name) for part in parts])
            for f in dataclasses.fields(_Rims)
        }
    )


#: The parallel arrays of :class:`CircleFits`, by name.
_CIRCLE_FIELDS = tuple(f.name for f in dataclasses.fields(CircleFits))


def _with_rows(
    rims: _Rims, rows: npt.NDArray[np.intp], source: _Rims, source_rows: npt.NDArray[np.intp]
) -> _Rims:
    """A copy of ``rims`` whose ``rows`` are those ``source_rows`` of ``source``."""
    out = {}
    for f in dataclasses.fields(_Rims):
        values = getattr(rims, f.name).copy()
        values[rows] = getattr(source, f.name)[source_rows]
        out[f.name] = values
    return _Rims(**out)


def _with_fit_rows(
    fits: _Fits, rows: npt.NDArray[np.intp], source: _Fits, source_rows: npt.NDArray[np.intp]
) -> _Fits:
    """A copy of ``fits`` whose ``rows`` are those ``source_rows`` of ``source``."""
    return _Fits(
        ok=_put(fits.ok, rows, source.ok[source_rows]),
        large=_put(fits.large, rows, source.large[source_rows]),
        size_confidence=_put(fits.size_confidence, rows, source.size_confidence[source_rows]),
        circles=CircleFits(
            **{
                name: _put(
                    getattr(fits.circles, name), rows, getattr(source.circles, name)[source_rows]
                )
                for name in _CIRCLE_FIELDS
            }
        ),
        occluded_fraction=_put(fits.occluded_fraction, rows, source.occluded_fraction[source_rows]),
    )


def _put(values: _Array, rows: npt.NDArray[np.intp], new: _Array) -> _Array:
    """A copy of ``values`` with ``rows`` set to ``new``."""
    out = values.copy()
    out[rows] = new
    return out


def _concat_fits(a: _Fits, b: _Fits) -> _Fits:
    """Two sets of fits as one (same order)."""
    circles = CircleFits(
        **{
            name: np.concatenate([getattr(a.circles, name), getattr(b.circles, name)])
            for name in _CIRCLE_FIELDS
        }
    )
    return _Fits(
        ok=np.concatenate([a.ok, b.ok]),
        large=np.concatenate([a.large, b.large]),
        size_confidence=np.concatenate([a.size_confidence, b.size_confidence]),
        circles=circles,
        occluded_fraction=np.concatenate([a.occluded_fraction, b.occluded_fraction]),
    )


def _check_image(image_bgr: npt.NDArray[np.uint8], camera: CameraModel) -> None:
    shape = np.shape(image_bgr)
    if len(shape) != 3 or shape[2] != 3 or np.asarray(image_bgr).dtype != np.uint8:
        raise UnreadableImageError(
            f"expected an (h, w, 3) uint8 BGR image, got shape {shape} "
            f"dtype {getattr(image_bgr, 'dtype', type(image_bgr))}; load it with cv2.imread"
        )
    if (shape[1], shape[0]) != tuple(camera.image_size_wh):
        raise UnreadableImageError(
            f"image is {shape[1]}x{shape[0]} but the camera was calibrated at "
            f"{camera.image_size_wh[0]}x{camera.image_size_wh[1]}; recalibrate or resize"
        )


def _base_height(
    centres_mm: FloatArray, mat_polygon_mm: Sequence[Sequence[float]] | npt.ArrayLike | None
) -> FloatArray:
    """0 on the mat, minus the mat's thickness on the table.

    A step at the outline, enough for the plane the rays sample a rim on;
    the board places a wink tipped over the edge between the two
    (:func:`vision.status.base_z_off_mat_mm`).
    """
    if mat_polygon_mm is None:
        half_l, half_w = MAT_LENGTH_MM / 2, MAT_WIDTH_MM / 2
        polygon = np.array(
            [[-half_l, -half_w], [half_l, -half_w], [half_l, half_w], [-half_l, half_w]]
        )
    else:
        polygon = np.asarray(mat_polygon_mm, dtype=np.float64).reshape(-1, 2)
        if len(polygon) < 3:
            raise ValueError(f"mat_polygon_mm needs at least 3 corners, got {len(polygon)}")
    contour = polygon.astype(np.float32).reshape(-1, 1, 2)
    inside = np.array(
        [cv2.pointPolygonTest(contour, (float(x), float(y)), False) >= 0 for x, y in centres_mm]
    )
    return np.where(inside, 0.0, -MAT_THICKNESS_MM)


#: How many times the rim fit's own centre sigma a detected centre is really
#: out. The fit treats its rim points' errors as independent, but along a
#: blurred rim neighbouring points err together. Measured per axis against
#: the truth (scene cameras, overhead 1080p): the 95th percentile of
#: |error| / fit sigma was 7.8 for free winks seen whole and 9.6 for winks
#: partly hidden on the shared scenes, 4.4 and 5.1 on generated ones, where
#: an honest sigma gives 1.96 (docs/benchmarks.md, "Session 17").
RIM_SIGMA_FACTOR = 4.0


def _assemble(
    fits: _Fits,
    rims: _Rims,
    colour_index: npt.NDArray[np.int64],
    plane_z: FloatArray,
    camera: CameraModel,
    radius_bias_mm: FloatArray,
    colour_stats: dict[int, tuple[float, float]],
    reference: ColourReference | None = None,
) -> WinkDetections:
    circles = fits.circles
    quality = circles.arc_fraction / (0.3 + circles.rms_mm)
    # Judge the colour only of winks that no other wink touches: a covered
    # wink's colour is measured from a sliver and mixes with its neighbour's.
    # The pot does not mix its colour in: a wink's colour is measured away from it.
    by_wink = rims.foreign & ~rims.pot_hidden
    alone = _mean((by_wink & ~circles.inliers) | rims.covered, 1) < 0.05
    alone &= ~by_wink.any(axis=1)
    ok = fits.ok & (_typical_colour(rims.wink_colour, colour_index, colour_stats) | ~alone)
    # Off the mat, among pens, phones and mugs, a wink must show a clean
    # round rim: winks that went off lie alone on the table.
    off_mat = plane_z < 0.0
    score = circles.arc_fraction / (0.3 + circles.rms_mm)
    outside = np.maximum(
        np.abs(circles.centre_mm[:, 0]) - MAT_LENGTH_MM / 2,
        np.abs(circles.centre_mm[:, 1]) - MAT_WIDTH_MM / 2,
    )
    clear_of_edge = outside >= circles.radius_mm + OFF_MAT_CLEAR_MM
    # A wink whose centre lies past the edge by less than its radius tips
    # over it (see vision.status.centre_height_off_mat_mm): a tilted disc,
    # whose rim no flat circle follows closely, judged as one on the mat.
    # (Past a corner, by its distance to the corner.)
    beyond = beyond_mat_mm(circles.centre_mm)
    tipped = (beyond > 0.0) & (beyond < circles.radius_mm)
    bar = np.where(
        clear_of_edge,
        MIN_RIM_SCORE_OFF_MAT_CLEAR,
        np.where(tipped, MIN_RIM_SCORE, MIN_RIM_SCORE_OFF_MAT),
    )
    ok &= ~off_mat | (score >= bar)
    # One wink can be seeded twice (two peaks in one blob): keep the better fit.
    # So can a wink whose shading passes for another colour (a dark green
    # one olive, seeded as yellow too): two winks of one size cannot both
    # show with their centres this close, as the upper hides the lower.
    # Seen from the side, one wink's outline is its top face and its foot,
    # apart by its thickness times the tangent of the view: two fits of one
    # wink can lie that much farther apart. Two fits of a wink at the mat's
    # edge, one taken on the mat and one on the table a mat's thickness
    # lower, lie apart along its line of sight (sample oblique_00101: 5 mm
    # apart, counted twice): they are compared on one plane, the highest (the mat's).
    cam = camera.position_mm
    slope = np.hypot(*(circles.centre_mm - cam[:2]).T) / np.maximum(cam[2] - plane_z, 1.0)
    side_mm = WINK_THICKNESS_MM * np.maximum(slope[:, None], slope[None, :])
    on_mat_mm = _move_to_plane(
        camera, circles.centre_mm, plane_z, np.full_like(plane_z, float(plane_z.max(initial=0.0)))
    )
    same_colour = colour_index[:, None] == colour_index[None, :]
    same_wink = _length_xy(on_mat_mm[:, None, :] - on_mat_mm[None, :, :]) < np.minimum(
        circles.radius_mm[:, None], circles.radius_mm[None, :]
    ) * np.where(same_colour, 0.5, SAME_WINK_OTHER_COLOUR) + np.where(same_colour, side_mm, 0.0)
    same_wink &= same_colour | (fits.large[:, None] == fits.large[None, :])
    kept: list[int] = []
    # Whether a fit is the same wink as one already kept: one column of
    # same_wink or'ed in per kept fit, not a row looked up per fit.
    taken = np.zeros(len(ok), dtype=bool)
    for m in np.argsort(-quality):
        if ok[m] and not taken[m]:
            kept.append(int(m))
            taken |= same_wink[:, m]
    if not kept:
        return WinkDetections.empty()
    idx = np.array(sorted(kept))
    centre_mm = circles.centre_mm[idx]
    radius = circles.radius_mm[idx] - radius_bias_mm[idx]
    arc = circles.arc_fraction[idx]
    plane = plane_z[idx]
    # A wink with a complete rim that overlaps one with a cut rim lies on it.
    gap = _length_xy(centre_mm[:, None] - centre_mm[None]) - (radius[:, None] + radius[None, :])
    on_other = (gap < -1.0) & (arc[:, None] > arc[None, :] + 0.15)
    lift = np.where(on_other.any(axis=1), WINK_THICKNESS_MM, 0.0)
    new_plane = plane + lift
    centre_mm = _move_to_plane(camera, centre_mm, plane, new_plane)
    top_z = new_plane + WINK_THICKNESS_MM / 2
    image_xy = camera.mat_to_image(np.column_stack([centre_mm, top_z]))
    colours = np.array([COLOURS[int(k)] for k in colour_index[idx]] + [None], dtype=object)[:-1]
    sizes = np.array(
        [WinkSize.LARGE if big else WinkSize.SMALL for big in fits.large[idx]] + [None],
        dtype=object,
    )[:-1]
    hue, sat = hue_saturation(rims.wink_colour[idx])
    runner_up, margin_deg = _runner_up_colours(
        hue, colour_index[idx], colour_stats, reference or ColourReference()
    )
    quality_term = np.clip(arc / 0.5, 0.0, 1.0) * np.clip(1.2 - circles.rms_mm[idx], 0.0, 1.0)
    confidence = np.clip(quality_term * np.clip(sat / 0.25, 0.0, 1.0), 0.0, 1.0)
    rim_pts = [rims.points_mm[m][circles.inliers[m]] for m in idx]
    counts = [len(p) for p in rim_pts]
    all_pts = np.concatenate(rim_pts)
    from_z = np.repeat(plane, counts)
    to_z = np.repeat(new_plane, counts)
    moved = _move_to_plane(camera, all_pts, from_z, to_z)
    all_px = camera.mat_to_image(np.column_stack([moved, to_z]))
    rims_px = tuple(np.split(all_px, np.cumsum(counts)[:-1]))
    return WinkDetections(
        image_xy_px=image_xy,
        mat_xy_mm=centre_mm,
        z_mm=top_z,
        radius_mm=radius,
        colour=colours,
        size=sizes,
        confidence=confidence,
        rim_visible_fraction=arc,
        centre_sigma_mm=RIM_SIGMA_FACTOR * circles.centre_sigma_mm[idx],
        rim_image_px=rims_px,
        rim_occluded_fraction=fits.occluded_fraction[idx],
        size_confidence=fits.size_confidence[idx],
        runner_up_colour=runner_up,
        colour_margin_deg=margin_deg,
    )


def _runner_up_colours(
    hue_deg: FloatArray,
    colour_index: npt.NDArray[np.int64],
    colour_stats: dict[int, tuple[float, float]],
    reference: ColourReference,
) -> tuple[npt.NDArray[np.object_], FloatArray]:
    """Each wink's next likeliest colour, and how much nearer its own is in hue, deg.

    Each colour's hue is the frame's own (its winks' mean, where three or
    more were found), else the reference's.
    """
    class_hue = np.array(reference.hues_deg, dtype=np.float64)
    for k, (mean_hue, _) in colour_stats.items():
        class_hue[k] = mean_hue
    dist = hue_difference_deg(hue_deg[:, None], class_hue[None, :])
    rows = np.arange(len(hue_deg))
    own = dist[rows, colour_index]
    dist[rows, colour_index] = np.inf
    runner = np.argmin(dist, axis=1)
    colours = np.array([COLOURS[int(k)] for k in runner] + [None], dtype=object)[:-1]
    return colours, dist[rows, runner] - own


def _colour_stats(
    wink_colour: FloatArray, colour_index: npt.NDArray[np.int64], ok: npt.NDArray[np.bool_]
) -> dict[int, tuple[float, float]]:
    """Per colour index with three winks or more: their mean hue (deg) and median saturation."""
    hue, sat = hue_saturation(wink_colour)
    stats = {}
    for k in np.unique(colour_index[ok]):
        members = ok & (colour_index == k)
        if members.sum() < 3:
            continue
        mean_hue = float(np.degrees(np.angle(np.exp(1j * np.radians(hue[members])).mean())))
        stats[int(k)] = (mean_hue, float(np.median(sat[members])))
    return stats


def _typical_colour(
    wink_colour: FloatArray,
    colour_index: npt.NDArray[np.int64],
    stats: dict[int, tuple[float, float]],
) -> npt.NDArray[np.bool_]:
    """(n,) whether each wink's colour matches the other winks of its colour.

    All winks of a colour share one plastic and one light, so in one frame
    their hues agree within a few degrees and their saturations within
    about a third; a brown pen or an orange board that passed for red or
    yellow is off in hue *and* greyer. ``stats`` are the frame's
    (:func:`_colour_stats`), which need three winks of the colour to
    judge; fewer pass.
    """
    hue, sat = hue_saturation(wink_colour)
    typical = np.ones(len(wink_colour), dtype=bool)
    for k, (mean_hue, median_sat) in stats.items():
        hue_off = hue_difference_deg(hue, mean_hue)
        sat_ratio = sat / max(median_sat, 1e-6)
        atypical = ((hue_off > 10.0) & (sat_ratio < 0.8)) | (sat_ratio < 0.4)
        typical &= ~((colour_index == k) & atypical)
    return typical


def _move_to_plane(
    camera: CameraModel, points_mm: FloatArray, from_z: FloatArray, to_z: FloatArray
) -> FloatArray:
    """Slide points along their camera rays from one height to another."""
    cam = camera.position_mm
    scale = (cam[2] - to_z) / (cam[2] - from_z)
    return cam[:2] + (points_mm - cam[:2]) * scale[:, None]
