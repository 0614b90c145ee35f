"""Winks found in one frame, as parallel arrays (supervision's ``Detections`` style).

Detection (finding discs, fitting rims, classifying colour and size) produces
:class:`WinkDetections`; board assembly (squops, statuses, piles) consumes it
and produces a :class:`rules.board.Board`. Everything here is in the
project's own types: no raw OpenCV output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rules.board import Colour, WinkSize

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class WinkDetections:
    """``n`` detected winks in one frame.

    Parameters
    ----------
    image_xy_px : (n, 2) ndarray
        Fitted centre of each wink's top face in the image, pixels.
    mat_xy_mm : (n, 2) ndarray
        Plan-view centre in mat mm (canonical frame), corrected for the
        height ``z_mm`` of the top face (parallax).
    z_mm : (n,) ndarray
        Estimated height of the top face above the mat, mm.
    radius_mm : (n,) ndarray
        Radius on the mat, mm: :func:`vision.detect.detect_winks` reports
        the nominal radius of the size class it chose (8 or 11 mm).
    colour : (n,) ndarray of Colour
    size : (n,) ndarray of WinkSize
    confidence : (n,) ndarray
        Detection confidence in [0, 1].
    rim_visible_fraction : (n,) ndarray
        Fraction of the rim seen in the image (1 for an unoccluded wink).
    centre_sigma_mm : (n,) ndarray
        One-sigma uncertainty of the plan-view centre, mm.
    rim_image_px : tuple of (k_i, 2) ndarrays
        The visible rim edge points used in each fit, pixels.
    rim_occluded_fraction : (n,) ndarray or None
        Fraction of directions around the wink in which its rim is hidden by
        another wink: the wink's colour gives way to another wink's colour
        *inside* the fitted circle. High for a wink lying under another one,
        near 0 for a wink on top (whose rim is complete) or alone; evidence
        for which wink of an overlapping pair is the upper. ``None`` when
        the producer did not measure it; NaN for the winks of a part that did
        not measure it (see :meth:`concatenate`).
    size_confidence : (n,) ndarray or None
        Confidence in [0, 1] of the size class (0: the fitted radius lies
        half way between 8 and 11 mm). ``None`` when not measured; NaN for
        the winks of a part that did not measure it (see :meth:`concatenate`).
    runner_up_colour : (n,) ndarray of Colour or None
        Each wink's next likeliest colour (by hue). ``None`` when not measured.
    colour_margin_deg : (n,) ndarray or None
        How much nearer in hue its own colour is than the runner-up, degrees
        (0: a tie). ``None`` when not measured.
    """

    image_xy_px: FloatArray
    mat_xy_mm: FloatArray
    z_mm: FloatArray
    radius_mm: FloatArray
    colour: npt.NDArray[np.object_]
    size: npt.NDArray[np.object_]
    confidence: FloatArray
    rim_visible_fraction: FloatArray
    centre_sigma_mm: FloatArray
    rim_image_px: tuple[FloatArray, ...] = field(default=())
    rim_occluded_fraction: FloatArray | None = None
    size_confidence: FloatArray | None = None
    runner_up_colour: npt.NDArray[np.object_] | None = None
    colour_margin_deg: FloatArray | None = None

    def __post_init__(self) -> None:
        n = len(self.image_xy_px)
        two_d = {"image_xy_px": self.image_xy_px, "mat_xy_mm": self.mat_xy_mm}
        for name, value in two_d.items():
            if np.shape(value) != (n, 2):
                raise ValueError(
                    f"{name} must have shape ({n}, 2), but got shape {np.shape(value)}"
                )
        one_d: dict[str, Any] = {
            "z_mm": self.z_mm,
            "radius_mm": self.radius_mm,
            "colour": self.colour,
            "size": self.size,
            "confidence": self.confidence,
            "rim_visible_fraction": self.rim_visible_fraction,
            "centre_sigma_mm": self.centre_sigma_mm,
        }
        for name, optional in (
            ("rim_occluded_fraction", self.rim_occluded_fraction),
            ("size_confidence", self.size_confidence),
            ("runner_up_colour", self.runner_up_colour),
            ("colour_margin_deg", self.colour_margin_deg),
        ):
            if optional is not None:
                one_d[name] = optional
        for name, value in one_d.items():
            if np.shape(value) != (n,):
                raise ValueError(f"{name} must have shape ({n},), but got shape {np.shape(value)}")
        if self.rim_image_px and len(self.rim_image_px) != n:
            raise ValueError(
                f"rim_image_px must hold {n} arrays, but holds {len(self.rim_image_px)}"
            )
        for c in self.colour:
            if not isinstance(c, Colour):
                raise ValueError(f"colour entries must be Colour, but got {c!r}")
        for c in () if self.runner_up_colour is None else self.runner_up_colour:
            if not isinstance(c, Colour):
                raise ValueError(f"runner_up_colour entries must be Colour, but got {c!r}")
        for s in self.size:
            if not isinstance(s, WinkSize):
                raise ValueError(f"size entries must be WinkSize, but got {s!r}")

    def __len__(self) -> int:
        return len(self.image_xy_px)

    def __getitem__(self, index: npt.ArrayLike) -> WinkDetections:
        """A filtered copy: ``detections[detections.confidence > 0.5]``."""
        idx = np.asarray(index)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        idx = np.atleast_1d(idx).astype(int)
        return WinkDetections(
            image_xy_px=self.image_xy_px[idx].reshape(-1, 2),
            mat_xy_mm=self.mat_xy_mm[idx].reshape(-1, 2),
            z_mm=self.z_mm[idx],
            radius_mm=self.radius_mm[idx],
            colour=self.colour[idx],
            size=self.size[idx],
            confidence=self.confidence[idx],
            rim_visible_fraction=self.rim_visible_fraction[idx],
            centre_sigma_mm=self.centre_sigma_mm[idx],
            rim_image_px=tuple(self.rim_image_px[i] for i in idx) if self.rim_image_px else (),
            rim_occluded_fraction=(
                None if self.rim_occluded_fraction is None else self.rim_occluded_fraction[idx]
            ),
            size_confidence=None if self.size_confidence is None else self.size_confidence[idx],
            runner_up_colour=(
                None if self.runner_up_colour is None else self.runner_up_colour[idx]
            ),
            colour_margin_deg=(
                None if self.colour_margin_deg is None else self.colour_margin_deg[idx]
            ),
        )

    @classmethod
    def empty(cls) -> WinkDetections:
        """No winks."""
        return cls(
            image_xy_px=np.zeros((0, 2)),
            mat_xy_mm=np.zeros((0, 2)),
            z_mm=np.zeros(0),
            radius_mm=np.zeros(0),
            colour=np.zeros(0, dtype=object),
            size=np.zeros(0, dtype=object),
            confidence=np.zeros(0),
            rim_visible_fraction=np.zeros(0),
            centre_sigma_mm=np.zeros(0),
        )

    @classmethod
    def concatenate(cls, parts: Sequence[WinkDetections]) -> WinkDetections:
        """The detections of each part in turn (supervision's ``Detections.merge``).

        Parameters
        ----------
        parts : sequence of WinkDetections

        Returns
        -------
        WinkDetections
            Every part's winks, in order. An optional array that some parts
            lack is NaN for their winks (``None`` when all lack it); the rim
            points are kept only when every non-empty part has them.
        """
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]

        def optional(values: list[FloatArray | None]) -> FloatArray | None:
            if all(v is None for v in values):
                return None
            filled = [
                np.full(len(p), np.nan) if v is None else v
                for p, v in zip(parts, values, strict=True)
            ]
            return np.concatenate(filled)

        have_rims = all(p.rim_image_px for p in parts)
        # The runner-up colours only when every part has them (None is no Colour).
        have_runner_up = all(
            p.runner_up_colour is not None and p.colour_margin_deg is not None for p in parts
        )
        return cls(
            image_xy_px=np.vstack([p.image_xy_px for p in parts]),
            mat_xy_mm=np.vstack([p.mat_xy_mm for p in parts]),
            z_mm=np.concatenate([p.z_mm for p in parts]),
            radius_mm=np.concatenate([p.radius_mm for p in parts]),
            colour=np.concatenate([p.colour for p in parts]),
            size=np.concatenate([p.size for p in parts]),
            confidence=np.concatenate([p.confidence for p in parts]),
            rim_visible_fraction=np.concatenate([p.rim_visible_fraction for p in parts]),
            centre_sigma_mm=np.concatenate([p.centre_sigma_mm for p in parts]),
            rim_image_px=tuple(r for p in parts for r in p.rim_image_px) if have_rims else (),
            rim_occluded_fraction=optional([p.rim_occluded_fraction for p in parts]),
            size_confidence=optional([p.size_confidence for p in parts]),
            runner_up_colour=(
                np.concatenate([p.runner_up_colour for p in parts])  # type: ignore[misc]
                if have_runner_up
                else None
            ),
            colour_margin_deg=(
                np.concatenate([p.colour_margin_deg for p in parts])  # type: ignore[misc]
                if have_runner_up
                else None
            ),
        )
