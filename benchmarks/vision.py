"""Vision benchmark (issue 4): detections, squops, statuses and tiddlies against ground truth.

Runs over scene folders holding ``<profile>_<seed>.jpg`` + ``.json`` ground
truth (``/work/shared/scenes`` and ``sample_images/``) and prints, per
profile: detection recall and precision, colour and size accuracy, centre
error (median, p95), status accuracy, squop precision and recall split into
clear (|separation| >= 2 mm) and marginal pairs, marginal pairs flagged
uncertain or called wrong, the rate of exact tiddly counts, and the time per
image, followed by a profile of the frame analysis.

Three detection sources:

* ``image``: the project's detector (``vision.detect.detect_winks``) on the
  photo, through :func:`vision.pipeline.analyze_frame` with the scene's camera;
* ``gt``: detections made from the ground truth with noise on the centres
  (clearly labelled): everything after detection -- which wink is on top
  (from the real photo), parallax, squops, statuses, potted inference -- is
  measured on its own;
* ``calibrated``: ``image`` with the camera from ``calibration.calibrate`` on
  the photo itself. The mat looks the same turned through 180 degrees, so a
  frame whose orientation neither calibration nor the unplayed winks could
  tell is compared with the ground truth in the half-turn it was analysed in;
  the orientation is reported on its own line (right, wrong, unknown).

Usage::

    .venv/bin/python benchmarks/vision.py [--source gt|image|calibrated|both|all] [DIR ...]
    .venv/bin/python benchmarks/vision.py --list-clear ...   # and each clear pair called wrong
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import os
import pstats
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The speed target is per core: keep numpy's BLAS (the squop fits' batched
# linear algebra) to one thread, as OpenCV is below, before numpy loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rules.board import (  # noqa: E402
    POT_HEIGHT_MM,
    POT_TOP_DIAMETER_MM,
    Board,
    Colour,
    WinkStatus,
)
from tools.groundtruth import GtWink, Scene, half_turned, load_scene, to_canonical_frame  # noqa: E402
from vision.detections import WinkDetections  # noqa: E402
from vision.pipeline import (  # noqa: E402
    FrameAnalysis,
    MatNotVisibleError,
    analyze_frame,
    find_hidden_regions,
    prepare_context,
)
from vision.status import pot_hidden_fraction  # noqa: E402

CLEAR_MM = 2.0
MATCH_RADIUS_MM = 8.0


# --------------------------------------------------------------------------
# Ground truth -> detections
# --------------------------------------------------------------------------


def _top_face_centre(w: GtWink) -> np.ndarray:
    return np.asarray(w.centre_mm, float) + np.asarray(w.axis, float) * w.thickness_mm / 2


def _visible_rim_fraction(scene: Scene, wink_id: str) -> float:
    """Fraction of a wink's rim not covered in plan view by winks above it."""
    by_id = scene.by_id
    w = by_id[wink_id]
    above: set[str] = set()
    todo = list(w.squopped_by)
    while todo:
        k = todo.pop()
        if k not in above:
            above.add(k)
            todo.extend(by_id[k].squopped_by)
    angles = np.linspace(0, 2 * math.pi, 72, endpoint=False)
    r = w.diameter_mm / 2
    pts = np.asarray(w.mat_xy_mm)[None, :] + r * np.stack([np.cos(angles), np.sin(angles)], 1)
    covered = np.zeros(len(pts), bool)
    for k in above:
        o = by_id[k]
        covered |= np.hypot(*(pts - np.asarray(o.mat_xy_mm)).T) < o.diameter_mm / 2
    centre_covered = any(
        math.hypot(*(np.asarray(w.mat_xy_mm) - np.asarray(by_id[k].mat_xy_mm)))
        < by_id[k].diameter_mm / 2
        for k in above
    )
    frac = float(1 - covered.mean())
    return frac * (0.5 if centre_covered else 1.0)


#: A wink whose top face is hidden more than this from the camera, by the pot
#: or by winks above it, is counted as one no detector could see.
HIDDEN_LIMIT = 0.75


def is_seeable(scene: Scene, w: GtWink, rim_visible: float | None = None) -> bool:
    """Whether a wink on the mat shows enough of itself to be found at all.

    Not when its rim is mostly covered by winks above it (less than a
    quarter visible, as for the ground-truth-derived detections) or when the
    pot hides more than :data:`HIDDEN_LIMIT` of it from this camera.
    ``rim_visible`` is :func:`_visible_rim_fraction` when already known.
    """
    if rim_visible is None:
        rim_visible = _visible_rim_fraction(scene, w.id)
    if rim_visible < 1 - HIDDEN_LIMIT:
        return False
    hidden = pot_hidden_fraction(
        scene.camera,
        w.mat_xy_mm,
        w.diameter_mm / 2,
        scene.pot.centre_mm[:2],
        top_z_mm=float(_top_face_centre(w)[2]),
    )
    return hidden <= HIDDEN_LIMIT


def detections_from_ground_truth(
    scene: Scene, *, centre_sigma_mm: float = 0.3, seed: int = 0
) -> WinkDetections:
    """What a good detector would report: GT winks with noisy centres (for benchmarks).

    Winks hidden from the camera are left out: ones out of the frame, ones
    mostly covered by others, and potted ones not seen through the pot's
    opening. The image centre is the true top face's projection plus
    Gaussian noise of ``centre_sigma_mm`` (scaled up for partly covered
    winks); the plan position assumes every wink lies flat on the mat (the
    detector cannot know heights), so raised winks carry parallax error for
    the squop logic to correct.
    """
    rng = np.random.default_rng(seed)
    cam = scene.camera
    w_px, h_px = cam.image_size_wh
    rows = []
    for w in scene.winks:
        top = _top_face_centre(w)
        px = cam.mat_to_image(top[None, :])[0]
        if not (0 <= px[0] < w_px and 0 <= px[1] < h_px):
            continue
        if w.status is WinkStatus.POTTED:
            rim = cam.image_to_mat(px[None, :], POT_HEIGHT_MM)[0]
            pot = np.asarray(scene.pot.centre_mm[:2])
            if math.hypot(*(rim - pot)) > POT_TOP_DIAMETER_MM / 2 - w.diameter_mm / 4:
                continue
            visible = 1.0
        else:
            visible = _visible_rim_fraction(scene, w.id)
            if not is_seeable(scene, w, visible):
                continue
        sigma = centre_sigma_mm / math.sqrt(max(visible, 0.25))
        mm_per_px = cam.mm_per_px_at(top)
        noisy_px = px + rng.normal(0.0, sigma / mm_per_px, 2)
        flat_z = 1.5
        mat_xy = cam.image_to_mat(noisy_px[None, :], flat_z)[0]
        rows.append((noisy_px, mat_xy, flat_z, w, visible, sigma))
    if not rows:
        return WinkDetections.empty()
    return WinkDetections(
        image_xy_px=np.array([r[0] for r in rows]),
        mat_xy_mm=np.array([r[1] for r in rows]),
        z_mm=np.array([r[2] for r in rows]),
        radius_mm=np.array([r[3].diameter_mm / 2 for r in rows]),
        colour=np.array([r[3].colour for r in rows], dtype=object),
        size=np.array([r[3].size for r in rows], dtype=object),
        confidence=np.full(len(rows), 0.95),
        rim_visible_fraction=np.array([r[4] for r in rows]),
        centre_sigma_mm=np.array([r[5] for r in rows]),
    )


def corners_of(scene: Scene) -> dict[Colour, tuple[float, float]]:
    """Each colour's corner, from the ground truth's baselines."""
    return {b.colour: (b.corner[0], b.corner[1]) for b in scene.baselines}


# --------------------------------------------------------------------------
# Scoring one frame
# --------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts summed over the images of one profile."""

    gt_visible: int = 0
    gt_seeable: int = 0
    matched_seeable: int = 0
    matched: int = 0
    detected: int = 0
    colour_right: int = 0
    size_right: int = 0
    centre_err_mm: list[float] = field(default_factory=list)
    status_total: int = 0
    status_right: int = 0
    clear_gt_squops: int = 0
    clear_found: int = 0
    clear_gt_two_colour: int = 0
    clear_found_two_colour: int = 0
    clear_called: int = 0
    clear_called_right: int = 0
    marginal: int = 0
    marginal_right: int = 0
    marginal_flagged: int = 0
    marginal_confident_wrong: int = 0
    marginal_missed: int = 0
    # Our separation minus the truth's, and our stated sigma, for marginal
    # pairs whose two winks were both found and called (mm).
    marginal_sep_err_mm: list[float] = field(default_factory=list)
    marginal_sep_sigma_mm: list[float] = field(default_factory=list)
    clear_flagged: int = 0
    images: int = 0
    exact_tiddlies: int = 0
    times_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    stage_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    confusions: Counter[str] = field(default_factory=Counter)
    orientation_right: int = 0
    orientation_wrong: int = 0
    orientation_unknown: int = 0
    orientation_unknown_turned: int = 0
    # Per wink colour (its value): visible winks, those found, and their
    # centre errors (mm). A felt of one wink's colour shows in these.
    visible_by_colour: Counter[str] = field(default_factory=Counter)
    found_by_colour: Counter[str] = field(default_factory=Counter)
    centre_err_by_colour: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    # The clear pairs called wrong, a line each (for --list-clear).
    clear_wrong: list[str] = field(default_factory=list)


def _gt_separation(scene: Scene, a: str, b: str) -> float:
    for m in scene.marginal_pairs:
        if set(m.ids) == {a, b}:
            return m.plan_gap_mm
    wa, wb = scene.by_id[a], scene.by_id[b]
    d = math.hypot(*(np.asarray(wa.mat_xy_mm) - np.asarray(wb.mat_xy_mm)))
    return d - wa.diameter_mm / 2 - wb.diameter_mm / 2


def _pair_text(call: tuple[str, str] | None) -> str:
    return "apart" if call is None else f"{call[0]} on {call[1]}"


def score_frame(scene: Scene, board: Board, tally: Tally) -> dict[str, str]:
    """Compare a board with the ground truth and add to the tally.

    Returns the match, our wink id -> the ground truth's.
    """
    gt_on = [w for w in scene.winks if w.status is not WinkStatus.POTTED]
    ours_on = [w for w in board.winks if w.status is not WinkStatus.POTTED and w.mat_xy]
    # Visible = inside the frame (a detector cannot see outside it).
    w_px, h_px = scene.camera.image_size_wh
    gt_vis = []
    for w in gt_on:
        px = scene.camera.mat_to_image(_top_face_centre(w)[None, :])[0]
        if 0 <= px[0] < w_px and 0 <= px[1] < h_px:
            gt_vis.append(w)
    tally.gt_visible += len(gt_vis)
    tally.visible_by_colour.update(g.colour.value for g in gt_vis)
    seeable = {g.id for g in gt_vis if is_seeable(scene, g)}
    tally.gt_seeable += len(seeable)
    tally.detected += len(ours_on)
    match: dict[str, str] = {}  # ours id -> gt id
    if gt_vis and ours_on:
        cost = np.array(
            [
                [
                    math.hypot(*(np.asarray(o.mat_xy) - np.asarray(g.mat_xy_mm)))
                    + (0 if o.colour is g.colour else 5.0)
                    for g in gt_vis
                ]
                for o in ours_on
            ]
        )
        rows, cols = linear_sum_assignment(cost)
        for r, c in zip(rows, cols, strict=True):
            o, g = ours_on[r], gt_vis[c]
            err = math.hypot(*(np.asarray(o.mat_xy) - np.asarray(g.mat_xy_mm)))
            if err <= MATCH_RADIUS_MM:
                match[o.id] = g.id
                tally.matched += 1
                tally.matched_seeable += g.id in seeable
                tally.colour_right += o.colour is g.colour
                tally.size_right += o.size is g.size
                tally.centre_err_mm.append(err)
                tally.found_by_colour[g.colour.value] += 1
                tally.centre_err_by_colour[g.colour.value].append(err)
                tally.status_total += 1
                tally.status_right += o.status is g.status
                if o.status is not g.status:
                    tally.confusions[f"{g.status.value}->{o.status.value}"] += 1
    # Potted: per colour, the counts that agree.
    for colour in Colour:
        gt_p = sum(1 for w in scene.winks if w.colour is colour and w.status is WinkStatus.POTTED)
        our_p = board.count(colour, WinkStatus.POTTED)
        tally.status_total += gt_p
        tally.status_right += min(gt_p, our_p)
    # Squops.
    gt_pairs = {(w.id, low) for w in scene.winks for low in w.squops}
    our_pairs = set()
    for w in board.winks:
        for low in w.squops:
            if w.id in match and low in match:
                our_pairs.add((match[w.id], match[low]))
    uncertain_gt = {match[w.id] for w in board.winks if w.uncertain and w.id in match}
    matched_gt = set(match.values())
    considered: set[frozenset[str]] = {frozenset(p) for p in gt_pairs}
    considered |= {frozenset(p) for p in our_pairs}
    for m in scene.marginal_pairs:
        considered.add(frozenset(m.ids))
    for pair in considered:
        a, b = sorted(pair)
        if scene.by_id[a].status is WinkStatus.POTTED or scene.by_id[b].status is WinkStatus.POTTED:
            continue
        sep = _gt_separation(scene, a, b)
        gt_call = (a, b) if (a, b) in gt_pairs else (b, a) if (b, a) in gt_pairs else None
        our_call = (a, b) if (a, b) in our_pairs else (b, a) if (b, a) in our_pairs else None
        right = gt_call == our_call
        flagged = a in uncertain_gt and b in uncertain_gt
        detected = a in matched_gt and b in matched_gt
        if abs(sep) >= CLEAR_MM:
            if our_call != gt_call:
                tally.clear_wrong.append(
                    f"{scene.scene_id}: truth {_pair_text(gt_call)}, ours {_pair_text(our_call)}, "
                    f"overlap {-sep:.1f} mm"
                    + ("" if detected else ", a wink not found")
                    + (", flagged" if flagged else "")
                    + (", one colour" if scene.by_id[a].colour is scene.by_id[b].colour else "")
                )
            if gt_call:
                tally.clear_gt_squops += 1
                tally.clear_found += our_call == gt_call
                if scene.by_id[a].colour is not scene.by_id[b].colour:
                    tally.clear_gt_two_colour += 1
                    tally.clear_found_two_colour += our_call == gt_call
            if our_call:
                tally.clear_called += 1
                tally.clear_called_right += our_call == gt_call
            tally.clear_flagged += flagged
        else:
            tally.marginal += 1
            tally.marginal_right += right
            tally.marginal_flagged += flagged
            # A pair with an undetected wink was never called by the squop logic.
            tally.marginal_missed += (not right) and not detected
            tally.marginal_confident_wrong += (not right) and detected and not flagged
    tally.images += 1
    gt_tiddlies = {c: n.tiddlies for c, n in scene.counts.items()}
    tally.exact_tiddlies += board.tiddlies == gt_tiddlies
    return match


def score_separations(
    scene: Scene, analysis: FrameAnalysis, match: dict[str, str], tally: Tally
) -> None:
    """Add the measured separation's error, and its stated sigma, of each marginal pair.

    Only pairs whose two winks were both found and called are scored: how
    far the plan separation is off the truth's, against the sigma the call
    states (an honest sigma has |error| / sigma under 2 for about 95 % of pairs).
    """
    ids = analysis.assembly.detection_ids
    for call in analysis.assembly.squops.calls:
        if min(call.upper, call.lower) < 0:  # a detection the count dropped
            continue
        a, b = match.get(ids[call.upper]), match.get(ids[call.lower])
        if a is None or b is None or a == b:
            continue
        if WinkStatus.POTTED in (scene.by_id[a].status, scene.by_id[b].status):
            continue
        sep = _gt_separation(scene, a, b)
        if abs(sep) < CLEAR_MM:
            tally.marginal_sep_err_mm.append(call.separation_mm - sep)
            tally.marginal_sep_sigma_mm.append(call.sigma_mm)


def camera_is_half_turned(scene: Scene, camera: object) -> bool:
    """Whether ``camera`` maps the frame into the ground truth's mat frame turned by 180 degrees.

    Compares where both put the mat points the ground truth's camera sees: a
    good calibration lands within millimetres of them in one of the two
    half-turns and about a metre off in the other.
    """
    grid = np.stack(
        np.meshgrid(np.linspace(-900.0, 900.0, 19), np.linspace(-450.0, 450.0, 9)), -1
    ).reshape(-1, 2)
    px = scene.camera.mat_to_image(np.hstack([grid, np.zeros((len(grid), 1))]))
    w_px, h_px = scene.camera.image_size_wh
    seen = (px[:, 0] >= 0) & (px[:, 0] < w_px) & (px[:, 1] >= 0) & (px[:, 1] < h_px)
    back = camera.image_to_mat(px[seen], 0.0)  # type: ignore[attr-defined]
    same = float(np.median(np.hypot(*(back - grid[seen]).T)))
    turned = float(np.median(np.hypot(*(back + grid[seen]).T)))
    return turned < same


def score_analysis(scene: Scene, analysis: FrameAnalysis, tally: Tally) -> None:
    """Score a frame's analysis, in the half-turn it was seen in when that could not be known.

    The mat looks the same turned through 180 degrees; only the corner
    colours or the unplayed winks tell the turns apart. When the analysis
    says it could not tell (``orientation_known`` False) the board is compared
    with the ground truth in the half-turn its camera used, and the frame is
    counted as of unknown orientation. When it claims to know, the board is
    compared as it stands, so a wrong claim costs every wink (and is counted).
    """
    turned = analysis.camera is not None and camera_is_half_turned(scene, analysis.camera)
    if not analysis.orientation_known:
        tally.orientation_unknown += 1
        tally.orientation_unknown_turned += turned
        if turned:
            scene = half_turned(scene)
    elif turned:
        tally.orientation_wrong += 1
    else:
        tally.orientation_right += 1
    match = score_frame(scene, analysis.board, tally)
    score_separations(scene, analysis, match, tally)


def _pct(num: float, den: float) -> str:
    return "n/a" if den == 0 else f"{100.0 * num / den:.1f}% ({int(num)}/{int(den)})"


def _separation_line(t: Tally) -> str:
    """The marginal pairs' separation error and how it compares with the stated sigma."""
    if not t.marginal_sep_err_mm:
        return "marginal separation  n/a"
    err = np.asarray(t.marginal_sep_err_mm)
    ratio = np.abs(err) / np.maximum(np.asarray(t.marginal_sep_sigma_mm), 1e-9)
    return (
        f"marginal separation  error mm median {np.median(err):+.2f}, sd {err.std():.2f}; "
        f"stated sigma median {np.median(t.marginal_sep_sigma_mm):.2f}; |error|/sigma "
        f"p95 {np.percentile(ratio, 95):.2f} ({len(err)} pairs both found)"
    )


def by_colour(t: Tally) -> str:
    """Per wink colour, the winks found of those visible and their median centre error, mm.

    As ``blue 32/33 (0.29), green 28/30 (0.79), ...``; a colour none of whose
    winks was found shows no error.
    """
    return ", ".join(
        f"{c} {t.found_by_colour[c]}/{t.visible_by_colour[c]}"
        + (
            f" ({statistics.median(t.centre_err_by_colour[c]):.2f})"
            if t.centre_err_by_colour.get(c)
            else ""
        )
        for c in sorted(t.visible_by_colour)
    )


def report(name: str, t: Tally) -> str:
    """The tally in words, one figure a line."""
    err = sorted(t.centre_err_mm)
    med = statistics.median(err) if err else float("nan")
    p95 = float(np.percentile(err, 95)) if err else float("nan")
    times = sorted(t.times_ms)
    lines = [
        f"== {name}: {t.images} frames",
        f"detection recall      {_pct(t.matched, t.gt_visible)}",
        f"  of winks seeable    {_pct(t.matched_seeable, t.gt_seeable)} (not hidden by the pot "
        "or by winks above)",
        f"detection precision   {_pct(t.matched, t.detected)}",
        f"colour accuracy       {_pct(t.colour_right, t.matched)}",
        f"size accuracy         {_pct(t.size_right, t.matched)}",
        f"centre error mm       median {med:.2f}  p95 {p95:.2f}",
        f"by colour             found/visible (centre median mm): {by_colour(t)}",
        f"status accuracy       {_pct(t.status_right, t.status_total)}",
        f"clear squops recall   {_pct(t.clear_found, t.clear_gt_squops)} (right upper)",
        f"clear squops precision {_pct(t.clear_called_right, t.clear_called)}",
        f"  recall, two colours {_pct(t.clear_found_two_colour, t.clear_gt_two_colour)} "
        "(one-colour pairs: flagged unless the arc cue is strong)",
        f"clear pairs flagged uncertain {t.clear_flagged}",
        f"marginal pairs        {t.marginal}: right {t.marginal_right}, flagged uncertain "
        f"{t.marginal_flagged}, confidently wrong {_pct(t.marginal_confident_wrong, t.marginal)}, "
        f"wrong for a missed wink {t.marginal_missed}",
        _separation_line(t),
        f"exact tiddlies        {_pct(t.exact_tiddlies, t.images)}",
        f"orientation           known and right {t.orientation_right}, known and WRONG "
        f"{t.orientation_wrong}, unknown {t.orientation_unknown} (of which "
        f"{t.orientation_unknown_turned} turned: scored in that half-turn)",
        f"time per frame ms     wall median {statistics.median(times):.1f} (max "
        f"{max(times):.1f}), CPU median {statistics.median(t.cpu_ms):.1f}; stages (wall): "
        + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in t.stage_ms.items())
        if times
        else "time per frame ms     n/a",
    ]
    if t.confusions:
        lines.append(
            "status confusions     " + ", ".join(f"{k} x{v}" for k, v in t.confusions.most_common())
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def scene_paths(dirs: Sequence[Path]) -> list[tuple[Path, Path]]:
    """(image, ground truth) pairs found in the folders."""
    out = []
    for d in dirs:
        for js in sorted(d.glob("*.json")):
            for ext in (".jpg", ".png"):
                img = js.with_suffix(ext)
                if img.exists():
                    out.append((img, js))
                    break
    return out


def run_one(
    img_path: Path, scene: Scene, source: str, sigma: float, seed: int
) -> tuple[FrameAnalysis, float, float]:
    """Analyse one scene; returns the analysis and its wall-clock and CPU times, ms."""
    image = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
    if image is None:
        raise OSError(f"cannot read {img_path}")
    if source == "calibrated":
        from calibration import calibrate

        calibration = calibrate(image)  # raises a ValueError subclass when it cannot
        context = prepare_context(calibration)
    else:
        context = prepare_context(scene.camera, corners_mm=corners_of(scene))
    dets = None
    if source == "gt":
        dets = detections_from_ground_truth(scene, centre_sigma_mm=sigma, seed=seed)
    analyze_frame(image, context, detections=dets)  # warm: caches and imports
    t0, c0 = time.perf_counter(), time.process_time()
    analysis = analyze_frame(image, context, detections=dets)
    wall_ms = (time.perf_counter() - t0) * 1000.0
    cpu_ms = (time.process_time() - c0) * 1000.0
    return analysis, wall_ms, cpu_ms


#: Hand-sized blobs pasted on clean frames for the hidden-region check: three
#: skin shades (BGR) at two places on the mat (mm).
HAND_SHADES_BGR = ((120, 150, 205), (90, 120, 200), (60, 90, 150))
HAND_PLACES_MM = ((300.0, -150.0), (-400.0, 200.0))


def hands_check(pairs: Sequence[tuple[Path, Path]]) -> str:
    """Hidden regions: false ones on clean frames, and pasted hands found."""
    false_regions = found = tried = frames = 0
    for img_path, js in pairs:
        scene = load_scene(js)
        if scene.profile in ("closeup", "nomat"):
            continue
        scene = to_canonical_frame(scene)
        image = cv2.imread(str(img_path))
        context = prepare_context(scene.camera, corners_mm=corners_of(scene))
        frames += 1
        false_regions += len(find_hidden_regions(image, context)[0])
        for shade in HAND_SHADES_BGR:
            for place in HAND_PLACES_MM:
                centre = scene.camera.mat_to_image(np.array([[place[0], place[1], 0.0]]))[0]
                h_px, w_px = image.shape[:2]
                if not (0 <= centre[0] < w_px and 0 <= centre[1] < h_px):
                    continue  # that place is out of this frame
                hand = image.copy()
                cv2.ellipse(hand, (int(centre[0]), int(centre[1])), (60, 35), 30, 0, 360, shade, -1)
                regions = find_hidden_regions(hand, context)[0]
                tried += 1
                found += any(bool(r.contains_mat_xy([place])[0]) for r in regions)
    return (
        f"== hidden regions: {frames} clean frames, {false_regions} false regions; "
        f"pasted hands (120x70 px ellipses, 3 skin shades x 2 places) found {found}/{tried}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument(
        "--source",
        choices=("gt", "image", "calibrated", "both", "all"),
        default="both",
        help="both = gt + image (scene cameras); calibrated = image with calibration from the "
        "photo itself; all = the three",
    )
    parser.add_argument("--sigma", type=float, default=0.3, help="GT-mode centre noise, mm")
    parser.add_argument("--seeds", type=int, default=3, help="GT-mode noise draws per scene")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one frame")
    parser.add_argument(
        "--hands", action="store_true", help="also check hidden regions with pasted hands"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="OpenCV threads (1 = the one-core figure)"
    )
    parser.add_argument(
        "--list-clear",
        action="store_true",
        help="also list every clear pair called wrong (which wink on which, or apart)",
    )
    args = parser.parse_args(argv)
    cv2.setNumThreads(args.threads)
    dirs = args.dirs or [Path("/work/shared/scenes"), ROOT / "sample_images"]
    pairs = scene_paths([d for d in dirs if d.exists()])
    sources = {"both": ["gt", "image"], "all": ["gt", "image", "calibrated"]}.get(
        args.source, [args.source]
    )
    try:
        import vision.detect  # noqa: F401
    except ImportError:
        print("image sources skipped: vision.detect is not there yet")
        sources = [s for s in sources if s == "gt"]
    if args.hands:
        print(hands_check(pairs))
    for source in sources:
        tallies: dict[str, Tally] = defaultdict(Tally)
        label = (
            f"GROUND-TRUTH-DERIVED detections (centre noise sigma {args.sigma} mm, "
            f"{args.seeds} draws per scene)"
            if source == "gt"
            else "image detections (vision.detect), scene cameras"
            if source == "image"
            else "image detections (vision.detect), calibrated from each photo (calibrate)"
        )
        print(f"\n##### source: {label}")
        refused = total_nomat = 0
        for img_path, js in pairs:
            scene = load_scene(js)
            if scene.profile == "closeup":
                continue  # no whole mat in view: for the umpire's close-up review
            if scene.profile == "nomat":
                # Bad input: a table without a mat must be refused, not analysed.
                total_nomat += 1
                image = cv2.imread(str(img_path))
                try:
                    analyze_frame(image, scene.camera, detections=WinkDetections.empty())
                except MatNotVisibleError:
                    refused += 1
                continue
            scene = to_canonical_frame(scene)
            for seed in range(args.seeds if source == "gt" else 1):
                try:
                    analysis, ms, cpu = run_one(img_path, scene, source, args.sigma, seed)
                except ValueError as exc:
                    print(f"   {img_path.name}: failed: {exc}")
                    continue
                key = f"{scene.profile} ({img_path.parent.name})"
                tallies[key].times_ms.append(ms)
                tallies[key].cpu_ms.append(cpu)
                for stage, value in analysis.timings_ms.items():
                    tallies[key].stage_ms[stage].append(value)
                score_analysis(scene, analysis, tallies[key])
        for key in sorted(tallies):
            print(report(key, tallies[key]))
            if args.list_clear:
                for line in tallies[key].clear_wrong:
                    print(f"  clear pair wrong: {line}")
        if total_nomat:
            print(f"== no-mat photos refused with MatNotVisibleError: {refused}/{total_nomat}")
        if args.profile and pairs:
            img_path, js = next(p for p in pairs if "overhead" in p[0].name)
            scene = to_canonical_frame(load_scene(js))
            image = cv2.imread(str(img_path))
            context = prepare_context(scene.camera, corners_mm=corners_of(scene))
            dets = detections_from_ground_truth(scene) if source == "gt" else None
            analyze_frame(image, context, detections=dets)
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(10):
                analyze_frame(image, context, detections=dets)
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(15)
            print(f"-- profile, 10 frames of {img_path.name}, source {source}")
            print("\n".join(buf.getvalue().splitlines()[:40]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
