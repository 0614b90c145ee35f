"""A game played shot by shot, as the frames of a still camera over the mat.

For testing a live referee (``winkref watch``): the camera, felt and light
stay the same from frame to frame, and each shot moves one wink. The game
starts from rule 5.2 (all 24 winks unplayed behind their baselines) and
follows the rules engine's turn order, so the colour of every shot is the
one :meth:`rules.engine.Game.next_turn` names after the shots before it
(a pot earns the extra shot the engine gives).

The shots, deterministic per seed:

- a colour with unplayed winks and no wink on the mat plays an unplayed
  wink to a free spot in front of its baseline;
- with four shots or more, one shot squops: the wink played comes to rest
  leaning on an opponent's wink with a plan-view overlap of 5.5-8 mm
  (:func:`tools.scenegen.layout.lean_on`); with four or five shots it is
  the fourth colour's first shot, otherwise the fifth shot;
- with five shots or more, the shot after the squop pots a wink of the
  colour playing, who then plays again;
- every other shot moves a free wink of that colour that is in no pile to
  a free spot.

A free spot is at least :data:`FREE_CLEARANCE_MM` from every wink, the
pot's rim, the baselines and the mat's edges. Statuses and squops always
come from :func:`tools.scenegen.geometry.compute_facts`, and each shot is
checked to have changed what it meant to and nothing else.

Command line::

    python -m tools.scenegen.game --seed 1 --shots 6 --video --out /tmp/game1

writes ``frame_000.jpg`` (the start) to ``frame_NNN.jpg`` (after shot N)
with their ``tiddlywinks-gt/1`` ground truth ``frame_NNN.json``,
``record.json`` (the true game, for ``winkref replay``), ``shots.json``
(what each shot did) and, with ``--video``, ``game.mp4`` and
``video.json``. In the video each settled position is held for
:data:`SETTLED_HOLD_S`; between two positions a hand (a soft skin-coloured
palm, fingers and forearm painted over the rendered picture, see
:func:`paint_hand`) passes over the wink's path for :data:`HAND_S`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from rules.board import BASELINE_DISTANCE_MM, POT_TOP_DIAMETER_MM, Board, Colour
from rules.engine import Game
from rules.record import GameRecord, ShotRecord
from rules.replacement import MatLayout
from tools.groundtruth import Scene, to_canonical_frame
from tools.scenegen import cameras, ground_truth, scene_rng
from tools.scenegen.geometry import (
    HALF_LENGTH_MM,
    HALF_WIDTH_MM,
    SceneFacts,
    WinkSolid,
    baseline_ends,
    beyond_baseline_mm,
    compute_facts,
    corner_direction,
    plan_gap_quick,
    signed_plan_gap,
)
from tools.scenegen.layout import Layout, flat_at, lean_on, make_layout
from tools.scenegen.render import render_scene

GAME_PROFILES = ("overhead", "oblique")

#: Time between recorded shots, s (the first is at 0, rules 6.1, 17).
SHOT_INTERVAL_S = 30.0
#: A free spot is this far from every wink, the pot's rim, the baselines
#: and the mat's edges (outline to outline), mm.
FREE_CLEARANCE_MM = 20.0
#: A wink played from behind its baseline lands at most this much further
#: in front of it than the clearance, mm: near its own corner, as in play.
ENTRY_DEPTH_MM = 250.0
#: ... and at most this far beyond either end of the baseline, along it, mm.
ENTRY_BEYOND_ENDS_MM = 60.0
#: A moved wink travels at least this far, so that no one can take it for
#: the same wink settling (the referee's own threshold is a few mm), mm.
MIN_MOVE_MM = 40.0
#: Plan-view overlap of the squop shot's wink with the wink it lands on, mm.
SQUOP_OVERLAP_MM = (5.5, 8.0)
#: A squopping wink's outline stays this far from every other wink, mm
#: (its lower wink was placed in a free spot; it only reaches a little past).
SQUOP_NEIGHBOUR_GAP_MM = 10.0
#: Where a potted wink sits: its bottom this high above the mat, plus the
#: thickness of those already potted; off the pot's axis by about this, mm.
POT_FLOOR_MM = 3.0
POT_SCATTER_MM = 3.0

#: Sensor noise drawn afresh for each frame (8-bit levels), and the JPEG
#: quality; the same as ``benchmarks/still_camera.py``.
FRAME_NOISE_LEVELS = 1.5
JPEG_QUALITY = 90

#: The video: frames per second, how long each settled position is shown,
#: and how long the hand is over the mat between two positions, s.
VIDEO_FPS = 5
SETTLED_HOLD_S = 2.0
HAND_S = 1.0

#: The hand: palm half-length (along the arm) and half-width, finger length
#: and width, forearm width and length, mm; the palm hovers this high.
PALM_HALF_MM = (50.0, 42.0)
FINGER_MM = (70.0, 17.0)
FOREARM_WIDTH_MM = 80.0
FOREARM_LENGTH_MM = 650.0
HAND_HEIGHT_MM = 45.0
#: Skin colour (BGR, 8-bit) under the scene's typical exposure.
SKIN_BGR = (120.0, 150.0, 205.0)

_POT_TOP_RADIUS_MM = POT_TOP_DIAMETER_MM / 2
_PROFILE_OF_LAYOUT = "start"  # the layout is the ``start`` profile's (rule 5.2)


class GameGenerationError(RuntimeError):
    """A shot that could not be built as planned: a generator bug, not bad input."""


@dataclass(frozen=True)
class PlannedShot:
    """What one shot did.

    ``kind`` is ``enter`` (an unplayed wink played into the field),
    ``squop`` (the wink ends on ``onto_id``), ``pot`` or ``move``;
    ``from_mat_xy_mm`` and ``to_mat_xy_mm`` are the wink's plan centre
    before and after (the pot's centre, about, for a pot), in the
    generator's frame (that of the ground truth, not turned canonical).
    """

    index: int
    t_s: float
    colour: Colour
    kind: str
    wink_id: str
    from_mat_xy_mm: tuple[float, float]
    to_mat_xy_mm: tuple[float, float]
    onto_id: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The entry of ``shots.json``."""
        return {
            "index": self.index,
            "t": self.t_s,
            "colour": self.colour.value,
            "kind": self.kind,
            "wink": self.wink_id,
            "from_mat_xy_mm": [round(v, 3) for v in self.from_mat_xy_mm],
            "to_mat_xy_mm": [round(v, 3) for v in self.to_mat_xy_mm],
            "onto": self.onto_id,
            "frame": f"frame_{self.index + 1:03d}",
        }


@dataclass(frozen=True)
class PlannedGame:
    """A whole game before rendering: one layout and ground truth per settled position.

    ``layouts[0]`` is the start; ``layouts[k]`` follows ``shots[k - 1]``.
    ``look_state`` is the scene random stream's state just before the first
    render: restoring it before each render gives the same felt, light and
    lens every frame.
    """

    seed: int
    profile: str
    sampled: cameras.SampledCamera
    layouts: tuple[Layout, ...]
    facts: tuple[SceneFacts, ...]
    truths: tuple[dict[str, Any], ...]
    shots: tuple[PlannedShot, ...]
    record: GameRecord
    look_state: Mapping[str, Any]

    @property
    def camera(self) -> CameraModel:
        """The still camera every frame is taken with."""
        return self.sampled.model


# --------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------


def board_from_truth(truth: dict[str, Any]) -> Board:
    """The ground truth of one frame as the board the engine is fed.

    The existing converter (:meth:`tools.groundtruth.Scene.to_board`) after
    the turn into the canonical frame (blue's corner at y > 0), which is the
    frame of the board contract.
    """
    return to_canonical_frame(Scene.from_json_dict(truth)).to_board()


def blue_corner_x_sign(layout: Layout) -> int:
    """Sign of x of blue's corner in the canonical frame (a record's ``blue_corner_x_sign``)."""
    x, y = layout.corners[Colour.BLUE]
    if y < 0:  # the canonical frame is the half turn, (x, y) -> (-x, -y)
        x = -x
    return 1 if x > 0 else -1


def shot_schedule(shots: int) -> tuple[int | None, int | None]:
    """Which shot squops and which pots (indices from 0), or None.

    With four or five shots the first four are the four colours' first
    shots, so the squop is the fourth colour's (from behind its baseline)
    and the pot, with five, the next. With more, the first colour's second
    shot squops with its wink on the mat, and the next colour pots.
    """
    if shots >= 6:
        return 4, 5
    squop_at = 3 if shots >= 4 else None
    pot_at = 4 if shots >= 5 else None
    return squop_at, pot_at


def plan_game(
    seed: int, shots: int = 6, *, profile: str = "overhead", image_scale: float = 1.0
) -> PlannedGame:
    """Lay out a game of ``shots`` shots and its true record, without rendering.

    Parameters
    ----------
    seed : int
        Fixes everything: the starting layout (that of ``generate_scene("start",
        seed)``), the camera, who won the squidge-off and every shot. The
        shots do not depend on ``profile`` or ``image_scale``.
    shots : int
        How many shots to play (0 or more).
    profile : {"overhead", "oblique"}
        The camera.
    image_scale : float
        Render smaller or larger through a scaled camera (e.g. 0.25 for
        tests); the game is unchanged.

    Raises
    ------
    ValueError
        For an unknown profile, a negative number of shots or a scale out of range.
    GameGenerationError
        When a shot cannot be built as planned (a generator bug).
    """
    if profile not in GAME_PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {GAME_PROFILES!r}")
    if shots < 0:
        raise ValueError(f"shots must be 0 or more, got {shots!r}")
    if not 0.05 <= image_scale <= 4.0:
        raise ValueError(f"image_scale must be between 0.05 and 4, got {image_scale!r}")
    rng = scene_rng(_PROFILE_OF_LAYOUT, seed)
    layout = make_layout(rng, start=True)
    sampled = cameras.overhead(rng) if profile == "overhead" else cameras.oblique(rng)
    if image_scale != 1.0:
        sampled = cameras.scaled(sampled, image_scale)
    look_state = rng.bit_generator.state
    # The shots draw from their own stream, so the camera cannot change the game.
    shot_rng = np.random.default_rng([int(seed), zlib.crc32(b"tools.scenegen.game shots")])
    winner = list(Colour)[int(shot_rng.integers(4))]
    sign = blue_corner_x_sign(layout)
    game = Game(winner, layout=MatLayout(sign))
    squop_at, pot_at = shot_schedule(shots)

    facts = compute_facts(layout.winks)
    layouts, all_facts = [layout], [facts]
    truths = [_truth(seed, 0, profile, layout, facts, sampled)]
    played: list[PlannedShot] = []
    records: list[ShotRecord] = []
    for k in range(shots):
        colour = game.next_turn().colour
        if colour is None:
            raise GameGenerationError(f"shot {k}: the engine names no single colour to play")
        want = "squop" if k == squop_at else "pot" if k == pot_at else "plain"
        t_s = k * SHOT_INTERVAL_S
        after, shot = _play(layouts[-1], all_facts[-1], colour, want, k, t_s, shot_rng)
        new_facts = compute_facts(after.winks)
        _check_shot(layouts[-1], all_facts[-1], after, new_facts, shot)
        truth = _truth(seed, k + 1, profile, after, new_facts, sampled)
        record_shot = ShotRecord(t=t_s, colour=colour, board=board_from_truth(truth))
        game.play(record_shot, index=k)
        layouts.append(after)
        all_facts.append(new_facts)
        truths.append(truth)
        played.append(shot)
        records.append(record_shot)
    record = GameRecord(squidge_off_winner=winner, blue_corner_x_sign=sign, shots=tuple(records))
    return PlannedGame(
        seed=seed,
        profile=profile,
        sampled=sampled,
        layouts=tuple(layouts),
        facts=tuple(all_facts),
        truths=tuple(truths),
        shots=tuple(played),
        record=record,
        look_state=look_state,
    )


def _truth(
    seed: int,
    index: int,
    profile: str,
    layout: Layout,
    facts: SceneFacts,
    sampled: cameras.SampledCamera,
) -> dict[str, Any]:
    truth = ground_truth(f"game_{seed:05d}_{index:03d}", profile, layout, facts, sampled, None)
    truth["generator"] = "tools.scenegen.game (generated, not photographed)"
    return truth


def _in_piles(facts: SceneFacts) -> set[str]:
    return {wid for wid, lows in facts.squops.items() if lows} | {
        wid for wid, ups in facts.squopped_by.items() if ups
    }


def _play(
    layout: Layout,
    facts: SceneFacts,
    colour: Colour,
    want: str,
    index: int,
    t_s: float,
    rng: np.random.Generator,
) -> tuple[Layout, PlannedShot]:
    """The layout after one shot by ``colour`` (``want``: squop, pot or plain)."""
    piles = _in_piles(facts)
    own = [w for w in layout.winks if w.colour is colour]
    unplayed = [w for w in own if w.placement == "unplayed"]
    on_mat = [w for w in own if w.placement == "played"]
    # Free and in no pile: moving it changes no other wink's status.
    loose = [w for w in on_mat if facts.status[w.id] == "free" and w.id not in piles]
    squoppers = [
        w for w in on_mat if facts.status[w.id] == "free" and facts.squops[w.id] and w not in loose
    ]

    def pick(winks: Sequence[WinkSolid]) -> WinkSolid:
        return winks[int(rng.integers(len(winks)))]

    if want == "squop" and (loose or unplayed):
        mover = pick(loose) if loose else pick(unplayed)
        # The next colour pots, so its wink must stay free.
        got = _squop(layout, facts, mover, avoid=colour.next(), rng=rng)
        if got is not None:
            moved, onto = got
            return _apply(layout, moved, index, t_s, "squop", mover, onto)
    if want == "pot" and (loose or unplayed):
        mover = pick(loose) if loose else pick(unplayed)
        return _apply(layout, _potted(layout, mover, rng), index, t_s, "pot", mover)
    if unplayed and not on_mat:
        mover = pick(unplayed)
        moved = flat_at(mover, _entry_spot(layout, mover, rng)).with_placement("played")
        return _apply(layout, moved, index, t_s, "enter", mover)
    if loose or squoppers:
        # A squopper moves only when nothing else can: its squop goes with it.
        mover = pick(loose) if loose else pick(squoppers)
        return _apply(
            layout, flat_at(mover, _move_spot(layout, mover, rng)), index, t_s, "move", mover
        )
    if unplayed:
        mover = pick(unplayed)
        moved = flat_at(mover, _entry_spot(layout, mover, rng)).with_placement("played")
        return _apply(layout, moved, index, t_s, "enter", mover)
    raise GameGenerationError(f"shot {index}: {colour.value} has no wink it can play")


def _apply(
    layout: Layout,
    moved: WinkSolid,
    index: int,
    t_s: float,
    kind: str,
    before: WinkSolid,
    onto: str | None = None,
) -> tuple[Layout, PlannedShot]:
    winks = [moved if w.id == moved.id else w for w in layout.winks]
    shot = PlannedShot(
        index=index,
        t_s=t_s,
        colour=moved.colour,
        kind=kind,
        wink_id=moved.id,
        from_mat_xy_mm=(float(before.centre[0]), float(before.centre[1])),
        to_mat_xy_mm=(float(moved.centre[0]), float(moved.centre[1])),
        onto_id=onto,
    )
    return replace(layout, winks=winks), shot


def _spot_clear(layout: Layout, xy: np.ndarray, radius_mm: float, mover_id: str) -> bool:
    """Whether a flat wink of this radius at ``xy`` is clear of everything by the clearance."""
    reach = radius_mm + FREE_CLEARANCE_MM
    if abs(xy[0]) > HALF_LENGTH_MM - reach or abs(xy[1]) > HALF_WIDTH_MM - reach:
        return False
    if any(beyond_baseline_mm(xy, corner) > -reach for corner in layout.corners.values()):
        return False
    if math.hypot(xy[0], xy[1]) - reach < _POT_TOP_RADIUS_MM:
        return False
    for w in layout.winks:
        if w.id == mover_id or w.placement == "potted":
            continue
        # Centre distance less both radii and 2 mm: a tilted wink's outline
        # reaches at most about 1 mm past its radius.
        d = math.hypot(xy[0] - w.centre[0], xy[1] - w.centre[1])
        if d - radius_mm - w.radius_mm - 2.0 < FREE_CLEARANCE_MM:
            return False
    return True


def _entry_spot(layout: Layout, wink: WinkSolid, rng: np.random.Generator) -> np.ndarray:
    """A free spot in the band just in front of the wink's own baseline (not past its ends)."""
    corner = layout.corners[wink.colour]
    d = corner_direction(corner)
    across = np.array([-d[1], d[0]])
    ends = [float(np.dot(p, across)) for p in baseline_ends(corner)]
    lo, hi = min(ends) - ENTRY_BEYOND_ENDS_MM, max(ends) + ENTRY_BEYOND_ENDS_MM
    for _ in range(3000):
        ahead = wink.radius_mm + FREE_CLEARANCE_MM + float(rng.uniform(0.0, ENTRY_DEPTH_MM))
        xy = (BASELINE_DISTANCE_MM - ahead) * d + float(rng.uniform(lo, hi)) * across
        if _spot_clear(layout, xy, wink.radius_mm, wink.id):
            return xy
    raise GameGenerationError(f"no free spot in front of {wink.colour.value}'s baseline")


def _move_spot(layout: Layout, wink: WinkSolid, rng: np.random.Generator) -> np.ndarray:
    """A free spot anywhere in the field, often towards the pot as in play."""
    for attempt in range(3000):
        if attempt % 2 == 0:
            xy = rng.normal(0.0, [280.0, 150.0])
        else:
            xy = rng.uniform([-HALF_LENGTH_MM, -HALF_WIDTH_MM], [HALF_LENGTH_MM, HALF_WIDTH_MM])
        far = math.hypot(xy[0] - wink.centre[0], xy[1] - wink.centre[1]) >= MIN_MOVE_MM
        if far and _spot_clear(layout, xy, wink.radius_mm, wink.id):
            return np.asarray(xy, dtype=np.float64)
    raise GameGenerationError(f"no free spot to move {wink.id} to")


def _potted(layout: Layout, wink: WinkSolid, rng: np.random.Generator) -> WinkSolid:
    """The wink lying in the pot, on top of any already there."""
    below = sum(w.thickness_mm + 0.2 for w in layout.winks if w.placement == "potted")
    xy = np.clip(rng.normal(0.0, POT_SCATTER_MM, 2), -2 * POT_SCATTER_MM, 2 * POT_SCATTER_MM)
    return flat_at(wink, xy, base_z=POT_FLOOR_MM + below).with_placement("potted")


def _squop(
    layout: Layout,
    facts: SceneFacts,
    mover: WinkSolid,
    *,
    avoid: Colour,
    rng: np.random.Generator,
) -> tuple[WinkSolid, str] | None:
    """The mover leaning on an opponent's loose wink, and that wink's id; None if none fits.

    Nearer targets are tried first, and those of colour ``avoid`` last. The
    mover comes to rest on the side it came from (give or take), turning
    round the target until it is clear of every other wink, the pot and
    the baselines.
    """
    piles = _in_piles(facts)
    partnership = mover.colour.partnership
    targets = [
        w
        for w in layout.winks
        if w.colour.partnership is not partnership
        and w.placement == "played"
        and facts.status[w.id] == "free"
        and w.id not in piles
    ]
    order = rng.permutation(len(targets))
    # Nearer targets first, as a player would choose; the next colour's last.
    targets = sorted(
        (targets[i] for i in order),
        key=lambda w: (w.colour is avoid, float(np.hypot(*(w.centre[:2] - mover.centre[:2])))),
    )
    template = mover.with_placement("played")
    for lower in targets:
        towards = mover.centre[:2] - lower.centre[:2]
        base = math.atan2(towards[1], towards[0]) + float(rng.uniform(-0.3, 0.3))
        for j in range(24):
            turn = (j + 1) // 2 * (0.26 if j % 2 else -0.26)
            e = np.array([math.cos(base + turn), math.sin(base + turn)])
            overlap = float(rng.uniform(*SQUOP_OVERLAP_MM))
            upper = lean_on(template, lower, e, -overlap)
            if _squop_fits(layout, upper, lower):
                return upper, lower.id
    return None


def _squop_fits(layout: Layout, upper: WinkSolid, lower: WinkSolid) -> bool:
    xy = upper.centre[:2]
    reach = upper.radius_mm + 5.0
    if abs(xy[0]) > HALF_LENGTH_MM - reach or abs(xy[1]) > HALF_WIDTH_MM - reach:
        return False
    if any(beyond_baseline_mm(xy, corner) > -reach for corner in layout.corners.values()):
        return False
    if math.hypot(xy[0], xy[1]) - upper.radius_mm < _POT_TOP_RADIUS_MM + SQUOP_NEIGHBOUR_GAP_MM:
        return False
    if signed_plan_gap(upper, lower) > -SQUOP_OVERLAP_MM[0] + 0.01:
        return False
    for w in layout.winks:
        if w.id in (upper.id, lower.id) or w.placement == "potted":
            continue
        if plan_gap_quick(upper, w) < SQUOP_NEIGHBOUR_GAP_MM and (
            signed_plan_gap(upper, w) < SQUOP_NEIGHBOUR_GAP_MM
        ):
            return False
    return True


def _check_shot(
    before: Layout, facts_before: SceneFacts, after: Layout, facts: SceneFacts, shot: PlannedShot
) -> None:
    """Raise unless the shot changed its own wink and the statuses it meant to, only."""
    changed = [a.id for a, b in zip(after.winks, before.winks, strict=True) if a != b]
    problems = []
    if changed != [shot.wink_id]:
        problems.append(f"winks changed: {changed!r}")
    pairs_before = {(u, low) for u, lows in facts_before.squops.items() for low in lows}
    expected = {p for p in pairs_before if shot.wink_id not in p}
    if shot.kind == "squop":
        expected.add((shot.wink_id, str(shot.onto_id)))
    pairs = {(u, low) for u, lows in facts.squops.items() for low in lows}
    if pairs != expected:
        problems.append(f"squops {sorted(pairs)!r}, expected {sorted(expected)!r}")
    want = "potted" if shot.kind == "pot" else "free"
    if facts.status[shot.wink_id] != want:
        problems.append(f"{shot.wink_id} is {facts.status[shot.wink_id]}, expected {want}")
    if "off" in facts.status.values():
        problems.append("a wink is off the mat")
    if problems:
        raise GameGenerationError(f"shot {shot.index} ({shot.kind}): " + "; ".join(problems))


# --------------------------------------------------------------------------
# Pictures
# --------------------------------------------------------------------------


def render_positions(plan: PlannedGame, times_s: list[float] | None = None) -> list[np.ndarray]:
    """One clean render (BGR uint8) per settled position, all with the same look.

    The scene stream is put back to ``look_state`` before each render, so
    felt, light, exposure and even the renderer's own noise are the same
    in every position; only the winks differ. Add fresh sensor noise per
    frame with :func:`photo`. Each render's duration in seconds is appended
    to ``times_s`` when given.
    """
    rng = np.random.default_rng()
    images = []
    for layout, facts in zip(plan.layouts, plan.facts, strict=True):
        start = time.perf_counter()
        rng.bit_generator.state = plan.look_state
        images.append(render_scene(layout, plan.camera, rng, squops=facts.squops))
        if times_s is not None:
            times_s.append(time.perf_counter() - start)
    return images


def _noisy(image_bgr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(image_bgr.shape, dtype=np.float32) * FRAME_NOISE_LEVELS
    return np.clip(image_bgr.astype(np.float32) + noise, 0, 255).astype(np.uint8)


def photo_jpeg(image_bgr: np.ndarray, rng: np.random.Generator) -> bytes:
    """The picture as the camera delivers it: fresh sensor noise, then JPEG."""
    ok, buf = cv2.imencode(".jpg", _noisy(image_bgr, rng), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise OSError("JPEG encoding failed")
    return bytes(buf.tobytes())


def photo(image_bgr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """:func:`photo_jpeg` decoded again: one camera frame, BGR uint8."""
    data = np.frombuffer(photo_jpeg(image_bgr, rng), dtype=np.uint8)
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), dtype=np.uint8)


def _ellipse_mm(
    centre: np.ndarray, along: np.ndarray, half_along: float, half_across: float, z: float
) -> np.ndarray:
    across = np.array([-along[1], along[0]])
    ang = np.linspace(0.0, 2 * math.pi, 40, endpoint=False)
    pts = (
        centre[None, :]
        + np.cos(ang)[:, None] * half_along * along[None, :]
        + np.sin(ang)[:, None] * half_across * across[None, :]
    )
    return np.hstack([pts, np.full((len(pts), 1), z)])


def hand_outline_mm(palm_mat_xy_mm: npt.ArrayLike) -> list[np.ndarray]:
    """The hand as 3-D polygons in mat mm: forearm, palm, four fingers and a thumb.

    The forearm reaches back towards the nearer long side of the mat (where
    the player stands) and rises as it goes; the fingers point the other way.
    """
    palm = np.asarray(palm_mat_xy_mm, dtype=np.float64)
    back = np.array([0.0, 1.0 if palm[1] >= 0 else -1.0])  # towards the player
    ahead = -back
    across = np.array([-back[1], back[0]])
    z = HAND_HEIGHT_MM
    wrist = palm + back * PALM_HALF_MM[0] * 0.8
    elbow = wrist + back * FOREARM_LENGTH_MM
    half = FOREARM_WIDTH_MM / 2
    arm = np.array(
        [
            [*(wrist + across * half * 0.8), z + 10.0],
            [*(elbow + across * half * 1.2), z + 350.0],
            [*(elbow - across * half * 1.2), z + 350.0],
            [*(wrist - across * half * 0.8), z + 10.0],
        ]
    )
    parts = [arm, _ellipse_mm(palm, back, PALM_HALF_MM[0], PALM_HALF_MM[1], z)]
    for k, offset in enumerate((-0.75, -0.25, 0.25, 0.75)):
        length = FINGER_MM[0] * (0.85 if k in (0, 3) else 1.0)
        base = palm + ahead * PALM_HALF_MM[0] * 0.7 + across * offset * PALM_HALF_MM[1]
        tip_dir = ahead + across * offset * 0.15
        tip_dir /= np.linalg.norm(tip_dir)
        centre = base + tip_dir * length / 2
        parts.append(_ellipse_mm(centre, tip_dir, length / 2, FINGER_MM[1] / 2, z - 8.0))
    thumb_dir = across + ahead * 0.6
    thumb_dir /= np.linalg.norm(thumb_dir)
    thumb = palm + across * PALM_HALF_MM[1] * 0.9 + thumb_dir * 25.0
    parts.append(_ellipse_mm(thumb, thumb_dir, 32.0, 11.0, z - 4.0))
    return parts


def paint_hand(
    image_bgr: np.ndarray, camera: CameraModel, palm_mat_xy_mm: npt.ArrayLike
) -> np.ndarray:
    """The picture with a hand over the mat at ``palm_mat_xy_mm``.

    Not a rendered solid but paint: the outline of :func:`hand_outline_mm`
    projected through the camera, filled with a skin colour (scaled to the
    picture's brightness, rounder-looking towards the middle), its edge
    blurred soft, and a faint soft shadow beside it.
    """
    palm = np.asarray(palm_mat_xy_mm, dtype=np.float64)
    h, w = image_bgr.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    for poly_mm in hand_outline_mm(palm):
        px = camera.mat_to_image(poly_mm)
        px = np.clip(px, -4 * w, 5 * w)  # far off-frame points would overflow int32
        cv2.fillPoly(mask, [np.round(px).astype(np.int32)], 255, cv2.LINE_AA)
    # Pixel size of the palm sets the blur: the same softness at any scale.
    palm_px = camera.mat_to_image(
        np.array(
            [
                [palm[0], palm[1], HAND_HEIGHT_MM],
                [palm[0] + PALM_HALF_MM[1], palm[1], HAND_HEIGHT_MM],
            ]
        )
    )
    scale_px = max(2.0, float(np.hypot(*(palm_px[1] - palm_px[0]))))
    alpha = cv2.GaussianBlur(mask.astype(np.float32) / 255.0, (0, 0), max(0.7, scale_px * 0.06))
    inside = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 5)
    rounded = np.sqrt(np.clip(inside / (0.5 * scale_px), 0.0, 1.0))
    shade = 0.72 + 0.3 * rounded
    shift = int(round(scale_px * 0.35))
    shadow = cv2.GaussianBlur(np.roll(alpha, (shift, shift), axis=(0, 1)), (0, 0), scale_px * 0.3)
    # The picture's own exposure: a hand in a dim picture is dim too.
    brightness = float(np.clip(np.median(image_bgr) / 110.0, 0.6, 1.25))
    skin = np.asarray(SKIN_BGR, np.float32)[None, None, :] * brightness
    img = image_bgr.astype(np.float32) * (1.0 - 0.3 * shadow[..., None])
    hand = skin * shade[..., None]
    out = img * (1.0 - alpha[..., None]) + hand * alpha[..., None]
    return np.asarray(np.clip(out + 0.5, 0, 255), dtype=np.uint8)


def hand_path(
    from_mat_xy_mm: npt.ArrayLike, to_mat_xy_mm: npt.ArrayLike, j: int, frames: int
) -> tuple[np.ndarray, bool]:
    """Where the palm is in hand frame ``j`` of ``frames``, and whether the wink has yet to move.

    The first quarter of the time the hand is over the wink (taking the
    shot), the last quarter over where it comes to rest, and in between it
    crosses over smoothly. The wink moves half-way through: whenever the
    hand is over either place, that place is hidden while it changes.
    """
    f = (j + 0.5) / frames
    g = float(np.clip((f - 0.25) / 0.5, 0.0, 1.0))
    g = g * g * (3.0 - 2.0 * g)
    start = np.asarray(from_mat_xy_mm, dtype=np.float64)
    end = np.asarray(to_mat_xy_mm, dtype=np.float64)
    return start + (end - start) * g, f < 0.5


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class GameFiles:
    """What :func:`write_game` wrote, and how long the renders took."""

    frames: tuple[Path, ...]
    truths: tuple[Path, ...]
    record: Path
    shots: Path
    video: Path | None
    video_index: Path | None
    render_s: tuple[float, ...]


def record_json(record: GameRecord) -> str:
    """The record as RECORD.json text (``pass`` by its alias, absent fields left out)."""
    return json.dumps(record.model_dump(mode="json", by_alias=True, exclude_none=True), indent=1)


def write_game(plan: PlannedGame, out_dir: str | Path, *, video: bool = False) -> GameFiles:
    """Render the game and write its frames, ground truth, record and (optionally) video.

    Parameters
    ----------
    plan : PlannedGame
        From :func:`plan_game`.
    out_dir : str or Path
        Created if missing; files of the same names are overwritten.
    video : bool
        Also write ``game.mp4`` and ``video.json``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    render_s: list[float] = []
    images = render_positions(plan, render_s)
    # Separate noise streams: the stills are the same with or without --video.
    still_rng = np.random.default_rng([plan.seed, zlib.crc32(b"tools.scenegen.game stills")])
    frames, truths = [], []
    for k, (image, truth) in enumerate(zip(images, plan.truths, strict=True)):
        jpg = out / f"frame_{k:03d}.jpg"
        js = out / f"frame_{k:03d}.json"
        jpg.write_bytes(photo_jpeg(image, still_rng))
        js.write_text(json.dumps(truth, indent=1) + "\n")
        frames.append(jpg)
        truths.append(js)
    record_path = out / "record.json"
    record_path.write_text(record_json(plan.record) + "\n")
    shots_path = out / "shots.json"
    shots_path.write_text(
        json.dumps(
            {
                "seed": plan.seed,
                "profile": plan.profile,
                "squidge_off_winner": plan.record.squidge_off_winner.value,
                "shots": [s.to_json_dict() for s in plan.shots],
            },
            indent=1,
        )
        + "\n"
    )
    video_path = index_path = None
    if video:
        video_path, index_path = _write_video(plan, images, out)
    return GameFiles(
        frames=tuple(frames),
        truths=tuple(truths),
        record=record_path,
        shots=shots_path,
        video=video_path,
        video_index=index_path,
        render_s=tuple(render_s),
    )


def _write_video(plan: PlannedGame, images: list[np.ndarray], out: Path) -> tuple[Path, Path]:
    """``game.mp4`` (settled positions with a hand between them) and ``video.json``."""
    rng = np.random.default_rng([plan.seed, zlib.crc32(b"tools.scenegen.game video")])
    h, w = images[0].shape[:2]
    path = out / "game.mp4"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), VIDEO_FPS, (w, h))
    if not writer.isOpened():
        raise OSError(f"cannot open a video writer for {path}")
    hold = max(1, round(SETTLED_HOLD_S * VIDEO_FPS))
    hand = max(1, round(HAND_S * VIDEO_FPS))
    segments: list[dict[str, Any]] = []
    hands: list[dict[str, Any]] = []
    n = 0
    try:
        for k, image in enumerate(images):
            if k > 0:
                shot = plan.shots[k - 1]
                start, end = np.array(shot.from_mat_xy_mm), np.array(shot.to_mat_xy_mm)
                hands.append(
                    {
                        "first_frame": n,
                        "frames": hand,
                        "shot": shot.index,
                        "from_mat_xy_mm": [round(v, 1) for v in shot.from_mat_xy_mm],
                        "to_mat_xy_mm": [round(v, 1) for v in shot.to_mat_xy_mm],
                    }
                )
                for j in range(hand):
                    palm, before = hand_path(start, end, j, hand)
                    under = images[k - 1] if before else image
                    writer.write(_noisy(paint_hand(under, plan.camera, palm), rng))
                    n += 1
            segments.append({"first_frame": n, "frames": hold, "shows": f"frame_{k:03d}"})
            for _ in range(hold):
                writer.write(_noisy(image, rng))
                n += 1
    finally:
        writer.release()
    index = out / "video.json"
    index.write_text(
        json.dumps(
            {
                "video": path.name,
                "fps": VIDEO_FPS,
                "frame_size_wh": [w, h],
                "frame_count": n,
                "occluder": "a skin-coloured hand and forearm painted over the render "
                "(soft edge and shadow), moving along the wink's path",
                "segments": segments,
                "hands": hands,
            },
            indent=1,
        )
        + "\n"
    )
    return path, index


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.scenegen.game --seed N [--shots K] ... --out DIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.scenegen.game",
        description="Render a tiddlywinks game shot by shot from a still camera, with ground "
        "truth per frame and the true game record.",
    )
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--shots", type=int, default=6, help="how many shots (default 6)")
    parser.add_argument("--profile", choices=GAME_PROFILES, default="overhead")
    parser.add_argument("--video", action="store_true", help="also write game.mp4 and video.json")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="image size factor (same game, e.g. 0.25)"
    )
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args(argv)
    if args.shots < 0:
        parser.error(f"--shots must be 0 or more, got {args.shots}")
    if not 0.05 <= args.scale <= 4.0:
        parser.error(f"--scale must be between 0.05 and 4, got {args.scale}")
    start = time.perf_counter()
    plan = plan_game(args.seed, args.shots, profile=args.profile, image_scale=args.scale)
    planned_s = time.perf_counter() - start
    files = write_game(plan, args.out, video=args.video)
    total_s = time.perf_counter() - start
    for shot in plan.shots:
        onto = f" onto {shot.onto_id}" if shot.onto_id else ""
        print(f"shot {shot.index}: {shot.colour.value} {shot.kind} {shot.wink_id}{onto}")
    renders = files.render_s
    print(
        f"{len(files.frames)} frames in {args.out}"
        + (f", video {files.video}" if files.video else "")
        + f"; planned in {planned_s:.1f} s, render {sum(renders) / len(renders):.1f} s per "
        f"frame, {total_s:.1f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
