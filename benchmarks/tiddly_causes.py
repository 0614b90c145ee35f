"""Why a frame's tiddlies are wrong: the causes per colour, tallied over frames.

For each overhead scene the board from the photo (``vision.pipeline.analyze_frame``
with the scene's camera, as ``benchmarks/vision.py --source image``) is
compared with the ground truth. For every colour whose tiddlies (rule 19.1)
differ, each wink that scores differently is given one cause:

* ``missed wink (seeable)`` / ``missed wink (hidden)``: a wink on the mat
  matched no detection (hidden: the pot hides most of it from the camera, or
  winks above cover most of its rim, as in ``benchmarks/vision.py``'s
  "seeable"); the rule 2.1.1 count then usually infers it potted;
* ``false wink``: a wink on the board that matches none in the ground truth;
* ``marginal pair, two colours`` / ``marginal pair, one colour``: a squop
  call (squop or not, or which wink is on top) on a pair whose true plan
  separation is under 2 mm: flagged for the umpire, so a best guess;
* ``clear pair, two colours`` / ``clear pair, one colour``: the same on a
  pair 2 mm or more apart (or overlapping);
* ``missed wink (the other of a pair)``: a wink's status is wrong because
  the wink on or under it was not found;
* ``status``: any other status difference (unplayed, off, potted or not);
* ``potted count``: the potted count differs with no missed or false wink of
  the colour to explain it.

Printed: per frame its causes (``--verbose``), the frames with exact
tiddlies, the colours with wrong tiddlies and by how many tiddlies in all,
then how many frames show each cause and in how many it is the only one
(fixing it alone would make the frame exact).

Usage::

    .venv/bin/python benchmarks/tiddly_causes.py [--verbose] DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rules.board import Board, Colour, WinkStatus  # noqa: E402
from tools.groundtruth import Scene, load_scene  # noqa: E402

# benchmarks/vision.py shares its name with the ``vision`` package: load it by path.
_spec = importlib.util.spec_from_file_location("bench_vision", ROOT / "benchmarks" / "vision.py")
assert _spec is not None and _spec.loader is not None  # a file shipped with this one
bench_vision = importlib.util.module_from_spec(_spec)
sys.modules["bench_vision"] = bench_vision
_spec.loader.exec_module(bench_vision)

MATCH_RADIUS_MM = bench_vision.MATCH_RADIUS_MM
CLEAR_MM = bench_vision.CLEAR_MM


def _match(scene: Scene, board: Board) -> dict[str, str]:
    """Board wink id -> ground-truth id, as ``benchmarks/vision.py`` matches them."""
    ours = [w for w in board.winks if w.status is not WinkStatus.POTTED and w.x_mm is not None]
    gts = [w for w in scene.winks if w.status is not WinkStatus.POTTED]
    if not ours or not gts:
        return {}
    dist = np.array(
        [[math.hypot(o.x_mm - g.mat_xy_mm[0], o.y_mm - g.mat_xy_mm[1]) for g in gts] for o in ours]  # type: ignore[operator]
    )
    colour_cost = np.array([[0.0 if o.colour is g.colour else 5.0 for g in gts] for o in ours])
    rows, cols = linear_sum_assignment(dist + colour_cost)
    return {
        ours[r].id: gts[c].id
        for r, c in zip(rows, cols, strict=True)
        if dist[r, c] <= MATCH_RADIUS_MM
    }


def frame_causes(scene: Scene, board: Board) -> tuple[set[str], list[str]]:
    """The causes of the frame's wrong tiddlies, and one line per wink for the verbose listing."""
    gt_tiddlies = {c: n.tiddlies for c, n in scene.counts.items()}
    if board.tiddlies == gt_tiddlies:
        return set(), []
    match = _match(scene, board)
    inv = {g: o for o, g in match.items()}
    ours_by_id = {w.id: w for w in board.winks}
    gt_pairs = {(w.id, low) for w in scene.winks for low in w.squops}
    our_pairs = {
        (match[w.id], match[low])
        for w in board.winks
        for low in w.squops
        if w.id in match and low in match
    }
    causes: set[str] = set()
    lines = []
    for colour in Colour:
        if gt_tiddlies[colour] == board.tiddlies[colour]:
            continue
        lines.append(f"  {colour.value}: {gt_tiddlies[colour]} true, {board.tiddlies[colour]} ours")
        explained = False
        for g in scene.winks:
            if g.colour is not colour or g.status is WinkStatus.POTTED:
                continue
            if g.id not in inv:
                seeable = bench_vision.is_seeable(scene, g)
                cause = f"missed wink ({'seeable' if seeable else 'hidden'})"
                causes.add(cause)
                explained = True
                lines.append(f"    {g.id} ({g.status.value}): {cause}")
                continue
            ours = ours_by_id[inv[g.id]]
            if ours.status is g.status:
                continue
            pair_causes = []
            # A reversed pair is in both sets, once each way: one cause.
            for pair in {tuple(sorted(p)) for p in gt_pairs ^ our_pairs}:
                if g.id not in pair:
                    continue
                other = pair[1] if pair[0] == g.id else pair[0]
                sep = bench_vision._gt_separation(scene, *pair)
                two = scene.by_id[other].colour is not g.colour
                if other not in inv:
                    cause = "missed wink (the other of a pair)"
                else:
                    kind = "marginal" if abs(sep) < CLEAR_MM else "clear"
                    cause = f"{kind} pair, {'two colours' if two else 'one colour'}"
                pair_causes.append(f"{cause} with {other} ({sep:+.1f} mm)")
                causes.add(cause)
            if not pair_causes:
                causes.add("status")
                pair_causes.append("status")
            lines.append(
                f"    {g.id}: {g.status.value} -> {ours.status.value}: " + "; ".join(pair_causes)
            )
        for w in board.winks:
            if w.colour is colour and w.status is not WinkStatus.POTTED and w.id not in match:
                causes.add("false wink")
                explained = True
                where = f"({w.x_mm:.0f}, {w.y_mm:.0f})"
                lines.append(f"    {w.id} ({w.status.value}) at {where}: false")
        gt_potted = scene.counts[colour].potted
        our_potted = board.count(colour, WinkStatus.POTTED)
        if gt_potted != our_potted:
            lines.append(f"    potted {gt_potted} true, {our_potted} ours")
            if not explained:
                causes.add("potted count")
    return causes, lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--verbose", action="store_true", help="list each frame's causes")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    frames = exact = 0
    colours_wrong = error = 0
    in_frames: Counter[str] = Counter()
    sole: Counter[str] = Counter()
    for img, js in bench_vision.scene_paths(args.dirs):
        scene = load_scene(js)
        if scene.profile != "overhead":
            continue
        analysis = bench_vision.run_one(img, scene, "image", 0.0, 0)[0]
        causes, lines = frame_causes(scene, analysis.board)
        frames += 1
        for colour, counts in scene.counts.items():
            off_by = abs(analysis.board.tiddlies[colour] - counts.tiddlies)
            colours_wrong += off_by > 0
            error += off_by
        exact += not causes and not lines
        for cause in causes:
            in_frames[cause] += 1
        if len(causes) == 1:
            sole[next(iter(causes))] += 1
        if args.verbose and lines:
            print(f"{img.parent.name}/{img.name}: " + ", ".join(sorted(causes)))
            print("\n".join(lines))
    print(f"overhead frames {frames}, exact tiddlies {exact}")
    print(
        f"colours with wrong tiddlies {colours_wrong} of {4 * frames}; "
        f"tiddlies off by {error} in all (sum over colours of |ours - true|)"
    )
    print(f"{'cause':36s} frames  only cause")
    for cause, n in in_frames.most_common():
        print(f"{cause:36s} {n:6d} {sole[cause]:11d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
