"""The ruleset registry and the numbers and judgements a ruleset supplies."""

from __future__ import annotations

import pytest

from rules.board import Colour
from rules.ruleset import RULESETS, Etwa2012, Ruleset, UnknownRulesetError, get_ruleset
from rules.scoring import GameFormat
from tests.rules.boardkit import make_board


def test_registry_knows_etwa_2012() -> None:
    assert isinstance(get_ruleset("etwa-2012"), Etwa2012)
    assert "etwa-2012" in RULESETS


def test_unknown_ruleset_quotes_the_name_and_lists_the_known_ones() -> None:
    with pytest.raises(UnknownRulesetError, match=r"'squop-1969'.*'etwa-2012'"):
        get_ruleset("squop-1969")


@pytest.mark.parametrize(
    ("fmt", "minutes"),
    [
        (GameFormat.PAIRS, 25.0),  # rule 17, pairs
        (GameFormat.SINGLES, 20.0),  # rule 17, singles
        (GameFormat.THREE, 22.5),  # rule 17, three players
    ],
)
def test_timed_period_follows_rule_17(fmt: GameFormat, minutes: float) -> None:
    assert Etwa2012().timed_period_s(fmt) == minutes * 60


def test_timed_period_can_be_set_per_game() -> None:
    # Rule 17.1
    assert Etwa2012().timed_period_s(GameFormat.PAIRS, 600.0) == 600.0


def test_a_later_ruleset_overrides_only_what_differs() -> None:
    # E.g. the Game of Squop (1969): four winks a colour and an extra shot for any pot.
    class Squop(Ruleset):
        name = "squop-1969"
        winks_per_colour = 4
        small_winks_per_colour = 3
        large_winks_per_colour = 1

        def extra_shots(self, played, newly_potted):  # type: ignore[no-untyped-def]
            return len(list(newly_potted))

    squop = Squop()
    potted = make_board(potted=["green-L1"]).winks
    assert squop.extra_shots([Colour.BLUE], [w for w in potted if w.status.value == "potted"]) == 1
    assert (
        Etwa2012().extra_shots([Colour.BLUE], [w for w in potted if w.status.value == "potted"])
        == 0
    )
    assert squop.timed_period_s(GameFormat.PAIRS) == 25 * 60  # inherited


def test_board_problems_report_every_missing_wink() -> None:
    board = make_board()
    short = board.with_winks(w for w in board.winks if w.id not in ("blue-S4", "red-L1"))
    problems = Etwa2012().board_problems(short)
    assert any("5 blue winks" in p for p in problems)
    assert any("5 red winks" in p for p in problems)


@pytest.mark.parametrize(
    ("loose", "expected"),
    [
        ([], 1),  # rule 22.2: no loose wink -> one turn (next squopping colour can play)
        (["blue-S1"], 2),  # one loose wink
        (["blue-S1", "red-S1", "red-S2"], 4),  # three loose winks
    ],
)
def test_squop_up_turns_are_one_more_than_loose_winks(loose: list[str], expected: int) -> None:
    # Rule 22.2: winks on the field of play that are not in piles.
    board = make_board(free=loose, squops={"blue-L1": "green-L1", "red-L1": "yellow-L1"})
    assert Etwa2012().squop_up_turns(board, Colour.RED) == expected


def test_squop_up_turns_are_two_in_the_special_case_of_22_2_3() -> None:
    # No loose wink, and the next squopping colour (red) has no free wink.
    every_red = [f"red-{w}" for w in ("L1", "L2", "S1", "S2", "S3", "S4")]
    board = make_board(potted=every_red[1:], squops={"blue-L1": "green-L1", "yellow-L1": "red-L1"})
    assert Etwa2012().squop_up_turns(board, Colour.RED) == 2


def test_starting_board_follows_the_rulesets_wink_counts() -> None:
    from rules.board import starting_board

    assert Etwa2012().starting_board() == starting_board()

    class FourWinks(Ruleset):
        winks_per_colour = 4
        large_winks_per_colour = 1
        small_winks_per_colour = 3

    board = FourWinks().starting_board()
    assert len(board.winks) == 16
    assert FourWinks().board_problems(board) == []
