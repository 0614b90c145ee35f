"""The squidge-off (rule 5.4): which colour starts the game.

Each colour plays one wink towards the pot. The winner is the colour whose
wink ends nearest the pot, measured from the wink's nearest edge (5.4.1).
Potted winks are equally near and nearer than any unpotted wink; winks that
left the playing volume are equally far and further than any other. A tie
for nearest is resquidged among the tied colours only (5.4.2).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass

from rules.board import POT_BASE_DIAMETER_MM, Colour, WinkSize


class SquidgeOutcome(enum.StrEnum):
    """Where a squidge-off wink came to rest."""

    ON_MAT = "on_mat"
    POTTED = "potted"
    """Rule 5.4.1: nearer than any unpotted wink; all potted winks tie."""
    OFF = "off"
    """Rule 5.4.1: further than any wink on the mat; all such winks tie."""


@dataclass(frozen=True)
class SquidgeWink:
    """One colour's squidge-off wink.

    Parameters
    ----------
    outcome : SquidgeOutcome
    mat_xy_mm : (2,) tuple of float, or None
        Plan-view centre in the canonical mat frame (pot at the origin);
        needed only when ``outcome`` is ``ON_MAT``.
    size : WinkSize
        Gives the radius used to find the nearest edge.
    """

    outcome: SquidgeOutcome
    mat_xy_mm: tuple[float, float] | None = None
    size: WinkSize = WinkSize.SMALL


@dataclass(frozen=True)
class SquidgeOffResult:
    """The squidge-off's winner, or the colours that must resquidge.

    Exactly one of ``winner`` and ``resquidge`` is set. ``resquidge`` holds
    the tied colours in turn order (rule 5.4.2).
    """

    winner: Colour | None
    resquidge: tuple[Colour, ...] = ()

    def __bool__(self) -> bool:
        return self.winner is not None


#: Two distances closer than this are a tie (measurement cannot split them).
TIE_TOLERANCE_MM = 1e-6


def distance_to_pot_mm(wink: SquidgeWink) -> float:
    """Rule 5.4.1: distance from the pot to the wink's nearest edge.

    Measured from the pot's base in plan view, i.e. the gap a referee
    would measure on the mat; potted winks are ``-inf`` and winks off the
    playing volume ``+inf`` so that the ordering of 5.4.1 falls out.
    """
    if wink.outcome is SquidgeOutcome.POTTED:
        return -math.inf
    if wink.outcome is SquidgeOutcome.OFF:
        return math.inf
    if wink.mat_xy_mm is None:
        raise ValueError("a squidge-off wink on the mat needs its position (mat_xy_mm)")
    x_mm, y_mm = wink.mat_xy_mm
    centre_mm = math.hypot(x_mm, y_mm)
    return centre_mm - wink.size.diameter_mm / 2 - POT_BASE_DIAMETER_MM / 2


def squidge_off(winks: Mapping[Colour, SquidgeWink]) -> SquidgeOffResult:
    """Rule 5.4: the colour nearest the pot wins; ties resquidge among themselves.

    Parameters
    ----------
    winks : mapping of Colour to SquidgeWink
        The colours taking part: all four at first, only the tied ones in a
        resquidge (5.4.2).

    Returns
    -------
    SquidgeOffResult
        The winner, or the tied colours that resquidge. When every wink went
        off the playing volume they all tie and all resquidge.

    Raises
    ------
    ValueError
        When no colour takes part, or a wink on the mat has no position.
    """
    if not winks:
        raise ValueError("a squidge-off needs at least one colour")
    distances = {colour: distance_to_pot_mm(w) for colour, w in winks.items()}
    best = min(distances.values())
    nearest = tuple(
        c
        for c in Colour
        if c in distances and (distances[c] == best or abs(distances[c] - best) <= TIE_TOLERANCE_MM)
    )
    if len(nearest) == 1:
        return SquidgeOffResult(winner=nearest[0])
    return SquidgeOffResult(winner=None, resquidge=nearest)
