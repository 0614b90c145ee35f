"""A felt close to the table's colour: outlines of faint edges are judged by their baselines."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.fit import MAT_CORNERS_MM
from calibration.mat import _baseline_evidence
from calibration.pipeline import FewBaselinesError, fit_from_outline, image_lab_float
from tests.calibration.synthetic import look_at_camera, mat_grid_mm, render_mat

SIZE_WH = (640, 360)


def _beige_on_wood(size_wh: tuple[int, int], table_grain: float, seed: int):
    """An overhead camera and its picture: beige felt a few Lab units lighter
    than a grained beige table, dark baselines."""
    truth = look_at_camera(size_wh, (60.0, -250.0, 1700.0), k1=-0.05)
    image = render_mat(
        truth,
        felt_bgr=(150, 170, 180),
        table_bgr=(140, 160, 172),
        line_bgr=(60, 60, 62),
        table_grain=table_grain,
        blue_corner_mm=None,
        seed=seed,
    )
    return truth, image


@pytest.fixture(scope="module")
def beige_on_wood():
    truth, image = _beige_on_wood(SIZE_WH, table_grain=0.06, seed=3)
    light = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)[:, :, 0].astype(np.float32)
    return truth, image, light


def _outline(truth, scale_long: float = 1.0, scale_short: float = 1.0) -> np.ndarray:
    corners_mm = MAT_CORNERS_MM * np.array([scale_long, scale_short])
    # Clockwise in the image, as find_mat_quads gives them.
    return truth.mat_to_image(corners_mm)[::-1]


def test_the_mats_own_outline_shows_all_four_baselines(beige_on_wood) -> None:
    truth, _, light = beige_on_wood
    assert _baseline_evidence(_outline(truth), light) >= 3.5


@pytest.mark.parametrize(
    ("scale_long", "scale_short"),
    [
        (1.12, 1.0),  # the long edges run on to a plank seam beyond each short edge
        (1.0, 1.25),  # a band of table taken in along both long edges
        (0.8, 0.8),  # a rectangle inside the felt
    ],
)
def test_an_outline_that_is_not_the_mats_ranks_well_below_it(
    beige_on_wood, scale_long: float, scale_short: float
) -> None:
    # The evidence ranks outlines; refusing a wrong one is the fit's job (all
    # four baselines found where the fitted camera puts them).
    truth, _, light = beige_on_wood
    own = _baseline_evidence(_outline(truth), light)
    assert _baseline_evidence(_outline(truth, scale_long, scale_short), light) < own - 1.0


@pytest.fixture(scope="module")
def beige_on_strong_grain():
    # The grain's stripes run along the mat's long edges, a few of their own
    # widths apart and stronger than the felt/table step.
    truth, image = _beige_on_wood((960, 540), table_grain=0.1, seed=2)
    return truth, image_lab_float(image)


def test_a_rough_fit_is_held_by_the_baselines_against_grain_beside_faint_edges(
    beige_on_strong_grain,
) -> None:
    # The wide first look at faint edges finds grain stripes beside them; fitted
    # to those alone, the camera left the mat (no edge points were left at all).
    truth, image_lab = beige_on_strong_grain
    # An outline a few pixels off, as the baseline search gives.
    rng = np.random.default_rng(1)
    outline = truth.mat_to_image(MAT_CORNERS_MM)[::-1] + rng.normal(0.0, 4.0, (4, 2))
    result = fit_from_outline(image_lab, outline, rough=True)
    grid = mat_grid_mm(13, 7)
    fitted_px = result.fit.camera.mat_to_image(grid)
    miss_px = np.linalg.norm(fitted_px - truth.mat_to_image(grid), axis=1)
    assert miss_px.max() < 1.5
    assert all(b.found for b in result.baselines)


@pytest.mark.parametrize(
    ("scale_long", "scale_short"),
    [
        (0.8, 0.8),  # a rectangle inside the felt: plain felt where its baselines would be
        (1.12, 1.0),  # the long edges run on to a plank seam: its baselines on the table
    ],
)
def test_a_rough_outline_that_shows_no_baselines_is_given_up_before_it_is_refined(
    beige_on_strong_grain, scale_long: float, scale_short: float
) -> None:
    truth, image_lab = beige_on_strong_grain
    with pytest.raises(FewBaselinesError) as caught:
        fit_from_outline(
            image_lab, _outline(truth, scale_long, scale_short), rough=True, min_first_baselines=2
        )
    assert caught.value.found < 2


def test_the_mats_own_rough_outline_is_refined_whatever_the_bar(beige_on_strong_grain) -> None:
    truth, image_lab = beige_on_strong_grain
    result = fit_from_outline(image_lab, _outline(truth), rough=True, min_first_baselines=4)
    assert all(b.found for b in result.baselines)
