"""Does the check of a saved calibration pass the right camera and refuse a moved one?

For every overhead and oblique scene with ground truth in the folders given,
the scene's true camera stands for a good calibration file. The same camera
moved over the mat (as a knocked webcam moves the mat in its picture), or
turned about the mat's centre, stands for a stale one. Prints, per case, how
many of the cameras :func:`calibration.camera_moved` refuses.

Run from the repository root::

    .venv/bin/python benchmarks/calibration_file_check.py [FOLDER ...]

(default: ``../shared/scenes`` and ``sample_images``).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration import camera_moved, implausible_camera  # noqa: E402
from calibration.camera import CameraModel  # noqa: E402
from tools.groundtruth import load_scene, to_canonical_frame  # noqa: E402

DEFAULT_FOLDERS = [
    d for d in (ROOT.parent / "shared" / "scenes", ROOT / "sample_images") if d.is_dir()
]
#: (name, mm along the mat, mm across it, degrees about the mat's centre)
CHANGES = (
    ("moved 20 mm along", 20.0, 0.0, 0.0),
    ("moved 50 mm along", 50.0, 0.0, 0.0),
    ("moved 50 mm across", 0.0, 50.0, 0.0),
    ("moved 250 mm along", 250.0, 0.0, 0.0),
    ("moved 250 mm across", 0.0, 250.0, 0.0),
    ("moved 400 mm along", 400.0, 0.0, 0.0),
    ("turned 3 degrees", 0.0, 0.0, 3.0),
    ("turned 10 degrees", 0.0, 0.0, 10.0),
    ("turned 30 degrees", 0.0, 0.0, 30.0),
)


def changed(camera: CameraModel, along_mm: float, across_mm: float, turn_deg: float) -> CameraModel:
    """The camera after the mat moved under it by that much (mat frame)."""
    theta = np.deg2rad(turn_deg)
    turn = np.array(
        [[np.cos(theta), -np.sin(theta), 0.0], [np.sin(theta), np.cos(theta), 0.0], [0, 0, 1.0]]
    )
    shift = camera.rotation @ np.array([along_mm, across_mm, 0.0])
    return replace(
        camera,
        rotation=camera.rotation @ turn,
        translation_mm=camera.translation_mm + shift,
    )


def main(folders: list[Path]) -> int:
    right_refused: list[str] = []
    n = 0
    refused = {name: 0 for name, *_ in CHANGES}
    for folder in folders:
        for truth in sorted(folder.glob("*.json")):
            if not truth.stem.startswith(("overhead_", "oblique_", "start_")):
                continue
            photo = cv2.imread(str(truth.with_suffix(".jpg")))
            if photo is None:
                continue
            camera = to_canonical_frame(load_scene(truth)).camera
            n += 1
            failure = implausible_camera(camera)  # falsy when it fails: test against None
            if failure is None:
                failure = camera_moved(photo, camera)
            if failure is not None:
                right_refused.append(f"{truth.name}: {failure.message}")
            for name, along, across, turn in CHANGES:
                if camera_moved(photo, changed(camera, along, across, turn)) is not None:
                    refused[name] += 1
    print(f"scenes: {n}")
    print(f"the true camera refused: {len(right_refused)} of {n}")
    for line in right_refused:
        print(f"  {line}")
    for name, count in refused.items():
        print(f"{name}: refused {count} of {n}")
    return 0


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:]]
    sys.exit(main(args or DEFAULT_FOLDERS))
