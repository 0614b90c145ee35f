"""The live referee on generated games: were the shots and the announcements right?

Each game folder is made by ``python -m tools.scenegen.game`` and holds the
photos after each shot (``frame_NNN.jpg``), the true record
(``record.json``) and, with ``--video``, ``game.mp4``: each position held
still, with a hand over the mat between them. The referee (``winkref
watch``) watches the video (or, with ``--photos``, the folder of photos)
and its announcements are compared with those the rules engine makes of
the true record, shot by shot.

Usage::

    .venv/bin/python -m tools.scenegen.game --seed 40 --shots 8 --video --out /tmp/w/g40
    .venv/bin/python benchmarks/watch.py /tmp/w/g*            # the videos
    .venv/bin/python benchmarks/watch.py --photos /tmp/w/g*   # the photos

Prints a row per game: true shots, shots given to the engine, shots whose
colour and announcements (event types) match the truth's, views not
understood, and the time per video frame; then the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402

from rules.engine import replay_record  # noqa: E402
from rules.record import load_record  # noqa: E402
from service.commands import watch  # noqa: E402


def _events_by_shot(events: list[dict]) -> dict[int | None, list[str]]:
    out: dict[int | None, list[str]] = defaultdict(list)
    for e in events:
        out[e["shot"]].append(e["type"])
    return out


def run_game(folder: Path, *, photos: bool) -> dict:
    """Watch one generated game and compare with its true record."""
    truth = load_record(folder / "record.json")
    game, _ = replay_record(truth)
    true_events = _events_by_shot([e.to_json_dict() for e in game.events])
    lines: list[dict] = []
    source = folder if photos else folder / "game.mp4"
    with tempfile.TemporaryDirectory() as tmp:
        record_path = Path(tmp) / "seen.json"
        t0 = time.perf_counter()
        try:
            referee = watch.run(
                source,
                squidge_off=truth.squidge_off_winner.value,
                emit=lambda line: lines.append(json.loads(line)),
                record_path=record_path,
                json_output=True,
            )
        except ValueError as exc:
            # The user's error (e.g. no mat found): the game counts as refereed not at all.
            return {
                "game": folder.name,
                "true_shots": len(truth.shots),
                "seen_shots": 0,
                "right": 0,
                "not_understood": 0,
                "hidden": 0,
                "started": False,
                "error": str(exc)[:120],
                "ms_per_frame": float("nan"),
            }
        wall_s = time.perf_counter() - t0
    seen = referee.record.shots
    seen_events = _events_by_shot([x["event"] for x in lines if "event" in x])
    right = 0
    for k, shot in enumerate(truth.shots):
        if k < len(seen) and seen[k].colour is shot.colour and seen_events[k] == true_events[k]:
            right += 1
    frames = len(list(folder.glob("frame_*.jpg")))
    if not photos:
        capture = cv2.VideoCapture(str(folder / "game.mp4"))
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        capture.release()
    kinds = [x["kind"] for x in lines]
    return {
        "game": folder.name,
        "true_shots": len(truth.shots),
        "seen_shots": len(seen),
        "right": right,
        "not_understood": kinds.count("not_understood"),
        "hidden": kinds.count("hidden"),
        "started": "start" in kinds,
        "ms_per_frame": 1000.0 * wall_s / max(frames, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="+", type=Path, help="folders made by tools.scenegen.game")
    parser.add_argument("--photos", action="store_true", help="watch the photos, not the video")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    rows = []
    for folder in args.games:
        if not (folder / "record.json").exists():
            print(f"skipped {folder}: no record.json", file=sys.stderr)
            continue
        if not args.photos and not (folder / "game.mp4").exists():
            print(f"skipped {folder}: no game.mp4 (make it with --video, or use --photos)")
            continue
        row = run_game(folder, photos=args.photos)
        rows.append(row)
        print(json.dumps(row | {"ms_per_frame": round(row["ms_per_frame"], 1)}), flush=True)
    if not rows:
        return 1
    true_shots = sum(r["true_shots"] for r in rows)
    timed = [r["ms_per_frame"] for r in rows if "error" not in r] or [float("nan")]
    print(
        f"games {len(rows)}: shots right {sum(r['right'] for r in rows)}/{true_shots}, "
        f"given to the engine {sum(r['seen_shots'] for r in rows)}, "
        f"games wholly right {sum(r['right'] == r['true_shots'] for r in rows)}/{len(rows)}, "
        f"not understood {sum(r['not_understood'] for r in rows)}, "
        f"refused {sum('error' in r for r in rows)}, "
        f"median {statistics.median(timed):.1f} ms per frame"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
