"""The blur of a wink's rim, read from drawn discs blurred by known Gaussians."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.closeup import ImageEllipse
from vision.closeup_sharpness import felt_bgr, rim_blur_px

FELT_BGR = (150, 160, 165)
BLUE = (170, 60, 30)
RED = (40, 40, 200)
WIDTH, HEIGHT = 800, 600
SUPERSAMPLE = 4


def _disc(
    centre_xy_px=(400.0, 300.0), semi_axes_px=(150.0, 120.0), angle_deg=20.0, *, surround=FELT_BGR
):
    """A blue elliptical disc on felt, drawn 4x supersampled: a sharp sub-pixel edge.

    With ``surround`` other than the felt, a ring of that colour 40 px wide is
    drawn round it first (a wink lying against another, not against felt).
    """
    img = np.zeros((HEIGHT * SUPERSAMPLE, WIDTH * SUPERSAMPLE, 3), np.uint8)
    img[:] = FELT_BGR

    def fill(semi, colour):
        # cv2.ellipse takes integer pixel centres of the big image: pixel i of
        # the small image spans big pixels 4i..4i+3, centred on 4i+1.5.
        centre = tuple(int(round(SUPERSAMPLE * c + 1.5)) for c in centre_xy_px)
        axes = tuple(int(round(SUPERSAMPLE * a)) for a in semi)
        cv2.ellipse(img, centre, axes, angle_deg, 0, 360, colour, -1)

    if surround != FELT_BGR:
        fill(tuple(a + 40 for a in semi_axes_px), surround)
    fill(semi_axes_px, BLUE)
    small = cv2.resize(img, (WIDTH, HEIGHT), interpolation=cv2.INTER_AREA)
    ellipse = ImageEllipse(centre_xy_px, semi_axes_px, math.radians(angle_deg))
    return small, ellipse


def _noisy(image, sigma_grey, seed=0):
    noise = np.random.default_rng(seed).normal(0.0, sigma_grey, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize(
    "blur_px",
    [
        2.0,  # a little soft: sharper than the review's allowance starts
        4.0,  # a photo visibly out of focus
        6.0,  # badly out of focus
    ],
)
def test_a_gaussian_blur_reads_as_its_sigma(blur_px):
    sharp, ellipse = _disc()
    image = _noisy(cv2.GaussianBlur(sharp, (0, 0), blur_px), 2.0)
    # The drawn edge itself is about half a pixel soft (area resampling); blurs add in quadrature.
    assert rim_blur_px(image, ellipse, felt_bgr(image)) == pytest.approx(
        math.hypot(blur_px, 0.5), rel=0.06
    )


def test_a_sharp_disc_reads_well_under_the_reviews_sharp_allowance():
    sharp, ellipse = _disc()
    assert rim_blur_px(_noisy(sharp, 2.0), ellipse, felt_bgr(sharp)) < 1.0


def test_noise_does_not_make_a_soft_photo_read_sharp():
    # The steepest slope of a noisy profile is too steep unless the profile is smoothed first.
    sharp, ellipse = _disc()
    soft = cv2.GaussianBlur(sharp, (0, 0), 6.0)
    clean = rim_blur_px(soft, ellipse, felt_bgr(soft))
    noisy = _noisy(soft, 4.0)
    assert rim_blur_px(noisy, ellipse, felt_bgr(noisy)) == pytest.approx(clean, rel=0.06)


def test_blurrier_reads_larger():
    sharp, ellipse = _disc(angle_deg=-35.0, semi_axes_px=(90.0, 70.0))
    readings = []
    for blur_px in (1.0, 2.0, 3.0, 5.0):
        image = _noisy(cv2.GaussianBlur(sharp, (0, 0), blur_px), 2.0)
        readings.append(rim_blur_px(image, ellipse, felt_bgr(image)))
    assert readings == sorted(readings)


def test_a_rim_against_another_colour_gives_no_reading():
    # Against a red wink all round, no profile ends on felt: nothing to read the blur from.
    image, ellipse = _disc(semi_axes_px=(100.0, 80.0), surround=RED)
    assert math.isnan(rim_blur_px(image, ellipse, felt_bgr(image)))


def test_a_wink_cut_by_the_photos_edge_is_read_from_the_rest_of_its_rim():
    sharp, ellipse = _disc(centre_xy_px=(60.0, 300.0), semi_axes_px=(100.0, 90.0))
    image = cv2.GaussianBlur(sharp, (0, 0), 3.0)
    assert rim_blur_px(image, ellipse, felt_bgr(image)) == pytest.approx(
        math.hypot(3.0, 0.5), rel=0.06
    )
