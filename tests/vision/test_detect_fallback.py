"""A wink the second, square-on pass loses keeps the fit its seed's rays gave it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np
import pytest
from squop_scenes import camera_at

from calibration.camera import CameraModel
from rules.board import Colour
from vision.detect import (
    _concat_rims,
    _Fits,
    _merged_blob,
    _refit_seeds,
    _Rims,
    _Seed,
    _with_fit_rows,
    _with_rows,
    detect_winks,
)
from vision.fit import CircleFits

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"


def _rims(n: int, fill: float) -> _Rims:
    """Rims of ``n`` seeds, 4 rays each, every field set from ``fill`` (row i: fill + i)."""
    row = fill + np.arange(n, dtype=float)
    return _Rims(
        points_mm=np.broadcast_to(row[:, None, None], (n, 4, 2)).copy(),
        weight=np.broadcast_to(row[:, None], (n, 4)).copy(),
        foreign=np.zeros((n, 4), dtype=bool),
        foreign_colour=np.full((n, 4), -1, dtype=np.int8),
        covered=np.zeros((n, 4), dtype=bool),
        runs_out=row.copy(),
        run_axis=np.column_stack([row, row]),
        wink_colour=np.column_stack([row, row, row]),
        own_fraction=row.copy(),
        felt_fraction=row.copy(),
        pot_hidden=np.zeros((n, 4), dtype=bool),
    )


def _fits(n: int, fill: float, ok: bool) -> _Fits:
    """Fits of ``n`` seeds whose numbers are ``fill + i`` in row i."""
    row = fill + np.arange(n, dtype=float)
    circles = CircleFits(
        centre_mm=np.column_stack([row, row]),
        radius_mm=row.copy(),
        rms_mm=row.copy(),
        inliers=np.ones((n, 4), dtype=bool),
        arc_fraction=row.copy(),
        centre_sigma_mm=row.copy(),
        ok=np.full(n, ok),
    )
    return _Fits(
        ok=np.full(n, ok),
        large=np.zeros(n, dtype=bool),
        size_confidence=row.copy(),
        circles=circles,
        occluded_fraction=row.copy(),
    )


def test_rims_of_several_passes_concatenate_in_order() -> None:
    joined = _concat_rims([_rims(2, 0.0), _rims(3, 10.0)])
    np.testing.assert_array_equal(joined.runs_out, [0.0, 1.0, 10.0, 11.0, 12.0])
    assert joined.points_mm.shape == (5, 4, 2)


def test_lost_rows_take_the_first_pass_rims_and_fits_and_no_others() -> None:
    second_rims, first_rims = _rims(3, 100.0), _rims(5, 0.0)
    second_fits, first_fits = _fits(3, 100.0, ok=False), _fits(5, 0.0, ok=True)
    # second-pass row 1 came from seed 4
    rows, source_rows = np.array([1]), np.array([4])
    rims = _with_rows(second_rims, rows, first_rims, source_rows)
    fits = _with_fit_rows(second_fits, rows, first_fits, source_rows)
    for field in dataclasses.fields(_Rims):
        np.testing.assert_array_equal(
            getattr(rims, field.name)[[0, 2]], getattr(second_rims, field.name)[[0, 2]]
        )
        np.testing.assert_array_equal(
            getattr(rims, field.name)[1], getattr(first_rims, field.name)[4]
        )
    np.testing.assert_array_equal(fits.ok, [False, True, False])
    np.testing.assert_array_equal(fits.circles.radius_mm, [100.0, 4.0, 102.0])
    np.testing.assert_array_equal(fits.circles.centre_mm[1], [4.0, 4.0])
    np.testing.assert_array_equal(fits.occluded_fraction, [100.0, 4.0, 102.0])
    # the inputs are left as they were
    assert not second_fits.ok.any()
    assert second_rims.runs_out[1] == 101.0


@pytest.mark.skipif(
    not (SAMPLES / "overhead_00103.json").exists(), reason="sample image not generated"
)
def test_wink_far_under_another_lost_by_the_square_on_pass_is_found() -> None:
    # green-S1 lies 10 mm under a neighbour: its seed's rays fit it, the
    # rays from the fitted centre (on the upper wink) did not.
    from tools.groundtruth import load_scene, to_canonical_frame

    scene = to_canonical_frame(load_scene(SAMPLES / "overhead_00103.json"))
    found = detect_winks(cv2.imread(str(SAMPLES / "overhead_00103.jpg")), scene.camera)
    wink = next(w for w in scene.winks if w.id == "green-S1")
    dist = np.hypot(*(found.mat_xy_mm - np.asarray(wink.mat_xy_mm)).T)
    best = int(np.argmin(dist))
    assert dist[best] < 2.0
    assert found.colour[best] is Colour.GREEN


def _overhead_camera() -> CameraModel:
    """1.6 m straight above the mat's centre."""
    rotation = np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]])
    return CameraModel(
        image_size_wh=(1920, 1080),
        camera_matrix=np.array([[1150.0, 0, 959.5], [0, 1150.0, 539.5], [0, 0, 1]]),
        dist_coeffs=np.zeros(5),
        rotation=rotation,
        translation_mm=-rotation @ np.array([0.0, 0.0, 1600.0]),
    )


def _blob_fit(**change: object) -> tuple[_Fits, _Rims]:
    """One failed large fit at (200, 0) mm, half its rim on its circle, its middle
    all its own colour; ``change`` overrides: ok, large, arc, own, runs_out, felt, x_mm."""
    fits, rims = _fits(1, 0.0, ok=bool(change.get("ok", False))), _rims(1, 0.0)
    x_mm = float(change.get("x_mm", 200.0))  # type: ignore[arg-type]
    circles = dataclasses.replace(
        fits.circles,
        centre_mm=np.array([[x_mm, 0.0]]),
        radius_mm=np.array([11.0]),
        rms_mm=np.array([0.8]),
        arc_fraction=np.array([change.get("arc", 0.5)], dtype=float),
    )
    fits = dataclasses.replace(
        fits, circles=circles, large=np.array([change.get("large", True)], dtype=bool)
    )
    rims = dataclasses.replace(
        rims,
        own_fraction=np.array([change.get("own", 1.0)], dtype=float),
        runs_out=np.array([change.get("runs_out", 0.2)], dtype=float),
        felt_fraction=np.array([change.get("felt", 0.0)], dtype=float),
    )
    return fits, rims


@pytest.mark.parametrize(
    ("change", "blob"),
    [
        # a large failed fit, its middle all its colour, bounded: two winks?
        ({}, True),
        # it passed as one wink: nothing to try
        ({"ok": True}, False),
        # fitted small: not a pair's union
        ({"large": False}, False),
        # too little of its rim on the circle
        ({"arc": 0.3}, False),
        # felt or another colour in its middle
        ({"own": 0.6}, False),
        ({"felt": 0.2}, False),
        # its colour runs on in most directions (a mug, a squidger)
        ({"runs_out": 0.7}, False),
        # at the mat's edge, where the table and the border pass for a rim
        ({"x_mm": 900.0}, False),
        # by the pot
        ({"x_mm": 30.0}, False),
    ],
)
def test_failed_large_fit_is_tried_as_two_winks_only_when_it_looks_like_a_pair(
    change: dict[str, object], blob: bool
) -> None:
    fits, rims = _blob_fit(**change)
    assert _merged_blob(fits, rims, _overhead_camera(), np.array([1.7])).tolist() == [blob]


def _one_fit(centre_mm: tuple[float, float], *, ok: bool, arc: float) -> _Fits:
    """One small-wink fit at ``centre_mm`` that traced ``arc`` of its rim."""
    fits = _fits(1, 0.0, ok=ok)
    circles = dataclasses.replace(
        fits.circles,
        centre_mm=np.array([centre_mm], dtype=float),
        radius_mm=np.array([8.0]),
        arc_fraction=np.array([arc]),
    )
    return dataclasses.replace(fits, circles=circles)


@pytest.mark.parametrize(
    ("seed_mm", "fit_mm", "ok", "arc", "refit"),
    [
        # the fit left its seed by 3 mm along much of a rim: tried again from its centre
        ((300.0, 100.0), (300.0, 103.0), False, 0.6, True),
        # the fit hardly moved: the same rays would give the same failed fit
        ((300.0, 100.0), (300.0, 101.0), False, 0.6, False),
        # the fit passed: nothing to try again
        ((300.0, 100.0), (300.0, 103.0), True, 0.6, False),
        # too little of a rim traced to say where a wink's centre is
        ((300.0, 100.0), (300.0, 103.0), False, 0.3, False),
        # by the pot, whose wall fits a wink-sized arc
        ((30.0, 0.0), (33.0, 0.0), False, 0.6, False),
        # by the mat's edge, where the table's edge does
        ((300.0, 440.0), (300.0, 443.0), False, 0.6, False),
    ],
)
def test_a_failed_fit_off_its_seed_is_tried_again_from_its_own_centre(
    seed_mm, fit_mm, ok: bool, arc: float, refit: bool
) -> None:
    camera = camera_at((0.0, 0.0, 1600.0))
    seed = _Seed(np.array(seed_mm), 2, np.array([90.0, 120.0, 100.0]))
    new = _refit_seeds(_one_fit(fit_mm, ok=ok, arc=arc), [seed], camera, np.array([0.0]))
    if not refit:
        assert new == []
        return
    assert len(new) == 1
    np.testing.assert_allclose(new[0].mat_xy_mm, fit_mm)
    assert new[0].colour_index == seed.colour_index
    # placed by geometry, not found in the coarse view
    assert new[0].view_rc is None
