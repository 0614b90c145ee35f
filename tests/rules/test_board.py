"""The board contract: parsing, validation, piles and copies."""

from __future__ import annotations

import pytest

from rules.board import (
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    Board,
    Colour,
    IllegalBoardError,
    Partnership,
    Wink,
    WinkSize,
    WinkStatus,
    starting_board,
)


def _wink(wid: str, status: str = "free", squops: tuple[str, ...] = ()) -> dict[str, object]:
    colour, rest = wid.split("-")
    size = "large" if rest.startswith("L") else "small"
    return {
        "id": wid,
        "colour": colour,
        "size": size,
        "x_mm": 1.0,
        "y_mm": 2.0,
        "status": status,
        "squops": list(squops),
    }


def test_mat_is_six_feet_by_three_feet() -> None:
    assert MAT_LENGTH_MM == pytest.approx(1828.8)
    assert MAT_WIDTH_MM == pytest.approx(914.4)


def test_turn_order_and_partnerships_follow_rules_1_1_and_7_1() -> None:
    assert [c.value for c in Colour] == ["blue", "green", "red", "yellow"]
    assert Colour.YELLOW.next() is Colour.BLUE
    assert Colour.BLUE.partner is Colour.RED
    assert Colour.GREEN.partnership is Partnership.GREEN_YELLOW
    assert Partnership.BLUE_RED.opponents is Partnership.GREEN_YELLOW


def test_starting_board_has_six_unplayed_winks_per_colour() -> None:
    board = starting_board()
    for colour in Colour:
        assert board.count(colour, WinkStatus.UNPLAYED) == 6
        assert sum(w.size is WinkSize.LARGE for w in board.of_colour(colour)) == 2


def test_json_round_trip_keeps_every_field() -> None:
    data = {"winks": [_wink("blue-L1", "free", ("red-S1",)), _wink("red-S1", "squopped")]}
    board = Board.from_json_dict(data)
    again = Board.from_json_dict(board.to_json_dict())
    assert again == board
    assert board.wink("blue-L1").squops == ("red-S1",)


def test_piles_join_winks_connected_directly_or_indirectly_rule_8_2_2() -> None:
    data = {
        "winks": [
            _wink("blue-L1", "free", ("green-S1",)),
            _wink("green-S1", "squopped", ("red-S1",)),
            _wink("red-S1", "squopped"),
            _wink("yellow-S1", "free"),
        ]
    }
    board = Board.from_json_dict(data)
    assert board.piles() == (frozenset({"blue-L1", "green-S1", "red-S1"}),)
    assert board.in_pile("blue-L1") and not board.in_pile("yellow-S1")


def test_with_methods_return_changed_copies() -> None:
    board = starting_board()
    moved = board.with_wink(
        board.wink("blue-L1").with_position(10.0, -5.0).with_status(WinkStatus.FREE)
    )
    assert board.wink("blue-L1").status is WinkStatus.UNPLAYED
    assert moved.wink("blue-L1").mat_xy == (10.0, -5.0)


@pytest.mark.parametrize(
    ("winks", "expected"),
    [
        # seven blue winks: more than rule 2.1.1 allows
        ([_wink(f"blue-S{i}") for i in range(1, 8)], "7 blue winks"),
        # an unknown colour is named with the offending value
        ([{**_wink("blue-S1"), "colour": "purple"}], "purple"),
        # a squop of a wink that is not on the board
        ([_wink("blue-S1", "free", ("red-S9",))], "unknown wink 'red-S9'"),
        # squopped by someone but marked free
        ([_wink("blue-S1", "free", ("red-S1",)), _wink("red-S1", "free")], "rule 8.2"),
        # the same id twice
        ([_wink("blue-S1"), _wink("blue-S1")], "appears 2 times"),
    ],
)
def test_illegal_boards_are_rejected_with_the_offending_input(
    winks: list[dict[str, object]], expected: str
) -> None:
    with pytest.raises(IllegalBoardError, match=expected):
        Board.from_json_dict({"winks": winks}, where="shots[3].board")


def test_every_problem_is_reported_at_once() -> None:
    winks = [_wink(f"blue-S{i}") for i in range(1, 8)] + [_wink("red-S1", "free", ("x",))]
    with pytest.raises(IllegalBoardError) as info:
        Board.from_json_dict({"winks": winks})
    assert len(info.value.problems) >= 3  # seven blues, seven smalls, unknown squop target


def test_illegal_board_error_is_a_value_error() -> None:
    assert issubclass(IllegalBoardError, ValueError)
    assert isinstance(
        Wink(id="a", colour=Colour.RED, size=WinkSize.SMALL, status=WinkStatus.FREE).radius_mm,
        float,
    )
