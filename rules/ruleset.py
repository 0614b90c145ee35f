"""Rulesets: the ETwA 2012 rules as a class whose methods other rule systems override.

The engine (:mod:`rules.engine`) asks its :class:`Ruleset` for every number
and every rule-specific judgement: the equipment counts, the timed period,
extra shots, forfeits, squop-up turns and the scoring. A later ruleset (the
earlier ETwA rules, the International Rules of the 1960s, the Game of Squop
of 1969 with four winks per colour and 10-point games, the Victorian parlour
game) subclasses :class:`Etwa2012` and overrides only what differs, e.g.
``winks_per_colour = 4`` or :meth:`Ruleset.extra_shots` giving a shot for
any potted wink.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rules.board import (
    LARGE_WINKS_PER_COLOUR,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    SMALL_WINKS_PER_COLOUR,
    WINKS_PER_COLOUR,
    Board,
    Colour,
    Partnership,
    Wink,
    WinkSize,
    WinkStatus,
)
from rules.scoring import (
    ETWA_GAME_POINTS,
    ETWA_POT_OUT_TRANSFER,
    ETWA_RANK_POINTS,
    EndedBy,
    GameFormat,
    GameScore,
    score_by_interference,
    score_by_pot_outs,
    score_by_tiddlies,
    tiddlies,
)


class UnknownRulesetError(ValueError):
    """A ruleset name that is not in :data:`RULESETS`."""


class Ruleset:
    """The ETwA Official Rules of April 2012; subclass and override what differs."""

    name: str = "etwa-2012"
    title: str = "ETwA Official Rules (April 2012)"

    #: Rule 2.1.1: six winks of each colour, two large and four small.
    winks_per_colour: int = WINKS_PER_COLOUR
    large_winks_per_colour: int = LARGE_WINKS_PER_COLOUR
    small_winks_per_colour: int = SMALL_WINKS_PER_COLOUR

    #: Rule 17: 25 minutes for pairs, 20 for singles, 22½ for three players.
    timed_periods_s: Mapping[GameFormat, float] = {
        GameFormat.PAIRS: 25 * 60.0,
        GameFormat.SINGLES: 20 * 60.0,
        GameFormat.THREE: 22.5 * 60.0,
    }
    #: Rule 18: five further rounds after the current one.
    round_limit_rounds: int = 5
    #: Rules 19.2 and 20.2.
    rank_points: Sequence[int] = ETWA_RANK_POINTS
    #: Rule 20.2.
    pot_out_transfer: int = ETWA_POT_OUT_TRANSFER
    #: Rules 24.4 and 26.6.
    game_points: int = ETWA_GAME_POINTS
    #: Rule 20.1: after a pot-out every squop is lifted.
    lifts_squops_after_pot_out: bool = True

    # ---- equipment ----------------------------------------------------------

    def board_problems(self, board: Board) -> list[str]:
        """Rule 2.1.1: every colour has exactly its six winks, two large and four small.

        Missing winks are reported too: a board lists every wink, potted and
        unplayed ones included, so that none can vanish unnoticed. Tiddlies,
        when the board carries them, must agree with the winks (rule 19.1).
        """
        found = board.problems()
        if board.tiddlies is not None:
            counted = self.tiddlies(board)
            for colour in Colour:
                said = board.tiddlies.get(colour, 0)
                if said != counted[colour]:
                    found.append(
                        f"tiddlies.{colour.value} is {said}, but the winks give "
                        f"{counted[colour]} (rule 19.1)"
                    )
        found.extend(self.off_mat_problems(board))
        for colour in Colour:
            winks = board.of_colour(colour)
            if len(winks) < self.winks_per_colour:
                found.append(
                    f"{len(winks)} {colour.value} winks, but rule 2.1.1 needs "
                    f"{self.winks_per_colour} (list every wink, potted and unplayed too)"
                )
            for size, need in (
                (WinkSize.LARGE, self.large_winks_per_colour),
                (WinkSize.SMALL, self.small_winks_per_colour),
            ):
                n = sum(1 for w in winks if w.size is size)
                if len(winks) == self.winks_per_colour and n != need:
                    found.append(
                        f"{n} {size.value} {colour.value} winks, but rule 2.1.1 needs {need}"
                    )
        return found

    @staticmethod
    def off_mat_problems(board: Board) -> list[str]:
        """Rules 3, 4 and 13: a free or squopped wink lies on the field of play.

        Only a wink wholly beyond the mat's edge (its centre more than its
        radius outside) is reported: anything nearer is left to the vision's
        own uncertainty.
        """
        found = []
        for w in board.winks:
            xy = w.mat_xy
            if xy is None or w.status not in (WinkStatus.FREE, WinkStatus.SQUOPPED):
                continue
            x_mm, y_mm = xy
            if (
                abs(x_mm) > MAT_LENGTH_MM / 2 + w.radius_mm
                or abs(y_mm) > MAT_WIDTH_MM / 2 + w.radius_mm
            ):
                found.append(
                    f"{w.status.value} wink {w.id!r} at ({x_mm:g}, {y_mm:g}) mm is wholly off "
                    f"the mat (|x| <= {MAT_LENGTH_MM / 2:g}, |y| <= {MAT_WIDTH_MM / 2:g} mm); "
                    "a wink that left the playing volume has status 'off' (rule 13)"
                )
        return found

    def starting_board(self) -> Board:
        """Rule 5.5: every wink behind its baseline, ids ``blue-L1`` .. ``blue-S4``."""
        winks = []
        for colour in Colour:
            for size, n, tag in (
                (WinkSize.LARGE, self.large_winks_per_colour, "L"),
                (WinkSize.SMALL, self.small_winks_per_colour, "S"),
            ):
                for i in range(1, n + 1):
                    winks.append(
                        Wink(
                            id=f"{colour.value}-{tag}{i}",
                            colour=colour,
                            size=size,
                            status=WinkStatus.UNPLAYED,
                        )
                    )
        return Board(winks=tuple(winks))

    # ---- time (17, 17.1) ------------------------------------------------

    def timed_period_s(self, game_format: GameFormat, override_s: float | None = None) -> float:
        """Rule 17: the timed period for the format; rule 17.1: unless set for this game."""
        if override_s is not None:
            return float(override_s)
        return float(self.timed_periods_s[game_format])

    # ---- shots (11, 12, 14) ----------------------------------------------

    @staticmethod
    def can_play(board: Board, colour: Colour) -> bool:
        """Rules 8.3 and 11.1: a colour can play when it has a free or unplayed wink.

        An unplayed wink is neither potted nor squopped, so it is free (8.3).
        A wink that is ``off`` is put back (13) before the shot, free.
        """
        return any(
            w.status in (WinkStatus.FREE, WinkStatus.UNPLAYED, WinkStatus.OFF)
            for w in board.of_colour(colour)
        )

    def extra_shots(self, played: Iterable[Colour], newly_potted: Iterable[Wink]) -> int:
        """Rules 12-12.3: one extra shot per wink of the colour(s) played that became potted.

        ``played`` is the colour being played; for a free shot with a
        nominated colour it holds the nominated and the normal colour (22.6.2).
        """
        colours = set(played)
        return sum(1 for w in newly_potted if w.colour in colours)

    def forfeits_for_off(self, played: Iterable[Colour], newly_off: Iterable[Wink]) -> int:
        """Rules 14-14.2: one forfeited shot if any wink of the colour played left the volume.

        Two own winks off still forfeit one shot (14.1); other colours'
        winks forfeit nothing (14.2).
        """
        colours = set(played)
        return 1 if any(w.colour in colours for w in newly_off) else 0

    # ---- squop-ups (22.2) ----------------------------------------------------

    @staticmethod
    def winks_outside_piles(board: Board) -> int:
        """Rules 22.2, 22.2.2: the winks on the field of play that are not part of piles.

        Unplayed and potted winks are not on the field of play (rule 3), and
        squopped or squopping winks are part of a pile (8.2.2). A wink that is
        ``off`` is put back on the field of play (13) before the count matters.
        """
        in_piles = {wid for pile in board.piles() for wid in pile}
        return sum(
            1
            for w in board.winks
            if w.status in (WinkStatus.FREE, WinkStatus.OFF) and w.id not in in_piles
        )

    def squop_up_turns(self, board: Board, next_squopping_colour: Colour) -> int:
        """Rule 22.2: one more than the winks on the field of play that are not in piles.

        Rule 22.2.3: when no such wink exists and the squopping colour next in
        sequence has no free wink, the number becomes two.
        """
        loose = self.winks_outside_piles(board)
        if loose == 0 and not self.can_play(board, next_squopping_colour):
            return 2
        return 1 + loose

    @staticmethod
    def squopped_up(board: Board, partnership: Partnership) -> bool:
        """Rule 22.1: the partnership has unpotted winks and every one is squopped."""
        return _unpotted_all_squopped(w for c in partnership.colours for w in board.of_colour(c))

    @staticmethod
    def all_unpotted_squopped(board: Board) -> bool:
        """Rule 21: some wink is unpotted and every unpotted wink is squopped."""
        return _unpotted_all_squopped(board.winks)

    # ---- scoring (19-21, 24.4) --------------------------------------------

    def tiddlies(self, board: Board) -> dict[Colour, int]:
        """Rule 19.1, see :func:`rules.scoring.tiddlies`."""
        return tiddlies(board)

    def score_by_tiddlies(
        self, tiddly_counts: Mapping[Colour, int], game_format: GameFormat, ended_by: EndedBy
    ) -> GameScore:
        """Rules 19.2 and 21.1."""
        return score_by_tiddlies(
            tiddly_counts, game_format, ended_by=ended_by, rank_points=self.rank_points
        )

    def score_by_pot_outs(self, order: Sequence[Iterable[Colour]]) -> GameScore:
        """Rule 20.2."""
        return score_by_pot_outs(
            order, rank_points=self.rank_points, transfer=self.pot_out_transfer
        )

    def score_by_interference(self, offender: Colour) -> GameScore:
        """Rules 24.4 and 26.6."""
        return score_by_interference(offender, game_points=self.game_points)

    def potted_out(self, board: Board, colour: Colour) -> bool:
        """Rule 15: every wink of the colour is potted."""
        winks = board.of_colour(colour)
        return bool(winks) and all(w.status is WinkStatus.POTTED for w in winks)

    def pot_out_game_over(self, potted_out: Iterable[Colour]) -> bool:
        """Rule 20: the game ends once both colours of one partnership have potted out."""
        done = set(potted_out)
        return any(set(p.colours) <= done for p in Partnership)


def _unpotted_all_squopped(winks: Iterable[Wink]) -> bool:
    """Some of ``winks`` is unpotted, and every unpotted one is squopped."""
    unpotted = [w for w in winks if w.status is not WinkStatus.POTTED]
    return bool(unpotted) and all(w.status is WinkStatus.SQUOPPED for w in unpotted)


class Etwa2012(Ruleset):
    """The ETwA Official Rules of April 2012, the default."""


#: Ruleset classes by the name used in RECORD.json's ``ruleset`` field.
RULESETS: dict[str, type[Ruleset]] = {"etwa-2012": Etwa2012}


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``.

    Raises
    ------
    UnknownRulesetError
        Quoting the name and listing the known ones.
    """
    try:
        return RULESETS[name]()
    except KeyError:
        known = ", ".join(repr(n) for n in sorted(RULESETS))
        raise UnknownRulesetError(f"unknown ruleset {name!r}; known rulesets: {known}") from None


__all__ = [
    "Etwa2012",
    "RULESETS",
    "Ruleset",
    "UnknownRulesetError",
    "get_ruleset",
]
