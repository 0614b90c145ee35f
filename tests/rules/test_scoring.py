"""Tiddlies, game points, pot-out scoring and the scoresheet notation (rules 19-21, F.1-F.3)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.board import Board, Colour, Partnership, WinkStatus
from rules.scoring import (
    EndedBy,
    GameFormat,
    format_points,
    notation,
    score_by_interference,
    score_by_pot_outs,
    score_by_tiddlies,
    share_rank_points,
    tiddlies,
)
from tests.rules.boardkit import make_board

B, G, R, Y = Colour.BLUE, Colour.GREEN, Colour.RED, Colour.YELLOW
BR, GY = Partnership.BLUE_RED, Partnership.GREEN_YELLOW


def f1_board() -> Board:
    """Example F.1's final position, wink by wink (red-S4 still unplayed)."""
    return make_board(
        potted=["blue-L1", "blue-L2", "blue-S1", "green-L1", "red-L1"],
        free=["blue-S2", "green-L2", "green-S1", "red-L2", "red-S1"]
        + ["yellow-L1", "yellow-L2", "yellow-S1"],
        squops={
            "yellow-L1": ["blue-S3", "blue-S4"],
            "blue-S2": ["green-S2", "green-S3", "green-S4"],
            "green-S1": ["red-S2", "red-S3"],
            "red-L2": ["yellow-S2", "yellow-S3", "yellow-S4"],
        },
    )


def test_f1_tiddlies_are_counted_wink_by_wink() -> None:
    # Example F.1: blue 3 potted + 1 free = 10; green 1 + 2 = 5; red 1 + 2 = 5 (its
    # unplayed wink counts nothing); yellow 0 + 3 = 3.
    board = f1_board()
    assert board.count(R, WinkStatus.UNPLAYED) == 1
    assert tiddlies(board) == {B: 10, G: 5, R: 5, Y: 3}


def test_f1_blue_four_green_and_red_share_three_notation_five_and_a_half() -> None:
    # Example F.1: 10, 5, 5, 3 tiddlies -> 4, 1½, 1½, 0 -> 5½–1½.
    score = score_by_tiddlies({B: 10, G: 5, R: 5, Y: 3})
    assert score.points == {B: 4, G: Fraction(3, 2), R: Fraction(3, 2), Y: 0}
    assert score.score == {BR: Fraction(11, 2), GY: Fraction(3, 2)}
    assert score.notation == "5½–1½"
    assert score.winner is BR
    assert score.ended_by is EndedBy.TIME


def test_f2_pot_outs_blue_green_red_give_six_one() -> None:
    # Example F.2: 4 + 1 = 5 against 2, then one point moves: 6–1.
    score = score_by_pot_outs([[B], [G], [R]])
    assert score.points == {B: 4, G: 2, R: 1, Y: 0}
    assert score.score == {BR: 6, GY: 1}
    assert score.ended_by is EndedBy.POT_OUT


def test_f3_scoresheet_marks_pot_out_games_with_asterisks() -> None:
    # Example F.3: 5½-1½ for F.1, but 6*-1* for F.2.
    assert score_by_tiddlies({B: 10, G: 5, R: 5, Y: 3}).notation == "5½–1½"
    assert score_by_pot_outs([[B], [G], [R]]).notation == "6*–1*"


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        # a partnership pots out first and second: the other two share third's point
        ([[B], [R]], {BR: 7, GY: 0}),
        # simultaneous first pot-out shares 4 + 2
        ([[B, G], [R]], {BR: 5, GY: 2}),
        # the partnership that finishes can still lose: 4 against 2 + 1, then the transfer
        ([[B], [G], [Y]], {BR: 5, GY: 2}),
        # level partnerships: no winner, nothing moves (20.2)
        ([[B, G], [R, Y]], {BR: Fraction(7, 2), GY: Fraction(7, 2)}),
    ],
)
def test_pot_out_scores_share_simultaneous_pot_outs_and_transfer_one_point(
    order: list[list[Colour]], expected: dict[Partnership, Fraction]
) -> None:
    assert score_by_pot_outs(order).score == expected


def test_tiddlies_count_three_per_potted_one_per_free_played_wink() -> None:
    # 19.1: unplayed, squopped and off winks count nothing.
    board = make_board(
        potted=["blue-L1"], free=["blue-L2", "green-L1"], squops={"green-L1": "blue-S1"}
    )
    assert tiddlies(board) == {B: 3 + 1, G: 1, R: 0, Y: 0}


def test_off_wink_counts_nothing_as_seen_but_one_when_counted_as_replaced() -> None:
    board = make_board(free=["red-L1"], off={"red-L2": (920.0, 0.0)})
    assert tiddlies(board)[R] == 1
    assert tiddlies(board, off_counts_as_free=True)[R] == 2


@pytest.mark.parametrize(
    ("counts", "points"),
    [
        # all four level: 7/4 each
        ({B: 3, G: 3, R: 3, Y: 3}, {B: Fraction(7, 4)}),
        # three level first: (4 + 2 + 1) / 3 each
        ({B: 9, G: 9, R: 9, Y: 0}, {B: Fraction(7, 3), Y: 0}),
        # two level last: (1 + 0) / 2 each
        ({B: 9, G: 6, R: 1, Y: 1}, {B: 4, G: 2, R: Fraction(1, 2)}),
    ],
)
def test_shared_ranks_split_their_points_equally(
    counts: dict[Colour, int], points: dict[Colour, Fraction]
) -> None:
    score = score_by_tiddlies(counts)
    for colour, value in points.items():
        assert score.points[colour] == value


def test_singles_and_three_score_each_colour_and_add_partners() -> None:
    # 19.2 speaks of colours: the format does not change the arithmetic.
    for fmt in GameFormat:
        assert score_by_tiddlies({B: 10, G: 5, R: 5, Y: 3}, fmt).notation == "5½–1½"


def test_interference_ends_seven_nil_to_the_opponents() -> None:
    # 24.4, 26.6
    score = score_by_interference(G)
    assert score.score == {BR: 7, GY: 0}
    assert score.notation == "7–0"
    assert score.ended_by is EndedBy.INTERFERENCE


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(11, 2), "5½"),  # F.1
        (Fraction(3, 2), "1½"),  # F.1
        (Fraction(14, 3), "4⅔"),  # three-way tie
        (Fraction(3, 4), "¾"),  # below one
        (Fraction(6), "6"),  # whole
    ],
)
def test_points_are_written_with_vulgar_fractions(value: Fraction, text: str) -> None:
    assert format_points(value) == text


def test_notation_puts_the_higher_score_first() -> None:
    assert notation({BR: Fraction(1), GY: Fraction(6)}) == "6–1"


# ---- properties --------------------------------------------------------------

tiddly_counts = st.fixed_dictionaries({c: st.integers(0, 18) for c in Colour})


@given(tiddly_counts)
def test_pairs_scores_always_add_up_to_seven(counts: dict[Colour, int]) -> None:
    score = score_by_tiddlies(counts, GameFormat.PAIRS)
    assert sum(score.score.values()) == 7
    assert sum(score.points.values()) == 7


@given(tiddly_counts)
def test_colours_with_equal_tiddlies_get_equal_points_and_more_never_gets_less(
    counts: dict[Colour, int],
) -> None:
    points = score_by_tiddlies(counts).points
    for a in Colour:
        for b in Colour:
            if counts[a] == counts[b]:
                assert points[a] == points[b]
            elif counts[a] > counts[b]:
                assert points[a] > points[b]


@given(tiddly_counts)
def test_a_tied_group_shares_exactly_the_points_of_the_ranks_it_covers(
    counts: dict[Colour, int],
) -> None:
    points = score_by_tiddlies(counts).points
    for level in set(counts.values()):
        group = [c for c in Colour if counts[c] == level]
        above = sum(1 for c in Colour if counts[c] > level)
        pooled = sum((4, 2, 1, 0)[above : above + len(group)])
        assert sum(points[c] for c in group) == pooled


@given(
    st.permutations(list(Colour)).flatmap(
        lambda order: st.lists(st.integers(1, 3), min_size=1, max_size=4).map(
            lambda sizes: _groups(order, sizes)
        )
    )
)
def test_pot_out_scores_add_up_to_seven_too(groups: list[list[Colour]]) -> None:
    score = score_by_pot_outs(groups)
    assert sum(score.score.values()) == 7


def _groups(order: list[Colour], sizes: list[int]) -> list[list[Colour]]:
    out, i = [], 0
    for n in sizes:
        if i >= len(order):
            break
        out.append(order[i : i + n])
        i += n
    return out


def test_share_rank_points_matches_f1() -> None:
    assert share_rank_points([[B], [G, R], [Y]]) == {
        B: 4,
        G: Fraction(3, 2),
        R: Fraction(3, 2),
        Y: 0,
    }


def test_ascii_notation_writes_the_score_in_letters_any_font_can_draw() -> None:
    from rules.scoring import ascii_notation

    # OpenCV's Hershey fonts have no ½ or en dash: they would come out as "?".
    assert ascii_notation("5½–1½") == "5 1/2-1 1/2"
    assert ascii_notation("4⅔–2⅓").isascii()
