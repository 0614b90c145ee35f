"""Plan-view geometry of winks against known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rules.board import Colour, WinkSize
from tools.scenegen.geometry import (
    WinkSolid,
    baseline_ends,
    compute_facts,
    lowest_z,
    mid_plane_z,
    plan_polygon,
    signed_plan_gap,
    upper_of,
)
from tools.scenegen.layout import (
    flat_at,
    lean_on,
    make_layout,
    place_at_gap,
    tipped_over_edge,
)


def _wink(wid: str, x: float, y: float, *, large: bool = False, bevel: float = 0.25) -> WinkSolid:
    size = WinkSize.LARGE if large else WinkSize.SMALL
    return flat_at(
        WinkSolid(
            id=wid,
            colour=Colour.BLUE,
            size=size,
            radius_mm=size.diameter_mm / 2,
            thickness_mm=1.6,
            bevel_mm=bevel,
            centre_mm=(0.0, 0.0, 0.8),
        ),
        (x, y),
    )


@pytest.mark.parametrize(
    ("distance", "expected"),
    [
        (30.0, 11.0),  # clear gap: 30 - 8 - 11
        (19.5, 0.5),  # marginal gap
        (18.4, -0.6),  # marginal overlap
        (12.0, -7.0),  # deep overlap
    ],
)
def test_flat_discs_gap_is_centre_distance_minus_radii(distance: float, expected: float) -> None:
    a = _wink("blue-S1", 0.0, 0.0)
    b = _wink("blue-L1", distance * math.cos(0.3), distance * math.sin(0.3), large=True)
    assert signed_plan_gap(a, b) == pytest.approx(expected, abs=0.02)
    assert signed_plan_gap(b, a) == pytest.approx(expected, abs=0.02)


def test_tilted_disc_outline_shrinks_along_the_tilt() -> None:
    tilt = math.radians(20.0)
    w = _wink("blue-L1", 0.0, 0.0, large=True, bevel=0.0).with_pose(
        (0.0, 0.0, 5.0), (math.sin(tilt), 0.0, math.cos(tilt))
    )
    minx, miny, maxx, maxy = plan_polygon(w).bounds
    # Half-width along x: r cos t + (h/2) sin t; across: r.
    assert (maxx - minx) / 2 == pytest.approx(11 * math.cos(tilt) + 0.8 * math.sin(tilt), abs=0.02)
    assert (maxy - miny) / 2 == pytest.approx(11.0, abs=0.02)
    assert lowest_z(w) == pytest.approx(5.0 - 0.8 * math.cos(tilt) - 11 * math.sin(tilt))


@pytest.mark.parametrize("target", [-1.2, -0.3, -5.0])
def test_lean_on_reaches_the_target_gap_with_its_low_edge_on_the_mat(target: float) -> None:
    lower = _wink("blue-S1", 50.0, 20.0)
    upper = _wink("blue-L1", 0.0, 0.0, large=True)
    leaned = lean_on(upper, lower, np.array([0.6, 0.8]), target)
    assert signed_plan_gap(leaned, lower) == pytest.approx(target, abs=1e-3)
    assert lowest_z(leaned) == pytest.approx(0.0, abs=1e-9)
    assert leaned.tilt_deg > 0
    assert upper_of(leaned, lower) == leaned.id


def test_place_at_gap_slides_to_an_exact_gap() -> None:
    fixed = _wink("blue-S1", 0.0, 0.0)
    mover = _wink("blue-S2", 0.0, 0.0)
    placed = place_at_gap(mover, fixed, np.array([1.0, 1.0]), 0.7)
    assert signed_plan_gap(placed, fixed) == pytest.approx(0.7, abs=1e-3)


def test_baseline_meets_the_edges_where_the_rules_put_it() -> None:
    p1, p2 = baseline_ends((914.4, 457.2))
    assert p1 == pytest.approx((793.73, 457.2), abs=1e-2)
    assert p2 == pytest.approx((914.4, 215.861), abs=1e-3)


def test_facts_for_a_hand_built_pile_and_an_off_wink() -> None:
    low = _wink("blue-S1", 100.0, 0.0)
    top = lean_on(_wink("blue-L1", 0.0, 0.0, large=True), low, np.array([1.0, 0.0]), -3.0)
    off = _wink("blue-S2", 910.0, 0.0)  # straddles the short edge
    far = _wink("blue-S3", -300.0, 0.0)
    facts = compute_facts([low, top, off, far])
    assert facts.status == {
        "blue-S1": "squopped",
        "blue-L1": "free",
        "blue-S2": "off",
        "blue-S3": "free",
    }
    assert facts.squops["blue-L1"] == ["blue-S1"]
    assert facts.pile["blue-L1"] == facts.pile["blue-S1"] == 1
    assert facts.pile["blue-S3"] is None
    assert facts.nearest_id["blue-S1"] == "blue-L1"
    assert facts.nearest_gap["blue-S1"] == pytest.approx(-3.0, abs=1e-3)


def test_a_wink_touching_the_pot_base_reports_the_tiny_gap() -> None:
    touching = _wink("blue-S1", 19.0 + 8.0 + 0.03, 0.0)
    facts = compute_facts([touching])
    assert facts.pot_gap["blue-S1"] == pytest.approx(0.03, abs=0.01)


@pytest.mark.parametrize(
    "beyond_mm",
    [
        1.6,  # a fifth of a small wink's radius past the edge
        6.5,  # most of it past: steeper
    ],
)
def test_a_wink_tipped_over_the_edge_rests_on_the_felts_edge_and_the_table(
    beyond_mm: float,
) -> None:
    edge_y = 457.2
    wink = _wink("blue-S1", 0.0, 0.0)
    tipped = tipped_over_edge(wink, (30.0, edge_y + beyond_mm), (0.0, 1.0), beyond_mm, -2.5)
    # Its low rim on the table, 2.5 mm below the felt's top ...
    assert lowest_z(tipped) == pytest.approx(-2.5, abs=1e-6)
    # ... and its underside on the felt's edge, the high side over the mat.
    n = tipped.normal
    underside_at_edge = mid_plane_z(tipped, (30.0, edge_y)) - (tipped.thickness_mm / 2) / n[2]
    assert underside_at_edge == pytest.approx(0.0, abs=1e-6)
    assert n[1] > 0 and abs(n[0]) < 1e-12
    # A thin disc's answer (the vision model): tan(t) * d + r * sin(t) = 2.5.
    # The bevel lets the real one tip a little further.
    thin = math.degrees(
        next(
            t
            for t in np.linspace(0.0, 0.6, 60001)
            if math.tan(t) * beyond_mm + wink.radius_mm * math.sin(t) >= 2.5
        )
    )
    assert thin - 0.1 <= tipped.tilt_deg <= thin + 3.0


def test_layout_with_tip_over_edge_has_a_wink_past_the_edge_by_less_than_its_radius() -> None:
    for seed in range(4):
        layout = make_layout(np.random.default_rng(seed), tip_over_edge=True)
        (off,) = [w for w in layout.winks if w.placement == "off"]
        x_mm, y_mm = off.centre[:2]
        beyond = max(abs(x_mm) - 914.4, abs(y_mm) - 457.2)
        assert 0.0 < beyond < off.radius_mm
        assert off.tilt_deg > 3.0
        assert lowest_z(off) == pytest.approx(layout.table_z_mm, abs=1e-6)


def test_layout_is_deterministic_per_seed() -> None:
    a = make_layout(np.random.default_rng(5))
    b = make_layout(np.random.default_rng(5))
    assert [w.centre_mm for w in a.winks] == [w.centre_mm for w in b.winks]
    assert a.corners == b.corners


@pytest.mark.parametrize(
    ("radius_px", "aspect"),
    [
        (3.0, 1.0),  # a far small wink
        (7.3, 0.6),  # an overhead wink seen obliquely
        (60.0, 0.8),  # a closeup wink
        (200.0, 1.0),  # a big object on the coarser grid
    ],
)
def test_polygon_coverage_keeps_area_and_centroid(radius_px: float, aspect: float) -> None:
    # OpenCV's own anti-aliasing grows shapes by ~0.7 px; ours must not bias size or position.
    from shapely.geometry import Polygon

    from tools.scenegen.render import _coverage

    centre = np.array([250.37, 251.81])
    ang = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    poly = np.stack(
        [centre[0] + radius_px * np.cos(ang), centre[1] + aspect * radius_px * np.sin(ang)], -1
    )
    got = _coverage(poly, (1000, 1000))
    assert got is not None
    cov, x0, y0 = got
    ys, xs = np.mgrid[y0 : y0 + cov.shape[0], x0 : x0 + cov.shape[1]]
    exact = Polygon(poly)
    area = float(cov.sum())
    assert (area - exact.area) / exact.length == pytest.approx(0.0, abs=0.02)  # edge shift, px
    assert float((cov * xs).sum()) / area == pytest.approx(exact.centroid.x, abs=0.04)
    assert float((cov * ys).sum()) / area == pytest.approx(exact.centroid.y, abs=0.04)


def test_painter_draws_a_wink_after_the_wink_it_leans_on_even_when_its_centre_is_lower() -> None:
    from calibration.camera import CameraModel
    from tools.scenegen.layout import Layout
    from tools.scenegen.render import _painter_order, make_canvas

    below = _wink("blue-S1", 0.0, 0.0).with_centre((0.0, 0.0, 3.0))  # centre higher
    above = _wink("blue-L1", 15.0, 0.0, large=True)  # squops below
    layout = Layout(corners={}, winks=[above, below], pot_material="white", mat_thickness_mm=3.0)
    layout.mat_present = False
    cam = CameraModel(
        (320, 240),
        np.array([[300.0, 0, 159.5], [0, 300.0, 119.5], [0, 0, 1]]),
        np.zeros(5),
        np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]]),
        np.array([0.0, 0.0, 1500.0]),
    )
    canvas = make_canvas(cam)
    plain = [o.id for _, o in _painter_order(layout, canvas, {})]  # type: ignore[union-attr]
    assert plain == ["blue-L1", "blue-S1"]  # depth and height alone get it wrong
    order = [o.id for _, o in _painter_order(layout, canvas, {"blue-L1": ["blue-S1"]})]  # type: ignore[union-attr]
    assert order == ["blue-S1", "blue-L1"]


@pytest.mark.parametrize(
    ("y_mm", "before_pot"),
    [
        (-27.5, True),  # against the pot's far side: the pot hides it
        (27.5, False),  # against its near side: it hides the pot's foot
    ],
)
def test_painter_puts_a_wink_against_the_pot_behind_or_before_it_by_which_side_it_lies(
    y_mm: float, before_pot: bool
) -> None:
    # A camera tilted 40 degrees, standing on the +y side. The height bias
    # that orders winks among winks must not carry a wink behind the pot
    # onto the pot's wall.
    from calibration.camera import CameraModel
    from tools.scenegen.layout import Layout
    from tools.scenegen.render import _painter_order, make_canvas

    tilt = np.radians(40.0)
    down = np.diag([1.0, -1.0, -1.0])
    rotation = (
        np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
        @ down
    )
    position = np.array([0.0, np.tan(tilt) * 1500.0, 1500.0])
    cam = CameraModel(
        (320, 240),
        np.array([[300.0, 0, 159.5], [0, 300.0, 119.5], [0, 0, 1]]),
        np.zeros(5),
        rotation,
        -rotation @ position,
    )
    layout = Layout(
        corners={}, winks=[_wink("blue-S1", 0.0, y_mm)], pot_material="black", mat_thickness_mm=3.0
    )
    kinds = [kind for kind, _ in _painter_order(layout, make_canvas(cam), {})]
    assert kinds == (["wink", "pot"] if before_pot else ["pot", "wink"])
