"""Benchmark `winkref count`: exact tiddlies for every colour, per image.

For every ``overhead_*`` and ``oblique_*`` image with ground truth in the
given folders (default ``/work/shared/scenes`` and ``sample_images``), runs the
count (calibration -> board -> rule 19.1) and compares each colour's tiddlies
with the ground truth's ``counts[colour].tiddlies``.

``--gt-camera`` uses the ground-truth camera instead of calibrating, to see
the count's accuracy apart from calibration's.

Usage::

    .venv/bin/python benchmarks/count.py [--gt-camera] [FOLDER ...]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.commands import count as count_cmd  # noqa: E402
from tools.groundtruth import load_scene  # noqa: E402

DEFAULT_FOLDERS = [Path("/work/shared/scenes"), ROOT / "sample_images"]


def main(argv: list[str]) -> int:
    gt_camera = "--gt-camera" in argv
    folders = [Path(a) for a in argv if not a.startswith("--")] or DEFAULT_FOLDERS
    exact = total = 0
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
                camera = scene.camera

                def calibrate(_image, camera=camera):  # noqa: ANN001, ANN202
                    return camera

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
            print(
                json.dumps(
                    {
                        "image": jpg.name,
                        "truth": truth,
                        "got": got,
                        "exact": ok,
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
        print(f"median time per image: {statistics.median(times):.2f} s")
    else:
        print("no overhead or oblique images with ground truth found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
