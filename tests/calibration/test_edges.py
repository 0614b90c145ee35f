"""Line and edge points across a predicted curve, on synthetic profiles with known answers."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.edges import CurveSamples, ridge_points

HEIGHT_PX, WIDTH_PX = 60, 400
LINE_ROW_PX = 30.3
FELT_L = 150.0


def _lab_with_line(
    width_px: float, depth: float, slope_per_px: float, noise: float, seed: int = 0
) -> np.ndarray:
    """An 8-bit-scale Lab image: felt with a dark horizontal line at row LINE_ROW_PX.

    The line's lightness dip is ``depth`` over ``width_px`` (box profile, then
    the optics' blur). Over its left quarter it lies on a slope of
    ``slope_per_px`` L units per row (a shadow's edge near one end). Then
    Gaussian sensor noise.
    """
    rng = np.random.default_rng(seed)
    rows = np.arange(HEIGHT_PX, dtype=np.float64)[:, None]
    # Box profile sampled finely, so that a line a pixel wide dilutes as a camera sees it.
    fine = np.linspace(-0.5, 0.5, 21)
    inside = np.abs(rows + fine[None, :] - LINE_ROW_PX) < width_px / 2
    dip = depth * inside.mean(axis=1, keepdims=True)
    shadowed = np.arange(WIDTH_PX)[None, :] < WIDTH_PX // 4
    light = FELT_L - dip + slope_per_px * (rows - LINE_ROW_PX) * shadowed
    lab = np.zeros((HEIGHT_PX, WIDTH_PX, 3), np.float32)
    lab[..., 0] = light
    lab[..., 0] = cv2.GaussianBlur(lab[..., 0], (0, 0), 0.7)
    lab[..., 0] += rng.normal(0, noise, (HEIGHT_PX, WIDTH_PX)).astype(np.float32)
    lab[..., 1:] = 128.0
    return lab


def _across_rows() -> CurveSamples:
    cols = np.arange(20.0, WIDTH_PX - 20.0, 4.0)
    # The prediction one pixel off the true line, as a rough camera would put it.
    xy = np.column_stack([cols, np.full(len(cols), LINE_ROW_PX + 1.0)])
    return CurveSamples(xy, np.tile([0.0, 1.0], (len(cols), 1)))


@pytest.mark.parametrize(
    ("width_px", "depth", "slope_per_px", "on_slopes"),
    [
        (3.0, 30.0, 0.0, False),  # a baseline on a 1080p frame near the camera: wide and dark
        (1.0, 20.0, 0.0, False),  # a baseline about a pixel wide (720p), on even light
        (1.0, 20.0, 2.5, True),  # the same, a quarter on a shadow's slope, looked for there too
        (3.0, 30.0, 0.0, True),  # the wide line is still found where slopes are looked at
    ],
)
def test_ridge_points_find_a_line_at_its_row(
    width_px: float, depth: float, slope_per_px: float, on_slopes: bool
) -> None:
    curve = _across_rows()
    lab = _lab_with_line(width_px, depth, slope_per_px, noise=1.0)
    xy, found, contrast = ridge_points(lab, curve, half_width_px=8.5, on_slopes=on_slopes)
    assert found.mean() > 0.9
    assert found[curve.image_xy_px[:, 0] < WIDTH_PX // 4].mean() > 0.9
    assert np.median(np.abs(xy[found, 1] - LINE_ROW_PX)) < 0.25
    assert contrast < 0  # a dark line


def test_a_thin_line_on_a_slope_is_found_only_when_slopes_are_looked_at() -> None:
    curve = _across_rows()
    lab = _lab_with_line(1.0, 20.0, 2.5, noise=1.0)
    sloped = curve.image_xy_px[:, 0] < WIDTH_PX // 4
    _, plain_only, _ = ridge_points(lab, curve, half_width_px=8.5)
    _, with_slopes, _ = ridge_points(lab, curve, half_width_px=8.5, on_slopes=True)
    assert plain_only[sloped].mean() < 0.1
    assert with_slopes[sloped].mean() > 0.9


@pytest.mark.parametrize("on_slopes", [False, True])  # neither test sees a line in a slope
def test_ridge_points_find_no_line_on_a_plain_slope(on_slopes: bool) -> None:
    curve = _across_rows()
    lab = _lab_with_line(1.0, 0.0, slope_per_px=2.5, noise=1.0)
    _, found, _ = ridge_points(lab, curve, half_width_px=8.5, on_slopes=on_slopes)
    assert found.mean() < 0.1
