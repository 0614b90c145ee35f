"""Squop geometry and calls: shapely against analytic answers, parallax round trips,
and synthetic frames where we know which wink is on top."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from squop_scenes import (
    WINK_BGR,
    SceneWink,
    _fill,
    _rim_px,
    detections_for,
    overhead_camera,
    render,
)

from rules.board import Colour, WinkSize
from vision.squop import (
    ARC_WEAK,
    COLOUR_DECISIVE,
    K_SIGMA,
    UPPER_CONFIDENCE_MIN,
    _ellipses_through,
    _faces_score,
    _image_rims_px,
    _levels,
    _pair_pixels,
    _pair_roi,
    _scale_range,
    _with_weak_pairs,
    analyse_squops,
    correct_parallax,
    layering_log_likelihood_ratios,
    pile_ids,
    plan_overlap,
)


def lens_area_analytic(d: float, r1: float, r2: float) -> float:
    """Area of intersection of two circles (the classic circular-segment formula)."""
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2
    a1 = r1**2 * math.acos((d**2 + r1**2 - r2**2) / (2 * d * r1))
    a2 = r2**2 * math.acos((d**2 + r2**2 - r1**2) / (2 * d * r2))
    a3 = 0.5 * math.sqrt((-d + r1 + r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2))
    return a1 + a2 - a3


@pytest.mark.parametrize(
    ("d", "r1", "r2"),
    [
        (30.0, 11.0, 8.0),  # apart: 11 mm gap
        (19.5, 11.0, 8.0),  # 0.5 mm gap
        (19.0, 11.0, 8.0),  # touching
        (18.8, 11.0, 8.0),  # 0.2 mm overlap, a marginal squop
        (12.0, 8.0, 8.0),  # two small winks, 4 mm overlap
        (5.0, 11.0, 8.0),  # deep: 14 mm overlap
        (2.0, 11.0, 8.0),  # the small one wholly inside the large one
    ],
)
def test_plan_overlap_matches_analytic_lens_and_separation(d: float, r1: float, r2: float) -> None:
    got = plan_overlap((0.0, 0.0), r1, (d * 0.6, d * 0.8), r2)
    assert got.separation_mm == pytest.approx(d - r1 - r2, abs=2e-3)
    # 256-gon discs: the chords fall short of the arcs by under 0.001 mm, so a
    # lens bounded by ~5 mm of arc loses up to ~0.005 mm^2.
    assert got.area_mm2 == pytest.approx(lens_area_analytic(d, r1, r2), rel=2e-3, abs=5e-3)


@pytest.mark.parametrize(
    "tilt_deg",
    [
        0.0,  # straight down
        45.0,  # oblique, where parallax is largest
    ],
)
@pytest.mark.parametrize("z_mm", [0.0, 1.5, 3.2])
def test_parallax_correction_round_trips(tilt_deg: float, z_mm: float) -> None:
    camera = overhead_camera(tilt_deg=tilt_deg)
    mat_xyz = np.array([[120.0, -80.0, z_mm], [-600.0, 300.0, z_mm], [0.0, 30.0, z_mm]])
    image_xy = camera.mat_to_image(mat_xyz)
    back = correct_parallax(camera, image_xy, z_mm)
    np.testing.assert_allclose(back, mat_xyz[:, :2], atol=1e-6)


def test_parallax_of_a_raised_wink_is_corrected_in_oblique_view() -> None:
    # A wink 3 mm up seen from 45 degrees: taken as flat, it is off by about 3 mm.
    camera = overhead_camera(tilt_deg=45.0)
    image_xy = camera.mat_to_image(np.array([[50.0, 20.0, 3.0]]))
    flat = correct_parallax(camera, image_xy, 0.0)[0]
    raised = correct_parallax(camera, image_xy, 3.0)[0]
    assert np.hypot(*(flat - [50.0, 20.0])) > 2.0
    np.testing.assert_allclose(raised, [50.0, 20.0], atol=1e-6)


def _pair(upper: SceneWink, lower: SceneWink, **kw: float):  # type: ignore[no-untyped-def]
    camera = overhead_camera()
    winks = [lower, upper]
    image = render(camera, winks)
    dets = detections_for(camera, winks, **kw)
    return analyse_squops(dets, camera, image)


@pytest.mark.parametrize(
    ("upper_colour", "lower_colour"),
    [
        (Colour.RED, Colour.BLUE),  # red on blue
        (Colour.BLUE, Colour.YELLOW),  # and the other way round in hue
        (Colour.GREEN, Colour.RED),
    ],
)
def test_clear_squop_names_the_upper_wink_from_the_lens_colour(
    upper_colour: Colour, lower_colour: Colour
) -> None:
    lower = SceneWink(lower_colour, WinkSize.LARGE, 100.0, 50.0, 1.5)
    upper = SceneWink(upper_colour, WinkSize.SMALL, 113.0, 50.0, 3.0)  # 6 mm overlap
    analysis = _pair(upper, lower)
    (call,) = analysis.calls
    assert call.squop
    assert (call.upper, call.lower) == (1, 0)
    assert not call.uncertain
    assert call.separation_mm == pytest.approx(-6.0, abs=0.3)


def test_parallax_correction_moves_the_upper_wink_back_over_its_true_centre() -> None:
    lower = SceneWink(Colour.BLUE, WinkSize.LARGE, -400.0, 200.0, 1.5)
    upper = SceneWink(Colour.RED, WinkSize.SMALL, -388.0, 200.0, 3.0)
    analysis = _pair(upper, lower)
    np.testing.assert_allclose(analysis.mat_xy_mm[1], [-388.0, 200.0], atol=0.3)
    assert analysis.level.tolist() == [0, 1]


def test_clear_gap_is_no_squop_and_certain() -> None:
    a = SceneWink(Colour.BLUE, WinkSize.LARGE, 0.0, 100.0)
    b = SceneWink(Colour.RED, WinkSize.SMALL, 24.0, 100.0)  # 5 mm gap
    camera = overhead_camera()
    dets = detections_for(camera, [a, b])
    analysis = analyse_squops(dets, camera, render(camera, [a, b]))
    assert all(not c.squop and not c.uncertain for c in analysis.calls)


@pytest.mark.parametrize(
    "separation_mm",
    [
        -0.3,  # a hair's overlap
        0.0,  # touching
        0.3,  # a hair's gap
    ],
)
def test_near_zero_separation_is_flagged_uncertain(separation_mm: float) -> None:
    a = SceneWink(Colour.BLUE, WinkSize.SMALL, 0.0, 100.0, 1.5)
    b = SceneWink(Colour.RED, WinkSize.SMALL, 16.0 + separation_mm, 100.0, 1.5)
    camera = overhead_camera()
    dets = detections_for(camera, [a, b], centre_sigma_mm=0.3)
    (call,) = analyse_squops(dets, camera, render(camera, [a, b])).calls
    assert call.uncertain
    assert abs(call.separation_mm) < K_SIGMA * call.sigma_mm


def _render_without_rims(camera, winks):  # type: ignore[no-untyped-def]
    """Like ``render`` but every wink one flat fill: no rim line, no shading step."""
    image = render(camera, [])
    for wk in sorted(winks, key=lambda k: k.top_z_mm):
        rim = _rim_px(camera, wk.x_mm, wk.y_mm, wk.top_z_mm, wk.radius_mm)
        _fill(image, rim, WINK_BGR[wk.colour])
    return image


def test_same_colour_pair_the_image_cannot_tell_is_uncertain_about_the_upper_wink() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.GREEN, WinkSize.LARGE, 200.0, -100.0, 1.5),
        SceneWink(Colour.GREEN, WinkSize.SMALL, 212.0, -100.0, 3.0),
    ]
    image = _render_without_rims(camera, winks)
    (call,) = analyse_squops(detections_for(camera, winks), camera, image).calls
    assert call.squop
    assert call.uncertain
    assert call.upper_confidence < ARC_WEAK


@pytest.mark.parametrize("a_on_top", [True, False])
def test_faces_fit_picks_the_disc_whose_face_runs_across_the_lens(a_on_top: bool) -> None:
    # Two discs of one colour, 9 px across, the upper face 12 L lighter (a
    # tilted wink) with a little noise: the lens belongs to the upper face.
    rows, cols = np.mgrid[0:24, 0:30]
    angles = np.linspace(0.0, 2.0 * math.pi, 64, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    poly_a, poly_b = np.array([11.0, 12.0]) + 7.0 * ring, np.array([19.0, 12.0]) + 7.0 * ring
    in_a = np.hypot(cols - 11.0, rows - 12.0) < 7.0
    in_b = np.hypot(cols - 19.0, rows - 12.0) < 7.0
    lightness = np.full(rows.shape, 60.0)
    upper, lower = (in_a, in_b) if a_on_top else (in_b, in_a)
    lightness[lower] = 110.0
    lightness[upper] = 122.0
    lightness += np.random.default_rng(3).normal(0.0, 1.5, lightness.shape)
    clear = np.ones(rows.shape, np.uint8)
    score = _faces_score(lightness, poly_a, poly_b, clear)
    assert score is not None
    assert (score > 0) == a_on_top
    # At most a best guess: never reaches a confident call.
    assert 0.5 * ARC_WEAK < abs(score) <= ARC_WEAK


def test_without_the_image_every_overlap_is_uncertain() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.BLUE, WinkSize.LARGE, 0.0, 150.0, 1.5),
        SceneWink(Colour.RED, WinkSize.SMALL, 12.0, 150.0, 3.0),
    ]
    (call,) = analyse_squops(detections_for(camera, winks), camera, None).calls
    assert call.squop and call.uncertain


def test_a_cycle_of_upper_calls_loses_its_weakest_link() -> None:
    above = {(0, 1): 0.9, (1, 2): 0.8, (2, 0): 0.1}
    level = _levels(3, above)
    assert (2, 0) not in above
    assert level.tolist() == [2, 1, 0]


def test_piles_join_winks_through_squops() -> None:
    # 0 on 1 on 2 is one pile; 3 on 4 another; 5 alone.
    assert pile_ids(6, [(0, 1), (1, 2), (3, 4)]).tolist() == [1, 1, 1, 2, 2, 0]


def test_a_doubtful_size_class_widens_the_band_of_uncertain_calls() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.BLUE, WinkSize.LARGE, 0.0, 100.0),
        SceneWink(Colour.RED, WinkSize.SMALL, 22.0, 100.0),  # 3 mm gap
    ]
    dets = detections_for(camera, winks, centre_sigma_mm=0.2)
    image = render(camera, winks)
    (sure,) = analyse_squops(dets, camera, image).calls
    (doubtful,) = analyse_squops(dets, camera, image, extra_sigma_mm=[3.0, 0.0]).calls
    assert not sure.squop and not sure.uncertain
    assert not doubtful.squop and doubtful.uncertain


def _evidence_for_true_upper(analysis, upper: int, lower: int):  # type: ignore[no-untyped-def]
    """The evidence on a pair, signed so that positive favours ``upper``."""
    if (upper, lower) in analysis.evidence:
        ev = analysis.evidence[(upper, lower)]
        return ev.score, ev.model_llr
    ev = analysis.evidence[(lower, upper)]
    return -ev.score, None if ev.model_llr is None else -ev.model_llr


@pytest.mark.parametrize(
    ("noise_mm", "lower_size_seen"),
    [
        ([[0.0, 0.0], [1.5, 0.0]], WinkSize.LARGE),  # upper's centre 1.5 mm off, towards the lower
        ([[-1.2, 0.8], [0.0, 0.0]], WinkSize.LARGE),  # lower's centre 1.4 mm off
        ([[0.0, 0.0], [0.0, 0.0]], WinkSize.SMALL),  # lower wink (large) reported small
        ([[0.8, 0.0], [-0.8, 0.0]], WinkSize.SMALL),  # both: centres off and the size wrong
    ],
)
def test_upper_wink_is_found_despite_realistic_detection_errors(
    noise_mm: list[list[float]], lower_size_seen: WinkSize
) -> None:
    camera = overhead_camera()
    lower = SceneWink(Colour.BLUE, WinkSize.LARGE, 100.0, 50.0, 1.5)
    upper = SceneWink(Colour.YELLOW, WinkSize.SMALL, 114.0, 50.0, 3.0)  # 5 mm overlap
    image = render(camera, [lower, upper])
    dets = detections_for(camera, [lower, upper], noise_mm=noise_mm)
    dets = dataclasses.replace(dets, size=np.array([lower_size_seen, WinkSize.SMALL], dtype=object))
    analysis = analyse_squops(dets, camera, image)
    score, _ = _evidence_for_true_upper(analysis, upper=1, lower=0)
    assert score > 0
    (call,) = analysis.calls
    assert (call.upper, call.lower) == (1, 0)
    # The layering fit on its own (analyse_squops skips it when the lens
    # colour is decisive, as here) also finds the upper wink.
    assert _layering_llr(camera, image, dets, upper=1, lower=0) > 0


def _layering_llr(camera, image, dets, *, upper: int, lower: int) -> float:  # type: ignore[no-untyped-def]
    """The layering fit's log-likelihood ratio for ``upper`` over ``lower``, from detections."""
    flat_z = np.full(len(dets), 1.5)
    plan = camera.image_to_mat(dets.image_xy_px, flat_z)
    radius = np.array([s.diameter_mm / 2 for s in dets.size])
    rims = _image_rims_px(camera, plan, radius, flat_z)
    centres, invs = _ellipses_through(rims)
    roi = _pair_roi(image, rims[upper], rims[lower], ())
    assert roi is not None
    pixels = _pair_pixels(
        roi,
        (centres[upper], invs[upper]),
        (centres[lower], invs[lower]),
        _scale_range(radius[upper]),
        _scale_range(radius[lower]),
    )
    assert pixels is not None
    return float(layering_log_likelihood_ratios([pixels])[0])


def test_a_decisive_lens_colour_settles_the_pair_without_the_layering_fit() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.BLUE, WinkSize.LARGE, 100.0, 50.0, 1.5),
        SceneWink(Colour.YELLOW, WinkSize.SMALL, 114.0, 50.0, 3.0),  # yellow on blue, 5 mm
    ]
    analysis = analyse_squops(detections_for(camera, winks), camera, render(camera, winks))
    (evidence,) = analysis.evidence.values()
    assert evidence.colour_score is not None and abs(evidence.colour_score) >= COLOUR_DECISIVE
    assert evidence.model_llr is None
    (call,) = analysis.calls
    assert (call.upper, call.lower) == (1, 0) and call.squop and not call.uncertain


@pytest.mark.parametrize(
    ("lower_size", "upper_size", "offset_mm"),
    [
        (WinkSize.LARGE, WinkSize.SMALL, 14.0),  # small on large, 5 mm overlap
        (WinkSize.SMALL, WinkSize.SMALL, 11.0),  # two small, 5 mm overlap
        (WinkSize.LARGE, WinkSize.LARGE, 15.0),  # two large, 7 mm overlap
    ],
)
@pytest.mark.parametrize("upper_first", [False, True])
def test_one_colour_upper_wink_is_told_by_its_unbroken_rim(
    lower_size: WinkSize, upper_size: WinkSize, offset_mm: float, upper_first: bool
) -> None:
    # The render draws each wink's rim as a dark ring: only the upper one's
    # ring runs across the other wink's face. A line this plain is a strong
    # arc cue, and strong arc cues were right on every pair measured (71 of
    # 71 over 0.4), so the call is confident.
    camera = overhead_camera()
    lower = SceneWink(Colour.GREEN, lower_size, 100.0, 50.0, 1.5)
    upper = SceneWink(Colour.GREEN, upper_size, 100.0 + offset_mm, 50.0, 3.0)
    winks = [upper, lower] if upper_first else [lower, upper]
    up_index = 0 if upper_first else 1
    analysis = analyse_squops(detections_for(camera, winks), camera, render(camera, winks))
    (call,) = analysis.calls
    (evidence,) = analysis.evidence.values()
    assert evidence.arc_score is not None
    assert evidence.arc_score is not None and abs(evidence.arc_score) >= UPPER_CONFIDENCE_MIN
    assert call.squop and call.upper == up_index
    assert not call.uncertain


def test_layering_fits_in_one_batch_match_fits_one_pair_at_a_time() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.BLUE, WinkSize.LARGE, 100.0, 50.0, 1.5),
        SceneWink(Colour.RED, WinkSize.SMALL, 114.0, 50.0, 3.0),  # red on blue
        SceneWink(Colour.GREEN, WinkSize.SMALL, -300.0, -80.0, 1.5),
        SceneWink(Colour.YELLOW, WinkSize.LARGE, -300.0, -63.0, 3.0),  # yellow on green
    ]
    image = render(camera, winks)
    flat = np.array([[w.x_mm, w.y_mm] for w in winks])
    radius = np.array([w.radius_mm for w in winks])
    rims = _image_rims_px(camera, flat, radius, np.array([w.top_z_mm for w in winks]))
    centres, invs = _ellipses_through(rims)
    pixels = []
    for i, j in ((0, 1), (2, 3)):
        roi = _pair_roi(image, rims[i], rims[j], ())
        assert roi is not None
        one = _pair_pixels(
            roi,
            (centres[i], invs[i]),
            (centres[j], invs[j]),
            _scale_range(radius[i]),
            _scale_range(radius[j]),
        )
        assert one is not None
        pixels.append(one)
    together = layering_log_likelihood_ratios(pixels)
    apart = np.concatenate([layering_log_likelihood_ratios([p]) for p in pixels])
    np.testing.assert_allclose(together, apart, rtol=1e-4)
    # Both lower winks (indices 0 and 2, the 'a' of each pair) are under.
    assert (together < 0).all()


def test_a_wink_shown_to_rest_on_another_is_above_a_flat_one_of_its_own_colour() -> None:
    # Red-S lies on the blue large wink (the lens shows red: clear) and
    # overlaps another red wink lying flat on the mat. Red on red shows no
    # lens colour, but a flat wink cannot be above a raised one without
    # resting on it, so the raised red wink is the upper one.
    camera = overhead_camera()
    winks = [
        SceneWink(Colour.BLUE, WinkSize.LARGE, 100.0, 50.0, 1.5),
        SceneWink(Colour.RED, WinkSize.SMALL, 114.0, 50.0, 3.0),
        SceneWink(Colour.RED, WinkSize.SMALL, 128.0, 50.0, 1.5),
    ]
    analysis = analyse_squops(detections_for(camera, winks), camera, render(camera, winks))
    calls = {frozenset((c.upper, c.lower)): c for c in analysis.calls}
    on_blue = calls[frozenset((0, 1))]
    on_red = calls[frozenset((1, 2))]
    assert on_blue.squop and (on_blue.upper, on_blue.lower) == (1, 0)
    assert on_red.squop and (on_red.upper, on_red.lower) == (1, 2)
    assert on_red.uncertain  # one colour: still for the umpire to confirm


@pytest.mark.parametrize(
    ("weak", "expected"),
    [
        ((1, 2, -0.1, False), (1, 2)),  # untold (one colour): 1 rests on 0, so it is the upper
        ((2, 1, 0.1, False), (1, 2)),  # the same pair listed the other way round
        ((1, 2, -0.1, True), (2, 1)),  # told (two colours): the image's weak cue stands
        ((2, 3, -0.1, False), (3, 2)),  # neither rests on anything: the cue breaks the tie
    ],
)
def test_pairs_the_image_cannot_tell_are_oriented_by_the_clear_calls(
    weak: tuple[int, int, float, bool], expected: tuple[int, int]
) -> None:
    above = _with_weak_pairs(4, {(1, 0): 0.9}, [weak])
    assert expected in above
    assert (expected[1], expected[0]) not in above
    assert above[(1, 0)] == 0.9


@pytest.mark.parametrize(
    ("weak", "confidence"),
    [
        ((1, 2, -0.3, False), 0.0),  # the cue favoured 2, the clear calls chose 1: no support
        ((1, 2, 0.3, False), 0.3),  # the cue agrees with the clear calls
        ((1, 2, -0.3, True), 0.3),  # told: the cue itself chose 2 over 1
    ],
)
def test_a_weak_pair_carries_only_the_image_support_for_the_chosen_upper_wink(
    weak: tuple[int, int, float, bool], confidence: float
) -> None:
    above = _with_weak_pairs(4, {(1, 0): 0.9}, [weak])
    (key,) = (k for k in above if k != (1, 0))
    assert above[key] == confidence


def test_coverage_far_outside_an_outline_is_zero_without_overflow_warnings() -> None:
    import warnings

    from vision.squop import _coverage

    # A pixel 200 px outside a 10 px circle, as in a close-up at many px per mm.
    dx = np.array([210.0, 5.0], dtype=np.float32)
    dy = np.zeros(2, dtype=np.float32)
    inv = np.array([[0.1, 0.1], [0.0, 0.0], [0.0, 0.0], [0.1, 0.1]], dtype=np.float32)
    scale = np.ones(2, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cover, _ = _coverage(dx, dy, inv, scale, with_grad=False)
    assert cover[0] == pytest.approx(0.0, abs=1e-12)
    assert cover[1] == pytest.approx(1.0, abs=1e-3)  # 5 px inside the outline
