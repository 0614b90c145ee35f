"""Rendered piles show the ground truth's upper wink on top, pixel by pixel."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from tests.tools.solids import solid_from_truth
from tools.groundtruth import Scene
from tools.scenegen import generate_scene, pixel_and_in_image
from tools.scenegen.geometry import WinkSolid, mid_plane_z, plan_polygon, rim_points

_HUE_DEG = {"red": 0.0, "yellow": 55.0, "green": 120.0, "blue": 220.0}
# Pixels this close to an outline mix two colours through anti-aliasing and lens blur.
_EDGE_PX = 2


def _fill_mask(cam: CameraModel, points_mm: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """uint8 (H, W) mask of the convex hull of the points' projections; empty if any is behind."""
    mask = np.zeros(hw, np.uint8)
    cam_z_mm = (points_mm @ cam.rotation.T + cam.translation_mm)[:, 2]
    if np.any(cam_z_mm <= 0):
        return mask
    image_xy_px, _ = pixel_and_in_image(cam, points_mm)
    hull = cv2.convexHull(np.round(image_xy_px * 16).astype(np.int32))
    cv2.fillConvexPoly(mask, hull, 1, cv2.LINE_8, 4)
    return mask


def _silhouette(cam: CameraModel, wink: WinkSolid, hw: tuple[int, int]) -> np.ndarray:
    half = wink.thickness_mm / 2
    rims = np.vstack(
        [rim_points(wink, -half, wink.radius_mm, 48), rim_points(wink, half, wink.radius_mm, 48)]
    )
    return _fill_mask(cam, rims, hw)


def _upper_colour_share(scene: Scene, image_bgr: np.ndarray) -> list[tuple[str, str, float, int]]:
    """For each two-colour squop pair: (upper, lower, share of pixels nearer the upper's hue, n).

    The pixels are those of the plan overlap seen on the upper wink's top face,
    away from its outline and from every other wink's silhouette.
    """
    hw = (image_bgr.shape[0], image_bgr.shape[1])
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV_FULL)
    hue_deg = hsv[..., 0].astype(np.float64) * 360.0 / 256.0
    solids = {w.id: solid_from_truth(w) for w in scene.winks}
    silhouettes = {
        wid: _silhouette(scene.camera, s, hw)
        for wid, s in solids.items()
        if s.placement != "potted"
    }
    kernel = np.ones((2 * _EDGE_PX + 1, 2 * _EDGE_PX + 1), np.uint8)
    found = []
    for upper in scene.winks:
        for low_id in upper.squops:
            lower = scene.by_id[low_id]
            if lower.colour is upper.colour:
                continue
            up, low = solids[upper.id], solids[low_id]
            overlap = plan_polygon(up).intersection(plan_polygon(low))
            if overlap.geom_type != "Polygon" or overlap.is_empty:
                continue
            ring = np.asarray(overlap.exterior.coords)[:-1]
            top_z = [mid_plane_z(up, (x, y)) + up.thickness_mm / 2 for x, y in ring]
            region = cv2.erode(_fill_mask(scene.camera, np.column_stack([ring, top_z]), hw), kernel)
            others = np.zeros(hw, np.uint8)
            for wid, sil in silhouettes.items():
                if wid not in (upper.id, low_id):
                    others |= sil
            region &= 1 - cv2.dilate(others, kernel)
            rows, cols = np.nonzero(region)
            if len(rows) == 0:
                continue
            hues = hue_deg[rows, cols]

            def off(colour: str, hues: np.ndarray = hues) -> np.ndarray:
                d = np.abs(hues - _HUE_DEG[colour]) % 360.0
                return np.minimum(d, 360.0 - d)

            share = float(np.mean(off(upper.colour.value) < off(lower.colour.value)))
            found.append((upper.id, low_id, share, len(rows)))
    return found


@pytest.mark.parametrize(
    "seed",
    [
        502,  # blue-S1 on yellow-S3, both leaning: the upper centre is 0.02 mm lower and farther
        504,  # red-S4 on green-S2: the upper wink's centre is 0.23 mm below the lower one's
        606,  # yellow-S3 on red-S1: the upper wink's centre is 0.57 mm below the lower one's
    ],
)
def test_closeup_piles_show_the_upper_wink_over_the_whole_overlap(seed: int) -> None:
    scene_out = generate_scene("closeup", seed, image_scale=0.25)
    scene = Scene.from_json_dict(scene_out.ground_truth, where=scene_out.scene_id)
    pairs = [p for p in _upper_colour_share(scene, scene_out.image_bgr) if p[3] >= 20]
    assert pairs, "no two-colour pile with enough visible overlap to judge"
    for upper_id, lower_id, share, count in pairs:
        # Sensor noise and chroma blur flip a few pixels; a wrong order flips nearly all.
        assert share > 0.9, (upper_id, lower_id, share, count)
