"""Statuses from geometry: baseline triangles, the mat's edge, the pot, the rule 2.1.1 count."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from squop_scenes import SceneWink, camera_at, detections_for, overhead_camera, render

from calibration.camera import CameraModel
from rules.board import Board, Colour, Doubt, Wink, WinkSize, WinkStatus
from vision.board_builder import PEEK_MIN_AREA_MM2
from vision.pipeline import analyze_frame, prepare_context
from vision.squop import colour_references_lab
from vision.status import (
    CLOCKWISE_CORNERS_MM,
    DEFAULT_CORNERS_MM,
    PEEK_RING_MM,
    PotWall,
    beside_pot_foot,
    beyond_baseline_mm,
    beyond_mat_edge_mm,
    centre_height_off_mat_mm,
    colour_beside_winks_mm2,
    corners_from_unplayed,
    hidden_behind_pot_fraction,
    in_pot,
    infer_potted,
    lies_in_pot,
    own_unplayed_triangle,
    pot_fit_height_mm,
    pot_hidden_fraction,
    pot_wall,
    read_unplayed,
    stands_in_pot_foot,
    tiddlies_of,
)


@pytest.mark.parametrize(
    ("mat_xy", "expected"),
    [
        ((-900.0, 450.0), True),  # deep in the corner
        ((-850.0, 420.0), True),  # behind the baseline
        ((-700.0, 300.0), False),  # in front of it
        ((0.0, 0.0), False),  # at the pot
        ((800.0, -400.0), False),  # red's corner, not blue's
    ],
)
def test_blue_triangle_membership(mat_xy: tuple[float, float], expected: bool) -> None:
    beyond = own_unplayed_triangle([mat_xy], [Colour.BLUE])[0]
    assert bool(beyond > 0) is expected


def test_baseline_is_914_mm_from_the_centre_towards_the_corner() -> None:
    corner = np.array(DEFAULT_CORNERS_MM[Colour.GREEN])
    d = corner / np.hypot(*corner)
    on_line = 914.4 * d
    assert beyond_baseline_mm([on_line], corner)[0] == pytest.approx(0.0, abs=1e-9)
    assert beyond_baseline_mm([on_line + 5 * d], corner)[0] == pytest.approx(5.0)
    # Along the line the distance does not change.
    along = np.array([-d[1], d[0]])
    assert beyond_baseline_mm([on_line + 100 * along], corner)[0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("x_mm", "y_mm", "radius_mm", "expected"),
    [
        (0.0, 0.0, 8.0, -449.2),  # at the pot: far inside
        (900.0, 0.0, 11.0, -3.4),  # near the short edge, inside
        (910.0, 0.0, 8.0, 3.6),  # straddling the short edge: off (rule 13)
        (0.0, -455.0, 8.0, 5.8),  # straddling a long edge
        (1000.0, 100.0, 8.0, 93.6),  # on the table
    ],
)
def test_beyond_mat_edge(x_mm: float, y_mm: float, radius_mm: float, expected: float) -> None:
    assert beyond_mat_edge_mm([[x_mm, y_mm]], radius_mm)[0] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("x_mm", "y_mm", "radius_mm", "expected"),
    [
        (0.0, 0.0, 8.0, 0.0),  # at the pot, on the mat
        (910.0, 0.0, 8.0, 0.0),  # straddling the edge, centre still on the felt
        (918.4, 0.0, 8.0, -2.5 * 4.0 / 12.0),  # tipped: centre 4 mm out, rim on the table
        (0.0, -462.7, 11.0, -2.5 * 5.5 / 16.5),  # tipped over a long edge, half a radius out
        (0.0, -468.2, 11.0, -2.5),  # out by a radius: it slid off, flat on the table
        (1000.0, 100.0, 8.0, -2.5),  # far out on the table
        (919.4, 462.2, 8.0, -2.5 * 50**0.5 / (8 + 50**0.5)),  # tipped over a corner, 7.1 mm out
        (920.4, 463.2, 8.0, -2.5),  # 8.5 mm from the corner: flat on the table
    ],
)
def test_a_wink_beyond_the_mat_edge_lies_lower_by_up_to_the_mat_thickness(
    x_mm: float, y_mm: float, radius_mm: float, expected: float
) -> None:
    # The mat is taken to be 2.5 mm thick; a wink whose centre is a distance d
    # out, d under its radius r, rests on the felt's edge and the table:
    # its centre is 2.5 d / (r + d) lower.
    got = centre_height_off_mat_mm([[x_mm, y_mm]], radius_mm)[0]
    assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    "tilt_deg",
    [
        0.0,  # straight down
        40.0,  # oblique
    ],
)
def test_pot_opening_tells_potted_from_beside_the_pot(tilt_deg: float) -> None:
    camera = overhead_camera(tilt_deg=tilt_deg)
    # Inside the pot, on the far side from the camera so that the opening shows them.
    inside = camera.mat_to_image(np.array([[5.0, 10.0, 20.0], [0.0, 0.0, 30.0]]))
    # On the mat, touching the pot's base (19 mm + 8 mm), where the camera sees them.
    beside = camera.mat_to_image(np.array([[0.0, -27.5, 1.5], [27.5, 0.0, 1.5]]))
    assert in_pot(camera, inside).tolist() == [True, True]
    assert in_pot(camera, beside).tolist() == [False, False]


@pytest.mark.parametrize(
    "tilt_deg",
    [
        10.0,  # a webcam a little off the vertical
        20.0,  # the steepest overhead view
    ],
)
def test_a_wink_against_the_pot_seen_through_its_opening_is_not_potted(tilt_deg: float) -> None:
    # The camera stands on the -y side: a small wink touching the pot's base
    # on the far side (centre 19 + 8 mm out) shows its centre through the
    # opening, because the wall hides its near half.
    camera = overhead_camera(tilt_deg=tilt_deg)
    beside = camera.mat_to_image(np.array([[0.0, 27.0, 1.5]]))
    assert in_pot(camera, beside).tolist() == [True]
    assert lies_in_pot(camera, beside, 8.0).tolist() == [False]


@pytest.mark.parametrize(
    "tilt_deg",
    [
        0.0,  # straight down
        20.0,  # tilted overhead
        40.0,  # oblique
    ],
)
def test_winks_lying_in_the_pot_are_potted(tilt_deg: float) -> None:
    camera = overhead_camera(tilt_deg=tilt_deg)
    # Small winks on the pot's floor (top face 4 mm up) towards its far
    # side, where even the oblique camera sees them, and one on a stack 12 mm up.
    inside = camera.mat_to_image(np.array([[0.0, 8.0, 4.0], [-5.0, 8.0, 4.0], [0.0, 5.0, 12.0]]))
    assert lies_in_pot(camera, inside, 8.0).tolist() == [True, True, True]


def test_a_wink_resting_on_the_pots_rim_is_potted_but_one_seen_deep_in_the_opening_is_not() -> None:
    # Rule 8.1.2: a wink on the rim counts as potted. Straight down, a small
    # wink lying across the rim (centre 23 mm out, 38 mm up) fits inside
    # nowhere but could not lie on the mat there either. A large wink behind
    # the pot fitted from a sliver, its centre guessed too close to the pot
    # (23 mm out, so that it would cut into the base) and seen deep inside
    # the opening, neither fits inside nor rests on the rim.
    camera = overhead_camera(tilt_deg=12.0)
    points = camera.mat_to_image(np.array([[0.0, -23.0, 39.0], [0.0, 23.0, 1.5]]))
    assert lies_in_pot(camera, points, [8.0, 11.0]).tolist() == [True, False]


def test_a_wink_fits_in_the_pot_at_the_height_it_lies() -> None:
    # Straight down the pot's axis a wink fits at the floor; a point seen
    # far outside the pot fits nowhere.
    camera = overhead_camera()
    points = camera.mat_to_image(np.array([[0.0, 0.0, 4.0], [100.0, 0.0, 1.5]]))
    got = pot_fit_height_mm(camera, points, 8.0)
    assert got[0] == pytest.approx(3.0)
    assert np.isinf(got[1])


@pytest.mark.parametrize(
    ("seen", "in_pot_seen", "inferred", "large", "small"),
    [
        ([WinkSize.LARGE] * 2 + [WinkSize.SMALL] * 4, 0, 0, 0, 0),  # all six seen
        ([WinkSize.LARGE] + [WinkSize.SMALL] * 3, 0, 2, 1, 1),  # one of each size missing
        ([WinkSize.SMALL] * 4, 1, 2, 2, 0),  # both large ones missing
        ([], 0, 6, 2, 4),  # nothing of the colour seen: all in the pot
    ],
)
def test_potted_inference_is_six_minus_those_seen(
    seen: list[WinkSize], in_pot_seen: int, inferred: int, large: int, small: int
) -> None:
    got = infer_potted(Colour.RED, seen, in_pot_seen)
    assert (got.inferred, got.large_inferred, got.small_inferred) == (inferred, large, small)
    assert got.potted == in_pot_seen + inferred
    if inferred:
        assert "inferred" in got.note and "6 red" in got.note


def test_potted_inference_warns_when_part_of_the_mat_is_hidden() -> None:
    got = infer_potted(Colour.BLUE, [WinkSize.SMALL] * 4, 0, hidden_area=True)
    assert "hidden" in got.note


def test_tiddlies_are_three_per_potted_and_one_per_free_wink() -> None:
    board = Board(
        winks=(
            Wink(id="blue-L1", colour=Colour.BLUE, size=WinkSize.LARGE, status=WinkStatus.POTTED),
            Wink(id="blue-S1", colour=Colour.BLUE, size=WinkSize.SMALL, status=WinkStatus.FREE),
            Wink(
                id="blue-S2",
                colour=Colour.BLUE,
                size=WinkSize.SMALL,
                status=WinkStatus.FREE,
                squops=("red-S1",),
            ),
            Wink(id="red-S1", colour=Colour.RED, size=WinkSize.SMALL, status=WinkStatus.SQUOPPED),
            Wink(id="red-S2", colour=Colour.RED, size=WinkSize.SMALL, status=WinkStatus.UNPLAYED),
            Wink(id="green-S1", colour=Colour.GREEN, size=WinkSize.SMALL, status=WinkStatus.OFF),
        )
    )
    assert tiddlies_of(board) == {
        Colour.BLUE: 5,
        Colour.GREEN: 0,
        Colour.RED: 0,
        Colour.YELLOW: 0,
    }


@pytest.mark.parametrize(
    "blue_corner",
    [
        0,  # (-x, +y): the canonical layout
        2,  # (+x, -y): the frame turned through 180 degrees
        1,  # (+x, +y): blue and green sharing a short side
    ],
)
def test_corners_follow_the_winks_behind_the_baselines(blue_corner: int) -> None:
    corners = list(CLOCKWISE_CORNERS_MM)
    # Two winks of each colour behind its corner's baseline, clockwise from blue.
    pts, colours = [], []
    for k, colour in enumerate(Colour):
        cx, cy = corners[(blue_corner + k) % 4]
        for shrink in (0.96, 0.97):
            pts.append((cx * shrink, cy * shrink))
            colours.append(colour)
    got = corners_from_unplayed(pts, colours)
    assert got is not None
    assert got == {c: corners[(blue_corner + k) % 4] for k, c in enumerate(Colour)}


def test_corners_stay_unknown_without_unplayed_winks() -> None:
    assert corners_from_unplayed([(0.0, 0.0), (100.0, 50.0)], [Colour.BLUE, Colour.RED]) is None


def test_straight_down_the_pot_hides_only_what_its_rim_overhangs() -> None:
    import shapely

    # From straight above, a small wink against the base (centre 19 + 8 mm
    # from the axis) is hidden where the rim (radius 24 mm, 38 mm up)
    # overhangs it. Seen from 1600 mm the sight lines lean inwards, so the
    # rim hides out to 24 / (1 - 36.5 / 1598.5) mm on the wink's top face.
    reach_mm = 24.0 / (1.0 - (38.0 - 1.5) / (1600.0 - 1.5))
    wink = shapely.Point(27.0, 0.0).buffer(8.0, quad_segs=256)
    rim = shapely.Point(0.0, 0.0).buffer(reach_mm, quad_segs=256)
    expected = wink.intersection(rim).area / wink.area
    got = hidden_behind_pot_fraction(overhead_camera(height_mm=1600.0))
    assert got == pytest.approx(expected, abs=0.02)


def test_a_steep_view_hides_a_whole_small_wink_behind_the_pot() -> None:
    # 55 degrees from vertical: the pot's 38 mm hide about 50 mm of mat behind it.
    assert hidden_behind_pot_fraction(overhead_camera(tilt_deg=55.0)) == 1.0


def test_the_pot_hides_more_the_more_the_camera_leans() -> None:
    fractions = [hidden_behind_pot_fraction(overhead_camera(tilt_deg=t)) for t in (0, 5, 10, 20)]
    assert fractions == sorted(fractions)
    assert fractions[-1] > fractions[0]


def test_potted_inference_says_a_missing_wink_may_lie_behind_the_pot() -> None:
    inference = infer_potted(
        Colour.RED, [WinkSize.LARGE] * 2 + [WinkSize.SMALL] * 3, 0, behind_pot=True
    )
    assert inference.inferred == 1
    assert "hides the mat just behind it" in inference.note


@pytest.mark.parametrize(
    ("mat_xy_mm", "hidden"),
    [
        ((0.0, -27.0), 0.0),  # against the pot on the camera's side: in full view
        ((300.0, 0.0), 0.0),  # far from the pot
        ((0.0, 27.0), 1.0),  # against the pot's far side, camera 40 degrees off
    ],
)
def test_what_the_pot_hides_depends_on_which_side_the_wink_lies(
    mat_xy_mm: tuple[float, float], hidden: float
) -> None:
    # This camera stands on the -y side, looking down at 40 degrees.
    camera = overhead_camera(tilt_deg=40.0)
    assert pot_hidden_fraction(camera, mat_xy_mm, 8.0) == pytest.approx(hidden, abs=0.01)


def test_inferred_potted_winks_the_pot_does_not_show_are_listed_as_unsure() -> None:
    # One red wink shows in the pot (undetected there); on the mat one red
    # and one blue wink. Five red and five blue winks are inferred potted:
    # the red one showing in the pot bears out one of the red ones; nothing
    # bears out the other four red or any blue, which might be winks missed
    # on the mat.
    camera = overhead_camera()
    on_mat = [
        SceneWink(Colour.RED, WinkSize.LARGE, 200.0, 100.0),
        SceneWink(Colour.BLUE, WinkSize.SMALL, -300.0, -50.0),
    ]
    in_pot = [SceneWink(Colour.RED, WinkSize.SMALL, 2.0, 10.0, 20.0)]
    image = render(camera, on_mat + in_pot)
    board = analyze_frame(image, camera, detections=detections_for(camera, on_mat)).board
    for colour, sure in ((Colour.RED, 1), (Colour.BLUE, 0)):
        inferred = [w for w in board.of_colour(colour) if w.inferred]
        assert len(inferred) == 5
        assert all(w.status is WinkStatus.POTTED for w in inferred)
        assert sum(not w.uncertain for w in inferred) == sure
        assert all("missed on the mat" in " ".join(w.review) for w in inferred if w.uncertain)


def test_a_lone_wink_in_another_colours_default_corner_is_unplayed_but_unsure() -> None:
    # The calibration could not read the corner colours; the default layout
    # gives the corner at (+x, -y) to red. One yellow wink lies deep in it:
    # under the layout that makes it yellow's corner it is unplayed, but a
    # single wink does not settle the layout (rule 5.2).
    got = read_unplayed([(860.0, -420.0)], [Colour.YELLOW], DEFAULT_CORNERS_MM)
    assert got.beyond_own_baseline_mm[0] > 0
    assert got.doubtful.tolist() == [True]
    assert "another clockwise layout" in got.note


def test_winks_behind_the_baselines_can_overrule_the_given_layout() -> None:
    # Three winks, each behind the baseline the default layout gives the
    # colour one corner clockwise of it: that layout leads by three.
    corners = CLOCKWISE_CORNERS_MM
    colours = [Colour.BLUE, Colour.GREEN, Colour.RED]
    points = [(0.95 * corners[k + 1][0], 0.95 * corners[k + 1][1]) for k in range(3)]
    got = read_unplayed(points, colours, DEFAULT_CORNERS_MM)
    assert (got.beyond_own_baseline_mm > 0).all()
    assert not got.doubtful.any()


def test_a_played_wink_behind_another_colours_baseline_stays_free() -> None:
    # The given layout explains two unplayed winks; a blue wink behind
    # red's baseline does not make another layout more likely.
    points = [(-860.0, 420.0), (860.0, 420.0), (860.0, -420.0)]
    colours = [Colour.BLUE, Colour.GREEN, Colour.BLUE]
    got = read_unplayed(points, colours, DEFAULT_CORNERS_MM)
    assert (got.beyond_own_baseline_mm > 0).tolist() == [True, True, False]
    assert not got.doubtful.any()
    assert got.note == ""


def _winks_of(colour: Colour, count: int, y_mm: float) -> list[SceneWink]:
    """``count`` winks of a colour in a row 100 mm apart, the two large first."""
    return [
        SceneWink(colour, WinkSize.LARGE if k < 2 else WinkSize.SMALL, -300.0 + 100 * k, y_mm)
        for k in range(count)
    ]


@pytest.mark.parametrize(
    ("rim_seen", "red_on_mat", "others_on_mat", "unsure"),
    [
        (0.6, 1, True, True),  # rim partly hidden, nothing found there, five red unseen
        (1.0, 1, True, False),  # whole rim in view
        (0.6, 6, True, False),  # every wink of every colour seen: none can be on it
        # Every red seen, but no wink of the other colours: a wink of another
        # colour (a green one on green felt) may lie on it unseen.
        (0.6, 6, False, True),
    ],
)
def test_a_free_wink_with_its_rim_partly_hidden_by_nothing_found_is_unsure_while_winks_are_missing(
    rim_seen: float, red_on_mat: int, others_on_mat: bool, unsure: bool
) -> None:
    camera = overhead_camera()
    red = _winks_of(Colour.RED, red_on_mat, 150.0)
    others = [
        w
        for k, colour in enumerate((Colour.BLUE, Colour.GREEN, Colour.YELLOW))
        for w in _winks_of(colour, 6, -150.0 - 80.0 * k)
        if others_on_mat
    ]
    detections = detections_for(camera, red + others)
    seen = np.ones(len(red + others))
    seen[0] = rim_seen
    detections = replace(detections, rim_visible_fraction=seen)
    board = analyze_frame(render(camera, red + others), camera, detections=detections).board
    first = next(w for w in board.of_colour(Colour.RED) if w.x_mm == pytest.approx(-300, abs=2))
    assert first.status is WinkStatus.FREE
    assert first.uncertain is unsure
    assert any("one may lie on it" in r for r in first.review) is unsure


@pytest.mark.parametrize(
    ("tilt_deg", "unsure"),
    [
        (20.0, False),  # from a tilted camera the pot stands between it and the camera
        (0.0, True),  # from above the pot hides none of it: its hidden rim is unexplained
    ],
)
def test_a_free_wink_behind_the_pot_is_not_unsure_for_the_rim_the_pot_hides(
    tilt_deg: float, unsure: bool
) -> None:
    # 38 mm beyond the pot's centre on the side away from the camera: not
    # under the pot's rim in plan, but half in its shadow from a tilted camera.
    camera = overhead_camera(tilt_deg=tilt_deg)
    red = [SceneWink(Colour.RED, WinkSize.SMALL, 0.0, 38.0)]
    detections = replace(detections_for(camera, red), rim_visible_fraction=np.array([0.6]))
    board = analyze_frame(render(camera, red), camera, detections=detections).board
    (wink,) = [w for w in board.of_colour(Colour.RED) if not w.inferred]
    assert any("one may lie on it" in r for r in wink.review) is unsure


def test_a_free_wink_whose_rim_the_pot_may_hide_is_not_unsure_for_that() -> None:
    # A red wink against the pot's foot (at the mat's centre) has its rim
    # under the pot's overhanging rim: the pot, not a wink unseen, hides it.
    camera = overhead_camera()
    red = [SceneWink(Colour.RED, WinkSize.SMALL, 19.0 + 8.0 + 0.5, 0.0)]
    detections = replace(detections_for(camera, red), rim_visible_fraction=np.array([0.6]))
    board = analyze_frame(render(camera, red), camera, detections=detections).board
    (wink,) = [w for w in board.of_colour(Colour.RED) if not w.inferred]
    assert wink.status is WinkStatus.FREE
    assert not any("one may lie on it" in r for r in wink.review)


@pytest.mark.parametrize(
    ("corners_read", "status_of_both"),
    [
        # the calibration read the corners: the played winks in other corners stay free
        (True, WinkStatus.FREE),
        # a default layout: the half-turned layout they bear out wins, and says so
        (False, WinkStatus.UNPLAYED),
    ],
)
def test_corners_read_by_the_calibration_are_not_overruled_by_played_winks(
    corners_read: bool, status_of_both: WinkStatus
) -> None:
    # Late in a game a blue wink lies deep in red's corner and a green one in
    # yellow's (the canonical layout): the half-turned layout would put both
    # behind their own baselines, two to none.
    camera = overhead_camera(tilt_deg=5.0)
    winks = [
        SceneWink(Colour.BLUE, WinkSize.SMALL, 860.0, -420.0),
        SceneWink(Colour.GREEN, WinkSize.SMALL, -860.0, -420.0),
    ]
    context = prepare_context(camera, corners_mm=DEFAULT_CORNERS_MM)
    if not corners_read:
        context = replace(context, corners_read=False)
    board = analyze_frame(
        render(camera, winks), context, detections=detections_for(camera, winks)
    ).board
    on_mat = [w for w in board.winks if w.status is not WinkStatus.POTTED]
    assert [w.status for w in on_mat] == [status_of_both, status_of_both]


def test_winks_at_the_pots_rim_or_guessed_from_a_sliver_behind_it_are_flagged() -> None:
    # As above, on the board: the small wink across the rim is potted (rule
    # 8.1.2) and the large one seen deep in the opening is not, but a
    # millimetre decides either, so both go to the umpire.
    camera = overhead_camera(tilt_deg=12.0)
    winks = [
        SceneWink(Colour.RED, WinkSize.SMALL, 0.0, -23.0, 39.0),
        # Seen through the opening, 25 mm from the axis: off the foot by a
        # lean's reach, so a wink behind the pot fitted from the part in view.
        SceneWink(Colour.BLUE, WinkSize.LARGE, 0.0, 25.0, 1.5),
    ]
    board = analyze_frame(
        render(camera, []), camera, detections=detections_for(camera, winks)
    ).board
    seen = {w.colour: w for w in board.winks if not w.inferred}
    assert seen[Colour.RED].status is WinkStatus.POTTED
    assert seen[Colour.BLUE].status is not WinkStatus.POTTED
    assert "resting on the pot's rim" in " ".join(seen[Colour.RED].review)
    assert "fits neither inside the pot nor on its rim" in " ".join(seen[Colour.BLUE].review)
    assert seen[Colour.RED].uncertain and seen[Colour.BLUE].uncertain


@pytest.mark.parametrize(
    ("y_mm", "top_z_mm", "close_call"),
    [
        (0.0, 5.0, False),  # in the middle of the pot: fits at the floor, plainly potted
        (16.0, 13.0, True),  # seen near the far wall: would fit inside only 12-13 mm up
    ],
)
def test_a_wink_seen_in_the_pot_that_fits_only_high_up_is_a_close_call(
    y_mm: float, top_z_mm: float, close_call: bool
) -> None:
    camera = overhead_camera(tilt_deg=12.0)
    winks = [SceneWink(Colour.YELLOW, WinkSize.SMALL, 0.0, y_mm, top_z_mm)]
    board = analyze_frame(
        render(camera, winks), camera, detections=detections_for(camera, winks)
    ).board
    seen = [w for w in board.of_colour(Colour.YELLOW) if not w.inferred]
    assert [w.status for w in seen] == [WinkStatus.POTTED]
    assert ("would fit inside only" in " ".join(seen[0].review)) is close_call
    assert seen[0].uncertain is close_call


@pytest.mark.parametrize(
    ("mat_xy_mm", "on_foot", "beside_foot"),
    [
        ((0.0, 10.0), True, False),  # well inside the 38 mm base
        ((18.5, 0.0), True, False),  # just inside its edge
        ((16.0, -16.0), False, True),  # 22.6 mm out: 4.4 mm nearer than a small wink touching
        ((23.5, 0.0), False, True),  # 3.5 mm nearer: more than a lean on the wall allows
        ((0.0, 24.5), False, False),  # 2.5 mm nearer: a small wink leaning on the wall
        ((-25.0, 4.0), False, False),  # 25.3 mm out: a wink leaning a little inside touching
        ((0.0, -27.0), False, False),  # a small wink touching the base: centre 19 + 8 mm out
    ],
)
def test_a_centre_on_or_just_beside_the_pots_foot_is_where_no_wink_can_lie(
    mat_xy_mm: tuple[float, float], on_foot: bool, beside_foot: bool
) -> None:
    assert stands_in_pot_foot([mat_xy_mm]).tolist() == [on_foot]
    assert beside_pot_foot([mat_xy_mm]).tolist() == [beside_foot]
    # The same, for a pot moved off the mat's centre.
    moved = (mat_xy_mm[0] + 40.0, mat_xy_mm[1] - 15.0)
    assert stands_in_pot_foot([moved], (40.0, -15.0)).tolist() == [on_foot]
    assert beside_pot_foot([moved], (40.0, -15.0)).tolist() == [beside_foot]


@pytest.mark.parametrize(
    "phantom_y_mm",
    [
        -14.0,  # where the pot stands, on its near side
        -22.5,  # just off its foot on the near side: a small wink's centre 4.5 mm too near
    ],
)
def test_a_wink_like_outline_on_the_pots_side_is_not_counted(phantom_y_mm: float) -> None:
    # From a tilted camera (on the -y side) the pot's dark wall and the
    # felt's arc round its foot can pass for a wink's rim; the fit lands
    # where the pot stands, or nearer it than any wink on the mat can lie,
    # and its line of sight misses the opening.
    camera = overhead_camera(tilt_deg=20.0)
    phantom = [SceneWink(Colour.GREEN, WinkSize.SMALL, 0.0, phantom_y_mm, 1.5)]
    phantom_px = camera.mat_to_image(np.array([[0.0, phantom_y_mm, 1.5]]))
    assert not lies_in_pot(camera, phantom_px, 8.0)[0]
    real = [SceneWink(Colour.BLUE, WinkSize.SMALL, 0.0, -28.0, 1.5)]  # touching the pot's foot
    analysis = analyze_frame(
        render(camera, real), camera, detections=detections_for(camera, [*phantom, *real])
    )
    seen = [w for w in analysis.board.winks if not w.inferred]
    assert [(w.colour, w.status) for w in seen] == [(Colour.BLUE, WinkStatus.FREE)]
    assert any("on or beside the pot's foot" in note for note in analysis.notes)
    # The green wink nobody saw is inferred potted by the rule 2.1.1 count, as usual.
    assert analysis.board.count(Colour.GREEN, WinkStatus.POTTED) == 6


def _crescent_scene(with_crescent: bool) -> tuple[list[SceneWink], list[SceneWink]]:
    """A red large wink on a green small one 9.5 mm off (a crescent out), five greens elsewhere.

    Returns the winks in the image and those a detector found (not the green
    under the red, nor a red one in the pot).
    """
    red = SceneWink(Colour.RED, WinkSize.LARGE, 200.0, 100.0, 3.0)
    under = SceneWink(Colour.GREEN, WinkSize.SMALL, 209.5, 100.0, 1.5)
    greens = [
        SceneWink(
            Colour.GREEN, WinkSize.LARGE if k < 2 else WinkSize.SMALL, -300.0 + 60 * k, -150.0
        )
        for k in range(5)
    ]
    found = [red, *greens]
    # A red wink in the pot (not detected) keeps the pot from looking empty.
    in_pot = SceneWink(Colour.RED, WinkSize.SMALL, 2.0, 10.0, 20.0)
    return ([under] if with_crescent else []) + [*found, in_pot], found


def _crescent_area_mm2(beyond_mm: float) -> float:
    """Plan area of the green disc more than ``beyond_mm`` from the red's centre (fine grid)."""
    step = 0.05
    xs = np.arange(209.5 - 8, 209.5 + 8, step) + step / 2
    ys = np.arange(100.0 - 8, 100.0 + 8, step) + step / 2
    gx, gy = np.meshgrid(xs, ys)
    in_green = np.hypot(gx - 209.5, gy - 100.0) < 8.0
    beyond = np.hypot(gx - 200.0, gy - 100.0) >= beyond_mm
    return float(np.sum(in_green & beyond)) * step * step


def test_a_crescent_of_a_wink_under_another_shows_as_its_colour_beside_that_wink() -> None:
    # The green crescent reaches 6.5 mm beyond the red's rim; the rings
    # start 1.5 mm out, so about the green disc's area beyond 12.5 mm shows
    # (its darker rim, 0.8 mm wide, and the pixels, 1.5 mm across, blur it).
    camera = overhead_camera()
    in_image, found = _crescent_scene(with_crescent=True)
    image = render(camera, in_image)
    dets = detections_for(camera, found)
    refs = colour_references_lab(image, dets.image_xy_px, list(dets.colour))
    beside = colour_beside_winks_mm2(
        image, camera, dets.mat_xy_mm, dets.radius_mm, list(dets.colour), refs
    )
    expected = _crescent_area_mm2(11.0 + PEEK_RING_MM[0])
    # The grid against the circles' lens formula: pi 8^2 less the lens of
    # radii 8 and 12.5 mm, centres 9.5 mm apart, is 67.18 mm^2.
    assert expected == pytest.approx(67.18, abs=0.5)
    assert beside[Colour.GREEN].wink_index == 0  # beside the red wink
    assert 0.5 * expected < beside[Colour.GREEN].area_mm2 < 1.5 * expected
    assert beside[Colour.RED].area_mm2 == 0.0


@pytest.mark.parametrize(
    ("felt_bgr", "wink"),
    [
        ((150, 175, 190), Colour.RED),  # a red wink on beige felt: an orange fringe
        ((70, 140, 60), Colour.BLUE),  # a blue wink on green felt: a greener halo
        ((70, 140, 60), Colour.YELLOW),  # yellow on green felt: a green-yellow fringe
    ],
)
def test_a_lone_winks_blur_and_sharpening_halo_are_not_another_colour(
    felt_bgr: tuple[int, int, int], wink: Colour
) -> None:
    camera = overhead_camera()
    lone = [SceneWink(wink, WinkSize.LARGE, 200.0, 100.0)]
    others = [SceneWink(c, WinkSize.SMALL, -300.0 + 80 * k, -150.0) for k, c in enumerate(Colour)]
    image = render(camera, lone + others)
    felt = np.all(image == np.array([150, 175, 190], np.uint8), axis=2)
    image[felt] = felt_bgr
    blurred = cv2.GaussianBlur(image, (0, 0), 1.2)
    # An unsharp mask, as a webcam's pipeline applies.
    sharpened = cv2.addWeighted(image, 1.8, blurred, -0.8, 0)
    image = cv2.GaussianBlur(sharpened, (0, 0), 0.7)
    dets = detections_for(camera, lone + others)
    refs = colour_references_lab(image, dets.image_xy_px, list(dets.colour))
    beside = colour_beside_winks_mm2(
        image, camera, dets.mat_xy_mm, dets.radius_mm, list(dets.colour), refs
    )
    assert max(b.area_mm2 for b in beside.values()) < PEEK_MIN_AREA_MM2 / 2


def test_a_missing_wink_whose_crescent_shows_is_not_inferred_potted() -> None:
    # Five greens found; the sixth lies under the red wink, its crescent in
    # view: it is on the mat, not in the pot (and the umpire is asked). With
    # no crescent in the image the sixth is inferred potted as before.
    camera = overhead_camera()
    for with_crescent, potted in ((True, 0), (False, 1)):
        in_image, found = _crescent_scene(with_crescent)
        analysis = analyze_frame(
            render(camera, in_image), camera, detections=detections_for(camera, found)
        )
        greens = analysis.board.of_colour(Colour.GREEN)
        assert sum(w.status is WinkStatus.POTTED for w in greens) == potted
        shows = [r for r in analysis.reviews if "shows beside red-L1" in r]
        assert len(shows) == int(with_crescent)


def _camera_looking_at_the_pot(elevation_deg: float, distance_mm: float) -> CameraModel:
    """A 1080p camera on the -y side of the mat, aimed at the pot from the given elevation."""
    e = np.radians(elevation_deg)
    position = np.array([0.0, -np.cos(e), np.sin(e)]) * distance_mm
    forward = -position / np.linalg.norm(position)
    right = np.array([1.0, 0.0, 0.0])
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])
    focal = 1400.0
    return CameraModel(
        image_size_wh=(1920, 1080),
        camera_matrix=np.array([[focal, 0, 959.5], [0, focal, 539.5], [0, 0, 1.0]]),
        dist_coeffs=np.zeros(5),
        rotation=rotation,
        translation_mm=-rotation @ position,
    )


def test_a_potted_wink_seen_through_the_opening_is_not_a_colour_beside_a_wink() -> None:
    # From a camera 45 degrees up the pot's opening, and the red wink
    # inside it, cover mat just beyond the pot in the image: the rings round
    # a blue wink lying there see red, which is the pot's content.
    camera = _camera_looking_at_the_pot(elevation_deg=45.0, distance_mm=1700.0)
    blue = SceneWink(Colour.BLUE, WinkSize.SMALL, 0.0, 45.0)
    found = [blue, SceneWink(Colour.RED, WinkSize.SMALL, 300.0, -100.0)]
    in_pot = SceneWink(Colour.RED, WinkSize.LARGE, 0.0, 8.0, 20.0)
    image = render(camera, [in_pot, *found])
    dets = detections_for(camera, found)
    refs = colour_references_lab(image, dets.image_xy_px, list(dets.colour))
    beside = colour_beside_winks_mm2(
        image, camera, dets.mat_xy_mm, dets.radius_mm, list(dets.colour), refs
    )
    assert beside[Colour.RED].area_mm2 < PEEK_MIN_AREA_MM2 / 2


@pytest.mark.parametrize(
    ("wall_lab", "felt_lab", "dark", "tinted"),
    [
        # 8-bit Lab medians measured on generated oblique photos.
        ((8, 128, 128), (111, 104, 145), True, None),  # a black pot: nothing shows through
        ((97, 113, 138), (113, 98, 150), False, None),  # a clear pot on green felt
        ((50, 129, 110), (153, 138, 136), False, Colour.BLUE),  # a translucent blue pot
        # A translucent red pot: darker than any red wink, not taken for one.
        ((48, 153, 134), (143, 129, 110), False, None),
        ((134, 126, 131), (177, 126, 116), False, None),  # a white pot
    ],
)
def test_a_pots_wall_is_dark_or_tinted_as_it_looks_beside_the_felt(
    wall_lab: tuple[float, ...], felt_lab: tuple[float, ...], dark: bool, tinted: Colour | None
) -> None:
    wall = PotWall(wall_lab=np.array(wall_lab, float), felt_lab=np.array(felt_lab, float))
    assert wall.dark is dark
    # A clear pot on green felt looks green: the felt's colour, not a tint.
    assert [c for c in Colour if wall.tinted_like(c)] == ([] if tinted is None else [tinted])


def test_the_pots_wall_is_read_from_its_side_and_the_felt_from_round_it() -> None:
    # Grey felt and a black pot, seen from 55 degrees off vertical: the pot's
    # silhouette is the hull of its foot and its rim, and its side is that
    # less the opening (drawn in the felt's colour, as if empty and lit).
    camera = camera_at((0.0, -1285.0, 900.0))
    felt_bgr = (140, 150, 160)
    image = np.full((1080, 1920, 3), felt_bgr, np.uint8)
    ring = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    circle = np.column_stack([np.cos(ring), np.sin(ring), np.zeros(96)])
    foot = camera.mat_to_image(circle * [19.0, 19.0, 0.0])
    rim = camera.mat_to_image(circle * [24.0, 24.0, 0.0] + [0.0, 0.0, 38.0])
    hull = cv2.convexHull(np.round(np.vstack([foot, rim])).astype(np.int32))
    cv2.fillConvexPoly(image, hull, (12, 12, 12))
    cv2.fillConvexPoly(image, np.round(rim).astype(np.int32), felt_bgr)
    wall = pot_wall(image, camera)
    assert wall is not None and wall.dark
    felt_lab = cv2.cvtColor(np.uint8([[felt_bgr]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)
    assert np.allclose(wall.felt_lab, felt_lab)
    assert wall.wall_lab[0] < 10


@pytest.mark.parametrize(
    ("mapping_sigma_mm", "in_doubt"),
    [
        # a camera taken as exact: 2 mm is beyond 3 times the wink's own 0.5 mm (the floor)
        (0.0, False),
        # a calibration 1 mm uncertain moves the lines by as much: 2 mm is close
        (1.0, True),
    ],
)
def test_a_wink_near_the_mat_s_edge_or_its_baseline_is_unsure_by_the_calibration_s_sigma(
    mapping_sigma_mm: float, in_doubt: bool
) -> None:
    # Rule 13 (off when any part crosses the edge) and rule 5.2 (unplayed
    # behind the baseline) are read against lines the calibration places.
    camera = overhead_camera(tilt_deg=5.0)
    radius = WinkSize.SMALL.diameter_mm / 2
    # Blue's baseline is the line 914.4 mm from the centre across the
    # diagonal to its corner; the blue wink lies on that diagonal, 2 mm behind it.
    towards_blue = np.asarray(DEFAULT_CORNERS_MM[Colour.BLUE], float)
    towards_blue /= np.linalg.norm(towards_blue)
    blue_xy = towards_blue * (914.4 + 2.0)
    winks = [
        SceneWink(Colour.RED, WinkSize.SMALL, 200.0, -457.2 + radius + 2.0),
        SceneWink(Colour.BLUE, WinkSize.SMALL, float(blue_xy[0]), float(blue_xy[1])),
    ]
    context = replace(
        prepare_context(camera, corners_mm=DEFAULT_CORNERS_MM), mapping_sigma_mm=mapping_sigma_mm
    )
    board = analyze_frame(
        render(camera, winks),
        context,
        detections=detections_for(camera, winks, centre_sigma_mm=0.3),
    ).board
    red = next(w for w in board.winks if w.colour is Colour.RED and w.mat_xy is not None)
    blue = next(w for w in board.winks if w.colour is Colour.BLUE and w.mat_xy is not None)
    assert red.status is WinkStatus.FREE and blue.status is WinkStatus.UNPLAYED
    assert (Doubt.EDGE in red.doubts) is in_doubt
    assert (Doubt.BASELINE in blue.doubts) is in_doubt


def test_the_context_carries_the_calibration_s_mapping_sigma() -> None:
    # A bare camera is taken as exact; a calibration states its uncertainty.
    camera = overhead_camera()

    class _Calibration:
        def __init__(self, sigma_mm: float) -> None:
            self.camera = camera
            self.mapping_sigma_mm = sigma_mm

    assert prepare_context(camera).mapping_sigma_mm == 0.0
    assert prepare_context(_Calibration(1.7)).mapping_sigma_mm == 1.7
    # A stated sigma that is not a number is no uncertainty to add.
    assert prepare_context(_Calibration(float("nan"))).mapping_sigma_mm == 0.0
