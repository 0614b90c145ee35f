"""Squop-up turns (rule 22) and the rulebook's examples G.1-G.5."""

from __future__ import annotations

from rules.board import Board, Colour, Partnership
from rules.scoring import EndedBy
from tests.rules.boardkit import Play, colour_winks, make_board

GREENS = colour_winks("green")
YELLOWS = colour_winks("yellow")


def g1_board() -> Board:
    """Before blue's turn in G.1 and G.2: one yellow wink is still free.

    One blue wink (blue-S1) and one red wink (red-S1) are in play outside piles.
    """
    return make_board(
        free={"blue-S1": (-300.0, -200.0), "red-S1": (300.0, 200.0), "yellow-S4": (0.0, 150.0)},
        squops={
            "blue-L1": GREENS[:3],
            "blue-L2": GREENS[3:],
            "red-L1": YELLOWS[:3],
            "red-L2": YELLOWS[3:5],
        },
    )


def squop_up_by_blue(board: Board, squopper: str = "blue-S2", target: str = "yellow-S4") -> Play:
    p = Play(board, "blue")
    p.shot("blue", squop={squopper: target})
    return p


def test_g1_three_squop_up_turns_and_red_must_free_on_the_third() -> None:
    # Example G.1: 1 + two loose winks = 3 squop-up turns (rule 22.2).
    p = squop_up_by_blue(g1_board())
    squop_up = p.find("squop_up")[0]
    assert squop_up.data["turns"] == 3
    assert squop_up.rule == "22.2"
    assert p.next_colour == "red"  # green cannot play
    assert [e.colour for e in p.find("pass")] == [Colour.GREEN]
    p.shot("red", play={"red-S1": (320.0, 180.0)})  # first squop-up turn, frees nothing
    assert p.next_colour == "blue"  # yellow cannot play
    p.shot("blue", play={"blue-S1": (-320.0, -180.0)})  # second squop-up turn
    assert p.next_colour == "red"  # green cannot play
    must = p.find("must_free")
    assert must[-1].colour is Colour.RED and must[-1].rule == "22.4"
    # Red frees two yellows: a freeing shot, and yellow can play.
    p.shot("red", unsquop="red-L2", play={"red-L2": (200.0, -250.0)})
    assert p.find("freeing_shot")[0].colour is Colour.RED
    assert p.next_colour == "yellow"
    assert not p.find("failure_to_free")


def test_g1_red_frees_only_a_green_so_blue_must_leave_a_green_free() -> None:
    # Example G.1's last sentence, with rule 22.5.2.
    p = squop_up_by_blue(g1_board())
    p.shot("red", play={"red-S1": (320.0, 180.0)})
    p.shot("blue", play={"blue-S1": (-320.0, -180.0)})
    p.shot("red", unsquop="blue-L2", play={"blue-L2": (-150.0, -300.0), "red-S1": (310.0, 170.0)})
    assert p.next_colour == "blue"  # yellow has no free wink
    assert p.find("must_free")[-1].rule == "22.5.2"
    # Blue squops every freed green again: failure to free.
    p.shot("blue", squop={"blue-L2": GREENS[3:]})
    failure = p.find("failure_to_free")
    assert failure and failure[0].colour is Colour.BLUE
    assert failure[0].data["because"] == "22.5.2"
    assert failure[0].data["reason"] == "no_opponent_wink_free"
    nxt = p.game.next_turn()
    assert nxt.colour is Colour.GREEN and nxt.nominated


def test_g2_a_freeing_shot_ends_the_squop_up_turns_at_once() -> None:
    # Example G.2: red's first squop-up turn frees a green wink and no yellow.
    p = squop_up_by_blue(g1_board())
    p.shot("red", unsquop="blue-L2", play={"blue-L2": (-150.0, -300.0), "red-S1": (310.0, 170.0)})
    assert p.find("freeing_shot")
    assert p.game.next_turn().squop_up is None
    assert p.game.next_turn().must_free is Partnership.GREEN_YELLOW
    assert p.next_colour == "blue"  # yellow still has no free wink
    assert p.find("pass")[-1].colour is Colour.YELLOW
    # Blue leaves a green free: no failure, and green then plays.
    p.shot("blue", play={"blue-S1": (-330.0, -170.0)})
    assert not p.find("failure_to_free")
    assert p.next_colour == "green"
    p.shot("green", play={"green-S2": (-100.0, -350.0)})
    assert p.game.next_turn().must_free is None


def g3_board() -> Board:
    """Before blue's turn in G.3: every blue in play is in a pile; red has no free wink."""
    reds = colour_winks("red")
    return make_board(
        potted=reds[1:],
        free={"green-S4": (0.0, 150.0)},
        squops={
            "blue-L1": GREENS[:3],
            "blue-L2": GREENS[3:5],
            "blue-S1": YELLOWS[:3],
            "blue-S2": YELLOWS[3:5],
            "yellow-S4": "red-L1",
            "blue-S3": "yellow-S4",
        },
    )


def test_g3_the_special_case_gives_two_squop_up_turns() -> None:
    # Example G.3 and rule 22.2.3.
    p = squop_up_by_blue(g3_board(), "blue-S4", "green-S4")
    squop_up = p.find("squop_up")[0]
    assert squop_up.data["turns"] == 2
    assert squop_up.rule == "22.2.3"
    # Green, red (the first squop-up turn, rule 22.3.1) and yellow cannot play.
    assert p.next_colour == "blue"
    assert [(e.colour, e.rule) for e in p.find("pass")] == [
        (Colour.GREEN, "11.1"),
        (Colour.RED, "22.3.1"),
        (Colour.YELLOW, "11.1"),
    ]
    assert p.find("must_free")[-1].colour is Colour.BLUE
    p.passes("blue")
    assert p.find("failure_to_free")[0].data["because"] == "22.4"
    nxt = p.game.next_turn()
    assert nxt.colour is Colour.GREEN and nxt.nominated


def test_g3_nominated_shot_that_pots_gives_another_shot_with_the_normal_colour() -> None:
    # Rules 22.6.1 and 22.6.2: green nominates blue, pots blue-S3 and frees yellow-S4;
    # the extra shot is green's own (a green wink is freed by knocking blue-L2 away).
    p = squop_up_by_blue(g3_board(), "blue-S4", "green-S4")
    p.passes("blue")
    p.shot("blue", pot="blue-L2")
    assert p.find("nominated_shot")[0].data["person"] == "green"
    assert p.next_colour == "green"
    p.shot("green", play={"green-S2": (200.0, -300.0)})
    # Red (no free wink) and yellow (still squopped) cannot play.
    assert [e.colour for e in p.find("pass")][-2:] == [Colour.RED, Colour.YELLOW]
    assert p.next_colour == "blue"


def test_nominated_shot_sending_the_nominated_colour_off_forfeits_the_persons_next_shot() -> None:
    # Rule 22.6.3
    p = squop_up_by_blue(g3_board(), "blue-S4", "green-S4")
    p.passes("blue")
    p.shot("blue", unsquop="blue-L2", off={"blue-L2": (0.0, 470.0)})
    forfeit = p.find("forfeit")[-1]
    assert forfeit.rule == "22.6.3"
    assert p.game.next_turn().forfeits[Colour.GREEN] == 1


def g4_board() -> Board:
    """Before red's turn in G.4: the last green and yellow winks are still free."""
    reds, blues = colour_winks("red"), colour_winks("blue")
    return make_board(
        potted=reds[3:] + blues[2:5],
        free={"red-S1": (300.0, 100.0), "green-S4": (0.0, 150.0), "yellow-S4": (0.0, -150.0)},
        squops={
            "red-L1": GREENS[:3],
            "red-L2": GREENS[3:5],
            "blue-L1": YELLOWS[:3],
            "blue-L2": YELLOWS[3:5],
        },
    )


def test_g4_a_forfeit_on_the_freeing_turn_is_a_failure_to_free() -> None:
    # Example G.4, rules 14 and 22.4.2: every free blue and red wink is in a pile,
    # so there is one squop-up turn, and red is due to forfeit it.
    p = Play(g4_board(), "red")
    p.shot("red", off={"red-S1": (300.0, 470.0)})
    replaced = p.game.board.wink("red-S1").mat_xy
    assert replaced is not None
    p.shot("yellow", squop={"yellow-S4": "red-S1"})  # yellow squops the replaced red wink
    p.shot("blue", squop={"blue-S4": ["green-S4", "yellow-S4"]})
    squop_up = p.find("squop_up")[0]
    assert squop_up.data["turns"] == 1
    # Green cannot play; red must free but forfeits: failure to free.
    forfeit = p.find("forfeit")[-1]
    assert forfeit.colour is Colour.RED
    failure = p.find("failure_to_free")[0]
    assert failure.colour is Colour.RED
    assert failure.data["because"] == "22.4.2"
    assert failure.data["reason"] == "forfeited"
    nxt = p.game.next_turn()
    assert nxt.colour is Colour.YELLOW and nxt.nominated


def g5_board() -> Board:
    """G.5: blue-L1 sits on one green and one yellow; other piles hold the rest."""
    return make_board(
        free={"blue-S1": (-300.0, -200.0), "red-S1": (300.0, 200.0)},
        squops={
            "blue-L1": ["green-L1", "yellow-L1"],
            "red-L1": GREENS[1:],
            "blue-L2": YELLOWS[1:],
        },
    )


def g5_after_the_freeing_pot() -> Play:
    p = Play(g5_board(), "red")
    p.shot("red", play={"red-S1": (310.0, 190.0)})  # green and yellow are squopped up
    assert p.find("squop_up")
    assert p.next_colour == "blue"
    p.shot("blue", pot="blue-L1")  # pots a blue, frees green-L1 and yellow-L1
    return p


def test_g5_freeing_pot_earns_the_extra_shot_and_yellow_may_be_resquopped() -> None:
    # Example G.5, rules 12, 22.5.1 and 22.5.2.
    p = g5_after_the_freeing_pot()
    assert p.find("freeing_shot")
    assert p.next_colour == "blue"  # the extra shot is still played (22.5.1)
    p.shot("blue", squop={"blue-S1": "yellow-L1"})
    assert not p.find("failure_to_free")
    assert p.next_colour == "green"


def test_g5_blue_must_leave_the_green_free() -> None:
    # Rule 22.5.2's second sentence: a green (next to play) was free after a shot.
    p = g5_after_the_freeing_pot()
    p.shot("blue", squop={"blue-S1": "green-L1"})
    failure = p.find("failure_to_free")
    assert failure and "green" in failure[0].text
    nxt = p.game.next_turn()
    assert nxt.colour is Colour.GREEN and nxt.nominated


def test_time_ending_during_squop_up_turns_elapses_before_the_squopped_up_side_can_play() -> None:
    # Rule 22.3.4: time runs out at red's squop-up turn (t = 40 s), but is deemed to end
    # just before green's turn, the first with a free wink for green and yellow.
    p = Play(g5_board(), "red", timed_period_s=30.0)
    p.shot("red", play={"red-S1": (310.0, 190.0)})  # t = 0, squop-up: 3 turns
    p.shot("blue", play={"blue-S1": (-310.0, -190.0)})  # t = 20, first squop-up turn
    p.shot("red", play={"red-S1": (320.0, 180.0)})  # t = 40, second; time is up
    assert not p.find("time_up")
    p.shot("blue", unsquop="blue-L1", play={"blue-L1": (-200.0, 300.0)})  # frees both
    assert not p.find("time_up")
    p.shot("green", play={"green-L1": (100.0, -300.0)})
    time_up = p.find("time_up")
    assert time_up and time_up[0].colour is Colour.GREEN


def round_limit_board() -> Board:
    """Green-S4 is green and yellow's only free wink; red-S1 is loose; blue's played winks
    are in piles. With a 1 s timed period and blue passing at t = 0, time is up when
    green plays, right after the squidge-off winner's turn: five rounds follow (rule 18).
    """
    reds = colour_winks("red")
    return make_board(
        free={"green-S4": (0.0, 150.0), "red-S1": (300.0, 100.0)},
        potted=reds[3:],
        squops={
            "red-L1": GREENS[:3],
            "red-L2": GREENS[3:5],
            "blue-L1": YELLOWS[:3],
            "blue-L2": YELLOWS[3:],
        },
    )


def test_round_limit_ending_before_a_freeing_shot_is_required_ends_the_game() -> None:
    # Rule 22.4.3: blue squops up on the last turn of the fifth round.
    p = Play(round_limit_board(), "blue", timed_period_s=1.0)
    p.passes("blue")  # t = 0
    for k in range(5):
        p.shot("green", play={"green-S4": (float(k), 150.0)})
        p.shot("red", play={"red-S1": (300.0, 100.0 + k)})
        if k < 4:
            p.passes("blue")
    assert p.game.result is None
    p.shot("blue", squop={"blue-S1": "green-S4"})
    assert p.game.result is not None
    assert p.game.result.ended_by is EndedBy.TIME


def test_failure_to_free_on_the_last_turn_of_round_five_gives_one_extra_turn() -> None:
    # Rule 22.6.4: red squops up in round five, blue (squidge-off winner) fails to free.
    p = Play(round_limit_board(), "blue", timed_period_s=1.0)
    p.passes("blue")  # t = 0
    for k in range(4):
        p.shot("green", play={"green-S4": (float(k), 150.0)})
        p.shot("red", play={"red-S1": (300.0, 100.0 + k)})
        p.passes("blue")
    p.shot("green", play={"green-S4": (9.0, 150.0)})
    p.shot("red", squop={"red-S1": "green-S4"})
    assert p.find("squop_up")[0].data["turns"] == 1
    p.passes("blue")
    assert p.game.result is None
    assert [e.rule for e in p.find("round")][-1] == "22.6.4"
    nxt = p.game.next_turn()
    assert nxt.colour is Colour.GREEN and nxt.nominated
    p.shot("blue", unsquop="blue-L2", play={"blue-L2": (-100.0, -300.0)})
    assert p.game.result is not None
    assert p.find("game_end")[0].rule == "22.6.4"


def test_a_squopped_up_colours_forfeit_happens_in_its_squop_up_turn() -> None:
    # Rule 22.3.2: green sent a wink off, then is squopped up; its turn is the forfeit.
    board = make_board(
        free={"green-L1": (100.0, 300.0), "blue-S1": (-300.0, -200.0), "red-S1": (300.0, 200.0)},
        squops={"blue-L1": "yellow-L1", "red-L1": GREENS[1:], "blue-L2": YELLOWS[1:]},
    )
    p = Play(board, "green")
    p.shot("green", off={"green-L1": (100.0, 470.0)})
    p.shot("red", play={"red-S1": (310.0, 190.0)})
    spot = p.game.board.wink("green-L1").mat_xy
    assert spot is not None
    p.shot("blue", squop={"blue-S1": "green-L1"})  # yellow passed; blue squops up
    assert p.find("squop_up")
    forfeit = p.find("forfeit")[-1]
    assert (forfeit.colour, forfeit.rule) == (Colour.GREEN, "22.3.2")
    assert p.game.next_turn().forfeits[Colour.GREEN] == 0
    assert p.next_colour == "red"


def test_a_freed_colour_that_forfeits_has_still_had_its_opportunity() -> None:
    # Rule 22.5.3: yellow, freed, forfeits its turn (rule 14); after that blue may
    # squop everything again without a failure to free, and a new squop-up begins.
    p = Play(g1_board(), "yellow")
    p.shot("yellow", off={"yellow-S4": (0.0, 470.0)})
    p.shot("blue", squop={"blue-S2": "yellow-S4"})
    assert p.find("squop_up")[0].data["turns"] == 3
    p.shot("red", unsquop="red-L2", play={"red-L2": (200.0, -250.0)})  # frees two yellows
    assert p.find("freeing_shot")
    forfeit = p.find("forfeit")[-1]
    assert (forfeit.colour, forfeit.rule) == (Colour.YELLOW, "14")
    assert p.game.next_turn().must_free is None
    p.shot("blue", squop={"blue-S3": ["yellow-S2", "yellow-S3"]})
    assert not p.find("failure_to_free")
    assert len(p.find("squop_up")) == 2


def test_potting_a_sixth_wink_is_a_freeing_shot_and_lifts_every_squop() -> None:
    # Rules 22.4.1 (a shot that pots the sixth wink of any colour), 20.1 and 22.5.4.
    blues = colour_winks("blue")
    board = make_board(
        potted=blues[1:],
        free={"blue-L1": (-300.0, -200.0), "red-S1": (300.0, 200.0)},
        squops={"red-L1": GREENS, "red-L2": YELLOWS},
    )
    p = Play(board, "red")
    p.shot("red", play={"red-S1": (310.0, 190.0)})
    assert p.find("squop_up")
    p.shot("blue", pot="blue-L1")
    freeing = p.find("freeing_shot")[0]
    assert "sixth wink" in freeing.text
    assert p.rules_of("pot_out") == ["15", "20.1"]
    assert all(w.status.value != "squopped" for w in p.game.board.winks)
    assert p.next_colour == "green"
    assert not p.find("failure_to_free")


def test_rule_22_5_2_a_green_free_when_blues_turn_starts_must_still_be_free_at_its_end() -> None:
    # Examples G.1 and G.2 with rule 22.5.2's second sentence: red frees only greens,
    # yellow cannot play, and blue's turn starts with a green free. Blue squops those
    # greens again while freeing a yellow: a yellow is free, yet "blue must leave at
    # least one green wink free at the end of blue's turn" (G.2), so this fails to free.
    p = squop_up_by_blue(g1_board())
    p.shot("red", unsquop="blue-L2", play={"blue-L2": (-150.0, -300.0), "red-S1": (310.0, 170.0)})
    assert p.next_colour == "blue"  # yellow has no free wink
    assert "must leave a green wink free" in p.find("must_free")[-1].text
    p.shot(
        "blue", squop={"blue-L2": GREENS[3:]}, unsquop="red-L2", play={"red-L2": (200.0, -250.0)}
    )
    assert any(w.status.value == "free" for w in p.game.board.of_colour(Colour.YELLOW))
    failure = p.find("failure_to_free")
    assert failure and failure[0].colour is Colour.BLUE
    assert failure[0].data["because"] == "22.5.2" and "green" in failure[0].text
    assert failure[0].data["reason"] == "next_colour_not_kept_free"
    nxt = p.game.next_turn()
    assert nxt.colour is Colour.GREEN and nxt.nominated


def test_rule_22_3_4_time_waits_past_a_failure_to_free_for_a_free_squopped_up_colour() -> None:
    # Rule 22.3.4: time runs out at blue's squop-up turn (G.3's special case). Blue fails
    # to free; green's nominated shot is a turn without a free green wink, so time is
    # not yet deemed to have elapsed. It elapses before green's next turn, the first in
    # which a member of the squopped-up partnership has a free wink of its own colour.
    p = Play(g3_board(), "blue", timed_period_s=5.0)
    p.shot("blue", squop={"blue-S4": "green-S4"})  # t = 0: two squop-up turns
    p.passes("blue")  # t = 10: time is up during the squop-up turns; failure to free
    assert p.find("failure_to_free")
    p.shot("blue", unsquop="blue-L2", play={"blue-L2": (-250.0, 300.0)})  # green nominates blue
    assert p.find("nominated_shot")
    assert not p.find("time_up")
    assert p.next_colour == "blue"  # red and yellow cannot play
    p.shot("blue", play={"blue-L2": (-260.0, 310.0)})
    assert not p.find("time_up")
    p.shot("green", play={"green-S2": (200.0, -300.0)})
    time_up = p.find("time_up")
    assert time_up and time_up[0].colour is Colour.GREEN


def test_rule_22_2_3_is_cited_even_when_blue_still_has_unplayed_winks() -> None:
    # Rule 22.2.2: unplayed winks are not on the field of play, so blue-S4 behind its
    # baseline does not stop this being the special case of 22.2.3 (and of G.3).
    reds = colour_winks("red")
    board = make_board(
        potted=reds[1:],
        free={"green-S4": (0.0, 150.0)},
        squops={
            "blue-L1": GREENS[:3],
            "blue-L2": GREENS[3:5],
            "blue-S1": YELLOWS[:3],
            "blue-S2": YELLOWS[3:],
            "yellow-S4": "red-L1",
        },
    )
    p = squop_up_by_blue(board, "blue-S3", "green-S4")
    assert p.board.wink("blue-S4").status.value == "unplayed"
    squop_up = p.find("squop_up")[0]
    assert (squop_up.data["turns"], squop_up.rule) == (2, "22.2.3")


def test_rule_22_3_1_a_forfeited_squop_up_turn_still_counts() -> None:
    # Rule 22.3.1 (forfeiture, rule 14): red sent its wink off, so its first squop-up
    # turn is forfeited, yet it is squop-up turn 1; red's next turn is the third, the last.
    p = Play(g1_board(), "red")
    p.shot("red", off={"red-S1": (300.0, 470.0)})
    p.shot("yellow", play={"yellow-S4": (0.0, 160.0)})
    p.shot("blue", squop={"blue-S2": "yellow-S4"})
    assert p.find("squop_up")[0].data["turns"] == 3
    forfeit = p.find("forfeit")[-1]
    assert (forfeit.colour, forfeit.rule) == (Colour.RED, "14")
    assert p.next_colour == "blue"
    assert p.find("squop_up_turn")[-1].data == {"turn": 2, "turns": 3}
    p.shot("blue", play={"blue-S1": (-320.0, -180.0)})
    assert p.next_colour == "red"
    last = p.find("must_free")[-1]
    assert (last.colour, last.rule, last.data["turn"]) == (Colour.RED, "22.4", 3)
