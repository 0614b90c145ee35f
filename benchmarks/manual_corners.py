"""Calibration from corners given by hand: the manual fallback, with the true corners.

For every overhead and oblique image with ground truth in the given folders
(default ``/work/shared/scenes`` and ``sample_images``), the ground-truth
camera's mat corners are given to ``calibrate(corners_image_px=...)``, as a
user would type them with ``winkref calibrate --corners``. Prints per image
whether the fit was accepted, its largest mapping error over the mat (mm,
as ``benchmarks/calibration.py`` measures it) against its stated one-sigma,
or the refusal's message; then how many were accepted, refused and
accepted with an error above the stated sigma.

These are the best corners a user could give: a refusal here is one the
manual fallback cannot get past.

Usage::

    .venv/bin/python benchmarks/manual_corners.py [FOLDER ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.calibration import _grid_mm  # noqa: E402
from calibration import CalibrationError, calibrate, load_image  # noqa: E402
from calibration.fit import MAT_CORNERS_MM  # noqa: E402
from tools.groundtruth import load_scene, to_canonical_frame  # noqa: E402

DEFAULT_DIRS = [Path("/work/shared/scenes"), ROOT / "sample_images"]


def measure(image_path: Path) -> dict[str, object]:
    """Calibrate one image from its true corners; compare with its ground truth."""
    truth = to_canonical_frame(load_scene(image_path.with_suffix(".json"))).camera
    corners_px = truth.mat_to_image(MAT_CORNERS_MM)
    try:
        cal = calibrate(load_image(image_path), corners_image_px=corners_px)
    except CalibrationError as exc:
        return {"name": image_path.name, "refused": str(exc)}
    grid = _grid_mm()
    ours = cal.camera.image_to_mat(truth.mat_to_image(grid))
    # Which way round the mat is does not concern the fit's accuracy.
    error = min(
        float(np.linalg.norm(ours - grid, axis=1).max()),
        float(np.linalg.norm(-ours - grid, axis=1).max()),
    )
    return {"name": image_path.name, "max_mm": error, "sigma_mm": cal.mapping_sigma_mm}


def main(argv: list[str]) -> int:
    dirs = [Path(a) for a in argv] or DEFAULT_DIRS
    images = [
        p
        for d in dirs
        for p in sorted(d.glob("*.jpg"))
        if p.name.startswith(("overhead_", "oblique_")) and p.with_suffix(".json").exists()
    ]
    accepted, refused, above_sigma = 0, 0, 0
    for path in images:
        row = measure(path)
        if "refused" in row:
            refused += 1
            print(f"{row['name']}: REFUSED {row['refused']}")
            continue
        accepted += 1
        above = row["max_mm"] > row["sigma_mm"]  # type: ignore[operator]
        above_sigma += above
        flag = "  (above the stated sigma)" if above else ""
        print(
            f"{row['name']}: max error {row['max_mm']:.2f} mm, "
            f"stated sigma {row['sigma_mm']:.2f} mm{flag}"
        )
    print(
        f"\n{len(images)} images: accepted {accepted}, refused {refused}; "
        f"accepted with the max error above the stated sigma: {above_sigma}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
