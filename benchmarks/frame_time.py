"""Median CPU ms per overhead frame through the whole frame analysis, one core.

For A/B timing of two commits on a noisy machine: run it alternately in two
checkouts (e.g. ``git worktree add /tmp/old COMMIT``) on the same folders and
compare the medians pairwise. Each overhead frame is analysed once to warm
the still camera's caches, then ``--repeat`` times.

Usage::

    .venv/bin/python benchmarks/frame_time.py [--repeat 3] DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# One core: numpy's BLAS too, as OpenCV below.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import cv2  # noqa: E402

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT))

from benchmarks.vision import corners_of  # noqa: E402
from tools.groundtruth import load_scene  # noqa: E402
from vision.pipeline import analyze_frame, prepare_context  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    cpu_ms = []
    for folder in args.dirs:
        for gt_path in sorted(folder.glob("overhead_*.json")):
            scene = load_scene(gt_path)
            image = cv2.imread(str(gt_path.with_suffix(".jpg")))
            context = prepare_context(scene.camera, corners_mm=corners_of(scene))
            analyze_frame(image, context)
            for _ in range(args.repeat):
                t0 = time.process_time()
                analyze_frame(image, context)
                cpu_ms.append((time.process_time() - t0) * 1000.0)
    if not cpu_ms:
        print("no overhead frames with ground truth found")
        return 1
    print(f"{len(cpu_ms)} frame analyses, median CPU {statistics.median(cpu_ms):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
