"""Turns, extra shots, passes, forfeits, baseline shots and potted winks (rules 6-14)."""

from __future__ import annotations

import pytest

from rules.board import WinkStatus, starting_board
from rules.engine import Game
from rules.record import IllegalRecordError
from tests.rules.boardkit import Play, make_board


def fresh(winner: str = "blue", **kwargs: object) -> Play:
    return Play(starting_board(), winner, **kwargs)  # type: ignore[arg-type]


def test_play_starts_with_the_squidge_off_winner_and_follows_colour_order() -> None:
    # Rules 6 and 7.1
    p = fresh("red")
    assert p.next_colour == "red"
    for colour in ("red", "yellow", "blue", "green", "red"):
        assert p.next_colour == colour
        p.shot(colour, play=[f"{colour}-L1"] if colour != "red" or p.index == 0 else ["red-L2"])


def test_potting_an_own_wink_earns_an_extra_shot() -> None:
    # Rules 12 and 12.1
    p = fresh()
    p.shot("blue", pot=["blue-L1"])
    assert p.types() == ["potted", "extra_shot"]
    assert p.next_colour == "blue"
    p.shot("blue", play=["blue-L2"])
    assert p.next_colour == "green"


def test_two_own_winks_potted_earn_two_extra_shots() -> None:
    # Rule 12.2
    p = fresh()
    p.shot("blue", play=["blue-L1"])
    p.shot("green", play=["green-L1"])
    p.shot("red", play=["red-L1"])
    p.shot("yellow", play=["yellow-L1"])
    p.shot("blue", play=["blue-L2"])
    p.shot("green", play=["green-L2"])
    p.shot("red", play=["red-L2"])
    p.shot("yellow", play=["yellow-L2"])
    p.shot("blue", pot=["blue-L1", "blue-L2"])
    assert p.find("extra_shot")[0].data["shots"] == 2
    p.shot("blue", play=["blue-S1"])
    assert p.next_colour == "blue"
    p.shot("blue", play=["blue-S2"])
    assert p.next_colour == "green"


def test_potting_another_colour_earns_no_extra_shot() -> None:
    # Rule 12.3
    p = Play(make_board(free=["green-L1", "blue-L1"]))
    p.shot("blue", pot=["green-L1"])
    assert "extra_shot" not in p.types()
    assert p.next_colour == "green"


def test_a_voluntary_pass_is_a_shot() -> None:
    # Rule 11
    p = fresh()
    p.passes("blue")
    assert p.types() == ["pass"]
    assert p.next_colour == "green"


def test_a_colour_with_no_free_wink_passes_with_immediate_effect() -> None:
    # Rule 11.1: every green wink is squopped, so green's turn passes at once.
    every_green = [f"green-{w}" for w in ("L1", "L2", "S1", "S2", "S3", "S4")]
    board = make_board(squops={"blue-L1": every_green[:3], "red-L1": every_green[3:]})
    p = Play(board, "yellow")
    p.shot("yellow", play=["yellow-L1"])
    p.shot("blue", play={"blue-L2": (300.0, 100.0)})
    passes = p.find("pass")
    assert [e.colour.value for e in passes] == ["green"]
    assert passes[0].rule == "11.1"
    assert p.next_colour == "red"


def test_a_wink_sent_off_forfeits_the_next_shot_of_that_colour() -> None:
    # Rules 13, 14, 14.5: blue's next turn is a deemed pass.
    p = fresh()
    p.shot("blue", off={"blue-L1": (-500.0, 470.0)})
    assert p.types() == ["off", "forfeit"]
    for colour in ("green", "red", "yellow"):
        p.shot(colour, play=[f"{colour}-L1"])
    forfeits = p.find("forfeit")
    assert [e.rule for e in forfeits] == ["14", "14"]
    assert p.next_colour == "green"


def test_two_own_winks_off_forfeit_only_one_shot() -> None:
    # Rule 14.1
    p = Play(make_board(free=["blue-L1", "blue-L2"]))
    p.shot("blue", off=["blue-L1", "blue-L2"])
    assert p.game.next_turn().forfeits == {
        c: (1 if c.value == "blue" else 0) for c in p.game.next_turn().forfeits
    }


def test_other_colours_sent_off_forfeit_nothing() -> None:
    # Rule 14.2
    p = Play(make_board(free=["blue-L1", "green-L1", "red-L1"]))
    p.shot("blue", off=["green-L1", "red-L1"])
    assert "forfeit" not in p.types()


def test_pot_and_off_in_one_shot_forfeits_the_extra_shot() -> None:
    # Rule 14.3
    p = Play(make_board(free=["blue-L1", "blue-L2"]))
    p.shot("blue", pot=["blue-L1"], off=["blue-L2"])
    assert p.next_colour == "green"
    assert p.find("forfeit")[-1].rule == "14.3"
    assert p.game.next_turn().forfeits.get(p.find("forfeit")[0].colour) == 0


def test_a_forfeit_counts_even_when_the_colour_has_no_free_wink() -> None:
    # Rule 14.4: blue's only played wink goes off and comes back to be squopped at once;
    # blue has no free wink on its next turn, and that turn is the forfeit.
    every_blue = [f"blue-{w}" for w in ("L1", "L2", "S1", "S2", "S3", "S4")]
    board = make_board(potted=every_blue[1:], free=["blue-L1", "green-L1"])
    p = Play(board)
    p.shot("blue", off={"blue-L1": (0.0, 470.0)})
    replaced = p.game.board.wink("blue-L1").mat_xy
    assert replaced is not None
    p.shot("green", squop={"green-L1": "blue-L1"}, play={"blue-L1": replaced})
    p.shot("red", play=["red-L1"])
    p.shot("yellow", play=["yellow-L1"])
    assert p.find("forfeit")[-1].rule == "14.4"
    assert p.next_colour == "green"


def test_the_off_wink_is_replaced_and_announced_with_its_position() -> None:
    # Rule 13.1
    p = fresh()
    p.shot("blue", off={"blue-L1": (-500.0, 470.0)})
    off = p.find("off")[0]
    x, y = off.data["mat_xy_mm"]
    assert y == pytest.approx(457.2 - 22.0 - 11.0, abs=0.5)
    assert p.game.board.wink("blue-L1").status is WinkStatus.FREE


def test_a_baseline_shot_that_does_not_cross_is_not_a_shot() -> None:
    # Rule 9.3: the board is unchanged, so blue plays again.
    p = fresh()
    p.shot("blue")
    assert p.types() == ["not_a_shot"]
    assert p.next_colour == "blue"
    p.shot("blue", play=["blue-L1"])
    assert p.next_colour == "green"


def test_a_potted_wink_knocked_out_goes_back_into_the_pot() -> None:
    # Rule 8.1.3
    p = Play(make_board(potted=["green-L1"], free=["blue-L1"]))
    p.shot("blue", play={"blue-L1": (30.0, 0.0), "green-L1": (60.0, 10.0)})
    assert p.types() == ["repotted"]
    assert p.game.board.wink("green-L1").status is WinkStatus.POTTED


def test_squops_and_frees_are_announced() -> None:
    # Rules 8.2 and 8.3
    p = Play(make_board(free=["blue-L1", "green-L1"]))
    p.shot("blue", squop={"blue-L1": "green-L1"})
    p.shot("green", play=["green-L2"])
    p.shot("red", play=["red-L1"])
    p.shot("yellow", play=["yellow-L1"])
    p.shot("blue", unsquop="blue-L1", play={"blue-L1": (300.0, 0.0)})
    assert p.types() == ["squopped", "freed"]


def test_the_timed_period_is_set_by_format_or_per_game() -> None:
    # Rules 17 and 17.1
    assert Game(starting_board().winks[0].colour).timed_period_s == 1500
    assert Game(starting_board().winks[0].colour, timed_period_s=90).timed_period_s == 90


def test_a_vanished_wink_is_a_bad_record() -> None:
    p = Play(make_board(free=["blue-L1"]))
    board = p.board.with_winks(w for w in p.board.winks if w.id != "blue-L1")
    from rules.record import ShotRecord

    shot = ShotRecord.model_validate({"t": 0, "colour": "blue", "board": board.to_json_dict()})
    with pytest.raises(IllegalRecordError, match=r"shots\[0\]\.board: wink 'blue-L1' vanished"):
        p.game.play(shot, index=0)


def test_an_unplayed_wink_of_another_colour_cannot_come_into_play() -> None:
    p = fresh()
    with pytest.raises(IllegalRecordError, match="unplayed green wink 'green-L1' came into play"):
        p.shot("blue", play=["blue-L1", "green-L1"])


def test_two_unplayed_winks_of_one_colour_cannot_come_in_at_once() -> None:
    # Rule 10.6
    p = fresh()
    with pytest.raises(IllegalRecordError, match="rule 10.6"):
        p.shot("blue", play=["blue-L1", "blue-L2"])


def test_time_cannot_run_backwards() -> None:
    p = fresh()
    p.shot("blue", play=["blue-L1"])
    p.shot("green", dt=30, play=["green-L1"])
    with pytest.raises(IllegalRecordError, match=r"shots\[2\]\.t: 20 s is earlier"):
        p.shot("red", dt=-10, play=["red-L1"])


def test_the_first_board_may_name_the_winks_its_own_way() -> None:
    # Ids need only be stable through a game: vision may number winks as it likes.
    from rules.record import ShotRecord

    board = make_board(free=["blue-L1"])
    renamed = board.with_winks(
        w.model_copy(update={"id": f"w{i}"}) for i, w in enumerate(board.winks)
    )
    game = Game(starting_board().winks[0].colour)
    game.play(
        ShotRecord.model_validate({"t": 0, "colour": "blue", "board": renamed.to_json_dict()})
    )
    assert game.next_turn().colour is not None and game.next_turn().colour.value == "green"
    assert game.board.wink("w0").status is WinkStatus.FREE
