"""Seconds per close-up photo through `winkref review`'s whole path.

Each ``closeup_*.jpg`` in the folders is read and reviewed with
``service.commands.review.review_any`` (the close-up reader, and the
whole-mat probe where it cannot call), ``--repeat`` times, after one warm-up
photo. Prints each photo's median wall-clock time, the median over photos
(issue 5's target: at most 1.5 s per 12 MP photo) and how many photos are
over 1.5 s; then the same for CPU time (all threads), which the machine's
other tenants disturb less: compare changes by it.

``--against CHECKOUT`` times this checkout and another one (e.g. ``git
worktree add /tmp/old COMMIT``) photo by photo in turn (see
``benchmarks/checkouts.py``): whole runs one after the other differed by a
third on this shared machine.

Usage::

    .venv/bin/python benchmarks/review_time.py [--repeat 3] DIR [DIR ...]
    .venv/bin/python benchmarks/review_time.py --against /tmp/old [--repeat 3] DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# One core: numpy's BLAS too.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path.cwd()
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_S = 1.5


def _photos(dirs: list[Path]) -> list[Path]:
    return [p for d in dirs for p in sorted(d.glob("closeup_*.jpg"))]


def _review_seconds(path: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds to read and review one photo."""
    import cv2

    from service.commands.review import review_any

    t0, c0 = time.perf_counter(), time.process_time()
    image = cv2.imread(str(path))
    try:
        review_any(image)
    except ValueError:
        pass  # a refusal is timed too: the umpire waits for it as well
    return time.perf_counter() - t0, time.process_time() - c0


def _worker() -> int:
    """Answer photo paths read from stdin with their review seconds (for ``--against``)."""
    for line in sys.stdin:
        wall_s, cpu_s = _review_seconds(Path(line.strip()))
        print(f"{wall_s:.4f} {cpu_s:.4f}", flush=True)
    return 0


def _report(label: str, times: dict[Path, list[tuple[float, float]]]) -> dict[Path, float]:
    """Print the medians over photos; return each photo's median CPU seconds."""
    wall = {p: statistics.median(t[0] for t in v) for p, v in times.items()}
    cpu = {p: statistics.median(t[1] for t in v) for p, v in times.items()}
    for kind, medians in (("wall", wall), ("cpu", cpu)):
        over = sum(v > TARGET_S for v in medians.values())
        print(
            f"{label} {kind}: median over photos {statistics.median(medians.values()):.2f} s "
            f"(target <= {TARGET_S} s); {over} of {len(medians)} photos over {TARGET_S} s"
        )
    return cpu


def _against(other: Path, photos: list[Path], repeat: int) -> int:
    from benchmarks.checkouts import TwoCheckouts

    checkouts = TwoCheckouts(Path(__file__), other, ["--worker"])
    items = [str(p.resolve()) for p in photos]
    checkouts.in_turn(items[:1], 1)  # warm: imports and first-call set-up
    answers = checkouts.in_turn(items, repeat)
    checkouts.close()
    times: dict[str, dict[Path, list[tuple[float, float]]]] = {"this": {}, "other": {}}
    for name, got in answers.items():
        for k, answer in enumerate(got):
            wall_s, cpu_s = (float(v) for v in answer.split())
            times[name].setdefault(photos[k % len(photos)], []).append((wall_s, cpu_s))
    for photo in photos:
        mine, theirs = times["this"][photo], times["other"][photo]
        print(
            f"{photo.name}: wall this {statistics.median(t[0] for t in mine):.2f} s, "
            f"other {statistics.median(t[0] for t in theirs):.2f} s; "
            f"cpu this {statistics.median(t[1] for t in mine):.2f} s, "
            f"other {statistics.median(t[1] for t in theirs):.2f} s"
        )
    this = _report(f"this ({ROOT})", times["this"])
    that = _report(f"other ({other})", times["other"])
    change = statistics.median(this[p] - that[p] for p in photos)
    print(f"median per-photo change of cpu time, this - other: {change:+.2f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to time photo by photo")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker()
    photos = _photos(args.dirs or [Path("/work/shared/scenes"), ROOT / "sample_images"])
    if not photos:
        print("no closeup_*.jpg photos in the folders given", file=sys.stderr)
        return 2
    if args.against is not None:
        return _against(args.against, photos, args.repeat)
    _review_seconds(photos[0])  # warm
    times: dict[Path, list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for photo in photos:
            times.setdefault(photo, []).append(_review_seconds(photo))
    for photo in photos:
        wall = statistics.median(t[0] for t in times[photo])
        cpu = statistics.median(t[1] for t in times[photo])
        print(f"{photo.name}: wall {wall:.2f} s, cpu {cpu:.2f} s")
    _report("review", times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
