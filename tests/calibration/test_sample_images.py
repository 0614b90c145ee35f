"""calibrate() on the generated sample images, against their ground truth."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from calibration import Calibration, calibrate, load_image
from calibration.fit import MAT_CORNERS_MM
from rules.board import Colour
from tests.calibration.synthetic import mat_grid_mm
from tools.groundtruth import load_scene, to_canonical_frame

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
GRID_MM = mat_grid_mm(61, 31)


@cache
def _calibrated(stem: str) -> Calibration:
    return calibrate(load_image(SAMPLES / f"{stem}.jpg"))


@pytest.mark.parametrize(
    ("stem", "max_mm"),
    [
        ("overhead_00101", 1.0),  # 1080p webcam: the target is 1 mm
        ("oblique_00102", 2.0),  # tripod at the side: the target is 2 mm
        ("start_00101", 1.0),  # all 24 winks behind the baselines
    ],
)
def test_mapping_meets_the_target_and_orientation_is_right(stem: str, max_mm: float) -> None:
    scene = to_canonical_frame(load_scene(SAMPLES / f"{stem}.json"))
    cal = _calibrated(stem)
    ours = cal.camera.image_to_mat(scene.camera.mat_to_image(GRID_MM))
    if not cal.orientation_known:
        # Compare with the better of the two half-turn options.
        ours = min(ours, -ours, key=lambda m: float(np.abs(m - GRID_MM).max()))
    assert np.linalg.norm(ours - GRID_MM, axis=1).max() < max_mm
    corner_px = np.linalg.norm(
        cal.camera.mat_to_image(MAT_CORNERS_MM) - scene.camera.mat_to_image(MAT_CORNERS_MM), axis=1
    )
    if cal.orientation_known:
        assert corner_px.max() < 1.0
        assert cal.corners_mm is not None
        assert cal.corners_mm[Colour.BLUE] == pytest.approx(scene.baseline(Colour.BLUE).corner)
