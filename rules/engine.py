"""The game engine: fed one board per shot, it infers everything else.

:class:`Game` takes the boards of a recorded game in order (:meth:`Game.play`)
and works out what the record leaves implicit: extra shots (12), forfeits
(14), deemed passes (11.1), rule 13.1 replacements, pot-outs (15, 20), the
timed and round limit periods (17, 18), squop-up turns, freeing shots and
failures to free (22), and the end of the game (16). Fouls, wrong colours and
interference (23, 24) come as manual events in the record.

Order of checks for each recorded shot
--------------------------------------
1. Turns that cannot be played are passed with immediate effect (11.1, 14.5).
2. Time: a turn that begins after the timed period starts the round limit (17, 18.1).
3. Who plays: the colour due, a nominated colour (22.6.1), or a wrong colour (23.3).
4. Manual events: interference (24.4), foul replayed (23.2 i) or accepted (23.2 ii).
5. The board: not a shot (9.3); potted, repotted (8.1.3), squops (8.2), off (13.1).
6. Extra shots (12) and forfeits (14); pot-outs (15, 20.1, 20.2).
7. Freeing shots (22.4.1) and the obligations after them (22.5.2).
8. All unpotted winks squopped ends the game (21).
9. End of turn: failure to free (22.6), squop-up (22.1, 22.2), rounds (18).
"""

from __future__ import annotations

import copy
import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rules.board import Board, Colour, Partnership, Wink, WinkStatus
from rules.events import Event, EventType, FailureToFree
from rules.record import (
    Choice,
    FoulEvent,
    GameRecord,
    IllegalRecordError,
    InterferenceEvent,
    ShotRecord,
    WrongColourEvent,
)
from rules.replacement import MatLayout, live_baselines, replacement_position
from rules.ruleset import Ruleset, get_ruleset
from rules.scoring import EndedBy, GameFormat, GameScore

#: Two positions of a played wink closer than this are "unmoved" (rule 9.3 check).
UNMOVED_TOLERANCE_MM = 2.0
#: Rule 23.2.1: the third successive replayed foul forfeits the further shot.
FOULS_BEFORE_FORFEIT = 3


def _name(colour: Colour) -> str:
    return colour.value.capitalize()


def _both(p: Partnership) -> str:
    a, b = p.colours
    return f"{a.value} and {b.value}"


@dataclass
class _SquopUp:
    """Rule 22: squop-up turns under way."""

    squopped: Partnership
    turns: int
    played: int = 0


@dataclass
class _RoundLimit:
    """Rule 18: the round limit period, counted in turns of the squidge-off winner."""

    winner_turns_needed: int
    winner_turns_done: int = 0
    extra_turn_for: Colour | None = None


@dataclass
class _State:
    """Everything the engine tracks between shots (copied for 23.3 (i))."""

    board: Board
    recorded: Board
    turn: Colour
    turn_started: bool = False
    shots_left: int = 0
    forfeits: dict[Colour, int] = field(default_factory=lambda: dict.fromkeys(Colour, 0))
    fouls_in_row: int = 0
    nominated_for: Colour | None = None
    nominated_turn: bool = False
    wrong_turn: bool = False
    turn_forfeited: bool = False
    due_announced: bool = False
    slot: Colour | None = None
    next_choice: tuple[Colour, ...] = ()
    time_pending: bool = False
    time_waits_for: Partnership | None = None
    round_limit: _RoundLimit | None = None
    squop_up: _SquopUp | None = None
    must_free: Partnership | None = None
    keep_free_colour: Colour | None = None
    pot_outs: list[tuple[Colour, ...]] = field(default_factory=list)
    turn_snapshot: _State | None = None
    last_t: float = 0.0
    result: GameScore | None = None

    def copy(self) -> _State:
        twin = copy.copy(self)
        twin.forfeits = dict(self.forfeits)
        twin.pot_outs = list(self.pot_outs)
        twin.round_limit = copy.copy(self.round_limit)
        twin.squop_up = copy.copy(self.squop_up)
        twin.turn_snapshot = None
        return twin


class Period(enum.StrEnum):
    """Which part of the game is being played (rule 16)."""

    TIMED = "timed"
    """The timed period (17)."""
    ROUND_LIMIT = "round_limit"
    """The round limit period after time (18), counted in rounds."""
    POT_OUT = "pot_out"
    """After a pot-out, when time no longer applies (20)."""
    ENDED = "ended"
    """The game is over (16)."""


@dataclass(frozen=True)
class NextTurn:
    """Whose turn it is after the last recorded shot."""

    colour: Colour | None
    choices: tuple[Colour, ...] = ()
    shots_left: int = 1
    nominated: bool = False
    forfeits: dict[Colour, int] = field(default_factory=dict)
    period: Period = Period.TIMED
    round: int | None = None
    squop_up: dict[str, Any] | None = None
    must_free: Partnership | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The ``next`` object of ``winkref replay --json``."""
        return {
            "colour": None if self.colour is None else self.colour.value,
            "choices": [c.value for c in self.choices],
            "shots_left": self.shots_left,
            "nominated": self.nominated,
            "forfeits": {c.value: n for c, n in self.forfeits.items() if n},
            "period": self.period.value,
            "round": self.round,
            "squop_up": self.squop_up,
            "must_free": None if self.must_free is None else self.must_free.value,
        }


class Game:
    """A game in progress under a ruleset, fed one recorded shot at a time.

    Parameters
    ----------
    squidge_off_winner : Colour
        Rule 6: plays first.
    game_format : GameFormat
    ruleset : Ruleset or str
    timed_period_s : float or None
        Rule 17.1: overrides the format's period (rule 17).
    layout : MatLayout
        Which corner is blue's, for rule 13.1 (iii).
    board : Board or None
        The board before the first shot; all winks unplayed by default.
    """

    def __init__(
        self,
        squidge_off_winner: Colour,
        game_format: GameFormat = GameFormat.PAIRS,
        ruleset: Ruleset | str = "etwa-2012",
        *,
        timed_period_s: float | None = None,
        layout: MatLayout = MatLayout(),
        board: Board | None = None,
    ) -> None:
        self.ruleset = get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        self.squidge_off_winner = squidge_off_winner
        self.game_format = game_format
        self.timed_period_s = self.ruleset.timed_period_s(game_format, timed_period_s)
        self.layout = layout
        start = board if board is not None else self.ruleset.starting_board()
        # With the default start, the first recorded board may name the winks its own way.
        self._ids_from_first_board = board is None
        self._s = _State(board=start, recorded=start, turn=squidge_off_winner)
        already_out = tuple(c for c in Colour if self.ruleset.potted_out(start, c))
        if already_out:
            self._s.pot_outs.append(already_out)
        self._events: list[Event] = []
        self._shot_index: int | None = None
        self._t: float | None = None

    # ---- public --------------------------------------------------------------

    @classmethod
    def from_record(cls, record: GameRecord) -> Game:
        """A game set up as the record says (ruleset, format, squidge-off, period)."""
        return cls(
            record.squidge_off_winner,
            record.format,
            record.ruleset,
            timed_period_s=record.timed_period_s,
            layout=MatLayout(record.blue_corner_x_sign),
        )

    @property
    def events(self) -> tuple[Event, ...]:
        """Every announcement so far, in order."""
        return tuple(self._events)

    @property
    def board(self) -> Board:
        """The board as the rules leave it: off winks replaced (13.1), squops lifted (20.1)."""
        return self._s.board

    @property
    def result(self) -> GameScore | None:
        """The game score once the game has ended, else None."""
        return self._s.result

    def next_turn(self) -> NextTurn:
        """Whose turn it is, after passing every turn that cannot be played (11.1)."""
        self._advance()
        s = self._s
        if s.result is not None:
            return NextTurn(colour=None, shots_left=0, period=Period.ENDED)
        if s.round_limit is not None:
            period = Period.ROUND_LIMIT
        elif s.pot_outs:
            period = Period.POT_OUT
        else:
            period = Period.TIMED
        squop = None
        if s.squop_up is not None:
            squop = {
                "squopped": s.squop_up.squopped.value,
                "turns": s.squop_up.turns,
                "played": s.squop_up.played,
            }
        return NextTurn(
            colour=None if s.next_choice else s.turn,
            choices=s.next_choice,
            shots_left=max(s.shots_left, 1) if s.turn_started else 1,
            nominated=s.nominated_for is not None or s.nominated_turn,
            forfeits=dict(s.forfeits),
            period=period,
            round=self._round_number(),
            squop_up=squop,
            must_free=s.must_free,
        )

    def replay(self, shots: Sequence[ShotRecord]) -> None:
        """Play every recorded shot, then pass the turns that cannot be played."""
        for i, shot in enumerate(shots):
            self.play(shot, index=i)
        self._advance()

    def play(self, shot: ShotRecord, *, index: int | None = None) -> None:
        """Apply one recorded shot, then pass every turn that cannot be played (11.1).

        Raises
        ------
        IllegalRecordError
            When the shot contradicts the record so far or the rules; the
            message names ``shots[index]`` and the field.
        """
        self._play(shot, index)
        self._advance()

    def _play(self, shot: ShotRecord, index: int | None) -> None:
        s = self._s
        where = f"shots[{index}]" if index is not None else "shot"
        if s.result is not None:
            raise IllegalRecordError(f"{where}: the game has already ended ({s.result.notation})")
        if shot.t < s.last_t:
            raise IllegalRecordError(
                f"{where}.t: {shot.t:g} s is earlier than the previous shot's {s.last_t:g} s"
            )
        # Turns passed with immediate effect belong to the previous shot (11.1).
        self._advance()
        s = self._s
        if s.result is not None:
            raise IllegalRecordError(f"{where}: the game has already ended ({s.result.notation})")
        s.last_t = shot.t
        self._shot_index = index
        self._t = shot.t

        if isinstance(shot.event, InterferenceEvent):
            self._interference(shot.event.by)
            return

        # 17, 18.1: the timed period ends between turns.
        if shot.t >= self.timed_period_s and not s.pot_outs and s.round_limit is None:
            if not s.time_pending:
                # 22.3.4: time ending during squop-up turns waits for the squopped-up side.
                s.time_waits_for = s.squop_up.squopped if s.squop_up else None
            s.time_pending = True

        if s.next_choice:
            if shot.colour in s.next_choice:
                s.turn = shot.colour
                s.next_choice = ()
            else:
                s.turn = s.next_choice[0]
                s.next_choice = ()
        if not s.turn_started:
            self._begin_turn()

        played = self._who_plays(shot, where)
        if played is None:
            return  # a wrong colour replayed: the state went back to the turn's start

        if isinstance(shot.event, FoulEvent) and shot.event.choice is Choice.REPLAY:
            self._foul_replayed(shot.colour)
            return
        if shot.is_pass:
            self._emit(EventType.PASS, shot.colour, "11", f"{_name(shot.colour)} passes.")
            self._shot_done(extra=0)
            return
        if shot.board is None:
            raise IllegalRecordError(f"{where}.board: missing; only a pass may leave it out")
        self._apply_board(shot, played, where)

    # ---- turns (7, 11.1, 14.5) ---------------------------------------------

    def _advance(self) -> None:
        """Rules 11.1, 14.4, 14.5: pass, with immediate effect, every shot that cannot be played."""
        s = self._s
        while s.result is None:
            if s.next_choice:
                return
            if not s.turn_started:
                colour = s.turn
                if not any(self.ruleset.can_play(s.board, c) for c in Colour):
                    # 21: no wink can be played at all (a ring of squops, or a set-up board).
                    self._end_by_tiddlies(EndedBy.ALL_SQUOPPED, "21")
                    return
                if s.nominated_for is not None and s.nominated_for is colour:
                    return  # 22.6.1: a free shot with any colour that has a free wink
                if s.forfeits[colour] == 0 and self.ruleset.can_play(s.board, colour):
                    self._announce_due()
                    return
                self._begin_turn()
                self._cannot_play(colour)
                self._end_turn()
                continue
            colour = s.turn
            if s.forfeits[colour] > 0 and s.shots_left > 0:
                self._forfeit_shot(colour, "14.3")
                continue
            if s.shots_left <= 0 or not self.ruleset.can_play(s.board, colour):
                self._end_turn()
                continue
            return

    def _cannot_play(self, colour: Colour) -> None:
        """A whole turn that cannot be played: forfeited (14, 14.4) or a deemed pass (11.1)."""
        s = self._s
        if s.forfeits[colour] > 0:
            s.forfeits[colour] -= 1
            s.turn_forfeited = True
            rule = "22.3.2" if s.squop_up and colour in s.squop_up.squopped.colours else "14.4"
            if self.ruleset.can_play(s.board, colour):
                rule = "14"
            self._emit(
                EventType.FORFEIT,
                colour,
                rule,
                f"{_name(colour)} forfeits this shot for the wink that went off (rule {rule}).",
            )
        elif self.ruleset.potted_out(s.board, colour):
            pass  # a potted-out colour's turns pass silently
        else:
            rule = "22.3.1" if s.squop_up and colour not in s.squop_up.squopped.colours else "11.1"
            self._emit(
                EventType.PASS,
                colour,
                rule,
                f"{_name(colour)} has no free wink and cannot play (rule {rule}).",
                deemed=True,
            )
        s.shots_left = 0

    def _forfeit_shot(self, colour: Colour, rule: str) -> None:
        """Rules 14 and 14.3: a shot left in the turn is the one forfeited (an extra shot)."""
        s = self._s
        s.forfeits[colour] -= 1
        s.shots_left -= 1
        self._emit(
            EventType.FORFEIT,
            colour,
            rule,
            f"{_name(colour)} forfeits this shot for the wink that went off (rule {rule}).",
        )

    def _begin_turn(self) -> None:
        """Rules 18.1, 22.3.4, 22.5.2: what changes when a turn begins."""
        s = self._s
        colour = s.turn
        s.turn_snapshot = s.copy()
        s.turn_started = True
        s.shots_left = 1
        s.fouls_in_row = 0
        s.keep_free_colour = None
        s.turn_forfeited = False
        s.nominated_turn = s.nominated_for is colour
        s.nominated_for = None
        has_free = self.ruleset.can_play(s.board, colour)
        if s.time_pending and s.round_limit is None and not s.pot_outs:
            waits = s.time_waits_for
            if waits is None or (colour in waits.colours and has_free):
                self._start_round_limit(colour)
        if s.must_free is not None and colour in s.must_free.colours and has_free:
            s.must_free = None  # 22.5.2, 22.5.3: the freed partnership has its opportunity
        # 22.5.2: a wink of the colour due next that is free when the turn starts was
        # free at the end of the shot before it (examples G.1, G.2).
        self._keep_next_colour_free(colour)

    def _announce_due(self) -> None:
        """Rules 22.4 and 22.5.2: remind the squopping side when it must free, once a turn."""
        s = self._s
        colour = s.turn
        if s.due_announced:
            return
        s.due_announced = True
        if s.must_free is not None and colour not in s.must_free.colours:
            due = colour.next()
            if self.ruleset.can_play(s.board, due):
                kept = due.value  # the second sentence of 22.5.2
            else:
                kept = " or ".join(c.value for c in s.must_free.colours)
            self._emit(
                EventType.MUST_FREE,
                colour,
                "22.5.2",
                f"{_name(colour)} must leave a {kept} wink free at the end of the turn "
                "(rule 22.5.2).",
            )
        if s.squop_up is not None and colour not in s.squop_up.squopped.colours:
            k, n = s.squop_up.played + 1, s.squop_up.turns
            if k == n:
                self._emit(
                    EventType.MUST_FREE,
                    colour,
                    "22.4",
                    f"Squop-up turn {k} of {n}, the last: {colour.value} must play a freeing "
                    "shot (rule 22.4).",
                    turn=k,
                    turns=n,
                )
            else:
                self._emit(
                    EventType.SQUOP_UP_TURN,
                    colour,
                    "22.3",
                    f"Squop-up turn {k} of {n}: {colour.value} (rule 22.3).",
                    turn=k,
                    turns=n,
                )

    def _start_round_limit(self, colour: Colour) -> None:
        """Rules 17, 18: time is up; finish the current round, then five more."""
        s = self._s
        w = self.squidge_off_winner
        rounds = self.ruleset.round_limit_rounds
        completes_round = colour is not w.next()
        s.round_limit = _RoundLimit(winner_turns_needed=rounds + (1 if completes_round else 0))
        s.time_pending = False
        minutes, seconds = divmod(round(self.timed_period_s), 60)
        period = " ".join(
            f"{n} {unit}{'s' if n != 1 else ''}"
            for n, unit in ((minutes, "minute"), (seconds, "second"))
            if n
        )
        if completes_round:
            rest = f"Play continues to the end of {w.value}'s turn, then {rounds} more rounds"
        else:
            rest = f"{rounds} more rounds are played, each ending after {w.value}'s turn"
        self._emit(
            EventType.TIME_UP,
            colour,
            "17",
            f"Time! The timed period of {period} is over (rule 17). {rest} (rule 18).",
            rounds=rounds,
        )

    def _round_number(self) -> int | None:
        """The round of the round limit period being played; 0 while the round in which
        time ran out is completed (rule 18)."""
        rl = self._s.round_limit
        if rl is None:
            return None
        offset = rl.winner_turns_needed - self.ruleset.round_limit_rounds
        return rl.winner_turns_done - offset + 1

    def _end_turn(self) -> None:
        """The end of a turn: 22.5.2 / 22.6 failure to free, 22.1 squop-up, 18 rounds."""
        s = self._s
        colour = s.turn
        # 23.3 (ii): a wrong colour's turn fills the slot of the colour that was due.
        slot = s.slot if s.wrong_turn and s.slot is not None else colour
        failed = self._check_failure_to_free(colour)
        if (
            not failed
            and s.result is None
            and s.squop_up is None
            and s.must_free is None
            and not s.pot_outs
        ):
            self._check_squop_up(colour)
        next_colour = slot.next()
        if s.round_limit is not None and s.result is None:
            rl = s.round_limit
            if rl.extra_turn_for is slot:
                self._end_by_tiddlies(EndedBy.TIME, "22.6.4")
            elif slot is self.squidge_off_winner:
                rl.winner_turns_done += 1
                offset = rl.winner_turns_needed - self.ruleset.round_limit_rounds
                done = rl.winner_turns_done - offset
                if done >= 1:
                    self._emit(
                        EventType.ROUND,
                        colour,
                        "18",
                        f"End of round {done} of {self.ruleset.round_limit_rounds} (rule 18).",
                        round=done,
                    )
                if rl.winner_turns_done >= rl.winner_turns_needed:
                    if failed:
                        rl.extra_turn_for = next_colour
                        self._emit(
                            EventType.ROUND,
                            next_colour,
                            "22.6.4",
                            f"{_name(next_colour)} gets one extra turn, starting with a free "
                            "shot with a nominated colour (rule 22.6.4).",
                        )
                    else:
                        self._end_by_tiddlies(EndedBy.TIME, "18")
        if s.wrong_turn and s.result is None:
            s.next_choice = colour.partnership.opponents.colours
            s.wrong_turn = False
            self._emit(
                EventType.WRONG_COLOUR,
                colour,
                "23.3",
                f"The turn ends; {_both(colour.partnership.opponents)} choose which of their "
                "colours plays next (rule 23.3 ii).",
            )
        s.turn = next_colour
        s.due_announced = False
        s.turn_started = False
        s.shots_left = 0
        s.nominated_turn = False
        if failed:
            s.nominated_for = next_colour

    def _check_failure_to_free(self, colour: Colour) -> bool:
        """Rules 22.4, 22.5.2, 22.6: did the squopping partnership fail to free this turn?"""
        s = self._s
        if s.result is not None:
            return False
        reason: tuple[FailureToFree, str] | None = None
        if s.squop_up is not None and colour not in s.squop_up.squopped.colours:
            s.squop_up.played += 1  # 22.3.1: counted even when the colour cannot play
            if s.squop_up.played >= s.squop_up.turns:
                reason = (
                    (FailureToFree.FORFEITED, f"{colour.value} forfeited the turn due to free")
                    if s.turn_forfeited
                    else (
                        FailureToFree.NO_FREEING_SHOT,
                        "no freeing shot was played in the squop-up turns",
                    )
                )
                s.squop_up = None
        elif s.must_free is not None and colour not in s.must_free.colours:
            squopped = s.must_free
            if not any(self.ruleset.can_play(s.board, c) for c in squopped.colours):
                reason = (
                    FailureToFree.NO_OPPONENT_WINK_FREE,
                    f"no {_both(squopped)} wink was left free",
                )
            elif s.keep_free_colour is not None and not self.ruleset.can_play(
                s.board, s.keep_free_colour
            ):
                reason = (
                    FailureToFree.NEXT_COLOUR_NOT_KEPT_FREE,
                    f"no {s.keep_free_colour.value} wink was left free, though one was free "
                    "at the start of the turn or after a shot in it",
                )
            if reason is not None:
                s.must_free = None
        if reason is None:
            return False
        failure, why = reason
        nxt = colour.next()
        self._emit(
            EventType.FAILURE_TO_FREE,
            colour,
            "22.6",
            f"Failure to free: {why} (rule {failure.rule}). {_name(nxt)} gets a free shot with "
            "a nominated colour (rule 22.6.1).",
            because=failure.rule,
            reason=failure.value,
        )
        return True

    def _check_squop_up(self, colour: Colour) -> None:
        """Rules 22.1, 22.2: at the end of a turn, is a partnership squopped up?"""
        s = self._s
        for p in Partnership:
            if not self.ruleset.squopped_up(s.board, p):
                continue
            squopping = p.opponents
            nxt = colour.next()
            while nxt not in squopping.colours:
                nxt = nxt.next()
            turns = self.ruleset.squop_up_turns(s.board, nxt)
            special = turns == 2 and self.ruleset.winks_outside_piles(s.board) == 0
            rule = "22.2.3" if special else "22.2"
            s.squop_up = _SquopUp(squopped=p, turns=turns)
            self._emit(
                EventType.SQUOP_UP,
                colour,
                rule,
                f"{_both(p).capitalize()} are squopped up (rule 22.1): {_both(squopping)} have "
                f"{turns} squop-up turn{'s' if turns != 1 else ''} (rule {rule}).",
                turns=turns,
                squopped=p.value,
            )
            return

    # ---- who plays (10.1.1, 22.6.1, 23.3) -----------------------------------

    def _who_plays(self, shot: ShotRecord, where: str) -> tuple[Colour, ...] | None:
        """The colours whose potted winks earn extra shots; None when the turn was undone."""
        s = self._s
        colour = shot.colour
        if isinstance(shot.event, WrongColourEvent) and shot.event.choice is Choice.REPLAY:
            if colour is not s.turn or s.wrong_turn:
                self._undo_wrong_turn(colour)
                return None
        if isinstance(shot.event, WrongColourEvent) and colour is s.turn and not s.wrong_turn:
            raise IllegalRecordError(
                f"{where}.event: a wrong_colour event, but {colour.value} is the colour due "
                "(rule 23.3); leave the event out"
            )
        if s.nominated_turn and not s.wrong_turn and colour is not s.turn:
            if not self.ruleset.can_play(s.board, colour):
                raise IllegalRecordError(
                    f"{where}.colour: {colour.value} has no free wink, so it cannot be "
                    "nominated (rule 22.6.1)"
                )
            self._emit(
                EventType.NOMINATED_SHOT,
                colour,
                "22.6.1",
                f"{_name(s.turn)} takes a free shot with a nominated colour: {colour.value} "
                "(rule 22.6.1).",
                person=s.turn.value,
            )
            s.nominated_turn = False
            return (colour, s.turn)
        if colour is s.turn:
            if s.nominated_turn:
                s.nominated_turn = False
            return (colour,)
        # 23.3: the wrong colour, or a player out of turn.
        if shot.is_pass:
            raise IllegalRecordError(
                f"{where}.colour: {colour.value} passed, but it is {s.turn.value}'s turn"
            )
        if not self.ruleset.can_play(s.board, colour):
            raise IllegalRecordError(
                f"{where}.colour: {colour.value} played, but it has no free wink to play"
            )
        accepted = isinstance(shot.event, WrongColourEvent)
        self._emit(
            EventType.WRONG_COLOUR,
            colour,
            "23.3",
            f"{_name(colour)} played, but it was {s.turn.value}'s turn (rule 23.3); "
            + (
                "the opponents accept the shot (rule 23.3 ii)."
                if accepted
                else "play went on, which accepts it (rule 23.4)."
            ),
            choice="accept",
            expected=s.turn.value,
        )
        # 23.3 (i) may still send every wink back to this moment.
        s.turn_snapshot = s.copy()
        s.slot = s.turn
        s.turn = colour
        s.wrong_turn = True
        s.nominated_turn = False
        return (colour,)

    # ---- fouls and interference (23, 24) -------------------------------------

    def _undo_wrong_turn(self, colour: Colour) -> None:
        """Rule 23.3 (i): every wink goes back to the start of the turn; the right colour plays.

        On the wrong shot itself nothing has been applied yet, so its board is
        simply ignored; later in a wrong turn (after a pot) the state goes back
        to the moment the wrong colour started playing.
        """
        s = self._s
        snap = s.turn_snapshot if s.wrong_turn else None
        due = snap.turn if snap is not None else s.turn
        self._emit(
            EventType.WRONG_COLOUR,
            colour,
            "23.3",
            f"{_name(colour)} played, but it was {due.value}'s turn: the winks go back to "
            f"the start of the turn and {due.value} plays (rule 23.3 i).",
            choice="replay",
        )
        if snap is not None:
            snap.last_t = s.last_t
            snap.turn_snapshot = snap.copy()
            self._s = snap

    def _foul_replayed(self, colour: Colour) -> None:
        """Rules 23.2 (i) and 23.2.1: winks go back; the third successive one forfeits."""
        s = self._s
        s.fouls_in_row += 1
        self._emit(
            EventType.FOUL,
            colour,
            "23.2",
            f"Foul shot by {colour.value}: the opponents have the winks replaced and "
            f"{colour.value} plays again (rule 23.2 i).",
            choice="replay",
        )
        if s.fouls_in_row >= FOULS_BEFORE_FORFEIT:
            s.fouls_in_row = 0
            s.shots_left -= 1
            self._emit(
                EventType.FORFEIT,
                colour,
                "23.2.1",
                f"Three foul shots in succession: {colour.value} forfeits the further shot "
                "(rule 23.2.1).",
            )
            if s.shots_left <= 0:
                self._end_turn()

    def _interference(self, offender: Colour) -> None:
        """Rules 24.4 and 26.6: deliberate interference ends the game 7-0 to the opponents."""
        s = self._s
        s.result = self.ruleset.score_by_interference(offender)
        self._emit(
            EventType.INTERFERENCE,
            offender,
            "24.4",
            f"Deliberate interference by {offender.value}: the game ends "
            f"{s.result.notation} to {_both(offender.partnership.opponents)} (rules 24.4, 26.6).",
        )
        self._game_end()

    # ---- the board after a shot ---------------------------------------------

    def _apply_board(self, shot: ShotRecord, played: tuple[Colour, ...], where: str) -> None:
        """Steps 5-8 of the order above, for a shot whose board the rules keep.

        ``played`` holds the colours whose potted winks earn extra shots and
        whose off winks cost a forfeit (12, 14; 22.6.2, 22.6.3).
        """
        s = self._s
        new = shot.board
        if new is None:
            raise IllegalRecordError(f"{where}.board: missing; only a pass may leave it out")
        problems = [f"{where}.board: {p}" for p in self.ruleset.board_problems(new)]
        if self._ids_from_first_board:
            self._ids_from_first_board = False
            if not problems and set(new.by_id) != set(s.board.by_id):
                s.board = s.recorded = _unplayed_copy(new)
        problems += [f"{where}.board: {p}" for p in self._transition_problems(new, shot.colour)]
        if problems:
            raise IllegalRecordError(problems)
        prev = s.board
        colour = shot.colour
        foul = shot.event if isinstance(shot.event, FoulEvent) else None
        # 23.2 (ii), 23.3 (ii): an accepted foul or wrong-colour turn ends, even after a pot.
        accepted_wrong = (
            isinstance(shot.event, WrongColourEvent)
            and shot.event.choice is Choice.ACCEPT
            and s.wrong_turn
        )
        ends_turn = foul is not None or accepted_wrong

        # 9.3: played from behind the baseline without crossing it: not a shot.
        if _unchanged(prev, new) and s.board.count(colour, WinkStatus.UNPLAYED) > 0:
            self._emit(
                EventType.NOT_A_SHOT,
                colour,
                "9.3",
                f"The {colour.value} wink did not cross the baseline: not a shot; it is put "
                f"back and {colour.value} plays again (rule 9.3).",
            )
            s.recorded = new
            return

        before = prev.by_id
        now = {w.id: w for w in new.winks}
        newly_potted: list[Wink] = []
        newly_off: list[Wink] = []
        winks: list[Wink] = []
        for wid, w in now.items():
            old = before[wid]
            if old.status is WinkStatus.POTTED and w.status is not WinkStatus.POTTED:
                # 8.1.3: a potted wink knocked out goes straight back in.
                self._emit(
                    EventType.REPOTTED,
                    w.colour,
                    "8.1.3",
                    f"{wid} was knocked out of the pot and goes back in; winks it disturbed are "
                    "restored (rule 8.1.3).",
                    wink=wid,
                )
                w = old
            elif w.status is WinkStatus.POTTED and old.status is not WinkStatus.POTTED:
                newly_potted.append(w)
            elif w.status is WinkStatus.OFF:
                was_off = s.recorded.by_id.get(wid)
                if not (
                    was_off and was_off.status is WinkStatus.OFF and was_off.mat_xy == w.mat_xy
                ):
                    newly_off.append(w)
            winks.append(w)
        board = new.with_winks(winks)
        # A repotted wink cannot still squop or be squopped.
        board = _drop_dangling_squops(board)
        newly_out = tuple(
            c
            for c in Colour
            if self.ruleset.potted_out(board, c) and not any(c in g for g in s.pot_outs)
        )
        if (s.pot_outs or newly_out) and self.ruleset.lifts_squops_after_pot_out:
            board = _lift_squops(board)  # 20.1

        for w in newly_potted:
            self._emit(
                EventType.POTTED, w.colour, "8.1", f"{w.id} is potted (rule 8.1).", wink=w.id
            )
        self._announce_squops(prev, board)

        # 13.1: off winks go back on the field of play before the next shot.
        board = self._replace_off_winks(board, newly_off)

        # 12: extra shots; 14: forfeits.
        extra = 0 if ends_turn else self.ruleset.extra_shots(played, newly_potted)
        person = s.turn
        lost = self.ruleset.forfeits_for_off(played, newly_off)
        if lost:
            s.forfeits[person] += lost
            rule = "22.6.3" if len(played) > 1 else "14"
            self._emit(
                EventType.FORFEIT,
                person,
                rule,
                f"{_name(person)} sent a {'/'.join(c.value for c in played)} wink off and "
                f"forfeits the next {person.value} shot (rule {rule}).",
                deferred=True,
            )

        # 15, 20: pot-outs; 20.1 lifts every squop.
        first_pot_out = bool(newly_out) and not s.pot_outs
        if newly_out:
            s.pot_outs.append(newly_out)
            for c in newly_out:
                self._emit(EventType.POT_OUT, c, "15", f"{_name(c)} has potted out (rule 15).")
        if first_pot_out:
            # 20: neither the timed period nor the round limit applies any more.
            s.round_limit = None
            s.time_pending = False
            self._emit(
                EventType.POT_OUT,
                newly_out[0],
                "20.1",
                "Squops are lifted for the rest of the game, and the time limit no longer "
                "applies (rules 20, 20.1).",
            )
        s.board = board
        s.recorded = new

        if foul is not None:
            self._emit(
                EventType.FOUL,
                colour,
                "23.2",
                f"Foul shot by {colour.value}: the opponents accept it and the turn ends "
                "(rule 23.2 ii).",
                choice="accept",
            )

        if s.pot_outs and self.ruleset.pot_out_game_over(c for g in s.pot_outs for c in g):
            s.result = self.ruleset.score_by_pot_outs(s.pot_outs)
            self._freeing_check(person, newly_out, game_over=True)
            self._game_end()
            return
        self._freeing_check(person, newly_out, game_over=False)

        # 21: every unpotted wink squopped ends the game.
        if self.ruleset.all_unpotted_squopped(board):
            self._end_by_tiddlies(EndedBy.ALL_SQUOPPED, "21")
            return

        if newly_potted and extra and self.ruleset.can_play(board, person):
            self._emit(
                EventType.EXTRA_SHOT,
                person,
                "12",
                f"{_name(person)} has {extra} extra shot{'s' if extra > 1 else ''} (rule 12).",
                shots=extra,
            )
        self._shot_done(extra=extra, end_turn=ends_turn)

    def _shot_done(self, *, extra: int, end_turn: bool = False) -> None:
        """Rules 12, 12.1: a shot is used up and ``extra`` are added; none left ends the turn."""
        s = self._s
        s.fouls_in_row = 0
        s.shots_left = 0 if end_turn else s.shots_left - 1 + extra
        if s.shots_left <= 0:
            self._end_turn()

    def _freeing_check(
        self, person: Colour, newly_out: Sequence[Colour], *, game_over: bool
    ) -> None:
        """Rule 22.4.1 (freeing shot) and the second obligation of 22.5.2."""
        s = self._s
        ends_21 = self.ruleset.all_unpotted_squopped(s.board)
        if s.squop_up is not None and person not in s.squop_up.squopped.colours:
            squopped = s.squop_up.squopped
            freed = any(self.ruleset.can_play(s.board, c) for c in squopped.colours)
            if freed or newly_out or game_over or ends_21:
                # A pot-out lifts every squop (20.1), so name the pot first.
                how = (
                    "a sixth wink was potted"
                    if newly_out
                    else "an opponent wink is free"
                    if freed
                    else "it ends the game"
                )
                self._emit(
                    EventType.FREEING_SHOT,
                    person,
                    "22.4.1",
                    f"Freeing shot: {how}; squop-up turns are over (rules 22.4.1, 22.5).",
                )
                s.squop_up = None
                s.must_free = None if (newly_out or game_over or ends_21) else squopped
        if s.pot_outs:
            s.must_free = None  # 22.5.4
            s.squop_up = None
        self._keep_next_colour_free(person)

    def _keep_next_colour_free(self, person: Colour) -> None:
        """Rule 22.5.2, second sentence: until the freed partnership has started a turn
        with a free wink, if a wink of the opponent colour due next is free at the end of
        any shot, at least one wink of that colour must be left free at the end of the turn.
        """
        s = self._s
        if s.must_free is None or person in s.must_free.colours:
            return
        due = person.next()
        if due in s.must_free.colours and self.ruleset.can_play(s.board, due):
            s.keep_free_colour = due

    def _announce_squops(self, prev: Board, board: Board) -> None:
        """Rules 8.2 and 8.3: each new squop, and each squopped wink that became free."""
        before = prev.by_id
        for w in board.winks:
            old = before[w.id]
            for below in w.squops:
                if below not in old.squops:
                    self._emit(
                        EventType.SQUOPPED,
                        board.wink(below).colour,
                        "8.2",
                        f"{w.id} squops {below} (rule 8.2).",
                        wink=below,
                        by=w.id,
                    )
            if old.status is WinkStatus.SQUOPPED and w.status is WinkStatus.FREE:
                self._emit(
                    EventType.FREED, w.colour, "8.3", f"{w.id} is free (rule 8.3).", wink=w.id
                )

    def _replace_off_winks(self, board: Board, newly_off: Sequence[Wink]) -> Board:
        """Rule 13.1: each off wink goes back near where it left, clear of the others."""
        s = self._s
        for w in board.winks:
            if w.status is not WinkStatus.OFF:
                continue
            left_at = w.mat_xy or s.board.wink(w.id).mat_xy
            if left_at is None:
                left_at = self.layout.corner_mat_xy(w.colour)
            others = [
                o
                for o in board.winks
                if o.id != w.id and o.status in (WinkStatus.FREE, WinkStatus.SQUOPPED)
            ]
            spot = replacement_position(
                w.size, left_at, others, live_baselines(board), self.layout, wink_id=w.id
            )
            # A tenth of a millimetre is far below what anyone can place by hand.
            x_mm, y_mm = (round(v, 1) for v in spot.mat_xy_mm)
            board = board.with_wink(
                w.with_status(WinkStatus.FREE).with_position(x_mm, y_mm).with_squops(())
            )
            if w in newly_off:
                note = "" if spot.satisfied else " (no spot meets every condition: umpire to check)"
                self._emit(
                    EventType.OFF,
                    w.colour,
                    "13.1",
                    f"{w.id} left the playing volume; it is placed at "
                    f"({x_mm:.0f}, {y_mm:.0f}) mm before the next shot (rule 13.1){note}.",
                    wink=w.id,
                    mat_xy_mm=[x_mm, y_mm],
                )
        return board

    def _transition_problems(self, new: Board, colour: Colour) -> list[str]:
        """What the new board cannot be, given the previous one (8.1, 9.3, 10.6, 13)."""
        prev = self._s.board.by_id
        now = new.by_id
        found = []
        for wid, old in prev.items():
            if wid not in now:
                if old.status is WinkStatus.POTTED:
                    found.append(f"potted wink {wid!r} vanished from the board")
                else:
                    found.append(f"wink {wid!r} vanished without being potted")
        for wid, w in now.items():
            old_w = prev.get(wid)
            if old_w is None:
                found.append(f"unknown wink {wid!r} appeared")
                continue
            if (w.colour, w.size) != (old_w.colour, old_w.size):
                found.append(
                    f"wink {wid!r} changed from {old_w.size.value} {old_w.colour.value} "
                    f"to {w.size.value} {w.colour.value}"
                )
            if w.status is WinkStatus.UNPLAYED and old_w.status is not WinkStatus.UNPLAYED:
                found.append(f"wink {wid!r} was {old_w.status.value} and is now unplayed again")
        entered = [
            w
            for wid, w in now.items()
            if wid in prev
            and prev[wid].status is WinkStatus.UNPLAYED
            and w.status is not WinkStatus.UNPLAYED
        ]
        for w in entered:
            if w.colour is not colour:
                found.append(
                    f"unplayed {w.colour.value} wink {w.id!r} came into play on a "
                    f"{colour.value} shot"
                )
        own = [w.id for w in entered if w.colour is colour]
        if len(own) > 1:
            found.append(
                f"{len(own)} unplayed winks {own!r} came into play in one shot (rule 10.6)"
            )
        return found

    # ---- end of game ----------------------------------------------------------

    def _end_by_tiddlies(self, ended_by: EndedBy, rule: str) -> None:
        """Rules 19 and 21.1: rank by tiddlies after replacing off winks (13)."""
        s = self._s
        counts = self.ruleset.tiddlies(s.board)
        s.result = self.ruleset.score_by_tiddlies(counts, self.game_format, ended_by)
        why = ""
        if ended_by is EndedBy.ALL_SQUOPPED:
            why = "No wink can be played: every unpotted wink is squopped (rule 21). "
        elif rule == "18":
            why = "The round limit period is complete (rule 18). "
        self._game_end(rule, why)

    def _game_end(self, rule: str | None = None, why: str = "") -> None:
        """Rule 16: announce the result, citing the rule that scored it (19.2, 20.2, 21.1, 24.4)."""
        s = self._s
        result = s.result
        if result is None:
            return
        if rule is None:
            rule = {
                EndedBy.POT_OUT: "20.2",
                EndedBy.INTERFERENCE: "24.4",
                EndedBy.TIME: "19.2",
                EndedBy.ALL_SQUOPPED: "21.1",
            }[result.ended_by]
        winner = result.winner
        who = "a draw" if winner is None else f"a win to {_both(winner)}"
        tid = ""
        if result.tiddlies is not None:
            tid = (
                " Tiddlies: "
                + ", ".join(f"{c.value} {result.tiddlies[c]}" for c in Colour)
                + " (rule 19.1)."
            )
        self._emit(
            EventType.GAME_END,
            None,
            rule,
            f"{why}Game over.{tid} The score is {result.notation}, {who}.",
            ended_by=result.ended_by.value,
            notation=result.notation,
            **(
                {}
                if result.tiddlies is None
                else {"tiddlies": {c.value: n for c, n in result.tiddlies.items()}}
            ),
        )
        s.squop_up = None
        s.must_free = None

    # ---- events -----------------------------------------------------------------

    def _emit(
        self, type_: EventType, colour: Colour | None, rule: str, text: str, **data: Any
    ) -> None:
        self._events.append(
            Event(
                type=type_,
                shot=self._shot_index,
                colour=colour,
                rule=rule,
                text=text,
                t=self._t,
                data=data,
            )
        )


# ---- board helpers -------------------------------------------------------------


def _unchanged(prev: Board, new: Board) -> bool:
    """No wink changed status, squops or (for played winks) position."""
    before = prev.by_id
    for w in new.winks:
        old = before.get(w.id)
        if old is None or old.status is not w.status or set(old.squops) != set(w.squops):
            return False
        if w.status in (WinkStatus.UNPLAYED, WinkStatus.POTTED):
            continue
        a, b = old.mat_xy, w.mat_xy
        if a is not None and b is not None and math.dist(a, b) > UNMOVED_TOLERANCE_MM:
            return False
    return True


def _unplayed_copy(board: Board) -> Board:
    """Rule 5.5: the same winks (ids, colours, sizes), all behind their baselines."""
    return board.with_winks(
        w.with_status(WinkStatus.UNPLAYED).with_position(None, None).with_squops(())
        for w in board.winks
    ).with_tiddlies(None)


def _lift_squops(board: Board) -> Board:
    """Rule 20.1: after a pot-out every squopped wink is unsquopped."""
    return board.with_winks(
        w.with_squops(()).with_status(WinkStatus.FREE)
        if w.status is WinkStatus.SQUOPPED
        else w.with_squops(())
        for w in board.winks
    )


def _drop_dangling_squops(board: Board) -> Board:
    """Squop links to or from potted winks cannot stand (8.2 is about unpotted winks)."""
    potted = {w.id for w in board.winks if w.status is WinkStatus.POTTED}
    winks = [w.with_squops(b for b in w.squops if b not in potted) for w in board.winks]
    board = board.with_winks(winks)
    below = {b for w in board.winks for b in w.squops}
    return board.with_winks(
        w.with_status(WinkStatus.FREE)
        if w.status is WinkStatus.SQUOPPED and w.id not in below
        else w
        for w in board.winks
    )


def replay_record(record: GameRecord) -> tuple[Game, NextTurn]:
    """Replay a whole record: the game (events, result) and whose turn is next."""
    game = Game.from_record(record)
    game.replay(record.shots)
    return game, game.next_turn()


__all__ = ["Game", "NextTurn", "Period", "replay_record"]
