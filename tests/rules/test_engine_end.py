"""The three ways a game ends (rules 16-21) and the formats' timed periods (1.1-1.3, 17)."""

from __future__ import annotations

from fractions import Fraction

from rules.board import Colour, Partnership, starting_board
from rules.scoring import EndedBy, GameFormat
from tests.rules.boardkit import Play, colour_winks, make_board

ORDER = ("blue", "green", "red", "yellow")


def cycle(p: Play, turns: int, dt: float = 20.0) -> None:
    """Each colour due moves a free wink (or brings one in)."""
    for _ in range(turns):
        colour = p.next_colour
        assert colour is not None
        unplayed = [w.id for w in p.board.of_colour(Colour(colour)) if w.status.value == "unplayed"]
        if unplayed:
            p.shot(colour, dt, play=[unplayed[0]])
        else:
            w = next(w for w in p.board.of_colour(Colour(colour)) if w.status.value == "free")
            x, y = w.mat_xy or (0.0, 0.0)
            p.shot(colour, dt, play={w.id: (x + 3.0, y)})


def test_time_then_current_round_then_five_rounds() -> None:
    # Rules 17, 18: time runs out before red's turn (t = 120 s); the round ends after
    # blue (the squidge-off winner), then five more rounds: 3 + 5 * 4 = 23 turns.
    p = Play(starting_board(), "blue", timed_period_s=110.0)
    cycle(p, 7, dt=20.0)  # t = 0..120: blue green red yellow blue green red
    assert p.find("time_up")[0].colour is Colour.RED
    assert "Play continues to the end of blue's turn" in p.find("time_up")[0].text
    cycle(p, 21)
    assert p.game.result is None
    cycle(p, 1)
    assert p.game.result is not None
    assert p.game.result.ended_by is EndedBy.TIME
    rounds = [e.data["round"] for e in p.find("round")]
    assert rounds == [1, 2, 3, 4, 5]
    assert p.find("game_end")[0].colour is None


def test_time_expiring_after_the_winners_turn_starts_the_five_rounds_at_once() -> None:
    p = Play(starting_board(), "blue", timed_period_s=99.0)
    cycle(p, 6, dt=20.0)  # the sixth shot (t = 100) is green's, right after blue's turn
    assert "5 more rounds are played" in p.find("time_up")[0].text
    cycle(p, 18)
    assert p.game.result is None
    cycle(p, 1)
    assert p.game.result is not None


def test_time_expiring_between_shots_of_a_turn_expires_at_the_end_of_that_turn() -> None:
    # Rule 18.1: blue pots at t = 80 and plays its extra shot at t = 110, after time.
    p = Play(
        make_board(free=["blue-L1", "green-L1", "red-L1", "yellow-L1"]),
        "green",
        timed_period_s=100.0,
    )
    for colour in ("green", "red", "yellow"):
        p.shot(colour, play={f"{colour}-L1": (100.0 * ORDER.index(colour), 50.0)})
    p.shot("blue", pot=["blue-L1"])  # t = 60
    p.shot("blue", dt=50, play=["blue-L2"])  # t = 110, the extra shot
    assert not p.find("time_up")
    p.shot("green", play={"green-L1": (10.0, 10.0)})
    assert p.find("time_up")[0].colour is Colour.GREEN


def test_turns_that_cannot_be_played_count_in_the_round_limit() -> None:
    # Rule 18.2: yellow is squopped throughout, yet its turns count.
    yellows = colour_winks("yellow")
    board = make_board(
        free=["blue-L1", "green-L1", "red-L1"],
        squops={"red-L2": yellows[:3], "blue-L2": yellows[3:]},
    )
    p = Play(board, "blue", timed_period_s=1.0)
    cycle(p, 1 + 15)  # blue, then 5 rounds of blue/green/red with yellow passing
    assert p.game.result is not None
    assert len([e for e in p.find("pass") if e.colour is Colour.YELLOW]) == 5


def test_tiddlies_decide_the_game_at_the_end_of_the_round_limit() -> None:
    # Rule 19: the final board is scored; blue's potted wink makes blue first.
    p = Play(make_board(potted=["blue-S1"]), "blue", timed_period_s=1.0)
    cycle(p, 1 + 20)
    result = p.game.result
    assert result is not None
    assert result.tiddlies is not None
    assert result.tiddlies[Colour.BLUE] == 3 + 6 - 1
    assert result.points[Colour.BLUE] == 4
    assert sum(result.score.values()) == 7


def test_first_pot_out_announces_lifted_squops_and_no_time_limit() -> None:
    # Rules 15, 20, 20.1: blue pots its last wink while a green wink is squopped.
    blues = colour_winks("blue")
    board = make_board(potted=blues[1:], free=["blue-L1"], squops={"red-L1": "green-L1"})
    p = Play(board, "blue", timed_period_s=10.0)
    p.shot("blue", pot=["blue-L1"])
    assert p.rules_of("pot_out") == ["15", "20.1"]
    assert p.game.board.wink("green-L1").status.value == "free"
    # Time no longer applies: long after the period no round limit starts.
    p.shot("green", dt=500, play={"green-L1": (40.0, 40.0)})
    assert not p.find("time_up")


def test_game_ends_when_both_colours_of_a_partnership_have_potted_out() -> None:
    # Rules 20 and 20.2, example F.2: blue first, green second, red third -> 6*-1*.
    board = make_board(
        potted=colour_winks("blue")[1:] + colour_winks("green")[1:] + colour_winks("red")[1:],
        free=["blue-L1", "green-L1", "red-L1", "yellow-L1"],
    )
    p = Play(board, "blue")
    p.shot("blue", pot=["blue-L1"])
    p.shot("green", pot=["green-L1"])
    assert p.game.result is None
    p.shot("red", pot=["red-L1"])
    result = p.game.result
    assert result is not None
    assert result.notation == "6*–1*"
    assert result.ended_by is EndedBy.POT_OUT


def test_simultaneous_pot_outs_share_their_points() -> None:
    # Rule 20.2: blue pots its last wink and green's last wink in one shot.
    board = make_board(
        potted=colour_winks("blue")[1:] + colour_winks("green")[1:],
        free=["blue-L1", "green-L1", "red-L1"],
    )
    p = Play(board, "blue")
    p.shot("blue", pot=["blue-L1", "green-L1"])
    assert [e.colour for e in p.find("pot_out")][:2] == [Colour.BLUE, Colour.GREEN]
    assert p.game.result is None


def test_all_unpotted_winks_squopped_ends_the_game() -> None:
    # Rules 21, 21.1: the top of a pile is always free, so only a ring of squops (a
    # "pinwheel") can leave every unpotted wink squopped: blue lands on red and slides
    # under green, which squops red's other side.
    board = make_board(
        potted=colour_winks("blue")[1:]
        + colour_winks("green")[1:]
        + colour_winks("red")[1:]
        + colour_winks("yellow")[1:],
        free=["blue-L1"],
        squops={"red-L1": ["green-L1", "yellow-L1"]},
    )
    p = Play(board, "blue")
    p.shot("blue", squop={"blue-L1": "red-L1", "green-L1": "blue-L1"})
    result = p.game.result
    assert result is not None
    assert result.ended_by is EndedBy.ALL_SQUOPPED
    assert "rule 21" in p.find("game_end")[0].text


def test_formats_have_their_timed_periods() -> None:
    # Rules 1.1-1.3 with 17: 25, 20 and 22½ minutes.
    from rules.engine import Game

    periods = {fmt: Game(Colour.BLUE, fmt).timed_period_s for fmt in GameFormat}
    assert periods == {
        GameFormat.PAIRS: 1500.0,
        GameFormat.SINGLES: 1200.0,
        GameFormat.THREE: 1350.0,
    }


def test_singles_score_still_ranks_colours_and_adds_partners() -> None:
    p = Play(
        make_board(potted=["green-S1"]), "green", game_format=GameFormat.SINGLES, timed_period_s=1.0
    )
    cycle(p, 21)
    result = p.game.result
    assert result is not None
    assert result.score[Partnership.GREEN_YELLOW] > result.score[Partnership.BLUE_RED]
    assert sum(result.score.values()) == Fraction(7)


def test_a_pot_out_during_the_round_limit_cancels_it() -> None:
    # Rule 20: the round limit does not apply once a colour has potted out.
    blues = colour_winks("blue")
    p = Play(make_board(potted=blues[1:], free=["blue-L1"]), "green", timed_period_s=1.0)
    cycle(p, 3)  # green at t = 0; time is up before red's turn
    assert p.find("time_up")
    p.shot("blue", pot="blue-L1")
    assert p.game.next_turn().period == "pot_out"
    cycle(p, 40)
    assert p.game.result is None


def test_rule_18_1_a_turn_started_before_time_and_ended_after_is_not_a_round_limit_turn() -> None:
    # Rules 18, 18.1: red's turn begins at t = 40 (before the 70 s period) and its extra
    # shot comes at t = 80. Time is deemed to expire at the end of red's turn, so yellow
    # and blue complete the round, then five rounds follow: 2 + 5 * 4 = 22 turns.
    board = make_board(free=["blue-L1", "green-L1", "red-L1", "yellow-L1"])
    p = Play(board, "blue", timed_period_s=70.0)
    p.shot("blue", play={"blue-L1": (-300.0, 0.0)})  # t = 0
    p.shot("green", play={"green-L1": (-200.0, 0.0)})  # t = 20
    p.shot("red", pot=["red-L1"])  # t = 40: the turn begins before time
    p.shot("red", dt=40, play=["red-L2"])  # t = 80: the extra shot, after time
    assert not p.find("time_up")
    cycle(p, 1)  # yellow, t = 100
    time_up = p.find("time_up")[0]
    assert time_up.colour is Colour.YELLOW
    assert "Play continues to the end of blue's turn" in time_up.text
    cycle(p, 22 - 2)
    assert p.game.result is None
    cycle(p, 1)
    assert p.game.result is not None
    assert [e.data["round"] for e in p.find("round")] == [1, 2, 3, 4, 5]
