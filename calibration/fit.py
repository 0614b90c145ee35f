"""Fit the camera (focal length, radial distortion, pose) to the mat's edges and baselines.

Every observation is a sub-pixel image point known to lie on a known line of
the mat plane: the four edges (``x = +-914.4``, ``y = +-457.2``) and the four
baselines (``p . d = 914.4`` with ``d`` the unit vector towards a corner, rule
2.3.1). The residual of a point is how far its back-projection onto the mat
misses its line, converted to pixels with the local scale, so that the fit
weighs every part of the image alike. Straight lines that the image shows
curved pin down the radial distortion; the mat's shape pins down the focal
length (weakly, for a camera looking straight down: a mild prior keeps it
sensible then, and it matters little there because the mapping of the plane is
what the mat fixes).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares

from calibration.camera import CameraModel
from rules.board import BASELINE_DISTANCE_MM, MAT_LENGTH_MM, MAT_WIDTH_MM

FloatArray = npt.NDArray[np.float64]

HALF_LENGTH_MM = MAT_LENGTH_MM / 2
HALF_WIDTH_MM = MAT_WIDTH_MM / 2

#: Mat corners in the calibration frame, in order around the mat (counter-clockwise
#: seen from above).
MAT_CORNERS_MM = np.array(
    [
        [-HALF_LENGTH_MM, -HALF_WIDTH_MM],
        [HALF_LENGTH_MM, -HALF_WIDTH_MM],
        [HALF_LENGTH_MM, HALF_WIDTH_MM],
        [-HALF_LENGTH_MM, HALF_WIDTH_MM],
    ]
)
# Shared by every module that needs the mat's outline: nobody may change it.
MAT_CORNERS_MM.setflags(write=False)

#: A typical webcam or phone sees about 70 degrees across; the prior on the focal
#: length is centred there and is wide (a factor of e^0.5 either way is one sigma).
PRIOR_FOCAL_PER_WIDTH = 0.7
PRIOR_LOG_FOCAL_SIGMA = 0.5
PRIOR_K2_SIGMA = 0.05
#: The principal point is near the image centre: one sigma is 3 % of the width.
PRIOR_PP_SIGMA_PER_WIDTH = 0.03
#: The visible felt edge may sit a little off the true edge (the mat's thickness
#: seen from the side, a shadow, fraying): one free offset per edge, with this
#: prior, when enough baselines fix the scale.
PRIOR_EDGE_OFFSET_SIGMA_MM = 1.5
#: Felt mats are a few millimetres thick (the rules set no thickness). A camera
#: beyond an edge sees that edge's side face, and the felt/table step found there
#: may be the face's foot: outwards of the edge by up to this thickness seen at
#: the camera's angle (:func:`side_face_shift_mm`), which widens that edge's prior.
MAX_MAT_THICKNESS_MM = 4.0
#: An edge whose side face can show more than this (mm) may be off its line even
#: when too few baselines are seen to free every edge.
MIN_SIDE_FACE_SHIFT_MM = 0.5
#: Weight of a felt-edge point relative to a baseline point, when both are used.
EDGE_WEIGHT = 0.5
#: Residuals beyond this (px) are down-weighted (Huber): winks and hands on edges.
HUBER_PX = 0.7
#: The systematic part of the mapping's stated error, px at each point of the mat
#: (see :func:`mapping_sigma_mm`). Measured on 38 development images (shared
#: scenes, sample_images, generated seeds 932-949): the largest mapping error was
#: 0.06-0.64 px where the mat is coarsest, median 0.19; at 0.3 px, 24 % of them
#: exceeded the stated one sigma and 3 % twice it.
SYSTEMATIC_EDGE_BIAS_PX = 0.3
#: How much of the fit's RMS residual (px) the edge points' shared bias grows
#: by (:func:`systematic_bias_px`). With the floor alone, the largest mapping
#: error exceeded the stated sigma on 15 of 48 benchmark images, by up to
#: 2.05x (shared oblique_00014); the images that exceeded it were those with
#: the larger residuals (0.26-0.73 px against 0.05-0.15). Chosen at 1.5 on the
#: shared scenes, sample_images and the beige-on-wood seeds 1300-1323.
RESIDUAL_BIAS_FACTOR = 1.5
#: Edges found on few profiles (a felt close to the table's colour, under
#: grain) leave the bias unseen by the residual larger still: the systematic
#: part is this many times larger for such fits. On the 7 beige-on-wood
#: development fits (seeds 1300+) found through the baselines the largest
#: error was up to 2.1 times the sigma stated without it.
FAINT_EDGE_BIAS_FACTOR = 2.0
#: Sub-pixel edge and line finding is no better than this (px): the floor of the
#: per-line scatter that weights each line (:func:`_line_weights`).
LINE_SCATTER_FLOOR_PX = 0.1


class TooFewPointsError(ValueError):
    """Too few edge points to fit a camera to."""


#: Fewer observations than this cannot pin down the camera's 11 parameters.
MIN_OBSERVATIONS = 15


@dataclass(frozen=True)
class LineOnMat:
    """The mat line ``normal . p = offset`` (mat mm) and a name for reports."""

    normal: tuple[float, float]
    offset_mm: float
    name: str


def edge_lines() -> tuple[LineOnMat, ...]:
    """The four mat edges, each paired with the corners it joins (indices into MAT_CORNERS_MM)."""
    return (
        LineOnMat((0.0, -1.0), HALF_WIDTH_MM, "edge y-"),
        LineOnMat((1.0, 0.0), HALF_LENGTH_MM, "edge x+"),
        LineOnMat((0.0, 1.0), HALF_WIDTH_MM, "edge y+"),
        LineOnMat((-1.0, 0.0), HALF_LENGTH_MM, "edge x-"),
    )


def baseline_segment_mm(corner_mm: FloatArray) -> tuple[FloatArray, FloatArray, LineOnMat]:
    """Rule 2.3.1: the baseline near a corner, as its two ends on the mat edges and its line.

    The baseline crosses the diagonal at right angles 914.4 mm from the centre:
    the line ``d . p = 914.4`` with ``d`` the unit vector towards the corner.
    """
    d = corner_mm / np.linalg.norm(corner_mm)
    sx, sy = np.sign(corner_mm)
    # Where it meets the long edge (|y| = half width) and the short edge (|x| = half length).
    on_long = np.array(
        [(BASELINE_DISTANCE_MM - d[1] * sy * HALF_WIDTH_MM) / d[0], sy * HALF_WIDTH_MM]
    )
    on_short = np.array(
        [sx * HALF_LENGTH_MM, (BASELINE_DISTANCE_MM - d[0] * sx * HALF_LENGTH_MM) / d[1]]
    )
    name = f"baseline {'+' if sx > 0 else '-'}x{'+' if sy > 0 else '-'}y"
    return on_long, on_short, LineOnMat((float(d[0]), float(d[1])), BASELINE_DISTANCE_MM, name)


# --------------------------------------------------------------------------
# Camera parameters <-> vector
# --------------------------------------------------------------------------


#: Parameter vector layout: log focal, k1, k2, principal point (2), Rodrigues
#: rotation (3), translation (3), then one outward offset per mat edge (4, mm).
N_CAMERA_PARAMS = 11
N_PARAMS = N_CAMERA_PARAMS + 4


def _camera_from_params(
    params: FloatArray, size_wh: tuple[int, int], fixed_dist: FloatArray | None = None
) -> CameraModel:
    """The camera of a parameter vector; ``fixed_dist`` gives p1, p2, k3 (zero if not given)."""
    # A fit walking away (a photo with no mat in it) can try a log focal past
    # exp's range: the infinite focal then fails the fit, which says why; the
    # overflow warning would only reach the user as noise.
    with np.errstate(over="ignore"):
        focal = float(np.exp(params[0]))
    cx, cy = float(params[3]), float(params[4])
    k = np.array([[focal, 0.0, cx], [0.0, focal, cy], [0.0, 0.0, 1.0]])
    rot, _ = cv2.Rodrigues(params[5:8])
    return CameraModel(
        image_size_wh=size_wh,
        camera_matrix=k,
        dist_coeffs=np.concatenate(
            [params[1:3], np.zeros(3) if fixed_dist is None else np.asarray(fixed_dist, float)]
        ),
        rotation=np.asarray(rot, np.float64),
        translation_mm=np.asarray(params[8:11], np.float64).copy(),
    )


def _fixed_distortion(camera: CameraModel) -> FloatArray:
    """The camera's p1, p2 and k3, shape (3,): the fit keeps them as they are."""
    tail = np.zeros(3)
    given = np.asarray(camera.dist_coeffs, np.float64)[2:5]
    tail[: len(given)] = given
    return tail


def _params_from_camera(camera: CameraModel) -> FloatArray:
    focal = float(np.sqrt(camera.camera_matrix[0, 0] * camera.camera_matrix[1, 1]))
    dist = np.zeros(5)
    dist[: min(5, len(camera.dist_coeffs))] = camera.dist_coeffs[:5]
    pp = camera.camera_matrix[:2, 2]
    return np.concatenate(
        [[np.log(focal), dist[0], dist[1]], pp, camera.rvec, camera.translation_mm, np.zeros(4)]
    )


# --------------------------------------------------------------------------
# Initial camera from four corners
# --------------------------------------------------------------------------


def focal_from_homography(h_mat_to_image: FloatArray, size_wh: tuple[int, int]) -> float | None:
    """Focal length in px from a plane homography, principal point at the image centre.

    Zhang's two constraints (the plane's axes are orthogonal and equally long)
    each give ``f^2``; returns None when neither is usable (e.g. the camera looks
    straight at the plane, where f and distance cannot be told apart).
    """
    cx, cy = (size_wh[0] - 1) / 2, (size_wh[1] - 1) / 2
    t = np.array([[1.0, 0.0, -cx], [0.0, 1.0, -cy], [0.0, 0.0, 1.0]])
    h = t @ h_mat_to_image
    a1, b1, c1 = h[:, 0]
    a2, b2, c2 = h[:, 1]
    estimates = []
    if abs(c1 * c2) > 1e-12:
        f2 = -(a1 * a2 + b1 * b2) / (c1 * c2)
        if f2 > 0:
            estimates.append(f2)
    if abs(c1**2 - c2**2) > 1e-12:
        f2 = (a2**2 + b2**2 - a1**2 - b1**2) / (c1**2 - c2**2)
        if f2 > 0:
            estimates.append(f2)
    if not estimates:
        return None
    return float(np.sqrt(np.median(estimates)))


def initial_camera(
    corners_image_px: FloatArray,
    size_wh: tuple[int, int],
    dist_coeffs: FloatArray | None = None,
) -> CameraModel:
    """A pinhole camera whose view of the mat corners matches ``corners_image_px``.

    Parameters
    ----------
    corners_image_px : (4, 2) ndarray
        Images of :data:`MAT_CORNERS_MM`, in the same order.
    size_wh : (2,) tuple of int
    dist_coeffs : (5,) ndarray, optional
        Known distortion; zero when not given.
    """
    dist = np.zeros(5) if dist_coeffs is None else np.asarray(dist_coeffs, np.float64)
    h, _ = cv2.findHomography(MAT_CORNERS_MM, corners_image_px)
    prior = PRIOR_FOCAL_PER_WIDTH * size_wh[0]
    focal = focal_from_homography(np.asarray(h, np.float64), size_wh) if h is not None else None
    if focal is None or not (0.3 * size_wh[0] < focal < 4.0 * size_wh[0]):
        focal = prior
    cx, cy = (size_wh[0] - 1) / 2, (size_wh[1] - 1) / 2
    k = np.array([[focal, 0.0, cx], [0.0, focal, cy], [0.0, 0.0, 1.0]])
    obj = np.hstack([MAT_CORNERS_MM, np.zeros((4, 1))])
    ok, rvec, tvec = cv2.solvePnP(
        obj, corners_image_px.reshape(-1, 1, 2), k, dist, flags=cv2.SOLVEPNP_IPPE
    )
    if not ok:
        raise ValueError("solvePnP failed on the mat corners")
    rot, _ = cv2.Rodrigues(rvec)
    return CameraModel(
        image_size_wh=size_wh,
        camera_matrix=k,
        dist_coeffs=dist,
        rotation=np.asarray(rot, np.float64),
        translation_mm=np.asarray(tvec, np.float64).reshape(3),
    )


# --------------------------------------------------------------------------
# Least squares
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Observations:
    """Image points, each on a known mat line.

    Parameters
    ----------
    image_xy_px : (N, 2) ndarray
    line_normal : (N, 2) ndarray
        Unit normal of each point's mat line.
    line_offset_mm : (N,) ndarray
    kind : (N,) ndarray of int
        0 for a mat edge, 1 for a baseline.
    edge_index : (N,) ndarray of int
        Which mat edge (0-3, as :func:`edge_lines`) a point is on; -1 for baselines.
    """

    image_xy_px: FloatArray
    line_normal: FloatArray
    line_offset_mm: FloatArray
    kind: npt.NDArray[np.int_]
    edge_index: npt.NDArray[np.int_]

    def __len__(self) -> int:
        return len(self.image_xy_px)

    def subset(self, keep: npt.NDArray[np.bool_]) -> Observations:
        """The observations where ``keep`` is true."""
        return Observations(
            self.image_xy_px[keep],
            self.line_normal[keep],
            self.line_offset_mm[keep],
            self.kind[keep],
            self.edge_index[keep],
        )

    @classmethod
    def concat(cls, parts: list[Observations]) -> Observations:
        """All observations of ``parts``, in order."""
        if not parts:
            return cls(
                np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0), np.zeros(0, int), np.zeros(0, int)
            )
        return cls(
            np.vstack([p.image_xy_px for p in parts]),
            np.vstack([p.line_normal for p in parts]),
            np.concatenate([p.line_offset_mm for p in parts]),
            np.concatenate([p.kind for p in parts]),
            np.concatenate([p.edge_index for p in parts]),
        )


def residuals_mm(
    camera: CameraModel, obs: Observations, edge_offsets_mm: FloatArray | None = None
) -> FloatArray:
    """Signed distance of each back-projected point from its mat line, mm, shape (N,).

    ``edge_offsets_mm`` (4,) moves each mat edge outwards.
    """
    mat_xy = camera.image_to_mat(obs.image_xy_px, 0.0)
    offsets = None if edge_offsets_mm is None else np.asarray(edge_offsets_mm)[None, :]
    target = _line_offsets_mm(obs, offsets)[0]
    return np.asarray(np.sum(mat_xy * obs.line_normal, axis=1) - target, np.float64)


def _line_offsets_mm(obs: Observations, edge_offsets_mm: FloatArray | None) -> FloatArray:
    """Each point's line offset, its edge moved outwards by the edge's offset.

    Parameters
    ----------
    obs : Observations
        N points.
    edge_offsets_mm : (m, 4) ndarray or None
        Per set of parameters, how far each mat edge is moved outwards.

    Returns
    -------
    (m, N) ndarray
        ``m`` is 1 when ``edge_offsets_mm`` is None.
    """
    if edge_offsets_mm is None:
        return obs.line_offset_mm[None, :].copy()
    target = np.repeat(obs.line_offset_mm[None, :], len(edge_offsets_mm), axis=0)
    on_edge = obs.edge_index >= 0
    target[:, on_edge] += edge_offsets_mm[:, obs.edge_index[on_edge]]
    return target


#: Fixed-point iterations of :func:`_residuals_mm_batch`'s undistortion at most
#: (as OpenCV's ``undistortPointsIter`` is given), and the change per round (of
#: the radial factor, or of the normalised image coordinates) under which it
#: has converged: far below the relative steps of the Jacobian's finite
#: differences (about 1.5e-8), so that the differences are not noise.
_UNDISTORT_MAX_ITER = 50
_UNDISTORT_TOL = 1e-15


def _residuals_mm_batch(
    params: FloatArray, obs: Observations, fixed_dist: FloatArray | None = None
) -> FloatArray:
    """:func:`residuals_mm` of the cameras of several parameter vectors at once.

    The same model as :func:`_camera_from_params` and the same back-projection
    as :meth:`CameraModel.image_to_mat` onto z = 0 (OpenCV's undistortion
    iteration included), written out element by element so that one
    vectorised pass serves a whole finite-difference Jacobian: the fit spends
    nearly all its time there, and one camera at a time costs a Python round
    trip and an OpenCV call per parameter. The result agrees with
    :func:`residuals_mm` to within OpenCV's own stopping tolerance (a few
    1e-10 mm on the mat).

    Parameters
    ----------
    params : (m, N_PARAMS) ndarray
        Parameter vectors (see :data:`N_PARAMS`).
    obs : Observations
        N points.
    fixed_dist : (3,) ndarray, optional
        The distortion terms the parameters leave fixed, p1, p2, k3 (zero
        when not given).

    Returns
    -------
    (m, N) ndarray
        Signed distance of each back-projected point from its (offset) line,
        mm; NaN or infinite where a camera's ray through the point misses the
        mat's plane.
    """
    params = np.asarray(params, np.float64)
    p1, p2, k3 = (0.0, 0.0, 0.0) if fixed_dist is None else (float(v) for v in fixed_dist)
    m = len(params)
    u = obs.image_xy_px[None, :, 0]
    v = obs.image_xy_px[None, :, 1]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        focal = np.exp(params[:, 0:1])
        k1, k2 = params[:, 1:2], params[:, 2:3]
        x0 = (u - params[:, 3:4]) / focal
        y0 = (v - params[:, 4:5]) / focal
        # OpenCV's fixed-point iteration: x = (x0 - tangential) / (1 + k1 r^2 +
        # k2 r^4 + k3 r^6), r and the tangential terms from the last estimate.
        # A point whose factor turns negative keeps its distorted coordinates,
        # as OpenCV leaves it. Convergence is checked every few rounds: the
        # check costs as much as a round.
        frozen = None
        if p1 == 0.0 and p2 == 0.0:
            # Radial only: x and y share one factor, and r^2 = r0^2 * factor^2.
            r2_0 = x0 * x0 + y0 * y0
            factor = np.ones_like(r2_0)
            for round_ in range(1, _UNDISTORT_MAX_ITER + 1):
                r2 = r2_0 * (factor * factor)
                previous = factor
                factor = 1.0 / (1.0 + ((k3 * r2 + k2) * r2 + k1) * r2)
                negative = factor < 0
                if negative.any():
                    frozen = negative if frozen is None else frozen | negative
                if frozen is not None:
                    factor[frozen] = 1.0
                if round_ % 4 == 0 and not np.nanmax(np.abs(factor - previous)) > _UNDISTORT_TOL:
                    break
            xn = x0 * factor
            yn = y0 * factor
        else:
            xn, yn = x0, y0
            for round_ in range(1, _UNDISTORT_MAX_ITER + 1):
                r2 = xn * xn + yn * yn
                factor = 1.0 / (1.0 + ((k3 * r2 + k2) * r2 + k1) * r2)
                negative = factor < 0
                if negative.any():
                    frozen = negative if frozen is None else frozen | negative
                dx = 2.0 * p1 * xn * yn + p2 * (r2 + 2.0 * xn * xn)
                dy = p1 * (r2 + 2.0 * yn * yn) + 2.0 * p2 * xn * yn
                x_next = (x0 - dx) * factor
                y_next = (y0 - dy) * factor
                if frozen is not None:
                    x_next[frozen] = x0[frozen]
                    y_next[frozen] = y0[frozen]
                change = np.abs(x_next - xn) + np.abs(y_next - yn)
                xn, yn = x_next, y_next
                if round_ % 4 == 0 and not np.nanmax(change) > _UNDISTORT_TOL:
                    break
        rot = np.empty((m, 3, 3))
        for i in range(m):
            rot[i] = cv2.Rodrigues(params[i, 5:8])[0]
        t = params[:, 8:11]
        # Rays in the mat frame, R.T @ (x, y, 1), and the camera centre -R.T @ t.
        ray = [
            rot[:, 0, k, None] * xn + rot[:, 1, k, None] * yn + rot[:, 2, k, None] for k in range(3)
        ]
        origin = [
            -(rot[:, 0, k] * t[:, 0] + rot[:, 1, k] * t[:, 1] + rot[:, 2, k] * t[:, 2])
            for k in range(3)
        ]
        scale = (0.0 - origin[2][:, None]) / ray[2]
        mat_x = origin[0][:, None] + scale * ray[0]
        mat_y = origin[1][:, None] + scale * ray[1]
    target = _line_offsets_mm(obs, params[:, N_CAMERA_PARAMS:])
    return np.asarray(
        mat_x * obs.line_normal[None, :, 0] + mat_y * obs.line_normal[None, :, 1] - target,
        np.float64,
    )


#: The relative step of the fit's forward-difference Jacobian, as scipy's
#: ``'2-point'`` takes it.
_JAC_REL_STEP = float(np.sqrt(np.finfo(np.float64).eps))


@dataclass(frozen=True, eq=False)
class CameraFit:
    """The fitted camera and how well it explains the observations.

    Parameters
    ----------
    camera : CameraModel
    residual_px : (N,) ndarray
        Residual of each observation used, in image pixels.
    residual_mm : (N,) ndarray
        The same on the mat, mm.
    observations : Observations
    edge_offsets_mm : (4,) ndarray
        How far outwards of each true edge the felt's visible edge was found.
    param_cov : (15, 15) ndarray
        Covariance of the parameter vector (see :data:`N_PARAMS`) from the
        Jacobian, scaled by the residual variance.
    cost : float
        Robust cost at the optimum (residuals in px plus priors).
    """

    camera: CameraModel
    residual_px: FloatArray
    residual_mm: FloatArray
    observations: Observations
    edge_offsets_mm: FloatArray
    param_cov: FloatArray
    cost: float


def fit_camera(
    initial: CameraModel,
    obs: Observations,
    *,
    fit_distortion: bool = True,
    fit_k2: bool = True,
    fit_edge_offsets: bool = False,
    side_faces_only: bool = False,
    max_nfev: int = 40,
    rounds: int = 3,
) -> CameraFit:
    """Refine focal length, k1, k2, principal point and pose so points lie on their lines.

    Parameters
    ----------
    initial : CameraModel
    obs : Observations
    fit_distortion : bool
        False keeps the initial camera's distortion (e.g. when it was given).
    fit_k2 : bool
        Whether k2 is free (it needs points far from the centre).
    fit_edge_offsets : bool
        Whether each mat edge may sit a little off its nominal line (only
        sensible when baselines fix the scale).
    side_faces_only : bool
        With ``fit_edge_offsets``, free only the offsets of edges whose side
        face the camera sees (:func:`side_face_shift_mm` over
        :data:`MIN_SIDE_FACE_SHIFT_MM`); the other edges, seen at their top,
        then fix the scale where too few baselines do.
    max_nfev : int
        Evaluation budget of each Levenberg-Marquardt run: about one
        iteration each, as the Jacobian comes in one batch and is not
        counted. A fit that no camera explains runs to the budget.
    rounds : int
        Reweighting rounds (Huber, and each line by its scatter); 1 is plain
        least squares.
    """
    if len(obs) < MIN_OBSERVATIONS:
        raise TooFewPointsError(
            f"only {len(obs)} edge points were found; at least {MIN_OBSERVATIONS} are needed"
        )
    size_wh = initial.image_size_wh
    p0 = _params_from_camera(initial)
    # A distortion given in full (--distortion k1,k2,p1,p2,k3) keeps its
    # tangential terms and k3; the fit frees k1 and k2 at most.
    fixed_dist = _fixed_distortion(initial)
    free = np.ones(N_PARAMS, bool)
    if not fit_distortion:
        free[1:3] = False
    elif not fit_k2:
        free[2] = False
    side_mm = side_face_shift_mm(initial)
    if not fit_edge_offsets:
        free[N_CAMERA_PARAMS:] = False
    elif side_faces_only:
        free[N_CAMERA_PARAMS:] = side_mm > MIN_SIDE_FACE_SHIFT_MM
    # Residuals are scaled to pixels with the local scale at the start: mm on the
    # far side of an oblique view are worth fewer pixels than near the camera.
    mat_xy0 = initial.image_to_mat(obs.image_xy_px, 0.0)
    mm_per_px = np.array(
        [initial.mm_per_px_at([p[0], p[1], 0.0]) for p in mat_xy0], dtype=np.float64
    )
    mm_per_px = np.nan_to_num(mm_per_px, nan=1.0)
    prior_log_f = np.log(PRIOR_FOCAL_PER_WIDTH * size_wh[0])
    centre = np.array([(size_wh[0] - 1) / 2, (size_wh[1] - 1) / 2])
    pp_sigma = PRIOR_PP_SIGMA_PER_WIDTH * size_wh[0]

    def unpack(x: FloatArray) -> FloatArray:
        p = p0.copy()
        p[free] = x
        return p

    # Oblique views show the near edges' side faces: 3-4 mm off at 50 degrees,
    # which a 1.5 mm prior would instead push into the mapping.
    offset_sigma_mm = PRIOR_EDGE_OFFSET_SIGMA_MM + side_mm

    n_obs = len(obs)
    weights = np.ones(n_obs)
    # A baseline is a thin painted line, found at its middle without bias; the
    # felt's edge is a step whose place depends on thickness, shadow and fraying.
    any_offset = bool(free[N_CAMERA_PARAMS:].any())
    kind_weight = np.where(obs.kind == 1, 1.0, EDGE_WEIGHT) if any_offset else np.ones(n_obs)

    def batch(xs: FloatArray) -> FloatArray:
        """The weighted residuals and priors of each row of ``xs``, shape (m, N + priors)."""
        p = np.tile(p0, (len(xs), 1))
        p[:, free] = xs
        res = _residuals_mm_batch(p, obs, fixed_dist) / mm_per_px * kind_weight
        res = np.nan_to_num(res, nan=1e3, posinf=1e3, neginf=-1e3)
        priors = [
            (p[:, 0:1] - prior_log_f) / PRIOR_LOG_FOCAL_SIGMA,
            (p[:, 3:5] - centre) / pp_sigma,
        ]
        if free[2]:
            priors.append(p[:, 2:3] / PRIOR_K2_SIGMA)
        if any_offset:
            priors.append(p[:, N_CAMERA_PARAMS:] / offset_sigma_mm)
        return np.hstack([res * np.sqrt(weights), *priors])

    def fun(x: FloatArray) -> FloatArray:
        return np.asarray(batch(x[None, :])[0], np.float64)

    def jac(x: FloatArray) -> FloatArray:
        # Forward differences as scipy's '2-point' takes them, all columns in
        # one batch with the point itself.
        sign = np.where(x >= 0, 1.0, -1.0)
        step = _JAC_REL_STEP * sign * np.maximum(1.0, np.abs(x))
        step = (x + step) - x
        rows = np.vstack([x, x + np.diag(step)])
        values = batch(rows)
        return np.asarray(((values[1:] - values[0]) / step[:, None]).T, np.float64)

    # Huber by iterative reweighting around MINPACK's Levenberg-Marquardt: lm is
    # a QR in Fortran and stays fast on a busy machine, where the SVD of scipy's
    # robust trust-region solver fights other processes for BLAS threads.
    x = p0[free]
    for _ in range(max(1, rounds)):
        sol = least_squares(
            fun, x, jac=jac, method="lm", x_scale="jac", max_nfev=max_nfev, ftol=1e-6, xtol=1e-7
        )
        x = sol.x
        p_now = unpack(x)
        r = residuals_mm(
            _camera_from_params(p_now, size_wh, fixed_dist), obs, p_now[N_CAMERA_PARAMS:]
        )
        r_px = np.abs(np.nan_to_num(r / mm_per_px, nan=1e3))
        weights = np.minimum(1.0, HUBER_PX / np.maximum(r_px, 1e-9)) * _line_weights(obs, r_px)
    p = unpack(sol.x)
    camera = _camera_from_params(p, size_wh, fixed_dist)
    offsets = p[N_CAMERA_PARAMS:].copy()
    res_mm = residuals_mm(camera, obs, offsets)
    res_px = res_mm / mm_per_px
    dof = max(1, len(obs) - int(free.sum()))
    # The Jacobian carries the last round's weights, so the residuals that scale
    # it must too (the priors' rows are not residuals).
    weighted_px = np.abs(np.asarray(sol.fun[:n_obs], np.float64))
    sigma2 = float(np.sum(np.minimum(weighted_px, 3.0) ** 2) / dof)
    cov_free = np.linalg.pinv(sol.jac.T @ sol.jac) * sigma2
    cov = np.zeros((N_PARAMS, N_PARAMS))
    idx = np.flatnonzero(free)
    cov[np.ix_(idx, idx)] = cov_free
    return CameraFit(
        camera=camera,
        residual_px=res_px,
        residual_mm=res_mm,
        observations=obs,
        edge_offsets_mm=offsets,
        param_cov=cov,
        cost=float(sol.cost),
    )


def _line_weights(obs: Observations, abs_residual_px: FloatArray) -> FloatArray:
    """Weight of each point by how cleanly its own line is seen, shape (N,).

    A felt edge blurred, shadowed or frayed unevenly along its length scatters
    its points by a pixel or more where a crisp edge or a printed baseline stays
    within a tenth: each edge and baseline is weighted by the inverse square of
    its points' robust scatter, relative to the typical line's, so a poor edge
    cannot drag the mapping that the good ones agree on.
    """
    line_id = np.where(
        obs.edge_index >= 0,
        obs.edge_index,
        4 + (obs.line_normal[:, 0] > 0) + 2 * (obs.line_normal[:, 1] > 0),
    )
    scatter = np.full(len(obs), np.nan)
    for line in np.unique(line_id):
        on_line = line_id == line
        # Too few points say nothing about their line's scatter.
        if on_line.sum() >= 8:
            scatter[on_line] = 1.4826 * np.median(abs_residual_px[on_line])
    if not np.any(np.isfinite(scatter)):
        return np.ones(len(obs))
    typical = max(float(np.nanmedian(scatter)), LINE_SCATTER_FLOOR_PX)
    scatter = np.maximum(np.nan_to_num(scatter, nan=typical), LINE_SCATTER_FLOOR_PX)
    return np.asarray(np.clip((typical / scatter) ** 2, 0.02, 4.0), np.float64)


def side_face_shift_mm(camera: CameraModel) -> FloatArray:
    """How far outside each edge its side face's foot can appear, mat mm, shape (4,).

    The foot of the side face of a mat :data:`MAX_MAT_THICKNESS_MM` thick,
    projected from the camera onto the mat's plane, lands this far outside the
    edge; zero for an edge whose side face the camera cannot see (the camera is
    on the mat's side of that edge's line). Constant along an edge: it depends
    only on the camera's height and its distance beyond the edge's line.
    Edges in the order of :func:`edge_lines`.
    """
    centre = camera.position_mm
    height_mm = max(float(centre[2]), 1.0)
    shifts = []
    for line in edge_lines():
        beyond_mm = float(centre[0] * line.normal[0] + centre[1] * line.normal[1]) - line.offset_mm
        shifts.append(
            max(0.0, beyond_mm) * MAX_MAT_THICKNESS_MM / (height_mm + MAX_MAT_THICKNESS_MM)
        )
    return np.asarray(shifts, np.float64)


def systematic_bias_px(fit: CameraFit, *, faint_edges: bool = False) -> float:
    """The bias all edge points may share, px: a floor, grown by the fit's RMS residual.

    Edges whose points scatter (a faint or frayed edge, texture on the table)
    also sit off their true line by more, in ways the fit's covariance does not
    show: :data:`SYSTEMATIC_EDGE_BIAS_PX` and :data:`RESIDUAL_BIAS_FACTOR`
    times the RMS residual, in quadrature; :data:`FAINT_EDGE_BIAS_FACTOR`
    times that with ``faint_edges`` (edges found on few profiles).
    """
    rms = float(np.sqrt(np.mean(fit.residual_px**2))) if len(fit.residual_px) else 0.0
    factor = FAINT_EDGE_BIAS_FACTOR if faint_edges else 1.0
    return factor * float(np.hypot(SYSTEMATIC_EDGE_BIAS_PX, RESIDUAL_BIAS_FACTOR * rms))


#: Where the stated mapping error is evaluated: the mat's corners, edge
#: midpoints and centre, mm.
_SIGMA_POINTS_MM = np.array(
    [
        [x, y]
        for x in (-HALF_LENGTH_MM, 0.0, HALF_LENGTH_MM)
        for y in (-HALF_WIDTH_MM, 0.0, HALF_WIDTH_MM)
    ]
)
_SIGMA_POINTS_MM.setflags(write=False)


def line_ids(obs: Observations) -> npt.NDArray[np.int_]:
    """Which mat line each observation lies on, shape (N,): edges 0-3, baselines 4-7.

    Baselines are told apart by their line's normal (the unit vector towards
    their corner), numbered in the order of :data:`MAT_CORNERS_MM`.
    """
    ids = obs.edge_index.copy()
    for j, corner in enumerate(MAT_CORNERS_MM):
        normal = corner / np.linalg.norm(corner)
        on_it = (obs.kind == 1) & np.all(np.isclose(obs.line_normal, normal), axis=1)
        ids[on_it] = 4 + j
    return ids


def line_jackknife_mm(
    fit: CameraFit,
    *,
    fit_distortion: bool,
    fit_edge_offsets: bool,
    side_faces_only: bool,
) -> float:
    """How much the mapping rests on any one line: delete-one-line jackknife, mm.

    The fit is repeated without each edge and baseline in turn (the other
    settings as the fit's own), and the spread of the mapped images of the
    mat's corners, edge midpoints and centre over those fits is scaled to a
    standard error (Quenouille-Tukey: ``sqrt((n - 1) / n * sum((d_i - mean)**2))``);
    the largest over those points is returned.

    The fit's covariance treats every point as independent; but the points of
    one line share its error (grain beside a faint edge, a shadow along it),
    so the covariance can be several times too small where a few lines
    disagree. Leaving out a whole line at a time sees that: on the
    beige-on-wood fits found 4.6 and 6.8 mm wrong with a stated sigma of 2.2
    and 2.9 mm, it gave 6.4 and 10.4 mm.

    Returns
    -------
    float
        0 when fewer than two lines could be left out; infinite when a fit
        without one of them ran off (the mapping rests on that line alone).
    """
    obs = fit.observations
    ids = line_ids(obs)
    image_px = fit.camera.mat_to_image(_SIGMA_POINTS_MM)
    mapped = []
    for line in np.unique(ids):
        try:
            again = fit_camera(
                fit.camera,
                obs.subset(ids != line),
                fit_distortion=fit_distortion,
                fit_edge_offsets=fit_edge_offsets,
                side_faces_only=side_faces_only,
                max_nfev=100,
                rounds=2,
            )
        except TooFewPointsError:
            continue
        mapped.append(again.camera.image_to_mat(image_px))
    n = len(mapped)
    if n < 2:
        return 0.0
    stack = np.asarray(mapped, np.float64)
    if not np.all(np.isfinite(stack)):
        return float("inf")
    spread = np.sum(np.sum((stack - stack.mean(axis=0)) ** 2, axis=2), axis=0)
    return float(np.sqrt((n - 1) / n * np.max(spread)))


def mapping_sigma_mm(
    fit: CameraFit, *, faint_edges: bool = False, jackknife_mm: float = 0.0
) -> float:
    """Largest one-sigma error of the image-to-mat mapping over the mat, mm.

    Two terms, added in quadrature at each of fixed image points (the images of
    the mat's corners, edge midpoints and centre), the largest total taken:

    - statistical: linear propagation of the fit's parameter covariance;
    - systematic: :func:`systematic_bias_px` times the mat millimetres
      per pixel there. Edge points can all be biased alike (blur, a shadow, a
      side face, a frayed edge) in ways no residual shows, and the mapping
      inherits that bias as a fraction of a pixel, in millimetres largest
      where the mat is seen coarsest (the far end of an oblique view).

    ``faint_edges`` says the fit's edges were found on few profiles (an
    outline from faint edges or from the baselines): see :func:`systematic_bias_px`.
    ``jackknife_mm`` (from :func:`line_jackknife_mm`) is added to the largest
    total in quadrature: errors that one line's points share. It partly
    counts the statistical term again, so the sum leans to the safe side.
    """
    p = _params_from_camera(fit.camera)
    p[N_CAMERA_PARAMS:] = fit.edge_offsets_mm
    fixed_dist = _fixed_distortion(fit.camera)
    grid_mm = _SIGMA_POINTS_MM
    image_px = fit.camera.mat_to_image(grid_mm)
    size_wh = fit.camera.image_size_wh
    # Steps small against each parameter's spread, but not below float noise.
    steps = np.maximum(np.sqrt(np.clip(np.diag(fit.param_cov), 0.0, None)) * 1e-2, 1e-9)
    jac = np.zeros((len(grid_mm) * 2, len(p)))
    for i in range(N_CAMERA_PARAMS):
        hi, lo = p.copy(), p.copy()
        hi[i] += steps[i]
        lo[i] -= steps[i]
        d = _camera_from_params(hi, size_wh, fixed_dist).image_to_mat(
            image_px
        ) - _camera_from_params(lo, size_wh, fixed_dist).image_to_mat(image_px)
        jac[:, i] = d.reshape(-1) / (2 * steps[i])
    cov_xy = jac @ ((fit.param_cov + fit.param_cov.T) / 2) @ jac.T
    var = np.clip(np.diag(cov_xy).reshape(-1, 2).sum(axis=1), 0.0, None)
    mm_per_px = np.array([fit.camera.mm_per_px_at([x, y, 0.0]) for x, y in grid_mm])
    bias_px = systematic_bias_px(fit, faint_edges=faint_edges)
    var = var + (bias_px * np.nan_to_num(mm_per_px, nan=np.inf)) ** 2
    return float(np.hypot(np.sqrt(np.max(var)), jackknife_mm))
