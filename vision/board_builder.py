"""Turn one frame's detections into a validated :class:`rules.board.Board`.

The order matters: winks seen through the pot's opening are potted; the rest
take part in the squop analysis (which also corrects raised winks for
parallax); then each wink gets its status, an id such as ``blue-L1``, and the
potted winks nobody could see are inferred from the rule 2.1.1 count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

from calibration.camera import CameraModel
from rules.board import (
    LARGE_WINKS_PER_COLOUR,
    POT_BASE_DIAMETER_MM,
    POT_TOP_DIAMETER_MM,
    SMALL_WINKS_PER_COLOUR,
    WINKS_PER_COLOUR,
    Board,
    Colour,
    Doubt,
    Wink,
    WinkSize,
    WinkStatus,
)
from vision.detections import WinkDetections
from vision.squop import (
    CENTRE_SIGMA_FLOOR_MM,
    K_SIGMA,
    SquopAnalysis,
    analyse_squops,
    colour_references_lab,
    nominal_radius_mm,
    pile_ids,
)
from vision.status import (
    BEHIND_POT_HIDDEN_FRACTION,
    DEFAULT_CORNERS_MM,
    POT_FIT_MARGIN_MM,
    POT_FLOOR_VISIBLE_MIN,
    POT_STACK_MAX_Z_MM,
    SMALL_WINK_RADIUS_MM,
    ColourBeside,
    PottedInference,
    base_z_off_mat_mm,
    behind_baselines,
    beside_pot_foot,
    beyond_mat_edge_mm,
    colour_beside_winks_mm2,
    hidden_behind_pot_fraction,
    infer_potted,
    pot_colours_seen,
    pot_floor_seen_fraction,
    pot_hidden_fraction,
    pot_reading,
    pot_wall,
    read_unplayed,
    stands_in_pot_foot,
    tiddlies_of,
)

FloatArray = npt.NDArray[np.float64]

LARGE_WINK_RADIUS_MM = WinkSize.LARGE.diameter_mm / 2

#: Two detections of one colour centred closer than this, in a colour with
#: more than six, are taken for one wink fitted twice. Over 17 benchmark
#: folders and the shared scenes, every pair of one colour under 8 mm apart
#: in a colour detected seven times was one wink (3 pairs, 5.3-6.8 mm
#: apart), and dropping the least confident instead lost a real wink once
#: (`overhead_03343`); the closest two winks of one colour in their truth
#: were 7.2 mm apart.
FITTED_TWICE_MM = 7.0
#: A previous frame's wink keeps its id when it is seen within this distance.
TRACK_RADIUS_MM = 30.0
#: A free wink showing less of its rim than this, with no wink found near
#: it, may be under a wink the detector missed (see assemble_board).
UNEXPLAINED_RIM_SEEN = 0.9


@dataclass(frozen=True)
class BoardAssembly:
    """A board with the working that produced it.

    Parameters
    ----------
    board : Board
        Validated, with tiddlies (rule 19.1).
    detection_ids : tuple of str
        The wink id given to each detection ('' for a detection dropped).
    squops : SquopAnalysis
        Every pair's call, in indices of the detections given (rows of
        detections dropped by the rule 2.1.1 count are NaN / -1).
    notes : tuple of str
        What was inferred or dropped, in words.
    reviews : tuple of str
        Calls an umpire should check close up.
    """

    board: Board
    detection_ids: tuple[str, ...]
    squops: SquopAnalysis
    notes: tuple[str, ...]
    reviews: tuple[str, ...]


def _with_colours_by_count(
    detections: WinkDetections, candidates: npt.NDArray[np.bool_]
) -> tuple[WinkDetections, list[str]]:
    """The detections, a colour's extra wink recoloured when its hue allows (rule 2.1.1).

    A colour with more than six winks holds at least one that is not its
    own. One whose hue is nearly as close to its runner-up colour (within
    :data:`RECOLOUR_MAX_MARGIN_DEG`), where that colour has fewer than six,
    is most likely that colour's (a green wink in a pile of yellows, its
    colour mixed with theirs): it is recoloured, the least sure first. The
    rest are left to :func:`_fix_counts`, which drops the least confident.
    Only ``candidates`` count.
    """
    runner_up, margin = detections.runner_up_colour, detections.colour_margin_deg
    if runner_up is None or margin is None:
        return detections, []
    colours = np.array(list(detections.colour), dtype=object)
    margin = np.nan_to_num(np.asarray(margin, float), nan=np.inf)
    notes = []
    while True:
        counts = {c: int(np.sum(candidates & (colours == c))) for c in Colour}
        movable = [
            i
            for i in np.flatnonzero(candidates)
            if counts[colours[i]] > WINKS_PER_COLOUR
            and counts[runner_up[i]] < WINKS_PER_COLOUR
            and margin[i] < RECOLOUR_MAX_MARGIN_DEG
        ]
        if not movable:
            break
        i = min(movable, key=lambda k: margin[k])
        notes.append(
            f"{colours[i].value}: {counts[colours[i]]} winks detected, rule 2.1.1 allows 6: "
            f"the one whose hue is nearest {runner_up[i].value} "
            f"({margin[i]:.0f} degrees from a tie) was taken for {runner_up[i].value}"
        )
        colours[i] = runner_up[i]
    if not notes:
        return detections, []
    return replace(detections, colour=colours), notes


#: A wink is recoloured to fix a colour's count only when its hue is at most
#: this much nearer its own colour than the runner-up's, degrees (adjacent
#: wink colours lie 50-90 degrees apart; right detections on the shared
#: scenes came down to 16 degrees).
RECOLOUR_MAX_MARGIN_DEG = 30.0


def _fitted_twice(idx: list[int], mat_xy_mm: FloatArray, confidence: FloatArray) -> set[int]:
    """Of the detections ``idx`` of one colour, the lesser of each pair closer than FITTED_TWICE_MM.

    Parameters
    ----------
    idx : list of int
        Detections of one colour.
    mat_xy_mm : (n, 2) ndarray
        Every detection's plan centre, mat mm.
    confidence : (n,) ndarray
        Every detection's confidence; the less confident of a pair is its second fit.

    Returns
    -------
    set of int
        The second fits, as indices into the detections.
    """
    twice: set[int] = set()
    for a_pos, a in enumerate(idx):
        for b in idx[a_pos + 1 :]:
            if np.hypot(*(mat_xy_mm[a] - mat_xy_mm[b])) < FITTED_TWICE_MM:
                twice.add(b if confidence[b] < confidence[a] else a)
    return twice


#: How much less confident a wink behind another colour's baseline counts
#: when a colour has too many: rule 5.2 starts every wink behind its own,
#: and in another colour's crowded corner the felt between its winks can
#: pass for a wink (found watching games on green felt, confidence 0.44
#: against a real wink's 0.30); a confident wink played there (0.9) still
#: outranks a faint phantom.
ASTRAY_PENALTY = 0.3
#: ... and a wink seen only through the pot's wall (:func:`_through_pot_wall`):
#: a translucent pot's tint over the felt can pass for one (a yellow
#: "wink" in a red pot, confidence 0.44, against a real wink's 0.36 on a
#: development set).
THROUGH_WALL_PENALTY = ASTRAY_PENALTY
#: ... and a faint wink (confidence under :data:`BY_POT_FAINT`) centred this
#: near the pot's axis, mm: where the pot's wall and its shadow's edge pass
#: for a wink's rim (a green "wink" 27 mm from the axis of a blue pot on
#: green felt, confidence 0.30, as confident as the real wink in a crowded
#: corner it displaced, in a generated game). A wink seen clearly against
#: the pot is not one: a real red wink touching it (0.69) had been dropped
#: for a phantom elsewhere (0.59) when every wink by the pot counted less.
BY_POT_MM = 35.0
BY_POT_FAINT = 0.5
BY_POT_PENALTY = ASTRAY_PENALTY


def _behind_another_baseline(
    detections: WinkDetections, corners_mm: Mapping[Colour, Sequence[float]]
) -> npt.NDArray[np.bool_]:
    """Whether each detection lies behind the baseline of a colour not its own (rule 3)."""
    out = np.zeros(len(detections), bool)
    for corner, behind in behind_baselines(detections.mat_xy_mm, corners_mm).items():
        out |= behind & np.array([c is not corner for c in detections.colour], bool)
    return out


#: A previous frame's wink lay at a detection when their centres are this
#: near: the same wink, still or just nudged (a squop presses it), mm.
SAME_PLACE_MM = 8.0
#: The order in which detections give up their size class, by (size the
#: previous board had there, or None; the size they are to take).
_SIZE_KEPT: Mapping[tuple[WinkSize | None, WinkSize], int] = (
    {(target, target): 0 for target in WinkSize}
    | {(None, target): 1 for target in WinkSize}
    | {(other, target): 2 for other in WinkSize for target in WinkSize if other is not target}
)


def _previous_sizes(detections: WinkDetections, previous: Board | None) -> list[WinkSize | None]:
    """The size of the ``previous`` board's wink of the same colour at each detection, if any.

    At most :data:`SAME_PLACE_MM` away, nearest first; None where there is none.
    """
    out: list[WinkSize | None] = [None] * len(detections)
    if previous is None:
        return out
    for i, (xy, colour) in enumerate(zip(detections.mat_xy_mm, detections.colour, strict=True)):
        near = [
            (float(np.hypot(*(np.asarray(w.mat_xy) - xy))), w.size)
            for w in previous.winks
            if w.colour is colour and w.mat_xy is not None
        ]
        near = [d for d in near if d[0] < SAME_PLACE_MM]
        if near:
            out[i] = min(near, key=lambda d: d[0])[1]
    return out


def _fix_counts(
    detections: WinkDetections,
    candidates: npt.NDArray[np.bool_] | None = None,
    corners_mm: Mapping[Colour, Sequence[float]] | None = None,
    through_wall: npt.NDArray[np.bool_] | None = None,
    previous: Board | None = None,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.object_], npt.NDArray[np.bool_], list[str]]:
    """Keep at most six winks per colour, two of them large (rule 2.1.1).

    Only ``candidates`` (all detections by default) take part; the rest are
    not kept. Of too many winks of a colour, one fitted twice goes first,
    then the least confident, a wink behind another colour's baseline (with
    ``corners_mm``) counting :data:`ASTRAY_PENALTY` less confident, and one
    seen only ``through_wall`` of the pot :data:`THROUGH_WALL_PENALTY` less,
    a faint one beside the pot (:data:`BY_POT_MM`) :data:`BY_POT_PENALTY` less.
    A size class over its limit gives up first a detection where the
    ``previous`` board had a wink of the other size (a wink's size does not
    change between frames), then one where it had none. Returns which
    detections to keep, their (possibly corrected) sizes, which sizes were
    corrected, and notes.
    """
    n = len(detections)
    keep = np.ones(n, bool) if candidates is None else np.asarray(candidates, bool).copy()
    sizes = np.array(list(detections.size), dtype=object)
    resized = np.zeros(n, bool)
    notes = []
    conf = np.asarray(detections.confidence, float)
    radius = np.asarray(detections.radius_mm, float)
    # The detector reports the class's nominal radius (8 or 11 mm), so the
    # radius alone cannot say which wink to relabel: the one whose size the
    # image supports least goes first, the radius breaking ties.
    size_conf = (
        np.zeros(n)
        if detections.size_confidence is None
        # NaN where a merged part did not measure it: as unsure as can be.
        else np.nan_to_num(np.asarray(detections.size_confidence, float), nan=0.0)
    )
    mat_xy = np.asarray(detections.mat_xy_mm, float)
    elsewhere = (
        np.zeros(n, bool)
        if corners_mm is None or n == 0
        else _behind_another_baseline(detections, corners_mm)
    )
    walled = np.zeros(n, bool) if through_wall is None else np.asarray(through_wall, bool)
    was = _previous_sizes(detections, previous)
    by_pot = (np.hypot(*(mat_xy - np.asarray(pot_centre_mm, float)).T) < BY_POT_MM) & (
        conf < BY_POT_FAINT
    )
    penalty = (
        ASTRAY_PENALTY * elsewhere
        + THROUGH_WALL_PENALTY * walled
        + BY_POT_PENALTY * (by_pot & ~walled)
    )

    # A size class over its limit gives up first the detection where the
    # previous board had the other size, then the one whose size is least
    # sure, then the one whose fitted radius is closest to the other class.
    def to_small(k: int) -> tuple[int, float, float]:
        return (_SIZE_KEPT[was[k], WinkSize.SMALL], size_conf[k], radius[k])

    def to_large(k: int) -> tuple[int, float, float]:
        return (_SIZE_KEPT[was[k], WinkSize.LARGE], size_conf[k], -radius[k])

    for colour in Colour:
        idx = [i for i in range(n) if detections.colour[i] is colour and keep[i]]
        if len(idx) > WINKS_PER_COLOUR:
            twice = _fitted_twice(idx, mat_xy, conf)
            order = sorted(idx, key=lambda i: (i in twice, -(conf[i] - penalty[i])))
            for i in order[WINKS_PER_COLOUR:]:
                keep[i] = False
            gone = order[WINKS_PER_COLOUR:]
            doubles = sum(i in twice for i in gone)
            astray = sum(i not in twice and bool(elsewhere[i]) for i in gone)
            in_wall = sum(i not in twice and not elsewhere[i] and bool(walled[i]) for i in gone)
            rest = len(gone) - doubles - astray - in_wall
            dropped = [f"the {rest} least confident"] if rest else []
            if in_wall:
                dropped.insert(0, f"{in_wall} seen only through the pot's wall")
            if astray:
                dropped.insert(0, f"{astray} behind another colour's baseline")
            if doubles:
                dropped.insert(
                    0,
                    f"{doubles} of a pair of detections under {FITTED_TWICE_MM:g} mm apart "
                    "(one wink fitted twice)",
                )
            notes.append(
                f"{colour.value}: {len(idx)} winks detected, rule 2.1.1 allows 6: "
                f"dropped {' and '.join(dropped)}"
            )
            idx = order[:WINKS_PER_COLOUR]
        if previous is not None:
            _in_pot_sizes_from_previous(
                colour, idx, sizes, resized, notes, previous, mat_xy, size_conf, pot_centre_mm
            )
        large = [i for i in idx if sizes[i] is WinkSize.LARGE]
        small = [i for i in idx if sizes[i] is WinkSize.SMALL]

        while len(large) > LARGE_WINKS_PER_COLOUR and len(small) < SMALL_WINKS_PER_COLOUR:
            i = min(large, key=to_small)
            large.remove(i)
            small.append(i)
            sizes[i] = WinkSize.SMALL
            resized[i] = True
            notes.append(f"{colour.value}: a third large wink was relabelled small")
        while len(small) > SMALL_WINKS_PER_COLOUR and len(large) < LARGE_WINKS_PER_COLOUR:
            i = min(small, key=to_large)
            small.remove(i)
            large.append(i)
            sizes[i] = WinkSize.LARGE
            resized[i] = True
            notes.append(f"{colour.value}: a fifth small wink was relabelled large")
    return keep, sizes, resized, notes


def _in_pot(mat_xy_mm: FloatArray, pot_centre_mm: Sequence[float]) -> npt.NDArray[np.bool_]:
    """(n,) whether each plan position lies within the pot's foot (a wink seen in the pot)."""
    return np.asarray(
        np.hypot(*(np.asarray(mat_xy_mm, float) - np.asarray(pot_centre_mm, float)).T)
        < POT_BASE_DIAMETER_MM / 2
    )


def _in_pot_sizes_from_previous(
    colour: Colour,
    idx: list[int],
    sizes: npt.NDArray[np.object_],
    resized: npt.NDArray[np.bool_],
    notes: list[str],
    previous: Board,
    mat_xy_mm: FloatArray,
    size_confidence: FloatArray,
    pot_centre_mm: Sequence[float],
) -> None:
    """Rule 8.1.3: a wink seen in the pot is one potted before, and keeps its size.

    The pot's wall hides part of a potted wink, and its size is misread
    (generated game q3634: a potted large green wink read small in the pot,
    which made green's small winks five; the one then relabelled large was
    the small wink just played, which took the potted wink's id and was
    announced knocked out of the pot). Winks seen in the pot take the sizes
    of the ``previous`` board's potted winks of the colour: those surest of
    their size keep it where a potted wink has it, the others take the
    sizes left. ``sizes`` and ``resized`` are changed in place.
    """
    potted = [w.size for w in previous.of_colour(colour) if w.status is WinkStatus.POTTED]
    inside = [
        i for i, here in zip(idx, _in_pot(mat_xy_mm[idx], pot_centre_mm), strict=True) if here
    ]
    if not potted or not inside:
        return
    # Those surest of their size keep it where a potted wink has it.
    left = list(potted)
    unmatched = []
    for i in sorted(inside, key=lambda j: -float(size_confidence[j])):
        if sizes[i] in left:
            left.remove(sizes[i])
        else:
            unmatched.append(i)
    # The sizes left go to those least sure of theirs first.
    for i in sorted(unmatched, key=lambda j: float(size_confidence[j])):
        if not left:
            break
        size = left.pop(0)
        sizes[i] = size
        resized[i] = True
        notes.append(
            f"{colour.value}: a wink seen in the pot was relabelled {size.value}, the size of "
            "the wink potted before (rule 8.1.3)"
        )


#: A detection centred this near the pot's axis, in plan on the mat, is a
#: wink on the pot's floor seen through its wall (a clear pot, from a tilted
#: camera): the floor reaches 17 mm out, and a wink lies on it, raised, so
#: its plan position shifts a few mm outward; the pot's wall itself passes
#: for a wink further out (17.5-19 mm on the development sets), mm.
THROUGH_WALL_MM = 16.0


def _through_pot_wall(
    detections: WinkDetections,
    camera: CameraModel,
    pot_centre_mm: Sequence[float],
    image_bgr: npt.NDArray[np.uint8] | None = None,
) -> npt.NDArray[np.bool_]:
    """Detections of winks on the pot's floor seen through its wall (rule 8.1: potted).

    Centred well inside the pot's foot (:data:`THROUGH_WALL_MM`), where no
    wink on the mat can lie, and not seen through the opening (that is
    :func:`vision.status.pot_reading`'s case). Only with the pot in the
    frame, from a camera that does not see the floor through the opening
    (:data:`vision.status.POT_FLOOR_VISIBLE_MIN`): one that does would see a
    potted wink there, and what lands inside the foot is the pot's dark
    wall and the felt's arc round it, fitted as a rim. Given the image, not
    through a dark (opaque) wall, and not of the colour a tinted wall could
    pass for (:func:`vision.status.pot_wall`).
    """
    none = np.zeros(len(detections), bool)
    if len(detections) == 0:
        return none
    centre = np.asarray(pot_centre_mm, float)
    from_axis = np.hypot(*(np.asarray(detections.mat_xy_mm, float) - centre).T)
    inside = from_axis < THROUGH_WALL_MM
    # The rest is judged only for a frame with a detection inside the foot:
    # the wall's colour costs about a millisecond a frame.
    if not inside.any():
        return none
    centre_px = camera.mat_to_image(np.array([[centre[0], centre[1], 0.0]]))[0]
    frame_w, frame_h = camera.image_size_wh
    if not (0 <= centre_px[0] < frame_w and 0 <= centre_px[1] < frame_h):
        return none
    if pot_floor_seen_fraction(camera, pot_centre_mm) >= POT_FLOOR_VISIBLE_MIN:
        return none
    wall = pot_wall(image_bgr, camera, pot_centre_mm) if image_bgr is not None else None
    if wall is not None and wall.dark:
        return none
    radius = np.asarray(detections.radius_mm, float)
    potted = pot_reading(camera, detections.image_xy_px, radius, pot_centre_mm).potted
    own_tint = np.array(
        [wall is not None and wall.tinted_like(c) for c in detections.colour], dtype=bool
    )
    return np.asarray(inside & ~potted & ~own_tint, dtype=bool)


def _in_pot_foot(
    detections: WinkDetections,
    camera: CameraModel,
    pot_centre_mm: Sequence[float],
    through_wall: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Detections that cannot be winks: centred at the pot's foot, not seen in the pot.

    From a tilted camera the pot's dark side and the felt's arc round its
    foot can pass for a wink's rim, and the lit inside of its wall for a
    wink's colour; such a fit lands where the pot stands
    (:func:`vision.status.stands_in_pot_foot`) or just beside it, nearer than
    any wink on the mat can lie (:func:`vision.status.beside_pot_foot`). A
    wink seen through the opening is left to the potted test, and so is
    one seen ``through_wall`` (:func:`_through_pot_wall`).

    Beside the foot no exception is made for a wink behind the pot, its
    centre seen through the opening: on 17 development and held-out sets
    (about 1,200 frames) every real wink beside the pot, behind it or not,
    was fitted 25.3 mm or more from the axis, and the 5 detections fitted
    19-24 mm out were all phantoms (the lit inside of the pot's wall).
    """
    if len(detections) == 0:
        return np.zeros(0, bool)
    radius = np.asarray(detections.radius_mm, float)
    potted = pot_reading(camera, detections.image_xy_px, radius, pot_centre_mm).potted
    near = stands_in_pot_foot(detections.mat_xy_mm, pot_centre_mm) | beside_pot_foot(
        detections.mat_xy_mm, pot_centre_mm
    )
    return np.asarray(near & ~potted & ~through_wall, dtype=bool)


def _assign_ids(
    colours: Sequence[Colour],
    sizes: Sequence[WinkSize],
    mat_xy_mm: FloatArray,
    status_rank: Sequence[int],
    previous: Board | None,
) -> list[str]:
    """Ids like ``blue-L1``: a previous frame's id for a wink seen near where it was.

    Without a previous board (or for winks it cannot match) ids are handed
    out in a fixed order: by status, then along x, then y, so the same
    board always gets the same ids.
    """
    ids = [""] * len(colours)
    for colour in Colour:
        for size, limit, letter in (
            (WinkSize.LARGE, LARGE_WINKS_PER_COLOUR, "L"),
            (WinkSize.SMALL, SMALL_WINKS_PER_COLOUR, "S"),
        ):
            members = [i for i in range(len(colours)) if colours[i] is colour and sizes[i] is size]
            free_ids = [f"{colour.value}-{letter}{k}" for k in range(1, limit + 1)]
            if previous is not None and members:
                prev = [
                    w
                    for w in previous.winks
                    if w.colour is colour and w.size is size and w.mat_xy is not None
                ]
                if prev:
                    cost = np.array(
                        [
                            [float(np.hypot(*(mat_xy_mm[i] - np.array(w.mat_xy)))) for w in prev]
                            for i in members
                        ]
                    )
                    cost = np.nan_to_num(cost, nan=1e9)
                    rows, cols = linear_sum_assignment(cost)
                    for r, c in zip(rows, cols, strict=True):
                        if cost[r, c] <= TRACK_RADIUS_MM and prev[c].id in free_ids:
                            ids[members[r]] = prev[c].id
                            free_ids.remove(prev[c].id)
            if previous is not None:
                # Potted winks have no place to be tracked by, but a wink
                # potted before is still potted (8.1.3): it keeps its id, so
                # that a wink played later is not taken for it.
                was_potted = [
                    w.id
                    for w in previous.winks
                    if w.colour is colour
                    and w.size is size
                    and w.status is WinkStatus.POTTED
                    and w.id in free_ids
                ]
                potted_now = [
                    i for i in members if not ids[i] and status_rank[i] == _STATUS_RANK_POTTED
                ]
                for i, wid in zip(potted_now, was_potted, strict=False):
                    ids[i] = wid
                    free_ids.remove(wid)
                # The others last, left for potted winks inferred, not seen.
                free_ids.sort(key=lambda wid: wid in was_potted)
            rest = [i for i in members if not ids[i]]
            rest.sort(key=lambda i: (status_rank[i], *np.round(mat_xy_mm[i], 1).tolist()))
            for i, wid in zip(rest, free_ids, strict=False):
                ids[i] = wid
    return ids


_STATUS_RANK_POTTED = 0
_STATUS_RANK = {
    WinkStatus.POTTED: _STATUS_RANK_POTTED,
    WinkStatus.FREE: 1,
    WinkStatus.SQUOPPED: 2,
    WinkStatus.UNPLAYED: 3,
    WinkStatus.OFF: 4,
}


def assemble_board(
    detections: WinkDetections,
    camera: CameraModel,
    image_bgr: npt.NDArray[np.uint8] | None = None,
    *,
    corners_mm: Mapping[Colour, Sequence[float]] | None = None,
    corners_read: bool = False,
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
    hidden_area: bool = False,
    previous: Board | None = None,
    k_sigma: float = K_SIGMA,
    mapping_sigma_mm: float = 0.0,
) -> BoardAssembly:
    """Build the board for one frame.

    Parameters
    ----------
    detections : WinkDetections
        The winks found in the frame.
    camera : CameraModel
        The calibrated camera (canonical mat frame).
    image_bgr : (H, W, 3) uint8 ndarray, optional
        The frame, for the image evidence on which wink is on top.
    corners_mm : mapping of Colour to (2,) array_like, optional
        Each colour's corner; the canonical layout by default.
    corners_read : bool
        The corners were read (by the calibration or from the winks), not a
        default: the winks behind the baselines do not overrule them (see
        :func:`vision.status.read_unplayed`).
    pot_centre_mm : (2,) array_like
    hidden_area : bool
        Part of the mat is hidden (hands): inferred potted winks become
        uncertain, since the missing winks may be under the hidden part.
    previous : Board, optional
        The previous frame's board: winks seen near where they were keep
        their ids.
    k_sigma : float
        Calls within this many standard deviations are flagged uncertain.
    mapping_sigma_mm : float
        The calibration's one-sigma uncertainty of a point's place on the
        mat, mm. The mat's edges and baselines are where the calibration puts
        them, so a wink's distance from them is also that uncertain.

    Returns
    -------
    BoardAssembly

    Raises
    ------
    rules.board.IllegalBoardError
        Never for detections that satisfy rule 2.1.1 after the count fixes;
        raised if the assembled board still contradicts itself.
    """
    corners = DEFAULT_CORNERS_MM if corners_mm is None else corners_mm
    through_all = _through_pot_wall(detections, camera, pot_centre_mm, image_bgr)
    in_foot = _in_pot_foot(detections, camera, pot_centre_mm, through_all)
    detections, recolour_notes = _with_colours_by_count(detections, ~in_foot)
    keep, sizes, resized, notes = _fix_counts(
        detections, ~in_foot, corners, through_all, previous, pot_centre_mm
    )
    notes = recolour_notes + notes
    for i in np.flatnonzero(in_foot):
        u_px, v_px = detections.image_xy_px[i]
        notes.append(
            f"a {detections.colour[i].value} wink-like outline at image ({u_px:.0f}, {v_px:.0f}) "
            "px was not counted: its centre would be on or beside the pot's foot, nearer the "
            "pot than any wink on the mat can lie, and it is not seen through the pot's opening"
        )
    kept = np.flatnonzero(keep)
    dets = detections[kept]
    sizes = sizes[kept]
    resized = resized[kept]
    n = len(dets)
    radius = nominal_radius_mm(sizes)

    # Seen through the opening and fitting inside the pot at a plausible
    # stack height; a wink against the pot's far side can show its centre
    # through the opening too, but would fit only high up, if at all.
    pot = pot_reading(camera, dets.image_xy_px, radius, pot_centre_mm)
    rim_distance, fit_height_mm = pot.rim_distance_mm, pot.fit_height_mm
    through_wall = through_all[kept]
    potted = pot.potted | through_wall
    # The frame's colour of each wink colour: for the squop cues, the pot's
    # opening and the colours beside winks.
    refs = (
        colour_references_lab(image_bgr, dets.image_xy_px, list(dets.colour))
        if image_bgr is not None and n
        else {}
    )
    squops = analyse_squops(
        # Every field passes through; only the size classes may have been relabelled.
        replace(dets, size=sizes),
        camera,
        image_bgr,
        k_sigma=k_sigma,
        exclude=potted,
        # A relabelled size class may be wrong: its radius could be 3 mm off.
        extra_sigma_mm=np.where(resized, LARGE_WINK_RADIUS_MM - SMALL_WINK_RADIUS_MM, 0.0),
        colour_lab=refs,
        # A wink beyond the mat's edge lies lower, on the table or tipped
        # over the edge; seen from the side, its plan position moves by 1-2
        # times that.
        base_z_mm=partial(base_z_off_mat_mm, camera),
    )
    mat_xy = squops.mat_xy_mm
    sigma = np.maximum(np.asarray(dets.centre_sigma_mm, float), CENTRE_SIGMA_FLOOR_MM)
    # A wink's distance from the mat's edge or a baseline carries the wink's
    # own centre error and the calibration's, which moves the lines. A squop
    # call leaves the latter out: two winks side by side share it, and so do a
    # wink and the pot, found in the same picture. The calibration's sigma is
    # its worst over the mat, so near the middle this is on the cautious side.
    line_sigma_mm = np.hypot(sigma, max(0.0, mapping_sigma_mm))

    # Rule 13: off when any part crosses the mat's edge.
    edge = beyond_mat_edge_mm(mat_xy, radius) if n else np.zeros(0)
    off = (edge > 0) & ~potted
    # Behind its own baseline, under the corner layout the winks bear out:
    # a calibration that could not read the corner colours gives a default.
    unplayed_reading = read_unplayed(
        mat_xy, list(dets.colour), corners, ~potted & ~off, layout_read=corners_read
    )
    behind = unplayed_reading.beyond_own_baseline_mm
    if unplayed_reading.note:
        notes.append(unplayed_reading.note)

    squop_pairs = [
        (c.upper, c.lower)
        for c in squops.calls
        if c.squop and not off[c.upper] and not off[c.lower]
    ]
    dropped_off = [c for c in squops.calls if c.squop and (off[c.upper] or off[c.lower])]
    is_lower = np.zeros(n, bool)
    is_upper = np.zeros(n, bool)
    for up, low in squop_pairs:
        is_lower[low] = True
        is_upper[up] = True

    status = []
    for i in range(n):
        if potted[i]:
            status.append(WinkStatus.POTTED)
        elif off[i]:
            status.append(WinkStatus.OFF)
        elif is_lower[i]:
            status.append(WinkStatus.SQUOPPED)
        elif behind[i] > 0 and not is_upper[i]:
            status.append(WinkStatus.UNPLAYED)
        else:
            status.append(WinkStatus.FREE)

    # Uncertainty of each wink: near a line, or in a doubtful squop call.
    uncertain = resized.copy()
    reasons: list[list[str]] = [[] for _ in range(n)]
    doubts: list[set[Doubt]] = [set() for _ in range(n)]
    for i in range(n):
        if resized[i]:
            reasons[i].append("size class relabelled to fit rule 2.1.1")
            doubts[i].add(Doubt.SIZE)
        if not potted[i] and abs(edge[i]) < k_sigma * line_sigma_mm[i]:
            uncertain[i] = True
            reasons[i].append(f"outline {edge[i]:+.2f} mm from the mat's edge (rule 13)")
            doubts[i].add(Doubt.EDGE)
        if not potted[i] and not off[i] and abs(behind[i]) < k_sigma * line_sigma_mm[i]:
            uncertain[i] = True
            reasons[i].append(f"centre {behind[i]:+.2f} mm from its baseline")
            doubts[i].add(Doubt.BASELINE)
        if unplayed_reading.doubtful[i] and status[i] in (WinkStatus.FREE, WinkStatus.UNPLAYED):
            uncertain[i] = True
            reasons[i].append(
                "behind a baseline, and the winks do not settle which corner is whose "
                "(rule 5.2): unplayed or a played wink there depends on it"
            )
            doubts[i].add(Doubt.BASELINE)
        # Seen right at the pot's rim: in it or beside it is a close call.
        if abs(rim_distance[i] - POT_TOP_DIAMETER_MM / 2) < k_sigma * sigma[i]:
            uncertain[i] = True
            reasons[i].append("seen at the pot's rim: potted or not is a close call")
            doubts[i].add(Doubt.POT)
        through_opening = rim_distance[i] < POT_TOP_DIAMETER_MM / 2
        if through_opening and not potted[i]:
            # Neither inside the pot nor on its rim, yet a wink on the mat
            # there would be hidden: its centre was guessed from a sliver.
            uncertain[i] = True
            reasons[i].append(
                "seen through the pot's opening but fits neither inside the pot nor on its "
                "rim: where it lies is a guess from the part in view; umpire to check"
            )
            doubts[i].add(Doubt.POT)
        elif potted[i] and not through_wall[i] and not fit_height_mm[i] <= POT_STACK_MAX_Z_MM:
            # Potted only as resting on the rim (rule 8.1.2): a millimetre
            # either way and it is beside the pot.
            uncertain[i] = True
            reasons[i].append(
                "taken as resting on the pot's rim (rule 8.1.2): on the rim or beside the pot "
                "is a close call"
            )
            doubts[i].add(Doubt.POT)
        if through_opening and (abs(fit_height_mm[i] - POT_STACK_MAX_Z_MM) < POT_FIT_MARGIN_MM):
            uncertain[i] = True
            reasons[i].append(
                "seen through the pot's opening but would fit inside only "
                f"{fit_height_mm[i]:.0f} mm up: potted or lying against the pot is a close call"
            )
            doubts[i].add(Doubt.POT)

    ids = _assign_ids(
        list(dets.colour), list(sizes), mat_xy, [_STATUS_RANK[s] for s in status], previous
    )
    # A free wink part of whose rim is hidden with no wink found over or
    # beside it may have a wink not seen on top: the detector can take a wink
    # lying on another of its colour for part of that one, and can miss a wink
    # of a colour close to the felt's (a green wink on green felt) lying on a
    # wink of another colour. Its "free" is then unsure while any colour has
    # winks unaccounted for (its own named first). The pot, beside it or
    # between it and the camera, explains a hidden rim as a wink does.
    # The winks of each colour seen (and given an id), by index.
    seen_of = {c: [i for i in range(n) if dets.colour[i] is c and ids[i]] for c in Colour}
    unseen_of = {c: WINKS_PER_COLOUR - len(seen_of[c]) for c in Colour}
    any_unseen = any(k > 0 for k in unseen_of.values())
    rim_seen = np.asarray(dets.rim_visible_fraction, float)
    for i in range(n):
        if status[i] is not WinkStatus.FREE or not any_unseen:
            continue
        if rim_seen[i] >= UNEXPLAINED_RIM_SEEN:
            continue
        reach = radius + radius[i] + 1.0
        neighbours = np.hypot(*(mat_xy - mat_xy[i]).T) < reach
        neighbours[i] = False
        if neighbours.any() or _pot_beside(
            camera, mat_xy[i], radius[i], pot_centre_mm, 1.0 - rim_seen[i]
        ):
            continue
        own = dets.colour[i]
        short_colours = [c for c in (own, *(c for c in Colour if c is not own)) if unseen_of[c] > 0]
        uncertain[i] = True
        reasons[i].append(
            f"{100 * (1 - rim_seen[i]):.0f}% of its rim is hidden with no wink found there, and "
            f"{_unseen_words([(unseen_of[c], c) for c in short_colours])} not seen: one may "
            "lie on it (squopping it)"
        )
        doubts[i].add(Doubt.HIDDEN)
    for c in dropped_off:
        notes.append(
            f"{ids[c.upper]} overlaps {ids[c.lower]}, but one of them is off the mat "
            "(rule 13): not counted as a squop"
        )
    reviews = []
    nearest = np.full(n, np.inf)
    margin = np.full(n, np.inf)
    for c in squops.calls:
        for k in (c.upper, c.lower):
            if abs(c.separation_mm) < abs(nearest[k]):
                nearest[k] = c.separation_mm
            margin[k] = min(margin[k], c.margin_mm)
        if c.uncertain and not (off[c.upper] or off[c.lower]):
            verdict = "squops" if c.squop else "does not squop"
            text = (
                f"{ids[c.upper]} {verdict} {ids[c.lower]}? {c.reason}; review close up "
                # A close-up names its winks W1, W2...: the pair is found by place.
                "(photograph the pair in the middle of the picture, then "
                "winkref review CLOSEUP.jpg)"
            )
            reviews.append(text)
            for k in (c.upper, c.lower):
                uncertain[k] = True
                reasons[k].append(text)
                doubts[k].add(Doubt.SQUOP)

    # Piles only through counted squops (overlaps with off winks excluded).
    pile_parent = pile_ids(n, squop_pairs)

    winks = []
    squops_of: dict[int, list[str]] = {}
    for up, low in squop_pairs:
        squops_of.setdefault(up, []).append(ids[low])
    for i in range(n):
        if not ids[i]:
            continue
        winks.append(
            Wink(
                id=ids[i],
                colour=dets.colour[i],
                size=sizes[i],
                x_mm=None if potted[i] else round(float(mat_xy[i, 0]), 2),
                y_mm=None if potted[i] else round(float(mat_xy[i, 1]), 2),
                status=status[i],
                squops=tuple(sorted(squops_of.get(i, []))),
                confidence=round(float(dets.confidence[i]), 3),
                uncertain=bool(uncertain[i]),
                doubts=tuple(sorted(doubts[i])),
                pile=int(pile_parent[i]) if pile_parent[i] else None,
                diameter_mm=float(2 * radius[i]),
                inferred=False,
                image_xy_px=[round(float(v), 2) for v in dets.image_xy_px[i]],
                top_z_mm=round(float(squops.top_z_mm[i]), 2),
                plan_gap_mm=None if not np.isfinite(nearest[i]) else round(float(nearest[i]), 2),
                overlap_margin_mm=None
                if not np.isfinite(margin[i])
                else round(float(margin[i]), 2),
                review=tuple(reasons[i]),
            )
        )

    # Winks in the pot lie stacked, so the top one may hide the others; but
    # when the camera sees the pot's floor and no wink colour at all shows in
    # it (and none was detected there), the pot is empty: winks not seen
    # anywhere are then not potted (hidden under others, or missed).
    pot_empty = False
    pot_seen: dict[Colour, bool] | None = None
    short = min(map(len, seen_of.values())) < WINKS_PER_COLOUR
    if image_bgr is not None and short:
        pot_seen = pot_colours_seen(image_bgr, camera, refs, pot_centre_mm)
        pot_empty = pot_seen is not None and not potted.any() and not any(pot_seen.values())
    # A wink lying against the pot's far side can be hidden by the pot itself
    # (when the pot is out of view, so is the mat around it, and the
    # out-of-view note covers the missing winks).
    pot_px = camera.mat_to_image(np.array([[pot_centre_mm[0], pot_centre_mm[1], 0.0]]))[0]
    frame_w, frame_h = camera.image_size_wh
    behind_pot = (
        0 <= pot_px[0] < frame_w
        and 0 <= pot_px[1] < frame_h
        and hidden_behind_pot_fraction(camera, pot_centre_mm) > BEHIND_POT_HIDDEN_FRACTION
    )
    # A wink lying mostly under another of another colour can be missed while
    # its crescent still shows beyond the upper wink's rim: a colour short of
    # winks whose colour shows there has one on the mat, not in the pot. Its
    # place is not measured, so it is left off the board (scoring nothing, as
    # a squopped wink would) and named in a review line for the umpire.
    # (Not with part of the mat hidden: hands are wink-like colours.)
    beside = dict.fromkeys(Colour, ColourBeside(0.0, -1))
    on_mat = np.array([bool(ids[i]) and not potted[i] for i in range(n)], dtype=bool)
    if image_bgr is not None and short and not hidden_area and not pot_empty and on_mat.any():
        beside = colour_beside_winks_mm2(
            image_bgr,
            camera,
            mat_xy[on_mat],
            radius[on_mat],
            [dets.colour[i] for i in np.flatnonzero(on_mat)],
            refs,
            pot_centre_mm,
            wanted=[c for c in Colour if len(seen_of[c]) < WINKS_PER_COLOUR],
        )
    for colour in Colour:
        seen = seen_of[colour]
        in_pot_seen = sum(1 for i in seen if potted[i])
        missing = WINKS_PER_COLOUR - len(seen)
        if missing > 0 and pot_empty:
            text = (
                f"{colour.value}: {missing} wink(s) not seen anywhere, and the pot looks "
                "empty, so they are not counted as potted: they may be hidden under other "
                "winks or missed; umpire to check"
            )
            notes.append(text)
            reviews.append(text)
            continue
        inference = infer_potted(
            colour,
            [sizes[i] for i in seen],
            in_pot_seen,
            hidden_area=hidden_area,
            behind_pot=behind_pot,
        )
        if inference.inferred and beside[colour].area_mm2 >= PEEK_MIN_AREA_MM2:
            k = int(np.flatnonzero(on_mat)[beside[colour].wink_index])
            text = (
                f"{colour.value}: {beside[colour].area_mm2:.0f} mm^2 of {colour.value} shows "
                f"beside {ids[k]} at ({mat_xy[k, 0]:.0f}, {mat_xy[k, 1]:.0f}) mm where no "
                f"{colour.value} wink was found: one missing wink is taken to lie there (most "
                "likely under it), not in the pot; umpire to check"
            )
            notes.append(text)
            reviews.append(text)
            inference = _with_one_fewer(inference)
        if not inference.inferred:
            continue
        notes.append(inference.note)
        # The pot's opening can show that a colour is in the pot, not how many
        # winks of it: one inferred wink is borne out when its colour shows
        # there and none was seen in the pot; any others might as well be
        # winks missed on the mat, so they are listed as unsure.
        shows = bool(pot_seen and pot_seen[colour])
        borne_out = int(shows and in_pot_seen == 0)
        if pot_seen is None:
            view = "the pot's inside is not in view"
        elif not shows:
            view = f"no {colour.value} shows in the pot"
        else:
            view = f"{colour.value} shows in the pot, but not how many winks of it"
        unconfirmed = (
            f"{colour.value}: a potted wink inferred but not seen ({view}): it may be a wink "
            "missed on the mat; check by eye"
        )
        taken = {w.id for w in winks}
        for size, count, letter, limit in (
            (WinkSize.LARGE, inference.large_inferred, "L", LARGE_WINKS_PER_COLOUR),
            (WinkSize.SMALL, inference.small_inferred, "S", SMALL_WINKS_PER_COLOUR),
        ):
            spare = [f"{colour.value}-{letter}{k}" for k in range(1, limit + 1)]
            spare = [s for s in spare if s not in taken]
            for wid in spare[:count]:
                review = (inference.note,) if hidden_area or behind_pot else ()
                if borne_out:
                    borne_out -= 1
                else:
                    review = (*review, unconfirmed)
                winks.append(
                    Wink(
                        id=wid,
                        colour=colour,
                        size=size,
                        status=WinkStatus.POTTED,
                        confidence=None,
                        uncertain=bool(review),
                        doubts=(Doubt.INFERRED,) if review else (),
                        diameter_mm=size.diameter_mm,
                        inferred=True,
                        review=review,
                    )
                )
    winks.sort(key=lambda w: (w.colour.turn_index, w.size is WinkSize.SMALL, w.id))
    board = Board(winks=tuple(winks))
    board = board.with_tiddlies(tiddlies_of(board))
    board.validate_or_raise(where="assembled board")
    det_ids = [""] * len(detections)
    for k, i in enumerate(kept):
        det_ids[i] = ids[k]
    return BoardAssembly(
        board=board,
        detection_ids=tuple(det_ids),
        squops=_in_detection_indices(squops, kept, len(detections)),
        notes=tuple(notes),
        reviews=tuple(reviews),
    )


def _pot_beside(
    camera: CameraModel,
    wink_mat_xy_mm: npt.ArrayLike,
    radius_mm: float,
    pot_centre_mm: Sequence[float],
    hidden_share: float,
) -> bool:
    """Whether the pot explains a wink's hidden rim: its rim over the wink in plan, or in view.

    The pot's rim overhangs its foot (rule 2.4), so from above it covers the
    edge of a wink touching the foot; from the side its body can hide more.

    Parameters
    ----------
    camera : CameraModel
    wink_mat_xy_mm : (2,) array_like
        The wink's plan centre.
    radius_mm : float
    pot_centre_mm : (2,) sequence of float
    hidden_share : float
        The share of the wink's rim not seen, 0-1: the pot must hide at least
        half as much of the wink to explain it.

    Returns
    -------
    bool
    """
    offset = np.asarray(wink_mat_xy_mm, float) - np.asarray(pot_centre_mm, float)
    if float(np.hypot(*offset)) < POT_TOP_DIAMETER_MM / 2 + radius_mm + 1.0:
        return True
    hidden_by_pot = pot_hidden_fraction(camera, wink_mat_xy_mm, radius_mm, pot_centre_mm)
    return hidden_by_pot > 0.0 and hidden_by_pot >= 0.5 * hidden_share


def _unseen_words(counts: Sequence[tuple[int, Colour]]) -> str:
    """E.g. "1 red wink was" or "2 blue, 1 green and 3 yellow winks were"."""
    parts = [f"{k} {c.value}" for k, c in counts]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    one = len(counts) == 1 and counts[0][0] == 1
    return f"{listed} {'wink was' if one else 'winks were'}"


#: A colour short of winks whose colour shows over at least this area beside
#: one wink of another colour (see :func:`vision.status.colour_beside_winks_mm2`)
#: has a wink there, not in the pot, mm^2. A crescent 2 mm wide and 10 mm long
#: is 20 mm^2. On 90 development frames, of the 94 colours short of winks
#: with none missing on the mat, none showed over 13 mm^2; of the 29 with one
#: missing there, 8 showed 16 or more (docs/benchmarks.md, "Late round").
PEEK_MIN_AREA_MM2 = 16.0


def _with_one_fewer(inference: PottedInference) -> PottedInference:
    """The inference with one inferred potted wink fewer (a small one first)."""
    small = inference.small_inferred
    large = inference.large_inferred
    if small > 0:
        small -= 1
    elif large > 0:
        large -= 1
    inferred = inference.inferred - 1
    note = inference.note
    if inferred:
        note = note.replace(
            f"{inference.inferred} potted wink(s) inferred",
            f"{inferred} potted wink(s) inferred (one more missing lies on the mat)",
        )
    return replace(
        inference,
        inferred=inferred,
        large_inferred=large,
        small_inferred=small,
        note=note if inferred else "",
    )


def _in_detection_indices(
    analysis: SquopAnalysis, kept: npt.NDArray[np.int64], n: int
) -> SquopAnalysis:
    """The analysis of ``detections[kept]`` re-indexed to all ``n`` detections."""
    mat_xy = np.full((n, 2), np.nan)
    top_z = np.full(n, np.nan)
    level = np.full(n, -1, dtype=np.int64)
    mat_xy[kept] = analysis.mat_xy_mm
    top_z[kept] = analysis.top_z_mm
    level[kept] = analysis.level
    calls = tuple(
        replace(c, upper=int(kept[c.upper]), lower=int(kept[c.lower])) for c in analysis.calls
    )
    evidence = {(int(kept[i]), int(kept[j])): ev for (i, j), ev in analysis.evidence.items()}
    return SquopAnalysis(
        calls=calls, mat_xy_mm=mat_xy, top_z_mm=top_z, level=level, evidence=evidence
    )
