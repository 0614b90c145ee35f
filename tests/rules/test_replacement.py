"""Rule 13.1: where a wink that left the playing volume goes back, and the mat's layout."""

from __future__ import annotations

import math

import pytest
from shapely.geometry import LineString, Point

from rules.board import (
    BASELINE_DISTANCE_MM,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    Colour,
    WinkSize,
)
from rules.replacement import MatLayout, live_baselines, replacement_position
from tests.rules.boardkit import make_board

HALF_L, HALF_W = MAT_LENGTH_MM / 2, MAT_WIDTH_MM / 2


def test_corners_go_clockwise_blue_green_red_yellow_with_blue_at_positive_y() -> None:
    for sign in (-1, 1):
        layout = MatLayout(sign)
        corners = [layout.corner_mat_xy(c) for c in Colour]
        assert corners[0][1] > 0
        assert corners[0][0] * sign > 0
        # Clockwise seen from above: the signed area of the corner polygon is negative.
        area = sum(
            x0 * y1 - x1 * y0
            for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True)
        )
        assert area < 0


def test_baselines_cross_the_diagonal_at_right_angles_three_feet_from_the_centre() -> None:
    # Rule 2.3.1
    layout = MatLayout()
    for colour in Colour:
        (ax, ay), (bx, by) = layout.baseline_mat_xy(colour)
        cx, cy = layout.corner_mat_xy(colour)
        norm = math.hypot(cx, cy)
        for px, py in ((ax, ay), (bx, by)):
            assert (px * cx + py * cy) / norm == pytest.approx(BASELINE_DISTANCE_MM)
        assert (bx - ax) * cx + (by - ay) * cy == pytest.approx(0.0, abs=1e-6)


def test_field_of_play_excludes_the_areas_behind_the_baselines() -> None:
    # Rule 3
    field = MatLayout().field_of_play()
    assert field.contains(Point(0, 0))
    assert not field.contains(Point(-HALF_L + 5, HALF_W - 5))  # blue's corner
    assert field.area < MAT_LENGTH_MM * MAT_WIDTH_MM


def test_replaced_wink_edge_is_22_mm_inside_the_boundary_near_where_it_left() -> None:
    # 13.1 (i): a small wink that left across the long edge at x = 100.
    spot = replacement_position(WinkSize.SMALL, (100.0, HALF_W + 10), [], [])
    x, y = spot.mat_xy_mm
    assert spot.satisfied
    assert x == pytest.approx(100.0, abs=0.5)
    assert y == pytest.approx(HALF_W - 22.0 - 8.0, abs=0.5)


def test_replaced_wink_keeps_ten_cm_from_other_winks() -> None:
    # 13.1 (ii): a wink sits right where the first choice would be.
    blocker = make_board(free={"green-L1": (100.0, HALF_W - 30.0)}).wink("green-L1")
    spot = replacement_position(WinkSize.SMALL, (100.0, HALF_W + 10), [blocker], [])
    gap = math.dist(spot.mat_xy_mm, (100.0, HALF_W - 30.0)) - 8.0 - 11.0
    assert gap >= 100.0 - 0.5
    assert spot.mat_xy_mm[1] == pytest.approx(HALF_W - 30.0, abs=0.5)  # still 22 mm in


def test_replaced_wink_keeps_ten_cm_from_a_baseline_with_unplayed_winks_behind_it() -> None:
    # 13.1 (iii): left near blue's baseline while blue still has unplayed winks.
    layout = MatLayout()
    (ax, ay), _ = layout.baseline_mat_xy(Colour.BLUE)
    left_at = (ax + 20.0, HALF_W + 5)
    with_live = replacement_position(WinkSize.SMALL, left_at, [], [Colour.BLUE], layout)
    without = replacement_position(WinkSize.SMALL, left_at, [], [], layout)
    line = LineString(layout.baseline_mat_xy(Colour.BLUE))
    assert line.distance(Point(with_live.mat_xy_mm)) - 8.0 >= 100.0 - 0.5
    assert line.distance(Point(without.mat_xy_mm)) - 8.0 < 100.0


def test_live_baselines_are_those_with_unplayed_winks() -> None:
    board = make_board(free=[f"blue-{w}" for w in ("L1", "L2", "S1", "S2", "S3", "S4")])
    assert live_baselines(board) == (Colour.GREEN, Colour.RED, Colour.YELLOW)


def test_layout_rejects_a_bad_sign() -> None:
    with pytest.raises(ValueError, match="blue_corner_x_sign"):
        MatLayout(0)
