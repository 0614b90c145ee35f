"""Fouls, wrong colours and interference as manual events (rules 23, 24.4, 26.6)."""

from __future__ import annotations

import pytest

from rules.board import Colour, Partnership, WinkStatus, starting_board
from rules.record import IllegalRecordError
from rules.scoring import EndedBy
from tests.rules.boardkit import Play, make_board

FOUL_REPLAY = {"type": "foul", "choice": "replay"}
FOUL_ACCEPT = {"type": "foul", "choice": "accept"}


def test_a_replayed_foul_puts_the_winks_back_and_the_same_colour_plays_again() -> None:
    # Rule 23.2 (i)
    p = Play(make_board(free=["blue-L1", "green-L1"]))
    p.shot("blue", event=FOUL_REPLAY, keep_board=True, squop={"blue-L1": "green-L1"})
    assert p.types() == ["foul"]
    assert p.game.board.wink("green-L1").status is WinkStatus.FREE
    assert p.next_colour == "blue"
    p.shot("blue", play={"blue-L1": (100.0, 100.0)})
    assert p.next_colour == "green"


def test_an_accepted_foul_stands_and_ends_the_turn_even_after_a_pot() -> None:
    # Rule 23.2 (ii): no extra shot for the potted blue wink.
    p = Play(make_board(free=["blue-L1"]))
    p.shot("blue", event=FOUL_ACCEPT, pot="blue-L1")
    assert p.game.board.wink("blue-L1").status is WinkStatus.POTTED
    assert "extra_shot" not in p.types()
    assert p.find("foul")[0].data["choice"] == "accept"
    assert p.next_colour == "green"


def test_three_successive_replayed_fouls_forfeit_the_further_shot() -> None:
    # Rule 23.2.1
    p = Play(make_board(free=["blue-L1"]))
    for _ in range(2):
        p.shot("blue", event=FOUL_REPLAY, keep_board=True, play={"blue-L1": (50.0, 50.0)})
        assert p.next_colour == "blue"
    p.shot("blue", event=FOUL_REPLAY, keep_board=True, play={"blue-L1": (50.0, 50.0)})
    assert p.find("forfeit")[0].rule == "23.2.1"
    assert p.next_colour == "green"


def test_a_legal_shot_between_fouls_resets_the_count() -> None:
    # Rule 23.2.1 counts fouls in succession only: blue pots, so its turn goes on.
    p = Play(make_board(free=["blue-L1", "blue-L2"]))
    p.shot("blue", event=FOUL_REPLAY, keep_board=True, play={"blue-L1": (50.0, 50.0)})
    p.shot("blue", event=FOUL_REPLAY, keep_board=True, play={"blue-L1": (50.0, 50.0)})
    p.shot("blue", pot="blue-L1")
    p.shot("blue", event=FOUL_REPLAY, keep_board=True, play={"blue-L2": (50.0, 50.0)})
    assert not p.find("forfeit")
    assert p.next_colour == "blue"


def test_a_wrong_colour_without_an_event_is_flagged_and_accepted() -> None:
    # Rules 23.3 and 23.4: red plays in green's turn and play goes on.
    p = Play(starting_board())
    p.shot("blue", play=["blue-L1"])
    p.shot("red", play=["red-L1"])
    wrong = p.find("wrong_colour")
    assert wrong[0].rule == "23.3" and wrong[0].data["expected"] == "green"
    nxt = p.game.next_turn()
    assert nxt.colour is None
    assert nxt.choices == (Colour.GREEN, Colour.YELLOW)  # the opponents choose (23.3 ii)
    p.shot("yellow", play=["yellow-L1"])
    assert p.next_colour == "blue"


def test_a_wrong_colour_replayed_restores_the_start_of_the_turn() -> None:
    # Rule 23.3 (i): red's shot is taken back and green plays.
    p = Play(make_board(free=["blue-L1", "green-L1", "red-L1"]))
    p.shot("blue", play={"blue-L1": (100.0, 0.0)})
    p.shot(
        "red",
        event={"type": "wrong_colour", "choice": "replay"},
        keep_board=True,
        squop={"red-L1": "green-L1"},
    )
    assert p.find("wrong_colour")[0].data["choice"] == "replay"
    assert p.game.board.wink("green-L1").status is WinkStatus.FREE
    assert p.next_colour == "green"


def test_a_wrong_colour_turn_with_a_pot_is_retracted_in_full() -> None:
    # Rule 23.3 (i): "more than one shot may need to be retracted if a wink was potted".
    p = Play(make_board(free=["blue-L1", "red-L1", "red-L2"]))
    p.shot("red", pot="red-L1")  # red played in blue's turn, and pots
    assert p.next_colour == "red"  # the wrong turn goes on with its extra shot
    p.shot("red", event={"type": "wrong_colour", "choice": "replay"}, keep_board=True, pot="red-L2")
    assert p.game.board.wink("red-L1").status is WinkStatus.FREE
    assert p.next_colour == "blue"


def test_deliberate_interference_ends_the_game_seven_nil() -> None:
    # Rules 24.4 and 26.6
    p = Play(starting_board())
    p.shot("blue", play=["blue-L1"])
    p.event({"type": "interference", "by": "green"}, "green")
    result = p.game.result
    assert result is not None
    assert result.ended_by is EndedBy.INTERFERENCE
    assert result.score == {Partnership.BLUE_RED: 7, Partnership.GREEN_YELLOW: 0}
    assert p.types()[-2:] == ["interference", "game_end"]


def test_a_wrong_colour_in_the_middle_of_a_turn_keeps_the_earlier_shots() -> None:
    # Rule 23.3 (i): red plays blue's extra shot; only red's shot goes back, blue's pot stays.
    p = Play(make_board(free=["blue-L1", "blue-L2", "red-L1", "green-L1"]))
    p.shot("blue", pot="blue-L1")
    p.shot(
        "red",
        event={"type": "wrong_colour", "choice": "replay"},
        keep_board=True,
        squop={"red-L1": "green-L1"},
    )
    assert p.game.board.wink("blue-L1").status is WinkStatus.POTTED
    assert p.game.board.wink("green-L1").status is WinkStatus.FREE
    assert p.next_colour == "blue"
    p.shot("blue", play={"blue-L2": (10.0, 200.0)})
    assert p.next_colour == "green"


def test_rule_23_3_ii_an_accepted_wrong_colour_shot_ends_the_turn_even_after_a_pot() -> None:
    # Rule 23.3 (ii): the opponents "accept the shot or shots and the turn comes to an
    # end"; red potted its own wink in green's turn, yet gets no extra shot.
    p = Play(make_board(free=["blue-L1", "green-L1", "red-L1", "red-L2", "yellow-L1"]))
    p.shot("blue", play={"blue-L1": (10.0, 10.0)})
    p.shot("red", pot="red-L1", event={"type": "wrong_colour", "choice": "accept"})
    assert not p.find("extra_shot")
    nxt = p.game.next_turn()
    assert nxt.colour is None and nxt.choices == (Colour.GREEN, Colour.YELLOW)


def test_rule_23_3_ii_accepting_after_the_wrong_colours_extra_shot_ends_the_turn_there() -> None:
    # Unnoticed, red's wrong turn goes on after its pot; when the opponents then accept
    # the shots (23.3 ii) the turn ends, though that shot pots a red wink again.
    p = Play(make_board(free=["blue-L1", "green-L1", "red-L1", "red-L2", "red-S1"]))
    p.shot("blue", play={"blue-L1": (10.0, 10.0)})
    p.shot("red", pot="red-L1")
    assert p.next_colour == "red"
    p.shot("red", pot="red-L2", event={"type": "wrong_colour", "choice": "accept"})
    assert len(p.find("extra_shot")) == 1
    assert p.game.next_turn().choices == (Colour.GREEN, Colour.YELLOW)


def test_a_wrong_colour_event_on_the_colour_due_is_a_bad_record() -> None:
    # Rule 23.3 is about a colour played out of turn; blue is due, so the record
    # contradicts itself and the error names the shot and the field.
    p = Play(make_board(free=["blue-L1", "green-L1"]))
    for choice in ("replay", "accept"):
        with pytest.raises(
            IllegalRecordError, match=r"shots\[0\]\.event: .*blue is the colour due"
        ):
            p.shot("blue", event={"type": "wrong_colour", "choice": choice})
