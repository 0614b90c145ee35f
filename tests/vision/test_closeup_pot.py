"""The pot's top rim as evidence for the mat plane, on synthetic close-ups with known planes.

Winks are drawn as in ``test_review.py`` (hull of top and bottom rims); the
pot as the rules' truncated cone (rule 2.4: 38 mm base, 48 mm top, 38 mm
high): its wall the hull of both rims, its top a lighter lip round a darker
opening. A squidger is a flat disc 4 mm thick.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from closeup_camera import camera_over_origin, project, true_plane

from rules.board import POT_BASE_DIAMETER_MM, POT_HEIGHT_MM, POT_TOP_DIAMETER_MM
from vision.closeup import colour_distance
from vision.closeup_geometry import (
    DEFAULT_HFOV_DEG,
    MatPlane,
    SolidRim,
    fit_circle_known_radius,
    fit_plane_to_circles,
)
from vision.closeup_pot import (
    _FELT_LIKE,
    _MIN_STEP,
    NoPotFound,
    PotRim,
    _edge_points,
    _FeltDistances,
    _sample,
    find_pot_rim,
)
from vision.review import _pair_setup, _with_pot, rectify, review_photo

WIDTH, HEIGHT = 1600, 1200
FELT_BGR = (150, 160, 165)
RED = (40, 40, 200)
BLUE = (170, 60, 30)
POT_WALL_BGR = (215, 215, 215)
POT_LIP_BGR = (240, 240, 240)
POT_INSIDE_BGR = (110, 110, 110)


def _camera(tilt_deg: float, distance_mm: float, hfov_deg: float = DEFAULT_HFOV_DEG):
    """World (mat) to camera: looking at the origin from ``distance_mm``, tilted about x."""
    return camera_over_origin(tilt_deg, distance_mm, (WIDTH, HEIGHT), hfov_deg)


def _ring(x, y, radius, z, n=720):
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([x + radius * np.cos(t), y + radius * np.sin(t), np.full(n, z)])


def _tilt_error_deg(plane: MatPlane, truth: MatPlane) -> float:
    return math.degrees(math.acos(min(1.0, abs(float(plane.normal @ truth.normal)))))


def render(winks, *, pot_xy=None, squidger=None, tilt_deg=10.0, distance_mm=250.0, seed=0):
    """Winks ``(x, y, diameter, bgr)`` flat on the mat, a pot at ``pot_xy``, a squidger.

    ``squidger`` is ``(x, y, diameter)``: a black disc 4 mm thick lying on the mat.
    """
    intr, rot, trans = _camera(tilt_deg, distance_mm)
    ss = 4
    img = np.zeros((HEIGHT * ss, WIDTH * ss, 3), np.uint8)
    img[:] = FELT_BGR

    def fill(pts_mm, bgr):
        px = project(intr, rot, trans, pts_mm) * ss
        cv2.fillPoly(img, [np.round(px).astype(np.int32)], bgr)

    def solid(bottom_mm, top_mm, side_bgr, top_bgr):
        px = np.vstack([project(intr, rot, trans, bottom_mm), project(intr, rot, trans, top_mm)])
        hull = cv2.convexHull((px * ss).astype(np.float32)).reshape(-1, 2)
        cv2.fillPoly(img, [np.round(hull).astype(np.int32)], side_bgr)
        fill(top_mm, top_bgr)

    if pot_xy is not None:
        x, y = pot_xy
        top = _ring(x, y, POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM)
        solid(_ring(x, y, POT_BASE_DIAMETER_MM / 2, 0.0), top, POT_WALL_BGR, POT_LIP_BGR)
        fill(_ring(x, y, POT_TOP_DIAMETER_MM / 2 - 1.5, POT_HEIGHT_MM), POT_INSIDE_BGR)
    if squidger is not None:
        x, y, d = squidger
        solid(_ring(x, y, d / 2, 0.0), _ring(x, y, d / 2, 4.0), (15, 15, 15), (30, 30, 30))
    for x, y, d, bgr in winks:
        side = tuple(int(0.6 * c) for c in bgr)
        solid(_ring(x, y, d / 2, 0.0), _ring(x, y, d / 2, 1.6), side, bgr)
    img = cv2.resize(img, (WIDTH, HEIGHT), interpolation=cv2.INTER_AREA)
    noise = np.random.default_rng(seed).normal(0, 2.0, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8), true_plane(intr, rot, trans)


#: A disputed pair at the centre, nothing else on the mat but (in some tests) the pot.
PAIR = [(0.0, 0.0, 22.0, RED), (19.3, 0.0, 16.0, BLUE)]


@pytest.mark.parametrize(
    ("tilt_deg", "start_off_deg"),
    [
        (5.0, 4.0),  # nearly straight down, where the rim's own shape barely shows the tilt
        (35.0, 5.0),  # a typical hand-held angle
    ],
)
def test_a_rim_at_the_pots_height_alone_gives_back_the_plane_it_was_projected_through(
    tilt_deg, start_off_deg
):
    intr, rot, trans = _camera(tilt_deg, 250.0)
    truth = true_plane(intr, rot, trans)
    # Only the far half of the rim, as seen past a pot's wall.
    ring = _ring(-40.0, 30.0, POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM, 360)[:180]
    rim = SolidRim(
        project(intr, rot, trans, ring),
        np.full(180, POT_HEIGHT_MM),
        np.full(180, POT_TOP_DIAMETER_MM / 2),
    )
    off = math.radians(tilt_deg + start_off_deg)
    start = MatPlane(intr, np.array([0.0, math.sin(off), math.cos(off)]), 1.05 * truth.distance_mm)
    plane = fit_plane_to_circles(start, [], [], solids=(rim,))
    assert _tilt_error_deg(plane, truth) < 0.05
    assert plane.distance_mm == pytest.approx(truth.distance_mm, rel=1e-3)


def test_rims_at_two_heights_fit_one_plane_and_the_heights_matter():
    intr, rot, trans = _camera(20.0, 250.0)
    truth = true_plane(intr, rot, trans)
    winks = [(0.0, 0.0, 22.0), (30.0, -20.0, 16.0)]
    wink_rims = [project(intr, rot, trans, _ring(x, y, d / 2, 0.0, 360)) for x, y, d in winks]
    pot_px = project(intr, rot, trans, _ring(-50.0, 20.0, 24.0, 38.0, 360))
    start = MatPlane(intr, truth.normal, 0.97 * truth.distance_mm)
    at_height = SolidRim(pot_px, np.full(360, 38.0), np.full(360, 24.0))
    plane = fit_plane_to_circles(
        start, wink_rims, [22.0, 16.0], thickness_mm=0.0, solids=(at_height,)
    )
    assert _tilt_error_deg(plane, truth) < 0.05
    assert plane.distance_mm == pytest.approx(truth.distance_mm, rel=1e-3)
    # The same rim taken as lying on the mat cannot fit with the winks.
    on_mat = SolidRim(pot_px, np.zeros(360), np.full(360, 24.0))
    wrong = fit_plane_to_circles(start, wink_rims, [22.0, 16.0], thickness_mm=0.0, solids=(on_mat,))
    assert _tilt_error_deg(wrong, truth) > 1.0


def test_the_pots_rim_is_found_where_it_is_drawn():
    image, truth = render(PAIR, pot_xy=(-55.0, 35.0), tilt_deg=30.0)
    # Found with the true plane, the rim lies on the pot's true top circle.
    pot = find_pot_rim(image, truth, ())
    assert isinstance(pot, PotRim)
    assert pot.arc_deg >= 150
    # On the true plane: a circle of the pot's size, within 0.1 mm rms, about
    # (within half a millimetre) the pot's true axis.
    assert pot.rms_mm < 0.1
    assert pot.diameter_mm == pytest.approx(POT_TOP_DIAMETER_MM, abs=0.5)
    on_mat = truth.to_plane(pot.rim_image_px, POT_HEIGHT_MM)
    true_centre = truth.to_plane(
        project(*_camera(30.0, 250.0), np.array([[-55.0, 35.0, POT_HEIGHT_MM]])), POT_HEIGHT_MM
    )[0]
    centre, _ = fit_circle_known_radius(on_mat, POT_TOP_DIAMETER_MM / 2, true_centre)
    assert float(np.hypot(*(centre - true_centre))) < 0.5


def test_the_pots_rim_brings_the_plane_nearer_its_true_tilt_than_two_winks_alone():
    # Nearly straight down, two winks fix the tilt loosely; the pot is in view.
    image, truth = render(PAIR, pot_xy=(-55.0, 35.0), tilt_deg=8.0, seed=3)
    setup = _pair_setup(image, pair=None, near_xy_px=None, seed=0)
    assert setup.rectified.pot is not None
    assert setup.pot_note is not None and "pot's rim" in setup.pot_note
    # The same winks without the pot: the plane the rim was combined with.
    winks = setup.rectified.winks
    alone = rectify(winks, (WIDTH, HEIGHT), detected=setup.detected)
    with_pot = _with_pot(alone, setup.rectified.pot)[0]
    assert with_pot.pot is not None
    # Two winks seen nearly straight down leave the plane 7-8 degrees off (their
    # mirror tilt fits about as well); the pot's rim brings it to under half that.
    assert _tilt_error_deg(alone.plane, truth) > 5.0
    assert _tilt_error_deg(with_pot.plane, truth) < 0.5 * _tilt_error_deg(alone.plane, truth)


def test_the_verdict_says_when_the_pot_helped_fit_the_plane():
    image, _ = render(PAIR, pot_xy=(-55.0, 35.0), tilt_deg=8.0, seed=3)
    verdict = review_photo(image)
    assert any("and the pot's rim" in note for note in verdict.notes)


def test_a_squidger_is_not_taken_for_the_pot():
    # A flat black disc 40 mm across where the pot would stand: round, big, but
    # its outline at the pot's height is far smaller than the pot's rim.
    image, _ = render(PAIR, squidger=(-55.0, 35.0, 40.0), tilt_deg=20.0)
    setup = _pair_setup(image, pair=None, near_xy_px=None, seed=0)
    assert setup.rectified.pot is None
    # Either no rim fits the pot's at all, or the one found is said to be set aside.
    assert setup.pot_note is None or "not" in setup.pot_note


def test_a_photo_without_a_pot_finds_none():
    image, truth = render(PAIR, tilt_deg=20.0)
    assert isinstance(find_pot_rim(image, truth, ()), NoPotFound)


def _edge_points_profile_by_profile(image_bgr, felt_lab, predicted_px, outward, search_px):
    """_edge_points as first written: each profile smoothed and searched on its own."""
    h, w = image_bgr.shape[:2]
    reach = search_px + 10.0
    lo = np.floor(np.maximum(predicted_px.min(axis=0) - reach, 0)).astype(int)
    hi = np.ceil(np.minimum(predicted_px.max(axis=0) + reach + 1, [w, h])).astype(int)
    crop = image_bgr[lo[1] : hi[1], lo[0] : hi[0]]
    raw = colour_distance(cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32), felt_lab)
    dist = np.asarray(cv2.GaussianBlur(raw.astype(np.float32), (0, 0), 1.0), dtype=np.float64)
    step = 0.5
    offsets = np.arange(-search_px - 8.0, search_px + 8.0 + step / 2, step)
    grid = (predicted_px - lo)[:, None, :] + offsets[None, :, None] * outward[:, None, :]
    prof = _sample(dist, grid)
    out = []
    band = np.abs(offsets) <= search_px
    side = np.ones(11) / 11
    mean = np.apply_along_axis(lambda r: np.convolve(r, side, mode="same"), 1, prof)
    shift = int(round(5.5 / step))
    inside_mean = np.roll(mean, shift, axis=1)
    outside_mean = np.roll(mean, -shift, axis=1)
    for k in range(len(prof)):
        p = prof[k]
        if not np.all(np.isfinite(p)):
            continue
        drop = -np.gradient(p, step)
        ok = (
            band & (outside_mean[k] <= _FELT_LIKE) & (inside_mean[k] - outside_mean[k] >= _MIN_STEP)
        )
        if not ok.any():
            continue
        i = int(np.argmax(np.where(ok, drop, -np.inf)))
        half = 0.5 * (float(inside_mean[k, i]) + float(outside_mean[k, i]))
        j = i
        while j > 0 and p[j] < half:
            j -= 1
        while j < len(p) - 1 and p[j + 1] >= half:
            j += 1
        if j >= len(p) - 1 or p[j] == p[j + 1]:
            continue
        t = offsets[j] + step * (p[j] - half) / (p[j] - p[j + 1])
        out.append(predicted_px[k] + t * outward[k])
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


@pytest.mark.parametrize("search_px", [4.0, 9.3, 40.0])
def test_the_rims_edge_found_on_all_profiles_at_once_is_the_profile_by_profile_one(search_px):
    image, truth = render(PAIR, pot_xy=(-55.0, 35.0), tilt_deg=30.0)
    felt_lab = np.median(cv2.cvtColor(image[::16, ::16], cv2.COLOR_BGR2LAB).reshape(-1, 3), axis=0)
    angles = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    ring = np.column_stack([np.cos(angles), np.sin(angles)])
    centre_px = project(*_camera(30.0, 250.0), np.array([[-55.0, 35.0, POT_HEIGHT_MM]]))
    centre_mm = truth.to_plane(centre_px, POT_HEIGHT_MM)[0]
    # Predicted a little off the true rim, as a first plane puts it.
    predicted = truth.to_image(
        centre_mm + [0.5, 0.3] + POT_TOP_DIAMETER_MM / 2 * ring, POT_HEIGHT_MM
    )
    outward = predicted - centre_px
    outward /= np.linalg.norm(outward, axis=1)[:, None]
    # Profiles that run off the photo (NaN samples) are passed over.
    predicted[:5, 0] = 2.0
    got = _edge_points(image, felt_lab, predicted, outward, search_px)
    assert len(got) > 100
    want = _edge_points_profile_by_profile(image, felt_lab, predicted, outward, search_px)
    assert np.array_equal(got, want)
    # Distances cut from a larger box converted first: the same points.
    kept = _FeltDistances(image, felt_lab)
    _edge_points(image, felt_lab, predicted, outward, 60.0, felt_distances=kept)
    got = _edge_points(image, felt_lab, predicted, outward, search_px, felt_distances=kept)
    assert len(kept._boxes) == 1
    assert np.array_equal(got, want)
