"""Where each wink stands: unplayed, off, potted, squopped or free (rules 8, 13, 19).

Pure geometry on plan-view positions in the canonical mat frame, plus the
one camera test that tells a wink inside the pot from one beside it, and the
rule 2.1.1 count that infers potted winks nobody can see.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from rules.board import (
    BASELINE_DISTANCE_MM,
    LARGE_WINKS_PER_COLOUR,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    POT_BASE_DIAMETER_MM,
    POT_HEIGHT_MM,
    POT_TOP_DIAMETER_MM,
    SMALL_WINK_DIAMETER_MM,
    SMALL_WINKS_PER_COLOUR,
    WINK_THICKNESS_MM,
    WINKS_PER_COLOUR,
    Board,
    Colour,
    WinkSize,
    WinkStatus,
)

FloatArray = npt.NDArray[np.float64]

#: Assumed mat thickness (the rules set none), for winks on the table off the mat.
MAT_THICKNESS_MM = 2.5
HALF_LENGTH_MM = MAT_LENGTH_MM / 2
HALF_WIDTH_MM = MAT_WIDTH_MM / 2

#: Rule 5.2 corners in the canonical frame (blue's corner at y > 0), clockwise
#: blue, green, red, yellow seen from above, blue and green sharing a long
#: side. Calibration may report the other clockwise layout (blue and green on
#: a short side); pass its corners instead.
DEFAULT_CORNERS_MM: Mapping[Colour, tuple[float, float]] = {
    Colour.BLUE: (-HALF_LENGTH_MM, HALF_WIDTH_MM),
    Colour.GREEN: (HALF_LENGTH_MM, HALF_WIDTH_MM),
    Colour.RED: (HALF_LENGTH_MM, -HALF_WIDTH_MM),
    Colour.YELLOW: (-HALF_LENGTH_MM, -HALF_WIDTH_MM),
}

#: Tiddlies per wink (rule 19.1): 3 for a potted wink, 1 for a free played one.
TIDDLIES_POTTED = 3
TIDDLIES_FREE = 1
SMALL_WINK_RADIUS_MM = SMALL_WINK_DIAMETER_MM / 2


def beyond_baseline_mm(mat_xy_mm: npt.ArrayLike, corner_mm: Sequence[float]) -> FloatArray:
    """How far points lie beyond a corner's baseline, mm (negative: in front of it).

    The baseline is the line ``p . d = 914.4`` with ``d`` the unit vector
    from the mat's centre towards the corner (rule 2.3.1).

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
    corner_mm : (2,) array_like

    Returns
    -------
    (N,) ndarray
    """
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float))
    d = np.asarray(corner_mm, dtype=float)
    d = d / np.hypot(*d)
    return np.asarray(pts @ d - BASELINE_DISTANCE_MM, dtype=float)


def beyond_mat_edge_mm(mat_xy_mm: npt.ArrayLike, radius_mm: npt.ArrayLike) -> FloatArray:
    """How far each wink's outline reaches past the mat's edge, mm (negative: inside).

    Rule 13: a wink any part of which lies outside the mat is off.

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
    radius_mm : float or (N,) array_like

    Returns
    -------
    (N,) ndarray
    """
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float))
    r = np.broadcast_to(np.asarray(radius_mm, dtype=float), (len(pts),))
    return np.maximum(np.abs(pts[:, 0]) + r - HALF_LENGTH_MM, np.abs(pts[:, 1]) + r - HALF_WIDTH_MM)


def beyond_mat_mm(mat_xy_mm: npt.ArrayLike) -> FloatArray:
    """How far each point lies outside the mat's rectangle, mm: to the nearest felt, 0 on it."""
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float))
    out_x = np.maximum(np.abs(pts[:, 0]) - HALF_LENGTH_MM, 0.0)
    out_y = np.maximum(np.abs(pts[:, 1]) - HALF_WIDTH_MM, 0.0)
    return np.hypot(out_x, out_y)


def _tipped_drop_mm(beyond_mm: FloatArray, radius_mm: FloatArray) -> FloatArray:
    """How much lower the centre of a wink tipped over the mat's edge lies, mm (positive)."""
    return MAT_THICKNESS_MM * beyond_mm / (radius_mm + beyond_mm)


def centre_height_off_mat_mm(mat_xy_mm: npt.ArrayLike, radius_mm: npt.ArrayLike) -> FloatArray:
    """Height of each wink's centre above a flat wink's on the mat, mm: 0 on the mat, lower off it.

    A wink whose centre lies a distance ``d`` beyond the mat's edge, by less
    than its radius ``r``, tips over the edge: it rests on the felt's edge
    and, with its outer rim, on the table, :data:`MAT_THICKNESS_MM` lower.
    Its centre is then ``MAT_THICKNESS_MM * d / (r + d)`` lower. Beyond by a
    radius or more it lies flat on the table, a mat's thickness lower.
    Past a corner, ``d`` is the distance to the corner.

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
        Plan-view centres, canonical mat frame, mm.
    radius_mm : float or (N,) array_like

    Returns
    -------
    (N,) ndarray
        0 or negative, mm.
    """
    beyond = beyond_mat_mm(mat_xy_mm)
    r = np.broadcast_to(np.asarray(radius_mm, dtype=float), beyond.shape)
    return -np.where(beyond >= r, MAT_THICKNESS_MM, _tipped_drop_mm(beyond, r))


#: Fixed-point steps for the height of a wink tipped over the mat's edge:
#: each step's change is at most the parallax lever (under 2 at 60 degrees
#: from vertical) times 2.5 / 8 of the last, so a few suffice.
TIPPED_STEPS = 6


def base_z_off_mat_mm(
    camera: CameraModel,
    image_xy_px: npt.ArrayLike,
    top_z_mm: npt.ArrayLike,
    radius_mm: npt.ArrayLike,
) -> FloatArray:
    """How much lower each wink lying on nothing is than flat on the mat, mm, from its image.

    0 for a wink on the mat, negative off it (see
    :func:`centre_height_off_mat_mm`). The height moves the plan position
    that decides it (from a camera 55 degrees from vertical, by 1-2 times
    the drop), so it is solved for the image point under two readings:
    flat on the table (it fits if that puts the wink a radius or more out),
    and tipped over the edge (fixed-point steps; it fits if the wink then
    lies less than a radius out). Near the far and short edges of a view
    from the side, one image point can fit both, a few mm apart in plan;
    the height is then taken half way between, which places the wink at
    most about half that gap off. A point that fits neither is taken to be
    flat on the table.

    Parameters
    ----------
    camera : CameraModel
    image_xy_px : (N, 2) array_like
        Centres of the winks' top faces in the image, pixels.
    top_z_mm : (N,) array_like
        Height of each top face when the wink lies flat on the mat, mm.
    radius_mm : (N,) array_like

    Returns
    -------
    (N,) ndarray
        0 or negative, mm.
    """
    image_xy = np.asarray(image_xy_px, dtype=float).reshape(-1, 2)
    top = np.broadcast_to(np.asarray(top_z_mm, dtype=float), (len(image_xy),))
    r = np.broadcast_to(np.asarray(radius_mm, dtype=float), (len(image_xy),))
    base = np.zeros(len(image_xy))
    off = beyond_mat_mm(camera.image_to_mat(image_xy, top)) > 0.0
    if not off.any():
        return base
    xy, top, r = image_xy[off], top[off], r[off]
    # A wink against the mat's side lies exactly a radius out: a hair's
    # rounding must not make it fit neither reading.
    table_fits = beyond_mat_mm(camera.image_to_mat(xy, top - MAT_THICKNESS_MM)) >= r - 0.05
    drop = np.zeros(len(xy))
    for _ in range(TIPPED_STEPS):
        drop = _tipped_drop_mm(beyond_mat_mm(camera.image_to_mat(xy, top - drop)), r)
    plan = camera.image_to_mat(xy, top - drop)
    # Tipped where it then lies less than a radius out, else flat on the table.
    settled = centre_height_off_mat_mm(plan, r)
    tipped_fits = beyond_mat_mm(plan) < r
    base[off] = np.where(table_fits & tipped_fits, (settled - MAT_THICKNESS_MM) / 2, settled)
    return base


def pot_opening_distance_mm(
    camera: CameraModel,
    image_xy_px: npt.ArrayLike,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> FloatArray:
    """How far from the pot's axis each image point's ray crosses the pot's rim plane, mm.

    Under the top radius (24 mm) the point is seen through the opening. That
    alone does not make a wink there potted: from a tilted camera the centre
    of a wink lying against the pot's far side shows through the opening
    too, its near part hidden by the wall (see :func:`lies_in_pot`).

    Parameters
    ----------
    image_xy_px : (N, 2) array_like
    pot_centre_mm : (2,) array_like

    Returns
    -------
    (N,) ndarray
    """
    rim = camera.image_to_mat(image_xy_px, POT_HEIGHT_MM)
    return np.asarray(np.hypot(*(rim - np.asarray(pot_centre_mm, float)).T), dtype=float)


def hidden_behind_pot_fraction(
    camera: CameraModel,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
    radius_mm: float = SMALL_WINK_RADIUS_MM,
) -> float:
    """How much of a wink touching the pot's far side the pot hides from the camera.

    The pot stands 38 mm tall (rule 2.4), so from a tilted camera it hides a
    strip of mat behind it; a small wink lying there may not be seen at all.
    The wink is placed against the pot's base on the side facing away from
    the camera (see :func:`pot_hidden_fraction`).

    Parameters
    ----------
    camera : CameraModel
    pot_centre_mm : (2,) array_like
    radius_mm : float
        The wink's radius; default a small wink's.

    Returns
    -------
    float
        0 (the whole wink in view) to 1 (none of it).
    """
    eye = tuple(float(v) for v in camera.position_mm)
    pot = (float(pot_centre_mm[0]), float(pot_centre_mm[1]))
    return _hidden_behind_pot(eye, pot, float(radius_mm))


@functools.lru_cache(maxsize=8)
def _hidden_behind_pot(
    eye_mm: tuple[float, float, float], pot_mm: tuple[float, float], radius_mm: float
) -> float:
    """:func:`hidden_behind_pot_fraction` for a camera at ``eye_mm`` (cached: a still camera)."""
    pot = np.asarray(pot_mm)
    eye = np.asarray(eye_mm)
    away = pot - eye[:2]
    norm = float(np.hypot(*away))
    # Straight above the pot every side is alike (the rim's overhang still
    # hides the inner edge of a wink against the base).
    away = away / norm if norm > 1e-6 else np.array([1.0, 0.0])
    centre = pot + away * (POT_BASE_DIAMETER_MM / 2 + radius_mm)
    return _pot_hidden_from(eye, centre, radius_mm, pot, WINK_THICKNESS_MM)


def pot_hidden_fraction(
    camera: CameraModel,
    wink_mat_xy_mm: Sequence[float],
    radius_mm: float,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
    top_z_mm: float = WINK_THICKNESS_MM,
) -> float:
    """Share of a flat wink's top face whose line of sight to the camera passes through the pot.

    The pot is a frustum from its base (38 mm across, on the mat) to its rim
    (48 mm across, 38 mm up), rule 2.4.

    Parameters
    ----------
    camera : CameraModel
    wink_mat_xy_mm : (2,) array_like
        The wink's plan centre.
    radius_mm : float
    pot_centre_mm : (2,) array_like
    top_z_mm : float
        Height of the wink's top face.

    Returns
    -------
    float
        0 (the whole wink in view) to 1 (none of it).
    """
    return _pot_hidden_from(
        camera.position_mm,
        np.asarray(wink_mat_xy_mm, dtype=float),
        radius_mm,
        np.asarray(pot_centre_mm, dtype=float),
        top_z_mm,
    )


def _pot_hidden_from(
    eye: FloatArray, wink_mat_xy_mm: FloatArray, radius_mm: float, pot: FloatArray, top_z_mm: float
) -> float:
    """:func:`pot_hidden_fraction` for a camera centre ``eye`` (3,), mm."""
    # An even grid over the wink's top face (0.5 mm), so each point stands for equal area.
    step = np.arange(-radius_mm, radius_mm + 1e-9, 0.5)
    grid = np.stack(np.meshgrid(step, step), -1).reshape(-1, 2)
    disc = np.asarray(wink_mat_xy_mm, dtype=float) + grid[np.hypot(*grid.T) <= radius_mm]
    # Points along each line of sight at heights up to the rim.
    heights = np.linspace(top_z_mm, POT_HEIGHT_MM, 24)
    t = (heights - top_z_mm) / (eye[2] - top_z_mm)
    xy = disc[:, None, :] + (eye[None, None, :2] - disc[:, None, :]) * t[None, :, None]
    wall_r = POT_BASE_DIAMETER_MM / 2 + (
        (POT_TOP_DIAMETER_MM - POT_BASE_DIAMETER_MM) / 2 * heights / POT_HEIGHT_MM
    )
    blocked = np.any(np.hypot(*(xy - pot).transpose(2, 0, 1)) < wall_r[None, :], axis=1)
    return float(blocked.mean())


def in_pot(
    camera: CameraModel,
    image_xy_px: npt.ArrayLike,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> npt.NDArray[np.bool_]:
    """Whether each image point is seen through the pot's opening.

    Only the line-of-sight test: whether a wink seen there is potted (rule
    8.1) is :func:`lies_in_pot`.
    """
    return pot_opening_distance_mm(camera, image_xy_px, pot_centre_mm) < POT_TOP_DIAMETER_MM / 2


#: Floor of the pot's inside, a little above the mat (mm), and its radius there.
POT_FLOOR_Z_MM = 3.0
POT_FLOOR_RADIUS_MM = 17.0
#: The pot's wall: the opening's inner radius at the rim, mm.
POT_OPENING_RADIUS_MM = POT_TOP_DIAMETER_MM / 2 - 2.0
#: Highest a potted wink's top face can plausibly lie in the pot, mm: about a
#: dozen winks stacked on its floor (3 mm up). A wink beside the pot whose
#: centre is seen through the opening (the rim hides it from a tilted camera)
#: would have to lie higher than this to fit inside.
POT_STACK_MAX_Z_MM = 20.0
#: Share of a wink's radius that must fit inside the pot's wall round its
#: centre: a potted wink may be tilted or lean up the wall, so not all of it.
POT_FIT_RADIUS_SHARE = 0.5
#: A wink seen on the mat closer to the pot than touching its base by more
#: than this (mm, several times a centre's error) cannot be lying on the mat.
POT_BASE_CLEARANCE_MM = 3.0
#: A fit height within this of :data:`POT_STACK_MAX_Z_MM` is a close call.
POT_FIT_MARGIN_MM = 8.0


def _sight_lines_mm(
    camera: CameraModel, image_xy_px: FloatArray, pot_centre_mm: Sequence[float]
) -> tuple[FloatArray, FloatArray]:
    """Where each image point's line of sight crosses the pot's floor and rim planes.

    Plan positions relative to the pot's axis, (N, 2) each; the line is
    straight, so its plan position at any other height is linear in height.
    """
    centre = np.asarray(pot_centre_mm, dtype=float)
    floor = camera.image_to_mat(image_xy_px, POT_FLOOR_Z_MM) - centre
    rim = camera.image_to_mat(image_xy_px, POT_HEIGHT_MM) - centre
    return floor, rim


def _fit_height_mm(floor: FloatArray, rim: FloatArray, radius: FloatArray) -> FloatArray:
    """:func:`pot_fit_height_mm` from the sight lines' floor and rim crossings."""
    heights = np.arange(POT_FLOOR_Z_MM, POT_HEIGHT_MM + 1e-9, 0.5)
    share = (heights - POT_FLOOR_Z_MM) / (POT_HEIGHT_MM - POT_FLOOR_Z_MM)
    xy = floor[:, None, :] + (rim - floor)[:, None, :] * share[None, :, None]
    wall = POT_FLOOR_RADIUS_MM + (POT_OPENING_RADIUS_MM - POT_FLOOR_RADIUS_MM) * share
    fits = np.hypot(xy[..., 0], xy[..., 1]) + POT_FIT_RADIUS_SHARE * radius[:, None] <= wall
    first = np.argmax(fits, axis=1)
    return np.where(fits.any(axis=1), heights[first], np.inf)


def pot_fit_height_mm(
    camera: CameraModel,
    image_xy_px: npt.ArrayLike,
    radius_mm: npt.ArrayLike,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> FloatArray:
    """Lowest height at which a wink seen at each image point would fit inside the pot, mm.

    Along the line of sight through the image point, the wink's centre must
    lie inside the pot's inner wall with :data:`POT_FIT_RADIUS_SHARE` of its
    radius to spare. A potted wink fits at its own height (3 mm up on the
    floor, a little more when stacked); a wink on the mat against the pot's
    far side, whose centre the camera sees through the opening, fits only
    high up, if at all.

    Parameters
    ----------
    camera : CameraModel
    image_xy_px : (N, 2) array_like
    radius_mm : float or (N,) array_like
    pot_centre_mm : (2,) array_like

    Returns
    -------
    (N,) ndarray
        Between the floor (3 mm) and the rim (38 mm); ``inf`` where it fits
        nowhere or the line of sight misses the opening.
    """
    return pot_reading(camera, image_xy_px, radius_mm, pot_centre_mm).fit_height_mm


@dataclass(frozen=True)
class PotReading:
    """What the camera's lines of sight say about winks seen near the pot.

    Parameters
    ----------
    rim_distance_mm : (N,) ndarray
        How far from the pot's axis each line of sight crosses the rim's
        plane (:func:`pot_opening_distance_mm`).
    fit_height_mm : (N,) ndarray
        :func:`pot_fit_height_mm` (``inf`` for lines of sight that miss the opening).
    potted : (N,) bool ndarray
        :func:`lies_in_pot`.
    """

    rim_distance_mm: FloatArray
    fit_height_mm: FloatArray
    potted: npt.NDArray[np.bool_]


def pot_reading(
    camera: CameraModel,
    image_xy_px: npt.ArrayLike,
    radius_mm: npt.ArrayLike,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> PotReading:
    """Rim distance, fit height and potted or not for winks seen at image points.

    See :func:`lies_in_pot` for the rule; this returns the numbers behind it
    too, from one back-projection of the points.
    """
    pts = np.atleast_2d(np.asarray(image_xy_px, dtype=float)).reshape(-1, 2)
    radius = np.broadcast_to(np.asarray(radius_mm, dtype=float), (len(pts),))
    if len(pts) == 0:
        return PotReading(np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool))
    floor, rim = _sight_lines_mm(camera, pts, pot_centre_mm)
    rim_distance = np.hypot(*rim.T)
    opening = rim_distance < POT_TOP_DIAMETER_MM / 2
    # Only a line of sight through the opening can reach inside the pot.
    fit = np.full(len(pts), np.inf)
    if opening.any():
        fit[opening] = _fit_height_mm(floor[opening], rim[opening], radius[opening])
    # Where a wink flat on the mat (top face a wink's thickness up) would be.
    share = (WINK_THICKNESS_MM - POT_FLOOR_Z_MM) / (POT_HEIGHT_MM - POT_FLOOR_Z_MM)
    on_mat = floor + (rim - floor) * share
    into_base = np.hypot(*on_mat.T) < _nearest_on_mat_mm(radius)
    # A centre seen deep inside the opening cannot be a wink on the rim: if it
    # does not fit inside either, it is a wink behind the pot fitted from the
    # sliver in view.
    on_rim = into_base & (rim_distance > POT_TOP_DIAMETER_MM / 2 - radius / 2)
    potted = opening & ((fit <= POT_STACK_MAX_Z_MM) | on_rim)
    return PotReading(rim_distance, fit, np.asarray(potted, dtype=bool))


def _nearest_on_mat_mm(radius_mm: npt.ArrayLike) -> FloatArray:
    """How near the pot's axis a wink of ``radius_mm`` lying on the mat can have its centre, mm.

    Rule 2.4: beside the 38 mm base, at least its radius out, less the
    :data:`POT_BASE_CLEARANCE_MM` a lean on the wall allows.
    """
    return np.asarray(POT_BASE_DIAMETER_MM / 2 + np.asarray(radius_mm) - POT_BASE_CLEARANCE_MM)


def _from_pot_axis_mm(mat_xy_mm: npt.ArrayLike, pot_centre_mm: Sequence[float]) -> FloatArray:
    """(N,) plan distance of each of the (N, 2) centres from the pot's axis, mm."""
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float)).reshape(-1, 2)
    return np.asarray(np.hypot(*(pts - np.asarray(pot_centre_mm, dtype=float)).T))


def stands_in_pot_foot(
    mat_xy_mm: npt.ArrayLike, pot_centre_mm: Sequence[float] = (0.0, 0.0)
) -> npt.NDArray[np.bool_]:
    """Whether each plan centre lies inside the pot's foot, where no wink can lie on the mat.

    Rule 2.4: the pot's base is 38 mm across. A wink lying on the mat beside
    the pot keeps its centre at least its own radius (8 or 11 mm) outside
    the base, and one leaning on the pot's wall at most a few millimetres
    less; a centre inside the base itself belongs to a wink in the pot (see
    :func:`lies_in_pot`) or to no wink at all.

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
        Plan centres, taken as lying on the mat.
    pot_centre_mm : (2,) array_like

    Returns
    -------
    (N,) bool ndarray
    """
    distance = _from_pot_axis_mm(mat_xy_mm, pot_centre_mm)
    return np.asarray(distance < POT_BASE_DIAMETER_MM / 2, dtype=bool)


def beside_pot_foot(
    mat_xy_mm: npt.ArrayLike, pot_centre_mm: Sequence[float] = (0.0, 0.0)
) -> npt.NDArray[np.bool_]:
    """Whether each plan centre lies off the pot's foot but nearer than any wink beside it can.

    Rule 2.4: the pot's base is 38 mm across. A wink lying on the mat beside
    the pot keeps its centre at least its own radius outside the base, and
    one leaning on the pot's wall at most :data:`POT_BASE_CLEARANCE_MM`
    less (as :func:`pot_reading` allows). The smaller radius (8 mm) is
    taken, since a detection's size may be misread: no wink on the mat has
    its centre within 24 mm of the pot's axis.

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
        Plan centres, taken as lying on the mat.
    pot_centre_mm : (2,) array_like

    Returns
    -------
    (N,) bool ndarray
    """
    distance = _from_pot_axis_mm(mat_xy_mm, pot_centre_mm)
    reach = _nearest_on_mat_mm(SMALL_WINK_RADIUS_MM)
    return np.asarray((distance >= POT_BASE_DIAMETER_MM / 2) & (distance < reach), dtype=bool)


def lies_in_pot(
    camera: CameraModel,
    image_xy_px: npt.ArrayLike,
    radius_mm: npt.ArrayLike,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> npt.NDArray[np.bool_]:
    """Whether each wink seen at an image point is in the pot (rule 8.1).

    Seen through the opening (:func:`in_pot`) is not enough: from a tilted
    camera the centre of a wink lying against the pot's far side can be seen
    through the opening too (the wall hides the wink's near part). A potted
    wink must also fit inside the pot no higher than a plausible stack
    (:func:`pot_fit_height_mm`, :data:`POT_STACK_MAX_Z_MM`), or else rest on
    the pot's rim, which rule 8.1.2 counts as potted: its centre seen over the
    rim (within half its radius of the rim's edge) where a wink flat on the
    mat would cut into the pot's base.
    """
    return pot_reading(camera, image_xy_px, radius_mm, pot_centre_mm).potted


def own_unplayed_triangle(
    mat_xy_mm: npt.ArrayLike,
    colours: Sequence[Colour],
    corners_mm: Mapping[Colour, Sequence[float]] = DEFAULT_CORNERS_MM,
) -> FloatArray:
    """How far each wink's centre lies beyond its own colour's baseline, mm.

    Positive means inside the triangle that holds that colour's unplayed
    winks (rules 3, 5.2).
    """
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float)).reshape(-1, 2)
    if len(colours) != len(pts):
        raise ValueError(f"{len(pts)} winks but {len(colours)} colours: give one colour a wink")
    if len(pts) == 0:
        return np.zeros(0)
    # Each wink's unit vector towards its own corner, as beyond_baseline_mm.
    towards = {c: np.asarray(corners_mm[c], dtype=float) for c in set(map(Colour, colours))}
    towards = {c: d / np.hypot(*d) for c, d in towards.items()}
    d = np.array([towards[Colour(c)] for c in colours])
    return np.asarray(pts[:, 0] * d[:, 0] + pts[:, 1] * d[:, 1] - BASELINE_DISTANCE_MM, float)


def behind_baselines(
    mat_xy_mm: npt.ArrayLike,
    corners_mm: Mapping[Colour, Sequence[float]] = DEFAULT_CORNERS_MM,
) -> dict[Colour, npt.NDArray[np.bool_]]:
    """For each colour, whether each point lies behind that colour's baseline (rule 3).

    Parameters
    ----------
    mat_xy_mm : (n, 2) array_like
    corners_mm : mapping of Colour to (2,) array_like

    Returns
    -------
    dict of Colour to (n,) bool ndarray
    """
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float)).reshape(-1, 2)
    return {
        colour: own_unplayed_triangle(pts, [colour] * len(pts), corners_mm) > 0 for colour in Colour
    }


@dataclass(frozen=True)
class PottedInference:
    """How many of one colour's winks are in the pot, and how that was found.

    Parameters
    ----------
    colour : Colour
    seen_in_pot : int
        Potted winks the camera saw.
    inferred : int
        Potted winks added because six of the colour (rule 2.1.1) minus the
        ones seen elsewhere leaves them unaccounted for.
    large_inferred, small_inferred : int
        The inferred winks by size, from the sizes still missing.
    note : str
        The inference in words, for the output ('' when nothing was inferred).
    """

    colour: Colour
    seen_in_pot: int
    inferred: int
    large_inferred: int
    small_inferred: int
    note: str

    @property
    def potted(self) -> int:
        """All potted winks of the colour, seen and inferred."""
        return self.seen_in_pot + self.inferred


def infer_potted(
    colour: Colour,
    seen_sizes: Sequence[WinkSize],
    seen_in_pot: int,
    *,
    hidden_area: bool = False,
    behind_pot: bool = False,
) -> PottedInference:
    """Infer unseen potted winks: six of a colour minus those seen.

    Parameters
    ----------
    colour : Colour
    seen_sizes : sequence of WinkSize
        Sizes of every wink of the colour seen anywhere, the pot included.
    seen_in_pot : int
        How many of those were seen in the pot.
    hidden_area : bool
        True when part of the mat is hidden; the note then says the missing
        winks may be there rather than in the pot.
    behind_pot : bool
        True when the pot hides most of a wink lying against it from this
        camera (see :func:`hidden_behind_pot_fraction`); the note says so.
    """
    large_missing = max(
        0, LARGE_WINKS_PER_COLOUR - sum(1 for s in seen_sizes if s is WinkSize.LARGE)
    )
    small_missing = max(
        0, SMALL_WINKS_PER_COLOUR - sum(1 for s in seen_sizes if s is WinkSize.SMALL)
    )
    missing = max(0, WINKS_PER_COLOUR - len(seen_sizes))
    # Sizes mislabelled in the seen winks can make the two disagree: trust the total.
    while large_missing + small_missing > missing:
        if small_missing > 0:
            small_missing -= 1
        else:
            large_missing -= 1
    note = ""
    if missing:
        seen_elsewhere = len(seen_sizes) - seen_in_pot
        note = (
            f"{colour.value}: {missing} potted wink(s) inferred, not seen: "
            f"6 {colour.value} minus {seen_elsewhere} seen elsewhere"
            + (f" and {seen_in_pot} seen in the pot" if seen_in_pot else "")
        )
        if hidden_area:
            note += "; part of the mat is hidden, so they may be there instead"
        if behind_pot:
            note += (
                "; the pot hides the mat just behind it from this camera, so one may "
                "lie there instead"
            )
    return PottedInference(
        colour=colour,
        seen_in_pot=seen_in_pot,
        inferred=missing,
        large_inferred=large_missing,
        small_inferred=small_missing,
        note=note,
    )


def tiddlies_of(board: Board) -> dict[Colour, int]:
    """Rule 19.1 tiddlies per colour: 3 per potted wink, 1 per free wink.

    Unplayed, squopped and off winks score nothing.
    """
    out = {}
    for colour in Colour:
        out[colour] = TIDDLIES_POTTED * board.count(
            colour, WinkStatus.POTTED
        ) + TIDDLIES_FREE * board.count(colour, WinkStatus.FREE)
    return out


#: A wink against the pot more hidden than this may go unseen: the detector
#: fits a wink beside the pot from the part in view but needs at least a
#: fifth of its rim clear of the pot (``vision.detect.MIN_ARC_BY_POT``); it
#: has found winks up to 72 % hidden on the benchmark scenes, none beyond.
BEHIND_POT_HIDDEN_FRACTION = 0.75

#: Colour distance (Lab units, lightness counted half) within which a pixel in
#: the pot's opening counts as a wink colour.
POT_COLOUR_DISTANCE = 22.0
#: Share of a small wink's image area that must show a colour in the opening
#: before that colour counts as present in the pot.
POT_COLOUR_MIN_SHARE = 0.25
#: The pot's floor must be this visible through the opening for "no colour
#: seen in the pot" to mean anything.
POT_FLOOR_VISIBLE_MIN = 0.6


#: Typical 8-bit Lab colour of each wink colour (medians over the shared
#: scenes and the sample images), used when a frame has no wink of a colour
#: to learn it from.
TYPICAL_WINK_LAB: Mapping[Colour, tuple[float, float, float]] = {
    Colour.BLUE: (54.0, 140.0, 91.0),
    Colour.GREEN: (93.0, 96.0, 154.0),
    Colour.RED: (92.0, 168.0, 155.0),
    Colour.YELLOW: (150.0, 124.0, 181.0),
}


#: A pot's wall this much darker than the felt round it (8-bit Lab lightness,
#: as a share of the felt's) hides what lies in the pot: an opaque dark pot.
#: (Generated black pots: 0.03-0.09 of the felt; translucent ones, dark as
#: they look from the side, 0.26 and up.)
POT_WALL_DARK_SHARE = 0.15
#: A wall colour this near a wink colour (Lab, lightness counted half, as
#: :data:`POT_COLOUR_DISTANCE`) is a translucent pot's tint that can pass
#: for a wink of that colour (generated blue pots: 18 from typical blue).
POT_WALL_TINT_DISTANCE = 30.0


@dataclass(frozen=True)
class PotWall:
    """What the pot's wall looks like in one frame, beside the felt round it.

    Attributes
    ----------
    wall_lab, felt_lab : (3,) ndarray
        Median 8-bit Lab colour of the pot's side (its silhouette less the
        opening) and of the felt within 70 mm of the pot's axis.
    """

    wall_lab: FloatArray
    felt_lab: FloatArray

    @property
    def dark(self) -> bool:
        """Whether the wall is far darker than the felt: an opaque dark pot."""
        return bool(self.wall_lab[0] < POT_WALL_DARK_SHARE * self.felt_lab[0])

    def tinted_like(self, colour: Colour) -> bool:
        """Whether the wall's own tint could pass for a wink of ``colour``.

        The wall's colour near that colour's, where the felt's is not: a
        clear pot on green felt looks green, the felt seen through it.
        """
        weights = np.array([0.5, 1.0, 1.0])
        typical = np.asarray(TYPICAL_WINK_LAB[colour], float)

        def near(lab: FloatArray) -> bool:
            return bool(np.linalg.norm((lab - typical) * weights) < POT_WALL_TINT_DISTANCE)

        return near(self.wall_lab) and not near(self.felt_lab)


def pot_wall(
    image_bgr: npt.NDArray[np.uint8],
    camera: CameraModel,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> PotWall | None:
    """The pot's wall and the felt round it, as this frame shows them, or None.

    None when the pot's side or the felt round it is out of the frame or
    too small to sample (a few pixels).
    """
    centre = np.asarray(pot_centre_mm, dtype=float)
    angles = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], 1)

    def outline(radius_mm: float, z_mm: float) -> npt.NDArray[np.int32]:
        points = np.hstack([centre + radius_mm * ring, np.full((len(ring), 1), z_mm)])
        return np.asarray(np.round(camera.mat_to_image(points)), dtype=np.int32)

    h, w = image_bgr.shape[:2]
    base = outline(POT_BASE_DIAMETER_MM / 2, 0.0)
    rim = outline(POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM)
    around = outline(70.0, 0.0)
    x0, y0 = np.maximum(around.min(axis=0) - 2, 0)
    x1, y1 = np.minimum(around.max(axis=0) + 3, [w, h])
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    shift = np.array([x0, y0], dtype=np.int32)
    size = (int(y1 - y0), int(x1 - x0))
    body, opening, near = (np.zeros(size, np.uint8) for _ in range(3))
    cv2.fillConvexPoly(body, cv2.convexHull(np.vstack([base, rim]) - shift), 1)
    cv2.fillConvexPoly(opening, rim - shift, 1)
    cv2.fillConvexPoly(near, around - shift, 1)
    # Clear of the outlines' blur on each side.
    kernel = np.ones((5, 5), np.uint8)
    side = cv2.erode(body, kernel) & ~cv2.dilate(opening, kernel)
    felt = near & ~cv2.dilate(body, np.ones((15, 15), np.uint8))
    if int(side.sum()) < 20 or int(felt.sum()) < 20:
        return None
    lab = cv2.cvtColor(np.ascontiguousarray(image_bgr[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB)
    return PotWall(
        wall_lab=np.median(lab[side > 0].astype(float), axis=0),
        felt_lab=np.median(lab[felt > 0].astype(float), axis=0),
    )


def pot_floor_seen_px(
    camera: CameraModel,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
    radii_mm: npt.ArrayLike | None = None,
) -> tuple[FloatArray, float]:
    """The pot's floor (rule 2.4) as the camera sees it through the opening.

    Points of the floor (:data:`POT_FLOOR_Z_MM` up) on rings of ``radii_mm``
    (default four, out to :data:`POT_FLOOR_RADIUS_MM`), 48 to a ring, whose
    line of sight crosses the rim plane inside the opening and that fall
    inside the frame. From overhead nearly all; from a camera far off
    vertical the near wall hides most of them.

    Returns
    -------
    image_xy_px : (k, 2) ndarray
        The points seen.
    fraction : float
        The share of all the points that is seen, 0-1.
    """
    centre = np.asarray(pot_centre_mm, dtype=float)
    angles = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], 1)
    radii = (
        np.linspace(0.0, POT_FLOOR_RADIUS_MM, 5)[1:]
        if radii_mm is None
        else np.asarray(radii_mm, dtype=float)
    )
    floor = np.vstack([centre + r * ring for r in radii])
    floor_px = camera.mat_to_image(np.hstack([floor, np.full((len(floor), 1), POT_FLOOR_Z_MM)]))
    seen = pot_opening_distance_mm(camera, floor_px, pot_centre_mm) < POT_OPENING_RADIUS_MM
    w, h = camera.image_size_wh
    seen &= np.all((floor_px >= 0) & (floor_px < [w - 1, h - 1]), axis=1)
    return np.asarray(floor_px[seen], dtype=float), float(np.mean(seen))


def pot_floor_seen_fraction(
    camera: CameraModel, pot_centre_mm: Sequence[float] = (0.0, 0.0)
) -> float:
    """How much of the pot's floor the camera sees through the opening, 0-1 (see
    :func:`pot_floor_seen_px`)."""
    return pot_floor_seen_px(camera, pot_centre_mm)[1]


def pot_colours_seen(
    image_bgr: npt.NDArray[np.uint8],
    camera: CameraModel,
    colour_lab: Mapping[Colour, npt.ArrayLike],
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> dict[Colour, bool] | None:
    """Which wink colours show through the pot's opening.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    camera : CameraModel
    colour_lab : mapping of Colour to (3,) array_like
        The 8-bit Lab colour of each wink colour in this frame; colours
        missing here use :data:`TYPICAL_WINK_LAB`.
    pot_centre_mm : (2,) array_like

    Returns
    -------
    dict of Colour to bool, or None
        None when the camera cannot see enough of the pot's floor (a steep
        view, the pot out of frame) to say a colour is absent.
    """
    centre = np.asarray(pot_centre_mm, dtype=float)
    angles = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], 1)
    if pot_floor_seen_fraction(camera, pot_centre_mm) < POT_FLOOR_VISIBLE_MIN:
        return None
    h, w = image_bgr.shape[:2]
    rim = np.hstack([centre + POT_OPENING_RADIUS_MM * ring, np.full((48, 1), POT_HEIGHT_MM)])
    rim_px = camera.mat_to_image(rim)
    x0, y0 = np.floor(rim_px.min(axis=0)).astype(int)
    x1, y1 = np.ceil(rim_px.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [np.round(rim_px - [x0, y0]).astype(np.int32)], 1)
    lab = cv2.cvtColor(image_bgr[y0:y1, x0:x1], cv2.COLOR_BGR2LAB).astype(float)[mask > 0]
    if len(lab) == 0:
        return None
    # Each colour is matched against both this frame's colour (learned on the
    # mat) and the typical one: inside the pot a wink lies in the pot's own
    # shadow and can look more like the typical colour than like its lit
    # siblings on the mat, and calling a pot empty that holds winks would
    # drop their potted tiddlies.
    colours = [*Colour, *Colour]
    weights = np.array([0.5, 1.0, 1.0])
    refs = np.array(
        [np.asarray(colour_lab.get(c, TYPICAL_WINK_LAB[c]), float) for c in Colour]
        + [np.asarray(TYPICAL_WINK_LAB[c], float) for c in Colour]
    )
    # Squared distances, one channel plane at a time (numpy reduces a
    # trailing axis of three slowly).
    dist2 = sum(((lab[:, ch, None] - refs[None, :, ch]) * weights[ch]) ** 2 for ch in range(3))
    nearest = np.argmin(dist2, axis=1)
    close = dist2[np.arange(len(lab)), nearest] < POT_COLOUR_DISTANCE**2
    mm_per_px = camera.mm_per_px_at([centre[0], centre[1], POT_HEIGHT_MM / 2])
    small_wink_px = np.pi * (SMALL_WINK_RADIUS_MM / mm_per_px) ** 2
    share = {c: 0 for c in Colour}
    for k, c in enumerate(colours):
        share[c] += int(np.sum(close & (nearest == k)))
    return {c: share[c] >= POT_COLOUR_MIN_SHARE * small_wink_px for c in Colour}


#: The mat's corners in clockwise order seen from above (x right, y up).
CLOCKWISE_CORNERS_MM: tuple[tuple[float, float], ...] = (
    (-HALF_LENGTH_MM, HALF_WIDTH_MM),
    (HALF_LENGTH_MM, HALF_WIDTH_MM),
    (HALF_LENGTH_MM, -HALF_WIDTH_MM),
    (-HALF_LENGTH_MM, -HALF_WIDTH_MM),
)
#: The four corner layouts rule 5.2 allows: blue, green, red, yellow clockwise
#: from each corner in turn.
CLOCKWISE_LAYOUTS: tuple[dict[Colour, tuple[float, float]], ...] = tuple(
    {c: CLOCKWISE_CORNERS_MM[(start + k) % 4] for k, c in enumerate(Colour)} for start in range(4)
)
#: How many more unplayed winks the best corner layout must explain than the
#: next best before it is trusted.
LAYOUT_MIN_LEAD = 2


def corners_from_unplayed(
    mat_xy_mm: npt.ArrayLike, colours: Sequence[Colour]
) -> dict[Colour, tuple[float, float]] | None:
    """Which corner is whose, from the winks lying behind the baselines.

    Rule 5.2 puts the colours clockwise blue, green, red, yellow, so there
    are four possible layouts; the one that puts the most winks behind their
    own colour's baseline wins, if it leads the next by ``LAYOUT_MIN_LEAD``.

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
        Plan-view winks' centres.
    colours : sequence of Colour

    Returns
    -------
    dict of Colour to (x, y), or None
        None when the winks do not settle it.
    """
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float)).reshape(-1, 2)
    votes = [
        int(np.sum(own_unplayed_triangle(pts, colours, layout) > 0)) for layout in CLOCKWISE_LAYOUTS
    ]
    ranked = sorted(range(4), key=lambda k: -votes[k])
    if votes[ranked[0]] - votes[ranked[1]] < LAYOUT_MIN_LEAD:
        return None
    return dict(CLOCKWISE_LAYOUTS[ranked[0]])


@dataclass(frozen=True)
class UnplayedReading:
    """Each wink's depth behind its own baseline, and whether the corner layout is in doubt.

    Parameters
    ----------
    beyond_own_baseline_mm : (N,) ndarray
        As :func:`own_unplayed_triangle`, under the layout used (the given
        one unless another puts more winks behind their own baseline).
    doubtful : (N,) bool ndarray
        Winks whose unplayed-or-not depends on which of the layouts the
        winks support about as well is right.
    note : str
        Why the given layout was set aside ('' when it was not).
    """

    beyond_own_baseline_mm: FloatArray
    doubtful: npt.NDArray[np.bool_]
    note: str


def read_unplayed(
    mat_xy_mm: npt.ArrayLike,
    colours: Sequence[Colour],
    corners_mm: Mapping[Colour, Sequence[float]],
    candidates: npt.ArrayLike | None = None,
    *,
    layout_read: bool = False,
) -> UnplayedReading:
    """Which winks lie behind their own baseline, checked against the other corner layouts.

    Rule 5.2 allows four layouts (clockwise blue, green, red, yellow from any
    corner), and a calibration that could not read the corner colours hands
    on a default one. Each wink behind a baseline is unplayed under exactly
    one layout, so the layouts are scored by how many winks they put behind
    their own baseline (as :func:`corners_from_unplayed` does).

    * The given layout is kept unless another scores more; then the best one
      is used, and any layout within ``LAYOUT_MIN_LEAD - 1`` of it (the given
      one included) is a rival.
    * When the given layout is kept, only layouts scoring as much are rivals.

    A wink unplayed under the layout used or a rival but not under all of
    them is doubtful.

    Parameters
    ----------
    mat_xy_mm : (N, 2) array_like
    colours : sequence of Colour
    corners_mm : mapping of Colour to (2,) array_like
        The given layout.
    candidates : (N,) bool array_like, optional
        Winks that may be unplayed (not potted, not off, not on top of
        another); default all.
    layout_read : bool
        The given layout was read (by the calibration from the winks in the
        corners at the start, or given by the user), not a default: it is
        used as it is. Late in a game a few played winks can lie in other
        corners, and they must not outvote what was seen.

    Returns
    -------
    UnplayedReading
    """
    pts = np.atleast_2d(np.asarray(mat_xy_mm, dtype=float)).reshape(-1, 2)
    n = len(pts)
    if n == 0:
        return UnplayedReading(np.zeros(0), np.zeros(0, bool), "")
    may = np.ones(n, bool) if candidates is None else np.asarray(candidates, dtype=bool)
    given = own_unplayed_triangle(pts, colours, corners_mm)
    if layout_read:
        return UnplayedReading(np.asarray(given, dtype=float), np.zeros(n, bool), "")
    others = []
    for layout in CLOCKWISE_LAYOUTS:
        depth = own_unplayed_triangle(pts, colours, layout)
        if not np.array_equal(depth > 0, given > 0):
            others.append(depth)
    given_votes = int(np.sum((given > 0) & may))
    votes = [int(np.sum((d > 0) & may)) for d in others]
    best = int(np.argmax(votes)) if votes else -1
    if best >= 0 and votes[best] > given_votes:
        used, used_votes = others[best], votes[best]
        close = used_votes - (LAYOUT_MIN_LEAD - 1)
        rivals = [d for k, d in enumerate(others) if k != best and votes[k] >= close]
        rivals += [given] if given_votes >= close else []
        note = (
            f"the corner colours taken from the calibration put {given_votes} wink(s) "
            f"behind their own baseline, another clockwise layout (rule 5.2) "
            f"{used_votes}: that one is used"
        )
    else:
        used, used_votes, note = given, given_votes, ""
        rivals = [d for d, v in zip(others, votes, strict=True) if v >= used_votes]
    unplayed = np.array([(d > 0) & may for d in [used, *rivals]])
    doubtful = unplayed.any(axis=0) & ~unplayed.all(axis=0)
    return UnplayedReading(np.asarray(used, dtype=float), doubtful, note)


@dataclass(frozen=True)
class ColourBeside:
    """A colour seen beside one wink where no wink of that colour was found.

    Parameters
    ----------
    area_mm2 : float
        Its plan area beside the wink, mm^2 (0 when none).
    wink_index : int
        Which wink (an index into the winks given), -1 when none.
    """

    area_mm2: float
    wink_index: int


#: The rings searched round each wink for another colour peeking out: this
#: far beyond its rim, mm (the blur of its own rim, about a pixel, lies
#: nearer; a small wink under a large one shows a crescent up to 6-7 mm wide).
PEEK_RING_MM = (1.5, 7.0)
#: Ring samples: angles round a wink, and the radial step, mm (about one a
#: pixel of an overhead 1080p frame, 1.5 mm across).
_PEEK_ANGLES = 36
_PEEK_STEP_MM = 1.5
#: Samples this close to any found wink's rim belong to that wink's blur, mm.
PEEK_CLEAR_OF_WINKS_MM = 1.5
#: A colour's own winks explain its colour this far beyond their rims (a
#: centre or a size class a little off), mm.
PEEK_CLEAR_OF_OWN_MM = 3.0
#: Samples the pot covers in the image (its wall, the winks inside it), with
#: this margin round its base and rim, or this near the mat's edge (the
#: table) are not looked at, mm.
PEEK_POT_MARGIN_MM = 3.0
PEEK_EDGE_CLEAR_MM = 3.0
#: Lab distance (lightness counted half) within which a sample is of a colour.
PEEK_COLOUR_DISTANCE = 20.0
#: A colour within this Lab distance of the felt (lightness counted half) is
#: not looked for: the felt's own shading and shadows by piles pass for it
#: (green winks on green felt measure 15-24 from it, other colours 50-100).
PEEK_FELT_CONTRAST = 30.0
#: A sharpened frame rings round a wink with felt pushed away from the
#: wink's colour, up to this fraction of their difference (a blue wink on
#: green felt gets a halo of greener felt).
PEEK_HALO = 0.6


def colour_beside_winks_mm2(
    image_bgr: npt.NDArray[np.uint8],
    camera: CameraModel,
    mat_xy_mm: npt.ArrayLike,
    radius_mm: npt.ArrayLike,
    colours: Sequence[Colour],
    colour_lab: Mapping[Colour, npt.ArrayLike],
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
    *,
    wanted: Collection[Colour] | None = None,
) -> dict[Colour, ColourBeside]:
    """How much of each colour shows beside a wink of another colour, unexplained by any wink found.

    A wink lying mostly under another shows only a crescent beyond the upper
    wink's rim, which the detector can miss; its colour is then still in
    view there. This samples rings just outside each wink's rim, drops
    samples within :data:`PEEK_CLEAR_OF_WINKS_MM` of any wink's rim, within
    :data:`PEEK_CLEAR_OF_OWN_MM` of a wink of the sample's colour, near the
    pot or the mat's edge, and those nearer the blend of the felt and the
    ringed wink's colour (its blur) than the colour itself.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    camera : CameraModel
    mat_xy_mm : (N, 2) array_like
        Plan centres of the winks on the mat (not the potted ones), mm.
    radius_mm : (N,) array_like
    colours : sequence of Colour
        Each wink's colour.
    colour_lab : mapping of Colour to (3,) array_like
        This frame's 8-bit Lab colour of each wink colour (colours missing
        here are not looked for).
    pot_centre_mm : (2,) array_like
    wanted : collection of Colour, optional
        The colours to look for (all in ``colour_lab`` by default).

    Returns
    -------
    dict of Colour to ColourBeside
        For each colour, the largest area of it beside any one wink of
        another colour, and that wink.
    """
    out = dict.fromkeys(Colour, ColourBeside(0.0, -1))
    centres = np.asarray(mat_xy_mm, dtype=float).reshape(-1, 2)
    radius = np.asarray(radius_mm, dtype=float).reshape(-1)
    n = len(centres)
    looked_for = [c for c in Colour if c in colour_lab and (wanted is None or c in wanted)]
    if n == 0 or not looked_for:
        return out
    angles = np.linspace(0.0, 2 * np.pi, _PEEK_ANGLES, endpoint=False)
    unit = np.stack([np.cos(angles), np.sin(angles)], 1)
    beyond = np.arange(PEEK_RING_MM[0], PEEK_RING_MM[1] + 1e-9, _PEEK_STEP_MM)
    ring_r = radius[:, None] + beyond[None, :]  # (n, k)
    per_wink = len(beyond) * len(angles)
    pts = (centres[:, None, None, :] + ring_r[:, :, None, None] * unit[None, None, :, :]).reshape(
        -1, 2
    )
    owner = np.repeat(np.arange(n), per_wink)
    # Rings round a wink of the only colour looked for cannot show it.
    useful = np.array([any(c is not own for c in looked_for) for own in colours], dtype=bool)
    if not useful.any():
        return out
    # Each sample stands for its share of the ring's area.
    area = np.repeat(2 * np.pi * ring_r / _PEEK_ANGLES * _PEEK_STEP_MM, len(angles), axis=1)
    area = area.reshape(-1)
    # Only winks whose rims come within the rings' reach of a wink's rim can
    # hold its samples: each wink's neighbours (itself first), padded with itself.
    apart = np.hypot(*(centres[:, None, :] - centres[None, :, :]).transpose(2, 0, 1))
    near = apart - radius[None, :] - radius[:, None] < PEEK_RING_MM[1] + PEEK_CLEAR_OF_OWN_MM
    np.fill_diagonal(near, False)
    width = 1 + int(near.sum(axis=1).max())
    neighbours = np.tile(np.arange(n)[:, None], (1, width))
    for k in range(n):
        others = np.flatnonzero(near[k])
        neighbours[k, 1 : 1 + len(others)] = others
    nb = neighbours[owner]  # (m, width)
    gap = np.hypot(*(pts[:, None, :] - centres[nb]).transpose(2, 0, 1)) - radius[nb]
    ok = (gap.min(axis=1) >= PEEK_CLEAR_OF_WINKS_MM) & useful[owner]
    ok &= np.abs(pts[:, 0]) < HALF_LENGTH_MM - PEEK_EDGE_CLEAR_MM
    ok &= np.abs(pts[:, 1]) < HALF_WIDTH_MM - PEEK_EDGE_CLEAR_MM
    if not ok.any():
        return out
    pts, owner, area, gap, nb = pts[ok], owner[ok], area[ok], gap[ok], nb[ok]
    # Each wink's neighbourhood maps to the image as an affine map (the lens
    # bends nothing measurably over 20 mm): three projections a wink, not
    # one a sample.
    top = np.hstack([centres, np.full((n, 1), WINK_THICKNESS_MM)])
    steps = camera.mat_to_image(
        np.vstack([top, top + [1.0, 0.0, 0.0], top + [0.0, 1.0, 0.0]])
    ).reshape(3, n, 2)
    along_x, along_y = steps[1] - steps[0], steps[2] - steps[0]  # px per mm
    dx, dy = (pts - centres[owner]).T
    px = steps[0][owner] + along_x[owner] * dx[:, None] + along_y[owner] * dy[:, None]
    h, w = image_bgr.shape[:2]
    inside = (px[:, 0] >= 0) & (px[:, 0] <= w - 1) & (px[:, 1] >= 0) & (px[:, 1] <= h - 1)
    inside &= ~_in_pot_outline_px(camera, px, pot_centre_mm)
    if not inside.any():
        return out
    owner, area, gap, nb, px = owner[inside], area[inside], gap[inside], nb[inside], px[inside]
    cols = np.round(px[:, 0]).astype(int)
    rows = np.round(px[:, 1]).astype(int)
    lab = cv2.cvtColor(image_bgr[rows, cols][None], cv2.COLOR_BGR2LAB)[0].astype(float)
    weights = np.array([0.5, 1.0, 1.0])
    # Most ring samples are bare felt.
    felt = np.median(lab, axis=0)
    # Weighted Lab as one plane per channel (numpy reduces a trailing axis of
    # three slowly).
    planes = [(lab[:, ch] - felt[ch]) * weights[ch] for ch in range(3)]
    refs = np.array([felt] + [np.asarray(colour_lab[c], float) for c in looked_for])
    refs_w = (refs - felt) * weights  # (1 + colours, 3)
    dist = np.sqrt(sum((planes[ch][:, None] - refs_w[None, :, ch]) ** 2 for ch in range(3)))
    nearest = np.argmin(dist, axis=1)
    # The blur of the ringed wink's rim: a blend of the felt and its colour,
    # or the felt pushed away from it (a sharpened frame's halo).
    colour_of = np.array([list(Colour).index(c) for c in colours], dtype=np.int64)
    wink_ref = np.array([np.asarray(colour_lab.get(c, felt), float) for c in colours])
    axis_w = (wink_ref - felt) * weights  # (n, 3), per wink
    norm2 = np.maximum(np.sum(axis_w**2, axis=1), 1e-9)[owner]
    along = sum(planes[ch] * axis_w[owner, ch] for ch in range(3))
    t = np.clip(along / norm2, -PEEK_HALO, 1.0)
    blend = np.sqrt(sum((planes[ch] - t * axis_w[owner, ch]) ** 2 for ch in range(3)))
    for k, colour in enumerate(looked_for, start=1):
        if float(np.hypot.reduce(refs_w[k])) < PEEK_FELT_CONTRAST:
            continue  # a colour the felt's shadows pass for (green on green felt)
        index = list(Colour).index(colour)
        hit = (nearest == k) & (dist[:, k] < PEEK_COLOUR_DISTANCE) & (dist[:, k] < blend)
        hit &= colour_of[owner] != index
        own_gap = np.where(colour_of[nb] == index, gap, np.inf).min(axis=1)
        hit &= own_gap >= PEEK_CLEAR_OF_OWN_MM
        if hit.any():
            per_wink_area = np.bincount(owner[hit], weights=area[hit], minlength=n)
            best = int(np.argmax(per_wink_area))
            out[colour] = ColourBeside(float(per_wink_area[best]), best)
    return out


def _in_pot_outline_px(
    camera: CameraModel, image_xy_px: FloatArray, pot_centre_mm: Sequence[float]
) -> npt.NDArray[np.bool_]:
    """Whether image points fall on the pot as the camera sees it (base to rim, plus a margin)."""
    angles = np.linspace(0.0, 2 * np.pi, 24, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], 1)
    centre = np.asarray(pot_centre_mm, dtype=float)[:2]
    base = centre + (POT_BASE_DIAMETER_MM / 2 + PEEK_POT_MARGIN_MM) * ring
    rim = centre + (POT_TOP_DIAMETER_MM / 2 + PEEK_POT_MARGIN_MM) * ring
    outline = camera.mat_to_image(
        np.vstack(
            [
                np.hstack([base, np.zeros((24, 1))]),
                np.hstack([rim, np.full((24, 1), POT_HEIGHT_MM)]),
            ]
        )
    )
    hull = cv2.convexHull(outline.astype(np.float32)).reshape(-1, 2).astype(float)
    pts = np.asarray(image_xy_px, dtype=float).reshape(-1, 2)
    lo, hi = hull.min(axis=0), hull.max(axis=0)
    near = np.all((pts >= lo) & (pts <= hi), axis=1)
    out = np.zeros(len(pts), dtype=bool)
    if near.any():
        edge = np.roll(hull, -1, axis=0) - hull
        rel = pts[near][:, None, :] - hull[None, :, :]
        cross = edge[None, :, 0] * rel[:, :, 1] - edge[None, :, 1] * rel[:, :, 0]
        out[near] = np.all(cross >= 0, axis=1) | np.all(cross <= 0, axis=1)
    return out
