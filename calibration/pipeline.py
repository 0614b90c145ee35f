"""From a rough mat outline to a fitted camera: edges, baselines, distortion, pose.

The steps, each refining the camera the one before produced:

1. Try both ways the outline can be the 6 ft x 3 ft mat (which pair of sides
   is long); build a pinhole camera for each from its four corners.
2. Sample the four edges to sub-pixel across wide profiles; fit focal
   length, k1 and pose.
3. Sample again across narrow profiles, now also across the four baselines
   (rule 2.3.1), and fit focal length, k1, k2 and pose; drop outliers; fit
   again.
4. Keep the hypothesis whose baselines are found and whose residual is lower.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from calibration.edges import CurveSamples, ridge_points, sample_curve, step_points
from calibration.fit import (
    MAT_CORNERS_MM,
    CameraFit,
    Observations,
    TooFewPointsError,
    baseline_segment_mm,
    edge_lines,
    fit_camera,
    initial_camera,
    line_jackknife_mm,
)

FloatArray = npt.NDArray[np.float64]

#: How much wider the first edge profiles are for an outline from faint edges.
ROUGH_WIDTH_FACTOR = 3.0
#: A baseline counts as found when this fraction of its profiles show the line.
BASELINE_FOUND_FRACTION = 0.5
#: The stated error includes the delete-one-line jackknife only for fits with
#: at least this many baselines found (see :meth:`PipelineResult.with_jackknife`).
MIN_JACKKNIFE_BASELINES = 3


@dataclass(frozen=True, eq=False)
class BaselineFit:
    """One baseline as seen: which corner, how much of it was found, its fit residual.

    Parameters
    ----------
    corner_mm : (2,) ndarray
        The corner behind it, in the calibration frame.
    found_fraction : float
        Fraction of profiles across it that showed a thin line.
    contrast : float
        Lightness of the line minus the felt (Lab L, 0-255 scale).
    rms_residual_mm : float
        RMS distance of its points from the rule 2.3.1 line after the fit
        (NaN when not found).
    image_xy_px : (2, 2) ndarray
        Its two ends (on the long and the short edge) projected into the image.
    """

    corner_mm: FloatArray
    found_fraction: float
    contrast: float
    rms_residual_mm: float
    image_xy_px: FloatArray

    @property
    def found(self) -> bool:
        """Whether enough of the line was seen to use it."""
        return self.found_fraction >= BASELINE_FOUND_FRACTION


class FewBaselinesError(ValueError):
    """An outline's first fits showed too few of the mat's baselines to go on with.

    Parameters
    ----------
    found : int
        How many of the four baselines the best first fit showed.
    """

    def __init__(self, found: int) -> None:
        super().__init__(f"the first fits showed {found} of the 4 baselines")
        self.found = found


@dataclass(frozen=True, eq=False)
class PipelineResult:
    """The fitted camera and what it was fitted to."""

    fit: CameraFit
    baselines: tuple[BaselineFit, ...]
    edge_found_fraction: float
    #: Fitted from an outline of faint edges (``rough``): its edges are less sure.
    faint_edges: bool = False
    #: The last fit's settings, which :meth:`with_jackknife` repeats.
    fit_distortion: bool = True
    fit_edge_offsets: bool = False
    side_faces_only: bool = False
    #: How much the mapping rests on any one line, mm (:func:`line_jackknife_mm`);
    #: 0 until :meth:`with_jackknife` has run.
    jackknife_mm: float = 0.0

    def with_jackknife(self) -> PipelineResult:
        """A copy with :attr:`jackknife_mm` measured (a refit per line: run it last).

        Left without one of its lines, a fit to the four edges and fewer than
        :data:`MIN_JACKKNIFE_BASELINES` baselines loses what fixes its scale,
        and the jackknife would measure that loss rather than the lines'
        disagreement (a right fit to a mat without baselines moved 15 mm):
        such fits keep 0.
        """
        if sum(b.found for b in self.baselines) < MIN_JACKKNIFE_BASELINES:
            return self
        jackknife_mm = line_jackknife_mm(
            self.fit,
            fit_distortion=self.fit_distortion,
            fit_edge_offsets=self.fit_edge_offsets,
            side_faces_only=self.side_faces_only,
        )
        return replace(self, jackknife_mm=jackknife_mm)


def image_lab_float(image_bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """The image as float Lab (8-bit scale), lightly smoothed against sensor noise."""
    blurred = cv2.GaussianBlur(image_bgr, (0, 0), 0.8)
    return np.asarray(cv2.cvtColor(blurred, cv2.COLOR_BGR2Lab), np.float32)


def _edge_observations(
    image_lab: npt.NDArray[np.float32],
    camera: CameraModel,
    half_width_px: float,
    search_px: float | None = None,
) -> tuple[Observations, float]:
    pts, normals, offsets, total = [], [], [], 0
    for i, line in enumerate(edge_lines()):
        a, b = MAT_CORNERS_MM[i], MAT_CORNERS_MM[(i + 1) % 4]
        curve = sample_curve(camera, a, b, np.zeros(2))
        xy, found = step_points(image_lab, curve, half_width_px, search_px=search_px)
        total += len(found)
        pts.append(xy[found])
        normals.append(np.tile(line.normal, (int(found.sum()), 1)))
        offsets.append(np.full(int(found.sum()), line.offset_mm))
    counts = [len(p) for p in pts]
    obs = Observations(
        np.vstack(pts),
        np.vstack(normals),
        np.concatenate(offsets),
        np.zeros(sum(counts), int),
        np.repeat(np.arange(4), counts),
    )
    return obs, len(obs) / max(1, total)


def baseline_curve(camera: CameraModel, corner_mm: FloatArray) -> CurveSamples:
    """Where ``camera`` puts the baseline of the corner ``corner_mm``: its samples and normals."""
    on_long, on_short, _ = baseline_segment_mm(corner_mm)
    return sample_curve(camera, on_long, on_short, np.zeros(2), spacing_px=4.0, trim=0.08)


def profile_half_width_px(camera: CameraModel) -> float:
    """Half the length of the profiles cut across the mat's lines at first, px."""
    return max(8.0, max(camera.image_size_wh) / 150)


def _baseline_observations(
    image_lab: npt.NDArray[np.float32], camera: CameraModel, half_width_px: float
) -> tuple[Observations, list[tuple[FloatArray, float, float, FloatArray, int]]]:
    pts, normals, offsets = [], [], []
    info = []
    start = 0
    for corner in MAT_CORNERS_MM:
        on_long, on_short, line = baseline_segment_mm(corner)
        curve = baseline_curve(camera, corner)
        xy, found, contrast = ridge_points(image_lab, curve, half_width_px)
        frac = float(found.mean()) if len(found) else 0.0
        ends_px = camera.mat_to_image(np.array([on_long, on_short]))
        n = int(found.sum()) if frac >= BASELINE_FOUND_FRACTION else 0
        if n:
            pts.append(xy[found])
            normals.append(np.tile(line.normal, (n, 1)))
            offsets.append(np.full(n, line.offset_mm))
        info.append((corner, frac, contrast, ends_px, start))
        start += n
    if not pts:
        return Observations.concat([]), info
    obs = Observations(
        np.vstack(pts),
        np.vstack(normals),
        np.concatenate(offsets),
        np.ones(start, int),
        np.full(start, -1),
    )
    return obs, info


def _quick_fit(
    image_lab: npt.NDArray[np.float32],
    camera: CameraModel,
    *,
    fit_distortion: bool,
    rough: bool = False,
    wide_first: bool = True,
) -> tuple[CameraFit, int, float]:
    """A first fit to the edges; how many baselines and how much edge it then finds.

    With ``rough`` the outline came from faint edges or from the baselines:
    the baselines found are fitted with the edges (faint edges under grain
    give many points on stripes beside the mat; thin lines of strong contrast
    hold the camera where they are). With ``wide_first`` too, the outline may
    be off by a few times more than usual: the edges are first looked for
    across profiles that much wider, and fitted once before the usual width.
    """
    wide = profile_half_width_px(camera)
    if rough and wide_first:
        obs, _ = _edge_observations(image_lab, camera, ROUGH_WIDTH_FACTOR * wide)
        if len(obs) > 300:
            obs = obs.subset(np.arange(len(obs)) % 3 == 0)
        lines, _ = _baseline_observations(image_lab, camera, ROUGH_WIDTH_FACTOR * wide)
        camera = fit_camera(
            camera,
            Observations.concat([obs, lines]),
            fit_distortion=False,
            fit_k2=False,
            max_nfev=20,
            rounds=2,
        ).camera
    obs, _ = _edge_observations(image_lab, camera, wide)
    if len(obs) > 300:
        # Enough to choose between the hypotheses; the refinement uses them all.
        obs = obs.subset(np.arange(len(obs)) % 3 == 0)
    if rough:
        lines, _ = _baseline_observations(image_lab, camera, wide)
        obs = Observations.concat([obs, lines])
    # A small budget (20 iterations): the wrong hypothesis (long and short sides
    # swapped) would otherwise spend hundreds of evaluations failing to converge,
    # and only the refinement needs a converged fit.
    fit = fit_camera(
        camera, obs, fit_distortion=fit_distortion, fit_k2=False, max_nfev=20, rounds=2
    )
    _, info = _baseline_observations(image_lab, fit.camera, wide)
    _, edge_fraction = _edge_observations(image_lab, fit.camera, wide)
    return fit, sum(frac >= BASELINE_FOUND_FRACTION for _, frac, _, _, _ in info), edge_fraction


def _refine(
    image_lab: npt.NDArray[np.float32],
    fit: CameraFit,
    *,
    fit_distortion: bool,
) -> PipelineResult:
    size = max(fit.camera.image_size_wh)
    wide = profile_half_width_px(fit.camera)
    narrow = max(3.0, size / 500)
    for _ in range(2):
        edges, edge_frac = _edge_observations(image_lab, fit.camera, wide, narrow)
        lines, info = _baseline_observations(image_lab, fit.camera, wide)
        obs = Observations.concat([edges, lines])
        n_found = sum(frac >= BASELINE_FOUND_FRACTION for _, frac, _, _, _ in info)
        # Three or four baselines fix the scale, so every edge may sit off its
        # line; with one or two, only edges whose side face shows may, and the
        # others (seen at their top, where the mat really ends) help fix the
        # scale; with none, no edge may (its offset and the scale would trade).
        offsets = n_found >= 1
        few = n_found < 3
        fit = fit_camera(
            fit.camera,
            obs,
            fit_distortion=fit_distortion,
            fit_edge_offsets=offsets,
            side_faces_only=few,
        )
        # Winks, hands and shadows on an edge give points far off the line.
        keep = np.abs(fit.residual_px) < max(1.5, 3.0 * _robust_sigma(fit.residual_px))
        if keep.sum() < len(keep):
            fit = fit_camera(
                fit.camera,
                obs.subset(keep),
                fit_distortion=fit_distortion,
                fit_edge_offsets=offsets,
                side_faces_only=few,
            )
    baselines = []
    kinds = fit.observations.kind
    for corner, frac, contrast, _ends_px, _ in info:
        sel = (kinds == 1) & np.all(
            np.isclose(fit.observations.line_normal, corner / np.linalg.norm(corner)), axis=1
        )
        rms = float(np.sqrt(np.mean(fit.residual_mm[sel] ** 2))) if np.any(sel) else float("nan")
        baselines.append(
            BaselineFit(
                corner_mm=corner,
                found_fraction=frac,
                contrast=contrast,
                rms_residual_mm=rms,
                image_xy_px=fit.camera.mat_to_image(np.array(baseline_segment_mm(corner)[:2])),
            )
        )
    return PipelineResult(
        fit=fit,
        baselines=tuple(baselines),
        edge_found_fraction=edge_frac,
        fit_distortion=fit_distortion,
        fit_edge_offsets=offsets,
        side_faces_only=few,
    )


#: Bands of felt and of table compared across each edge by :func:`edge_colour_steps`:
#: this far inside and outside the edge, mm.
_STEP_BAND_MM = (15.0, 25.0, 40.0)


def median_lab_at(
    image_lab: npt.NDArray[np.float32], camera: CameraModel, mat_xy_mm: FloatArray
) -> FloatArray:
    """The median colour of the image at points on the mat.

    Parameters
    ----------
    image_lab : (H, W, 3) float32 ndarray
    camera : CameraModel
    mat_xy_mm : (N, 2) ndarray
        Points on the mat's top, mm.

    Returns
    -------
    (3,) ndarray
        Median Lab (units of ``image_lab``); NaN when 20 or fewer of the points
        fall in the picture.
    """
    xy = camera.mat_to_image(mat_xy_mm).astype(np.float32)
    sampled = cv2.remap(
        image_lab,
        xy[:, 0].reshape(1, -1),
        xy[:, 1].reshape(1, -1),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(np.nan, np.nan, np.nan),
    )
    values = np.asarray(sampled, np.float64).reshape(-1, 3)
    values = values[np.all(np.isfinite(values), axis=1)]
    if len(values) <= 20:
        return np.full(3, np.nan)
    return np.asarray(np.median(values, axis=0), np.float64)


def edge_band_colours(
    image_lab: npt.NDArray[np.float32], camera: CameraModel, *, offset_mm: float = 0.0
) -> FloatArray:
    """The median colours of the bands just inside and just outside each mat edge.

    Each band runs along the middle 70 % of the edge, 15-40 mm from it. With
    ``offset_mm`` the edges are first moved that far outwards (inwards if
    negative), to see where along the normal the colour steps.

    Returns
    -------
    (4, 2, 3) ndarray
        Per edge in the order of ``edge_lines()``, the inside then the outside
        band's median Lab (units of ``image_lab``); NaN where a band is not in
        the picture.
    """
    out = np.full((4, 2, 3), np.nan)
    frac = np.linspace(0.15, 0.85, 60)[:, None]
    for i, line in enumerate(edge_lines()):
        a, b = MAT_CORNERS_MM[i], MAT_CORNERS_MM[(i + 1) % 4]
        normal = np.asarray(line.normal)
        on_edge = a + frac * (b - a) + offset_mm * normal
        for k, sign in enumerate((-1.0, 1.0)):
            pts_mm = np.vstack([on_edge + sign * d * normal for d in _STEP_BAND_MM])
            out[i, k] = median_lab_at(image_lab, camera, pts_mm)
    return out


def band_steps(bands: FloatArray) -> FloatArray:
    """How much the colour changes across each edge, from :func:`edge_band_colours`.

    Returns
    -------
    (4,) ndarray
        The length of inside minus outside median Lab per edge; NaN where a
        band is not in the picture.
    """
    return np.asarray(np.linalg.norm(bands[:, 0] - bands[:, 1], axis=1), np.float64)


def edge_colour_steps(image_lab: npt.NDArray[np.float32], camera: CameraModel) -> FloatArray:
    """How much the colour changes across each mat edge the camera predicts.

    The median Lab colour of a band just inside the edge minus that of a band
    just outside (see :func:`edge_band_colours`), as a length (8-bit Lab
    units), per edge in the order of ``edge_lines()``. NaN where the outside
    band is not in the picture.

    Returns
    -------
    (4,) ndarray
    """
    return band_steps(edge_band_colours(image_lab, camera))


def _robust_sigma(values: FloatArray) -> float:
    if len(values) == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(values - np.median(values))))


def fit_from_outline(
    image_lab: npt.NDArray[np.float32],
    outline_image_px: FloatArray,
    *,
    dist_coeffs: FloatArray | None = None,
    rough: bool = False,
    min_first_baselines: int = 0,
) -> PipelineResult:
    """Fit the camera to the mat whose outline is roughly ``outline_image_px``.

    Parameters
    ----------
    image_lab : (H, W, 3) float32 ndarray
        The image as :func:`image_lab_float` gives it (made once per image by the
        caller, which tries several outlines on it).
    outline_image_px : (4, 2) ndarray
        The mat's corners in order around it (clockwise in the image), within a
        few pixels.
    dist_coeffs : (5,) ndarray, optional
        Known lens distortion; estimated from the edges when not given.
    rough : bool
        The outline may be off by tens of pixels (found from faint edges or
        from the baselines): fit the baselines with the edges from the first
        fit on, and try a first look across wider profiles as well as one
        from the outline as given.
    min_first_baselines : int
        When the best first fit shows fewer baselines than this, the outline
        is not refined: :class:`FewBaselinesError` says how many it showed.

    Raises
    ------
    TooFewPointsError
        Too few edge points along the outline to fit a camera.
    FewBaselinesError
        The first fits showed fewer than ``min_first_baselines`` baselines.
    """
    h, w = image_lab.shape[:2]
    quick = []
    # A camera above the mat sees it as from above, unmirrored: MAT_CORNERS_MM
    # (counter-clockwise from above) appear counter-clockwise on screen, so the
    # clockwise outline is reversed. Which corner comes first decides which sides
    # are long; the baselines (and failing them, the residual) say which is right.
    ccw = np.asarray(outline_image_px, np.float64)[::-1]
    fit_distortion = dist_coeffs is None
    too_few: TooFewPointsError | None = None
    for shift in (0, 1):
        corners = np.roll(ccw, -shift, axis=0)
        camera = initial_camera(corners, (w, h), dist_coeffs)
        # The wide first look can lock onto grain stripes beside a faint edge
        # and pull the camera away from an outline that was already close (one
        # from the baselines): then a look from the outline as given is tried
        # too, and the score below chooses.
        for wide_first in (True, False) if rough else (False,):
            try:
                found = _quick_fit(
                    image_lab,
                    camera,
                    fit_distortion=fit_distortion,
                    rough=rough,
                    wide_first=wide_first,
                )
            except TooFewPointsError as exc:
                # The wrong hypothesis may put the edges where there are none.
                too_few = exc
                continue
            quick.append(found)
    if not quick:
        raise too_few if too_few is not None else TooFewPointsError("no edge points")

    def score(q: tuple[CameraFit, int, float]) -> tuple[int, float, float]:
        # Baselines first, then how much of the predicted outline is really
        # there (a wrong hypothesis can fit a few stray edges perfectly).
        return (-q[1], -round(q[2], 1), q[0].cost / max(1, len(q[0].observations)))

    best, n_baselines, _ = min(quick, key=score)
    if n_baselines < min_first_baselines:
        # The refinement is most of a fit's cost, and would be spent on an
        # outline that cannot be kept.
        raise FewBaselinesError(n_baselines)
    return replace(_refine(image_lab, best, fit_distortion=fit_distortion), faint_edges=rough)
