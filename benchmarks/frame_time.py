"""Median CPU ms per overhead frame through the whole frame analysis, one core.

Each overhead frame (a ``overhead_*.json`` ground truth beside its image) is
analysed once to warm the still camera's caches and then timed, ``--repeat``
times (warming each time, since frames of other cameras come between). Prints the
median over frames and the median of each stage the analysis records
(hidden regions, detection, board assembly with the squop calls).

``--against CHECKOUT`` times this checkout and another one (e.g. ``git
worktree add /tmp/old COMMIT``) in two worker processes, frame by frame in
turn (which one goes first drawn at random), so that the machine's drift
and the load of other work fall on both alike; it prints both medians and
the median of the per-frame differences. On a shared machine that is the
figure to trust for a change of a few ms; whole runs one after the other
differ by 10 ms.

Usage::

    .venv/bin/python benchmarks/frame_time.py [--repeat 3] DIR [DIR ...]
    .venv/bin/python benchmarks/frame_time.py --against /tmp/old [--repeat 2] DIR [DIR ...]
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


def _frames(dirs: list[Path]) -> list[tuple[object, object]]:
    """(image, prepared context) of every overhead frame with ground truth."""
    frames = []
    for folder in dirs:
        for gt_path in sorted(folder.glob("overhead_*.json")):
            scene = load_scene(gt_path)
            image = cv2.imread(str(gt_path.with_suffix(".jpg")))
            frames.append((image, prepare_context(scene.camera, corners_mm=corners_of(scene))))
    return frames


def _timed(image: object, context: object) -> tuple[float, dict[str, float]]:
    """CPU ms of one warm analysis of the frame, and its stages' wall ms."""
    analyze_frame(image, context)  # this camera's caches, as for a still camera
    start = time.process_time()
    analysis = analyze_frame(image, context)
    return (time.process_time() - start) * 1000.0, dict(analysis.timings_ms)


def _worker(dirs: list[Path]) -> int:
    """Answer frame indices read from stdin with their CPU ms (for ``--against``)."""
    frames = _frames(dirs)
    print(len(frames), flush=True)
    for line in sys.stdin:
        cpu_ms, _ = _timed(*frames[int(line)])
        print(f"{cpu_ms:.4f}", flush=True)
    return 0


def _against(other: Path, dirs: list[Path], repeat: int) -> int:
    """Time this checkout and ``other`` frame by frame in turn."""
    from benchmarks.checkouts import TwoCheckouts

    checkouts = TwoCheckouts(Path(__file__), other, ["--worker", *[str(d.resolve()) for d in dirs]])
    counts = {name: int(checkouts.read(name)) for name in ("this", "other")}
    if len(set(counts.values())) != 1 or counts["this"] == 0:
        checkouts.close()
        print(f"the checkouts found different or no frames: {counts}")
        return 1
    answers = checkouts.in_turn([str(i) for i in range(counts["this"])], repeat)
    checkouts.close()
    times = {name: [float(a) for a in got] for name, got in answers.items()}
    diffs = [a - b for a, b in zip(times["this"], times["other"], strict=True)]
    # The quartiles of the differences show how much the machine's load
    # moved single pairs.
    low, _, high = statistics.quantiles(diffs, n=4) if len(diffs) > 1 else (diffs[0],) * 3
    print(
        f"{len(diffs)} frame pairs: this checkout median CPU {statistics.median(times['this']):.1f}"
        f" ms, {other} {statistics.median(times['other']):.1f} ms; per-frame difference"
        f" (this - other) median {statistics.median(diffs):+.2f} ms"
        f" (quartiles {low:+.2f}, {high:+.2f})"
    )
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to time frame by frame")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    if args.worker:
        return _worker(args.dirs)
    if args.against is not None:
        return _against(args.against, args.dirs, args.repeat)
    cpu_ms: list[float] = []
    stages: dict[str, list[float]] = {}
    for image, context in _frames(args.dirs):
        for _ in range(args.repeat):
            ms, stage_ms = _timed(image, context)
            cpu_ms.append(ms)
            for name, value in stage_ms.items():
                stages.setdefault(name, []).append(value)
    if not cpu_ms:
        print("no overhead frames with ground truth found")
        return 1
    print(f"{len(cpu_ms)} frame analyses, median CPU {statistics.median(cpu_ms):.1f} ms")
    print(
        "stages, median wall ms: "
        + ", ".join(f"{name} {statistics.median(v):.1f}" for name, v in stages.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
