"""The umpire's rulings on a board the referee read: who squops whom, and single statuses.

At the end of time (rule 19) the desk counts from a photo of the mat. Where
the referee is unsure (a pair within its measurement's uncertainty, a wink at
the pot's rim or on a line) it says so and lists the winks; the umpire then
looks, close up or with a second view (Appendix D), and rules. The rulings
here apply such decisions to the board, as copies, so that the count and the
score follow the umpire and not the referee's best guess.

A wink the umpire has ruled on is no longer unsure.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rules.board import Board, Wink, WinkStatus


class BadRulingError(ValueError):
    """A ruling that cannot be read, names a wink not on the board, or cannot hold."""


class RulingKind(enum.StrEnum):
    """What the umpire ruled."""

    SQUOPS = "squops"
    """The first wink squops the second (rule 8.2)."""
    APART = "apart"
    """Neither wink squops the other."""
    STATUS = "status"
    """The wink's status, other than squopped (rule 8)."""


@dataclass(frozen=True)
class Ruling:
    """One decision of the umpire.

    Parameters
    ----------
    kind : RulingKind
    wink_ids : tuple of str
        Two ids (upper first for :attr:`RulingKind.SQUOPS`), or one for
        :attr:`RulingKind.STATUS`.
    status : WinkStatus or None
        The ruled status, for :attr:`RulingKind.STATUS` only.
    """

    kind: RulingKind
    wink_ids: tuple[str, ...]
    status: WinkStatus | None = None

    def describe(self) -> str:
        """The ruling in words, e.g. ``"red-S1 squops blue-L2"``."""
        if self.kind is RulingKind.SQUOPS:
            return f"{self.wink_ids[0]} squops {self.wink_ids[1]}"
        if self.kind is RulingKind.APART:
            return f"{self.wink_ids[0]} and {self.wink_ids[1]} do not squop"
        status = self.status.value if self.status is not None else "?"
        return f"{self.wink_ids[0]} is {status}"


def _pair(text: str, option: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise BadRulingError(f"{option} wants two wink ids like red-S1,blue-L2, but got {text!r}")
    if parts[0] == parts[1]:
        raise BadRulingError(f"{option} names the same wink twice: {text!r}")
    return parts[0], parts[1]


def parse_squops(text: str) -> Ruling:
    """``"UPPER,LOWER"``: the umpire ruled that UPPER squops LOWER."""
    return Ruling(RulingKind.SQUOPS, _pair(text, "--squop"))


def parse_apart(text: str) -> Ruling:
    """``"A,B"``: the umpire ruled that neither wink squops the other."""
    return Ruling(RulingKind.APART, _pair(text, "--no-squop"))


def parse_status(text: str) -> Ruling:
    """``"ID=STATUS"``: the umpire ruled the wink's status; squopped is :func:`parse_squops`."""
    wink_id, sep, status_text = (p.strip() for p in text.partition("="))
    if not sep or not wink_id or not status_text:
        raise BadRulingError(f"--status wants ID=STATUS like blue-S3=potted, but got {text!r}")
    try:
        status = WinkStatus(status_text.lower())
    except ValueError:
        known = ", ".join(s.value for s in WinkStatus if s is not WinkStatus.SQUOPPED)
        raise BadRulingError(
            f"--status {text!r}: unknown status {status_text!r}; one of {known}"
        ) from None
    if status is WinkStatus.SQUOPPED:
        raise BadRulingError(
            f"--status {text!r}: say which wink squops it, with --squop UPPER,{wink_id}"
        )
    return Ruling(RulingKind.STATUS, (wink_id,), status)


def _squoppers(winks: dict[str, Wink], wink_id: str) -> list[str]:
    return [w.id for w in winks.values() if wink_id in w.squops]


def _unsquop(winks: dict[str, Wink], upper: str, lower: str) -> None:
    """Take ``lower`` out of ``upper``'s squops (in place on the dict of copies)."""
    winks[upper] = winks[upper].with_squops(s for s in winks[upper].squops if s != lower)


def _freed(winks: dict[str, Wink], ids: Iterable[str], unplayed: set[str]) -> None:
    """Rule 8.3: a squopped wink that nothing squops any more is free.

    Unless it was read as never played from behind its baseline (``unplayed``):
    it is that again, and scores nothing (rule 19.1).
    """
    for wid in ids:
        w = winks[wid]
        if w.status is WinkStatus.SQUOPPED and not _squoppers(winks, wid):
            back = WinkStatus.UNPLAYED if wid in unplayed else WinkStatus.FREE
            winks[wid] = w.with_status(back)


#: A squop ruled between two winks read further apart than this, edge to edge,
#: is refused (mm): the reading is never that far off, so an id is mistyped.
MAX_RULED_SQUOP_GAP_MM = 10.0


def _apply(
    winks: dict[str, Wink],
    ruling: Ruling,
    unplayed: set[str],
    status_ruled: frozenset[str] = frozenset(),
) -> None:
    if ruling.kind in (RulingKind.SQUOPS, RulingKind.APART):
        first, second = ruling.wink_ids
        for wid in (first, second):
            now = winks[wid].status
            if now in (WinkStatus.POTTED, WinkStatus.OFF):
                if wid in status_ruled:
                    raise BadRulingError(
                        f"{ruling.describe()!r}: {wid} is ruled {now.value} too, and a "
                        f"{now.value} wink neither squops nor is squopped; drop one of the "
                        "two rulings"
                    )
                raise BadRulingError(
                    f"{ruling.describe()!r}: {wid} is {now.value}; rule its "
                    f"status too, e.g. --status {wid}=free"
                )
        # A wink whose status the umpire ruled was misread, and perhaps its
        # place too (one read in the pot has the pot's).
        if ruling.kind is RulingKind.SQUOPS and not status_ruled & {first, second}:
            _check_near_enough(winks[first], winks[second], ruling)
        if ruling.kind is RulingKind.SQUOPS and (
            winks[first].status is WinkStatus.UNPLAYED or first in unplayed
        ):
            # The board cannot hold an unplayed wink on another: the reading
            # of one of the two is wrong, and which one is for the umpire.
            # (Read as unplayed, it stays so when an earlier ruling put a
            # wink on it and this one takes that wink off.)
            raise BadRulingError(
                f"{ruling.describe()!r}: {first} was read as unplayed; if it has been played, "
                f"rule that too with --status {first}=free"
            )
        _unsquop(winks, first, second)
        _unsquop(winks, second, first)
        if ruling.kind is RulingKind.SQUOPS:
            upper = winks[first]
            winks[first] = upper.with_squops((*upper.squops, second))
            winks[second] = winks[second].with_status(WinkStatus.SQUOPPED)
        _freed(winks, (first, second), unplayed)
        return
    (wid,) = ruling.wink_ids
    status = ruling.status
    if status is None:
        raise BadRulingError(f"a status ruling on {wid} without a status")
    over = _squoppers(winks, wid)
    under = list(winks[wid].squops)
    # A wink ruled anything but squopped has nothing on it; one potted, off or
    # unplayed lies on nothing either.
    for upper_id in over:
        _unsquop(winks, upper_id, wid)
    wink = winks[wid].with_status(status)
    if status in (WinkStatus.POTTED, WinkStatus.OFF, WinkStatus.UNPLAYED):
        wink = wink.with_squops(())
    if status is WinkStatus.POTTED:
        wink = wink.with_position(None, None)
    winks[wid] = wink
    _freed(winks, under, unplayed)


def _pile_numbers(board: Board) -> dict[str, int]:
    """Rule 8.2.2: each wink in a pile, numbered 1, 2, ... by the pile's first id."""
    groups = sorted(board.piles(), key=min)
    return {wid: n for n, group in enumerate(groups, start=1) for wid in group}


def _contradiction(rulings: Sequence[Ruling]) -> tuple[Ruling, Ruling] | None:
    """The first two rulings that cannot both hold, or None.

    Two statuses for one wink, or two different rulings on one pair (A squops
    B against B squops A, or against A and B do not squop). The umpire said
    one of them by mistake, and the count must not pick one silently.
    """
    said: dict[tuple[str, ...], Ruling] = {}
    for ruling in rulings:
        key = (
            ruling.wink_ids if ruling.kind is RulingKind.STATUS else tuple(sorted(ruling.wink_ids))
        )
        earlier = said.setdefault(key, ruling)
        if earlier != ruling:
            return earlier, ruling
    return None


def _check_near_enough(upper: Wink, lower: Wink, ruling: Ruling) -> None:
    """Rule 8.2: one wink squops another only when some of it is vertically above it."""
    if upper.mat_xy is None or lower.mat_xy is None:
        return
    apart_mm = math.dist(upper.mat_xy, lower.mat_xy)
    gap_mm = apart_mm - (upper.size.diameter_mm + lower.size.diameter_mm) / 2
    if gap_mm > MAX_RULED_SQUOP_GAP_MM:
        raise BadRulingError(
            f"{ruling.describe()!r}: {upper.id} and {lower.id} lie {gap_mm:.0f} mm apart on "
            "the mat, edge to edge, so neither is above the other (rule 8.2); check the ids"
        )


def _circle_of_squops(winks: dict[str, Wink]) -> list[str] | None:
    """Winks that squop each other round a circle (A on B on ... on A), or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(wid: str, path: list[str]) -> list[str] | None:
        state[wid] = 1
        for below in winks[wid].squops:
            if below not in winks:
                continue
            if state.get(below) == 1:
                return [*path[path.index(below) :], below]
            if below not in state:
                found = walk(below, [*path, below])
                if found:
                    return found
        state[wid] = 2
        return None

    for wid in winks:
        if wid not in state:
            found = walk(wid, [wid])
            if found:
                return found
    return None


def check_rulings_agree(rulings: Sequence[Ruling]) -> None:
    """Refuse rulings that contradict each other, naming both.

    Raises
    ------
    BadRulingError
        Two statuses for one wink, or two different rulings on one pair.
    """
    clash = _contradiction(rulings)
    if clash is not None:
        first, second = clash
        raise BadRulingError(
            f"the rulings contradict each other: {first.describe()!r} and "
            f"{second.describe()!r}; give one ruling per wink and per pair"
        )


def apply_rulings(board: Board, rulings: Sequence[Ruling]) -> Board:
    """The board as the umpire ruled it: squops, statuses and piles updated.

    Status rulings are applied first, then the rulings on pairs, each kind in
    the order given: a wink read as potted can be ruled free and then on top
    of another, and a pair ruling is not undone by a status ruling given
    after it.

    Parameters
    ----------
    board : Board
        As read by the referee.
    rulings : sequence of Ruling
        The umpire's decisions: at most one status per wink and one ruling
        per pair (the same ruling twice is allowed).

    Returns
    -------
    Board
        A validated copy. Ruled winks are no longer unsure; the stored
        tiddlies are dropped (count them again by the ruleset).

    Raises
    ------
    BadRulingError
        A ruling names a wink not on the board, or makes a potted or off wink
        squop or be squopped, or two rulings contradict each other.
    """
    check_rulings_agree(rulings)
    winks = {w.id: w for w in board.winks}
    unplayed = {w.id for w in board.winks if w.status is WinkStatus.UNPLAYED}
    ordered = [r for r in rulings if r.kind is RulingKind.STATUS] + [
        r for r in rulings if r.kind is not RulingKind.STATUS
    ]
    status_ruled = frozenset(r.wink_ids[0] for r in rulings if r.kind is RulingKind.STATUS)
    for ruling in ordered:
        missing = [wid for wid in ruling.wink_ids if wid not in winks]
        if missing:
            raise BadRulingError(
                f"{ruling.describe()!r}: no wink {missing[0]!r} on the board; "
                f"the winks are {sorted(winks)!r}"
            )
        if ruling.kind is RulingKind.STATUS:
            # What the umpire rules a wink to be is what it is from then on.
            unplayed.discard(ruling.wink_ids[0])
            if ruling.status is WinkStatus.UNPLAYED:
                unplayed.add(ruling.wink_ids[0])
        _apply(winks, ruling, unplayed, status_ruled)
        for wid in ruling.wink_ids:
            winks[wid] = winks[wid].model_copy(update={"uncertain": False, "doubts": ()})
    circle = _circle_of_squops(winks)
    if circle is not None:
        ruled_pairs = {r.wink_ids for r in rulings if r.kind is RulingKind.SQUOPS}
        links = [
            f"{upper} on {lower} ({'ruled' if (upper, lower) in ruled_pairs else 'as read'})"
            for upper, lower in zip(circle, circle[1:], strict=False)
        ]
        raise BadRulingError(
            "with the rulings, winks lie on each other in a circle, which no pile can: "
            + ", ".join(links)
            + "; rule one of those pairs otherwise"
        )
    ruled = board.with_winks(winks[w.id] for w in board.winks).with_tiddlies(None)
    piles = _pile_numbers(ruled)
    ruled = ruled.with_winks(w.model_copy(update={"pile": piles.get(w.id)}) for w in ruled.winks)
    ruled.validate_or_raise(where="board after the umpire's rulings")
    return ruled
