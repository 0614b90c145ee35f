"""The live referee's logic: settling, shots given to the engine, what it says.

The vision is replaced by a stand-in that returns a prepared board per
picture, so that each test states exactly what the camera "saw"; the
end-to-end runs on rendered frames are in ``test_watch_cli.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from rules.board import Board, Colour, Doubt, Wink, WinkStatus, starting_board
from rules.engine import Game, replay_record
from rules.events import EventType
from rules.record import GameRecord, ShotRecord, load_record
from service.watch import (
    MOTION_LEVELS,
    AnnouncementKind,
    Frame,
    Referee,
    Settler,
    _changed_winks,
    extra_unseen_detections,
    kept_still,
    kept_unplayed,
    with_others_unplayed_kept,
    with_squops_the_shot_explains,
    with_unseen_winks,
    without_still_unplayed_squops,
    without_unseen_arrivals,
)
from tests.rules.boardkit import apply, make_board
from vision.detections import WinkDetections
from vision.status import DEFAULT_CORNERS_MM


@dataclass
class _View:
    board: Board
    hidden_regions: tuple[Any, ...] = ()
    reviews: tuple[str, ...] = ()
    camera: Any = None  # the calibration's own frame
    detections: WinkDetections = field(default_factory=WinkDetections.empty)


@dataclass
class _Hidden:
    area_mm2: float = 20000.0


class _PixelCamera:
    """Every mat point seen at the picture's corner."""

    def mat_to_image(self, mat_xyz_mm: Any) -> np.ndarray:
        return np.zeros((len(mat_xyz_mm), 2))


@dataclass
class _StandInAnalyzer:
    """Returns the view prepared for a picture; the picture's first pixel names it."""

    views: dict[int, _View] = field(default_factory=dict)
    context: Any = field(
        default_factory=lambda: SimpleNamespace(
            corners_mm=DEFAULT_CORNERS_MM, pot_centre_mm=(0.0, 0.0), camera=_PixelCamera()
        )
    )

    def analyze(self, image_bgr: np.ndarray, **options: Any) -> _View:
        return self.views[int(image_bgr[0, 0, 0])]


class _Camera:
    """Feeds prepared views to a referee as frames 30 s apart."""

    def __init__(
        self,
        tmp_path: Path | None = None,
        first: Colour = Colour.BLUE,
        frames_dir: Path | None = None,
    ) -> None:
        self.analyzer = _StandInAnalyzer()
        record = GameRecord(squidge_off_winner=first)
        self.record_path = None if tmp_path is None else tmp_path / "game.json"
        self.referee = Referee(
            self.analyzer,  # type: ignore[arg-type]
            Game.from_record(record),
            record,
            record_path=self.record_path,
            frames_dir=frames_dir,
        )
        self.t_s = 0.0

    def see(self, board: Board, **view: Any) -> list[Any]:
        key = len(self.analyzer.views)
        self.analyzer.views[key] = _View(board, **view)
        image = np.full((40, 40, 3), key, np.uint8)
        # Each view's picture differs from the last where the stand-in camera
        # sees every wink (a shot changes it where winks move), and not
        # elsewhere; the first channel names the view.
        image[:8, :8, 1] = (97 * key) % 256
        said = self.referee.observe(Frame(image, self.t_s, f"frame {key}"))
        self.t_s += 30.0
        return said


def _kinds(said: list[Any]) -> list[AnnouncementKind]:
    return [a.kind for a in said]


def test_the_starting_position_is_announced_with_who_plays_first() -> None:
    camera = _Camera(first=Colour.RED)
    said = camera.see(starting_board())
    assert _kinds(said) == [AnnouncementKind.START]
    assert "Red won the squidge-off" in said[0].text
    assert camera.referee.started


def test_a_view_before_the_winks_are_set_out_names_what_is_missing() -> None:
    camera = _Camera()
    said = camera.see(make_board(free=["blue-S1"]))
    assert _kinds(said) == [AnnouncementKind.WAITING]
    assert "blue-S1 not behind the baseline" in said[0].text
    # The same view again is not said twice.
    assert camera.see(make_board(free=["blue-S1"])) == []
    assert _kinds(camera.see(starting_board())) == [AnnouncementKind.START]


def test_a_shot_is_given_to_the_engine_as_the_colour_whose_turn_it_is() -> None:
    camera = _Camera()
    camera.see(starting_board())
    said = camera.see(make_board(free={"blue-S1": (-500.0, 200.0)}))
    assert _kinds(said) == [AnnouncementKind.SHOT, AnnouncementKind.NEXT]
    assert said[0].text == "Shot 1: blue played (blue-S1 moved)."
    # Rule 7: play passes clockwise, blue to green (the engine's own order).
    assert "Next: green to play" in said[1].text
    (shot,) = camera.referee.shots
    assert (shot.colour, shot.t) == (Colour.BLUE, 0.0)


def test_a_view_with_nothing_moved_says_nothing() -> None:
    camera = _Camera()
    camera.see(starting_board())
    board = make_board(free={"blue-S1": (-500.0, 200.0)})
    camera.see(board)
    # The same wink fitted 1 mm away in the next view is the same position.
    nudged = board.with_wink(board.wink("blue-S1").with_position(-499.0, 200.5))
    assert camera.see(nudged) == []
    assert len(camera.referee.shots) == 1


def test_a_hand_over_the_mat_is_waited_for_and_said_once() -> None:
    camera = _Camera()
    camera.see(starting_board())
    after = make_board(free={"blue-S1": (-500.0, 200.0)})
    first = camera.see(after, hidden_regions=(_Hidden(),))
    assert _kinds(first) == [AnnouncementKind.HIDDEN]
    assert "200 cm²" in first[0].text
    assert camera.see(after, hidden_regions=(_Hidden(),)) == []
    assert camera.referee.shots == ()
    assert _kinds(camera.see(after))[0] is AnnouncementKind.SHOT


def test_a_position_that_cannot_follow_is_not_counted_and_the_game_goes_on() -> None:
    camera = _Camera()
    camera.see(starting_board())
    # Rule 10.6: two unplayed winks cannot come into play in one shot.
    said = camera.see(make_board(free=["blue-S1", "blue-S2"]))
    assert _kinds(said) == [AnnouncementKind.NOT_UNDERSTOOD]
    assert "rule 10.6" in said[0].text
    assert camera.referee.shots == ()
    # The players put one back: the shot is read.
    assert _kinds(camera.see(make_board(free=["blue-S1"])))[0] is AnnouncementKind.SHOT


def test_potting_an_own_wink_is_announced_with_its_extra_shot() -> None:
    camera = _Camera()
    camera.see(starting_board())
    said = camera.see(make_board(potted=["blue-S1"]))
    texts = " / ".join(a.text for a in said)
    assert [a.event.type for a in said if a.event is not None] == [
        EventType.POTTED,
        EventType.EXTRA_SHOT,
    ]
    # Rule 12: blue plays again.
    assert said[-1].kind is AnnouncementKind.NEXT and "blue to play" in said[-1].text, texts
    second = camera.see(make_board(potted=["blue-S1"], free=["blue-S2"]))
    assert camera.referee.shots[-1].colour is Colour.BLUE
    assert "green to play" in second[-1].text


@pytest.mark.parametrize(
    ("doubts", "umpire_told"),
    [
        ((Doubt.INFERRED,), True),  # counted potted only because it is seen nowhere else
        ((), False),  # seen in the pot
    ],
)
def test_a_potting_not_seen_in_the_pot_is_given_to_the_umpire(
    doubts: tuple[Doubt, ...], umpire_told: bool
) -> None:
    """Rules 8.1, 12: the extra shot rests on the potting; one inferred may lie behind the pot."""
    camera = _Camera()
    start = _placed_start()
    camera.see(start)
    potted = start.wink("blue-S1").model_copy(
        update={"status": WinkStatus.POTTED, "x_mm": None, "y_mm": None, "doubts": doubts}
    )
    said = camera.see(start.with_wink(potted))
    assert [a.event.type for a in said if a.event is not None] == [
        EventType.POTTED,
        EventType.EXTRA_SHOT,
    ]
    told = [a.text for a in said if a.kind is AnnouncementKind.REVIEW and "blue-S1" in a.text]
    assert bool(told) is umpire_told
    if umpire_told:
        assert "without being seen in the pot" in told[0]


def test_a_squop_is_announced() -> None:
    camera = _Camera()
    camera.see(starting_board())
    board = make_board(free={"blue-S1": (0.0, 150.0)})
    camera.see(board)
    said = camera.see(apply(board, squop={"green-L1": "blue-S1"}))
    types = [a.event.type for a in said if a.event is not None]
    assert EventType.SQUOPPED in types
    # Its line carries the shot's number as the shot's own line says it.
    assert said[0].text.startswith("Shot 2: green played")
    squop = next(a for a in said if a.event is not None and a.event.type is EventType.SQUOPPED)
    assert squop.text.startswith("[  2]")


def test_an_off_wink_put_back_on_the_mat_is_not_a_shot() -> None:
    camera = _Camera()
    camera.see(starting_board())
    board = make_board(free={"blue-S1": (-500.0, 200.0)})
    camera.see(board)
    off = apply(board, play=["green-S1"], off={"green-S1": (930.0, 100.0)})
    said = camera.see(off)
    assert EventType.FORFEIT in [a.event.type for a in said if a.event is not None]
    back = off.with_wink(
        off.wink("green-S1").with_position(880.0, 100.0).with_status(WinkStatus.FREE)
    )
    replaced = camera.see(back)
    assert _kinds(replaced) == [AnnouncementKind.REPLACED]
    assert len(camera.referee.shots) == 2


def test_new_umpire_reviews_are_said_once() -> None:
    camera = _Camera()
    camera.see(starting_board())
    review = "blue-S1 over green-L1: too close to call"
    said = camera.see(make_board(free=["blue-S1"]), reviews=(review,))
    assert [a.text for a in said if a.kind is AnnouncementKind.REVIEW] == [f"Umpire: {review}"]
    again = camera.see(make_board(free=["blue-S1", "green-S1"]), reviews=(review,))
    assert AnnouncementKind.REVIEW not in _kinds(again)


def test_the_saved_record_replays_to_the_same_announcements(tmp_path: Path) -> None:
    camera = _Camera(tmp_path)
    camera.see(starting_board())
    b1 = make_board(potted=["blue-S1"])
    camera.see(b1)
    b2 = apply(b1, play=["blue-S2"])
    camera.see(b2)
    camera.see(apply(b2, play=["green-L1"]))
    assert camera.record_path is not None
    record = load_record(camera.record_path)
    assert [s.colour for s in record.shots] == [Colour.BLUE, Colour.BLUE, Colour.GREEN]
    # Game time counts from the first shot, which is at 0 (rules 6.1, 17).
    assert [s.t for s in record.shots] == [0.0, 30.0, 60.0]
    game, _ = replay_record(record)
    assert [e.text for e in game.events] == [e.text for e in camera.referee.game.events]


def _frame(level: int, *, patch: int | None = None) -> np.ndarray:
    image = np.full((80, 80, 3), level, np.uint8)
    if patch is not None:
        image[8:40, 8:40] = patch
    return image


def test_a_still_picture_settles_once_after_the_settle_time() -> None:
    settler = Settler(np.ones((10, 10), bool), settle_s=1.0)
    times = [0.0, 0.5, 1.0, 1.5, 2.0]
    assert [settler.update(_frame(100), t) for t in times] == [False, False, True, False, False]


def test_motion_restarts_the_wait_and_dates_the_shot_from_its_start() -> None:
    settler = Settler(np.ones((10, 10), bool), settle_s=1.0)
    assert [settler.update(_frame(100), t) for t in (0.0, 1.0)] == [False, True]
    # A hand comes in at 2 s, moves until 3 s, and leaves a wink moved.
    moving = [_frame(100, patch=200), _frame(100, patch=150), _frame(100, patch=120)]
    assert [settler.update(f, t) for f, t in zip(moving, (2.0, 2.5, 3.0), strict=True)] == [
        False
    ] * 3
    assert settler.update(_frame(100, patch=120), 3.5) is False
    assert settler.update(_frame(100, patch=120), 4.0) is True
    assert settler.motion_began_s == 2.0


def test_motion_outside_the_watched_region_does_not_keep_a_shot_from_settling() -> None:
    watched = np.zeros((10, 10), bool)
    watched[6:, 6:] = True  # the patch changes shrunk pixels 1-4 only
    settler = Settler(watched, settle_s=1.0)
    settler.update(_frame(100), 0.0)
    assert settler.update(_frame(100, patch=220), 0.6) is False
    assert settler.update(_frame(100, patch=40), 1.0) is True


def test_noise_below_the_motion_level_is_not_motion() -> None:
    rng = np.random.default_rng(0)
    settler = Settler(np.ones((10, 10), bool), settle_s=1.0)
    frames = [
        np.clip(100 + rng.normal(0, 3, (80, 80, 3)), 0, 255).astype(np.uint8) for _ in range(3)
    ]
    assert MOTION_LEVELS > 3
    assert [settler.update(f, t) for f, t in zip(frames, (0.0, 0.5, 1.0), strict=True)] == [
        False,
        False,
        True,
    ]


@pytest.mark.parametrize(
    "times",
    [
        [0.0, 30.0, 60.0],  # photos 30 s apart
        [0.0, 0.0, 0.0],  # photos without a clock
    ],
)
def test_photos_each_count_as_a_settled_view(times: list[float]) -> None:
    settler = Settler(np.ones((10, 10), bool), settle_s=0.0)
    assert all(settler.update(_frame(100 + 10 * k), t) for k, t in enumerate(times))


def test_a_pass_told_from_the_keyboard_is_a_rule_11_pass() -> None:
    camera = _Camera()
    camera.see(starting_board())
    camera.see(make_board(free=["blue-S1"]))
    said = camera.referee.pass_turn(75.0)
    assert [a.event.type for a in said if a.event is not None] == [EventType.PASS]
    assert "green passes" in said[0].text.lower()
    assert "Next: red to play" in said[-1].text
    # The first shot was seen at 30 s of watching: game time counts from it.
    assert camera.referee.shots[-1].is_pass and camera.referee.shots[-1].t == 45.0


def test_a_pass_before_the_game_has_begun_is_ignored() -> None:
    camera = _Camera()
    assert camera.referee.pass_turn(5.0) == []
    assert camera.referee.shots == ()


def _placed_start() -> Board:
    """The starting position with each wink at a spot in its own corner (rule 5.2)."""
    winks = []
    for colour in Colour:
        cx, cy = DEFAULT_CORNERS_MM[colour]
        for k, wink in enumerate(starting_board().of_colour(colour)):
            inward = 40.0 + 12.0 * k
            winks.append(wink.with_position(cx - np.sign(cx) * inward, cy - np.sign(cy) * 30.0))
    return Board(winks=tuple(winks))


def test_a_wink_read_in_play_in_a_crowded_corner_does_not_hold_up_the_start() -> None:
    camera = _Camera()
    start = _placed_start()
    # A blue wink deep in its corner read as free (a misread, not a shot).
    misread = start.with_wink(start.wink("blue-S1").with_status(WinkStatus.FREE))
    said = camera.see(misread)
    assert _kinds(said) == [AnnouncementKind.START]
    # It stays unplayed while it stays put, so the next shot is green's own.
    board = misread.with_wink(
        misread.wink("blue-L1").with_position(-500.0, 200.0).with_status(WinkStatus.FREE)
    )
    assert _kinds(camera.see(board))[0] is AnnouncementKind.SHOT
    assert camera.referee.shots[-1].board.wink("blue-S1").status is WinkStatus.UNPLAYED


def test_an_unplayed_wink_that_moved_is_in_play() -> None:
    start = _placed_start()
    played = start.with_wink(
        start.wink("red-S2").with_position(300.0, -100.0).with_status(WinkStatus.FREE)
    )
    assert kept_unplayed(played, start).wink("red-S2").status is WinkStatus.FREE
    nudged = start.with_wink(start.wink("red-S2").with_status(WinkStatus.FREE))
    assert kept_unplayed(nudged, start).wink("red-S2").status is WinkStatus.UNPLAYED


@pytest.mark.parametrize(
    ("left", "status"),
    [
        (False, WinkStatus.FREE),  # nothing changed where it was: lost, not potted
        (True, WinkStatus.POTTED),  # the picture changed there: the pot is believed
    ],
)
def test_a_wink_counted_potted_unseen_is_believed_only_where_the_picture_changed(
    left: bool, status: WinkStatus
) -> None:
    last = make_board(free={"blue-S1": (200.0, 100.0)})
    inferred = last.wink("blue-S1").model_copy(
        update={
            "status": WinkStatus.POTTED,
            "x_mm": None,
            "y_mm": None,
            "uncertain": True,
            "doubts": (Doubt.INFERRED,),
        }
    )
    board, unseen = with_unseen_winks(last.with_wink(inferred), last, lambda wink: left)
    assert board.wink("blue-S1").status is status
    assert unseen == (() if left else ("blue-S1",))


def test_a_wink_not_seen_is_kept_where_it_was_and_flagged() -> None:
    last = make_board(free={"green-L1": (100.0, 50.0)}, squops={"green-L1": "red-S1"})
    seen = Board(winks=tuple(w for w in last.winks if w.id != "green-L1"))
    seen = seen.with_wink(seen.wink("red-S1").with_status(WinkStatus.FREE))
    board, unseen = with_unseen_winks(seen, last)
    kept = board.wink("green-L1")
    assert unseen == ("green-L1",)
    assert (kept.mat_xy, kept.squops, kept.uncertain) == (last.wink("green-L1").mat_xy, (), True)
    assert board.problems() == []


@pytest.mark.parametrize(
    ("changed_old", "changed_new", "kept"),
    [
        (False, False, True),  # the picture is the same at both places: a misreading
        (True, True, False),  # it changed at both: the wink moved
        (True, False, False),  # it changed where the wink was: it left
    ],
)
def test_a_wink_moves_only_where_the_picture_changed(
    changed_old: bool, changed_new: bool, kept: bool
) -> None:
    last = make_board(free={"yellow-S1": (-600.0, 200.0)})
    read = last.with_wink(
        last.wink("yellow-S1").with_position(-750.0, 520.0).with_status(WinkStatus.OFF)
    )

    def changed_at(wink: Any) -> bool:
        return changed_old if wink.mat_xy == (-600.0, 200.0) else changed_new

    out = kept_still(read, last, changed_at).wink("yellow-S1")
    assert (out == last.wink("yellow-S1")) is kept


@pytest.mark.parametrize(
    ("changed_there", "lay_there", "dropped"),
    [
        (False, False, True),  # nothing lay there and the picture is the same: a misreading
        (True, False, False),  # the picture changed there: a wink arrived
        (False, True, False),  # a wink lay there before: the same wink, seen again
    ],
)
def test_a_wink_arrives_only_where_the_picture_changed(
    changed_there: bool, lay_there: bool, dropped: bool
) -> None:
    place = (-200.0, 300.0)
    last = make_board(free={"red-S1": place} if lay_there else {"red-S1": (400.0, -300.0)})
    read = last.with_wink(last.wink("green-S2").with_position(*place).with_status(WinkStatus.FREE))

    def changed_at(wink: Any) -> bool:
        return changed_there and wink.mat_xy == place

    out = without_unseen_arrivals(read, last, changed_at)
    assert ("green-S2" not in out.by_id) is dropped
    assert len(out.winks) == 24 - dropped


def test_a_phantom_that_took_a_played_winks_id_leaves_that_wink_where_it_was() -> None:
    # Generated game o313: green-S2 was played from the corner (the picture
    # changed there), its id went to bare felt between another colour's
    # winks (unchanged), and the played wink came out as green-L1.
    last = starting_board()
    read = last.with_wink(
        last.wink("green-L1").with_position(-746.0, 99.0).with_status(WinkStatus.FREE)
    )
    read = read.with_wink(read.wink("green-S2").with_position(845.0, 447.0))
    moved_from_or_to = {last.wink("green-L1").mat_xy, (-746.0, 99.0), last.wink("green-S2").mat_xy}

    def changed_at(wink: Any) -> bool:
        return wink.mat_xy in moved_from_or_to

    board, unseen = with_unseen_winks(without_unseen_arrivals(read, last, changed_at), last)
    assert unseen == ("green-S2",)
    assert board.wink("green-S2").mat_xy == last.wink("green-S2").mat_xy
    assert board.wink("green-S2").status is WinkStatus.UNPLAYED
    assert board.wink("green-L1").mat_xy == (-746.0, 99.0)
    assert board.problems() == []


# Game q342 (photos): green's corner holds its five unplayed winks, a
# green-looking disc lies on the table beyond the mat's edge, unchanged since
# the start, and green's sixth wink has just been potted. Seven green
# detections: the disc must go, not the wink in the pot.
GREEN_CORNER_MM = [(848.0, 441.0), (847.0, 400.0), (859.0, 383.0), (893.0, 329.0), (902.0, 425.0)]
TABLE_DISC_MM = (-930.0, 441.0)


def _green_detections(extra_mm: list[tuple[float, float]], confidence: list[float]) -> tuple:
    xy = [*GREEN_CORNER_MM, *extra_mm]
    colours = [Colour.GREEN] * len(xy)
    return np.array(xy), np.full(len(xy), 8.0), colours, np.array([0.7] * 5 + confidence)


def _green_corner_board() -> Board:
    board = starting_board()
    ids = [w.id for w in board.of_colour(Colour.GREEN)][:5]
    for wink_id, place in zip(ids, GREEN_CORNER_MM, strict=True):
        board = board.with_wink(board.wink(wink_id).with_position(*place))
    return board


@pytest.mark.parametrize(
    ("extra_mm", "confidence", "changed_there", "dropped"),
    [
        # The disc on the table and the wink in the pot: the disc goes.
        ([TABLE_DISC_MM, (1.0, -2.0)], [0.56, 0.64], False, [5]),
        # The same, the disc more confident than the potted wink: it still goes.
        ([TABLE_DISC_MM, (1.0, -2.0)], [0.9, 0.3], False, [5]),
        # The picture changed at the disc's place: a wink arrived there, none goes.
        ([TABLE_DISC_MM, (1.0, -2.0)], [0.56, 0.64], True, []),
        # Six green detections in all: vision's count stands, none goes.
        ([TABLE_DISC_MM], [0.56], False, []),
        # Two discs, one too many: the less confident goes.
        ([TABLE_DISC_MM, (-930.0, 300.0)], [0.5, 0.4], False, [6]),
    ],
)
def test_of_a_colour_seen_more_than_six_times_a_wink_that_arrived_unseen_goes_first(
    extra_mm: list[tuple[float, float]],
    confidence: list[float],
    changed_there: bool,
    dropped: list[int],
) -> None:
    xy, radius, colours, conf = _green_detections(extra_mm, confidence)
    last = _green_corner_board()
    drop = extra_unseen_detections(
        xy, radius, colours, conf, last, lambda mat_xy, radius_mm: changed_there
    )
    assert np.flatnonzero(drop).tolist() == dropped


def test_a_wink_seen_in_the_pot_is_never_an_unseen_arrival() -> None:
    # Potted winks have no place on the board, and stay seen unchanged.
    xy, radius, colours, conf = _green_detections([(1.0, -2.0), (3.0, 4.0)], [0.3, 0.3])
    drop = extra_unseen_detections(
        xy, radius, colours, conf, _green_corner_board(), lambda mat_xy, radius_mm: False
    )
    assert not drop.any()


def test_a_wink_in_a_squop_is_not_dropped_as_an_unseen_arrival() -> None:
    last = make_board(free={"blue-S1": (0.0, 150.0)})
    read = apply(last, squop={"green-L1": "blue-S1"})
    out = without_unseen_arrivals(read, last, lambda wink: False)
    assert out.wink("green-L1").squops == ("blue-S1",)


def test_a_wink_in_a_squop_is_left_as_read_where_the_picture_did_not_change() -> None:
    last = make_board(free={"blue-S1": (0.0, 150.0)})
    read = apply(last, squop={"green-L1": "blue-S1"})
    out = kept_still(read, last, lambda wink: False)
    assert out.wink("blue-S1").status is WinkStatus.SQUOPPED


def test_a_wink_lost_where_another_now_lies_is_taken_as_squopped_by_it() -> None:
    # Rule 8.2: red-S2 vanished from view and yellow-S1 came to rest over its
    # place; it is under yellow-S1, not in the pot.
    last = make_board(free={"red-S2": (300.0, -100.0), "yellow-S1": (-500.0, -300.0)})
    now = last.with_wink(last.wink("yellow-S1").with_position(305.0, -100.0))
    now = Board(winks=tuple(w for w in now.winks if w.id != "red-S2"))
    board, unseen = with_unseen_winks(now, last, lambda wink: True)
    assert unseen == ("red-S2",)
    assert board.wink("red-S2").status is WinkStatus.SQUOPPED
    assert board.wink("yellow-S1").squops == ("red-S2",)
    assert board.problems() == []


def test_a_mat_hidden_view_after_view_is_told_it_may_be_the_camera() -> None:
    camera = _Camera()
    camera.see(starting_board())
    said = [camera.see(starting_board(), hidden_regions=(_Hidden(),)) for _ in range(4)]
    assert [len(s) for s in said] == [1, 0, 1, 0]
    assert "the camera has moved" in said[2][0].text


def test_a_played_wink_back_behind_its_baseline_is_still_in_play() -> None:
    # Rule 3: once played, never unplayed again; the camera reads a wink
    # behind its baseline as unplayed.
    start = _placed_start()
    played = start.with_wink(
        start.wink("blue-S1").with_position(-500.0, 200.0).with_status(WinkStatus.FREE)
    )
    back = played.with_wink(
        played.wink("blue-S1").with_position(-850.0, 400.0).with_status(WinkStatus.UNPLAYED)
    )
    assert kept_unplayed(back, played).wink("blue-S1").status is WinkStatus.FREE


def test_a_wink_knocked_out_of_the_pot_and_put_back_is_not_a_shot() -> None:
    camera = _Camera()
    camera.see(starting_board())
    potted = make_board(potted=["blue-S1"])
    camera.see(potted)  # blue pots and plays again (rule 12)
    knocked = apply(potted, play={"blue-S1": (100.0, 100.0), "blue-S2": (120.0, 300.0)})
    said = camera.see(knocked)
    assert EventType.REPOTTED in [a.event.type for a in said if a.event is not None]
    back = apply(knocked, pot=["blue-S1"])
    assert _kinds(camera.see(back)) == [AnnouncementKind.REPLACED]
    assert len(camera.referee.shots) == 2


def test_a_saved_picture_never_replaces_a_file(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    theirs = frames / "game_shot_000.jpg"
    theirs.write_bytes(b"the user's own picture")
    camera = _Camera(tmp_path, frames_dir=frames)
    camera.see(starting_board())
    camera.see(make_board(free=["blue-S1"]))
    assert theirs.read_bytes() == b"the user's own picture"
    assert (frames / "game_shot_000-2.jpg").stat().st_size > 0


def test_a_pass_before_a_resumed_game_is_seen_keeps_the_clock() -> None:
    analyzer = _StandInAnalyzer()
    board = make_board(free=["blue-S1"])
    record = GameRecord(
        squidge_off_winner=Colour.BLUE,
        shots=(
            ShotRecord(t=0.0, colour=Colour.BLUE, board=board),
            ShotRecord(t=30.0, colour=Colour.GREEN, is_pass=True),
        ),
    )
    game, _ = replay_record(record)
    referee = Referee(analyzer, game, record)  # type: ignore[arg-type]
    said = referee.pass_turn(5.0)
    assert [a.event.type for a in said if a.event is not None] == [EventType.PASS]
    # The game clock runs on from the record's last shot (30 s), not from 0.
    assert referee.shots[-1].t >= 30.0


@pytest.mark.parametrize(
    ("status", "y_mm"),
    [
        # across the long edge (generated game q3613's video)
        (WinkStatus.OFF, 452.0),
        # just inside it, within the calibration's uncertainty (game q3653's video)
        (WinkStatus.FREE, 441.0),
    ],
)
def test_a_wink_read_at_the_mat_s_edge_does_not_hold_up_the_start(
    status: WinkStatus, y_mm: float
) -> None:
    """Rule 5.2: every wink starts behind a baseline.

    The felt blurred into the table along the mat's long edge was read as a
    green wink on that edge; the start was never taken and no shot was seen.
    """
    camera = _Camera()
    start = _placed_start()
    phantom = start.wink("green-S4").with_status(status).with_position(19.0, y_mm)
    phantom = phantom.model_copy(update={"doubts": (Doubt.EDGE,)})
    said = camera.see(start.with_wink(phantom))
    assert _kinds(said) == [AnnouncementKind.START]
    assert "green-S4 taken to be there too (not seen)" in said[0].text
    # It is put behind its baseline, not left on the edge.
    assert camera.referee._board is not None
    assert camera.referee._board.wink("green-S4").status is WinkStatus.UNPLAYED
    assert camera.referee._board.wink("green-S4").mat_xy != (19.0, y_mm)


def test_a_wink_read_at_the_pot_s_foot_does_not_hold_up_the_start() -> None:
    """Rule 5.2 (generated game o3664's video): the pot's shadow read as a green wink."""
    camera = _Camera()
    start = _placed_start()
    # 26.5 mm from the pot's axis: the small wink's outline 0.5 mm over the foot.
    phantom = start.wink("green-S4").with_status(WinkStatus.FREE).with_position(-25.5, -7.25)
    said = camera.see(start.with_wink(phantom))
    assert _kinds(said) == [AnnouncementKind.START]
    assert "green-S4 taken to be there too (not seen)" in said[0].text


def test_a_wink_read_on_the_field_for_sure_still_holds_up_the_start() -> None:
    # Clear of the edge: a wink played before the referee saw the start.
    camera = _Camera()
    start = _placed_start()
    played = start.wink("green-S4").with_status(WinkStatus.FREE).with_position(19.0, 300.0)
    said = camera.see(start.with_wink(played))
    assert _kinds(said) == [AnnouncementKind.WAITING]
    assert "green-S4 not behind the baseline" in said[0].text


def test_on_the_players_word_the_view_waited_on_is_the_start() -> None:
    """Rule 5.2: a shadow read as a wink in play kept the referee waiting.

    On the players' word the view is the start; the misread wink is taken
    as not seen and put behind its own baseline.
    """
    camera = _Camera()
    start = _placed_start()
    shadow = start.wink("green-S4").with_status(WinkStatus.FREE).with_position(30.0, 35.0)
    waiting = camera.see(start.with_wink(shadow))
    assert _kinds(waiting) == [AnnouncementKind.WAITING]
    assert "type s and Enter" in waiting[0].text
    said = camera.referee.start_as_said(camera.t_s)
    assert _kinds(said) == [AnnouncementKind.START]
    assert said[0].text.startswith("Starting position taken, on the players' word")
    assert "green-S4 taken to be there too (not seen)" in said[0].text
    assert camera.referee._board is not None
    green = camera.referee._board.wink("green-S4")
    assert green.status is WinkStatus.UNPLAYED
    # Not seen: no place, and found wherever it is seen next.
    assert green.mat_xy is None
    assert Doubt.HIDDEN in green.doubts
    # The game goes on from there: the first shot is the squidge-off winner's.
    played = start.with_wink(start.wink("blue-L1").with_position(-500.0, 200.0))
    played = played.with_wink(played.wink("blue-L1").with_status(WinkStatus.FREE))
    assert camera.see(played)[0].text == "Shot 1: blue played (blue-L1 moved)."


def test_on_the_players_word_a_wink_read_in_another_colours_corner_is_not_seen() -> None:
    """Rule 5.2: each colour's winks start behind its own baseline."""
    camera = _Camera()
    start = _placed_start()
    shadow = start.wink("green-S4").with_status(WinkStatus.FREE).with_position(30.0, 35.0)
    green_x, green_y = DEFAULT_CORNERS_MM[Colour.GREEN]
    astray = start.wink("red-S2").with_position(
        green_x - np.sign(green_x) * 60.0, green_y - np.sign(green_y) * 60.0
    )
    assert _kinds(camera.see(start.with_wink(shadow).with_wink(astray))) == [
        AnnouncementKind.WAITING
    ]
    said = camera.referee.start_as_said(camera.t_s)
    assert "green-S4, red-S2 taken to be there too (not seen)" in said[0].text
    assert camera.referee._board is not None
    assert camera.referee._board.wink("red-S2").mat_xy is None


def test_the_players_word_before_any_view_takes_the_first_view_as_the_start() -> None:
    # As --start-as-seen does: nothing to say yet, and the first view starts the game.
    camera = _Camera()
    assert camera.referee.start_as_said(0.0, label="--start-as-seen") == []
    start = _placed_start()
    played = start.wink("red-S2").with_status(WinkStatus.FREE).with_position(300.0, -100.0)
    said = camera.see(start.with_wink(played))
    assert _kinds(said) == [AnnouncementKind.START]
    assert "red-S2 taken to be there too (not seen)" in said[0].text


def test_the_players_word_after_the_start_changes_nothing() -> None:
    camera = _Camera()
    camera.see(_placed_start())
    board = camera.referee._board
    assert camera.referee.start_as_said(camera.t_s) == []
    assert camera.referee._board is board


def test_a_start_seen_whole_is_announced_as_seen_even_after_the_players_word() -> None:
    camera = _Camera()
    camera.referee.start_as_said(0.0)
    said = camera.see(_placed_start())
    assert said[0].text.startswith("Starting position seen: 24 winks behind their baselines")


def test_a_wink_read_off_for_sure_still_holds_up_the_start() -> None:
    # Off the mat beyond doubt: the game has begun, or a wink was knocked off.
    camera = _Camera()
    start = _placed_start()
    off = start.wink("green-S4").with_status(WinkStatus.OFF).with_position(19.0, 470.0)
    said = camera.see(start.with_wink(off))
    assert _kinds(said) == [AnnouncementKind.WAITING]
    assert "green-S4 not behind the baseline" in said[0].text


@pytest.mark.parametrize(
    ("changed", "kept"),
    [
        # The picture changed at neither: a crowded corner misread (generated game q3614).
        (set(), ()),
        # It changed where the upper wink is: a shot may have put it there.
        ({"green-S1"}, ("green-S3",)),
        # It changed where the lower wink is.
        ({"green-S3"}, ("green-S3",)),
    ],
)
def test_a_squop_between_two_unplayed_winks_that_did_not_move_is_a_misreading(
    changed: set[str], kept: tuple[str, ...]
) -> None:
    last = _placed_start()
    s1, s3 = last.wink("green-S1"), last.wink("green-S3")
    board = last.with_winks(
        [
            *(w for w in last.winks if w.id not in ("green-S1", "green-S3")),
            s1.with_status(WinkStatus.FREE).with_squops(["green-S3"]),
            s3.with_status(WinkStatus.SQUOPPED),
        ]
    )
    out = without_still_unplayed_squops(board, last, lambda wink: wink.id in changed)
    assert out.wink("green-S1").squops == kept
    # With the squop gone, the winks keep their last place and status.
    if not kept:
        still = kept_still(out, last, lambda wink: False)
        assert still.wink("green-S1").status is WinkStatus.UNPLAYED
        assert still.wink("green-S3").status is WinkStatus.UNPLAYED


def test_a_squop_onto_an_unplayed_wink_by_a_played_wink_stands() -> None:
    last = _placed_start()
    board = last.with_winks(
        [
            *(w for w in last.winks if w.id not in ("blue-S1", "green-S3")),
            last.wink("blue-S1").with_status(WinkStatus.FREE).with_squops(["green-S3"]),
            last.wink("green-S3").with_status(WinkStatus.SQUOPPED),
        ]
    )
    # blue-S1 was played before: it is not an unplayed wink that stayed put.
    played = last.with_wink(last.wink("blue-S1").with_status(WinkStatus.FREE))
    out = without_still_unplayed_squops(board, played, lambda wink: False)
    assert out.wink("blue-S1").squops == ("green-S3",)


@pytest.mark.parametrize(
    ("recorded_status", "recorded_xy_mm", "counted"),
    [
        # In play on the mat in the record, behind its baseline now: the game's start again.
        (WinkStatus.FREE, (-300.0, 100.0), True),
        # Potted in the record: a potted wink does not come out (8.1.3).
        (WinkStatus.POTTED, None, True),
        # Played, but already behind a baseline in the record (read a few mm off after
        # a new calibration): not evidence of another game.
        (WinkStatus.FREE, "corner", False),
        # Off the mat in the record: put back where rule 13.1 says.
        (WinkStatus.OFF, (-950.0, 100.0), False),
    ],
)
def test_a_resumed_game_counts_only_winks_in_play_or_potted_read_back_behind_a_baseline(
    recorded_status: WinkStatus, recorded_xy_mm: Any, counted: bool
) -> None:
    from service.watch import _played_back_in_baulk

    start = _placed_start()
    wink = start.wink("blue-S1")
    if recorded_xy_mm == "corner":
        recorded = wink.with_position(wink.x_mm + 5.0, wink.y_mm).with_status(recorded_status)
    elif recorded_xy_mm is None:
        recorded = wink.with_position(None, None).with_status(recorded_status)
    else:
        recorded = wink.with_position(*recorded_xy_mm).with_status(recorded_status)
    back = _played_back_in_baulk(start, start.with_wink(recorded), DEFAULT_CORNERS_MM)
    assert back == (["blue-S1"] if counted else [])


def _assert_green_kept_on_blue(out: Board, read: Board, kept: bool) -> None:
    """The last view's green-S4 on blue-S3 kept (a legal board), or the view left as read."""
    if kept:
        assert out.wink("green-S4").squops == ("blue-S3",)
        assert out.wink("blue-S3").status is WinkStatus.SQUOPPED
        assert not out.problems()
    else:
        assert out == read


def _read_blue_on_green(*, doubted: bool, blue_xy: tuple[float, float]) -> Board:
    """The view after green-S4 was played next to blue-S3: read as blue-S3 on green-S4."""
    board = make_board(free={"blue-S3": blue_xy, "green-S4": (-596.0, 300.0)})
    blue = board.wink("blue-S3").with_squops(["green-S4"])
    green = board.wink("green-S4").with_status(WinkStatus.SQUOPPED)
    if doubted:
        blue = blue.model_copy(update={"doubts": (Doubt.SQUOP,), "uncertain": True})
        green = green.model_copy(update={"doubts": (Doubt.SQUOP,), "uncertain": True})
    return board.with_winks(
        [*(w for w in board.winks if w.id not in ("blue-S3", "green-S4")), blue, green]
    )


@pytest.mark.parametrize(
    ("doubted", "blue_xy", "turned"),
    [
        # blue lay still and the view cannot order them: green, played, is on top
        (True, (-600.0, 300.0), True),
        # the view is sure blue is on top: left as read
        (False, (-600.0, 300.0), False),
        # blue moved too (10 mm): either could have landed on the other
        (True, (-590.0, 300.0), False),
    ],
)
def test_a_new_squop_the_view_cannot_order_has_the_played_wink_on_top(
    doubted: bool, blue_xy: tuple[float, float], turned: bool
) -> None:
    """Rule 8.2 (generated game q3653's video): the wink that lands is the one above."""
    last = make_board(free={"blue-S3": (-600.0, 300.0)})
    out = with_squops_the_shot_explains(_read_blue_on_green(doubted=doubted, blue_xy=blue_xy), last)
    if turned:
        assert out.wink("green-S4").squops == ("blue-S3",)
        assert out.wink("blue-S3").squops == ()
        assert out.wink("blue-S3").status is WinkStatus.SQUOPPED
        assert out.wink("green-S4").status is WinkStatus.FREE
        assert not out.problems()
    else:
        assert out.wink("blue-S3").squops == ("green-S4",)
        assert out.wink("green-S4").status is WinkStatus.SQUOPPED


@pytest.mark.parametrize(
    ("doubted", "green_xy", "kept"),
    [
        # neither moved since the last view: the squop keeps its order
        (True, (-596.0, 300.0), True),
        # however sure the view is of the other order (generated game q3614)
        (False, (-596.0, 300.0), True),
        # green's centre moved 16 mm: the pile was struck, read as seen
        (True, (-580.0, 300.0), False),
    ],
)
def test_a_squop_read_the_other_way_up_keeps_its_order_while_neither_wink_moves(
    doubted: bool, green_xy: tuple[float, float], kept: bool
) -> None:
    """Rule 8.2: a wink comes to lie on another only by moving."""
    read = _read_blue_on_green(doubted=doubted, blue_xy=(-600.0, 300.0))
    last = make_board(free={"blue-S3": (-600.0, 300.0)}, squops={"green-S4": "blue-S3"})
    last = last.with_wink(last.wink("green-S4").with_position(*green_xy))
    out = with_squops_the_shot_explains(read, last)
    _assert_green_kept_on_blue(out, read, kept)


@pytest.mark.parametrize(
    ("unseen", "picture_changed", "kept"),
    [
        # both seen where they lay, the squop not read (generated game q3613)
        ((), False, True),
        # green not seen, and the picture the same where it lay (q3614)
        (("green-S4",), False, True),
        # green not seen, and the picture changed there: it may have been played
        (("green-S4",), True, False),
    ],
)
def test_a_squop_lost_from_view_while_neither_wink_moves_is_kept(
    unseen: tuple[str, ...], picture_changed: bool, kept: bool
) -> None:
    """Rule 8.2: a squop ends only when one of its winks moves."""
    last = make_board(free={"blue-S3": (-600.0, 300.0)}, squops={"green-S4": "blue-S3"})
    read = last.with_winks(
        [last.wink("green-S4").with_squops(()), last.wink("blue-S3").with_status(WinkStatus.FREE)]
    )
    out = with_squops_the_shot_explains(read, last, unseen, lambda wink: picture_changed)
    _assert_green_kept_on_blue(out, read, kept)


@pytest.mark.parametrize(
    ("doubted", "kept"),
    [
        (False, False),  # read surely apart: the nudge ended the squop
        (True, True),  # the view unsure of the pair: the last squop stands
    ],
)
def test_a_nudge_that_parts_a_squop_of_little_overlap_ends_it(doubted: bool, kept: bool) -> None:
    """Rule 8.2: a squop of 2.5 mm overlap ends when its upper wink moves 3 mm off it."""
    last = make_board(free={"blue-S3": (-600.0, 300.0)}, squops={"green-S4": "blue-S3"})
    last = last.with_wink(last.wink("green-S4").with_position(-586.5, 300.0))
    read = make_board(free={"blue-S3": (-600.0, 300.0), "green-S4": (-583.5, 300.0)})
    if doubted:
        for wid in ("blue-S3", "green-S4"):
            read = read.with_wink(
                read.wink(wid).model_copy(update={"uncertain": True, "doubts": (Doubt.SQUOP,)})
            )
    out = with_squops_the_shot_explains(read, last)
    _assert_green_kept_on_blue(out, read, kept)


def test_another_colour_s_unplayed_wink_read_in_play_on_a_shot_is_kept_behind_its_baseline() -> (
    None
):
    """Rule 10.1 (generated game q3631's video): red's shot brings no blue wink into play."""
    last = make_board(free={"red-L1": (200.0, -100.0)})
    # The view: red-L1 played onto a blue wink read out of its corner.
    read = make_board(free={"red-L1": (-300.0, 150.0), "blue-S1": (-296.0, 150.0)})
    read = read.with_winks(
        [
            read.wink("red-L1").with_squops(["blue-S1"]),
            read.wink("blue-S1").with_status(WinkStatus.SQUOPPED),
        ]
    )

    def corner_unchanged(wink: Wink) -> bool:
        return False

    out, kept = with_others_unplayed_kept(read, last, Colour.RED, corner_unchanged)
    assert kept == ["blue-S1"]
    assert out.wink("blue-S1") == last.wink("blue-S1")
    assert out.wink("red-L1").squops == ()
    assert not out.problems()
    # On blue's own shot the same reading stands.
    assert with_others_unplayed_kept(read, last, Colour.BLUE, corner_unchanged) == (read, [])


def test_another_colour_s_unplayed_wink_that_left_its_corner_is_left_to_the_engine() -> None:
    """Rule 10.1: where the picture changed at its corner, the wink really moved."""
    last = make_board(free={"red-L1": (200.0, -100.0)})
    read = make_board(free={"red-L1": (200.0, -100.0), "blue-S1": (-296.0, 150.0)})
    assert with_others_unplayed_kept(read, last, Colour.RED, lambda wink: True) == (read, [])


def test_a_wink_of_the_colour_not_to_play_brought_into_play_is_not_understood() -> None:
    """Rule 10.1: blue to play, and green's wink left its corner (a shot out of turn or missed)."""
    camera = _Camera()
    start = _placed_start()
    camera.see(start)
    # The stand-in's picture changes wherever a wink lay: green-S1's corner too.
    green = start.wink("green-S1").with_status(WinkStatus.FREE).with_position(-500.0, 200.0)
    said = camera.see(start.with_wink(green))
    assert _kinds(said) == [AnnouncementKind.NOT_UNDERSTOOD]
    assert "green-S1" in said[0].text
    assert camera.referee.record.shots == ()


def test_winks_not_seen_at_the_start_and_then_seen_behind_their_baseline_are_not_a_shot() -> None:
    """Rules 5.5, 9.3: squidge-off winks at the pot's foot, put back behind the baselines."""
    camera = _Camera()
    start = _placed_start()
    squidged = start
    for wid, mat_xy in {"blue-S4": (-27.0, 0.0), "green-S4": (27.0, 0.0)}.items():
        squidged = squidged.with_wink(
            squidged.wink(wid).with_status(WinkStatus.FREE).with_position(*mat_xy)
        )
    # Read as the pot's shadow before the start, so taken as not seen.
    assert _kinds(camera.see(squidged)) == [AnnouncementKind.START]
    assert camera.see(start) == []
    assert camera.referee.record.shots == ()
    blue = start.wink("blue-S1").with_status(WinkStatus.FREE).with_position(-500.0, 200.0)
    said = camera.see(start.with_wink(blue))
    assert _kinds(said)[0] is AnnouncementKind.SHOT
    assert "(blue-S1 moved)" in said[0].text


@pytest.mark.parametrize(
    ("picture_changed", "doubts", "status"),
    [
        (False, (Doubt.BASELINE,), WinkStatus.UNPLAYED),  # there all along: found, not played
        (True, (Doubt.BASELINE,), WinkStatus.FREE),  # the picture changed there: maybe played
        (False, (), WinkStatus.FREE),  # read surely in play: the camera's call stands
    ],
)
def test_a_wink_not_seen_at_the_start_and_first_seen_at_its_baseline_stays_unplayed(
    picture_changed: bool, doubts: tuple[Doubt, ...], status: WinkStatus
) -> None:
    """Rules 5.2, 9.3: taken to be behind its baseline unseen, then read just in front of it."""
    start = _placed_start()
    last = start.with_wink(start.wink("blue-S3").with_position(None, None))
    seen = start.wink("blue-S3").with_status(WinkStatus.FREE).with_position(-815.0, 390.0)
    seen = seen.model_copy(update={"doubts": doubts})
    board = kept_unplayed(last.with_wink(seen), last, lambda wink: picture_changed)
    assert board.wink("blue-S3").status is status
    assert _changed_winks(last, board) == ([] if status is WinkStatus.UNPLAYED else ["blue-S3"])


class _StillPixelCamera:
    """Every mat point seen at a pixel where the stand-in's pictures differ only in their name."""

    def mat_to_image(self, mat_xyz_mm: Any) -> np.ndarray:
        return np.full((len(mat_xyz_mm), 2), 30.0)


@pytest.mark.parametrize(
    ("picture_changed", "kinds"),
    [
        (False, []),  # it lay there all along: nothing to announce
        (True, [AnnouncementKind.SHOT]),  # it may have been played: blue's shot
    ],
)
def test_a_wink_not_seen_at_the_start_and_then_seen_at_its_baseline_is_no_shot_unless_it_moved(
    picture_changed: bool, kinds: list[AnnouncementKind]
) -> None:
    """Rules 5.2, 9.3, through the referee: blue-S3 missed at the start, then read just in front.

    In its crowded corner, touching where blue-S4 lies, so that it is not
    taken for a misreading of bare felt (``without_unseen_arrivals``).
    """
    camera = _Camera()
    start = _placed_start()
    missing = start.with_winks(w for w in start.winks if w.id != "blue-S3")
    said = camera.see(missing)
    assert _kinds(said) == [AnnouncementKind.START]
    assert "blue-S3 taken to be there too (not seen)" in said[0].text
    seen = start.wink("blue-S3").with_status(WinkStatus.FREE).with_position(-810.0, 421.0)
    seen = seen.model_copy(update={"doubts": (Doubt.BASELINE,)})
    view = {} if picture_changed else {"camera": _StillPixelCamera()}
    said = camera.see(start.with_wink(seen), **view)
    assert _kinds(said)[: len(kinds)] == kinds
    assert len(camera.referee.record.shots) == len(kinds)
