"""Wink colours: white balance, hue, felt contrast and coverage.

Colours are measured in **felt-brightness units**: a pixel divided by the
brightness (mean of B, G, R) of the felt around it, then by the light's
colour (``ColourReference.white_bgr``). Dividing by a local brightness
absorbs shading and shadows (they darken felt and wink alike) without
tinting anything by the felt's own colour, which may be green, blue or
beige. Three views of a colour are used:

* its **hue and saturation** in an opponent plane (``a`` = red - green,
  ``b`` = yellow - blue, on intensity-normalised chromaticity): *which*
  wink colour, independent of brightness; neutral things (shadows, the
  white pot, black squidgers, paper) have low saturation.
* its **contrast** with the felt (:func:`felt_contrast`): whether anything
  lies there at all.
* its **coverage** ``alpha`` (:func:`coverage`): pixels mix linearly, so a
  pixel half covered by a wink lies half way from the felt's colour to the
  wink's; the rim is where ``alpha`` crosses 0.5, with sub-pixel precision.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from rules.board import Colour

FloatArray = npt.NDArray[np.float64]

#: Colours in a fixed order; class index ``i`` means ``COLOURS[i]``.
COLOURS: tuple[Colour, ...] = (Colour.BLUE, Colour.GREEN, Colour.RED, Colour.YELLOW)

#: Typical colour of each wink in felt-brightness units (B, G, R, as OpenCV
#: orders channels), under white light: winks on light and on green felt.
DEFAULT_RATIO_BGR: Mapping[Colour, tuple[float, float, float]] = {
    Colour.BLUE: (0.71, 0.33, 0.15),
    Colour.GREEN: (0.18, 0.52, 0.16),
    Colour.RED: (0.21, 0.17, 0.91),
    Colour.YELLOW: (0.29, 0.94, 1.14),
}

#: Widest hue difference (degrees) still called the prototype's colour.
MAX_HUE_DISTANCE_DEG = 50.0


@dataclass(frozen=True)
class ColourReference:
    """What each wink colour looks like relative to the felt, in this light.

    Parameters
    ----------
    ratio_bgr : mapping of Colour to (3,) tuple of float
        A wink's colour (B, G, R) in felt-brightness units, after dividing
        by ``white_bgr``. Calibration can learn it from unplayed winks.
    white_bgr : (3,) tuple of float
        The colour of white under this light, relative (mean 1): the gains
        of a white balance. ``(1, 1, 1)`` trusts the camera's own.
    """

    ratio_bgr: Mapping[Colour, tuple[float, float, float]] = field(
        default_factory=lambda: dict(DEFAULT_RATIO_BGR)
    )
    white_bgr: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def __post_init__(self) -> None:
        missing = [c.value for c in COLOURS if c not in self.ratio_bgr]
        if missing:
            raise ValueError(f"colour reference lacks {missing!r}; give a B, G, R ratio for each")
        for c, ratio in self.ratio_bgr.items():
            if len(ratio) != 3 or not all(np.isfinite(ratio)) or min(ratio) < 0:
                raise ValueError(f"ratio for {c.value} must be 3 finite values >= 0, got {ratio!r}")
            if np.ptp(ratio) < 0.1:
                raise ValueError(f"ratio for {c.value} is {ratio!r}: grey, not a wink colour")
        if len(self.white_bgr) != 3 or min(self.white_bgr) <= 0:
            raise ValueError(f"white_bgr must be 3 positive gains, got {self.white_bgr!r}")

    @property
    def prototypes(self) -> FloatArray:
        """(4, 3) ratios in :data:`COLOURS` order."""
        return np.array([self.ratio_bgr[c] for c in COLOURS], dtype=np.float64)

    @property
    def hues_deg(self) -> FloatArray:
        """(4,) hue of each prototype, degrees."""
        hue, _ = hue_saturation(self.prototypes)
        return hue

    def with_ratio(self, colour: Colour, ratio_bgr: tuple[float, float, float]) -> ColourReference:
        """A copy with one colour's ratio replaced."""
        updated = dict(self.ratio_bgr)
        updated[colour] = ratio_bgr
        return ColourReference(ratio_bgr=updated, white_bgr=self.white_bgr)

    def normalise(self, bgr: npt.ArrayLike, felt_bgr: npt.ArrayLike) -> FloatArray:
        """Colours in felt-brightness units, white-balanced.

        Parameters
        ----------
        bgr : (..., 3) array_like
            Pixel values, 0-255.
        felt_bgr : (..., 3) array_like
            The felt's colour around each pixel (broadcastable to ``bgr``).

        Returns
        -------
        (..., 3) ndarray
        """
        felt = np.asarray(felt_bgr, dtype=np.float32)
        brightness = felt.mean(axis=-1, keepdims=True) + 1.0
        gains = np.asarray(self.white_bgr, dtype=np.float32)
        return np.asarray(bgr, dtype=np.float32) / (brightness * gains)


def reference_from_calibration(calibration_colour: Any) -> ColourReference | None:
    """The detector's colour reference from calibration's (learned from the unplayed winks).

    Calibration measures each wink colour's mean 8-bit Lab behind its
    baseline and the felt's median Lab around the pot
    (:class:`calibration.colour.ColourReference`). Each colour seen becomes
    a ratio to the felt's brightness, as :meth:`ColourReference.normalise`
    measures it; colours not seen keep their defaults.

    Parameters
    ----------
    calibration_colour : calibration.colour.ColourReference

    Returns
    -------
    ColourReference or None
        None when calibration saw no winks (``source`` is not ``"winks"``)
        or none of the colours it saw is a usable (non-grey) ratio.
    """
    wink_lab = getattr(calibration_colour, "wink_lab", None)
    felt_lab = getattr(calibration_colour, "felt_lab", None)
    if getattr(calibration_colour, "source", None) != "winks" or not wink_lab or felt_lab is None:
        return None
    felt_bgr = _lab8_to_bgr(np.asarray(felt_lab, dtype=np.float64))
    brightness = float(felt_bgr.mean()) + 1.0
    ratios = dict(DEFAULT_RATIO_BGR)
    learned = 0
    for colour, lab in wink_lab.items():
        ratio = _lab8_to_bgr(np.asarray(lab, dtype=np.float64)) / brightness
        if np.all(np.isfinite(ratio)) and np.ptp(ratio) >= 0.1:
            ratios[Colour(colour)] = (float(ratio[0]), float(ratio[1]), float(ratio[2]))
            learned += 1
    return ColourReference(ratio_bgr=ratios) if learned else None


def _lab8_to_bgr(lab8: FloatArray) -> FloatArray:
    """One 8-bit-scale OpenCV Lab colour, (3,), to B, G, R on 0-255, without rounding."""
    lab = np.array([[[lab8[0] * 100.0 / 255.0, lab8[1] - 128.0, lab8[2] - 128.0]]], np.float32)
    bgr: FloatArray = np.asarray(cv2.cvtColor(lab, cv2.COLOR_LAB2BGR)[0, 0], dtype=np.float64)
    return bgr * 255.0


def opponent(ratio_bgr: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Opponent chromaticity ``(a, b)``: red - green, and yellow - blue.

    Parameters
    ----------
    ratio_bgr : (..., 3) array_like
        B, G, R from :meth:`ColourReference.normalise`.

    Returns
    -------
    a, b : (...) ndarray
    """
    ratio = np.asarray(ratio_bgr)
    # The offset keeps near-black things (phones, shadows, the frame's edge)
    # from turning noise into strong hues.
    total = ratio.sum(axis=-1) + 0.3
    blue = ratio[..., 0] / total
    green = ratio[..., 1] / total
    red = ratio[..., 2] / total
    return red - green, 0.5 * (red + green) - blue


def hue_difference_deg(a_deg: npt.ArrayLike, b_deg: npt.ArrayLike) -> FloatArray:
    """How far apart two hues lie round the colour circle, degrees in [0, 180].

    Parameters
    ----------
    a_deg, b_deg : array_like
        Hues in degrees, broadcastable against each other.
    """
    a = np.asarray(a_deg, dtype=np.float64)
    return np.asarray(np.abs((a - np.asarray(b_deg) + 180.0) % 360.0 - 180.0))


def column_medians(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``np.median(values, axis=0)`` of a (k, c) array without NaNs, k >= 1, to the bit.

    The middle order statistic of each column, or the mean of the two
    middle ones (``(a + b) / 2``, as numpy computes it), without
    np.median's wrapper, which costs several times the partition on the
    few pixels of a pair or a side of the mat, or a wink's few ray samples.
    """
    half = len(values) // 2
    if len(values) % 2:
        return np.asarray(np.partition(values, half, axis=0)[half])
    part = np.partition(values, (half - 1, half), axis=0)
    return np.asarray((part[half - 1] + part[half]) / 2)


def hue_saturation(ratio_bgr: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Hue (degrees) and saturation of colours in felt-brightness units.

    Parameters
    ----------
    ratio_bgr : (..., 3) array_like
        B, G, R from :meth:`ColourReference.normalise`.

    Returns
    -------
    hue_deg : (...) ndarray
        0 red, about 50 yellow, 160 green, 250 blue.
    saturation : (...) ndarray
        0 for anything neutral; about 0.3-0.6 for winks.
    """
    opp_a, opp_b = opponent(ratio_bgr)
    hue = np.degrees(np.arctan2(opp_b, opp_a)) % 360.0
    return hue, np.hypot(opp_a, opp_b)


def classify_hue(
    hue_deg: npt.ArrayLike, reference: ColourReference
) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Nearest prototype by hue.

    Parameters
    ----------
    hue_deg : (...) array_like
    reference : ColourReference

    Returns
    -------
    index : (...) ndarray of int
        Index into :data:`COLOURS`, or -1 when no prototype is within
        :data:`MAX_HUE_DISTANCE_DEG` (purple squidgers, wood grain).
    margin_deg : (...) ndarray
        How much nearer the chosen prototype is than the runner-up, degrees
        (a confidence: 0 means a tie). Resolution 1 degree.
    """
    index_lut, margin_lut = _hue_tables(tuple(float(h) for h in reference.hues_deg))
    bins = np.asarray(hue_deg, dtype=np.float64).astype(np.int64) % 360
    return index_lut[bins], margin_lut[bins]


def classify_hue_index(
    hue_deg: npt.NDArray[np.floating], reference: ColourReference
) -> npt.NDArray[np.int8]:
    """The ``index`` of :func:`classify_hue` alone, faster, for hues in [0, 360].

    Parameters
    ----------
    hue_deg : (...) ndarray of float
        Hues already in [0, 360] (as :func:`hue_saturation` gives them).
    reference : ColourReference

    Returns
    -------
    (...) ndarray of int8
        As ``classify_hue(hue_deg, reference)[0]``.
    """
    return _hue_index_table(tuple(float(h) for h in reference.hues_deg))[hue_deg.astype(np.intp)]


@functools.lru_cache(maxsize=8)
def _hue_index_table(hues_deg: tuple[float, ...]) -> npt.NDArray[np.int8]:
    """The index table of :func:`_hue_tables` as int8, with 360 degrees as 0."""
    index, _ = _hue_tables(hues_deg)
    return np.append(index, index[0]).astype(np.int8)


@functools.lru_cache(maxsize=8)
def _hue_tables(
    hues_deg: tuple[float, ...],
) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Per whole degree of hue: nearest prototype index (or -1) and margin."""
    hue = np.arange(360, dtype=np.float64) + 0.5
    diff = hue_difference_deg(hue[:, None], np.asarray(hues_deg))
    order = np.argsort(diff, axis=1)
    best = diff[np.arange(360), order[:, 0]]
    second = diff[np.arange(360), order[:, 1]]
    index = np.where(best <= MAX_HUE_DISTANCE_DEG, order[:, 0], -1).astype(np.int64)
    return index, second - best


def felt_contrast(ratio_bgr: npt.ArrayLike, felt_ratio_bgr: npt.ArrayLike) -> FloatArray:
    """How far a colour is from the felt's, in felt-brightness units.

    Parameters
    ----------
    ratio_bgr, felt_ratio_bgr : (..., 3) array_like
        From :meth:`ColourReference.normalise` (the felt's own colour
        normalised the same way).

    Returns
    -------
    (...) ndarray
        Euclidean distance; about 0.5-1.3 for winks, under 0.1 for felt.
    """
    diff = np.asarray(ratio_bgr) - np.asarray(felt_ratio_bgr)
    return np.asarray(np.sqrt((diff * diff).sum(axis=-1)))


def coverage(
    ratio_bgr: npt.ArrayLike, felt_ratio_bgr: npt.ArrayLike, wink_ratio_bgr: npt.ArrayLike
) -> FloatArray:
    """How much of each pixel a wink covers (0 felt, 1 wink).

    Parameters
    ----------
    ratio_bgr : (..., 3) array_like
        Pixel colours.
    felt_ratio_bgr : (3,) array_like
        The felt's colour there.
    wink_ratio_bgr : (3,) array_like
        The wink's colour.

    Returns
    -------
    alpha : (...) ndarray
        Linear-mixing coverage; not clipped (noise can take it below 0 or
        above 1).

    Raises
    ------
    ValueError
        When the wink's colour equals the felt's.
    """
    felt = np.asarray(felt_ratio_bgr, dtype=np.float64)
    direction = np.asarray(wink_ratio_bgr, dtype=np.float64) - felt
    norm2 = float(direction @ direction)
    if norm2 < 1e-6:
        raise ValueError(f"wink colour {wink_ratio_bgr!r} equals the felt's; coverage is undefined")
    return np.asarray((np.asarray(ratio_bgr) - felt) @ direction / norm2, dtype=np.float64)
