"""The squidge-off (rule 5.4): nearest edge, potted nearest, off furthest, ties resquidge."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.board import Colour, WinkSize
from rules.squidge_off import (
    TIE_TOLERANCE_MM,
    SquidgeOutcome,
    SquidgeWink,
    distance_to_pot_mm,
    squidge_off,
)

B, G, R, Y = Colour.BLUE, Colour.GREEN, Colour.RED, Colour.YELLOW
ON, POT, OFF = SquidgeOutcome.ON_MAT, SquidgeOutcome.POTTED, SquidgeOutcome.OFF


def on(x: float, y: float = 0.0, size: WinkSize = WinkSize.SMALL) -> SquidgeWink:
    return SquidgeWink(ON, (x, y), size)


def test_nearness_is_measured_from_the_nearest_edge() -> None:
    # 5.4.1: a large wink whose centre is further away can still be nearer.
    small = on(100.0, size=WinkSize.SMALL)  # edge 100 - 8 - 19 = 73 mm from the pot base
    large = on(0.0, 102.0, size=WinkSize.LARGE)  # edge 102 - 11 - 19 = 72 mm
    assert distance_to_pot_mm(small) == pytest.approx(73.0)
    assert distance_to_pot_mm(large) == pytest.approx(72.0)
    assert squidge_off({B: small, G: large}).winner is G


def test_a_potted_wink_beats_any_wink_on_the_mat() -> None:
    # 5.4.1: potted winks are nearer than any unpotted wink.
    assert squidge_off({B: on(20.0), G: SquidgeWink(POT), R: on(300.0)}).winner is G


def test_two_potted_winks_tie_and_only_they_resquidge() -> None:
    # 5.4.1 and 5.4.2: potted winks are equally near; the tie is among them only.
    result = squidge_off(
        {B: SquidgeWink(POT), G: on(5.0), R: SquidgeWink(POT), Y: SquidgeWink(OFF)}
    )
    assert result.winner is None
    assert result.resquidge == (B, R)
    assert not result


def test_off_winks_are_furthest_and_lose_to_any_wink_on_the_mat() -> None:
    assert squidge_off({B: SquidgeWink(OFF), Y: on(800.0)}).winner is Y


def test_all_winks_off_all_resquidge() -> None:
    result = squidge_off({c: SquidgeWink(OFF) for c in Colour})
    assert result.resquidge == (B, G, R, Y)


def test_equal_distances_on_the_mat_tie() -> None:
    result = squidge_off({B: on(100.0), G: on(0.0, 100.0), R: on(300.0)})
    assert result.resquidge == (B, G)


def test_distances_equal_but_for_float_rounding_tie() -> None:
    # 5.4.2: 125.26 - 8 - 19 and 128.26 - 11 - 19 are both 98.26 mm, but not as floats.
    small, large = on(125.26, size=WinkSize.SMALL), on(128.26, size=WinkSize.LARGE)
    assert distance_to_pot_mm(small) != distance_to_pot_mm(large)
    assert squidge_off({B: small, G: large}).resquidge == (B, G)


def test_a_resquidge_takes_only_the_tied_colours() -> None:
    # 5.4.2: the second round is played by blue and red alone.
    assert squidge_off({B: on(50.0), R: on(40.0)}).winner is R


def test_a_wink_on_the_mat_needs_a_position() -> None:
    with pytest.raises(ValueError, match="position"):
        squidge_off({B: SquidgeWink(ON)})


# ---- properties -----------------------------------------------------------------

outcome = st.one_of(
    st.just(SquidgeWink(POT)),
    st.just(SquidgeWink(OFF)),
    st.builds(
        lambda r, size: SquidgeWink(ON, (r, 0.0), size),
        st.floats(30.0, 900.0),
        st.sampled_from(list(WinkSize)),
    ),
)
entries = st.dictionaries(st.sampled_from(list(Colour)), outcome, min_size=1)


@given(entries)
def test_exactly_one_winner_or_at_least_two_tied(winks: dict[Colour, SquidgeWink]) -> None:
    result = squidge_off(winks)
    if result.winner is not None:
        assert result.resquidge == ()
        assert result.winner in winks
    else:
        assert len(result.resquidge) >= 2
        assert set(result.resquidge) <= set(winks)


@given(entries)
def test_the_winner_is_no_further_than_any_other(winks: dict[Colour, SquidgeWink]) -> None:
    # 5.4.1: the winner, or every colour that resquidges, is nearest, and every other colour is
    # further. "Tied" means equal to within TIE_TOLERANCE_MM, the float rounding of the edge
    # distance (a small wink at 57 mm and a large one at 60 mm are both 30 mm away).
    result = squidge_off(winks)
    chosen = {result.winner} if result.winner else set(result.resquidge)
    best = min(distance_to_pot_mm(w) for w in winks.values())
    for colour, wink in winks.items():
        distance_mm = distance_to_pot_mm(wink)
        # Potted is -inf and off is +inf: equal infinities are a tie, not nan.
        beyond_best_mm = 0.0 if distance_mm == best else distance_mm - best
        if colour in chosen:
            assert beyond_best_mm <= TIE_TOLERANCE_MM
        else:
            assert beyond_best_mm > TIE_TOLERANCE_MM


@given(entries)
def test_a_resquidge_among_the_tied_keeps_them_tied(winks: dict[Colour, SquidgeWink]) -> None:
    # Replaying the same shots among the tied colours gives the same tie (5.4.2 needs new shots).
    result = squidge_off(winks)
    if result.winner is None:
        again = squidge_off({c: winks[c] for c in result.resquidge})
        assert again.resquidge == result.resquidge
