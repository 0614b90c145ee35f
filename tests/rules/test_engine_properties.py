"""Random games, played by a careless but legal robot, never break the engine.

Each turn the colour due pots, squops, moves, brings a wink in, sends one
off or passes, at random. Whatever happens, the engine must keep a
consistent state and, when the game ends, give a pairs score of 7.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.board import Board, Colour, WinkStatus, starting_board
from rules.events import EventType
from tests.rules.boardkit import Play


def _choose(rng: random.Random, board: Board, colour: Colour) -> dict[str, Any]:
    own_free = [w for w in board.of_colour(colour) if w.status is WinkStatus.FREE]
    own_unplayed = [w for w in board.of_colour(colour) if w.status is WinkStatus.UNPLAYED]
    movable = own_free + own_unplayed[:1]
    if not movable:
        return {"pass": True}
    wink = rng.choice(movable)
    others = [
        w
        for w in board.winks
        if w.colour is not colour
        and w.status in (WinkStatus.FREE, WinkStatus.SQUOPPED)
        and wink.id not in w.squops
    ]
    action = rng.choices(
        ["pot", "move", "squop", "off", "pass", "pot_other"], weights=[3, 6, 4, 1, 1, 1]
    )[0]
    if action == "pot":
        return {"pot": wink.id}
    if action == "squop" and others:
        return {"squop": {wink.id: rng.choice(others).id}}
    if action == "off":
        return {"off": {wink.id: (rng.uniform(-900, 900), 470.0)}}
    if action == "pass":
        return {"pass": True}
    if action == "pot_other":
        free_others = [w for w in others if w.status is WinkStatus.FREE and not w.squops]
        if free_others:
            return {"pot": rng.choice(free_others).id, "play": {wink.id: (5.0, 5.0)}}
    x, y = rng.uniform(-600, 600), rng.uniform(-300, 300)
    return {"play": {wink.id: (round(x, 1), round(y, 1))}}


def _mischief(
    rng: random.Random, p: Play, colour: Colour, allowed: set[Colour]
) -> tuple[Colour, Any]:
    """Now and then a foul (23.2) or the wrong colour played (23.3).

    ``allowed`` are the colours that may rightly play now (the colour due, both
    choices after 23.3 (ii), the person and the nominee of 22.6.1): none of them
    is a wrong colour, and a record calling one wrong contradicts itself.
    """
    r = rng.random()
    if r < 0.05:
        others = [
            c
            for c in Colour
            if c not in allowed and c is not colour and p.game.ruleset.can_play(p.board, c)
        ]
        if others:
            wrong = rng.choice(others)
            replay = rng.random() < 0.5
            return wrong, {"type": "wrong_colour", "choice": "replay"} if replay else None
    if r < 0.10:
        return colour, {"type": "foul", "choice": "replay"}
    if r < 0.13:
        return colour, {"type": "foul", "choice": "accept"}
    return colour, None


def play_randomly(seed: int, max_shots: int = 160, *, mischief: bool = False) -> Play:
    rng = random.Random(seed)
    p = Play(starting_board(), rng.choice(list(Colour)).value, timed_period_s=900.0)
    for _ in range(max_shots):
        nxt = p.game.next_turn()
        if p.game.result is not None:
            break
        person = nxt.colour or rng.choice(nxt.choices)
        colour = person
        if nxt.nominated and not p.game.ruleset.can_play(p.board, colour):
            colour = next(c for c in Colour if p.game.ruleset.can_play(p.board, c))
        event = None
        if mischief:
            allowed = {colour, *nxt.choices} | ({nxt.colour} if nxt.colour else set())
            colour, event = _mischief(rng, p, colour, allowed)
        changes = _choose(rng, p.board, colour)
        if changes.pop("pass", False):
            # Only the colour due may pass: in a nominated turn (22.6.1) that is the
            # person's own colour, not the nominee.
            p.passes(person.value, dt=15.0)
        else:
            p.shot(colour.value, dt=15.0, event=event, **changes)
    return p


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_random_games_keep_the_engine_consistent(seed: int) -> None:
    p = play_randomly(seed)
    game = p.game
    assert all(e.rule for e in game.events)
    assert game.board.problems() == []
    assert not game.board.winks_with_status(WinkStatus.OFF)  # 13: always put back
    if game.result is not None:
        assert sum(game.result.score.values()) == 7
        assert sum(game.result.points.values()) == 7
        assert game.events[-1].type is EventType.GAME_END
    else:
        nxt = game.next_turn()
        assert nxt.colour is not None or nxt.choices


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6))
def test_random_games_with_fouls_and_wrong_colours_stay_consistent(seed: int) -> None:
    p = play_randomly(seed, mischief=True)
    game = p.game
    assert game.board.problems() == []
    if game.result is not None:
        assert sum(game.result.score.values()) == 7
    else:
        nxt = game.next_turn()
        assert nxt.colour is not None or nxt.choices


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6))
def test_random_games_that_run_long_end_by_time(seed: int) -> None:
    # 400 shots at 15 s is 100 minutes: the round limit must have ended the game.
    p = play_randomly(seed, max_shots=400)
    assert p.game.result is not None
