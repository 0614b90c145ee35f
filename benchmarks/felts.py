"""Vision figures per felt colour, on fresh generated overhead scenes.

The product meets mats of other colours than the shared scenes show. This
renders the same number of overhead scenes on each felt the generator knows
(``tools.scenegen --felt``; seeds ``SEED + 10 * i`` for the i-th felt, so
each felt gets scenes of its own), analyses them as ``vision.py --source
image`` does (the scene's own camera), and prints one row per felt, with
each wink colour's recall and median centre error: a wink of the felt's own
hue (green on green felt) is the hard case.

The scenes are written once into ``--out`` and reused by later runs with the
same seed and count.

Usage::

    .venv/bin/python benchmarks/felts.py [--seed 3660] [--count 6] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

# One core, as the other benchmarks.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.vision import Tally, by_colour, run_one, scene_paths, score_analysis  # noqa: E402
from tools.groundtruth import load_scene, to_canonical_frame  # noqa: E402
from tools.scenegen import generate_scene, write_scene  # noqa: E402
from tools.scenegen.render import FELT_COLOURS_BGR  # noqa: E402

#: The felts, in the order their seeds are given out.
FELTS: tuple[str, ...] = tuple(FELT_COLOURS_BGR)


def _scenes(out: Path, felt: str, first_seed: int, count: int) -> Path:
    """The folder of ``count`` overhead scenes on ``felt``, rendered when missing."""
    folder = out / f"{felt}-{first_seed}-{count}"
    folder.mkdir(parents=True, exist_ok=True)
    for seed in range(first_seed, first_seed + count):
        if not any(folder.glob(f"overhead_{seed:05d}.json")):
            write_scene(generate_scene("overhead", seed, felt=felt), folder)
    return folder


def _row(felt: str, t: Tally) -> str:
    """One felt's figures as a table row."""
    err = t.centre_err_mm
    pct = lambda n, d: f"{100.0 * n / d:.1f}" if d else "n/a"  # noqa: E731
    return (
        f"| {felt} | {t.images} | {pct(t.matched, t.gt_visible)} | "
        f"{statistics.median(err):.2f} / {float(np.percentile(err, 95)):.2f} | "
        f"{pct(t.size_right, t.matched)} | {pct(t.clear_found, t.clear_gt_squops)} | "
        f"{t.marginal_confident_wrong}/{t.marginal} | {t.exact_tiddlies}/{t.images} | "
        f"{by_colour(t)} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3660, help="first felt's first seed")
    parser.add_argument("--count", type=int, default=6, help="scenes per felt")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(tempfile.gettempdir()) / "winkref-felts",
        help="where the scenes are written (and found again)",
    )
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error(f"--count must be at least 1, not {args.count}")
    cv2.setNumThreads(1)
    print(
        "| felt | frames | recall % | centre mm median / p95 | size % | clear squops % "
        "| marginal confidently wrong | exact tiddlies "
        "| by colour: found/visible (centre median mm) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for i, felt in enumerate(FELTS):
        folder = _scenes(args.out, felt, args.seed + 10 * i, args.count)
        tally = Tally()
        for img_path, js in scene_paths([folder]):
            scene = to_canonical_frame(load_scene(js))
            analysis, _, _ = run_one(img_path, scene, "image", 0.0, 0)
            score_analysis(scene, analysis, tally)
        print(_row(felt, tally), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
