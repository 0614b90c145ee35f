"""tools.groundtruth: the shared scene format round-trips and turns into the canonical frame."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rules.board import Colour, WinkStatus
from tools.groundtruth import GroundTruthError, Scene, load_scene, to_canonical_frame

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
SAMPLE_JSONS = sorted(SAMPLES.glob("*.json"))


def _scene_dict(blue_corner: tuple[float, float]) -> dict:
    """A minimal hand-written scene: a camera straight above the pot and one wink."""
    corners_clockwise = [(-914.4, 457.2), (914.4, 457.2), (914.4, -457.2), (-914.4, -457.2)]
    k = corners_clockwise.index(blue_corner)
    baselines = []
    for i, colour in enumerate(("blue", "green", "red", "yellow")):
        cx, cy = corners_clockwise[(k + i) % 4]
        baselines.append(
            {
                "colour": colour,
                "corner": [cx, cy],
                "p1": [793.73 * np.sign(cx), cy],
                "p2": [cx, 215.861 * np.sign(cy)],
            }
        )
    counts = {
        c: {"potted": 0, "free": 0, "squopped": 0, "unplayed": 0, "off": 0, "tiddlies": 0}
        for c in ("blue", "green", "red", "yellow")
    }
    counts["blue"]["free"] = 1
    counts["blue"]["tiddlies"] = 1
    return {
        "format": "tiddlywinks-gt/1",
        "scene_id": "hand_00001",
        "profile": "overhead",
        "units": "mm",
        "frame": "test",
        "mat": {"length_mm": 1828.8, "width_mm": 914.4, "thickness_mm": 3.0, "table_z_mm": -3.0},
        "baselines": baselines,
        "pot": {
            "centre_mm": [0.0, 0.0, 0.0],
            "height_mm": 38.0,
            "top_diameter_mm": 48.0,
            "base_diameter_mm": 38.0,
            "material": "white",
        },
        "camera": {
            "width": 1920,
            "height": 1080,
            "K": [[1200.0, 0.0, 959.5], [0.0, 1200.0, 539.5], [0.0, 0.0, 1.0]],
            "dist": [0.0, 0.0, 0.0, 0.0, 0.0],
            "R": [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]],
            "t": [0.0, 0.0, 1500.0],
            "position_mm": [0.0, 0.0, 1500.0],
        },
        "winks": [
            {
                "id": "blue-L1",
                "colour": "blue",
                "size": "large",
                "diameter_mm": 22.0,
                "thickness_mm": 1.8,
                "bevel_mm": 0.25,
                "centre_mm": [300.0, 150.0, 0.9],
                "axis": [0.1, 0.0, 0.99498744],
                "tilt_deg": 5.739,
                "status": "free",
                "squops": [],
                "squopped_by": [],
                "pile": None,
                "nearest_plan_gap_mm": None,
                "nearest_id": None,
                "pot_gap_mm": None,
                # 1200 * 300 / 1499.1 right of centre, 1200 * 150 / 1499.1 above it.
                "pixel_centre": [959.5 + 1200 * 300 / 1499.1, 539.5 - 1200 * 150 / 1499.1],
                "in_image": True,
            }
        ],
        "counts": counts,
        "marginal_pairs": [],
        "disputed": None,
    }


@pytest.mark.parametrize("path", SAMPLE_JSONS, ids=lambda p: p.stem)
def test_sample_ground_truth_round_trips(path: Path) -> None:
    original = json.loads(path.read_text())
    scene = load_scene(path)
    assert json.loads(json.dumps(scene.to_json_dict())) == original


def test_hand_written_scene_round_trips_and_projects() -> None:
    data = _scene_dict((-914.4, 457.2))
    scene = Scene.from_json_dict(data)
    assert json.loads(json.dumps(scene.to_json_dict())) == json.loads(json.dumps(data))
    wink = scene.by_id["blue-L1"]
    np.testing.assert_allclose(
        scene.camera.mat_to_image([wink.centre_mm]), [wink.pixel_centre], atol=1e-9
    )


def test_canonical_frame_leaves_blue_at_positive_y_alone() -> None:
    scene = Scene.from_json_dict(_scene_dict((914.4, 457.2)))
    assert to_canonical_frame(scene) is scene


def test_canonical_frame_turns_blue_at_negative_y_through_half_turn() -> None:
    scene = Scene.from_json_dict(_scene_dict((914.4, -457.2)))
    turned = to_canonical_frame(scene)
    assert turned.blue_corner_mm == pytest.approx((-914.4, 457.2))
    wink = turned.by_id["blue-L1"]
    assert wink.centre_mm == pytest.approx((-300.0, -150.0, 0.9))
    assert wink.axis == pytest.approx((-0.1, 0.0, 0.99498744))
    assert turned.baseline(Colour.RED).corner == pytest.approx((914.4, -457.2))
    assert turned.baseline(Colour.BLUE).p1 == pytest.approx((-793.73, 457.2))
    # The camera did not move: the same pixel, the same camera centre.
    np.testing.assert_allclose(
        turned.camera.mat_to_image([wink.centre_mm]), [wink.pixel_centre], atol=1e-9
    )
    np.testing.assert_allclose(turned.camera.position_mm, scene.camera.position_mm, atol=1e-9)
    assert turned.camera_info["position_mm"] == pytest.approx([0.0, 0.0, 1500.0])


@pytest.mark.parametrize("path", SAMPLE_JSONS, ids=lambda p: p.stem)
def test_canonical_frame_keeps_pixels_of_sample_scenes(path: Path) -> None:
    scene = load_scene(path)
    if not scene.baselines:
        pytest.skip("no mat in this scene")
    turned = to_canonical_frame(scene)
    assert turned.blue_corner_mm[1] > 0
    seen = [w for w in turned.winks if w.in_image]
    projected = turned.camera.mat_to_image([w.centre_mm for w in seen])
    np.testing.assert_allclose(projected, [w.pixel_centre for w in seen], atol=0.01)
    # Clockwise seen from above: blue -> green is a quarter turn clockwise.
    b = np.array(turned.baseline(Colour.BLUE).corner)
    g = np.array(turned.baseline(Colour.GREEN).corner)
    assert b[0] * g[1] - b[1] * g[0] < 0


def test_scene_converts_to_a_valid_board() -> None:
    scene = load_scene(SAMPLES / "overhead_00101.json")
    board = scene.to_board()
    board.validate_or_raise()
    assert len(board.winks) == 24
    potted = board.winks_with_status(WinkStatus.POTTED)
    assert all(w.mat_xy is None for w in potted)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(format="other/9"), "format"),  # wrong format tag
        (lambda d: d["camera"].pop("K"), "camera"),  # camera without intrinsics
        (lambda d: d["winks"][0].update(status="hovering"), "winks.0.status"),  # unknown status
    ],
)
def test_malformed_ground_truth_is_refused_with_its_field(mutate, message: str) -> None:
    data = _scene_dict((-914.4, 457.2))
    mutate(data)
    with pytest.raises(GroundTruthError, match=message):
        Scene.from_json_dict(data)


def test_non_json_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(GroundTruthError, match="not valid JSON"):
        load_scene(bad)
