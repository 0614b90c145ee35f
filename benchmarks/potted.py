"""Benchmark potted winks: seen in the pot, against the ground truth.

A potted wink the camera sees is certain; one only inferred from the rule
2.1.1 count (six of each colour, fewer found elsewhere) is flagged for the
umpire. For every ``overhead_*`` and ``oblique_*`` image (and every game
frame, ``frame_*``) with ground truth in the given folders, this analyses
the photo with the scene's camera (as ``benchmarks/vision.py --source
image`` does) and counts, per colour:

* potted winks in the truth;
* potted winks on the board that vision saw (not inferred), up to the truth's
  number ("seen right");
* potted winks seen beyond the truth's number ("seen wrongly": a phantom in
  the pot, or a wink on the mat taken as potted).

Usage::

    .venv/bin/python benchmarks/potted.py [--list] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402

from benchmarks.vision import corners_of  # noqa: E402
from rules.board import Colour, WinkStatus  # noqa: E402
from tools.groundtruth import load_scene, to_canonical_frame  # noqa: E402
from vision.detect import clear_caches  # noqa: E402
from vision.pipeline import analyze_frame, prepare_context  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parents[1]
    defaults = (root.parent / "shared" / "scenes", root / "sample_images")
    parser.add_argument(
        "folders",
        nargs="*",
        type=Path,
        default=[p for p in defaults if p.is_dir()],
        help="folders of scenes with ground truth (default: ../shared/scenes and sample_images)",
    )
    parser.add_argument("--list", action="store_true", help="print every image with a potted wink")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    by_profile: dict[str, Counter[str]] = {}
    for folder in args.folders:
        paths = sorted(
            p
            for pattern in ("overhead_*.json", "oblique_*.json", "frame_*.json")
            for p in folder.glob(pattern)
        )
        for js in paths:
            image = cv2.imread(str(js.with_suffix(".jpg")))
            if image is None:
                continue
            scene = to_canonical_frame(load_scene(js))
            if scene.pot is None:
                continue
            truth = Counter(w.colour for w in scene.winks if w.status is WinkStatus.POTTED)
            if not truth:
                continue
            context = prepare_context(scene.camera, corners_mm=corners_of(scene))
            try:
                board = analyze_frame(image, context).board
            except ValueError as exc:
                print(f"{js}: not analysed ({exc})", file=sys.stderr)
                continue
            finally:
                clear_caches()
            seen = Counter(
                w.colour for w in board.winks if w.status is WinkStatus.POTTED and not w.inferred
            )
            tally = by_profile.setdefault(scene.profile, Counter())
            for colour in Colour:
                tally["truth"] += truth[colour]
                tally["seen right"] += min(seen[colour], truth[colour])
                tally["seen wrongly"] += max(seen[colour] - truth[colour], 0)
            tally["images"] += 1
            if args.list:
                print(
                    f"{js.parent.name}/{js.name} ({scene.pot.material} pot): truth "
                    f"{dict((c.value, k) for c, k in truth.items())}, seen "
                    f"{dict((c.value, k) for c, k in seen.items())}"
                )
    if not by_profile:
        print("no image with a potted wink", file=sys.stderr)
        return 1
    for profile, tally in sorted(by_profile.items()):
        print(
            f"{profile}: {tally['images']} images, potted winks {tally['truth']}, seen right "
            f"{tally['seen right']} ({100.0 * tally['seen right'] / tally['truth']:.1f}%), "
            f"seen wrongly {tally['seen wrongly']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
