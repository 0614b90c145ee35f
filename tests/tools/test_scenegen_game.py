"""A generated game, shot by shot: frames, ground truth, the true record and the video."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from rules.board import Colour
from rules.engine import Game, replay_record
from rules.events import EventType
from rules.record import load_record
from tools.groundtruth import load_scene
from tools.scenegen.game import (
    FREE_CLEARANCE_MM,
    PlannedGame,
    hand_path,
    main,
    plan_game,
    record_json,
)
from tools.scenegen.geometry import beyond_baseline_mm, signed_plan_gap

SEED = 7
SHOTS = 3


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small game written by the command line, with its video."""
    out = tmp_path_factory.mktemp("game")
    args = ["--seed", str(SEED), "--shots", str(SHOTS), "--scale", "0.25", "--video"]
    assert main([*args, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def six_shots() -> PlannedGame:
    """A six-shot game planned but not rendered (it squops, then pots)."""
    return plan_game(SEED, 6)


def _truth(out: Path, k: int) -> dict[str, Any]:
    return dict(json.loads((out / f"frame_{k:03d}.json").read_text()))


def _poses(truth: dict[str, Any]) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    return {w["id"]: (tuple(w["centre_mm"]), tuple(w["axis"])) for w in truth["winks"]}


def test_one_frame_per_settled_position_with_its_ground_truth(written: Path) -> None:
    jpgs = sorted(written.glob("frame_*.jpg"))
    assert [p.stem for p in jpgs] == [f"frame_{k:03d}" for k in range(SHOTS + 1)]
    for jpg in jpgs:
        scene = load_scene(jpg.with_suffix(".json"))
        image = cv2.imread(str(jpg))
        assert image is not None
        assert (image.shape[1], image.shape[0]) == scene.camera.image_size_wh == (480, 270)


def test_first_frame_is_the_starting_position_with_all_24_unplayed(written: Path) -> None:
    scene = load_scene(written / "frame_000.json")
    assert len(scene.winks) == 24
    assert {w.status.value for w in scene.winks} == {"unplayed"}


def test_record_loads_and_replays_in_the_engines_turn_order(written: Path) -> None:
    record = load_record(written / "record.json")
    assert [s.t for s in record.shots] == [0.0, 30.0, 60.0]
    game, next_turn = replay_record(record)
    assert not [e for e in game.events if e.type is EventType.WRONG_COLOUR]
    # No pot in three shots: the colours go round from the squidge-off winner.
    first = record.squidge_off_winner
    assert [s.colour for s in record.shots] == [first, first.next(), first.next().next()]
    assert next_turn.colour is first.next().next().next()


def test_record_boards_are_the_frames_ground_truth(written: Path) -> None:
    record = load_record(written / "record.json")
    for k, shot in enumerate(record.shots, start=1):
        truth = load_scene(written / f"frame_{k:03d}.json")
        assert shot.board is not None
        statuses = {w.id: w.status for w in shot.board.winks}
        assert statuses == {w.id: w.status for w in truth.winks}


def test_each_shot_moves_exactly_the_wink_it_says(written: Path) -> None:
    shots = json.loads((written / "shots.json").read_text())["shots"]
    assert len(shots) == SHOTS
    for k, shot in enumerate(shots, start=1):
        before, after = _poses(_truth(written, k - 1)), _poses(_truth(written, k))
        moved = [wid for wid in after if after[wid] != before[wid]]
        assert moved == [shot["wink"]]
        # The first shots bring one unplayed wink of the shooter's colour into play.
        assert shot["kind"] == "enter"
        assert shot["wink"].startswith(shot["colour"])


def test_the_moved_wink_changes_the_picture_where_it_lands(written: Path) -> None:
    shot = json.loads((written / "shots.json").read_text())["shots"][0]
    truth = load_scene(written / "frame_001.json")
    u, v = (round(c) for c in truth.by_id[shot["wink"]].pixel_centre or (0, 0))
    before = cv2.imread(str(written / "frame_000.jpg")).astype(np.float32)
    after = cv2.imread(str(written / "frame_001.jpg")).astype(np.float32)
    at_wink = np.abs(after[v, u] - before[v, u]).max()
    elsewhere = np.abs(after[:40, :40] - before[:40, :40]).mean()  # a corner of table
    assert at_wink > 30.0
    assert elsewhere < 5.0


def test_same_seed_gives_the_same_record(written: Path, six_shots: PlannedGame) -> None:
    assert record_json(plan_game(SEED, SHOTS).record) + "\n" == (
        (written / "record.json").read_text()
    )
    assert record_json(plan_game(SEED, 6).record) == record_json(six_shots.record)
    other = plan_game(SEED + 1, SHOTS).record
    assert record_json(other) + "\n" != (written / "record.json").read_text()


def test_the_camera_does_not_change_the_game(written: Path) -> None:
    oblique = plan_game(SEED, SHOTS, profile="oblique", image_scale=0.25)
    overhead = json.loads((written / "shots.json").read_text())["shots"]
    assert [s.to_json_dict() for s in oblique.shots] == overhead
    overhead_camera = load_scene(written / "frame_000.json").camera
    assert not np.allclose(oblique.camera.rotation, overhead_camera.rotation)


def test_video_holds_each_position_with_a_hand_between(written: Path) -> None:
    index = json.loads((written / "video.json").read_text())
    segments, hands = index["segments"], index["hands"]
    assert len(segments) == SHOTS + 1
    assert [s["shows"] for s in segments] == [f"frame_{k:03d}" for k in range(SHOTS + 1)]
    assert len(hands) == SHOTS
    capture = cv2.VideoCapture(str(written / "game.mp4"))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame.astype(np.float32))
    assert len(frames) == index["frame_count"]
    assert segments[-1]["first_frame"] + segments[-1]["frames"] == len(frames)
    # A settled segment is still; a hand frame differs from the settled frame before it.
    seg = segments[0]
    still = np.abs(frames[seg["first_frame"]] - frames[seg["first_frame"] + 1]).mean()
    hand_frame = frames[hands[0]["first_frame"]]
    occluded = np.abs(hand_frame - frames[seg["first_frame"]]).mean()
    assert still < 1.5
    assert occluded > 4 * still


def test_hand_starts_over_the_wink_and_ends_where_it_lands() -> None:
    start, end = (-500.0, 100.0), (200.0, -50.0)
    first, before_first = hand_path(start, end, 0, 5)
    last, before_last = hand_path(start, end, 4, 5)
    assert np.allclose(first, start) and before_first
    assert np.allclose(last, end) and not before_last


def test_entered_winks_land_clear_in_front_of_their_own_baseline(six_shots: PlannedGame) -> None:
    entries = [s for s in six_shots.shots if s.kind == "enter"]
    assert len(entries) == 4
    for shot in entries:
        layout = six_shots.layouts[shot.index + 1]
        wink = next(w for w in layout.winks if w.id == shot.wink_id)
        ahead_mm = -beyond_baseline_mm(wink.centre[:2], layout.corners[wink.colour])
        assert ahead_mm >= wink.radius_mm + FREE_CLEARANCE_MM
        for other in layout.winks:
            if other.id != wink.id and other.placement != "potted":
                assert signed_plan_gap(wink, other) >= FREE_CLEARANCE_MM


def test_one_shot_squops_an_opponent_with_a_clear_overlap(six_shots: PlannedGame) -> None:
    squops = [s for s in six_shots.shots if s.kind == "squop"]
    assert len(squops) == 1
    shot = squops[0]
    assert shot.onto_id is not None
    truth = {w["id"]: w for w in six_shots.truths[shot.index + 1]["winks"]}
    assert truth[shot.wink_id]["squops"] == [shot.onto_id]
    assert truth[shot.onto_id]["status"] == "squopped"
    assert Colour(truth[shot.onto_id]["colour"]).partnership is not shot.colour.partnership
    by_id = {w.id: w for w in six_shots.layouts[shot.index + 1].winks}
    assert signed_plan_gap(by_id[shot.wink_id], by_id[shot.onto_id]) <= -5.0
    # Nothing else overlaps anything: the squop is the only pair in the final frame.
    final = six_shots.facts[-1].squops
    assert {(u, low) for u, lows in final.items() for low in lows} == {(shot.wink_id, shot.onto_id)}


def test_a_pot_earns_the_potting_colour_another_shot(six_shots: PlannedGame) -> None:
    pots = [s for s in six_shots.shots if s.kind == "pot"]
    assert len(pots) == 1
    shot = pots[0]
    truth = {w["id"]: w for w in six_shots.truths[shot.index + 1]["winks"]}
    assert truth[shot.wink_id]["status"] == "potted"
    game = Game.from_record(six_shots.record)
    game.replay(six_shots.record.shots)
    assert [e.type for e in game.events].count(EventType.EXTRA_SHOT) == 1
    assert game.next_turn().colour is shot.colour


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="'closeup'.*overhead"):
        plan_game(1, 2, profile="closeup")
