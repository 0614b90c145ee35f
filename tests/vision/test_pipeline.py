"""The frame pipeline on synthetic frames: board, statuses, potted inference,
hidden regions (hands), bad input and ids kept between frames."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from squop_scenes import SceneWink, detections_for, overhead_camera, render

from rules.board import MAT_WIDTH_MM, Colour, WinkSize, WinkStatus
from tools.groundtruth import load_scene, to_canonical_frame
from vision.detections import WinkDetections
from vision.pipeline import (
    MatNotVisibleError,
    StillCameraAnalyzer,
    _brighter_felt,
    _farther_than,
    _shrunk_over,
    analyze_frame,
    find_hidden_regions,
    prepare_context,
)

B, G, R, Y = Colour.BLUE, Colour.GREEN, Colour.RED, Colour.YELLOW
L, S = WinkSize.LARGE, WinkSize.SMALL

# A game in progress (canonical frame: blue's corner at (-914.4, 457.2)).
SCENE = [
    SceneWink(B, L, 100.0, 50.0, 1.5),  # squopped by red-S below
    SceneWink(R, S, 113.0, 50.0, 3.0),  # on the blue large wink: 6 mm overlap
    SceneWink(B, S, -860.0, 420.0),  # behind blue's baseline: unplayed
    SceneWink(G, S, 300.0, -200.0),  # free
    SceneWink(G, L, 912.0, 0.0),  # straddles the mat's short edge: off (rule 13)
    SceneWink(Y, S, -250.0, -300.0),  # free
    SceneWink(Y, S, 0.0, 8.0, 20.0),  # in the pot
]


@pytest.fixture(scope="module")
def frame():  # type: ignore[no-untyped-def]
    camera = overhead_camera()
    return camera, render(camera, SCENE), detections_for(camera, SCENE)


def test_board_has_statuses_squops_and_six_winks_per_colour(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, dets = frame
    analysis = analyze_frame(image, prepare_context(camera), detections=dets)
    board = analysis.board
    board.validate_or_raise()
    assert len(board.winks) == 24
    by_pos = {(round(w.x_mm), round(w.y_mm)): w for w in board.winks if w.x_mm is not None}
    assert by_pos[(100, 50)].status is WinkStatus.SQUOPPED
    upper = by_pos[(113, 50)]
    assert upper.status is WinkStatus.FREE
    assert upper.squops == (by_pos[(100, 50)].id,)
    assert upper.pile == by_pos[(100, 50)].pile is not None
    assert by_pos[(-860, 420)].status is WinkStatus.UNPLAYED
    assert by_pos[(300, -200)].status is WinkStatus.FREE
    assert by_pos[(912, 0)].status is WinkStatus.OFF
    # Seen in the pot: one yellow; the rest of each colour inferred potted
    # (yellow: 6 minus 1 seen elsewhere = 5, one of them seen).
    assert board.count(Y, WinkStatus.POTTED) == 5
    assert any("inferred" in n for n in analysis.notes)
    inferred = [w for w in board.winks if getattr(w, "inferred", False)]
    assert len(inferred) == 24 - len(SCENE)
    assert all(w.status is WinkStatus.POTTED for w in inferred)
    # Rule 19.1: 3 per potted wink, 1 per free wink.
    assert board.tiddlies == {
        B: 3 * 4,  # blue: 4 potted, 1 squopped, 1 unplayed
        G: 3 * 4 + 1,  # green: 4 potted, 1 free, 1 off
        R: 3 * 5 + 1,  # red: 5 potted, 1 free (squopping)
        Y: 3 * 5 + 1,  # yellow: 5 potted, 1 free
    }
    assert set(analysis.timings_ms) >= {"hidden_regions", "assemble", "total"}


def test_ids_are_size_class_and_index(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, dets = frame
    board = analyze_frame(image, camera, detections=dets).board
    ids = sorted(w.id for w in board.winks if w.colour is B)
    assert ids == ["blue-L1", "blue-L2", "blue-S1", "blue-S2", "blue-S3", "blue-S4"]


def test_previous_board_keeps_ids_when_winks_move_a_little(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, dets = frame
    first = analyze_frame(image, camera, detections=dets).board
    moved = [SceneWink(w.colour, w.size, w.x_mm + 3.0, w.y_mm - 2.0, w.top_z_mm) for w in SCENE]
    # Reverse the detection order: ids must follow positions, not order.
    dets2 = detections_for(camera, moved[::-1])
    second = analyze_frame(render(camera, moved), camera, detections=dets2, previous=first).board
    for w in first.winks:
        if w.x_mm is None or w.status is WinkStatus.POTTED:
            continue
        again = second.wink(w.id)
        assert again.x_mm == pytest.approx(w.x_mm + 3.0, abs=0.5)


def test_hands_over_the_mat_are_reported_as_hidden_not_guessed(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, dets = frame
    hand = image.copy()
    centre = camera.mat_to_image(np.array([[300.0, -200.0, 0.0]]))[0]
    cv2.ellipse(hand, (int(centre[0]), int(centre[1])), (70, 45), 20, 0, 360, (90, 120, 200), -1)
    analysis = analyze_frame(hand, camera, detections=dets)
    assert len(analysis.hidden_regions) == 1
    region = analysis.hidden_regions[0]
    assert region.contains_mat_xy([[300.0, -200.0]]).tolist() == [True]
    assert 5_000 < region.area_mm2 < 40_000
    # The green wink under the hand is not reported as seen there.
    assert all(
        w.x_mm is None or np.hypot(w.x_mm - 300.0, w.y_mm + 200.0) > 30
        for w in analysis.board.winks
    )
    assert any("hidden" in n for n in analysis.notes)
    # Its absence makes an inferred potted wink that is flagged uncertain.
    green_inferred = [w for w in analysis.board.of_colour(G) if getattr(w, "inferred", False)]
    assert green_inferred and all(w.uncertain for w in green_inferred)


def test_clean_frame_has_no_hidden_region(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, dets = frame
    assert analyze_frame(image, camera, detections=dets).hidden_regions == ()


LAMP_SPOT = Path(__file__).parent / "data" / "lamp_spot_00330"


@pytest.fixture(scope="module")
def lamp_spot():  # type: ignore[no-untyped-def]
    scene = to_canonical_frame(load_scene(LAMP_SPOT.with_suffix(".json")))
    image = cv2.imread(str(LAMP_SPOT.with_suffix(".jpg")))
    return scene.camera, image


def test_a_lamps_hot_spot_on_green_felt_is_not_a_hidden_region(lamp_spot) -> None:  # type: ignore[no-untyped-def]
    camera, image = lamp_spot
    # The spot is 1.4 times the felt's brightness in every channel; Lab sees
    # it as too light and too saturated for felt.
    assert find_hidden_regions(image, prepare_context(camera))[0] == ()


def test_a_hand_in_a_lamps_hot_spot_is_still_hidden(lamp_spot) -> None:  # type: ignore[no-untyped-def]
    camera, image = lamp_spot
    # In the hot spot, just in front of green's baseline.
    place_mm = (780.0, 380.0)
    centre = camera.mat_to_image(np.array([[*place_mm, 0.0]]))[0]
    hand = image.copy()
    cv2.ellipse(hand, (int(centre[0]), int(centre[1])), (60, 35), 30, 0, 360, (120, 150, 205), -1)
    regions = find_hidden_regions(hand, prepare_context(camera))[0]
    assert len(regions) == 1
    assert regions[0].contains_mat_xy([place_mm]).tolist() == [True]


@pytest.mark.parametrize(
    ("pixel_bgr", "felt_bgr", "brighter"),
    [
        ((125, 219, 122), (89, 157, 87), True),  # the generated hot spot: 1.40 x green felt
        ((89, 157, 87), (89, 157, 87), True),  # the felt itself
        ((62, 110, 61), (89, 157, 87), False),  # darker: a shadow or a dark sleeve, not a lamp
        ((120, 150, 205), (89, 157, 87), False),  # skin on green felt: 22 degrees off its hue
        ((200, 200, 200), (150, 150, 145), False),  # grey felt has no hue: pale paper stays hidden
        ((150, 255, 148), (89, 157, 87), False),  # a clipped channel tells nothing
    ],
)
def test_brighter_felt_keeps_the_felts_hue(pixel_bgr, felt_bgr, brighter) -> None:  # type: ignore[no-untyped-def]
    got = _brighter_felt(np.array([[pixel_bgr]], np.float32), np.array([[felt_bgr]], np.float32))
    assert got.tolist() == [[brighter]]


def test_photo_without_a_mat_is_a_clear_error(frame) -> None:  # type: ignore[no-untyped-def]
    camera, _, dets = frame
    w, h = camera.image_size_wh
    # A room: large blocks of unrelated colours where the mat should be.
    rng = np.random.default_rng(1)
    clutter = np.zeros((h, w, 3), np.uint8)
    for _ in range(60):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        colour = tuple(int(c) for c in rng.integers(0, 255, 3))
        cv2.rectangle(clutter, (x, y), (x + 400, y + 250), colour, -1)
    with pytest.raises(MatNotVisibleError, match="does not look like a mat"):
        analyze_frame(clutter, camera, detections=dets)


def test_frame_of_another_size_is_refused(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, dets = frame
    with pytest.raises(ValueError, match="calibrate"):
        analyze_frame(image[:500], camera, detections=dets)


def test_still_camera_reuses_an_unchanged_frame_and_notices_a_moved_wink(frame) -> None:  # type: ignore[no-untyped-def]
    camera, image, _ = frame
    moved = [SceneWink(G, S, 340.0, -200.0)] + SCENE[:3] + SCENE[4:]
    calls = []

    def detector(image_bgr, camera_model, **_kw):  # type: ignore[no-untyped-def]
        calls.append(1)
        return detections_for(camera_model, SCENE if len(calls) == 1 else moved)

    analyzer = StillCameraAnalyzer(camera, detector=detector)
    first = analyzer.analyze(image)
    rng = np.random.default_rng(3)
    noisy = np.clip(image.astype(int) + rng.integers(-1, 2, image.shape), 0, 255).astype(np.uint8)
    again = analyzer.analyze(noisy)
    assert again.timings_ms.get("reused") == 1.0
    assert again.board == first.board
    assert len(calls) == 1
    # A wink moved 40 mm: analysed afresh, and it keeps its id (tracked by position
    # within 30 mm fails, so it is matched by the free id of its colour and size).
    third = analyzer.analyze(render(camera, moved))
    assert len(calls) == 2
    assert "reused" not in third.timings_ms
    green_small = [w for w in third.board.of_colour(G) if w.x_mm is not None and w.size is S]
    assert [round(w.x_mm) for w in green_small] == [340]


@pytest.mark.parametrize(
    ("in_pot", "potted_red"),
    [
        ([], 0),  # the pot shows no wink: nothing unseen is counted as potted
        ([SceneWink(R, S, 2.0, 10.0, 20.0)], 5),  # a red wink shows in the pot, undetected
    ],
)
def test_unseen_winks_are_potted_only_when_the_pot_is_not_empty(
    in_pot: list[SceneWink], potted_red: int
) -> None:
    camera = overhead_camera()
    on_mat = [SceneWink(R, L, 200.0, 100.0), SceneWink(B, S, -300.0, -50.0)]
    image = render(camera, on_mat + in_pot)
    analysis = analyze_frame(image, camera, detections=detections_for(camera, on_mat))
    board = analysis.board
    assert board.count(R, WinkStatus.POTTED) == potted_red
    if potted_red == 0:
        assert len(board.of_colour(R)) == 1
        assert any("pot looks empty" in r for r in analysis.reviews)
    else:
        assert len(board.of_colour(R)) == 6


def test_an_empty_frame_with_an_empty_pot_reports_no_winks_rather_than_guessing() -> None:
    camera = overhead_camera()
    analysis = analyze_frame(render(camera, []), camera, detections=WinkDetections.empty())
    assert analysis.board.winks == ()
    assert len([r for r in analysis.reviews if "pot looks empty" in r]) == 4


def test_unplayed_winks_fix_the_orientation_the_calibration_could_not_read() -> None:
    camera = overhead_camera()
    # A few winks behind each colour's baseline (canonical frame: blue at (-, +)).
    unplayed = [
        SceneWink(B, S, -860.0, 420.0),
        SceneWink(B, S, -880.0, 400.0),
        SceneWink(G, S, 860.0, 420.0),
        SceneWink(R, S, 860.0, -420.0),
        SceneWink(Y, S, -860.0, -420.0),
    ]
    image = render(camera, unplayed)
    # The calibration picked the frame turned through 180 degrees and says so.
    turned = camera.with_half_turn()
    seen_turned = [SceneWink(w.colour, w.size, -w.x_mm, -w.y_mm) for w in unplayed]

    class Unsure:
        def __init__(self) -> None:
            self.camera = turned
            self.orientation_known = False
            self.corners_mm = None

    analysis = analyze_frame(image, Unsure(), detections=detections_for(turned, seen_turned))
    placed = [w for w in analysis.board.winks if w.x_mm is not None]
    assert all(w.status is WinkStatus.UNPLAYED for w in placed)
    blue = [w for w in placed if w.colour is B]
    assert all(w.x_mm < 0 < w.y_mm for w in blue)  # back in the canonical frame
    assert any("showed which corner is whose" in n for n in analysis.notes)
    assert analysis.orientation_known


def test_analysis_says_the_orientation_is_unknown_when_no_winks_settle_it() -> None:
    camera = overhead_camera()
    played = [SceneWink(B, S, -200.0, 100.0), SceneWink(R, S, 300.0, -50.0)]
    image = render(camera, played)
    turned = camera.with_half_turn()

    class Unsure:
        def __init__(self) -> None:
            self.camera = turned
            self.orientation_known = False
            self.corners_mm = None

    seen_turned = [SceneWink(w.colour, w.size, -w.x_mm, -w.y_mm) for w in played]
    analysis = analyze_frame(image, Unsure(), detections=detections_for(turned, seen_turned))
    # Nothing behind the baselines: the frame stays as the calibration picked it, and says so.
    assert not analysis.orientation_known
    assert analysis.camera is not None
    assert np.allclose(analysis.camera.rotation, turned.rotation)
    known = analyze_frame(image, camera, detections=detections_for(camera, played))
    assert known.orientation_known


def test_a_wink_seen_at_the_pots_rim_is_flagged_but_one_touching_its_base_is_not() -> None:
    camera = overhead_camera()
    winks = [
        SceneWink(R, S, 23.0, 0.0, 36.0),  # high in the pot, at its rim
        SceneWink(B, S, 0.0, 27.5, 1.5),  # on the mat, touching the pot's base
    ]
    board = analyze_frame(render(camera, winks), camera, detections=detections_for(camera, winks))
    red = [w for w in board.board.of_colour(R) if not getattr(w, "inferred", False)]
    blue = [w for w in board.board.of_colour(B) if w.x_mm is not None]
    assert [w.status for w in red] == [WinkStatus.POTTED] and red[0].uncertain
    assert [w.status for w in blue] == [WinkStatus.FREE] and not blue[0].uncertain


@pytest.mark.parametrize(
    ("frame_hw", "size_wh"),
    [
        ((1080, 1920), (240, 135)),  # 1080p: whole 8-pixel blocks, only the mat's are averaged
        ((1083, 1921), (241, 136)),  # not whole blocks: the whole frame is shrunk as before
    ],
)
def test_frame_shrunk_over_the_mat_matches_the_whole_frame_shrunk(frame_hw, size_wh) -> None:
    # The whole frame shrunk by area averaging is the known answer, under the mask.
    frame = np.random.default_rng(5).integers(0, 256, (*frame_hw, 3), dtype=np.uint8)
    mask = np.zeros(size_wh[::-1], np.uint8)
    mask[20:100, 30:200] = 1
    whole = cv2.resize(frame, size_wh, interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(_shrunk_over(frame, mask, size_wh)[mask > 0], whole[mask > 0])


# A few winks well apart, for the still camera's shot-by-shot search.
SPREAD = [
    SceneWink(B, L, 100.0, 50.0, 1.5),
    SceneWink(R, S, 113.0, 50.0, 3.0),  # on the blue wink
    SceneWink(G, S, 300.0, -200.0),
    SceneWink(Y, S, -250.0, -300.0),
    SceneWink(R, L, -500.0, 200.0),
]


def _placed(board) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    return {w.id: (round(w.x_mm), round(w.y_mm)) for w in board.winks if w.x_mm is not None}


def test_still_camera_searches_only_round_a_shot_and_keeps_the_other_winks() -> None:
    camera = overhead_camera()
    analyzer = StillCameraAnalyzer(camera)
    first = analyzer.analyze(render(camera, SPREAD))
    shot = [*SPREAD[:2], SceneWink(G, S, 360.0, -150.0), *SPREAD[3:]]
    after = analyzer.analyze(render(camera, shot))
    assert after.timings_ms.get("window") == 1.0
    assert _placed(after.board)["green-S1"] == (360, -150)
    # Away from the shot the winks are the last frame's, not fitted again.
    for wid in ("blue-L1", "red-S1", "red-L1", "yellow-S1"):
        assert after.board.wink(wid).x_mm == first.board.wink(wid).x_mm
    # And the board is the one a search of the whole frame gives.
    whole = analyze_frame(render(camera, shot), camera).board
    assert _placed(after.board) == _placed(whole)
    assert {w.id: w.status for w in after.board.winks} == {w.id: w.status for w in whole.winks}
    assert after.board.wink("red-S1").squops == ("blue-L1",)


def test_still_camera_searches_the_whole_frame_when_a_wink_leaves_the_change() -> None:
    # The green wink went where no change was seen (off the frame, in the
    # pot): a search round the change alone would lose it.
    camera = overhead_camera()
    analyzer = StillCameraAnalyzer(camera)
    analyzer.analyze(render(camera, SPREAD))
    after = analyzer.analyze(render(camera, [*SPREAD[:2], *SPREAD[3:]]))
    assert "window" not in after.timings_ms
    assert (300, -200) not in _placed(after.board).values()


def test_still_camera_searches_a_whole_frame_again_after_a_run_of_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The windows borrow the last whole frame's felt model: after
    # WINDOW_MAX_RUN of them a changed frame is searched whole, to refresh it.
    import vision.pipeline as pipeline

    monkeypatch.setattr(pipeline, "WINDOW_MAX_RUN", 1)
    camera = overhead_camera()
    analyzer = StillCameraAnalyzer(camera)
    analyzer.analyze(render(camera, SPREAD))
    paths = []
    for x_mm in (360.0, 420.0):
        shot = [*SPREAD[:2], SceneWink(G, S, x_mm, -150.0), *SPREAD[3:]]
        paths.append("window" in analyzer.analyze(render(camera, shot)).timings_ms)
    assert paths == [True, False]


def test_changes_far_apart_are_searched_in_two_boxes_and_near_ones_in_one() -> None:
    from vision.pipeline import CHANGE_REACH_MM, HIDDEN_SCALE, _change_boxes_mm

    camera = overhead_camera()
    sh, sw = 1080 // HIDDEN_SCALE + 1, 1920 // HIDDEN_SCALE + 1

    def changed_at(*mat_xy_mm: tuple[float, float]) -> np.ndarray:
        changed = np.zeros((sh, sw), bool)
        for xy in mat_xy_mm:
            col, row = (camera.mat_to_image(np.array([[*xy, 0.0]]))[0] + 0.5) / HIDDEN_SCALE
            changed[int(row), int(col)] = True
        return changed

    # A wink moved 600 mm: where it was and where it is, searched apart.
    boxes = _change_boxes_mm(changed_at((-300.0, 0.0), (300.0, 0.0)), camera)
    assert len(boxes) == 2
    # The camera's shrunk pixel spans this much of the mat there (a straight-down view).
    centre_px = camera.mat_to_image(np.array([[0.0, 0.0, 0.0]]))
    pixel_mm = float(
        np.hypot(
            *(
                camera.image_to_mat(centre_px + [HIDDEN_SCALE, 0.0], 0.0)
                - camera.image_to_mat(centre_px, 0.0)
            )[0]
        )
    )
    for (low, high), x_mm in zip(
        sorted(boxes, key=lambda b: b[0][0]), (-300.0, 300.0), strict=True
    ):
        # Each box reaches CHANGE_REACH_MM and three quarters of a pixel round
        # its changed pixel's centre, which lies within that pixel of the change.
        np.testing.assert_allclose(high - low, 2 * (CHANGE_REACH_MM + 0.75 * pixel_mm), rtol=0.02)
        assert low[0] < x_mm < high[0] and low[1] < 0.0 < high[1]
    # Two changes 60 mm apart: their windows would overlap, so one box.
    assert len(_change_boxes_mm(changed_at((0.0, 100.0), (60.0, 100.0)), camera)) == 1
    assert _change_boxes_mm(np.zeros((sh, sw), bool), camera) == []


def test_still_camera_does_not_take_a_wink_nudged_two_millimetres_for_an_unchanged_frame() -> None:
    # A nudge of 2 mm changes two shrunk pixels by about 20 levels; it can
    # make or break a squop, so the frame must be analysed again.
    camera = overhead_camera()
    analyzer = StillCameraAnalyzer(camera)
    analyzer.analyze(render(camera, SPREAD))
    nudged = [*SPREAD[:2], SceneWink(G, S, 302.0, -200.0), *SPREAD[3:]]
    after = analyzer.analyze(render(camera, nudged))
    assert "reused" not in after.timings_ms
    assert _placed(after.board)["green-S1"] == (302, -200)


def test_still_camera_sees_a_wink_moved_along_the_mat_s_edge_alone() -> None:
    """Generated game q3812: a blue wink played along the far edge of an oblique view
    changed only shrunk pixels outside the mat's inset mask, and the shot was missed."""
    camera = overhead_camera()
    analyzer = StillCameraAnalyzer(camera)
    # A small wink 2 mm inside the long edge (its centre 10 mm in), on its own.
    edge_y_mm = MAT_WIDTH_MM / 2 - 10.0
    analyzer.analyze(render(camera, [*SPREAD, SceneWink(Y, S, 600.0, edge_y_mm)]))
    after = analyzer.analyze(render(camera, [*SPREAD, SceneWink(Y, S, 300.0, edge_y_mm)]))
    assert "reused" not in after.timings_ms
    yellow = [w for w in after.board.of_colour(Y) if w.x_mm is not None and w.y_mm > 400.0]
    assert [round(w.x_mm) for w in yellow] == [300]


def test_felt_distance_bar_matches_numpy_hypot_also_next_to_the_bar() -> None:
    # min(np.hypot + lightness term) > bar as written is the known answer;
    # half the pixels are put within a few float32 steps of the bar.
    rng = np.random.default_rng(11)
    bar = 14.0
    shape = (120, 200)
    angle = rng.uniform(0, 2 * np.pi, shape)
    light = np.where(rng.random(shape) < 0.5, 0.0, rng.uniform(0.0, 5.0, shape)).astype(np.float32)
    near = np.float32(bar) + rng.integers(-6, 7, shape) * np.spacing(np.float32(bar))
    length = np.where(rng.random(shape) < 0.5, near - light, rng.uniform(0.0, 40.0, shape))
    a = (length * np.cos(angle)).astype(np.float32)
    b = (length * np.sin(angle)).astype(np.float32)
    a2, b2 = rng.permutation(a.ravel()).reshape(shape), rng.permutation(b.ravel()).reshape(shape)
    light2 = rng.permutation(light.ravel()).reshape(shape)
    want = np.minimum(np.hypot(a, b) + light, np.hypot(a2, b2) + light2) > bar
    got = _farther_than((a, b, light), (a2, b2, light2), bar)
    np.testing.assert_array_equal(got, want)


def test_a_faint_change_after_a_shot_is_looked_at_though_it_would_pass_for_noise(frame) -> None:  # type: ignore[no-untyped-def]
    """Generated game q3631: a green wink brought into play on green felt changed no
    shrunk pixel by more than 10 levels, and the referee saw no shot."""
    camera, image, _ = frame
    calls = []

    def detector(image_bgr, camera_model, **_kw):  # type: ignore[no-untyped-def]
        calls.append(1)
        return detections_for(camera_model, SCENE)

    analyzer = StillCameraAnalyzer(camera, detector=detector)
    analyzer.analyze(image)
    # One patch of the mat 9 levels brighter: under CHANGED_LEVELS, over the bar after a shot.
    faint = image.copy()
    corner_px = np.round(camera.mat_to_image(np.array([[300.0, -150.0, 0.0]]))[0]).astype(int)
    u, v = corner_px
    faint[v - 12 : v + 12, u - 12 : u + 12] = np.clip(
        faint[v - 12 : v + 12, u - 12 : u + 12].astype(int) + 9, 0, 255
    ).astype(np.uint8)
    assert analyzer.analyze(faint).timings_ms.get("reused") == 1.0
    assert len(calls) == 1
    looked = analyzer.analyze(faint, after_motion=True)
    assert "reused" not in looked.timings_ms
    assert len(calls) == 2
