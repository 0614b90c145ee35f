"""WinkDetections: the parallel arrays of one frame's winks (vision/detections.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rules.board import Colour, WinkSize
from vision.detections import WinkDetections


def _detections(n: int, offset: float = 0.0) -> WinkDetections:
    k = np.arange(n, dtype=float) + offset
    return WinkDetections(
        image_xy_px=np.column_stack([10 * k, 5 * k]),
        mat_xy_mm=np.column_stack([k, -k]),
        z_mm=np.full(n, 1.7),
        radius_mm=np.where(k % 2 == 0, 8.0, 11.0),
        colour=np.array([list(Colour)[int(i) % 4] for i in k], dtype=object),
        size=np.array([WinkSize.SMALL if i % 2 == 0 else WinkSize.LARGE for i in k], dtype=object),
        confidence=np.linspace(0.5, 1.0, n),
        rim_visible_fraction=np.ones(n),
        centre_sigma_mm=np.full(n, 0.3),
        rim_image_px=tuple(np.full((3, 2), i) for i in k),
        rim_occluded_fraction=np.zeros(n),
        size_confidence=np.full(n, 0.9),
    )


def _same(a: WinkDetections, b: WinkDetections) -> bool:
    arrays = (
        "image_xy_px", "mat_xy_mm", "z_mm", "radius_mm", "colour", "size", "confidence",
        "rim_visible_fraction", "centre_sigma_mm", "rim_occluded_fraction", "size_confidence",
    )  # fmt: skip
    return (
        all(np.array_equal(getattr(a, f), getattr(b, f)) for f in arrays)
        and len(a.rim_image_px) == len(b.rim_image_px)
        and all(np.array_equal(p, q) for p, q in zip(a.rim_image_px, b.rim_image_px, strict=True))
    )


def test_concatenating_the_parts_of_a_split_gives_the_whole_back() -> None:
    whole = _detections(7)
    parts = [whole[np.arange(0, 3)], whole[np.arange(3, 3)], whole[np.arange(3, 7)]]
    assert _same(WinkDetections.concatenate(parts), whole)


def test_concatenating_nothing_or_only_empty_parts_gives_no_winks() -> None:
    assert len(WinkDetections.concatenate([])) == 0
    assert len(WinkDetections.concatenate([WinkDetections.empty(), WinkDetections.empty()])) == 0


def test_an_optional_array_one_part_lacks_is_nan_for_its_winks() -> None:
    measured = _detections(2)
    unmeasured = replace(_detections(3, offset=2.0), size_confidence=None, rim_image_px=())
    both = WinkDetections.concatenate([measured, unmeasured])
    assert len(both) == 5
    assert both.size_confidence is not None
    assert both.size_confidence[:2].tolist() == [0.9, 0.9]
    assert np.isnan(both.size_confidence[2:]).all()
    # Rim points only for some winks would no longer run parallel: dropped.
    assert both.rim_image_px == ()


def test_an_optional_array_every_part_lacks_stays_absent() -> None:
    parts = [
        replace(_detections(2), size_confidence=None),
        replace(_detections(1), size_confidence=None),
    ]
    assert WinkDetections.concatenate(parts).size_confidence is None


def test_one_part_with_winks_comes_back_whole() -> None:
    only = _detections(3)
    assert _same(WinkDetections.concatenate([WinkDetections.empty(), only]), only)


def test_runner_up_colours_are_kept_only_when_every_part_has_them() -> None:
    def with_runner_up(d: WinkDetections) -> WinkDetections:
        return replace(
            d,
            runner_up_colour=np.array([Colour.GREEN] * len(d), dtype=object),
            colour_margin_deg=np.full(len(d), 20.0),
        )

    a, b = with_runner_up(_detections(2)), with_runner_up(_detections(3, offset=2.0))
    both = WinkDetections.concatenate([a, b])
    assert both.runner_up_colour is not None and list(both.runner_up_colour) == [Colour.GREEN] * 5
    assert both[np.array([4])].colour_margin_deg.tolist() == [20.0]
    mixed = WinkDetections.concatenate([a, _detections(3, offset=2.0)])
    assert mixed.runner_up_colour is None and mixed.colour_margin_deg is None
