"""Outlines of a faint mat from its baselines: two matched baselines predict the others."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from calibration.api import _pot_not_at_centre
from calibration.baseline_search import find_mat_quads_from_baselines
from calibration.fit import MAT_CORNERS_MM
from calibration.mat import FailureReason, _clockwise
from calibration.pipeline import image_lab_float
from tests.calibration.synthetic import look_at_camera, render_mat

SIZE_WH = (960, 540)
# Beige felt a few Lab units lighter than a grained beige table, dark baselines.
FELT_BGR, TABLE_BGR, LINE_BGR = (150, 170, 180), (140, 160, 172), (60, 60, 62)


@pytest.mark.parametrize(
    "eye_mm",
    [
        (60.0, -250.0, 1700.0),  # overhead, slightly off centre
        (-200.0, -1100.0, 1300.0),  # oblique from a long side
    ],
)
def test_the_outline_from_the_baselines_is_the_mats_within_a_few_pixels(eye_mm) -> None:
    truth = look_at_camera(SIZE_WH, eye_mm, k1=-0.03)
    image = render_mat(
        truth,
        felt_bgr=FELT_BGR,
        table_bgr=TABLE_BGR,
        line_bgr=LINE_BGR,
        table_grain=0.06,
        blue_corner_mm=None,
        seed=3,
    )
    quads = find_mat_quads_from_baselines(image)
    assert quads, "no outline found"
    truth_px = _clockwise(truth.mat_to_image(MAT_CORNERS_MM))
    assert np.abs(quads[0].corners_image_xy_px - truth_px).max() < 4.0


def test_a_grained_table_without_a_mat_gives_no_outline() -> None:
    truth = look_at_camera(SIZE_WH, (60.0, -250.0, 1700.0), k1=-0.03)
    # The felt painted in the table's colour and no baselines: only grain is left.
    image = render_mat(
        truth,
        felt_bgr=TABLE_BGR,
        table_bgr=TABLE_BGR,
        line_bgr=TABLE_BGR,
        table_grain=0.06,
        blue_corner_mm=None,
        seed=3,
    )
    assert find_mat_quads_from_baselines(image) == ()


@pytest.mark.parametrize(
    ("shift_mm", "refused"),
    [
        (0.0, False),  # the true camera: the rim is at the centre
        (20.0, True),  # a camera 20 mm wrong in the middle, as grain-fitted ones were
    ],
)
def test_a_faint_fit_needs_the_pots_rim_at_the_centre(shift_mm: float, refused: bool) -> None:
    truth = look_at_camera(SIZE_WH, (60.0, -250.0, 1700.0), k1=-0.03)
    image = render_mat(
        truth,
        felt_bgr=FELT_BGR,
        table_bgr=TABLE_BGR,
        line_bgr=LINE_BGR,
        pot_bgr=(240, 240, 240),
        blue_corner_mm=None,
        seed=3,
    )
    # The same camera, but taking the mat to be shift_mm further along x.
    camera = replace(
        truth,
        translation_mm=truth.translation_mm - truth.rotation @ np.array([shift_mm, 0.0, 0.0]),
    )
    failure = _pot_not_at_centre(image_lab_float(image), camera)
    assert (failure is not None) == refused
    if failure is not None:
        assert failure.reason is FailureReason.FAINT_EDGES_UNVERIFIED
        assert "pot's rim" in failure.message
