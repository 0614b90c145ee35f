"""Tiddlies, game points and the scoresheet notation (rules 19-21, examples F.1-F.3).

Points are exact :class:`fractions.Fraction` values: shared ranks split their
points equally (19.2, 20.2), and thirds happen when three colours tie.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from rules.board import Board, Colour, Partnership, WinkStatus

#: Rules 19.2 and 20.2: points for the first, second, third and fourth colour.
ETWA_RANK_POINTS: tuple[int, ...] = (4, 2, 1, 0)
#: Rule 20.2: one point moves from the losing to the winning partnership.
ETWA_POT_OUT_TRANSFER = 1
#: Rules 24.4 and 26.6: deliberate interference ends the game 7-0.
ETWA_GAME_POINTS = 7

_VULGAR = {
    Fraction(1, 2): "½",
    Fraction(1, 3): "⅓",
    Fraction(2, 3): "⅔",
    Fraction(1, 4): "¼",
    Fraction(3, 4): "¾",
    Fraction(1, 6): "⅙",
    Fraction(5, 6): "⅚",
}


class GameFormat(enum.StrEnum):
    """Rules 1.1-1.3: how many people play."""

    PAIRS = "pairs"
    """Four people, one colour each (1.1)."""
    SINGLES = "singles"
    """Two people, one partnership each (1.2)."""
    THREE = "three"
    """Three people: one plays a partnership, two play a colour each (1.3)."""


class EndedBy(enum.StrEnum):
    """How a game ended (rule 16), plus the penalties of rules 24.4 and 26.6."""

    TIME = "time"
    """Way (i): the timed period and the round limit period ran out (17, 18, 19)."""
    POT_OUT = "pot_out"
    """Way (ii): both colours of one partnership potted out (15, 20)."""
    ALL_SQUOPPED = "all_squopped"
    """Way (iii): no wink can be played because every unpotted wink is squopped (21)."""
    INTERFERENCE = "interference"
    """Deliberate interference or disruption: 7-0 to the opponents (24.4, 26.6)."""


@dataclass(frozen=True)
class GameScore:
    """The outcome of a game.

    Parameters
    ----------
    points : dict of Colour to Fraction
        Each colour's points before partners' points are added.
    score : dict of Partnership to Fraction
        The game score (partners' points added, and for a pot-out the
        transfer of rule 20.2 applied).
    notation : str
        As on a scoresheet, winner first: ``"5½–1½"``, ``"6*–1*"`` (F.3).
    ended_by : EndedBy
    tiddlies : dict of Colour to int, or None
        The tiddlies the points were ranked by, when they were.
    """

    points: Mapping[Colour, Fraction]
    score: Mapping[Partnership, Fraction]
    notation: str
    ended_by: EndedBy
    tiddlies: Mapping[Colour, int] | None = field(default=None)

    @property
    def winner(self) -> Partnership | None:
        """The partnership with the higher game score, or None for a draw."""
        a, b = (self.score[p] for p in Partnership)
        if a == b:
            return None
        return Partnership.BLUE_RED if a > b else Partnership.GREEN_YELLOW


# --------------------------------------------------------------------------
# Tiddlies (19.1)
# --------------------------------------------------------------------------


def tiddlies(board: Board, *, off_counts_as_free: bool = False) -> dict[Colour, int]:
    """Rule 19.1: three tiddlies per potted wink, one per free played wink.

    Unplayed winks (behind the baseline) and squopped winks count nothing.
    A wink that is ``off`` counts nothing as seen on this board: it is not on
    the field of play until rule 13 puts it back. Pass
    ``off_counts_as_free=True`` to count it as the free wink it becomes once
    replaced; the engine instead replaces off winks (13.1) before scoring the
    final board, so both views agree at the end of a game.

    Parameters
    ----------
    board : Board
    off_counts_as_free : bool

    Returns
    -------
    dict of Colour to int
        Every colour, including those with no tiddlies.
    """
    counts = dict.fromkeys(Colour, 0)
    for wink in board.winks:
        if wink.status is WinkStatus.POTTED:
            counts[wink.colour] += 3
        elif wink.status is WinkStatus.FREE or (
            off_counts_as_free and wink.status is WinkStatus.OFF
        ):
            counts[wink.colour] += 1
    return counts


# --------------------------------------------------------------------------
# Ranks with shared points (19.2, 20.2)
# --------------------------------------------------------------------------


def share_rank_points(
    groups: Sequence[Iterable[Colour]], rank_points: Sequence[int] = ETWA_RANK_POINTS
) -> dict[Colour, Fraction]:
    """Rules 19.2 and 20.2: colours that share a rank share its points equally.

    Parameters
    ----------
    groups : sequence of iterables of Colour
        Best first; each group holds the colours that tie for one rank.
    rank_points : sequence of int
        Points for first, second, ... place.

    Returns
    -------
    dict of Colour to Fraction
        For example ``[[blue], [green, red], [yellow]]`` gives blue 4, green
        and red 1½ each (2 + 1 shared), yellow 0 (example F.1).
    """
    points: dict[Colour, Fraction] = {}
    rank = 0
    for group in groups:
        members = list(group)
        if not members:
            continue
        pooled = sum(
            (Fraction(p) for p in rank_points[rank : rank + len(members)]),
            start=Fraction(0),
        )
        for colour in members:
            points[colour] = pooled / len(members)
        rank += len(members)
    return points


def partnership_sums(points: Mapping[Colour, Fraction]) -> dict[Partnership, Fraction]:
    """Rule 19.2: partners' points are added together (in singles and three as well)."""
    return {
        p: sum((points.get(c, Fraction(0)) for c in p.colours), start=Fraction(0))
        for p in Partnership
    }


def score_by_tiddlies(
    tiddly_counts: Mapping[Colour, int],
    game_format: GameFormat = GameFormat.PAIRS,
    *,
    ended_by: EndedBy = EndedBy.TIME,
    rank_points: Sequence[int] = ETWA_RANK_POINTS,
) -> GameScore:
    """Rule 19.2 (and 21.1): rank the colours by tiddlies, 4/2/1/0, ties shared.

    The format does not change the arithmetic: in singles and three-player
    games each colour is still ranked on its own and partners' points are
    added (rule 19.2 speaks of colours, not people).

    Parameters
    ----------
    tiddly_counts : mapping of Colour to int
        From :func:`tiddlies`; a missing colour counts 0.
    game_format : GameFormat
    ended_by : EndedBy
        ``TIME`` (rule 19) or ``ALL_SQUOPPED`` (rule 21.1).
    rank_points : sequence of int

    Returns
    -------
    GameScore
    """
    del game_format  # kept in the signature: other rulesets score formats differently
    counts = {c: int(tiddly_counts.get(c, 0)) for c in Colour}
    levels = sorted(set(counts.values()), reverse=True)
    groups = [[c for c in Colour if counts[c] == level] for level in levels]
    points = share_rank_points(groups, rank_points)
    score = partnership_sums(points)
    return GameScore(
        points=points,
        score=score,
        notation=notation(score),
        ended_by=ended_by,
        tiddlies=counts,
    )


def score_by_pot_outs(
    pot_out_order: Sequence[Iterable[Colour]],
    *,
    rank_points: Sequence[int] = ETWA_RANK_POINTS,
    transfer: int = ETWA_POT_OUT_TRANSFER,
) -> GameScore:
    """Rule 20.2: 4/2/1/0 in pot-out order, shared when simultaneous, then one point moves.

    The colours that had not potted out when the game ended rank after all
    that did and, being level with each other, share what is left (rule 20.2
    says the remaining colour gets nothing; when two remain, they share the
    third place's point as colours tied in 19.2 would).

    Parameters
    ----------
    pot_out_order : sequence of iterables of Colour
        The colours that potted out, one group per shot, earliest first.
    rank_points : sequence of int
    transfer : int
        Points moved from the losing to the winning partnership afterwards.

    Returns
    -------
    GameScore
        With asterisks in the notation (F.3).
    """
    groups = [list(g) for g in pot_out_order if list(g)]
    done = {c for g in groups for c in g}
    remaining = [c for c in Colour if c not in done]
    if remaining:
        groups.append(remaining)
    points = share_rank_points(groups, rank_points)
    score = with_transfer(partnership_sums(points), transfer)
    return GameScore(
        points=points,
        score=score,
        notation=notation(score, pot_out=True),
        ended_by=EndedBy.POT_OUT,
    )


def with_transfer(
    score: Mapping[Partnership, Fraction], transfer: int = ETWA_POT_OUT_TRANSFER
) -> dict[Partnership, Fraction]:
    """Rule 20.2: move ``transfer`` points from the losing partnership to the winner.

    A drawn pot-out game (equal scores) has no winner and nothing moves.
    """
    a, b = Partnership
    moved = dict(score)
    if score[a] == score[b]:
        return moved
    winner, loser = (a, b) if score[a] > score[b] else (b, a)
    moved[winner] += transfer
    moved[loser] -= transfer
    return moved


def score_by_interference(offender: Colour, *, game_points: int = ETWA_GAME_POINTS) -> GameScore:
    """Rules 24.4 and 26.6: deliberate interference ends the game 7-0 to the opponents.

    The rules give only the game score. For the per-colour points we split
    the seven equally between the two opposing colours, so that points and
    score stay consistent.
    """
    winners = offender.partnership.opponents
    points = {c: Fraction(game_points, 2) if c in winners.colours else Fraction(0) for c in Colour}
    score = partnership_sums(points)
    return GameScore(
        points=points,
        score=score,
        notation=notation(score),
        ended_by=EndedBy.INTERFERENCE,
    )


# --------------------------------------------------------------------------
# Notation (F.3)
# --------------------------------------------------------------------------


def format_points(value: Fraction) -> str:
    """Points as a scoresheet writes them: ``5``, ``5½``, ``2⅓``, ``¾``.

    Examples
    --------
    >>> format_points(Fraction(11, 2))
    '5½'
    """
    whole, part = divmod(value, 1)
    if part == 0:
        return str(whole)
    glyph = _VULGAR.get(Fraction(part), f"{part.numerator}/{part.denominator}")
    if whole == 0:
        return glyph
    return f"{whole}{glyph}"


def points_number(value: Fraction) -> int | float:
    """Points as a JSON number: whole points stay integers, ``5½`` becomes 5.5.

    Thirds and quarters become the nearest float; the ``notation`` written
    next to them in every JSON output keeps the exact value.

    Examples
    --------
    >>> points_number(Fraction(11, 2))
    5.5
    >>> points_number(Fraction(4))
    4
    """
    return int(value) if value.denominator == 1 else float(value)


#: Each scoresheet glyph written in ASCII ("½" -> " 1/2", the en dash -> "-").
_ASCII = str.maketrans(
    {"–": "-", **{glyph: f" {f.numerator}/{f.denominator}" for f, glyph in _VULGAR.items()}}
)


def ascii_notation(text: str) -> str:
    """Scoresheet text in plain ASCII, for fonts without ``½`` or ``–``.

    Examples
    --------
    >>> ascii_notation("5½–1½")
    '5 1/2-1 1/2'
    """
    return text.translate(_ASCII)


def notation(score: Mapping[Partnership, Fraction], *, pot_out: bool = False) -> str:
    """The game score as on a scoresheet, the higher side first (F.1, F.3).

    Pot-out games are marked with asterisks: ``"6*–1*"``.
    """
    high, low = sorted(score.values(), reverse=True)
    mark = "*" if pot_out else ""
    return f"{format_points(high)}{mark}–{format_points(low)}{mark}"
