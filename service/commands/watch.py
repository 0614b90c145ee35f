"""``winkref watch``: the live referee over a still camera.

A camera (``--camera N``), a video file, or a folder of photos taken after
each shot. The mat is calibrated from the first picture unless
``--calibration FILE`` is given. The referee waits for the starting position
(rule 5.2), then after every shot, once the winks are still and no hand is
over the mat, gives the board to the rules engine and prints what it
announces: pots, squops, forfeits, squop-ups, whose turn it is, and the
score at the end. The game record is saved after every shot (``--record``);
``winkref replay`` reads it back.
"""

from __future__ import annotations

import collections
import itertools
import json
import math
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.check import camera_moved
from calibration.result import MatPartlyOutOfFrameError, NoMatFoundError
from rules.board import Colour
from rules.engine import Game, replay_record
from rules.record import GameRecord, IllegalRecordError
from rules.ruleset import get_ruleset
from rules.scoring import GameFormat
from service.commands.analyze import calibration_for_photo
from service.commands.count import parse_format
from service.commands.replay import load_game_record
from service.frames import PHOTO_SUFFIXES, camera_frames, folder_frames, video_frames
from service.outputs import UnwritableOutputError, check_output_path, same_file
from service.watch import (
    HIDDEN_SCALE,
    SETTLE_S,
    Announcement,
    Frame,
    Referee,
    Settler,
    last_recorded_board,
    settler_for,
)
from vision.pipeline import StillCameraAnalyzer

#: Photos in a folder are taken this far apart unless told (rule 17's
#: clock runs on it), s: about a shot's length in a timed game.
PHOTO_INTERVAL_S = 30.0
#: A still view of a video or camera is the mean of at most this many still frames.
STILL_SPELL_FRAMES = 8
#: Still views the mat was not found in are kept, at most this many (the
#: latest), to be judged once a later view finds it: a crowded corner can
#: hide the mat's corner in the starting position itself, and the game
#: would be lost from its first shot.
EARLIER_VIEWS_KEPT = 16


class WatchOptionsError(ValueError):
    """Options of ``winkref watch`` that cannot go together, or a bad value."""


def parse_colour(name: str, *, option: str) -> Colour:
    """``"blue"`` -> :attr:`Colour.BLUE`, with a clear error otherwise."""
    try:
        return Colour(name.strip().lower())
    except ValueError:
        known = ", ".join(c.value for c in Colour)
        raise WatchOptionsError(
            f"{option} {name!r}: not a wink colour; give one of {known}"
        ) from None


def default_record_path(now: datetime | None = None) -> Path:
    """``winkref-game-YYYYMMDD-HHMMSS.json`` in the current folder (UTC)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return Path(f"winkref-game-{stamp}.json")


def check_source(source: Path | None, camera_index: int | None) -> None:
    """Refuse no source, two sources, or a path that is not there: said before any other option."""
    if (source is None) == (camera_index is None):
        raise WatchOptionsError(
            "give what to watch: a video file, a folder of photos, or --camera N (one of them)"
        )
    if source is not None and not source.exists():
        raise WatchOptionsError(
            f"{str(source)!r} does not exist; check the path (give a video file, a folder of "
            "photos, or --camera N)"
        )


def _frames(
    source: Path | None, camera_index: int | None, interval_s: float
) -> tuple[Iterator[Frame], bool]:
    """The pictures to watch, and whether they are photos (each one a view at rest)."""
    check_source(source, camera_index)
    if source is None:
        return camera_frames(camera_index or 0), False
    if source.is_dir():
        return folder_frames(source, interval_s=interval_s), True
    if source.suffix.lower() in PHOTO_SUFFIXES:
        raise WatchOptionsError(
            f"{str(source)!r} is one photo; watch needs a game: a folder of photos taken after "
            "each shot (give the folder), a video, or --camera N; for one photo use "
            "'winkref analyze' or 'winkref count'"
        )
    return video_frames(source), False


def _resumed(path: Path, squidge_off: str) -> tuple[GameRecord, Game]:
    """The game saved in ``path`` and replayed: readable, valid, not over, squidge-off agreed.

    Raises
    ------
    rules.record.IllegalRecordError, WatchOptionsError
    """
    record = load_game_record(path)
    try:
        game, _ = replay_record(record)
    except IllegalRecordError as exc:
        raise IllegalRecordError([f"{path}: {p}" for p in exc.problems]) from None
    if game.result is not None:
        raise WatchOptionsError(
            f"--resume {str(path)!r}: that game is over ({game.result.notation}); "
            "start a new one without --resume"
        )
    if squidge_off and parse_colour(squidge_off, option="--squidge-off") != (
        record.squidge_off_winner
    ):
        raise WatchOptionsError(
            f"--squidge-off {squidge_off!r}, but the game in {str(path)!r} was won by "
            f"{record.squidge_off_winner.value} at the squidge-off; leave --squidge-off out"
        )
    return record, game


def _check_resumed_options(
    record: GameRecord,
    path: Path,
    *,
    ruleset: str | None,
    game_format: GameFormat | None,
    time_limit_min: float | None,
) -> None:
    """Refuse an option given with ``--resume`` that would change the saved game's own.

    A game goes on under the rules, format and time limit it began with; an
    option that disagrees is refused rather than silently ignored, so that the
    user knows which one holds.
    """
    saved_limit_s = record.timed_period_s
    clashes = []
    if ruleset is not None and ruleset != record.ruleset:
        clashes.append(f"--ruleset {ruleset!r} (the game is played by {record.ruleset!r})")
    if game_format is not None and game_format != record.format:
        clashes.append(f"--format {game_format.value!r} (the game is {record.format.value!r})")
    if time_limit_min is not None and (
        saved_limit_s is None or not math.isclose(60.0 * time_limit_min, saved_limit_s)
    ):
        saved = "the format's own" if saved_limit_s is None else f"{saved_limit_s / 60.0:g} min"
        clashes.append(f"--time-limit {time_limit_min:g} (the game's limit is {saved})")
    if clashes:
        raise WatchOptionsError(
            f"--resume {str(path)!r} goes on with the saved game under its own rules, but "
            + "; ".join(clashes)
            + ". Leave those options out, or start a new game without --resume"
        )


def _check_new_record(record_path: Path, inputs: list[Path]) -> None:
    if record_path.exists() and not record_path.is_dir():
        raise UnwritableOutputError(
            f"--record {str(record_path)!r} already exists; it may hold an earlier game, "
            "so give a new file name (or move the old one away), or go on with that "
            "game with --resume"
        )
    check_output_path(record_path, option="--record", inputs=inputs)


def _check_frames_dir(frames_dir: Path | None, source: Path | None) -> None:
    if frames_dir is None:
        return
    if source is not None and source.is_dir() and same_file(frames_dir, source):
        raise UnwritableOutputError(
            f"--save-frames {str(frames_dir)!r} is the folder being watched; give another folder"
        )
    if frames_dir.exists() and not frames_dir.is_dir():
        raise UnwritableOutputError(
            f"--save-frames {str(frames_dir)!r} is a file, not a folder; give a folder name"
        )
    check_output_path(frames_dir / "shot_000.jpg", option="--save-frames", make_parent=True)


def run(
    source: Path | None,
    *,
    squidge_off: str,
    emit: Callable[[str], None],
    camera_index: int | None = None,
    calibration_path: Path | None = None,
    ruleset: str | None = None,
    game_format: str | None = None,
    time_limit_min: float | None = None,
    record_path: Path | None = None,
    frames_dir: Path | None = None,
    settle_s: float = SETTLE_S,
    interval_s: float = PHOTO_INTERVAL_S,
    json_output: bool = False,
    resume_path: Path | None = None,
    start_as_seen: bool = False,
) -> Referee:
    """Watch a game, calling ``emit`` with each line to print as it happens.

    ``start_as_seen`` takes the first view as the starting position, as the
    players may say when the referee misreads it (:meth:`Referee.start_as_said`).

    Returns the referee at the end (its record and game), for callers that
    want them.

    Raises
    ------
    ValueError
        Bad options, a source that cannot be read, no mat in the first
        picture, or an unusable calibration file; each message says what to
        do. Once watching has begun, a failure still leaves the record saved.
    """
    resumed = _resumed(resume_path, squidge_off) if resume_path is not None else None
    first = (
        resumed[0].squidge_off_winner
        if resumed is not None
        else parse_colour(squidge_off, option="--squidge-off")
    )
    if start_as_seen and resumed is not None and last_recorded_board(resumed[0]) is not None:
        raise WatchOptionsError(
            f"--start-as-seen with --resume {str(resume_path)!r}: that game has started "
            "already (its record holds shots); leave out --start-as-seen"
        )
    fmt: GameFormat = parse_format(game_format or GameFormat.PAIRS.value)
    ruleset_name = ruleset or "etwa-2012"
    get_ruleset(ruleset_name)  # an unknown name is refused before the camera opens
    if time_limit_min is not None and not 0 < time_limit_min <= 24 * 60:
        raise WatchOptionsError(
            f"--time-limit {time_limit_min:g}: give the timed period in minutes, "
            "e.g. 25 (rule 17), or leave it out for the format's own"
        )
    if resumed is not None and resume_path is not None:
        _check_resumed_options(
            resumed[0],
            resume_path,
            ruleset=ruleset,
            game_format=None if game_format is None else fmt,
            time_limit_min=time_limit_min,
        )
    for option, value in (("--settle", settle_s), ("--interval", interval_s)):
        if not math.isfinite(value) or value < 0:
            raise WatchOptionsError(
                f"{option} {value:g}: give a number of seconds, 0 or more (e.g. 1)"
            )
    if settle_s == 0 and (camera_index is not None or (source and not source.is_dir())):
        raise WatchOptionsError(
            "--settle 0 would judge every frame of a video or camera, hands and moving winks "
            "too; give at least 0.5 s (0 is for a folder of photos, each taken at rest)"
        )
    inputs = [p for p in (source, calibration_path) if p is not None]
    if resume_path is not None and (record_path is None or same_file(record_path, resume_path)):
        # The resumed game goes on in its own record (rewritten whole, shots added).
        record_path = resume_path
        check_output_path(record_path, option="--resume", inputs=inputs)
    else:
        record_path = record_path or default_record_path()
        _check_new_record(record_path, inputs)
    _check_frames_dir(frames_dir, source)
    frames, photos = _frames(source, camera_index, interval_s)
    # Photos are each taken at rest; a video or camera must show a still spell.
    still_s = 0.0 if photos else settle_s

    first_frame, calibration, corners, notes, earlier = _calibrated_view(
        frames,
        calibration_path,
        settle_s=still_s,
        source=str(source) if source is not None else f"camera {camera_index}",
        emit=emit if camera_index is not None else None,
    )
    analyzer = StillCameraAnalyzer(
        calibration,
        corners_mm=corners,
        previous=last_recorded_board(resumed[0]) if resumed is not None else None,
    )
    blue_x = analyzer.context.corners_mm[Colour.BLUE][0]
    if resumed is not None:
        record, game = resumed
    else:
        record = GameRecord(
            ruleset=ruleset_name,
            format=fmt,
            squidge_off_winner=first,
            timed_period_s=None if time_limit_min is None else 60.0 * time_limit_min,
            blue_corner_x_sign=-1 if blue_x < 0 else 1,
        )
        game = Game.from_record(record)
    referee = Referee(analyzer, game, record, record_path=record_path, frames_dir=frames_dir)
    referee.save_record()
    if start_as_seen:
        referee.start_as_said(0.0, label="--start-as-seen")
    settler = settler_for(analyzer, settle_s=still_s)

    def say(item: Announcement) -> None:
        emit(json.dumps(item.to_json_dict(), ensure_ascii=False) if json_output else item.text)

    for note in notes:
        emit(json.dumps({"kind": "note", "text": note}) if json_output else f"Note: {note}")
    keys = _keyboard() if camera_index is not None and sys.stdin.isatty() else None
    if keys is not None:
        emit(KEYS_HELP)
    stopped = "the pictures ran out"
    spell = _StillSpell(photos=photos)
    try:
        # Views before the one the mat was found in, from the same camera,
        # are judged first, in turn (the starting position among them).
        for view in earlier:
            for item in referee.observe(view.frame, shot_began_s=view.motion_began_s):
                say(item)
        # The picture the mat was found in was still: it is looked at at once.
        settler.start_settled(first_frame.image_bgr, first_frame.t_s)
        began_s = earlier[-1].next_motion_began_s if earlier else first_frame.t_s
        for item in referee.observe(first_frame, shot_began_s=began_s):
            say(item)
        for frame in itertools.chain(frames, [None]):
            if frame is None:
                # The pictures ran out while a still view was being gathered.
                view = spell.flush()
                if view is not None:
                    for item in referee.observe(view, shot_began_s=settler.motion_began_s):
                        say(item)
                if referee.over:
                    stopped = "the game is over"
                elif camera_index is not None:
                    stopped = f"camera {camera_index} stopped giving pictures"
                break
            typed = _typed(keys)
            if "quit" in typed:
                stopped = "stopped from the keyboard"
                break
            for word in typed:
                if word == "pass":
                    for item in referee.pass_turn(frame.t_s):
                        say(item)
                elif word == "start":
                    started = referee.start_as_said(frame.t_s)
                    for item in started:
                        say(item)
                    if not started:
                        emit(
                            "The game has started: s changes nothing."
                            if referee.started
                            else "The next still view will be taken as the starting position."
                        )
                else:
                    emit(KEYS_HELP)
            settled = settler.update(frame.image_bgr, frame.t_s)
            view = spell.add(frame, settled=settled, changed=settler.still_since_s == frame.t_s)
            if view is not None:
                for item in referee.observe(view, shot_began_s=settler.motion_began_s):
                    say(item)
            if referee.over:
                stopped = "the game is over"
                break
    except KeyboardInterrupt:
        stopped = "stopped by Ctrl-C"
    except ValueError:
        _summary(referee, record_path, "stopped by the error below", emit, json_output)
        raise
    _summary(referee, record_path, stopped, emit, json_output)
    return referee


class _StillSpell:
    """The still views of a video or camera, each the mean of up to ``STILL_SPELL_FRAMES`` frames.

    A video's or webcam's frames each carry their own sensor noise and
    compression; the mat's faint edges and baselines, and the winks' rims,
    are found more surely in the mean of the frames of a still spell (noise
    down by the square root of their number). Once the settler says a spell
    is long enough, the view waits until the spell holds that many frames,
    or until the picture changes or the pictures run out. Photos are each
    their own view: never averaged. Session object: ``add`` changes it.
    """

    def __init__(self, *, photos: bool) -> None:
        self.photos = photos
        # References only: the frames are averaged once, when a view is ready.
        self._frames: collections.deque[npt.NDArray[np.uint8]] = collections.deque(
            maxlen=STILL_SPELL_FRAMES
        )
        self._pending: Frame | None = None

    def add(self, frame: Frame, *, settled: bool, changed: bool) -> Frame | None:
        """Add a frame; the view to judge when one is ready, else None.

        ``settled`` is the settler's word that a still spell began long
        enough ago; ``changed`` that this frame differs from the last.
        """
        if (
            changed
            or self.photos
            or (self._frames and self._frames[0].shape != frame.image_bgr.shape)
        ):
            self._frames.clear()
            self._pending = None
        self._frames.append(frame.image_bgr)
        if settled or self._pending is not None:
            self._pending = frame
        if self._pending is None or (not self.photos and len(self._frames) < STILL_SPELL_FRAMES):
            return None
        return self.flush()

    def flush(self) -> Frame | None:
        """The view waiting for its spell to fill, as it is now (the pictures ran out)."""
        pending, self._pending = self._pending, None
        if pending is None or not self._frames:
            return None
        if len(self._frames) == 1:
            return pending
        total = np.zeros(pending.image_bgr.shape, np.float32)
        for image_bgr in self._frames:
            total += image_bgr
        mean = np.clip(np.rint(total / np.float32(len(self._frames))), 0, 255).astype(np.uint8)
        return Frame(image_bgr=mean, t_s=pending.t_s, label=pending.label)


@dataclass(frozen=True)
class _EarlierView:
    """A still view the mat was not found in, kept to be judged once it is.

    ``motion_began_s`` is when the motion that ended in it began;
    ``next_motion_began_s`` that of the next view (a shot's time, rule 17).
    """

    frame: Frame
    motion_began_s: float | None
    next_motion_began_s: float | None = None


def _calibrated_view(
    frames: Iterator[Frame],
    calibration_path: Path | None,
    *,
    settle_s: float,
    source: str,
    emit: Callable[[str], None] | None,
) -> tuple[Frame, Any, Any, tuple[str, ...], tuple[_EarlierView, ...]]:
    """The first still view the mat is found in, its calibration, corners, notes, and views before.

    A video's or camera's view is the mean of a still spell
    (:class:`_StillSpell`), with a calibration file too. With
    ``calibration_path`` that is the first still view (checked against the
    file). Otherwise each view at rest is tried in turn, so that a hand over
    the mat at the start, or a camera still being set up, only delays the
    start; ``emit`` (for a camera) is told why each try failed. The views
    tried before (at most :data:`EARLIER_VIEWS_KEPT`, the latest) that show
    the mat where the calibration puts it (the camera had not moved,
    :func:`calibration.check.camera_moved`) are returned, oldest first, to
    be judged with it: the mat's edge may have been missed in the starting
    position itself, and its view is needed to follow the game.

    Raises
    ------
    ValueError
        No picture at all; the calibration file does not fit; or no picture
        showed the mat (the last try's reason, with what to do).
    """
    first = next(frames, None)
    if first is None:
        raise WatchOptionsError(f"{source!r} gave no picture to watch")
    h, w = first.image_bgr.shape[:2]
    whole = np.ones((-(-h // HIDDEN_SCALE), -(-w // HIDDEN_SCALE)), bool)
    settler = Settler(whole, settle_s=settle_s)
    failure: ValueError | None = None
    said = ""
    spell = _StillSpell(photos=settle_s <= 0)
    tried: collections.deque[_EarlierView] = collections.deque(maxlen=EARLIER_VIEWS_KEPT)
    dropped = 0
    for frame in itertools.chain([first], frames, [None]):
        if frame is None:
            view = spell.flush()  # the pictures ran out: what there is will do
        else:
            settled = settler.update(frame.image_bgr, frame.t_s)
            view = spell.add(frame, settled=settled, changed=settler.still_since_s == frame.t_s)
        if view is None:
            continue
        if calibration_path is not None:
            # A file that does not fit this view is said at once, not retried.
            return (
                view,
                *calibration_for_photo(view.image_bgr, Path(view.label), calibration_path),
                (),
            )
        try:
            calibration, corners, notes = calibration_for_photo(
                view.image_bgr, Path(view.label), None
            )
        except (NoMatFoundError, MatPartlyOutOfFrameError) as exc:
            failure = exc
            if emit is not None and str(exc) != said:
                emit(f"Looking for the mat: {exc}; trying again when the picture is still.")
                said = str(exc)
            dropped += len(tried) == tried.maxlen
            tried.append(_EarlierView(view, settler.motion_began_s))
            continue
        earlier = _views_of_this_camera(tried, calibration, settler.motion_began_s, view)
        if tried:
            notes = (
                *notes,
                _earlier_views_note(
                    view,
                    len(earlier),
                    len(tried) - len(earlier),
                    dropped,
                    photos=settle_s <= 0,
                ),
            )
        return view, calibration, corners, notes, earlier
    if failure is None:
        raise WatchOptionsError(
            f"{source!r}: the picture was never still for {settle_s:g} s, so the mat could "
            "not be looked for; give a shorter --settle, or a steadier camera"
        )
    if "--corners" in str(failure):
        raise failure from None  # it already says how to calibrate by hand
    # The class is kept, so that the command line adds its own hint too.
    raise type(failure)(
        f"{failure}; or calibrate once with 'winkref calibrate PHOTO -o calib.json' (which "
        "also takes the corners by hand) and watch with --calibration calib.json"
    ) from None


#: An earlier view is of this camera only when the whole picture lines up
#: with the view the mat was found in to within this many pixels: the check
#: of the mat's edges (calibration.check.camera_moved) looks 20 mm apart and
#: let a camera nudged by 15 px through, which read every wink as moved.
EARLIER_VIEW_SHIFT_PX = 1.5


def _views_of_this_camera(
    tried: Iterable[_EarlierView],
    calibration: Any,
    found_began_s: float | None,
    found: Frame | None = None,
) -> tuple[_EarlierView, ...]:
    """The views of ``tried`` taken from where the camera now stands.

    A view must show the mat where ``calibration`` puts it
    (:func:`calibration.check.camera_moved`) and, when ``found`` (the view
    the mat was found in) is given, line up with it as a whole
    (:data:`EARLIER_VIEW_SHIFT_PX`, by phase correlation): a view from
    before the camera was put where it now stands is not judged. When the
    mat-edge check refuses ``found`` itself, only the lining up is asked. Each view
    kept is told when the motion before the next view began (the last, that
    before the view the mat was found in: ``found_began_s``).
    """
    camera = getattr(calibration, "camera", calibration)
    # The mat-edge check can refuse the very view the calibration was made
    # from (beige felt on a pale table in patchy light, generated game
    # q3671: the shaded band inside one edge is off the felt's colour by
    # more than the faint edge steps). It then tells nothing, and the views
    # are judged by how they line up with that view alone.
    edges_tell = found is None or camera_moved(found.image_bgr, camera) is None
    kept = [
        v
        for v in tried
        if (not edges_tell or camera_moved(v.frame.image_bgr, camera) is None)
        and (
            found is None or _shift_px(v.frame.image_bgr, found.image_bgr) <= EARLIER_VIEW_SHIFT_PX
        )
    ]
    began = [v.motion_began_s for v in kept[1:]] + [found_began_s] * bool(kept)
    return tuple(
        _EarlierView(v.frame, v.motion_began_s, next_began)
        for v, next_began in zip(kept, began, strict=True)
    )


def _shift_px(image_bgr: npt.NDArray[np.uint8], other_bgr: npt.NDArray[np.uint8]) -> float:
    """How far, in full-size pixels, one picture is shifted against the other (inf if not alike)."""
    if image_bgr.shape != other_bgr.shape:
        return math.inf
    # At half size: the shift of the whole picture, not of the winks a shot moved.
    scale = 0.5
    grey = [
        cv2.resize(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), None, fx=scale, fy=scale).astype(
            np.float32
        )
        for im in (image_bgr, other_bgr)
    ]
    window = cv2.createHanningWindow(grey[0].shape[::-1], cv2.CV_32F)
    (dx, dy), _ = cv2.phaseCorrelate(grey[0], grey[1], window)
    return float(math.hypot(dx, dy)) / scale


def _earlier_views_note(
    found: Frame, judged: int, moved: int, dropped: int, *, photos: bool = False
) -> str:
    """What the user is told of the still views before the mat was found."""
    where = f"{found.label!r}" if photos else f"the still view at {found.t_s:.1f} s"
    text = f"the mat was first found in {where}"
    parts = []
    if judged:
        views = f"{judged} still view{'s' if judged != 1 else ''}"
        parts.append(
            f"{views} before it {'are' if judged != 1 else 'is'} judged with its calibration"
        )
    if moved:
        parts.append(
            f"{moved} before it {'are' if moved != 1 else 'is'} not judged: "
            "the mat is not where it shows in them (the camera was still being set up)"
        )
    if dropped:
        parts.append(f"{dropped} older still view{'s were' if dropped != 1 else ' was'} not kept")
    return text + ("; " + "; ".join(parts) if parts else "")


#: What the keyboard does while a camera is watched.
KEYS_HELP = (
    "Type p and Enter when a player passes (rule 11), s and Enter to start from the view "
    "while the referee waits on a misread starting position, q and Enter to stop; "
    "the record is saved after every shot."
)
_WORDS = {
    "p": "pass",
    "pass": "pass",
    "s": "start",
    "start": "start",
    "q": "quit",
    "quit": "quit",
    "stop": "quit",
}


def _keyboard() -> queue.Queue[str]:
    """Lines typed at the terminal, read in the background so the camera is not held up."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line.strip().lower())

    threading.Thread(target=read, name="winkref-keyboard", daemon=True).start()
    return lines


def _typed(keys: queue.Queue[str] | None) -> list[str]:
    """The commands typed since the last frame: ``pass``, ``start``, ``quit`` or ``help``."""
    out: list[str] = []
    while keys is not None and not keys.empty():
        line = keys.get_nowait()
        if line:
            out.append(_WORDS.get(line, "help"))
    return out


def _summary(
    referee: Referee, record_path: Path, stopped: str, emit: Callable[[str], None], as_json: bool
) -> None:
    shots = len(referee.shots)
    result = referee.game.result
    if as_json:
        emit(
            json.dumps(
                {
                    "kind": "summary",
                    "stopped": stopped,
                    "shots": shots,
                    "record": str(record_path),
                    "notation": None if result is None else result.notation,
                }
            )
        )
        return
    state = f"final score {result.notation}" if result is not None else "the game is not over"
    if not referee.started:
        state = "the starting position was never seen"
    emit(
        f"Watching ended ({stopped}): {shots} shot{'s' if shots != 1 else ''} seen, {state}. "
        f"Record saved in {record_path}; replay it with: winkref replay {record_path}"
    )
