"""Annotation outlines winks in their colours, marks uncertain ones, leaves the input alone."""

from __future__ import annotations

import numpy as np
from squop_scenes import SceneWink, detections_for, overhead_camera, render

from rules.board import Colour, WinkSize
from vision.annotate import COLOUR_BGR, UNCERTAIN_BGR, annotate_frame, wrap_notes
from vision.pipeline import analyze_frame


def test_annotation_outlines_winks_and_marks_uncertain_ones() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.RED, WinkSize.SMALL, 300.0, 100.0),
        # Two blue winks 0.1 mm apart: uncertain.
        SceneWink(Colour.BLUE, WinkSize.SMALL, -300.0, 100.0),
        SceneWink(Colour.BLUE, WinkSize.SMALL, -283.9, 100.0),
    ]
    image = render(camera, winks)
    before = image.copy()
    analysis = analyze_frame(image, camera, detections=detections_for(camera, winks))
    drawn = annotate_frame(image, analysis.board, camera, notes=analysis.notes)
    assert np.array_equal(image, before)
    assert drawn.shape == image.shape

    def has_colour_near(mat_xy: tuple[float, float], bgr: tuple[int, int, int]) -> bool:
        cx, cy = camera.mat_to_image(np.array([[*mat_xy, 1.5]]))[0].astype(int)
        patch = drawn[cy - 25 : cy + 25, cx - 25 : cx + 25].astype(int)
        return bool((np.abs(patch - np.array(bgr)).sum(axis=2) < 60).any())

    assert has_colour_near((300.0, 100.0), COLOUR_BGR[Colour.RED])
    assert not has_colour_near((300.0, 100.0), UNCERTAIN_BGR)
    assert has_colour_near((-292.0, 100.0), UNCERTAIN_BGR)
    # The tiddlies panel sits in the top-left corner.
    assert (drawn[:20, :200] != image[:20, :200]).any()


def test_long_notes_are_wrapped_not_cut() -> None:
    note = (
        "part of the mat is hidden (310 cm^2 around x=300 mm, y=-150 mm): winks there are "
        "not reported, so they are absent from the board"
    )
    lines = wrap_notes((note, "short"), 40)
    assert all(len(line) <= 40 for line in lines)
    assert " ".join(line.strip() for line in lines[:-1]).split() == note.split()
    assert lines[-1] == "short"
