"""Run every benchmark in turn and print their reports (``make bench``).

Each script measures one issue's targets against ground truth, over
``sample_images/`` and, when it sits beside the project, ``../shared/scenes``.
Their figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED_SCENES = ROOT.parent / "shared" / "scenes"

# (script, arguments): the same commands docs/benchmarks.md quotes.
BENCHMARKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("calibration.py", ()),
    ("calibration_file_check.py", ()),
    ("detection.py", ()),
    ("vision.py", ("--source", "both")),
    ("potted.py", ()),
    ("felts.py", ()),
    ("review.py", ()),
    # Soft photos: out of focus, and shaken (see "Session 25" under review).
    ("review.py", ("--blur=4",)),
    ("review.py", ("--shake=24",)),
    # The lens as a phone's EXIF would tell it (see "Session 26" under review).
    ("review.py", ("--exif",)),
    ("review_time.py", ()),
    ("count.py", ()),
    ("still_camera.py", ("--count", "8")),
)


def _frame_time_args() -> tuple[str, ...]:
    """The overhead photos ``frame_time.py`` times: the shared scenes when present, and ours."""
    dirs = [SHARED_SCENES] if SHARED_SCENES.is_dir() else []
    return (*[str(d) for d in dirs], str(ROOT / "sample_images"))


def main() -> int:
    if not SHARED_SCENES.is_dir():
        print(f"note: {SHARED_SCENES} not found; benchmarks use sample_images/ only", flush=True)
    failed = []
    for script, args in (*BENCHMARKS, ("frame_time.py", _frame_time_args())):
        command = [sys.executable, str(HERE / script), *args]
        print(f"\n=== {' '.join([script, *args])}", flush=True)
        started = time.perf_counter()
        result = subprocess.run(command, cwd=ROOT, check=False)
        print(f"=== {script} took {time.perf_counter() - started:.0f} s", flush=True)
        if result.returncode != 0:
            failed.append(script)
    if failed:
        print(f"\nbenchmarks that failed to run: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
