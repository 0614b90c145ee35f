"""Which corner is blue, and what the four wink colours look like under this light.

At the start of a game each corner holds six winks of one colour behind its
baseline (rule 5.2), and the colours run clockwise blue, green, red, yellow seen
from above. We look at the triangle behind each baseline, take the pixels that
differ clearly from the felt, and try the four ways of placing the colours round
the corners; the placement whose hues fit best wins when it wins clearly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from calibration.fit import HALF_LENGTH_MM, HALF_WIDTH_MM, MAT_CORNERS_MM
from rules.board import BASELINE_DISTANCE_MM, Colour

FloatArray = npt.NDArray[np.float64]

#: Rough hue of each colour in the Lab a*b* plane (8-bit OpenCV Lab minus 128).
#: Only the direction is used.
PROTOTYPE_AB = {
    Colour.BLUE: (10.0, -45.0),
    Colour.GREEN: (-40.0, 20.0),
    Colour.RED: (50.0, 30.0),
    Colour.YELLOW: (0.0, 60.0),
}

#: Clockwise seen from above (rule 5.2). MAT_CORNERS_MM runs counter-clockwise, so
#: going round it the colours come in the reverse order.
CLOCKWISE = (Colour.BLUE, Colour.GREEN, Colour.RED, Colour.YELLOW)

#: A corner counts as holding winks when this much of its triangle is not felt.
MIN_WINK_FRACTION = 0.004
#: How much better the best placement must fit when only one corner holds winks.
SINGLE_CORNER_MARGIN = 0.45
#: How far a pixel's hue (a*b* distance) or lightness must differ from the felt
#: around it to count as part of a wink.
WINK_CHROMA = 14.0
WINK_LIGHTNESS = 40.0


@dataclass(frozen=True, eq=False)
class ColourReference:
    """What the felt and the winks look like in this image.

    Parameters
    ----------
    felt_lab : (3,) ndarray
        Median colour of the felt, 8-bit OpenCV Lab (L, a, b each 0-255).
    wink_lab : dict of Colour to (3,) ndarray
        Mean colour of each wink colour seen behind its baseline, same scale;
        only the colours that were seen.
    bgr_gains : (3,) ndarray
        Per-channel gains that make the felt grey: a white balance, usable when
        the felt is neutral (grey, beige, off-white) and no winks were seen.
    source : str
        ``"winks"`` when ``wink_lab`` was learned from the corners, ``"felt"``
        when only the felt white balance is available.
    """

    felt_lab: FloatArray
    wink_lab: dict[Colour, FloatArray] = field(default_factory=dict)
    bgr_gains: FloatArray = field(default_factory=lambda: np.ones(3))
    source: str = "felt"

    def to_json_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "felt_lab": self.felt_lab.tolist(),
            "wink_lab": {c.value: v.tolist() for c, v in self.wink_lab.items()},
            "bgr_gains": self.bgr_gains.tolist(),
            "source": self.source,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> ColourReference:
        """Inverse of :meth:`to_json_dict`."""
        return cls(
            felt_lab=np.asarray(data["felt_lab"], np.float64),
            wink_lab={Colour(k): np.asarray(v, np.float64) for k, v in data["wink_lab"].items()},
            bgr_gains=np.asarray(data["bgr_gains"], np.float64),
            source=str(data["source"]),
        )


@dataclass(frozen=True, eq=False)
class CornerColours:
    """Outcome of looking behind the baselines.

    Parameters
    ----------
    blue_corner_index : int or None
        Index into ``MAT_CORNERS_MM`` of blue's corner, None when unknown.
    margin : float
        How much better the chosen placement fits than the next (0 when unknown).
    reference : ColourReference
    """

    blue_corner_index: int | None
    margin: float
    reference: ColourReference


def _sample_lab(image_lab: npt.NDArray[np.float32], image_xy_px: FloatArray) -> FloatArray:
    h, w = image_lab.shape[:2]
    ij = np.rint(image_xy_px).astype(int)
    ok = (ij[:, 0] >= 0) & (ij[:, 0] < w) & (ij[:, 1] >= 0) & (ij[:, 1] < h)
    out = np.full((len(ij), 3), np.nan)
    out[ok] = image_lab[ij[ok, 1], ij[ok, 0]]
    return out


def _corner_grid_mm(corner_mm: FloatArray, step_mm: float = 3.0) -> FloatArray:
    """Mat points behind the baseline of one corner, clear of the lines and edges."""
    d = corner_mm / np.linalg.norm(corner_mm)
    xs = np.arange(-HALF_LENGTH_MM + 8, HALF_LENGTH_MM - 8, step_mm)
    ys = np.arange(-HALF_WIDTH_MM + 8, HALF_WIDTH_MM - 8, step_mm)
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
    return pts[pts @ d > BASELINE_DISTANCE_MM + 8]


def read_corner_colours(
    image_lab: npt.NDArray[np.float32], image_bgr: npt.NDArray[np.uint8], camera: CameraModel
) -> CornerColours:
    """Find blue's corner and the colour reference.

    Parameters
    ----------
    image_lab : (H, W, 3) float32 ndarray
        The image in 8-bit-scale OpenCV Lab.
    image_bgr : (H, W, 3) uint8 ndarray
    camera : CameraModel
        In the calibration frame (corners as ``MAT_CORNERS_MM``).
    """
    # The felt: a ring around the pot, clear of the winks that cluster there.
    ang = np.linspace(0, 2 * np.pi, 240, endpoint=False)
    radii = np.linspace(150, 380, 12)
    ring = np.array([[r * np.cos(a) * 1.8, r * np.sin(a)] for r in radii for a in ang])
    felt_samples = _sample_lab(image_lab, camera.mat_to_image(ring))
    felt_samples = felt_samples[np.all(np.isfinite(felt_samples), axis=1)]
    felt_lab = np.median(felt_samples, axis=0) if len(felt_samples) else np.full(3, 128.0)
    ring_px = np.rint(camera.mat_to_image(ring)).astype(int)
    h, w = image_bgr.shape[:2]
    ok = (ring_px[:, 0] >= 0) & (ring_px[:, 0] < w) & (ring_px[:, 1] >= 0) & (ring_px[:, 1] < h)
    felt_bgr = np.median(image_bgr[ring_px[ok, 1], ring_px[ok, 0]].astype(np.float64), axis=0)
    gains = felt_bgr.mean() / np.maximum(felt_bgr, 1.0)

    means: list[FloatArray | None] = []
    for corner in MAT_CORNERS_MM:
        lab = _sample_lab(image_lab, camera.mat_to_image(_corner_grid_mm(corner)))
        lab = lab[np.all(np.isfinite(lab), axis=1)]
        if len(lab) == 0:
            means.append(None)
            continue
        # Compare with the felt right there: lamps and vignetting darken corners.
        local = np.median(lab, axis=0)
        chroma = np.hypot(lab[:, 1] - local[1], lab[:, 2] - local[2])
        wink = lab[(chroma > WINK_CHROMA) | (np.abs(lab[:, 0] - local[0]) > WINK_LIGHTNESS)]
        means.append(
            wink.mean(axis=0) if len(wink) >= max(4, MIN_WINK_FRACTION * len(lab)) else None
        )

    seen_means = {i: m for i, m in enumerate(means) if m is not None}
    seen = list(seen_means)
    reference_felt = ColourReference(felt_lab=felt_lab, bgr_gains=gains, source="felt")
    if not seen:
        return CornerColours(None, 0.0, reference_felt)

    def unit(v: FloatArray) -> FloatArray:
        n = float(np.linalg.norm(v))
        return v / n if n > 1e-9 else v

    costs = []
    for blue_at in range(4):
        cost = 0.0
        for i in seen:
            # Counter-clockwise from blue's corner come yellow, red, green.
            colour = CLOCKWISE[(blue_at - i) % 4]
            observed = unit(seen_means[i][1:] - 128.0)
            proto = unit(np.asarray(PROTOTYPE_AB[colour]))
            cost += 1.0 - float(observed @ proto)
        costs.append(cost / len(seen))
    order = np.argsort(costs)
    best, second = int(order[0]), int(order[1])
    margin = costs[second] - costs[best]
    wink_lab = {CLOCKWISE[(best - i) % 4]: m for i, m in seen_means.items()}
    # One corner alone fixes the frame too (the colours' order is known), but a
    # colour cast could then flip it: ask for a clearer win.
    if margin < (0.3 if len(seen) >= 2 else SINGLE_CORNER_MARGIN):
        return CornerColours(None, float(margin), reference_felt)
    return CornerColours(
        best,
        float(margin),
        ColourReference(felt_lab=felt_lab, wink_lab=wink_lab, bgr_gains=gains, source="winks"),
    )
