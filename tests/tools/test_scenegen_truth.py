"""The committed sample images' ground truth agrees with itself and with the geometry."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from rules.board import BASELINE_DISTANCE_MM, Colour, WinkSize
from tests.tools.solids import solid_from_truth
from tools.groundtruth import Scene, load_scene
from tools.scenegen import generate_scene
from tools.scenegen.geometry import WinkSolid, compute_facts, signed_plan_gap

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
SCENES = sorted(SAMPLES.glob("*.json"))
MAT_SCENES = [p for p in SCENES if not p.stem.startswith("nomat")]


def _solids(scene: Scene) -> list[WinkSolid]:
    return [solid_from_truth(w) for w in scene.winks]


def test_sample_set_covers_every_profile() -> None:
    profiles = {p.stem.split("_")[0] for p in SCENES}
    assert profiles == {"overhead", "oblique", "closeup", "start", "nomat", "partial"}
    for path in SCENES:
        assert path.with_suffix(".jpg").exists(), path


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_image_size_matches_camera(path: Path) -> None:
    scene = load_scene(path)
    image = cv2.imread(str(path.with_suffix(".jpg")))
    assert image is not None
    assert (image.shape[1], image.shape[0]) == scene.camera.image_size_wh


@pytest.mark.parametrize("path", MAT_SCENES, ids=lambda p: p.stem)
def test_pixel_centre_is_the_camera_projection_of_the_centre(path: Path) -> None:
    scene = load_scene(path)
    seen = [w for w in scene.winks if w.in_image]
    assert seen, "no wink in view"
    projected = scene.camera.mat_to_image([w.centre_mm for w in seen])
    np.testing.assert_allclose(projected, [w.pixel_centre for w in seen], atol=0.006)


@pytest.mark.parametrize("path", MAT_SCENES, ids=lambda p: p.stem)
def test_statuses_squops_and_piles_agree(path: Path) -> None:
    scene = load_scene(path)
    winks = scene.by_id
    assert len(winks) == 24
    for colour in Colour:
        mine = [w for w in scene.winks if w.colour is colour]
        assert [w.size for w in mine].count(WinkSize.LARGE) == 2
        assert len(mine) == 6
    for w in scene.winks:
        for low in w.squops:
            assert w.id in winks[low].squopped_by
            assert winks[low].status.value == "squopped"
            assert winks[low].pile == w.pile is not None
        if w.squopped_by:
            assert w.status.value == "squopped"
        if w.status.value == "squopped":
            assert w.squopped_by
        if w.status.value == "potted":
            assert not w.squops and not w.squopped_by
            assert w.nearest_plan_gap_mm is None
        if w.status.value == "unplayed":
            corner = scene.baseline(w.colour).corner
            d = np.asarray(corner) / np.linalg.norm(corner)
            assert float(np.dot(w.mat_xy_mm, d)) > BASELINE_DISTANCE_MM


@pytest.mark.parametrize("path", MAT_SCENES, ids=lambda p: p.stem)
def test_counts_and_tiddlies_agree_with_winks(path: Path) -> None:
    scene = load_scene(path)
    for colour, counts in scene.counts.items():
        statuses = [w.status.value for w in scene.winks if w.colour is colour]
        assert counts.potted == statuses.count("potted")
        assert counts.free == statuses.count("free")
        assert counts.squopped == statuses.count("squopped")
        assert counts.unplayed == statuses.count("unplayed")
        assert counts.off == statuses.count("off")
        assert counts.tiddlies == 3 * counts.potted + counts.free


@pytest.mark.parametrize("path", MAT_SCENES, ids=lambda p: p.stem)
def test_geometry_recomputed_from_the_json_gives_the_same_truth(path: Path) -> None:
    scene = load_scene(path)
    facts = compute_facts(_solids(scene))
    for w in scene.winks:
        assert facts.status[w.id] == w.status.value, w.id
        assert sorted(facts.squops[w.id]) == list(w.squops), w.id
    listed = {tuple(m.ids): m for m in scene.marginal_pairs}
    recomputed = {tuple(m["ids"]): m for m in facts.marginal_pairs}  # type: ignore[misc]
    assert set(listed) == set(recomputed)
    by_id = {s.id: s for s in _solids(scene)}
    for ids, pair in listed.items():
        gap = signed_plan_gap(by_id[ids[0]], by_id[ids[1]])
        assert abs(gap) <= 1.5 + 1e-6
        assert gap == pytest.approx(pair.plan_gap_mm, abs=0.01)
        assert pair.squop == (gap < 0)
        if pair.squop:
            assert pair.upper in ids and ids[0 if pair.upper == ids[1] else 1] in (
                scene.by_id[pair.upper].squops
            )


def test_game_scenes_hold_marginal_pairs_of_both_kinds() -> None:
    kinds = set()
    for path in MAT_SCENES:
        if path.stem.startswith(("overhead", "oblique")):
            for pair in load_scene(path).marginal_pairs:
                kinds.add(pair.squop)
    assert kinds == {True, False}


@pytest.mark.parametrize(
    "path", [p for p in SCENES if p.stem.startswith("closeup")], ids=lambda p: p.stem
)
def test_closeups_name_a_disputed_pair_in_view(path: Path) -> None:
    scene = load_scene(path)
    assert scene.disputed is not None
    a, b = (scene.by_id[i] for i in scene.disputed.ids)
    assert a.in_image and b.in_image
    assert scene.disputed.squop == (scene.disputed.plan_gap_mm < 0)
    if scene.disputed.squop:
        assert scene.disputed.lower in scene.by_id[scene.disputed.upper].squops


def test_start_scene_has_every_wink_unplayed() -> None:
    scene = load_scene(SAMPLES / "start_00101.json")
    assert {w.status.value for w in scene.winks} == {"unplayed"}
    assert all(c.tiddlies == 0 for c in scene.counts.values())


def test_nomat_scene_says_no_mat() -> None:
    scene = load_scene(SAMPLES / "nomat_00101.json")
    assert not scene.mat_in_view
    assert scene.winks == () and scene.baselines == () and scene.pot is None


def test_partial_scene_has_a_mat_corner_out_of_frame() -> None:
    scene = load_scene(SAMPLES / "partial_00101.json")
    corners = np.array([b.corner for b in scene.baselines])
    px = scene.camera.mat_to_image(corners)
    w, h = scene.camera.image_size_wh
    inside = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    assert 1 <= int(inside.sum()) <= 2


def test_blue_corner_varies_across_samples() -> None:
    corners = {load_scene(p).blue_corner_mm for p in MAT_SCENES}
    assert len(corners) >= 3


def test_generator_is_deterministic_and_reproduces_the_committed_sample() -> None:
    first = generate_scene("overhead", 101)
    second = generate_scene("overhead", 101)
    assert np.array_equal(first.image_bgr, second.image_bgr)
    committed = json.loads((SAMPLES / "overhead_00101.json").read_text())
    assert json.loads(json.dumps(first.ground_truth)) == committed
    jpeg = cv2.imread(str(SAMPLES / "overhead_00101.jpg")).astype(np.float32)
    assert float(np.mean(np.abs(jpeg - first.image_bgr.astype(np.float32)))) < 3.0


def _hue_deg(bgr: np.ndarray) -> float:
    hsv = cv2.cvtColor(np.uint8([[np.clip(bgr, 0, 255)]]), cv2.COLOR_BGR2HSV_FULL)[0, 0]
    return float(hsv[0]) * 360.0 / 256.0


_HUE_DEG = {"red": 0.0, "yellow": 55.0, "green": 120.0, "blue": 220.0}


@pytest.mark.parametrize(
    "path",
    [p for p in SCENES if p.stem.startswith(("overhead", "oblique", "closeup"))],
    ids=lambda p: p.stem,
)
def test_picture_shows_the_ground_truth_upper_wink_on_deep_overlaps(path: Path) -> None:
    from tools.scenegen.geometry import mid_plane_z, plan_polygon

    scene = load_scene(path)
    image = cv2.imread(str(path.with_suffix(".jpg")))
    solids = {s.id: s for s in _solids(scene)}
    checked = 0
    for upper in scene.winks:
        for low_id in upper.squops:
            lower = scene.by_id[low_id]
            if (
                lower.colour is upper.colour
                or signed_plan_gap(solids[upper.id], solids[low_id]) > -3
            ):
                continue
            overlap = plan_polygon(solids[upper.id]).intersection(plan_polygon(solids[low_id]))
            # Only overlaps a few pixels deep can be read from the picture's colour.
            inner = overlap.buffer(-2.5 * scene.camera.mm_per_px_at(upper.centre_mm))
            if inner.is_empty:
                continue
            spot = inner.representative_point()
            z_top = mid_plane_z(solids[upper.id], (spot.x, spot.y)) + upper.thickness_mm / 2
            px = scene.camera.mat_to_image([[spot.x, spot.y, z_top]])[0]
            x, y = int(round(px[0])), int(round(px[1]))
            w, h = scene.camera.image_size_wh
            if not (2 <= x < w - 2 and 2 <= y < h - 2):
                continue
            bgr = image[y - 1 : y + 2, x - 1 : x + 2].reshape(-1, 3).mean(axis=0)
            hue = _hue_deg(bgr)

            def dist(colour: Colour, hue: float = hue) -> float:
                d = abs(hue - _HUE_DEG[colour.value]) % 360
                return min(d, 360 - d)

            assert dist(upper.colour) < dist(lower.colour), (upper.id, low_id, hue)
            checked += 1
    if checked == 0:
        pytest.skip("no deep two-colour overlap in this scene")


@pytest.mark.parametrize("path", MAT_SCENES, ids=lambda p: p.stem)
def test_upper_winks_rest_on_lower_winks_without_passing_through(path: Path) -> None:
    from shapely.geometry import Point

    from tools.scenegen.geometry import mid_plane_z, plan_polygon

    scene = load_scene(path)
    solids = {s.id: s for s in _solids(scene)}
    for upper in scene.winks:
        for low_id in upper.squops:
            a, b = solids[upper.id], solids[low_id]
            # Away from the rounded rims both faces are planes: compare them there.
            core = plan_polygon(a).buffer(-0.5).intersection(plan_polygon(b).buffer(-0.5))
            if core.is_empty:
                continue
            minx, miny, maxx, maxy = core.bounds
            for x in np.linspace(minx, maxx, 9):
                for y in np.linspace(miny, maxy, 9):
                    if not core.contains(Point(x, y)):
                        continue
                    underside = mid_plane_z(a, (x, y)) - a.thickness_mm / 2 / a.normal[2]
                    top = mid_plane_z(b, (x, y)) + b.thickness_mm / 2 / b.normal[2]
                    assert underside >= top - 0.05, (upper.id, low_id, x, y, underside - top)
