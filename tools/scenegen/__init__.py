"""The project's scene generator: tiddlywinks photos with exact ground truth.

``generate_scene(profile, seed)`` returns a rendered image and its ground
truth in the ``tiddlywinks-gt/1`` format of ``shared/scenes/README.md``;
``write_scene`` saves ``<profile>_<seed>.jpg`` and ``.json``. Everything is
deterministic per (profile, seed). Projection goes through
:class:`calibration.camera.CameraModel` so the geometry has one source of
truth.

Profiles: ``overhead``, ``oblique``, ``closeup``, ``start`` (overhead, all
24 winks unplayed behind their baselines, rule 5.2), ``nomat`` (table and
clutter only) and ``partial`` (overhead aimed off-centre: part of the mat is out
of frame, for bad-input tests).

Command line::

    python -m tools.scenegen --profile overhead --seed 101 --count 6 --out sample_images/

``--scale 0.25`` renders the same scene smaller (for fast tests); ``--wear``
adds felt creases, table gloss and a coloured light to the picture only.

Modules: :mod:`~tools.scenegen.layout` (game content from small physical
constructions), :mod:`~tools.scenegen.geometry` (exact solids: gaps,
squops, statuses), :mod:`~tools.scenegen.cameras` (poses and lenses per
profile), :mod:`~tools.scenegen.render` (the picture).
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.board import POT_BASE_DIAMETER_MM, POT_HEIGHT_MM, POT_TOP_DIAMETER_MM, Colour
from tools.groundtruth import GT_FORMAT
from tools.scenegen import cameras
from tools.scenegen.geometry import (
    HALF_LENGTH_MM,
    HALF_WIDTH_MM,
    SceneFacts,
    WinkSolid,
    baseline_ends,
    compute_facts,
)
from tools.scenegen.layout import Layout, make_clutter, make_layout
from tools.scenegen.render import FELT_COLOURS_BGR, TABLES_BY_NAME, render_scene

PROFILES = ("overhead", "oblique", "closeup", "start", "nomat", "partial")


class UnknownProfileError(ValueError):
    """A profile name the generator does not know."""


@dataclass(frozen=True)
class GeneratedScene:
    """One rendered scene: BGR image (H, W, 3) uint8 and its ground-truth dict."""

    scene_id: str
    image_bgr: np.ndarray
    ground_truth: dict[str, Any]
    jpeg_quality: int


def scene_rng(profile: str, seed: int) -> np.random.Generator:
    """The generator's random stream for one (profile, seed)."""
    return np.random.default_rng([int(seed), zlib.crc32(profile.encode())])


def generate_scene(
    profile: str,
    seed: int,
    *,
    image_scale: float = 1.0,
    wear: bool = False,
    felt: str | None = None,
    table: str | None = None,
    tip_over_edge: bool = False,
) -> GeneratedScene:
    """Lay out, photograph and describe one scene.

    Parameters
    ----------
    profile : str
        One of :data:`PROFILES`.
    seed : int
        With the profile, fixes everything about the scene.
    image_scale : float
        Render a smaller (or larger) picture of the very same scene: the
        layout and camera pose are unchanged, the image size and intrinsics
        are scaled (e.g. 0.25 for fast tests). The ground truth describes
        the scaled camera.
    wear : bool
        Also draw the marks of use: creases in the felt, a glossy table top,
        a coloured light. Changes the picture only, never the ground truth.
    felt, table : str, optional
        Force the felt colour (a key of ``render.FELT_COLOURS_BGR``) or the
        table (a key of ``render.TABLES_BY_NAME``, e.g. ``"beige-wood"``).
        Changes the picture only; every other draw stays as the seed gives it.
    tip_over_edge : bool
        Put a wink off the mat, tipped over the mat's edge, in a game in
        progress (see :func:`tools.scenegen.layout.make_layout`); the scene
        then differs from the same seed's without it.

    Raises
    ------
    UnknownProfileError
        When ``profile`` is not one of :data:`PROFILES`.
    """
    if profile not in PROFILES:
        raise UnknownProfileError(f"unknown profile {profile!r}; choose one of {PROFILES!r}")
    if felt is not None and felt not in FELT_COLOURS_BGR:
        raise ValueError(f"unknown felt {felt!r}; choose one of {tuple(FELT_COLOURS_BGR)!r}")
    if table is not None and table not in TABLES_BY_NAME:
        raise ValueError(f"unknown table {table!r}; choose one of {tuple(TABLES_BY_NAME)!r}")
    if not 0.05 <= image_scale <= 4.0:
        raise ValueError(f"image_scale must be between 0.05 and 4, got {image_scale!r}")
    rng = scene_rng(profile, seed)
    layout = make_layout(rng, start=profile == "start", tip_over_edge=tip_over_edge)
    disputed: dict[str, Any] | None = None
    if profile == "nomat":
        layout.mat_present = False
        layout.winks = []
        layout.distractors = make_clutter(rng, layout)
        facts = compute_facts([])
    else:
        facts = compute_facts(layout.winks)
    if profile in ("overhead", "start", "nomat"):
        sampled = cameras.overhead(rng)
    elif profile == "oblique":
        sampled = cameras.oblique(rng)
    elif profile == "partial":
        sampled = cameras.partial(rng)
    else:
        disputed, target = _choose_disputed(layout, facts, rng)
        sampled = cameras.closeup(rng, target)
    if image_scale != 1.0:
        sampled = cameras.scaled(sampled, image_scale)
    image = render_scene(
        layout, sampled.model, rng, squops=facts.squops, wear=wear, felt=felt, table=table
    )
    scene_id = f"{profile}_{seed:05d}"
    gt = ground_truth(scene_id, profile, layout, facts, sampled, disputed)
    quality = int(rng.integers(80, 88)) if profile == "closeup" else int(rng.integers(84, 95))
    return GeneratedScene(scene_id, image, gt, quality)


def write_scene(scene: GeneratedScene, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``<scene_id>.jpg`` and ``<scene_id>.json``; returns both paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jpg = out / f"{scene.scene_id}.jpg"
    js = out / f"{scene.scene_id}.json"
    ok, buf = cv2.imencode(".jpg", scene.image_bgr, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])
    if not ok:
        raise OSError(f"could not encode {jpg}")
    jpg.write_bytes(buf.tobytes())
    js.write_text(json.dumps(scene.ground_truth, indent=1) + "\n")
    return jpg, js


# --------------------------------------------------------------------------
# Ground truth
# --------------------------------------------------------------------------


def _choose_disputed(
    layout: Layout, facts: SceneFacts, rng: np.random.Generator
) -> tuple[dict[str, Any], np.ndarray]:
    by_id = {w.id: w for w in layout.winks}
    candidates = []
    for kind, ids in layout.disputable:
        a, b = ids
        key = (a, b) if a < b else (b, a)
        gap = facts.pair_gaps.get(key)
        if gap is None:
            continue
        if kind == "marginal" and abs(gap) > 1.5:
            continue
        candidates.append((kind, a, b, gap))
    if not candidates:
        raise RuntimeError("layout has no marginal pair or pile to dispute; generator bug")
    kind, a, b, gap = candidates[int(rng.integers(len(candidates)))]
    squop = gap < 0
    upper = lower = None
    if squop:
        upper = a if b in facts.squops[a] else b
        lower = b if upper == a else a
    disputed = {
        "ids": [a, b],
        "kind": kind,
        "squop": squop,
        "upper": upper,
        "lower": lower,
        "plan_gap_mm": round(gap, 4),
    }
    target = 0.5 * (by_id[a].centre + by_id[b].centre)
    target[2] = 0.0
    return disputed, target


def _valid_view_radius(cam: CameraModel) -> float:
    """Largest normalised radius the image corners reach (where distortion is trusted)."""
    w, h = cam.image_size_wh
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float64)
    norm = cam.undistort_image_points(corners)
    return float(np.max(np.hypot(norm[:, 0], norm[:, 1])))


def pixel_and_in_image(cam: CameraModel, points_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Projections (N, 2) and whether each lies in the frame where the lens model holds."""
    if len(points_mm) == 0:
        return np.zeros((0, 2)), np.zeros(0, dtype=bool)
    px = cam.mat_to_image(points_mm)
    cam_pts = points_mm @ cam.rotation.T + cam.translation_mm
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.hypot(cam_pts[:, 0], cam_pts[:, 1]) / cam_pts[:, 2]
    w, h = cam.image_size_wh
    inside = (
        (cam_pts[:, 2] > 0)
        & (radius <= _valid_view_radius(cam) * 1.02)
        & (px[:, 0] >= -0.5)
        & (px[:, 0] <= w - 0.5)
        & (px[:, 1] >= -0.5)
        & (px[:, 1] <= h - 0.5)
    )
    return px, inside


def _r(v: float | None, nd: int) -> float | None:
    return None if v is None else round(float(v), nd)


def ground_truth(
    scene_id: str,
    profile: str,
    layout: Layout,
    facts: SceneFacts,
    sampled: cameras.SampledCamera,
    disputed: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``tiddlywinks-gt/1`` dictionary for one scene."""
    cam = sampled.model
    baselines = []
    if layout.mat_present:
        for colour in Colour:
            corner = layout.corners[colour]
            p1, p2 = baseline_ends(corner)
            baselines.append(
                {
                    "colour": colour.value,
                    "corner": [round(corner[0], 3), round(corner[1], 3)],
                    "p1": [round(p1[0], 3), round(p1[1], 3)],
                    "p2": [round(p2[0], 3), round(p2[1], 3)],
                }
            )
    winks = [_wink_json(w) for w in layout.winks]
    centres = np.array([w["centre_mm"] for w in winks], dtype=np.float64).reshape(-1, 3)
    px, inside = pixel_and_in_image(cam, centres)
    for entry, solid, p, ok in zip(winks, layout.winks, px, inside, strict=True):
        entry["status"] = facts.status[solid.id]
        entry["squops"] = sorted(facts.squops[solid.id])
        entry["squopped_by"] = sorted(facts.squopped_by[solid.id])
        entry["pile"] = facts.pile[solid.id]
        entry["nearest_plan_gap_mm"] = _r(facts.nearest_gap[solid.id], 4)
        entry["nearest_id"] = facts.nearest_id[solid.id]
        entry["pot_gap_mm"] = _r(facts.pot_gap[solid.id], 4)
        entry["pixel_centre"] = [round(float(p[0]), 2), round(float(p[1]), 2)]
        entry["in_image"] = bool(ok)
    counts: dict[str, dict[str, int]] = {}
    for colour in Colour:
        statuses = [facts.status[w.id] for w in layout.winks if w.colour is colour]
        c = {s: statuses.count(s) for s in ("potted", "free", "squopped", "unplayed", "off")}
        c["tiddlies"] = 3 * c["potted"] + c["free"]
        counts[colour.value] = c
    marginal = [
        {**m, "plan_gap_mm": round(float(m["plan_gap_mm"]), 4)}  # type: ignore[arg-type]
        for m in facts.marginal_pairs
    ]
    camera = cam.to_json_dict()
    camera.update(sampled.info)
    gt: dict[str, Any] = {
        "format": GT_FORMAT,
        "scene_id": scene_id,
        "profile": profile,
        "units": "mm",
        "frame": "origin at mat centre; x along long side, y along short side, z up; mat top z=0",
        "mat": {
            "length_mm": round(2 * HALF_LENGTH_MM, 3),
            "width_mm": round(2 * HALF_WIDTH_MM, 3),
            "thickness_mm": layout.mat_thickness_mm,
            "table_z_mm": layout.table_z_mm,
        },
        "baselines": baselines,
        "pot": None
        if not layout.mat_present
        else {
            "centre_mm": [0.0, 0.0, 0.0],
            "height_mm": POT_HEIGHT_MM,
            "top_diameter_mm": POT_TOP_DIAMETER_MM,
            "base_diameter_mm": POT_BASE_DIAMETER_MM,
            "material": layout.pot_material,
        },
        "camera": camera,
        "winks": winks,
        "counts": counts,
        "marginal_pairs": marginal,
        "disputed": disputed,
        "generator": "tools.scenegen (generated, not photographed)",
    }
    if not layout.mat_present:
        gt["mat_in_view"] = False
    return gt


def _wink_json(w: WinkSolid) -> dict[str, Any]:
    n = w.normal
    return {
        "id": w.id,
        "colour": w.colour.value,
        "size": w.size.value,
        "diameter_mm": 2 * w.radius_mm,
        "thickness_mm": w.thickness_mm,
        "bevel_mm": w.bevel_mm,
        "centre_mm": [round(float(v), 3) for v in w.centre],
        "axis": [round(float(v), 5) for v in n],
        "tilt_deg": round(math.degrees(math.acos(min(1.0, float(n[2])))), 3),
    }
