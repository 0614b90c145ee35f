"""Assembling the board from one frame's detections (vision/board_builder.py)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pytest
from squop_scenes import SceneWink, camera_at, detections_for, overhead_camera, render

from rules.board import Colour, WinkSize, WinkStatus
from vision.board_builder import FITTED_TWICE_MM, assemble_board
from vision.detections import WinkDetections
from vision.squop import RAISE_ON_ONE_MM, analyse_squops
from vision.status import base_z_off_mat_mm

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


def _seven_yellows_and_three_greens(margin_deg: float, runner_up: Colour) -> WinkDetections:
    """Seven winks read yellow, the last one's hue nearly as close to ``runner_up``."""
    camera = overhead_camera()
    places_mm = [(-500.0 + 120.0 * k, 200.0) for k in range(7)]
    places_mm += [(-500.0 + 120.0 * k, -200.0) for k in range(3)]
    colours = [Colour.YELLOW] * 7 + [Colour.GREEN] * 3
    sizes = [WinkSize.LARGE, WinkSize.LARGE] + [WinkSize.SMALL] * 5 + [WinkSize.SMALL] * 3
    winks = [SceneWink(c, s, x, y) for c, s, (x, y) in zip(colours, sizes, places_mm, strict=True)]
    dets = detections_for(camera, winks)
    return replace(
        dets,
        runner_up_colour=np.array(
            [Colour.RED] * 6 + [runner_up] + [Colour.YELLOW] * 3, dtype=object
        ),
        colour_margin_deg=np.array([60.0] * 6 + [margin_deg] + [60.0] * 3),
        confidence=np.array([0.9] * 6 + [0.95] + [0.9] * 3),
    )


@pytest.mark.parametrize(
    ("margin_deg", "runner_up", "seventh_is"),
    [
        # hue nearly a tie with green, which has room: it is a green wink
        (10.0, Colour.GREEN, Colour.GREEN),
        # its hue is plainly yellow: one of the seven is not a wink; the least
        # confident goes (not this one, the most confident)
        (55.0, Colour.GREEN, Colour.YELLOW),
    ],
)
def test_a_seventh_wink_of_a_colour_whose_hue_allows_another_is_taken_for_that_colour(
    margin_deg: float, runner_up: Colour, seventh_is: Colour
) -> None:
    # Rule 2.1.1: six winks of each colour.
    camera = overhead_camera()
    dets = _seven_yellows_and_three_greens(margin_deg, runner_up)
    board = assemble_board(dets, camera).board
    seen = [w for w in board.winks if not w.inferred]
    seventh = min(seen, key=lambda w: np.hypot(*(np.asarray(w.mat_xy) - (220.0, 200.0))))
    assert np.hypot(*(np.asarray(seventh.mat_xy) - (220.0, 200.0))) < 2.0
    assert seventh.colour is seventh_is
    assert sum(w.colour is Colour.YELLOW for w in seen) == 6


@pytest.mark.parametrize(
    ("pair_apart_mm", "dropped_place"),
    [
        # one wink fitted twice: its second fit goes, not the far wink that
        # is least confident of all
        (5.0, 6),
        # a pair 8 mm apart can be two winks: the least confident goes
        (8.0, 0),
    ],
)
def test_a_seventh_wink_that_is_a_second_fit_of_another_is_the_one_dropped(
    pair_apart_mm: float, dropped_place: int
) -> None:
    # Rule 2.1.1: six winks of each colour; seven yellow detections.
    camera = overhead_camera()
    places_mm = [(-500.0 + 120.0 * k, 200.0) for k in range(6)]
    places_mm.append((places_mm[5][0] + pair_apart_mm, 200.0))
    sizes = [WinkSize.LARGE, WinkSize.LARGE] + [WinkSize.SMALL] * 5
    winks = [SceneWink(Colour.YELLOW, s, x, y) for s, (x, y) in zip(sizes, places_mm, strict=True)]
    dets = replace(
        detections_for(camera, winks),
        confidence=np.array([0.5, 0.9, 0.9, 0.9, 0.9, 0.9, 0.6]),
    )
    assembly = assemble_board(dets, camera)
    kept = [w.mat_xy for w in assembly.board.winks if not w.inferred]
    assert len(kept) == 6
    assert all(np.hypot(*(np.asarray(xy) - places_mm[dropped_place])) > 1.0 for xy in kept)
    note = next(n for n in assembly.notes if "rule 2.1.1 allows 6" in n)
    assert ("one wink fitted twice" in note) == (pair_apart_mm < FITTED_TWICE_MM)


# Seven green detections: six on open felt, the seventh among the yellow
# winks in yellow's corner (default layout: yellow at -x, -y).
_SEVEN_GREENS_MM = [(-500.0 + 120.0 * k, 200.0) for k in range(6)] + [(-870.0, -420.0)]


def _kept_of_seven_greens(confidence: list[float]) -> tuple[list, tuple[str, ...]]:
    """The places kept of seven green winks with these confidences, and the notes."""
    camera = overhead_camera()
    sizes = [WinkSize.LARGE, WinkSize.LARGE] + [WinkSize.SMALL] * 5
    winks = [
        SceneWink(Colour.GREEN, s, x, y) for s, (x, y) in zip(sizes, _SEVEN_GREENS_MM, strict=True)
    ]
    dets = replace(detections_for(camera, winks), confidence=np.array(confidence))
    assembly = assemble_board(dets, camera)
    return [w.mat_xy for w in assembly.board.winks if not w.inferred], assembly.notes


def _kept_near(kept: list, place_mm: tuple[float, float]) -> bool:
    return any(np.hypot(*(np.asarray(xy) - place_mm)) < 1.0 for xy in kept)


def test_a_seventh_wink_behind_another_colours_baseline_is_the_one_dropped() -> None:
    # Rule 5.2: each colour starts behind its own baseline. The one in
    # yellow's corner is more confident than a real green: felt showing
    # between winks there passed for a green wink on green felt.
    kept, notes = _kept_of_seven_greens([0.5, 0.9, 0.9, 0.9, 0.9, 0.9, 0.6])
    assert len(kept) == 6 and not _kept_near(kept, _SEVEN_GREENS_MM[6])
    note = next(n for n in notes if "rule 2.1.1 allows 6" in n)
    assert "1 behind another colour's baseline" in note


def test_a_confident_wink_played_into_another_corner_outranks_a_faint_one() -> None:
    # Mid-game a wink may lie behind another colour's baseline; seen clearly
    # (0.95) it is kept over a faint detection on open felt (0.2).
    kept, _ = _kept_of_seven_greens([0.2, 0.9, 0.9, 0.9, 0.9, 0.9, 0.95])
    assert _kept_near(kept, _SEVEN_GREENS_MM[6]) and not _kept_near(kept, _SEVEN_GREENS_MM[0])


@pytest.mark.parametrize(
    "potted_seen",
    [
        True,  # the potted wink is seen in the pot
        False,  # it is not seen, and is counted potted from the others
    ],
)
def test_a_wink_potted_before_keeps_its_id_when_another_is_played(potted_seen: bool) -> None:
    # A live game: red-S1 went into the pot, then a red small wink is played
    # from behind the baseline. Were the ids handed out afresh, the new wink
    # could take red-S1 and the potted one another's id, and the rules
    # engine would hear "red-S1 knocked out of the pot".
    from rules.board import Board, Wink, WinkStatus
    from vision.board_builder import _STATUS_RANK, _assign_ids

    previous = Board(
        winks=(
            Wink(id="red-S1", colour=Colour.RED, size=WinkSize.SMALL, status=WinkStatus.POTTED),
            *(
                Wink(
                    id=f"red-S{k}",
                    colour=Colour.RED,
                    size=WinkSize.SMALL,
                    status=WinkStatus.UNPLAYED,
                    x_mm=850.0,
                    y_mm=-420.0 + 15.0 * k,
                )
                for k in (2, 3, 4)
            ),
        )
    )
    places = [(300.0, -100.0), (850.0, -390.0), (850.0, -360.0)]
    ranks = [_STATUS_RANK[WinkStatus.FREE], *[_STATUS_RANK[WinkStatus.UNPLAYED]] * 2]
    if potted_seen:
        places.append((0.0, 0.0))
        ranks.append(_STATUS_RANK[WinkStatus.POTTED])
    ids = _assign_ids(
        [Colour.RED] * len(places),
        [WinkSize.SMALL] * len(places),
        np.array(places),
        ranks,
        previous,
    )
    # The two still behind the baseline keep theirs; the played one takes the
    # id of the one that left, not the potted wink's.
    assert ids[:3] == ["red-S3", "red-S2", "red-S4"]
    if potted_seen:
        assert ids[3] == "red-S1"


# From a camera 55 degrees off vertical (1.57 m from the pot), a wink on the pot's floor (rule 2.4,
# 3 mm up) is seen through a clear pot's wall, not through its opening; its
# plan position, taken as on the mat, lies well inside the pot's foot.
_GREENS_ON_MAT_MM = [(-500.0 + 150.0 * k, 250.0) for k in range(5)]
_ON_POT_FLOOR = SceneWink(Colour.GREEN, WinkSize.SMALL, 1.0, -2.0, top_z_mm=4.3)


def _greens_with_one_in_the_pot(on_mat_mm: list[tuple[float, float]]) -> WinkDetections:
    camera = camera_at((0.0, -1285.0, 900.0))
    winks = [SceneWink(Colour.GREEN, WinkSize.SMALL, x, y) for x, y in on_mat_mm]
    return detections_for(camera, [*winks, _ON_POT_FLOOR])


def test_a_wink_seen_through_the_pots_wall_is_potted() -> None:
    from rules.board import WinkStatus
    from vision.status import pot_reading

    camera = camera_at((0.0, -1285.0, 900.0))
    dets = _greens_with_one_in_the_pot(_GREENS_ON_MAT_MM)
    # Not through the opening: the potted test on sight lines alone says no.
    assert not pot_reading(camera, dets.image_xy_px[-1:], [8.0]).potted[0]
    board = assemble_board(dets, camera).board
    potted = [w for w in board.winks if w.colour is Colour.GREEN and w.status is WinkStatus.POTTED]
    assert len(potted) == 1 and not potted[0].inferred


def test_a_wink_seen_only_through_the_pots_wall_goes_first_of_seven() -> None:
    # A translucent pot's tint over the felt can pass for a wink (a yellow one
    # in a red pot, 0.44, over a real wink's 0.36): of seven, it is dropped.
    camera = camera_at((0.0, -1285.0, 900.0))
    on_mat = [*_GREENS_ON_MAT_MM, (-500.0, -250.0)]
    dets = _greens_with_one_in_the_pot(on_mat)
    dets = replace(dets, confidence=np.array([0.9, 0.9, 0.9, 0.9, 0.9, 0.36, 0.44]))
    assembly = assemble_board(dets, camera)
    kept = [w.mat_xy for w in assembly.board.winks if w.colour is Colour.GREEN]
    assert len(kept) == 6 and all(xy is not None for xy in kept)
    note = next(n for n in assembly.notes if "rule 2.1.1 allows 6" in n)
    assert "1 seen only through the pot's wall" in note


_L, _S = WinkSize.LARGE, WinkSize.SMALL


@pytest.mark.parametrize(
    ("previous_sizes", "expected_large"),
    [
        # No previous board: the two least sure of their size become large.
        ({}, [2, 4]),
        # The last frame had large winks at 0 and 5: those stay large,
        # however unsure this frame is of their size (a wink's size does not
        # change; a squopped one shows too little rim to tell).
        ({0: _L, 1: _S, 2: _S, 3: _S, 4: _S, 5: _L}, [0, 5]),
        # Only one known, large: it stays large, the least sure of the rest joins it.
        ({3: _L}, [2, 3]),
        # Only one known, small: it stays small even though least sure.
        ({2: _S}, [3, 4]),
    ],
)
def test_a_relabelled_size_follows_the_wink_the_last_frame_had_there(
    previous_sizes: dict[int, WinkSize], expected_large: list[int]
) -> None:
    from rules.board import Board, Wink, WinkStatus

    camera = overhead_camera()
    places_mm = [(-400.0 + 160.0 * k, 120.0 * (k % 2)) for k in range(6)]
    winks = [SceneWink(Colour.RED, WinkSize.SMALL, x, y) for x, y in places_mm]
    confidence = np.array([0.9, 0.95, 0.05, 0.8, 0.3, 0.9])
    dets = replace(detections_for(camera, winks), size_confidence=confidence)
    ids = {_L: iter(["red-L1", "red-L2"]), _S: iter(["red-S1", "red-S2", "red-S3", "red-S4"])}
    previous = Board(
        winks=tuple(
            Wink(
                id=next(ids[size]),
                colour=Colour.RED,
                size=size,
                status=WinkStatus.FREE,
                # 2 mm from where it is now: nudged, still the same wink.
                x_mm=places_mm[k][0] + 2.0,
                y_mm=places_mm[k][1],
            )
            for k, size in previous_sizes.items()
        )
    )
    assembly = assemble_board(dets, camera, previous=previous if previous_sizes else None)
    large_places = sorted(
        min(range(6), key=lambda k: np.hypot(*(np.asarray(w.mat_xy) - places_mm[k])))
        for w in assembly.board.winks
        if w.size is WinkSize.LARGE and w.colour is Colour.RED
    )
    assert large_places == expected_large


@pytest.mark.parametrize(
    ("by_pot_confidence", "by_pot_kept"),
    [
        # Faint beside the pot (its wall and shadow's edge pass for a rim):
        # it goes, not the fainter real wink elsewhere (0.35).
        (0.40, False),
        # Seen clearly against the pot: a real wink, kept over the faint one.
        (0.69, True),
    ],
)
def test_a_faint_wink_beside_the_pot_goes_first_of_seven(
    by_pot_confidence: float, by_pot_kept: bool
) -> None:
    camera = overhead_camera()
    places_mm = [(-500.0 + 120.0 * k, 200.0) for k in range(6)] + [(0.0, -27.0)]
    sizes = [WinkSize.LARGE, WinkSize.LARGE] + [WinkSize.SMALL] * 5
    winks = [SceneWink(Colour.GREEN, s, x, y) for s, (x, y) in zip(sizes, places_mm, strict=True)]
    confidence = np.array([0.9, 0.9, 0.9, 0.9, 0.9, 0.35, by_pot_confidence])
    dets = replace(detections_for(camera, winks), confidence=confidence)
    kept = [w.mat_xy for w in assemble_board(dets, camera).board.winks if not w.inferred]
    assert len(kept) == 6
    assert _kept_near(kept, places_mm[6]) is by_pot_kept
    assert _kept_near(kept, places_mm[5]) is not by_pot_kept


def test_a_wink_seen_in_the_pot_takes_the_size_of_the_wink_potted_before() -> None:
    """Rule 8.1.3; generated game q3634: a potted large green wink read small in the pot
    made five small ones, and the small wink just played was relabelled large in its place."""
    from rules.board import Board, Wink, WinkStatus
    from vision.board_builder import _fix_counts

    camera = overhead_camera()
    places_mm = [(868.0, 416.0), (890.0, 321.0), (852.0, 391.0), (-1.0, 10.0), (895.0, 390.0)]
    places_mm.append((816.0, 158.0))  # the small wink just played
    sizes = [_S, _L, _S, _S, _S, _S]  # the potted large wink read small, in the pot
    winks = [SceneWink(Colour.GREEN, s, x, y) for s, (x, y) in zip(sizes, places_mm, strict=True)]
    confidence = np.array([0.68, 1.0, 1.0, 0.32, 0.81, 0.28])
    dets = replace(detections_for(camera, winks), size_confidence=confidence)
    potted = Wink(id="green-L1", colour=Colour.GREEN, size=_L, status=WinkStatus.POTTED)
    previous = Board(winks=(potted,))
    keep, got, resized, notes = _fix_counts(dets, previous=previous)
    assert keep.all()
    assert got[3] is _L and resized[3]  # the wink in the pot: the potted large one
    assert got[5] is _S and not resized[5]  # the wink just played stays small
    assert any("seen in the pot was relabelled large" in n for n in notes)
    # Without the previous board, the least sure small wink is made large, as before.
    _, before, _, _ = _fix_counts(dets)
    assert before[5] is _L and before[3] is _S


def test_of_two_winks_in_the_pot_the_one_least_sure_of_its_size_takes_the_potted_size() -> None:
    # One large wink potted before; two read small in the pot now: one just
    # potted (surely small), one the old large wink misread.
    from rules.board import Board, Wink, WinkStatus
    from vision.board_builder import _fix_counts

    camera = overhead_camera()
    places_mm = [(-4.0, 3.0), (5.0, -6.0), (300.0, 100.0)]
    winks = [SceneWink(Colour.GREEN, _S, x, y) for x, y in places_mm]
    dets = replace(detections_for(camera, winks), size_confidence=np.array([0.9, 0.3, 0.8]))
    potted = Wink(id="green-L1", colour=Colour.GREEN, size=_L, status=WinkStatus.POTTED)
    _, got, resized, _ = _fix_counts(dets, previous=Board(winks=(potted,)))
    assert [got[0], got[1], got[2]] == [_S, _L, _S]
    assert resized.tolist() == [False, True, False]


@pytest.mark.parametrize(
    ("place_mm", "base_z_mm", "within_mm"),
    [
        ((0.0, -560.0), -2.5, 0.2),  # on the table in front of the near long edge
        ((-960.0, 150.0), -2.5, 0.2),  # on the table beyond a short edge
        ((930.0, 470.0), -2.5, 0.2),  # on the table past a corner, 20 mm from it
        ((0.0, -463.2), -2.5 * 6.0 / 14.0, 0.2),  # tipped over the near edge, centre 6 mm out
        ((-917.4, 0.0), -2.5 * 3.0 / 11.0, 0.2),  # tipped over a short edge, 3 mm out
        # Seen from the near side, the image points of these also fit the
        # other reading (tipped, or flat on the table) a few mm away: the
        # height half way places them within about half that.
        ((0.0, 465.2), -2.5, 1.6),  # on the table against the far long edge
        ((-922.4, 150.0), -2.5, 1.6),  # on the table against a short edge
        ((0.0, 463.2), -2.5 * 6.0 / 14.0, 1.6),  # tipped over the far edge
    ],
)
def test_a_wink_off_the_mat_is_placed_at_its_height_on_the_table(
    place_mm: tuple[float, float], base_z_mm: float, within_mm: float
) -> None:
    # A camera 55 degrees from vertical: taken to lie on the felt, a wink on
    # the table (a mat's thickness, 2.5 mm, lower) would be placed 2-5 mm
    # off in plan.
    camera = camera_at((0.0, -1285.0, 900.0))
    wink = SceneWink(Colour.GREEN, WinkSize.SMALL, *place_mm, top_z_mm=1.5 + base_z_mm)
    board = assemble_board(detections_for(camera, [wink]), camera).board
    (seen,) = [w for w in board.winks if w.mat_xy is not None and not w.inferred]
    assert seen.status is WinkStatus.OFF
    assert np.hypot(*(np.asarray(seen.mat_xy) - place_mm)) < within_mm


@pytest.mark.parametrize(
    ("upper_y_mm", "squop_seen"),
    [
        (461.5, True),  # the upper's centre 4.3 mm beyond the far edge: read on the lower
        (462.5, False),  # 0.5 mm overlap, looks apart at the mat's level: not read
    ],
)
def test_a_wink_on_another_at_the_far_edge_is_not_put_on_the_table(
    upper_y_mm: float, squop_seen: bool
) -> None:
    # Raised on a wink that lies wholly on the felt, the upper one looks
    # further out than it is, past the edge: read on the lower one it is
    # placed there; not read so, it is left at the mat's level, as next to
    # another wink it may lie on it, not put lower still.
    camera = camera_at((0.0, -1285.0, 900.0))
    lower = SceneWink(Colour.GREEN, WinkSize.SMALL, 0.0, 447.2, 1.5)
    upper = SceneWink(Colour.BLUE, WinkSize.SMALL, 2.0, upper_y_mm, 3.0)
    winks = [lower, upper]
    analysis = analyse_squops(
        detections_for(camera, winks),
        camera,
        render(camera, winks),
        base_z_mm=partial(base_z_off_mat_mm, camera),
    )
    assert (analysis.squops() == [(1, 0)]) is squop_seen
    assert analysis.top_z_mm[1] == pytest.approx(1.5 + RAISE_ON_ONE_MM if squop_seen else 1.5)
