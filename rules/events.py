"""What the referee announces: one :class:`Event` per thing that happened."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rules.board import Colour


class EventType(enum.StrEnum):
    """The kinds of announcement, each with the rule that produces it."""

    POTTED = "potted"
    """A wink came to rest in the pot (8.1)."""
    REPOTTED = "repotted"
    """A potted wink knocked out goes back into the pot (8.1.3)."""
    EXTRA_SHOT = "extra_shot"
    """Own-colour winks potted earn extra shots in the same turn (12)."""
    SQUOPPED = "squopped"
    """A wink became squopped (8.2)."""
    FREED = "freed"
    """A squopped wink became free (8.3)."""
    OFF = "off"
    """A wink left the playing volume and is replaced per 13.1."""
    NOT_A_SHOT = "not_a_shot"
    """A wink played from behind the baseline did not cross it (9.3)."""
    FORFEIT = "forfeit"
    """A shot is forfeited (14, 23.2.1), a deemed pass (14.5)."""
    PASS = "pass"
    """A voluntary pass (11) or a deemed pass with no free wink (11.1)."""
    SQUOP_UP = "squop_up"
    """A partnership is squopped up; the opponents get ``turns`` squop-up turns (22)."""
    SQUOP_UP_TURN = "squop_up_turn"
    """One of the squop-up turns begins (22.3): ``turn`` of ``turns``."""
    FREEING_SHOT = "freeing_shot"
    """A shot that freed an opponent wink, potted a sixth wink or ended the game (22.4.1)."""
    MUST_FREE = "must_free"
    """A reminder that the squopping partnership must free now (22.4, 22.5.2)."""
    FAILURE_TO_FREE = "failure_to_free"
    """The squopping partnership failed to free (22.6)."""
    NOMINATED_SHOT = "nominated_shot"
    """A free shot with a nominated colour (22.6.1)."""
    POT_OUT = "pot_out"
    """All of a colour's winks are potted (15, 20, 20.1)."""
    TIME_UP = "time_up"
    """The timed period ended; the round limit period begins (17, 18)."""
    ROUND = "round"
    """A round of the round limit period ended (18)."""
    FOUL = "foul"
    """A foul shot, replayed or accepted as the opponents chose (23.2)."""
    WRONG_COLOUR = "wrong_colour"
    """The wrong colour was played (23.3)."""
    INTERFERENCE = "interference"
    """Deliberate interference: the game ends 7-0 (24.4, 26.6)."""
    GAME_END = "game_end"
    """The game is over, with the score (16, 19, 20.2, 21)."""


class FailureToFree(enum.StrEnum):
    """Why a failure to free (rule 22.6) was called; :attr:`rule` is the rule broken."""

    NO_FREEING_SHOT = "no_freeing_shot"
    """The squop-up turns ended without a freeing shot (22.4)."""
    FORFEITED = "forfeited"
    """The turn due to free was forfeited under rule 14 (22.4.2)."""
    NO_OPPONENT_WINK_FREE = "no_opponent_wink_free"
    """After a freeing shot, a turn ended with no opponent wink free (22.5.2)."""
    NEXT_COLOUR_NOT_KEPT_FREE = "next_colour_not_kept_free"
    """A free wink of the opponent colour due next was not left free (22.5.2)."""

    @property
    def rule(self) -> str:
        """The rule number the failure breaks."""
        return {
            FailureToFree.NO_FREEING_SHOT: "22.4",
            FailureToFree.FORFEITED: "22.4.2",
            FailureToFree.NO_OPPONENT_WINK_FREE: "22.5.2",
            FailureToFree.NEXT_COLOUR_NOT_KEPT_FREE: "22.5.2",
        }[self]


@dataclass(frozen=True)
class Event:
    """One announcement.

    Parameters
    ----------
    type : EventType
    shot : int or None
        Index into the record's ``shots`` of the shot that caused it (for
        inferred turns: the last shot before them).
    colour : Colour or None
        The colour the event is about.
    rule : str
        The rule number that applies, e.g. ``"22.2"``.
    text : str
        The sentence a referee would say.
    t : float or None
        Game time in seconds since the first shot.
    data : mapping
        Extra JSON fields for this type (``turns``, ``wink``, ``mat_xy_mm``...).
    """

    type: EventType
    shot: int | None
    colour: Colour | None
    rule: str
    text: str
    t: float | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form used by ``winkref replay --json``."""
        out: dict[str, Any] = {
            "type": self.type.value,
            "shot": self.shot,
            "colour": None if self.colour is None else self.colour.value,
            "rule": self.rule,
            "text": self.text,
            "t": self.t,
        }
        out.update(self.data)
        return out
