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

Usage::

    .venv/bin/python benchmarks/count.py [--gt-camera] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules.board import Colour  # noqa: E402
from rules.scoring import score_by_tiddlies  # noqa: E402
from service.commands import count as count_cmd  # noqa: E402
from tools.groundtruth import load_scene, to_canonical_frame  # noqa: E402

DEFAULT_FOLDERS = [Path("/work/shared/scenes"), ROOT / "sample_images"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--gt-camera", action="store_true")
    args = parser.parse_args(argv)
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
    else:
        print("no overhead or oblique images with ground truth found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
