"""Still camera, shot by shot: time per frame and agreement with a whole-frame analysis.

A live referee sees the same mat frame after frame; between shots nothing
moves, and a shot moves a wink or two. ``vision.pipeline.StillCameraAnalyzer``
returns an unchanged frame's last analysis, and searches a frame that
changed in one place only round the change. This benchmark plays short
games on generated scenes: each scene is rendered again with one played
wink moved to a free spot (the same felt, light and camera; fresh sensor
noise each frame), then another, then one wink potted. Every frame is also
analysed whole, from scratch, and the two boards are compared wink by wink.

Usage::

    .venv/bin/python benchmarks/still_camera.py --seed 2000 --count 10
    .venv/bin/python benchmarks/still_camera.py --profile oblique --seed 2100 --count 6

Prints, per path the analyser took (reused / window / whole), the number of
frames and the median time, and how often the window path's board agreed
with the whole-frame analysis (statuses, squops, tiddlies).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

from rules.board import Board  # noqa: E402
from tools.scenegen import cameras, scene_rng  # noqa: E402
from tools.scenegen.geometry import compute_facts  # noqa: E402
from tools.scenegen.layout import Layout, flat_at, make_layout  # noqa: E402
from tools.scenegen.render import render_scene  # noqa: E402
from vision.detect import clear_caches  # noqa: E402
from vision.pipeline import StillCameraAnalyzer, analyze_frame, prepare_context  # noqa: E402

#: Sensor noise drawn afresh for each frame (8-bit levels), and the JPEG quality.
FRAME_NOISE_LEVELS = 1.5
JPEG_QUALITY = 90


def _free_spot(layout: Layout, rng: np.random.Generator, radius_mm: float) -> np.ndarray | None:
    """A spot on the mat clear of every wink, the pot and the baselines' corners."""
    others = np.array([w.centre[:2] for w in layout.winks if w.placement != "potted"])
    for _ in range(200):
        xy = np.array([rng.uniform(-750.0, 750.0), rng.uniform(-380.0, 380.0)])
        if math.hypot(*xy) < 80.0:
            continue
        if len(others) and np.min(np.hypot(*(others - xy).T)) < 2 * radius_mm + 20.0:
            continue
        return xy
    return None


def _shot(layout: Layout, rng: np.random.Generator, *, pot: bool) -> Layout | None:
    """The layout after one played wink that touches no other moved to a free spot (or potted)."""
    facts = compute_facts(layout.winks)
    in_piles = {up for up, lows in facts.squops.items() if lows} | {
        low for lows in facts.squops.values() for low in lows
    }
    movable = [
        k
        for k, w in enumerate(layout.winks)
        if w.placement == "played" and w.id not in in_piles and abs(w.axis[2]) > 0.99
    ]
    if not movable:
        return None
    k = movable[int(rng.integers(len(movable)))]
    wink = layout.winks[k]
    if pot:
        moved = flat_at(wink, rng.normal(0.0, 3.0, 2), base_z=3.0).with_placement("potted")
    else:
        spot = _free_spot(layout, rng, wink.radius_mm)
        if spot is None:
            return None
        moved = flat_at(wink, spot)
    winks = list(layout.winks)
    winks[k] = moved
    return dataclasses.replace(layout, winks=winks)


def _photo(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noisy = image.astype(np.float32) + rng.normal(0.0, FRAME_NOISE_LEVELS, image.shape)
    ok, buf = cv2.imencode(
        ".jpg", np.clip(noisy, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
    )
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)


@dataclass
class Agreement:
    frames: int = 0
    tiddlies_same: int = 0
    winks: int = 0
    status_same: int = 0
    unmatched: int = 0
    squops_same: int = 0
    max_shift_mm: list[float] = field(default_factory=list)


def compare(window: Board, whole: Board, tally: Agreement) -> None:
    """Wink by wink (matched by colour and position), how the window board agrees."""
    tally.frames += 1
    tally.tiddlies_same += window.tiddlies == whole.tiddlies
    a = [w for w in window.winks if w.mat_xy is not None]
    b = [w for w in whole.winks if w.mat_xy is not None]
    tally.winks += len(b)
    if not a or not b:
        tally.unmatched += abs(len(a) - len(b))
        return
    cost = np.array(
        [
            [
                math.hypot(*(np.subtract(p.mat_xy, q.mat_xy))) + (0 if p.colour is q.colour else 99)
                for q in b
            ]
            for p in a
        ]
    )
    rows, cols = linear_sum_assignment(cost)
    pairs = {a[r].id: b[c].id for r, c in zip(rows, cols, strict=True) if cost[r, c] < 3.0}
    tally.unmatched += len(b) - len(pairs) + len(a) - len(pairs)
    shifts = [cost[r, c] for r, c in zip(rows, cols, strict=True) if cost[r, c] < 3.0]
    tally.max_shift_mm.append(max(shifts) if shifts else 0.0)
    for ida, idb in pairs.items():
        wa, wb = window.wink(ida), whole.wink(idb)
        tally.status_same += wa.status is wb.status
        tally.squops_same += sorted(pairs.get(s, "?") for s in wa.squops) == sorted(wb.squops)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2000)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--profile", choices=("overhead", "oblique"), default="overhead")
    parser.add_argument("--shots", type=int, default=3, help="per scene; the last one pots a wink")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    times: dict[str, list[float]] = {"reused": [], "window": [], "whole": []}
    whole_times: list[float] = []
    agreement = Agreement()
    baseline = Agreement()
    stages: dict[str, list[float]] = {"hidden_regions": [], "detect": [], "assemble": []}
    for seed in range(args.seed, args.seed + args.count):
        rng = scene_rng(args.profile, seed)
        layout = make_layout(rng)
        sampled = cameras.overhead(rng) if args.profile == "overhead" else cameras.oblique(rng)
        camera = sampled.model
        look_state = rng.bit_generator.state
        shots = np.random.default_rng(seed)
        layouts = [layout]
        for pot in [False] * (args.shots - 1) + [True]:
            nxt = _shot(layouts[-1], shots, pot=pot)
            if nxt is not None:
                layouts.append(nxt)
        frames = []
        for lay in layouts:
            rng.bit_generator.state = look_state  # the same felt, light and lens
            image = render_scene(lay, camera, rng, squops=compute_facts(lay.winks).squops)
            frames.append(image)
        context = prepare_context(camera)
        analyzer = StillCameraAnalyzer(context)
        noise = np.random.default_rng(seed + 1)
        # The first frame twice (the second unchanged), then each shot,
        # played through the analyser alone.
        played = []
        for image in [frames[0], frames[0], *frames[1:]]:
            photo = _photo(image, noise)
            t0 = time.perf_counter()
            analysis = analyzer.analyze(photo)
            elapsed = (time.perf_counter() - t0) * 1000.0
            path = (
                "reused"
                if analysis.timings_ms.get("reused")
                else "window"
                if analysis.timings_ms.get("window")
                else "whole"
            )
            times[path].append(elapsed)
            played.append((image, photo, analysis, path))
        # Then each window frame analysed whole from scratch (the detector's
        # caches cleared: nothing borrowed from the frames before), and the
        # same position again with fresh noise, for the noise's own share.
        for image, photo, analysis, path in played:
            if path != "window":
                continue
            for stage in ("hidden_regions", "detect", "assemble"):
                stages[stage].append(analysis.timings_ms.get(stage, 0.0))
            clear_caches(keep_views=True)
            whole = analyze_frame(photo, context)
            t0 = time.perf_counter()
            analyze_frame(photo, context)  # warm, as a whole frame of a running game
            whole_times.append((time.perf_counter() - t0) * 1000.0)
            compare(analysis.board, whole.board, agreement)
            clear_caches(keep_views=True)
            again = analyze_frame(_photo(image, noise), context)
            compare(again.board, whole.board, baseline)
        print(
            f"seed {seed}: {len(layouts) - 1} shots; paths "
            + ", ".join(f"{k} {len(v)}" for k, v in times.items()),
            flush=True,
        )
    print()
    for path, values in times.items():
        if values:
            print(f"{path:7s} frames {len(values):3d}  median {statistics.median(values):6.1f} ms")
    if whole_times:
        print(f"the window frames analysed whole: median {statistics.median(whole_times):.1f} ms")
    if stages["detect"]:
        print(
            "window frames by stage, median ms: "
            + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in stages.items())
        )
    for name, t in (
        ("window frames against the whole-frame analysis", agreement),
        ("the same frames analysed whole twice, fresh sensor noise", baseline),
    ):
        if t.frames:
            print(
                f"{name}: tiddlies the same on {t.tiddlies_same}/{t.frames}; winks matched "
                f"{t.winks - t.unmatched}/{t.winks} (unmatched either way {t.unmatched}); "
                f"status the same {t.status_same}, squops the same {t.squops_same}; largest "
                f"shift per frame median {statistics.median(t.max_shift_mm):.2f} mm, max "
                f"{max(t.max_shift_mm):.2f} mm"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
