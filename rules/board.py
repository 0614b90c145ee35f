"""The shared domain types: colours, winks, boards, and the equipment in mm.

This module is the contract between vision and rules. Vision produces a
:class:`Board`; the rules engine consumes it. Both import this module and
nothing flows back. Every value here is immutable; methods that return a
changed copy are named ``with_...``.

Coordinates are mat millimetres with the origin at the pot's centre, x along
the mat's long side and y along the short side (``mat_xy``).
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# --------------------------------------------------------------------------
# Equipment (rule numbers from the ETwA Official Rules, April 2012)
# --------------------------------------------------------------------------

MM_PER_INCH = 25.4
MM_PER_FOOT = 12 * MM_PER_INCH

#: Rule 2.3.1: the mat measures 6 ft by 3 ft.
MAT_LENGTH_MM = 6 * MM_PER_FOOT  # 1828.8
#: Rule 2.3.1: the mat measures 6 ft by 3 ft.
MAT_WIDTH_MM = 3 * MM_PER_FOOT  # 914.4
#: Rule 2.3.1: baselines cross the diagonals at right angles 3 ft from the centre.
BASELINE_DISTANCE_MM = 3 * MM_PER_FOOT  # 914.4

#: Rule 2.4 (printed as 3.4.1): the pot is 38 mm high.
POT_HEIGHT_MM = 38.0
#: Rule 2.4: external diameter 48 mm at the top.
POT_TOP_DIAMETER_MM = 48.0
#: Rule 2.4: external diameter 38 mm at the base.
POT_BASE_DIAMETER_MM = 38.0

#: Rule 2.1.1: two winks of each colour are 22 mm in diameter.
LARGE_WINK_DIAMETER_MM = 22.0
#: Rule 2.1.1: four winks of each colour are 16 mm in diameter.
SMALL_WINK_DIAMETER_MM = 16.0
#: Rule 2.1.1: winks are approximately 1.5 mm thick.
WINK_THICKNESS_MM = 1.5
#: Rule 2.1.1: six winks of each colour.
WINKS_PER_COLOUR = 6
#: Rule 2.1.1: two large winks of each colour.
LARGE_WINKS_PER_COLOUR = 2
#: Rule 2.1.1: four small winks of each colour.
SMALL_WINKS_PER_COLOUR = 4

#: Rule 13.1 (i): a replaced wink's nearest edge is 22 mm in from the boundary.
REPLACEMENT_EDGE_INSET_MM = 22.0
#: Rule 13.1 (ii)-(iii): at least 10 cm from other winks and live baselines.
REPLACEMENT_CLEARANCE_MM = 100.0


# --------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------


class Colour(enum.StrEnum):
    """The four wink colours, declared in turn order (rule 7)."""

    BLUE = "blue"
    GREEN = "green"
    RED = "red"
    YELLOW = "yellow"

    @property
    def partnership(self) -> Partnership:
        """Rule 1.1: blue partners red, green partners yellow."""
        return (
            Partnership.BLUE_RED if self in (Colour.BLUE, Colour.RED) else Partnership.GREEN_YELLOW
        )

    @property
    def partner(self) -> Colour:
        """Rule 1.1: the other colour of this colour's partnership."""
        order = list(Colour)
        return order[(order.index(self) + 2) % 4]

    def next(self) -> Colour:
        """Rule 7.1: the colour whose turn follows this one."""
        order = list(Colour)
        return order[(order.index(self) + 1) % 4]

    @property
    def turn_index(self) -> int:
        """Position of this colour in the turn sequence, blue = 0."""
        return list(Colour).index(self)


class Partnership(enum.StrEnum):
    """Rule 1.1: the two partnerships."""

    BLUE_RED = "blue-red"
    GREEN_YELLOW = "green-yellow"

    @property
    def colours(self) -> tuple[Colour, Colour]:
        """The two colours of this partnership, in turn order."""
        if self is Partnership.BLUE_RED:
            return (Colour.BLUE, Colour.RED)
        return (Colour.GREEN, Colour.YELLOW)

    @property
    def opponents(self) -> Partnership:
        """The other partnership."""
        return Partnership.GREEN_YELLOW if self is Partnership.BLUE_RED else Partnership.BLUE_RED


class WinkSize(enum.StrEnum):
    """Rule 2.1.1: large winks are 22 mm across, small ones 16 mm."""

    LARGE = "large"
    SMALL = "small"

    @property
    def diameter_mm(self) -> float:
        """Nominal diameter in mm (rule 2.1.1)."""
        return LARGE_WINK_DIAMETER_MM if self is WinkSize.LARGE else SMALL_WINK_DIAMETER_MM


class WinkStatus(enum.StrEnum):
    """Where a wink stands in the game (rule 8)."""

    UNPLAYED = "unplayed"
    """Behind its baseline, never played (rules 3, 19.1)."""
    FREE = "free"
    """Neither potted nor squopped (rule 8.3); a squopping wink may be free."""
    SQUOPPED = "squopped"
    """Another wink is vertically above part of it (rule 8.2)."""
    POTTED = "potted"
    """Inside the pot (rule 8.1)."""
    OFF = "off"
    """Wholly or partly outside the playing volume (rule 13)."""


class Doubt(enum.StrEnum):
    """Why a wink's status is unsure: what the umpire should look at."""

    SQUOP = "squop"
    """A squop call with it is within the measurement's uncertainty, or its
    upper wink is unclear (rule 8.2): squopped or free."""
    HIDDEN = "hidden"
    """Part of its rim is hidden with no wink found there, and winks of its
    colour were not seen: one may lie on it (squopped, not free)."""
    BASELINE = "baseline"
    """Its centre is near its baseline, or which corner is whose is not known
    (rules 5.2, 9.3): unplayed or played."""
    EDGE = "edge"
    """Its outline is near the mat's edge (rule 13): off or on the mat."""
    POT = "pot"
    """At the pot's rim or seen through its opening (rule 8.1): potted or not."""
    INFERRED = "inferred"
    """Counted potted without being seen (six of its colour minus those seen
    elsewhere): it may be a wink on the mat the camera missed."""
    SIZE = "size"
    """Its size class was relabelled to fit rule 2.1.1; its status is not in doubt."""


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


class IllegalBoardError(ValueError):
    """A board that contradicts itself or the equipment rules.

    ``problems`` lists every problem found, not just the first.
    """

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__("; ".join(self.problems))


# --------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------

_FROZEN = ConfigDict(frozen=True, extra="allow", use_enum_values=False)


class Wink(BaseModel):
    """One wink as seen on the board.

    Parameters
    ----------
    id : str
        Stable through a game, e.g. ``"blue-L1"``.
    colour : Colour
    size : WinkSize
    x_mm, y_mm : float or None
        Plan-view centre in mat mm (origin at the pot's centre); ``None`` when
        unknown, e.g. for potted winks.
    status : WinkStatus
    squops : tuple of str
        Ids of the winks this wink is vertically above (rule 8.2).
    confidence : float or None
        Detector confidence in [0, 1], when the board came from vision.
    uncertain : bool
        True when a status or squop call is within the measurement's
        uncertainty and an umpire should look (vision sets it).
    doubts : tuple of Doubt
        Why it is uncertain, when vision says (empty on boards from elsewhere).
    pile : int or None
        Id of the connected squop group (rule 8.2.2), when computed.
    """

    model_config = _FROZEN

    id: str = Field(min_length=1)
    colour: Colour
    size: WinkSize
    x_mm: float | None = None
    y_mm: float | None = None
    status: WinkStatus
    squops: tuple[str, ...] = ()
    confidence: float | None = None
    uncertain: bool = False
    doubts: tuple[Doubt, ...] = ()
    pile: int | None = None

    @property
    def mat_xy(self) -> tuple[float, float] | None:
        """Plan-view centre ``(x_mm, y_mm)``, or None when unknown."""
        if self.x_mm is None or self.y_mm is None:
            return None
        return (self.x_mm, self.y_mm)

    @property
    def radius_mm(self) -> float:
        """Nominal radius from the size class (rule 2.1.1)."""
        return self.size.diameter_mm / 2

    def with_status(self, status: WinkStatus) -> Wink:
        """A copy with another status."""
        return self.model_copy(update={"status": status})

    def with_position(self, x_mm: float | None, y_mm: float | None) -> Wink:
        """A copy at another plan-view position."""
        return self.model_copy(update={"x_mm": x_mm, "y_mm": y_mm})

    def with_squops(self, squops: Iterable[str]) -> Wink:
        """A copy that squops the given ids."""
        return self.model_copy(update={"squops": tuple(squops)})


class Board(BaseModel):
    """The whole board after a shot: every wink, and optionally the tiddlies.

    Parameters
    ----------
    winks : tuple of Wink
    tiddlies : dict of Colour to int, or None
        Rule 19.1 tiddlies, present when the board has been scored.
    """

    model_config = _FROZEN

    winks: tuple[Wink, ...] = ()
    tiddlies: dict[Colour, int] | None = None

    # ---- construction -------------------------------------------------

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any], *, where: str = "board") -> Board:
        """Parse and validate the JSON form of a board.

        Raises
        ------
        IllegalBoardError
            With every problem found, each naming ``where`` and the field.
        """
        try:
            board = cls.model_validate(data)
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                problems.append(f"{where}.{loc}: {err['msg']} (got {err.get('input')!r})")
            raise IllegalBoardError(problems) from None
        board.validate_or_raise(where=where)
        return board

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form (enums as strings, ``tiddlies`` omitted when None)."""
        return self.model_dump(mode="json", exclude_none=False)

    # ---- queries ---------------------------------------------------------

    def wink(self, wink_id: str) -> Wink:
        """The wink with this id.

        Raises
        ------
        KeyError
            When no wink has this id.
        """
        for w in self.winks:
            if w.id == wink_id:
                return w
        raise KeyError(wink_id)

    @property
    def by_id(self) -> dict[str, Wink]:
        """Winks keyed by id."""
        return {w.id: w for w in self.winks}

    def of_colour(self, colour: Colour) -> tuple[Wink, ...]:
        """The winks of one colour."""
        return tuple(w for w in self.winks if w.colour is colour)

    def winks_with_status(self, status: WinkStatus) -> tuple[Wink, ...]:
        """The winks that have this status."""
        return tuple(w for w in self.winks if w.status is status)

    def count(self, colour: Colour, status: WinkStatus) -> int:
        """How many winks of ``colour`` have ``status``."""
        return sum(1 for w in self.winks if w.colour is colour and w.status is status)

    def squopped_by(self, wink_id: str) -> tuple[str, ...]:
        """Ids of the winks directly above ``wink_id`` (rule 8.2)."""
        return tuple(w.id for w in self.winks if wink_id in w.squops)

    def piles(self) -> tuple[frozenset[str], ...]:
        """Rule 8.2.2: the connected groups of two or more winks joined by squops."""
        parent: dict[str, str] = {w.id: w.id for w in self.winks}

        def find(a: str) -> str:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        for w in self.winks:
            for below in w.squops:
                if below in parent:
                    parent[find(w.id)] = find(below)
        groups: dict[str, set[str]] = {}
        for wid in parent:
            groups.setdefault(find(wid), set()).add(wid)
        return tuple(frozenset(g) for g in groups.values() if len(g) >= 2)

    def in_pile(self, wink_id: str) -> bool:
        """Rule 8.2.2: whether the wink is squopping or squopped."""
        w = self.wink(wink_id)
        return bool(w.squops) or bool(self.squopped_by(wink_id))

    # ---- copies -------------------------------------------------------------

    def with_winks(self, winks: Iterable[Wink]) -> Board:
        """A copy with another list of winks."""
        return self.model_copy(update={"winks": tuple(winks)})

    def with_wink(self, wink: Wink) -> Board:
        """A copy with the wink of the same id replaced."""
        return self.with_winks(wink if w.id == wink.id else w for w in self.winks)

    def with_tiddlies(self, tiddlies: Mapping[Colour, int] | None) -> Board:
        """A copy carrying these tiddlies (rule 19.1)."""
        return self.model_copy(update={"tiddlies": None if tiddlies is None else dict(tiddlies)})

    # ---- validation ---------------------------------------------------------

    def problems(self) -> list[str]:
        """Every way this board contradicts itself or rule 2.1.1, all at once."""
        found: list[str] = []
        ids = Counter(w.id for w in self.winks)
        for wid, n in sorted(ids.items()):
            if n > 1:
                found.append(f"wink id {wid!r} appears {n} times")
        per_colour = Counter(w.colour for w in self.winks)
        for colour, n in per_colour.items():
            if n > WINKS_PER_COLOUR:
                found.append(f"{n} {colour.value} winks, but rule 2.1.1 allows {WINKS_PER_COLOUR}")
        for size, limit in (
            (WinkSize.LARGE, LARGE_WINKS_PER_COLOUR),
            (WinkSize.SMALL, SMALL_WINKS_PER_COLOUR),
        ):
            per = Counter(w.colour for w in self.winks if w.size is size)
            for colour, n in per.items():
                if n > limit:
                    found.append(
                        f"{n} {size.value} {colour.value} winks, but rule 2.1.1 allows {limit}"
                    )
        known = set(ids)
        squopped_ids = set()
        for w in self.winks:
            for x in (w.x_mm, w.y_mm):
                if x is not None and not math.isfinite(x):
                    found.append(f"wink {w.id!r} has a non-finite coordinate {x!r}")
            for below in w.squops:
                if below not in known:
                    found.append(f"wink {w.id!r} squops unknown wink {below!r}")
                elif below == w.id:
                    found.append(f"wink {w.id!r} squops itself")
                else:
                    squopped_ids.add(below)
            if w.squops and w.status in (WinkStatus.POTTED, WinkStatus.UNPLAYED, WinkStatus.OFF):
                found.append(f"wink {w.id!r} is {w.status.value} but squops {list(w.squops)!r}")
        for w in self.winks:
            if w.id in squopped_ids and w.status is not WinkStatus.SQUOPPED:
                found.append(
                    f"wink {w.id!r} is squopped by {list(self.squopped_by(w.id))!r} "
                    f"but its status is {w.status.value!r} (rule 8.2)"
                )
            if w.status is WinkStatus.SQUOPPED and w.id not in squopped_ids:
                found.append(f"wink {w.id!r} is 'squopped' but no wink squops it (rule 8.2)")
        return found

    def validate_or_raise(self, *, where: str = "board") -> None:
        """Raise :class:`IllegalBoardError` listing every problem, if any."""
        found = self.problems()
        if found:
            raise IllegalBoardError(f"{where}: {p}" for p in found)


def standard_wink_ids(colour: Colour) -> tuple[str, ...]:
    """The conventional ids of one colour's six winks: ``blue-L1`` .. ``blue-S4``."""
    return tuple(
        [f"{colour.value}-L{i}" for i in range(1, LARGE_WINKS_PER_COLOUR + 1)]
        + [f"{colour.value}-S{i}" for i in range(1, SMALL_WINKS_PER_COLOUR + 1)]
    )


def starting_board() -> Board:
    """Rule 5.2: all 24 winks unplayed behind their baselines, positions unknown."""
    winks = []
    for colour in Colour:
        for wid in standard_wink_ids(colour):
            size = WinkSize.LARGE if "-L" in wid else WinkSize.SMALL
            winks.append(Wink(id=wid, colour=colour, size=size, status=WinkStatus.UNPLAYED))
    return Board(winks=tuple(winks))
