"""Benchmark `winkref count`: exact tiddlies for every colour, per image.

For every ``overhead_*`` and ``oblique_*`` image with ground truth in the
given folders (default ``/work/shared/scenes`` and ``sample_images``), runs the
count (calibration -> board -> rule 19.1) and compares each colour's tiddlies
with the ground truth's ``counts[colour].tiddlies``.

``--gt-camera`` uses the ground-truth camera and corner colours (turned
into the canonical frame, blue's corner at y > 0) instead of calibrating, to see the count's
accuracy apart from calibration's.

Besides exact tiddlies it checks the count's honesty: whether the true
tiddlies lie inside the range the count states for its unsure winks, whether
the game score is right, and how often the count says the score is settled
("however the unsure winks go") when it is in fact wrong.

``--causes`` lists, for every colour counted wrong, why: each wink whose
status differs from the truth (which status was mistaken for which, whether
the count flagged it unsure, and for a squop the truth's separation), winks
of the colour not found at all, detections that match no wink, and potted
counts that differ. A table of the causes follows the summary.

Usage::

    .venv/bin/python benchmarks/count.py [--gt-camera] [--causes] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from scipy.optimize import linear_sum_assignment

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules.board import Board, Colour, WinkStatus  # noqa: E402
from rules.scoring import score_by_tiddlies  # noqa: E402
from service.commands import count as count_cmd  # noqa: E402
from tools.groundtruth import Scene, half_turned, load_scene, to_canonical_frame  # noqa: E402
from vision.status import pot_hidden_fraction  # noqa: E402

DEFAULT_FOLDERS = [Path("/work/shared/scenes"), ROOT / "sample_images"]
#: A wink of ours further than this from every true wink matches none, mm.
MATCH_RADIUS_MM = 8.0
#: A pair closer than this to touching is marginal (as in benchmarks/vision.py), mm.
CLEAR_MM = 2.0


def _match(scene: Scene, board: Board) -> tuple[dict[str, str], float]:
    """Our wink id -> true wink id for the winks on the mat, and the summed distance."""
    truth = [w for w in scene.winks if w.status is not WinkStatus.POTTED]
    ours = [w for w in board.winks if w.mat_xy is not None]
    if not truth or not ours:
        return {}, 0.0
    cost = np.array(
        [
            [
                math.hypot(o.mat_xy[0] - g.centre_mm[0], o.mat_xy[1] - g.centre_mm[1])
                + (0.0 if o.colour is g.colour else 5.0)
                for g in truth
            ]
            for o in ours
        ]
    )
    capped = np.minimum(cost, 100.0)
    rows, cols = linear_sum_assignment(capped)
    kept = {
        ours[r].id: truth[c].id
        for r, c in zip(rows, cols, strict=True)
        if cost[r, c] <= MATCH_RADIUS_MM
    }
    return kept, float(capped[rows, cols].sum())


def _separation_mm(scene: Scene, a: str, b: str) -> float:
    """The truth's plan-view separation of two winks (negative: overlap), mm."""
    for m in scene.marginal_pairs:
        if set(m.ids) == {a, b}:
            return m.plan_gap_mm
    wa, wb = scene.by_id[a], scene.by_id[b]
    gap = math.hypot(wa.centre_mm[0] - wb.centre_mm[0], wa.centre_mm[1] - wb.centre_mm[1])
    return gap - (wa.diameter_mm + wb.diameter_mm) / 2


def causes_of(scene: Scene, board: Board) -> dict[Colour, list[str]]:
    """Why each colour whose tiddlies differ from the truth's does, in words.

    ``scene`` is in the canonical frame; the board is compared with it or
    with its half-turn, whichever it matches better (a count whose
    calibration could not tell the mat's ends apart may be turned).
    """
    match, cost = _match(scene, board)
    turned = half_turned(scene)
    match_t, cost_t = _match(turned, board)
    if cost_t < cost:
        scene, match = turned, match_t
    truth_tiddlies = {c: n.tiddlies for c, n in scene.counts.items()}
    ours_by_id = {w.id: w for w in board.winks}
    found = set(match.values())
    out: dict[Colour, list[str]] = {}
    for colour in Colour:
        if board.tiddlies is not None and board.tiddlies.get(colour) == truth_tiddlies[colour]:
            continue
        causes = []
        for our_id, gt_id in match.items():
            ours, gt = ours_by_id[our_id], scene.by_id[gt_id]
            if colour in (gt.colour, ours.colour) and ours.colour is not gt.colour:
                # A colour misread moves a tiddly from one colour to another.
                causes.append(f"{gt_id}: {gt.colour.value} read as {ours.colour.value} (colour)")
                continue
            if gt.colour is not colour or ours.status is gt.status:
                continue
            text = f"{gt.status.value} read as {ours.status.value}"
            text += ", flagged" if ours.uncertain else ", NOT flagged"
            if {gt.status, ours.status} <= {WinkStatus.FREE, WinkStatus.SQUOPPED}:
                partners = {*gt.squops, *gt.squopped_by}
                partners |= {
                    match[w.id] for w in board.winks if w.id in match and our_id in w.squops
                }
                partners |= {match[k] for k in ours.squops if k in match}
                partners.discard(gt_id)
                if partners:
                    other = min(partners, key=lambda k: abs(_separation_mm(scene, gt_id, k)))
                    sep = _separation_mm(scene, gt_id, other)
                    text += " (squop call, " + ("marginal" if abs(sep) < CLEAR_MM else "clear")
                    text += ", same colour)" if scene.by_id[other].colour is colour else ")"
                    if other not in found:
                        text += " (its partner not found)"
            causes.append(f"{gt_id}: {text}")
        for gt in scene.winks:
            if gt.colour is not colour or gt.status is WinkStatus.POTTED or gt.id in found:
                continue
            hidden = pot_hidden_fraction(
                scene.camera,
                gt.mat_xy_mm,
                gt.diameter_mm / 2,
                scene.pot.centre_mm[:2] if scene.pot else (0.0, 0.0),
                top_z_mm=gt.centre_mm[2] + gt.thickness_mm / 2,
            )
            where = "hidden by the pot" if hidden > 0.75 else "not found"
            causes.append(f"{gt.id}: {gt.status.value} wink {where}")
        for w in board.winks:
            if w.colour is colour and w.mat_xy is not None and w.id not in match:
                causes.append(f"{w.id}: {w.status.value} detection matching no wink")
        true_potted = scene.counts[colour].potted
        our_potted = board.count(colour, WinkStatus.POTTED)
        if true_potted != our_potted:
            inferred = sum(w.inferred for w in board.of_colour(colour))
            causes.append(f"potted {our_potted} (inferred {inferred}), truly {true_potted}")
        out[colour] = causes
    return out


def cause_kind(cause: str) -> str:
    """A cause without the wink's id and numbers, for the table."""
    text = cause.split(": ", 1)[-1]
    if text.startswith("potted "):
        return "potted count differs"
    if text.endswith("(colour)"):
        return "colour misread"
    return text


def cause_area(kind: str) -> str:
    """Which part of the program a cause (from :func:`cause_kind`) points at."""
    if "partner not found" in kind:
        return "detection (the wink over or under it missed)"
    if kind.endswith("not found") or "matching no wink" in kind or kind == "colour misread":
        return "detection (a wink missed or a stray detection)"
    if "hidden by the pot" in kind:
        return "hidden by the pot (inferred potted instead; flagged)"
    if "squop call" in kind:
        return "squop calls"
    if kind == "potted count differs":
        return "potted inference (follows missed or hidden winks)"
    return "status logic (" + kind.split(",")[0] + ")"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--gt-camera", action="store_true")
    parser.add_argument("--causes", action="store_true", help="say why each wrong count is")
    args = parser.parse_args(argv)
    kinds: Counter[str] = Counter()
    gt_camera = args.gt_camera
    folders = args.folders or DEFAULT_FOLDERS
    exact = total = in_range = score_right = settled = settled_wrong = 0
    times = []
    for folder in folders:
        for jpg in sorted(folder.glob("*.jpg")):
            if not jpg.name.startswith(("overhead_", "oblique_")):
                continue
            gt_path = jpg.with_suffix(".json")
            if not gt_path.exists():
                continue
            scene = load_scene(gt_path)
            truth = {c.value: v.tiddlies for c, v in scene.counts.items()}
            calibrate = None
            if gt_camera:
                canonical = to_canonical_frame(scene)
                # The camera and each colour's corner, as a calibration gives them.
                truth_calibration = SimpleNamespace(
                    camera=canonical.camera,
                    corners_mm={b.colour: b.corner for b in canonical.baselines},
                )

                def calibrate(_image, cal=truth_calibration):  # noqa: ANN001, ANN202
                    return cal

            t0 = time.perf_counter()
            try:
                out = json.loads(count_cmd.run(jpg, json_output=True, calibrate=calibrate))
                got = out["tiddlies"]
                err = None
            except ValueError as exc:
                got, err = None, str(exc)
            times.append(time.perf_counter() - t0)
            total += 1
            ok = got is not None and all(got.get(c) == n for c, n in truth.items())
            exact += ok
            true_score = score_by_tiddlies({Colour(c): n for c, n in truth.items()}).notation
            inside = got is not None and all(
                out["tiddlies_range"][c][0] <= n <= out["tiddlies_range"][c][1]
                for c, n in truth.items()
            )
            in_range += inside
            score_ok = got is not None and out["notation"] == true_score
            score_right += score_ok
            is_settled = got is not None and out["score_settled"]
            settled += is_settled
            settled_wrong += is_settled and not score_ok
            why = {}
            if args.causes and got is not None and not ok:
                board = Board.from_json_dict(out["board"])
                found = causes_of(to_canonical_frame(scene), board)
                why = {c.value: v for c, v in found.items()}
                kinds.update(cause_kind(c) for v in found.values() for c in v)
            print(
                json.dumps(
                    {
                        "image": jpg.name,
                        "truth": truth,
                        "got": got,
                        "exact": ok,
                        "truth_in_range": inside,
                        "score": None if got is None else out["notation"],
                        "true_score": true_score,
                        "settled": is_settled,
                        **({"error": err} if err else {}),
                        **({"causes": why} if why else {}),
                    }
                )
            )
    print()
    if total:
        print(
            f"exact tiddlies for every colour: {exact}/{total} = {100 * exact / total:.0f}% "
            "(target >= 90%)"
        )
        print(f"true tiddlies inside the stated range, every colour: {in_range}/{total}")
        print(f"game score right: {score_right}/{total}")
        print(
            f"score said to be settled: {settled}/{total}, of which wrong: {settled_wrong} "
            "(must be 0)"
        )
        print(f"median time per image: {statistics.median(times):.2f} s")
        if kinds:
            print("causes in the colours counted wrong (winks or counts):")
            for kind, n in kinds.most_common():
                print(f"  {n:4d}  {kind}")
            areas: Counter[str] = Counter()
            for kind, n in kinds.items():
                areas[cause_area(kind)] += n
            print("by area:")
            for area, n in areas.most_common():
                print(f"  {n:4d}  {area}")
    else:
        print("no overhead or oblique images with ground truth found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
