"""The mat's layout and where a wink that left the playing volume goes back (rule 13.1).

The field of play (rule 3) is the mat less the four corner triangles behind
the baselines. Each baseline is the line ``p · d = 914.4 mm`` with ``d`` the
unit vector from the centre towards its corner (rule 2.3.1).

Corners are clockwise blue, green, red, yellow seen from above (rule 5.2),
and the canonical frame puts blue's corner at y > 0. Which of the two y > 0
corners is blue's is a property of the game, :class:`MatLayout`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import nearest_points

from rules.board import (
    BASELINE_DISTANCE_MM,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    REPLACEMENT_CLEARANCE_MM,
    REPLACEMENT_EDGE_INSET_MM,
    Board,
    Colour,
    Wink,
    WinkSize,
    WinkStatus,
)

_HALF_L = MAT_LENGTH_MM / 2
_HALF_W = MAT_WIDTH_MM / 2


@dataclass(frozen=True)
class MatLayout:
    """Which corner holds which colour.

    Parameters
    ----------
    blue_corner_x_sign : {-1, 1}
        Sign of x of blue's corner; blue's corner always has y > 0. With -1
        (the default) the corners are blue (-, +), green (+, +), red (+, -),
        yellow (-, -), clockwise seen from above.
    """

    blue_corner_x_sign: int = -1

    def __post_init__(self) -> None:
        if self.blue_corner_x_sign not in (-1, 1):
            raise ValueError(f"blue_corner_x_sign must be -1 or 1, got {self.blue_corner_x_sign!r}")

    def corner_mat_xy(self, colour: Colour) -> tuple[float, float]:
        """The mat corner of ``colour``'s baseline, in mm (rule 5.2)."""
        # Clockwise seen from above (x right, y up): (-,+) -> (+,+) -> (+,-) -> (-,-).
        ring = [(-1, 1), (1, 1), (1, -1), (-1, -1)]
        start = 0 if self.blue_corner_x_sign == -1 else 1
        sx, sy = ring[(start + colour.turn_index) % 4]
        return (sx * _HALF_L, sy * _HALF_W)

    def baseline_mat_xy(self, colour: Colour) -> tuple[tuple[float, float], tuple[float, float]]:
        """The two ends of ``colour``'s baseline on the mat's edges (rule 2.3.1), mm."""
        cx, cy = self.corner_mat_xy(colour)
        norm = math.hypot(cx, cy)
        dx, dy = cx / norm, cy / norm
        # Points p on the line p·d = BASELINE_DISTANCE_MM that lie on the two edges
        # x = cx (the short edge) and y = cy (the long edge).
        y_on_short = (BASELINE_DISTANCE_MM - cx * dx) / dy
        x_on_long = (BASELINE_DISTANCE_MM - cy * dy) / dx
        return ((x_on_long, cy), (cx, y_on_short))

    def field_of_play(self) -> Polygon:
        """Rule 3: the mat less the four triangles behind the baselines."""
        mat = shapely.box(-_HALF_L, -_HALF_W, _HALF_L, _HALF_W)
        for colour in Colour:
            (ax, ay), (bx, by) = self.baseline_mat_xy(colour)
            mat = mat.difference(Polygon([(ax, ay), (bx, by), self.corner_mat_xy(colour)]))
        if not isinstance(mat, Polygon):
            raise TypeError("the field of play should be one polygon")
        return mat


@dataclass(frozen=True)
class Replacement:
    """Where rule 13.1 puts a wink back.

    Parameters
    ----------
    wink_id : str
    mat_xy_mm : (2,) tuple of float
        The wink's new centre.
    satisfied : bool
        False when no spot meets (ii) and (iii); then the wink goes to the
        nearest spot meeting (i) alone and an umpire should decide.
    """

    wink_id: str
    mat_xy_mm: tuple[float, float]
    satisfied: bool = True


def live_baselines(board: Board) -> tuple[Colour, ...]:
    """Rule 13.1 (iii): the colours that still have an unplayed wink behind their baseline."""
    return tuple(c for c in Colour if board.count(c, WinkStatus.UNPLAYED) > 0)


def replacement_position(
    size: WinkSize,
    left_at_mat_xy: tuple[float, float],
    others: Iterable[Wink],
    live: Iterable[Colour],
    layout: MatLayout = MatLayout(),
    *,
    wink_id: str = "",
) -> Replacement:
    """Rule 13.1: the spot for a wink that left the playing volume.

    As near as possible to where it left, subject to: (i) its nearest edge
    is 22 mm in from the boundary of the field of play; (ii) its nearest
    edge is at least 10 cm from the edge of any other wink; (iii) its
    nearest edge is at least 10 cm from any baseline with an unplayed wink
    behind it.

    Parameters
    ----------
    size : WinkSize
    left_at_mat_xy : (2,) tuple of float
        Where the wink left the playing volume (or was last seen), mm.
    others : iterable of Wink
        Winks on the field of play; those without a position are ignored.
    live : iterable of Colour
        Colours whose baselines still have unplayed winks behind them.
    layout : MatLayout

    Returns
    -------
    Replacement
    """
    radius_mm = size.diameter_mm / 2
    field = layout.field_of_play()
    # (i): the centre lies on the curve 22 mm + radius inside the boundary.
    inset = field.buffer(-(REPLACEMENT_EDGE_INSET_MM + radius_mm), join_style="mitre")
    ring = inset.exterior
    keep_out = []
    for other in others:
        xy = other.mat_xy
        if xy is None:
            continue
        keep_out.append(Point(xy).buffer(REPLACEMENT_CLEARANCE_MM + radius_mm + other.radius_mm))
    for colour in live:
        keep_out.append(
            LineString(layout.baseline_mat_xy(colour)).buffer(REPLACEMENT_CLEARANCE_MM + radius_mm)
        )
    allowed = ring.difference(shapely.union_all(keep_out)) if keep_out else ring
    target = Point(left_at_mat_xy)
    satisfied = not allowed.is_empty
    candidates = allowed if satisfied else ring
    spot = nearest_points(candidates, target)[0]
    return Replacement(wink_id=wink_id, mat_xy_mm=(spot.x, spot.y), satisfied=satisfied)
