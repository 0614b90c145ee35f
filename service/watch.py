"""The live referee: a still camera over the mat, watched shot by shot.

Frames come from a camera, a video file or a folder of photos (see
:mod:`service.frames`). A :class:`Settler` tells when the picture over the
mat has been still long enough after a change: a shot has been played and
every wink has come to rest, and no hand is over the mat. The
:class:`Referee` then analyses that frame (through
:class:`vision.pipeline.StillCameraAnalyzer`, which keeps the winks' ids
from frame to frame), gives the board to the rules engine as the shot of
the colour whose turn it is, saves the game record, and says what the
engine announced::

    referee = Referee(analyzer, Game(Colour.BLUE), record_path=Path("game.json"))
    for frame in frames:
        if settler.update(frame.image_bgr, frame.t_s):
            for said in referee.observe(frame, shot_began_s=settler.motion_began_s):
                print(said.text)

The record is rewritten after every shot, so that a game stopped at any
point (a crash, Ctrl-C, the camera unplugged) can be replayed or checked
with ``winkref replay``. What a camera cannot see (a voluntary pass, a foul
and the opponents' choice after it) is not in the record.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from rules.board import (
    POT_BASE_DIAMETER_MM,
    POT_TOP_DIAMETER_MM,
    WINKS_PER_COLOUR,
    Board,
    Colour,
    Doubt,
    Wink,
    WinkStatus,
    starting_board,
)
from rules.engine import Game
from rules.events import Event, EventType
from rules.record import GameRecord, IllegalRecordError, ShotRecord
from service.commands.replay import event_line, next_turn_line
from service.outputs import write_image_atomic, write_text_atomic
from vision.pipeline import (
    HIDDEN_SCALE,
    FrameAnalysis,
    StillCameraAnalyzer,
    analyze_frame,
    watched_small,
)
from vision.status import behind_baselines

#: A picture still for this long after a change is a finished shot, s.
#: Winks come to rest well within half a second of a squidge; a player
#: lifting a hand away from the mat takes longer.
SETTLE_S = 1.0
#: At 1/8 scale, a pixel whose colour moved by more than this (8-bit
#: levels) has changed. Sensor noise averages out over the 64 pixels each
#: shrunk pixel holds (about 0.2 levels); a hand or a moving wink shifts
#: tens of levels.
MOTION_LEVELS = 12
#: More changed shrunk pixels over the mat than this is motion.
MOTION_PIXELS = 3
#: A wink whose centre moved this far between two settled views was moved
#: by the shot (the same wink's fitted centre wanders by well under 1 mm
#: between frames of a still camera: docs/benchmarks.md, "Still camera"), mm.
MOVED_MM = 4.0
#: A wink's disc whose pixels changed on average by more than this (8-bit
#: levels, the largest channel's), and by more than ``LEFT_NOISE_TIMES``
#: the picture's median change, has changed between two views. Unchanged
#: discs of generated games change by 2-5 levels (noise and JPEG); a green
#: wink leaving green felt by about 20.
LEFT_LEVELS = 8.0
LEFT_NOISE_TIMES = 3.0
#: A wink lost from view is under another when their discs overlap by more
#: than this in plan, mm: less is a wink that came to rest beside it.
COVER_MARGIN_MM = 1.0
#: After this many still views in a row with part of the mat hidden, the
#: referee says what else than a hand it may be (a moved camera, a wrong fit).
HIDDEN_VIEWS_TO_WARN = 3
#: The starting position is taken as seen when at least this many of each
#: colour's six winks are seen behind its baseline, and none in play.
SEEN_AT_START = 4


class AnnouncementKind(enum.StrEnum):
    """What an announcement is about."""

    WAITING = "waiting"
    """The starting position is not yet in view (rule 5.2)."""
    START = "start"
    """The starting position was seen; the game can begin."""
    RESUMED = "resumed"
    """A game saved in its record is watched again from where it stopped."""
    SHOT = "shot"
    """A shot was seen and given to the rules engine."""
    RULES = "rules"
    """An announcement of the rules engine (potted, squopped, forfeit...)."""
    NEXT = "next"
    """Whose turn it is now."""
    HIDDEN = "hidden"
    """Part of the mat is hidden (a hand, a mug): nothing is decided."""
    NOT_UNDERSTOOD = "not_understood"
    """The new position cannot follow the last one: the shot is not counted."""
    REPLACED = "replaced"
    """An off wink was put back on the mat (rule 13.1): not a shot."""
    REVIEW = "review"
    """A call an umpire should check close up."""
    END = "end"
    """The game is over, with the score."""


@dataclass(frozen=True)
class Frame:
    """One picture from the camera.

    Parameters
    ----------
    image_bgr : (h, w, 3) uint8 ndarray
    t_s : float
        When it was taken, seconds from the start of watching.
    label : str
        Which picture it is, for messages: a file name or ``frame 123``.
    """

    image_bgr: npt.NDArray[np.uint8]
    t_s: float
    label: str


@dataclass(frozen=True)
class Announcement:
    """One thing the referee says.

    Parameters
    ----------
    kind : AnnouncementKind
    text : str
        The sentence, as printed.
    t_s : float or None
        Game time (seconds since the first shot), when the game has begun.
    frame : str
        The frame it was decided on.
    event : Event or None
        The rules engine's event, for ``RULES`` and ``END``.
    """

    kind: AnnouncementKind
    text: str
    t_s: float | None
    frame: str
    event: Event | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """One line of ``winkref watch --json``."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "text": self.text,
            "t": None if self.t_s is None else round(self.t_s, 3),
            "frame": self.frame,
        }
        if self.event is not None:
            out["event"] = self.event.to_json_dict()
        return out


class Settler:
    """Tells when the picture over the mat has come to rest after a change.

    Parameters
    ----------
    watched : (h, w) bool ndarray
        Where, in the frame shrunk by ``HIDDEN_SCALE``, motion matters (the
        mat and the table round it): people moving beyond it do not keep a
        shot from settling.
    settle_s : float
        How long the picture must stay still; 0 takes every frame as
        settled (a folder of photos, one after each shot).

    Unlike the value types this is a session object: ``update`` changes it.
    """

    def __init__(self, watched: npt.NDArray[np.bool_], *, settle_s: float = SETTLE_S) -> None:
        self.watched = watched
        self.settle_s = settle_s
        self._last_small: npt.NDArray[np.int16] | None = None
        self._still_since_s = 0.0
        self._reported = False
        #: When the change that last settled began, s (its first moving frame).
        self.motion_began_s: float | None = None
        self._moving_since_s: float | None = None

    @property
    def still_since_s(self) -> float:
        """Since when the picture has looked as it does now, s (the last change)."""
        return self._still_since_s

    def start_settled(self, image_bgr: npt.NDArray[np.uint8], t_s: float) -> None:
        """Take this picture as one already at rest (it was looked at still)."""
        self._last_small = None
        self.update(image_bgr, t_s)
        self._reported = True
        self.motion_began_s = t_s

    def update(self, image_bgr: npt.NDArray[np.uint8], t_s: float) -> bool:
        """Whether this frame is the first of a still spell long enough to analyse."""
        sh, sw = self.watched.shape
        small = cv2.resize(image_bgr, (sw, sh), interpolation=cv2.INTER_AREA).astype(np.int16)
        last, self._last_small = self._last_small, small
        if self.settle_s <= 0:
            # Photos: each one is a view at rest, compared with the last by the analysis.
            self.motion_began_s = t_s
            return True
        if last is None:
            self._still_since_s, self._moving_since_s = t_s, t_s
        else:
            change = np.abs(small - last).max(axis=2)[self.watched]
            if int(np.count_nonzero(change > MOTION_LEVELS)) > MOTION_PIXELS:
                if self._reported or self._moving_since_s is None:
                    self._moving_since_s = t_s
                # The picture has looked as it does now since this frame.
                self._still_since_s, self._reported = t_s, False
                return False
        if self._reported or t_s - self._still_since_s < self.settle_s:
            return False
        self._reported = True
        self.motion_began_s = self._moving_since_s
        return True


def _apart_mm(a: Wink, b: Wink) -> float:
    """Distance between two winks' centres on the mat, mm (both placed)."""
    return float(np.hypot(*np.subtract(a.mat_xy, b.mat_xy)))


def last_recorded_board(record: GameRecord) -> Board | None:
    """The board after the record's last shot that has one (passes have none)."""
    boards = [shot.board for shot in record.shots if shot.board is not None]
    return boards[-1] if boards else None


def _changed_winks(before: Board, after: Board) -> list[str]:
    """Ids of the winks a shot moved: a new status, squops or place (by ``MOVED_MM``)."""
    out = []
    old = before.by_id
    for wink in after.winks:
        was = old.get(wink.id)
        if was is None or was.status is not wink.status or set(was.squops) != set(wink.squops):
            out.append(wink.id)
        elif (was.mat_xy is None) != (wink.mat_xy is None):
            # A wink taken to be behind its baseline at the start without
            # being seen, and now seen there, was found, not played (rule
            # 9.3 needs a wink to cross its baseline to make a shot).
            if not (was.mat_xy is None and wink.status is WinkStatus.UNPLAYED):
                out.append(wink.id)
        elif was.mat_xy is not None and wink.mat_xy is not None:
            if _apart_mm(was, wink) > MOVED_MM:
                out.append(wink.id)
    gone = set(old) - set(after.by_id)
    return out + sorted(gone)


def _replaced_off_winks(last: Board, moved: Sequence[str]) -> list[str]:
    """``moved`` when every one of them was off the mat in ``last`` (rule 13.1), else [].

    An off wink is put back on the mat by the players before the next shot;
    that is not a shot.
    """
    before = last.by_id
    if all(wid in before and before[wid].status is WinkStatus.OFF for wid in moved):
        return list(moved)
    return []


def without_still_unplayed_squops(
    board: Board, last: Board, changed_at: Callable[[Wink], bool]
) -> Board:
    """Rules 5.2, 8.2: no squop between two unplayed winks where the picture did not change.

    A squop is made by a shot, and a shot moves the wink that lands on
    another; two winks both unplayed in ``last`` whose places the picture
    shows unchanged (where they lay and where they are read) did not move,
    so a squop read between them is a misreading of a crowded corner
    (generated game q3614: two small winks 3 mm apart behind the baseline,
    read as one on the other, which made the next shot three winks "brought
    into play" and no shot after it understood). It is dropped; the winks
    then keep their last place and status (:func:`kept_still`).
    """
    before = last.by_id
    now = board.by_id

    def stayed(wid: str) -> bool:
        was, wink = before.get(wid), now.get(wid)
        return (
            was is not None
            and wink is not None
            and was.status is WinkStatus.UNPLAYED
            and not changed_at(was)
            and not changed_at(wink)
        )

    winks = []
    for wink in board.winks:
        if wink.squops and stayed(wink.id):
            kept = tuple(low for low in wink.squops if not stayed(low))
            if kept != wink.squops:
                wink = wink.with_squops(kept)
        winks.append(wink)
    if winks == list(board.winks):
        return board
    return board.with_winks(winks).with_tiddlies(None)


def kept_still(board: Board, last: Board, changed_at: Callable[[Wink], bool]) -> Board:
    """A wink read as moved where the picture changed at neither place did not move.

    A wink moves only where the picture changes: at the place it left and
    at the one it reached. When the camera puts a wink somewhere else (or
    gives it another status) but the picture is the same at both places, it
    is the reading that changed (a wink missed and something else taken for
    it, found in a generated game), so the wink keeps its last place and
    status. Winks in squops, before or now, are left as read: a squop can
    change where little of the picture does.

    Parameters
    ----------
    board, last : Board
        This view's board and the last one.
    changed_at : callable of Wink to bool
        Whether the picture changed, since the last view, where a wink lies.
    """
    before = last.by_id
    in_squops = {low for b in (board, last) for w in b.winks for low in w.squops} | {
        w.id for b in (board, last) for w in b.winks if w.squops
    }
    winks = []
    for wink in board.winks:
        was = before.get(wink.id)
        if (
            was is not None
            and wink.id not in in_squops
            and wink.mat_xy is not None
            and was.mat_xy is not None
            and (wink.status is not was.status or _apart_mm(wink, was) > MOVED_MM)
            and not changed_at(was)
            and not changed_at(wink)
        ):
            wink = was
        winks.append(wink)
    return board.with_winks(winks).with_tiddlies(None) if winks != list(board.winks) else board


def with_squops_the_shot_explains(
    board: Board,
    last: Board,
    unseen: Collection[str] = (),
    changed_at: Callable[[Wink], bool] = lambda wink: True,
) -> Board:
    """Rule 8.2: squops only as the winks' moves can have made or ended them.

    A squop is made by a shot, the wink that moved landing on one that lay
    still, and ends only when one of its winks moves. A wink "stayed" when
    it lies within :data:`MOVED_MM` of where it lay in ``last``; one this
    view did not see, when the picture did not change where it lay.

    * A new squop the view itself leaves in doubt (``Doubt.SQUOP`` on both
      winks), with a wink that stayed read on top of one that moved, is
      turned: the mover is on top. In generated game q3653's video a green
      wink landing on a blue one on green felt was read under it. A new
      squop the view is sure of is left as read: a wink can slide under the
      raised edge of one lying on a third.
    * A squop of ``last`` between two winks that both stayed is kept, the
      same way up, however sure the view is of another reading, unless the
      view sees the two surely apart in plan: neither moved more than a
      nudge, so the one is still over the other. In q3614, after a shot
      that potted a wink far away, the green wink on top of a blue one on
      green felt was not seen, and was taken to be under the blue one
      (:func:`with_unseen_winks`); in q3613 a squop was not read at all.
      Each time the referee announced a freeing.

    Parameters
    ----------
    board, last : Board
        This view's board and the last one.
    unseen : collection of str
        Winks this view did not see (:func:`with_unseen_winks`), kept where
        they lay.
    changed_at : callable of Wink to bool
        Whether the picture changed, since the last view, where a wink lies.
        By default it did (so no unseen wink stayed).

    Returns
    -------
    Board
        ``board`` with those squops, and the statuses that follow from them
        (its tiddlies left for the engine to count); ``board`` itself when
        nothing changed.
    """
    before = last.by_id
    now = board.by_id
    last_pairs = {(w.id, low) for w in last.winks for low in w.squops}

    def stayed(wid: str) -> bool:
        was, wink = before.get(wid), now.get(wid)
        if wid in unseen:
            return was is not None and was.mat_xy is not None and not changed_at(was)
        return (
            was is not None
            and wink is not None
            and was.mat_xy is not None
            and wink.mat_xy is not None
            and was.status not in (WinkStatus.POTTED, WinkStatus.OFF)
            and wink.status not in (WinkStatus.POTTED, WinkStatus.OFF)
            and _apart_mm(was, wink) <= MOVED_MM
        )

    def doubted(upper: str, lower: str) -> bool:
        return Doubt.SQUOP in now[upper].doubts and Doubt.SQUOP in now[lower].doubts

    def still_over(upper: str, lower: str) -> bool:
        # Two winks that stayed, still over each other unless this view
        # sees them surely apart: a nudge of under MOVED_MM can end a squop
        # of little overlap. Leans to keeping it: any squop doubt on either
        # wink (even with a third) counts, and the plain centre distance is
        # used, not vision's parallax-corrected separation.
        if not (stayed(upper) and stayed(lower)):
            return False
        if upper in unseen or lower in unseen:
            return True
        top, bottom = now[upper], now[lower]
        return (
            Doubt.SQUOP in top.doubts
            or Doubt.SQUOP in bottom.doubts
            or _apart_mm(top, bottom) < top.radius_mm + bottom.radius_mm
        )

    pairs = {(w.id, low) for w in board.winks for low in w.squops}
    wanted = set()
    for upper, lower in pairs:
        if (lower, upper) in last_pairs and still_over(lower, upper):
            continue  # the last view's order is kept, below
        if (
            (upper, lower) not in last_pairs
            and (lower, upper) not in last_pairs
            and doubted(upper, lower)
            and stayed(upper)
            and not stayed(lower)
        ):
            wanted.add((lower, upper))  # the mover on top
            continue
        wanted.add((upper, lower))
    wanted |= {(upper, lower) for upper, lower in last_pairs if still_over(upper, lower)}
    if wanted == pairs:
        return board
    squops: dict[str, list[str]] = {w.id: [] for w in board.winks}
    for upper, lower in sorted(wanted):
        squops[upper].append(lower)
    covered = {lower for _, lower in wanted}
    touched = {wid for pair in wanted ^ pairs for wid in pair}
    winks = []
    for wink in board.winks:
        if wink.id in touched:
            if wink.id in covered:
                status = WinkStatus.SQUOPPED
            elif wink.status is WinkStatus.SQUOPPED:
                status = WinkStatus.FREE
            else:
                status = wink.status
            wink = wink.with_squops(squops[wink.id]).with_status(status)
        winks.append(wink)
    return board.with_winks(winks).with_tiddlies(None)


def with_others_unplayed_kept(
    board: Board,
    last: Board,
    colour: Colour,
    changed_at: Callable[[Wink], bool] = lambda wink: True,
) -> tuple[Board, list[str]]:
    """Another colour's unplayed wink read in play where its corner did not change stays unplayed.

    A shot plays a wink of the colour whose turn it is (rule 10.1), and the
    rules engine refuses a view in which another colour's unplayed wink came
    into play; the referee then understood neither that view nor, often,
    the next. When the picture did not change where that wink lay, the
    reading is the camera's, not the game's: a corner wink taken for
    another colour's, or another colour's wink given its id (generated game
    q3631's video: a blue corner wink read as green on red's shot). Such a
    wink keeps its place and status of ``last``, out of any squop. Where the
    picture did change (a shot out of turn, or one the referee missed), the
    reading stands and the engine says what is wrong.

    Parameters
    ----------
    board : Board
        As the camera read this view.
    last : Board
        The board before this view.
    colour : Colour
        The colour whose shot this view follows.
    changed_at : callable
        Whether the picture changed where a wink of ``last`` lay (False for
        a wink never seen, whose place is not known). By default it did, so
        no wink is kept back.

    Returns
    -------
    board : Board
    kept : list of str
        The ids of the winks kept behind their baseline, for the umpire.
    """
    before = last.by_id
    kept = [
        w.id
        for w in board.winks
        if w.colour is not colour
        and w.id in before
        and before[w.id].status is WinkStatus.UNPLAYED
        and w.status is not WinkStatus.UNPLAYED
        and not changed_at(before[w.id])
    ]
    if not kept:
        return board, []
    gone = set(kept)
    winks = [
        before[w.id]
        if w.id in gone
        else w.with_squops([low for low in w.squops if low not in gone])
        for w in board.winks
    ]
    covered = {low for w in winks for low in w.squops}
    winks = [
        w.with_status(WinkStatus.FREE)
        if w.status is WinkStatus.SQUOPPED and w.id not in covered
        else w
        for w in winks
    ]
    return board.with_winks(winks).with_tiddlies(None), kept


def _where_a_wink_lay(mat_xy_mm: Sequence[float], radius_mm: float, placed: Sequence[Wink]) -> bool:
    """Whether a disc at ``mat_xy_mm`` overlaps any of the ``placed`` winks (mat mm)."""
    return any(
        float(np.hypot(*np.subtract(mat_xy_mm, w.mat_xy))) < radius_mm + w.radius_mm for w in placed
    )


def without_unseen_arrivals(board: Board, last: Board, changed_at: Callable[[Wink], bool]) -> Board:
    """A wink read where none lay and the picture did not change is not there.

    A wink reaches a place only by changing the picture there. One read on
    a spot of the mat that no wink of ``last`` covered, where the picture is
    the same as before, is the camera misreading what was always there (bare
    felt between another colour's winks taken for a green wink on green
    felt, in a generated game; its id had been the played wink's). It is
    left out, so that :func:`with_unseen_winks` keeps the wink of that id
    where it was, flagged for the umpire. Winks in squops are left as read,
    as by :func:`kept_still`.

    Parameters
    ----------
    board, last : Board
        This view's board and the last one.
    changed_at : callable of Wink to bool
        Whether the picture changed, since the last view, where a wink lies.
    """
    placed = [w for w in last.winks if w.mat_xy is not None]
    in_squops = {low for w in board.winks for low in w.squops} | {
        w.id for w in board.winks if w.squops
    }

    def arrived_unseen(wink: Wink) -> bool:
        return (
            wink.mat_xy is not None
            and wink.id not in in_squops
            and not _where_a_wink_lay(wink.mat_xy, wink.radius_mm, placed)
            and not changed_at(wink)
        )

    kept = [w for w in board.winks if not arrived_unseen(w)]
    if len(kept) == len(board.winks):
        return board
    return board.with_winks(kept).with_tiddlies(None)


def extra_unseen_detections(
    board_xy_mm: npt.ArrayLike,
    radius_mm: npt.ArrayLike,
    colours: Sequence[Colour],
    confidence: npt.ArrayLike,
    last: Board,
    left_at: Callable[[Sequence[float], float], bool],
) -> npt.NDArray[np.bool_]:
    """Detections of a colour seen more than six times that arrived unseen (rule 2.1.1).

    A detection arrived unseen when no wink of ``last`` lay under it and
    the picture did not change there (as :func:`without_unseen_arrivals`
    judges winks). Of a colour detected more than six times, as many such
    detections as it has too many are chosen, least confident first.
    Nowhere else: a colour with six or fewer keeps vision's reading. Not at
    the pot either, where a wink in it has no place on ``last`` to be near
    and is seen unchanged shot after shot.

    Parameters
    ----------
    board_xy_mm : (n, 2) array_like
        The detections' centres in the board's frame, mm.
    radius_mm, confidence : (n,) array_like
    colours : sequence of Colour
    last : Board
    left_at : callable of ((2,) mat xy mm, radius mm) to bool
        Whether the picture changed, since ``last``'s, there.

    Returns
    -------
    (n,) ndarray of bool
    """
    xy = np.asarray(board_xy_mm, dtype=float).reshape(-1, 2)
    radius = np.asarray(radius_mm, dtype=float)
    conf = np.asarray(confidence, dtype=float)
    placed = [w for w in last.winks if w.mat_xy is not None]
    unseen = np.zeros(len(xy), dtype=bool)
    for i, (centre, r_mm) in enumerate(zip(xy, radius, strict=True)):
        if float(np.hypot(*centre)) < POT_TOP_DIAMETER_MM / 2 + r_mm:
            continue
        unseen[i] = not _where_a_wink_lay(centre, float(r_mm), placed) and not left_at(
            centre, float(r_mm)
        )
    drop = np.zeros(len(xy), dtype=bool)
    colour_of = np.array([c.value for c in colours], dtype=object)
    for colour in Colour:
        mine = np.flatnonzero(colour_of == colour.value)
        extra = len(mine) - WINKS_PER_COLOUR
        candidates = mine[unseen[mine]]
        if extra > 0 and len(candidates):
            drop[candidates[np.argsort(conf[candidates], kind="stable")][:extra]] = True
    return drop


class ResumeMismatchError(ValueError):
    """The first picture of a resumed game cannot show the game as recorded."""


#: A resumed game's first picture that shows this many winks, in play in the
#: record, moved back behind their baselines is not that game's position.
RESUME_BACK_IN_BAULK = 2


def _played_back_in_baulk(
    board: Board, recorded: Board, corners_mm: Mapping[Colour, Sequence[float]]
) -> list[str]:
    """Ids of winks in play on the mat, or potted, in ``recorded`` and read behind a baseline now.

    Once played a wink stays in play (rule 3); one shot may put a wink back
    behind a baseline, but two at once, in the picture a resumed game starts
    from, is the game's video or photos watched again from its start (which
    made up shots after the recorded ones). A wink the record already has
    behind a baseline (read a few mm elsewhere after a new calibration), or
    off the mat (put back where rule 13.1 says), does not count.
    """
    before = recorded.by_id
    back = []
    for wink in board.winks:
        was = before.get(wink.id)
        if (
            was is not None
            and wink.status is WinkStatus.UNPLAYED
            and (
                was.status is WinkStatus.POTTED
                or (
                    was.status in (WinkStatus.FREE, WinkStatus.SQUOPPED)
                    and not _behind_a_baseline(was, corners_mm)
                )
            )
        ):
            back.append(wink.id)
    return back


def kept_unplayed(
    board: Board, last: Board, changed_at: Callable[[Wink], bool] | None = None
) -> Board:
    """Rule 5.2, 10: a wink unplayed in ``last`` that has not moved is still unplayed.

    And the other way (rule 3): a wink played before is not unplayed now,
    wherever it lies.

    An unplayed wink becomes played only by being played, so it moves; the
    camera's status for one that stayed put (a wink in a crowded corner
    read as in play, or a phantom between winks there) is not a shot. A
    wink that another wink now squops keeps the camera's status.

    One taken to be behind its baseline without being seen (at the start,
    rule 5.2) and now seen for the first time, read in play but in doubt
    (``Doubt.BASELINE``: too near its baseline to be sure, or the corners'
    colours unknown), is kept unplayed too where the picture did not change
    since ``last`` (``changed_at``): it lay there all along. The picture is
    the only evidence: a move of a few mm by a wink of nearly the felt's
    colour can leave it unchanged.
    """
    before = last.by_id
    squopped = {low for w in board.winks for low in w.squops}

    def not_moved(was: Wink, wink: Wink) -> bool:
        """``wink``, unplayed as ``was``, read in play out of any squop, did not move."""
        if wink.status is WinkStatus.UNPLAYED or wink.id in squopped or wink.squops:
            return False
        if was.mat_xy is not None:
            return wink.mat_xy is not None and _apart_mm(wink, was) <= MOVED_MM
        # Never seen: found where the picture did not change, in doubt.
        return (
            wink.status is WinkStatus.FREE
            and Doubt.BASELINE in wink.doubts
            and changed_at is not None
            and not changed_at(wink)
        )

    winks = []
    for wink in board.winks:
        was = before.get(wink.id)
        if was is not None and was.status is WinkStatus.UNPLAYED and not_moved(was, wink):
            wink = wink.with_status(WinkStatus.UNPLAYED)
        elif (
            was is not None
            and was.status is not WinkStatus.UNPLAYED
            and wink.status is WinkStatus.UNPLAYED
        ):
            # Rule 3: once played, a wink is never unplayed again, even back
            # behind its own baseline (the camera cannot know it was played).
            wink = wink.with_status(WinkStatus.FREE)
        winks.append(wink)
    return board.with_winks(winks).with_tiddlies(None) if winks != list(board.winks) else board


def as_starting_position(board: Board) -> Board:
    """Every wink unplayed and squopping nothing, where the camera saw it (rule 5.2).

    One counted potted without being seen is left out: it was not seen.
    """
    winks = [
        w.with_squops(()).with_status(WinkStatus.UNPLAYED)
        for w in board.winks
        if not (w.status is WinkStatus.POTTED and Doubt.INFERRED in w.doubts)
    ]
    return board.with_winks(winks).with_tiddlies(None)


def _behind_a_baseline(wink: Wink, corners_mm: Mapping[Colour, Sequence[float]]) -> bool:
    """Whether the wink's centre lies behind any colour's baseline (rule 3)."""
    if wink.mat_xy is None:
        return False
    return any(bool(behind[0]) for behind in behind_baselines([wink.mat_xy], corners_mm).values())


def _behind_own_baseline(wink: Wink, corners_mm: Mapping[Colour, Sequence[float]]) -> bool:
    """Whether the wink's centre lies behind its own colour's baseline (rule 5.2)."""
    if wink.mat_xy is None:
        return False
    return bool(behind_baselines([wink.mat_xy], corners_mm)[wink.colour][0])


def _restored(moved: Sequence[str], board: Board, rules_board: Board) -> list[str]:
    """``moved`` when each of them now stands as the rules engine has it, else [].

    A wink knocked out of the pot goes back in (8.1.3) and an off wink goes
    back on the mat (13.1): the players putting it there is not a shot.
    """
    engine = rules_board.by_id
    now = board.by_id
    if (
        moved
        and all(
            wid in engine
            and wid in now
            and now[wid].status is engine[wid].status
            and engine[wid].status in (WinkStatus.POTTED, WinkStatus.FREE)
            for wid in moved
        )
        and any(engine[wid].status is WinkStatus.POTTED for wid in moved)
    ):
        return list(moved)
    return []


def _steady(board: Board, last: Board, moved: Sequence[str]) -> Board:
    """The board with every wink that did not move at exactly its last place.

    The same wink is fitted a little differently in each view; the rules
    engine compares places exactly (an off wink still off is not sent off
    again only if it has not moved, rule 13).
    """
    before = last.by_id
    winks = [
        w.with_position(*before[w.id].mat_xy)
        if w.id not in moved
        and w.id in before
        and before[w.id].mat_xy is not None
        and w.mat_xy is not None
        and before[w.id].status is w.status
        else w
        for w in board.winks
    ]
    return board.with_winks(winks)


#: Before the start, a wink read with its outline this near the pot's foot
#: (or over it) is the pot's shadow or wall, not a wink, mm.
POT_FOOT_MARGIN_MM = 2.0


def _misread_before_the_start(
    wink: Wink,
    corners_mm: Mapping[Colour, Sequence[float]],
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> bool:
    """Whether a wink read before the start is the mat's edge or the pot, not a wink.

    Rule 5.2 puts every wink behind a baseline at the start, so one read
    behind no baseline where phantoms come from is taken as not seen:

    * with its outline at the mat's edge (``Doubt.EDGE``: just off it, or
      just on it within the calibration's uncertainty), the felt blurred
      into the table along the edge. Generated game q3613 showed a "green
      wink" across the long edge of green felt in a video's view; q3653 one
      5 mm inside that edge, under a calibration 2.1 mm uncertain;
    * with its outline at the pot's foot (:data:`POT_FOOT_MARGIN_MM`), the
      pot's shadow or wall: in game o3664's video the shadow of a
      translucent blue pot on green felt was read as a green wink.
    """
    if wink.status not in (WinkStatus.OFF, WinkStatus.FREE) or _behind_a_baseline(wink, corners_mm):
        return False
    if Doubt.EDGE in wink.doubts:
        return True
    if wink.mat_xy is None:
        return False
    from_axis_mm = float(np.hypot(*np.subtract(wink.mat_xy, pot_centre_mm)))
    return from_axis_mm < POT_BASE_DIAMETER_MM / 2 + wink.radius_mm + POT_FOOT_MARGIN_MM


def _without_misreadings_before_the_start(
    board: Board,
    corners_mm: Mapping[Colour, Sequence[float]],
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> Board:
    """The board before the start without the winks :func:`_misread_before_the_start` finds."""
    return board.with_winks(
        [w for w in board.winks if not _misread_before_the_start(w, corners_mm, pot_centre_mm)]
    )


def _not_at_start(
    board: Board,
    corners_mm: Mapping[Colour, Sequence[float]],
    pot_centre_mm: Sequence[float] = (0.0, 0.0),
) -> list[str]:
    """What keeps the board from being the starting position (rule 5.2), in words.

    A wink seen in play keeps it from being the start, unless it lies
    behind a baseline (a crowded corner misread). A wink not seen at all
    does not, when at least :data:`SEEN_AT_START` of its colour are
    seen behind the baseline: the detector misses the odd wink in a crowded
    corner, and one that is there is found when it is played. Nor does one
    read at the mat's edge or the pot's foot (:func:`_misread_before_the_start`):
    it counts as not seen.
    """
    said = []
    for colour in Colour:
        winks = board.of_colour(colour)
        # Counted potted only because it was not seen (none is potted yet).
        unseen = [w for w in winks if w.status is WinkStatus.POTTED and Doubt.INFERRED in w.doubts]
        unseen += [w for w in winks if _misread_before_the_start(w, corners_mm, pot_centre_mm)]
        away = [
            w.id
            for w in winks
            if w.status is not WinkStatus.UNPLAYED
            and w not in unseen
            and not _behind_a_baseline(w, corners_mm)
        ]
        behind = len(winks) - len(away) - len(unseen)
        if away:
            said.append(f"{colour.value}: {', '.join(away)} not behind the baseline")
        elif behind < SEEN_AT_START:
            said.append(f"{colour.value}: {behind} winks behind the baseline, not 6")
    return said


def _covering(wink: Wink, board: Board) -> str | None:
    """The id of a wink of ``board`` that lies over where ``wink`` was, if one does."""
    if wink.mat_xy is None:
        return None
    for other in board.winks:
        if (
            other.id != wink.id
            and other.mat_xy is not None
            and other.status in (WinkStatus.FREE, WinkStatus.SQUOPPED)
            and _apart_mm(other, wink) < other.radius_mm + wink.radius_mm - COVER_MARGIN_MM
        ):
            return other.id
    return None


def with_unseen_winks(
    board: Board, last: Board | None, left: Callable[[Wink], bool] = lambda wink: False
) -> tuple[Board, tuple[str, ...]]:
    """The board with every wink of rule 2.1.1, and the ids the camera did not see.

    A wink missing from ``board`` is kept as it was in ``last`` (before the
    first shot: behind its baseline), flagged uncertain: the camera may have
    lost it under another wink or in a crowded corner, and the rules engine
    needs every wink to follow the game. It keeps its place but not its
    squops, which the camera can no longer check. A wink counted potted
    without being seen, that was not potted before, is taken as not seen.

    Parameters
    ----------
    board : Board
        As the camera saw it.
    last : Board or None
        The board before this view (None: the starting position).
    """
    before = (last if last is not None else starting_board()).by_id
    # A wink the camera counted potted only because it saw too few of its
    # colour elsewhere, and that was not potted before, is one it lost:
    # between two views a wink reaches the pot only by being seen there.
    seen = [
        w
        for w in board.winks
        if not (
            w.status is WinkStatus.POTTED
            and Doubt.INFERRED in w.doubts
            and w.id in before
            and before[w.id].status is not WinkStatus.POTTED
            and (not left(before[w.id]) or _covering(before[w.id], board) is not None)
        )
    ]
    present = {w.id for w in seen}
    squopped_now = {low for w in seen for low in w.squops}
    kept = []
    covered_by: dict[str, list[str]] = {}
    for wink in before.values():
        if wink.id in present:
            continue
        status = wink.status
        cover = _covering(wink, board) if status is not WinkStatus.UNPLAYED else None
        if cover is not None:
            # Rule 8.2: lost where a wink now lies, it is under that wink.
            status = WinkStatus.SQUOPPED
            covered_by.setdefault(cover, []).append(wink.id)
        elif status is WinkStatus.SQUOPPED and wink.id not in squopped_now:
            status = WinkStatus.FREE
        doubts = tuple(dict.fromkeys((*wink.doubts, Doubt.HIDDEN)))
        kept.append(
            wink.with_squops(())
            .with_status(status)
            .model_copy(update={"uncertain": True, "doubts": doubts})
        )
    if not kept:
        return board, ()
    seen = [
        w.with_squops((*w.squops, *covered_by[w.id])) if w.id in covered_by else w for w in seen
    ]
    # The tiddlies the camera counted leave the kept winks out; the engine counts its own.
    filled = board.with_winks((*seen, *kept)).with_tiddlies(None)
    return filled, tuple(w.id for w in kept)


@dataclass
class _Tally:
    """What the referee has said so far, to say each thing once."""

    events: int = 0
    hidden_views: int = 0
    """Still views in a row with part of the mat hidden."""
    waiting_said: tuple[str, ...] = ()
    reviews_said: set[str] = field(default_factory=set)
    unseen: set[str] = field(default_factory=set)


class Referee:
    """The game as the camera sees it, one settled view at a time.

    Parameters
    ----------
    analyzer : StillCameraAnalyzer
        For this camera; it keeps the winks' ids from view to view.
    game : Game
        The rules engine, before the first shot.
    record : GameRecord
        The record's settings (ruleset, format, squidge-off, period); the
        shots are added as they are played.
    record_path : Path or None
        Rewritten after every shot; None keeps the record in memory only.
    frames_dir : Path or None
        Where each analysed view is saved, as ``<record>_shot_NNN.jpg`` (a
        shot given to the engine) or ``<record>_not_understood_after_shot_NNN.jpg``
        (never over an existing file): the evidence an umpire can review later.

    Unlike the value types this is a session object: ``observe`` changes it.
    """

    def __init__(
        self,
        analyzer: StillCameraAnalyzer,
        game: Game,
        record: GameRecord,
        *,
        record_path: Path | None = None,
        frames_dir: Path | None = None,
    ) -> None:
        self.analyzer = analyzer
        self.game = game
        self.record = record
        self.record_path = record_path
        self.frames_dir = frames_dir
        # A record with shots already in it is a game resumed: its last board
        # is what the camera is compared with, and its clock runs on.
        self._board: Board | None = last_recorded_board(record)
        self._resume_t: float | None = record.shots[-1].t if record.shots else None
        # The picture the last board was read from, to tell where a view changed.
        self._image: npt.NDArray[np.uint8] | None = None
        self._first_shot_s: float | None = None
        self._said = _Tally(events=len(game.events))
        # The last view read before the start, and whether the players have
        # said it is the start (see :meth:`start_as_said`).
        self._waiting: tuple[Board, npt.NDArray[np.uint8]] | None = None
        self._start_as_said = False

    @property
    def shots(self) -> tuple[ShotRecord, ...]:
        """The shots given to the engine so far."""
        return self.record.shots

    @property
    def started(self) -> bool:
        """Whether the starting position has been seen."""
        return self._board is not None

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.game.result is not None

    def save_record(self) -> None:
        """Write the record as it stands (atomically: a failed write keeps the old file)."""
        if self.record_path is None:
            return
        text = json.dumps(self.record.model_dump(mode="json", by_alias=True), indent=2)
        write_text_atomic(self.record_path, text + "\n", option="--record")

    def game_time_s(self, t_s: float) -> float | None:
        """Seconds since the first shot began, or None before it."""
        return None if self._first_shot_s is None else max(0.0, t_s - self._first_shot_s)

    def observe(self, frame: Frame, *, shot_began_s: float | None = None) -> list[Announcement]:
        """Analyse a settled view and say what changed.

        Parameters
        ----------
        frame : Frame
        shot_began_s : float or None
            When the motion that ended in this view began (the shot's time
            for the timed period, rule 17); default ``frame.t_s``.
        """
        if self.over:
            return []
        # Every view after the first follows a shot (or a hand over the mat).
        analysis = self.analyzer.analyze(frame.image_bgr, after_motion=True)
        said: list[Announcement] = []

        def say(kind: AnnouncementKind, text: str, event: Event | None = None) -> None:
            t = event.t if event is not None else self.game_time_s(frame.t_s)
            said.append(Announcement(kind, text, t, frame.label, event))

        if analysis.hidden_regions:
            if self._said.hidden_views == 0:
                area_cm2 = sum(r.area_mm2 for r in analysis.hidden_regions) / 100.0
                say(
                    AnnouncementKind.HIDDEN,
                    f"Part of the mat is hidden ({area_cm2:.0f} cm²): waiting for a clear "
                    "view before judging the shot.",
                )
            self._said.hidden_views += 1
            if self._said.hidden_views == HIDDEN_VIEWS_TO_WARN:
                say(
                    AnnouncementKind.HIDDEN,
                    f"Part of the mat has looked hidden in {HIDDEN_VIEWS_TO_WARN} still views in "
                    "a row. If nothing is lying on it, the camera has moved or the mat was found "
                    "in the wrong place: stop (the record is saved), calibrate with 'winkref "
                    "calibrate' (the corners can be given by hand), and watch again with "
                    "--calibration and --resume.",
                )
            return said
        self._said.hidden_views = 0
        board = analysis.board
        if self._resume_t is not None:
            back = (
                _played_back_in_baulk(board, self._board, self.analyzer.context.corners_mm)
                if self._board is not None
                else []
            )
            if len(back) >= RESUME_BACK_IN_BAULK:
                raise ResumeMismatchError(
                    f"the first picture does not show the game as recorded after shot "
                    f"{len(self.record.shots)}: {', '.join(back)}, in play in the record, "
                    "lie behind their baselines as at the start (is this the game's video or "
                    "folder from its beginning?); the record is left as it was: to watch this "
                    "game from its start, give a new --record; to go on with the recorded one, "
                    "watch the camera or pictures from where it stopped"
                )
            self._first_shot_s = frame.t_s - self._resume_t
            self._resume_t = None
            self._image = frame.image_bgr
            say(
                AnnouncementKind.RESUMED,
                f"Resuming the game after shot {len(self.record.shots)}; any wink moved since "
                "is taken as the next shot.",
            )
            if self._board is not None:
                said += self._next_line(frame.label)

        if self._board is None:
            context = self.analyzer.context
            problems = tuple(_not_at_start(board, context.corners_mm, context.pot_centre_mm))
            if problems and not self._start_as_said:
                self._waiting = (board, frame.image_bgr)
                if problems != self._said.waiting_said:
                    say(
                        AnnouncementKind.WAITING,
                        "Waiting for the starting position (rule 5.2: six winks of each "
                        "colour behind its baseline): " + "; ".join(problems) + ". If every "
                        "wink is behind its own baseline, the camera misread one: to start from "
                        "this view, type s and Enter at a camera, or watch the video or photos "
                        "again with --start-as-seen.",
                    )
                    self._said.waiting_said = problems
                return said
            self._start_from(board, frame.image_bgr, say, as_said=bool(problems))
            return said

        # The board is in the frame of the camera the analysis names (the
        # calibration's, or that turned through 180 degrees).
        camera = analysis.camera or self.analyzer.context.camera
        left_at = self._left_place(frame, camera)

        def changed_at(wink: Wink) -> bool:
            return wink.mat_xy is not None and left_at(wink.mat_xy, wink.radius_mm)

        analysis = self._without_unseen_detections(analysis, frame, camera, left_at)
        board = analysis.board
        board = without_unseen_arrivals(board, self._board, changed_at)
        board, unseen = with_unseen_winks(board, self._board, changed_at)
        board = without_still_unplayed_squops(board, self._board, changed_at)
        board = kept_still(board, self._board, changed_at)
        board = kept_unplayed(board, self._board, changed_at)
        board = with_squops_the_shot_explains(board, self._board, unseen, changed_at)
        board, kept_back = with_others_unplayed_kept(
            board, self._board, self._to_play(), changed_at
        )
        moved = _changed_winks(self._board, board)
        if not moved:
            return said
        replaced = _replaced_off_winks(self._board, moved) or _restored(
            moved, board, self.game.board
        )
        if replaced:
            self._board, self._image = board, frame.image_bgr
            say(
                AnnouncementKind.REPLACED,
                f"{', '.join(replaced)} put back where the rules say (rules 8.1.3, 13.1); "
                "not a shot.",
            )
            return said

        board = _steady(board, self._board, moved)
        began_s = frame.t_s if shot_began_s is None else shot_began_s
        colour = self._to_play()
        shot = ShotRecord(t=self._shot_time(began_s), colour=colour, board=board)
        index = len(self.record.shots)
        last = self._board.by_id
        try:
            self.game.play(shot, index=index)
        except IllegalRecordError as exc:
            self._save_frame(frame, f"not_understood_after_shot_{index:03d}")
            say(
                AnnouncementKind.NOT_UNDERSTOOD,
                f"This position cannot follow the last one ({'; '.join(exc.problems)}), so "
                f"it is not counted as {colour.value}'s shot. Check the winks named, put any "
                "wink moved by mistake back, and the referee will look again.",
            )
            return said
        self._board, self._image = board, frame.image_bgr
        self._save_frame(frame, f"shot_{index:03d}")
        say(
            AnnouncementKind.SHOT,
            f"Shot {index + 1}: {colour.value} played ({', '.join(moved)} moved).",
        )
        said += self._after_shot(shot, began_s, frame.label)
        lost = sorted(set(unseen) - self._said.unseen)
        if lost:
            say(
                AnnouncementKind.REVIEW,
                f"Umpire: {', '.join(lost)} not seen in this view; taken to be where "
                f"{'it was' if len(lost) == 1 else 'they were'}: please check.",
            )
        self._said.unseen = set(unseen)
        if kept_back:
            say(
                AnnouncementKind.REVIEW,
                f"Umpire: {', '.join(kept_back)} read as brought into play by "
                f"{colour.value}'s shot; taken to be where "
                f"{'it was' if len(kept_back) == 1 else 'they were'}, behind the baseline: "
                "please check.",
            )
        potted_unseen = sorted(
            w.id
            for w in board.winks
            if w.status is WinkStatus.POTTED
            and Doubt.INFERRED in w.doubts
            and (w.id not in last or last[w.id].status is not WinkStatus.POTTED)
        )
        if potted_unseen:
            # Rule 8.1 gives a potting its extra shot (rule 12): one counted
            # only because the wink is seen nowhere else may lie where the pot
            # or a hand hides the mat.
            say(
                AnnouncementKind.REVIEW,
                f"Umpire: {', '.join(potted_unseen)} counted potted without being seen in the "
                f"pot ({'it is' if len(potted_unseen) == 1 else 'they are'} seen nowhere "
                "else; the pot hides part of the mat from the camera): please check.",
            )
        for text in analysis.reviews:
            # Said when it newly appears: the same words can be a new case.
            if text not in self._said.reviews_said:
                say(AnnouncementKind.REVIEW, f"Umpire: {text}")
        self._said.reviews_said = set(analysis.reviews)
        if not self.over:
            said += self._next_line(frame.label)
        return said

    def pass_turn(self, t_s: float, *, label: str = "keyboard") -> list[Announcement]:
        """Rule 11: the colour whose turn it is passes (a camera cannot see a pass).

        Parameters
        ----------
        t_s : float
            When, seconds from the start of watching.
        label : str
            Where the pass came from, for the announcements.
        """
        if self.over or self._board is None:
            return []
        if self._resume_t is not None:
            self._first_shot_s, self._resume_t = t_s - self._resume_t, None
        shot = ShotRecord(t=self._shot_time(t_s), colour=self._to_play(), is_pass=True)
        self.game.play(shot, index=len(self.record.shots))
        said = self._after_shot(shot, t_s, label)
        if not self.over:
            said += self._next_line(label)
        return said

    def start_as_said(self, t_s: float, *, label: str = "keyboard") -> list[Announcement]:
        """Rule 5.2 on the players' word: the position in view is the starting position.

        The referee waits until it sees six winks of each colour behind
        their baselines; a misreading (a shadow taken for a wink in play, a
        wink missed in a dim corner) can keep it waiting. On the players'
        word the last view it waited on is taken as the start: a wink read
        behind no baseline, or behind another colour's, is taken as not seen,
        and every wink not seen is taken to be behind its own baseline.
        Before any view, the next view is taken so. After the start, nothing
        changes.

        Parameters
        ----------
        t_s : float
            When, seconds from the start of watching.
        label : str
            Where the word came from, for the announcements.
        """
        if self.over or self._board is not None:
            return []
        self._start_as_said = True
        if self._waiting is None:
            return []
        said: list[Announcement] = []

        def say(kind: AnnouncementKind, text: str, event: Event | None = None) -> None:
            said.append(Announcement(kind, text, self.game_time_s(t_s), label, event))

        self._start_from(*self._waiting, say, as_said=True)
        return said

    def _start_from(
        self,
        board: Board,
        image_bgr: npt.NDArray[np.uint8],
        say: Callable[[AnnouncementKind, str], None],
        *,
        as_said: bool,
    ) -> None:
        """Take ``board`` as the starting position and say so (rule 5.2).

        ``as_said``: the players said it is the start (:meth:`start_as_said`)
        though the referee did not see it as one.
        """
        context = self.analyzer.context
        board = _without_misreadings_before_the_start(
            board, context.corners_mm, context.pot_centre_mm
        )
        if as_said:
            # The players say every wink is behind its own baseline: one read
            # elsewhere (another colour's corner too) was misread.
            board = board.with_winks(
                [w for w in board.winks if _behind_own_baseline(w, context.corners_mm)]
            )
        self._board, unseen = with_unseen_winks(as_starting_position(board), None)
        self._image = image_bgr
        self._waiting = None
        seen_text = (
            "24 winks behind their baselines"
            if not unseen
            else f"{24 - len(unseen)} winks behind their baselines, and "
            f"{', '.join(unseen)} taken to be there too (not seen)"
        )
        how = "taken, on the players' word" if as_said else "seen"
        say(
            AnnouncementKind.START,
            f"Starting position {how}: {seen_text}. "
            f"{self.record.squidge_off_winner.value.capitalize()} won the squidge-off "
            "and plays first (rule 6).",
        )
        self._said.unseen = set(unseen)

    def _to_play(self) -> Colour:
        turn = self.game.next_turn()
        # The opponents' choice (23.3) follows a wrong-colour event, which
        # only a record can hold: the first choice stands in for it.
        return turn.colour if turn.colour is not None else turn.choices[0]

    def _shot_time(self, began_s: float) -> float:
        """Game time of a shot begun at ``began_s``: 0 for the first (rules 6.1, 17)."""
        if self._first_shot_s is None:
            return 0.0
        return max(began_s - self._first_shot_s, self.record.shots[-1].t)

    def _after_shot(self, shot: ShotRecord, began_s: float, label: str) -> list[Announcement]:
        """Keep a shot the engine took, save the record, and say what the engine said."""
        if self._first_shot_s is None:
            self._first_shot_s = began_s
        self.record = self.record.model_copy(update={"shots": (*self.record.shots, shot)})
        self.save_record()
        said = []
        for event in self.game.events[self._said.events :]:
            ended = event.type is EventType.GAME_END
            kind = AnnouncementKind.END if ended else AnnouncementKind.RULES
            said.append(Announcement(kind, event_line(event, first_shot=1), event.t, label, event))
        self._said.events = len(self.game.events)
        return said

    def _next_line(self, label: str) -> list[Announcement]:
        line = next_turn_line(self.game.next_turn())
        if not line:
            return []
        t = self.record.shots[-1].t if self.record.shots else None
        return [Announcement(AnnouncementKind.NEXT, line, t, label)]

    def _without_unseen_detections(
        self,
        analysis: FrameAnalysis,
        frame: Frame,
        camera: Any,
        left_at: Callable[[Sequence[float], float], bool],
    ) -> FrameAnalysis:
        """The analysis without detections of winks that arrived unseen, rebuilt if any went.

        As :func:`without_unseen_arrivals`, but before vision counts the
        winks of each colour (rule 2.1.1): of a colour detected more than six
        times, a wink read where no wink of the last board lay, where the
        picture did not change (a wink-like disc on the table beside the
        mat), goes first; else it could count as one of the six, and the
        real wink it displaced (one seen in the pot, say) be dropped instead.
        """
        dets = analysis.detections
        last = self._board
        if last is None or len(dets) == 0:
            return analysis
        # The detections are in the board's frame (the analysis turned them with it).
        drop = extra_unseen_detections(
            dets.mat_xy_mm, dets.radius_mm, dets.colour, dets.confidence, last, left_at
        )
        if not drop.any():
            return analysis
        kept = dets[~drop]
        if camera is not self.analyzer.context.camera:
            # Back into the calibration's frame, which analyze_frame turns itself.
            kept = replace(kept, mat_xy_mm=-kept.mat_xy_mm)
        return analyze_frame(frame.image_bgr, self.analyzer.context, detections=kept, previous=last)

    def _left_place(self, frame: Frame, camera: Any) -> Callable[[Sequence[float], float], bool]:
        """Whether the picture changed, since the last board's, at a place and radius (mm).

        ``camera`` maps the board's frame into the image.
        """
        last_image = self._image
        if last_image is None or last_image.shape != frame.image_bgr.shape:
            # No picture to compare with: every reading stands.
            return lambda mat_xy, radius_mm: True
        # A sparse sample is enough for the picture's typical change (noise, light).
        sample = np.abs(frame.image_bgr[::4, ::4].astype(np.int16) - last_image[::4, ::4])
        floor = max(LEFT_LEVELS, LEFT_NOISE_TIMES * float(np.median(sample.max(axis=2))))

        def left(mat_xy: Sequence[float], radius_mm: float) -> bool:
            centre_px, rim_px = camera.mat_to_image(
                [[mat_xy[0], mat_xy[1], 0.0], [mat_xy[0] + radius_mm, mat_xy[1], 0.0]]
            )
            radius_px = max(float(np.hypot(*(rim_px - centre_px))), 2.0)
            h, w = last_image.shape[:2]
            c0, r0 = (max(int(v - radius_px), 0) for v in centre_px)
            c1, r1 = (
                min(int(centre_px[0] + radius_px) + 1, w),
                min(int(centre_px[1] + radius_px) + 1, h),
            )
            if c1 <= c0 or r1 <= r0:
                return False
            before = last_image[r0:r1, c0:c1].astype(np.int16)
            now = frame.image_bgr[r0:r1, c0:c1].astype(np.int16)
            return float(np.abs(now - before).max(axis=2).mean()) > floor

        return left

    def _save_frame(self, frame: Frame, name: str) -> None:
        """Keep the picture as ``<record>_<name>.jpg``, never over an existing file."""
        if self.frames_dir is None:
            return
        stem = self.record_path.stem if self.record_path is not None else "game"
        path = self.frames_dir / f"{stem}_{name}.jpg"
        k = 1
        while path.exists():
            k += 1
            path = self.frames_dir / f"{stem}_{name}-{k}.jpg"
        write_image_atomic(path, frame.image_bgr, option="--save-frames", make_parent=True)


def settler_for(analyzer: StillCameraAnalyzer, *, settle_s: float = SETTLE_S) -> Settler:
    """A settler watching the mat and the table round it, as the analyser sees them."""
    return Settler(watched_small(analyzer.context), settle_s=settle_s)


__all__ = [
    "HIDDEN_SCALE",
    "Announcement",
    "AnnouncementKind",
    "Frame",
    "MOVED_MM",
    "Referee",
    "SETTLE_S",
    "Settler",
    "settler_for",
]
