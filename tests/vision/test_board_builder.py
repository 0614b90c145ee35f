"""Assembling the board from one frame's detections (vision/board_builder.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from squop_scenes import SceneWink, detections_for, overhead_camera

from rules.board import Colour, WinkSize
from vision.board_builder import assemble_board

# Three blue winks far apart on open felt; the sizes and size confidences
# are set per case below.
_PLACES_MM = ((-300.0, 100.0), (0.0, -200.0), (300.0, 150.0))


@pytest.mark.parametrize(
    ("size_confidence", "relabelled"),
    [
        # The middle one, least sure of its size, becomes small.
        ((0.9, 0.1, 0.8), 1),
        # The unsure one listed last: the order of detection does not matter.
        ((0.9, 0.8, 0.2), 2),
    ],
)
def test_a_third_large_wink_relabelled_is_the_one_least_sure_of_its_size(
    size_confidence: tuple[float, ...], relabelled: int
) -> None:
    # Rule 2.1.1: two large winks per colour; all three were read large. The
    # detector reports each class's nominal radius, so the radius cannot say
    # which one to move.
    camera = overhead_camera()
    winks = [SceneWink(Colour.BLUE, WinkSize.LARGE, x, y) for x, y in _PLACES_MM]
    dets = replace(detections_for(camera, winks), size_confidence=np.array(size_confidence))
    assembly = assemble_board(dets, camera)
    by_place = {
        min(range(3), key=lambda k: np.hypot(*(np.asarray(w.mat_xy) - _PLACES_MM[k]))): w.size
        for w in assembly.board.winks
        if w.mat_xy is not None and not w.inferred
    }
    expected = {k: WinkSize.SMALL if k == relabelled else WinkSize.LARGE for k in range(3)}
    assert by_place == expected
    assert any("third large wink was relabelled small" in note for note in assembly.notes)


def test_a_fifth_small_wink_relabelled_is_the_one_least_sure_of_its_size() -> None:
    camera = overhead_camera()
    places_mm = [(-400.0 + 160.0 * k, 120.0 * (k % 2)) for k in range(6)]
    winks = [SceneWink(Colour.RED, WinkSize.SMALL, x, y) for x, y in places_mm]
    confidence = np.array([0.9, 0.95, 0.05, 0.8, 0.3, 0.9])
    dets = replace(detections_for(camera, winks), size_confidence=confidence)
    assembly = assemble_board(dets, camera)
    large_places = sorted(
        min(range(6), key=lambda k: np.hypot(*(np.asarray(w.mat_xy) - places_mm[k])))
        for w in assembly.board.winks
        if w.size is WinkSize.LARGE and w.colour is Colour.RED
    )
    # Six read small, rule 2.1.1 allows four: the two least sure become large.
    assert large_places == [2, 4]
