"""Build boards and recorded games compactly, for the rules tests and the example games.

``make_board`` sets up a position in one call; :class:`Scribe` writes a
record shot by shot, changing only what each shot changes. Winks are named
``blue-L1`` .. ``blue-S4``. Positions that a test does not care about are
spread on a grid so that no two winks overlap by accident.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from rules.board import Board, Colour, Wink, WinkSize, WinkStatus, starting_board

XY = tuple[float, float]


def _grid() -> Iterable[XY]:
    """Spots 60 mm apart in the middle of the mat, well inside the field of play."""
    for j in range(-3, 4):
        for i in range(-8, 9):
            if (i, j) != (0, 0):
                yield (i * 60.0, j * 60.0)


def board_json(board: Board) -> dict[str, Any]:
    """The board's JSON form without the optional fields left at their defaults."""
    winks = []
    for w in board.winks:
        entry = w.model_dump(mode="json", exclude_none=True)
        if not entry.get("uncertain"):
            entry.pop("uncertain", None)
        winks.append(entry)
    out: dict[str, Any] = {"winks": winks}
    if board.tiddlies is not None:
        out["tiddlies"] = {c.value: n for c, n in board.tiddlies.items()}
    return out


def shot_entry(
    t: float, colour: str, board: Board, event: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One entry of RECORD.json's ``shots``: time, colour, board after, manual event."""
    entry: dict[str, Any] = {"t": t, "colour": colour, "board": board_json(board)}
    if event is not None:
        entry["event"] = event
    return entry


def _as_list(x: str | Iterable[str]) -> list[str]:
    return [x] if isinstance(x, str) else list(x)


def restatus(board: Board) -> Board:
    """Statuses from squops: rule 8.2 squopped, 8.3 free (potted, unplayed, off kept)."""
    below = {b for w in board.winks for b in w.squops}
    winks = []
    for w in board.winks:
        if w.id in below:
            w = w.with_status(WinkStatus.SQUOPPED)
        elif w.status is WinkStatus.SQUOPPED:
            w = w.with_status(WinkStatus.FREE)
        winks.append(w)
    return board.with_winks(winks)


def apply(
    board: Board,
    *,
    play: Mapping[str, XY] | Iterable[str] = (),
    pot: str | Iterable[str] = (),
    off: Mapping[str, XY] | Iterable[str] = (),
    squop: Mapping[str, str | Iterable[str]] | None = None,
    unsquop: str | Iterable[str] = (),
) -> Board:
    """A copy of ``board`` after a shot.

    Parameters
    ----------
    play : ids, or mapping of id to (x_mm, y_mm)
        Winks brought into play or moved; without a position they get a free
        grid spot (or keep theirs).
    pot : ids
        Winks that end in the pot; their squops are gone.
    off : ids, or mapping of id to (x_mm, y_mm)
        Winks that left the playing volume (the position is where they left).
    squop : mapping of upper id to lower id(s)
        New squops; the upper wink is put on top of the (first) lower one.
    unsquop : ids
        Upper winks moved off everything they squopped.
    """
    by_id = board.by_id
    used = {w.mat_xy for w in board.winks if w.mat_xy is not None}
    spots = (xy for xy in _grid() if xy not in used)

    def place(wid: str, xy: XY | None) -> None:
        w = by_id[wid]
        if xy is None:
            xy = w.mat_xy if w.status not in (WinkStatus.UNPLAYED, WinkStatus.POTTED) else None
        if xy is None:
            xy = next(spots)
        status = WinkStatus.FREE if w.status is not WinkStatus.SQUOPPED else w.status
        by_id[wid] = w.with_position(*xy).with_status(status)

    for wid in play if not isinstance(play, Mapping) else ():
        place(wid, None)
    if isinstance(play, Mapping):
        for wid, xy in play.items():
            place(wid, xy)
    for upper in _as_list(unsquop):
        by_id[upper] = by_id[upper].with_squops(())
    for upper, lowers in (squop or {}).items():
        lows = _as_list(lowers)
        for low in lows:
            if by_id[low].mat_xy is None or by_id[low].status is WinkStatus.UNPLAYED:
                place(low, None)
        target = by_id[lows[0]]
        assert target.mat_xy is not None
        x, y = target.mat_xy
        up = by_id[upper].with_position(x + 4.0, y).with_status(WinkStatus.FREE)
        by_id[upper] = up.with_squops(tuple(dict.fromkeys((*up.squops, *lows))))
    offs = dict(off) if isinstance(off, Mapping) else {wid: None for wid in off}
    for wid, xy in offs.items():
        w = by_id[wid].with_squops(())
        if xy is None:
            xy = w.mat_xy or (900.0, 0.0)
        by_id[wid] = w.with_status(WinkStatus.OFF).with_position(*xy)
    for wid in _as_list(pot):
        by_id[wid] = by_id[wid].with_status(WinkStatus.POTTED).with_position(None, None)
        by_id[wid] = by_id[wid].with_squops(())
    gone = {wid for wid, w in by_id.items() if w.status in (WinkStatus.POTTED, WinkStatus.OFF)}
    for wid, w in list(by_id.items()):
        if any(b in gone for b in w.squops):
            by_id[wid] = w.with_squops(b for b in w.squops if b not in gone)
    return restatus(board.with_winks(by_id[w.id] for w in board.winks))


def make_board(
    *,
    free: Mapping[str, XY] | Iterable[str] = (),
    potted: Iterable[str] = (),
    squops: Mapping[str, str | Iterable[str]] | None = None,
    off: Mapping[str, XY] | Iterable[str] = (),
) -> Board:
    """A position in one call; winks not named stay unplayed behind their baselines.

    Examples
    --------
    >>> b = make_board(free=["blue-L1"], potted=["red-S1"], squops={"blue-S1": "green-L1"})
    >>> b.wink("green-L1").status.value
    'squopped'
    """
    return apply(starting_board(), play=free, pot=potted, squop=squops, off=off)


def colour_winks(colour: Colour | str, sizes: str = "LLSSSS") -> list[str]:
    """The ids of a colour's winks, e.g. ``colour_winks("blue")``."""
    c = Colour(colour)
    counts = {"L": itertools.count(1), "S": itertools.count(1)}
    return [f"{c.value}-{s}{next(counts[s])}" for s in sizes]


class Scribe:
    """Writes a RECORD.json shot by shot.

    Parameters
    ----------
    squidge_off_winner : str
    game_format : str
    timed_period_s : float or None
    """

    def __init__(
        self,
        squidge_off_winner: str = "blue",
        game_format: str = "pairs",
        timed_period_s: float | None = None,
    ) -> None:
        self.board = starting_board()
        self.record: dict[str, Any] = {
            "ruleset": "etwa-2012",
            "format": game_format,
            "squidge_off_winner": squidge_off_winner,
        }
        if timed_period_s is not None:
            self.record["timed_period_s"] = timed_period_s
        self.record["shots"] = []
        self.t = 0.0

    def shot(
        self,
        colour: str,
        dt: float = 20.0,
        *,
        event: dict[str, Any] | None = None,
        keep_board: bool = False,
        **changes: Any,
    ) -> int:
        """Append one shot ``dt`` seconds after the previous one; returns its index.

        ``changes`` go to :func:`apply`. With ``keep_board`` the board does
        not change for later shots (a replayed foul, a wrong colour put back).
        """
        if self.record["shots"]:
            self.t += dt
        after = apply(self.board, **changes)
        self.record["shots"].append(shot_entry(self.t, colour, after, event))
        if not keep_board:
            self.board = after
        return len(self.record["shots"]) - 1

    def passes(self, colour: str, dt: float = 10.0) -> int:
        """A voluntary pass (rule 11)."""
        self.t += dt if self.record["shots"] else 0.0
        self.record["shots"].append({"t": self.t, "colour": colour, "pass": True})
        return len(self.record["shots"]) - 1

    def reset_to(self, board: Board) -> None:
        """Continue from ``board`` (after winks are put back under 23.3 (i))."""
        self.board = board


def wink(board: Board, wid: str) -> Wink:
    """Shorthand for ``board.wink``."""
    return board.wink(wid)


__all__ = ["Play", "Scribe", "WinkSize", "apply", "colour_winks", "make_board", "restatus", "wink"]


class Play:
    """Drive a :class:`rules.engine.Game` from a set-up position, shot by shot.

    Parameters
    ----------
    board : Board
        The position before the first shot fed in.
    squidge_off_winner : str
        Whose turn it is first (and who ends each round, rule 18).
    **game_kwargs
        Passed on to :class:`rules.engine.Game` (``timed_period_s`` ...).
    """

    def __init__(self, board: Board, squidge_off_winner: str = "blue", **game_kwargs: Any) -> None:
        from rules.engine import Game

        self.board = board
        self.game = Game(Colour(squidge_off_winner), board=board, **game_kwargs)
        self.t = 0.0
        self.index = 0

    def shot(
        self,
        colour: str,
        dt: float = 20.0,
        *,
        event: dict[str, Any] | None = None,
        keep_board: bool = False,
        **changes: Any,
    ) -> Board:
        """Feed one shot of ``colour`` that makes ``changes`` (see :func:`apply`)."""
        from rules.record import ShotRecord

        if self.index:
            self.t += dt
        after = apply(self.board, **changes)
        entry = shot_entry(self.t, colour, after, event)
        self.game.play(ShotRecord.model_validate(entry), index=self.index)
        self.index += 1
        # The next board starts from where the rules left the winks: off winks
        # replaced (13.1), knocked-out winks repotted (8.1.3), squops lifted (20.1),
        # and winks put back after a replayed foul or wrong colour (23.2, 23.3), which
        # ``keep_board`` merely documents at the call site.
        del keep_board
        self.board = self.game.board
        return after

    def passes(self, colour: str, dt: float = 10.0) -> None:
        """A voluntary pass (rule 11)."""
        from rules.record import ShotRecord

        if self.index:
            self.t += dt
        self.game.play(
            ShotRecord.model_validate({"t": self.t, "colour": colour, "pass": True}),
            index=self.index,
        )
        self.index += 1

    def event(self, event: dict[str, Any], colour: str, dt: float = 5.0) -> None:
        """An entry with only a manual event (no board), e.g. interference."""
        from rules.record import ShotRecord

        self.t += dt
        self.game.play(
            ShotRecord.model_validate({"t": self.t, "colour": colour, "event": event}),
            index=self.index,
        )
        self.index += 1

    @property
    def next_colour(self) -> str | None:
        """Whose turn it is now, after inferred passes."""
        nxt = self.game.next_turn()
        return None if nxt.colour is None else nxt.colour.value

    def types(self, since: int = 0) -> list[str]:
        """Event types in order (from event number ``since``)."""
        return [e.type.value for e in self.game.events[since:]]

    def rules_of(self, type_: str) -> list[str]:
        """The rule numbers cited by events of one type."""
        return [e.rule for e in self.game.events if e.type.value == type_]

    def find(self, type_: str) -> list[Any]:
        """The events of one type."""
        return [e for e in self.game.events if e.type.value == type_]
