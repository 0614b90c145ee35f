"""Wink colours relative to the felt: hue classes, coverage, white balance."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from rules.board import Colour
from vision.colour import (
    COLOURS,
    ColourReference,
    classify_hue,
    classify_hue_index,
    column_medians,
    coverage,
    felt_contrast,
    hue_difference_deg,
    hue_saturation,
    reference_from_calibration,
)


@pytest.mark.parametrize("colour", list(Colour))
def test_each_prototype_is_classified_as_its_own_colour(colour: Colour) -> None:
    ref = ColourReference()
    hue, sat = hue_saturation(ref.ratio_bgr[colour])
    index, margin = classify_hue(hue, ref)
    assert COLOURS[int(index)] is colour
    assert sat > 0.2
    assert margin > 10


@pytest.mark.parametrize(
    "bgr",
    [
        # the felt itself
        (1.0, 1.0, 1.0),
        # a shadow: darker, same hue
        (0.4, 0.4, 0.4),
        # black squidger
        (0.05, 0.05, 0.05),
    ],
)
def test_neutral_things_have_no_saturation(bgr: tuple[float, float, float]) -> None:
    _, sat = hue_saturation(bgr)
    assert sat < 0.02


def test_purple_is_not_a_wink_colour() -> None:
    # Purple squidgers (blue + red, no green) sit between two prototypes.
    hue, _ = hue_saturation((0.9, 0.2, 0.9))
    index, _ = classify_hue(hue, ColourReference())
    assert int(index) == -1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_hue_index_agrees_with_classify_hue(dtype: type) -> None:
    # Every tenth of a degree, both ends included (360 is 0), and a tilted reference.
    hue = np.linspace(0.0, 360.0, 3601).astype(dtype)
    for ref in (ColourReference(), ColourReference().with_ratio(Colour.GREEN, (0.5, 1.2, 0.3))):
        expected, _ = classify_hue(hue, ref)
        np.testing.assert_array_equal(classify_hue_index(hue, ref), expected)


def test_coverage_is_linear_in_mixing() -> None:
    felt = np.array([1.0, 1.1, 0.9])
    wink = np.array([0.2, 0.5, 0.15])
    mixes = np.array([0.0, 0.3, 0.5, 1.0])
    pixels = mixes[:, None] * wink + (1 - mixes[:, None]) * felt
    np.testing.assert_allclose(coverage(pixels, felt, wink), mixes, atol=1e-12)


def test_coverage_of_a_felt_coloured_wink_is_refused() -> None:
    with pytest.raises(ValueError, match="equals the felt"):
        coverage([1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])


def test_normalise_divides_by_felt_brightness_and_white_balance() -> None:
    ref = ColourReference(white_bgr=(0.5, 1.0, 2.0))
    out = ref.normalise([[99.0, 99.0, 99.0]], [[99.0, 99.0, 99.0]])
    # brightness 99 + 1 = 100; then per-channel gains
    np.testing.assert_allclose(out, [[1.98, 0.99, 0.495]], rtol=1e-6)


def test_felt_contrast_is_a_distance() -> None:
    assert felt_contrast([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]) == pytest.approx(0.0)
    assert felt_contrast([1.0, 1.0, 4.0], [1.0, 5.0, 1.0]) == pytest.approx(5.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # a colour is missing
        ({"ratio_bgr": {Colour.BLUE: (0.7, 0.3, 0.1)}}, "lacks"),
        # grey is not a wink colour
        (
            {"ratio_bgr": {c: (0.5, 0.5, 0.5) for c in Colour}},
            "grey",
        ),
        # white balance gains must be positive
        ({"white_bgr": (1.0, 0.0, 1.0)}, "positive"),
    ],
)
def test_bad_colour_reference_is_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ColourReference(**kwargs)


def test_with_ratio_replaces_one_colour() -> None:
    ref = ColourReference().with_ratio(Colour.RED, (0.1, 0.1, 0.8))
    assert ref.ratio_bgr[Colour.RED] == (0.1, 0.1, 0.8)
    assert ref.ratio_bgr[Colour.BLUE] == ColourReference().ratio_bgr[Colour.BLUE]


def _lab8(bgr: tuple[float, float, float]) -> np.ndarray:
    pixel = np.array([[bgr]], np.float32) / 255.0
    lab = cv2.cvtColor(pixel, cv2.COLOR_BGR2LAB)[0, 0].astype(np.float64)
    return np.array([lab[0] * 255.0 / 100.0, lab[1] + 128.0, lab[2] + 128.0])


def test_calibration_colours_become_ratios_to_the_felt() -> None:
    from calibration.colour import ColourReference as CalibrationColour

    felt_bgr = (90.0, 150.0, 60.0)  # green felt, brightness 100
    red_bgr = (40.0, 30.0, 180.0)
    learned = CalibrationColour(
        felt_lab=_lab8(felt_bgr), wink_lab={Colour.RED: _lab8(red_bgr)}, source="winks"
    )
    ref = reference_from_calibration(learned)
    assert ref is not None
    np.testing.assert_allclose(ref.ratio_bgr[Colour.RED], np.array(red_bgr) / 101.0, atol=2e-3)
    # colours not seen keep their defaults
    assert ref.ratio_bgr[Colour.BLUE] == ColourReference().ratio_bgr[Colour.BLUE]


def test_calibration_without_winks_gives_no_reference() -> None:
    from calibration.colour import ColourReference as CalibrationColour

    felt_only = CalibrationColour(felt_lab=_lab8((120.0, 120.0, 120.0)), source="felt")
    assert reference_from_calibration(felt_only) is None


@pytest.mark.parametrize(
    ("a_deg", "b_deg", "expected"),
    [
        (10.0, 50.0, 40.0),  # plainly apart
        (350.0, 10.0, 20.0),  # across 0: the short way round
        (0.0, 180.0, 180.0),  # opposite
        (-30.0, 330.0, 0.0),  # the same hue written twice
    ],
)
def test_hue_difference_goes_the_short_way_round(
    a_deg: float, b_deg: float, expected: float
) -> None:
    assert float(hue_difference_deg(a_deg, b_deg)) == pytest.approx(expected)


@pytest.mark.parametrize(
    "shape",
    [
        (1, 3),  # one pixel
        (40, 3),  # even: the mean of the two middle values
        (39, 3),  # odd: the middle value
        (300, 3),  # a pair's pixels
    ],
)
def test_column_medians_match_numpy_median_to_the_bit(shape) -> None:
    rng = np.random.default_rng(16)
    values = rng.normal(50.0, 30.0, shape)
    values[: shape[0] // 3] = np.round(values[: shape[0] // 3])  # ties, as 8-bit Lab has
    np.testing.assert_array_equal(column_medians(values), np.median(values, axis=0))


@pytest.mark.parametrize("count", [30_000, 30_001])  # even and odd, as the view's noise samples
def test_column_median_of_one_float32_column_matches_numpy_median_of_the_values(count) -> None:
    # The seed search's felt noise: the median of the coarse view's float32
    # contrast every fourth pixel, many of them equal (a flat felt).
    rng = np.random.default_rng(17)
    values = (np.round(rng.random(count) * 40.0) / 97.0).astype(np.float32)
    assert column_medians(values[:, None])[0] == np.median(values)
    assert column_medians(values[:, None]).dtype == np.median(values).dtype
