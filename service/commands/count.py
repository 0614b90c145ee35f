"""``winkref count PHOTO``: the end-of-time tiddly count (rule 19).

Calibrates the mat in the photo, reads the board (statuses, squops, potted
winks seen or inferred), counts tiddlies per colour (rule 19.1), ranks the
colours with shared points (19.2) and gives the game score as on a
scoresheet (F.1: ``5½–1½``). Winks the program is unsure about are listed,
never silently counted either way.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from rules.board import (
    BASELINE_DISTANCE_MM,
    MAT_LENGTH_MM,
    MAT_WIDTH_MM,
    WINKS_PER_COLOUR,
    Board,
    Colour,
    Doubt,
    Partnership,
    Wink,
    WinkSize,
    WinkStatus,
)
from rules.ruleset import get_ruleset
from rules.rulings import (
    Ruling,
    apply_rulings,
    check_rulings_agree,
    parse_apart,
    parse_squops,
    parse_status,
)
from rules.scoring import (
    EndedBy,
    GameFormat,
    GameScore,
    ascii_notation,
    format_points,
    points_number,
)
from service.outputs import check_output_path, write_image_atomic
from service.photos import load_photo, naming_photo


class BadFormatError(ValueError):
    """A game format name that is not known."""


class TwoMatsError(ValueError):
    """The photo shows felt enough for another mat beside the one calibrated."""


class NoWinksOnMatError(ValueError):
    """No wink was found on the mat."""


def parse_format(name: str) -> GameFormat:
    """``"pairs"`` -> :attr:`GameFormat.PAIRS`, with a clear error otherwise."""
    try:
        return GameFormat(name)
    except ValueError:
        known = ", ".join(repr(f.value) for f in GameFormat)
        raise BadFormatError(f"unknown game format {name!r}; known formats: {known}") from None


#: A second mat fills at least this share of the smallest rectangle round it.
MAT_LIKE_FILL = 0.5


def check_single_mat(image_bgr: npt.NDArray[np.uint8], mat_corners_px: npt.ArrayLike) -> None:
    """Raise :class:`TwoMatsError` when felt like the mat's covers a mat-sized area elsewhere.

    The calibration finds one mat; counting one of two would silently leave
    out the other game, so a second felt area at least a third of the first
    one's size in the photo is refused. A table much the colour of the felt
    is not a second mat: it runs right up to the mat (all round, or in two
    strips above and below a mat that spans the photo) instead of lying apart
    from it, and is no filled rectangle.
    """
    corners = np.asarray(mat_corners_px, dtype=np.float64).reshape(-1, 2)
    if len(corners) < 3:
        return
    small = 4  # work at a quarter size: this is about areas, not edges
    img = cv2.resize(
        image_bgr, (image_bgr.shape[1] // small, image_bgr.shape[0] // small), cv2.INTER_AREA
    )
    lab = cv2.GaussianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32), (0, 0), 2.0)
    hull = cv2.convexHull((corners / small).astype(np.float32)).astype(np.int32)
    inside = np.zeros(img.shape[:2], np.uint8)
    cv2.fillConvexPoly(inside, hull, 1)
    mat_area = float(inside.sum())
    if mat_area < 100:
        return
    felt = np.median(lab[inside > 0], axis=0)
    dist = np.linalg.norm(lab - felt, axis=2)
    # "Like the mat's felt": as close as most of the mat itself is (it has texture and shading).
    limit = max(8.0, float(np.percentile(dist[inside > 0], 85)))
    similar = (dist < limit).astype(np.uint8)
    # Leave a margin round the mat so its own edge and shadow do not count.
    margin = cv2.dilate(inside, np.ones((15, 15), np.uint8))
    similar[margin > 0] = 0
    similar = cv2.morphologyEx(similar, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(similar, connectivity=8)
    centre = hull.reshape(-1, 2).mean(axis=0)
    # Just outside the margin: felt-coloured table runs right up to the mat,
    # while a second mat lies apart, with table between.
    ring = cv2.dilate(margin, np.ones((5, 5), np.uint8)) & (1 - margin)
    touching = set(np.unique(labels[ring > 0]).tolist())
    biggest = 0
    for k in range(1, n):
        area = int(stats[k, cv2.CC_STAT_AREA])
        if area <= mat_area / 3 or area <= biggest:
            continue
        points = cv2.findNonZero((labels == k).astype(np.uint8))
        # A table much the colour of the felt shows as a ring round the mat,
        # not as a second mat: that encloses the mat, and fills little of
        # the rectangle round it.
        around = cv2.pointPolygonTest(cv2.convexHull(points), tuple(map(float, centre)), False)
        (_, (rect_w, rect_h), _) = cv2.minAreaRect(points)
        if k in touching or around >= 0 or area < MAT_LIKE_FILL * rect_w * rect_h:
            continue
        biggest = area
    if biggest > mat_area / 3:
        raise TwoMatsError(
            "the photo seems to show more than one mat (felt like the mat's covers another "
            f"{100 * biggest / mat_area:.0f}% of its area outside it); photograph one mat at a time"
        )


def colour_counts(board: Board) -> dict[str, dict[str, int]]:
    """Per colour: potted, free, squopped, unplayed, off, and uncertain winks."""
    out: dict[str, dict[str, int]] = {}
    for colour in Colour:
        winks = board.of_colour(colour)
        row = {status.value: sum(w.status is status for w in winks) for status in WinkStatus}
        row["uncertain"] = sum(w.uncertain for w in winks)
        out[colour.value] = row
    return out


def count_board(
    board: Board, *, ruleset: str = "etwa-2012", game_format: str = "pairs"
) -> tuple[dict[Colour, int], GameScore]:
    """Tiddlies (19.1) and the game score (19.2) of a board."""
    rules = get_ruleset(ruleset)
    fmt = parse_format(game_format)
    tiddly_counts = rules.tiddlies(board)
    return tiddly_counts, rules.score_by_tiddlies(tiddly_counts, fmt, EndedBy.TIME)


#: What an unsure wink might really be, by what it was read as. A wink read
#: as free may be squopped (or still unplayed); a squopped one may be free; one
#: read as potted (inferred, or a close call at the rim) may be free or
#: squopped instead; an unplayed or off one near its line may be free.
_ALTERNATIVES: dict[WinkStatus, tuple[WinkStatus, ...]] = {
    WinkStatus.FREE: (WinkStatus.SQUOPPED, WinkStatus.UNPLAYED),
    WinkStatus.SQUOPPED: (WinkStatus.FREE,),
    WinkStatus.POTTED: (WinkStatus.FREE, WinkStatus.SQUOPPED),
    WinkStatus.UNPLAYED: (WinkStatus.FREE,),
    WinkStatus.OFF: (WinkStatus.FREE,),
}


#: A wink whose centre lies further than this inside every baseline (mm) cannot
#: be unplayed: well over a large wink's radius plus the frame's few mm of error.
UNPLAYED_REACH_MM = 50.0


def _could_be_unplayed(wink: Wink) -> bool:
    """Whether a wink lies near enough to a baseline (any corner's) to be behind it (rule 5).

    Every corner is tried, as the board may be turned; a wink with no known
    place could be anywhere.
    """
    if wink.x_mm is None or wink.y_mm is None:
        return True
    half_length, half_width = MAT_LENGTH_MM / 2, MAT_WIDTH_MM / 2
    norm = math.hypot(half_length, half_width)
    # Rule 2.3.1: each baseline is square to its corner's diagonal, 3 ft from the centre.
    beyond = max(
        (sx * wink.x_mm * half_length + sy * wink.y_mm * half_width) / norm
        for sx in (-1, 1)
        for sy in (-1, 1)
    )
    return beyond > BASELINE_DISTANCE_MM - UNPLAYED_REACH_MM


_F, _S, _P, _U, _O = (
    WinkStatus.FREE,
    WinkStatus.SQUOPPED,
    WinkStatus.POTTED,
    WinkStatus.UNPLAYED,
    WinkStatus.OFF,
)
#: What each doubt (rules.board.Doubt) lets a wink read as one status truly be;
#: a status not listed under a doubt counts the same either way (a squopped wink
#: near the edge counts nothing, on the mat or off it).
_BY_DOUBT: dict[Doubt, dict[WinkStatus, tuple[WinkStatus, ...]]] = {
    Doubt.SQUOP: {_F: (_S,), _S: (_F,)},
    Doubt.HIDDEN: {_F: (_S,)},
    Doubt.BASELINE: {_F: (_U,), _U: (_F,)},
    Doubt.EDGE: {_F: (_O,), _O: (_F,)},
    Doubt.POT: {_F: (_P,), _S: (_P,), _P: (_F, _S)},
    Doubt.INFERRED: {_P: (_F, _S)},
    Doubt.SIZE: {},
}


def _alternatives(wink: Wink, *, besides: Doubt | None = None) -> tuple[WinkStatus, ...]:
    """The statuses an unsure wink may truly have, from why it is unsure.

    A board from vision says why (``doubts``): each doubt allows what
    :data:`_BY_DOUBT` lists, leaving out ``besides`` (a doubt dealt with
    otherwise). A board that does not say gets :data:`_ALTERNATIVES` whatever
    ``besides`` is (any of them may be why), a wink far from every baseline
    never unplayed.
    """
    if wink.doubts:
        found: list[WinkStatus] = []
        for doubt in wink.doubts:
            if doubt is not besides:
                found += [s for s in _BY_DOUBT[doubt].get(wink.status, ()) if s not in found]
        return tuple(found)
    return tuple(
        s
        for s in _ALTERNATIVES.get(wink.status, ())
        if s is not WinkStatus.UNPLAYED or _could_be_unplayed(wink)
    )


@dataclass(frozen=True)
class CountRange:
    """How far the count could move if every unsure wink went the other way.

    Parameters
    ----------
    tiddlies : mapping of Colour to (int, int)
        Per colour, the fewest and the most tiddlies.
    best_score : mapping of Partnership to GameScore
        Per partnership, the game score with its colours at their most and
        the others' at their fewest: no reading of the unsure winks scores
        better for that side.
    """

    tiddlies: dict[Colour, tuple[int, int]]
    best_score: dict[Partnership, GameScore]

    @property
    def score_is_settled(self) -> bool:
        """Whether no reading of the unsure winks changes the game score."""
        scores = {tuple(sorted(g.score.items())) for g in self.best_score.values()}
        return len(scores) == 1


@dataclass(frozen=True)
class PairDoubt:
    """A pair of winks whose squop the referee could not call.

    Parameters
    ----------
    ids : (2,) tuple of str
        The two winks.
    overlap_sure : bool
        They overlap beyond doubt; only which is on top is unsure.
    """

    ids: tuple[str, str]
    overlap_sure: bool

    def readings(self) -> list[tuple[str, str] | None]:
        """What the pair may truly be: (upper, lower), or None for apart.

        Either wink may be on top even when the photo seemed to show which:
        that cue is not sure enough to bound a count by (on the shared scenes
        and samples, taking it as sure left the truth outside the range on
        two more of 22 photos).
        """
        a, b = self.ids
        on_top = [(a, b), (b, a)]
        return on_top if self.overlap_sure else [None, *on_top]


def pair_doubts(analysis: Any) -> tuple[PairDoubt, ...]:
    """The pairs an analysed frame could not call, by wink id (see :class:`PairDoubt`)."""
    from vision.squop import K_SIGMA

    ids = analysis.assembly.detection_ids
    doubts = []
    for call in analysis.assembly.squops.calls:
        if not call.uncertain or call.upper < 0 or call.lower < 0:
            continue
        upper, lower = ids[call.upper], ids[call.lower]
        if not upper or not lower:
            continue  # a detection dropped by the rule 2.1.1 count
        if any(analysis.board.wink(i).status in (_O, _P) for i in (upper, lower)):
            continue  # an off or potted wink squops nothing (rules 13, 8.1), as the board says
        overlap_sure = call.separation_mm < 0 and abs(call.separation_mm) >= K_SIGMA * call.sigma_mm
        doubts.append(PairDoubt((upper, lower), overlap_sure))
    return tuple(doubts)


#: A group of doubted pairs tied by shared winks is read every way it could
#: be up to this many pairs (3 ** 8 readings); a larger one falls back to
#: each wink's own alternatives.
_MOST_PAIRS_READ_TOGETHER = 8


def _pair_groups(doubts: Sequence[PairDoubt]) -> list[list[PairDoubt]]:
    """The doubts in groups that share winks (each group's readings are independent)."""
    groups: list[list[PairDoubt]] = []
    for doubt in doubts:
        joined = [g for g in groups if any(set(doubt.ids) & set(d.ids) for d in g)]
        merged = [doubt, *itertools.chain.from_iterable(joined)]
        groups = [g for g in groups if g not in joined] + [merged]
    return groups


def _group_span(
    board: Board,
    group: Sequence[PairDoubt],
    value: Callable[[Wink, WinkStatus], int],
    vanishing: set[str],
) -> dict[Colour, tuple[int, int]]:
    """How far each colour's tiddlies move over every reading of a group of doubted pairs.

    Rule 8.2: a wink is squopped when any wink lies on it. The squops not in
    doubt stay as the board has them. ``vanishing`` are the winks that may
    squop nothing (:func:`_may_stop_squopping`).
    """
    winks = {i for d in group for i in d.ids}
    # Its partners in doubted pairs are read, not taken from the board.
    partners = {i: frozenset(j for d in group if i in d.ids for j in d.ids) for i in winks}
    sure_on = {i: _uppers(board, i, besides=partners[i]) for i in winks}
    span = {c: (0, 0) for c in Colour}
    for reading in itertools.product(*(d.readings() for d in group)):
        on = {i: set(sure_on[i]) for i in winks}
        for relation in reading:
            if relation is not None:
                on[relation[1]].add(relation[0])
        down, up = dict.fromkeys(Colour, 0), dict.fromkeys(Colour, 0)
        for i in winks:
            wink = board.wink(i)
            now = value(wink, wink.status)
            held = on[i] - vanishing
            could = [value(wink, _S if on[i] else _F)]
            if on[i] and not held:
                # Only winks that may be off or potted lie on it: it may be free.
                could.append(value(wink, _F))
            if wink.uncertain:
                # Its other doubts stand: a wink read free may be unplayed near a
                # baseline, or squopped by a wink the camera missed.
                could += [
                    value(wink, s) for s in _alternatives(wink, besides=Doubt.SQUOP) if s is not _F
                ]
            down[wink.colour] += min(could) - now
            up[wink.colour] += max(could) - now
        span = {c: (min(span[c][0], down[c]), max(span[c][1], up[c])) for c in Colour}
    return span


def _uppers(board: Board, wink_id: str, besides: frozenset[str] = frozenset()) -> set[str]:
    """The winks the board has lying on ``wink_id`` (rule 8.2), but those in ``besides``."""
    return {u.id for u in board.winks if wink_id in u.squops and u.id not in besides}


def _may_stop_squopping(board: Board) -> set[str]:
    """Winks that squop others but may be off or potted (rules 13, 8.1): then they squop none."""
    return {
        w.id for w in board.winks if w.squops and w.uncertain and {_O, _P} & set(_alternatives(w))
    }


def _unruled(doubts: Sequence[PairDoubt], rulings: Sequence[Ruling]) -> list[PairDoubt]:
    """The doubted pairs no ruling settles: not a pair ruled on, nor with a wink ruled on."""
    pairs = {frozenset(r.wink_ids) for r in rulings if len(r.wink_ids) == 2}
    winks = {r.wink_ids[0] for r in rulings if len(r.wink_ids) == 1}
    return [d for d in doubts if frozenset(d.ids) not in pairs and not set(d.ids) & winks]


def count_range(
    board: Board,
    *,
    ruleset: str = "etwa-2012",
    game_format: str = "pairs",
    doubts: Iterable[PairDoubt] = (),
) -> CountRange:
    """Bounds on each colour's tiddlies and on the game score, over the unsure winks.

    The pairs in ``doubts`` (see :func:`pair_doubts`) are read every way they
    could be, together where they share winks: two winks of one colour that
    surely overlap leave one of them squopped whichever is on top, so that
    pair moves its colour's count not at all. Every other unsure wink is
    allowed the statuses its doubts allow (:func:`_alternatives`), a wink
    squopped only by winks that may be off or potted may be free, and a wink not on the board
    at all (six of a colour minus those seen, when the pot looked empty) may
    be a free one that was missed. Winks and groups are bounded one by one,
    so the bounds can be wider than the truly possible range, never narrower.
    """
    rules = get_ruleset(ruleset)
    fmt = parse_format(game_format)

    by_status: dict[tuple[str, WinkStatus], int] = {}

    def value(wink: Wink, status: WinkStatus) -> int:
        # Asked thousands of times over a group's readings: each answer once.
        key = (wink.id, status)
        if key not in by_status:
            by_status[key] = rules.tiddlies(Board(winks=(wink.with_status(status),)))[wink.colour]
        return by_status[key]

    base = rules.tiddlies(board)
    low, high = dict(base), dict(base)
    on_board = {w.id: w for w in board.winks}
    # Pairs read together: both winks on the board and in play, flagged or not
    # (a wink ruled on for one pair is no longer flagged, but its other pairs
    # are still in doubt).
    readable = [
        d
        for d in doubts
        if all(
            i in on_board and on_board[i].status in (WinkStatus.FREE, WinkStatus.SQUOPPED)
            for i in d.ids
        )
    ]
    vanishing = _may_stop_squopping(board)
    read_together: set[str] = set()
    for group in _pair_groups(readable):
        if len(group) > _MOST_PAIRS_READ_TOGETHER:
            continue
        for colour, (down, up) in _group_span(board, group, value, vanishing).items():
            low[colour] += down
            high[colour] += up
        read_together.update(i for d in group for i in d.ids)
    for wink in board.winks:
        if wink.id in read_together:
            continue  # read with its pairs
        statuses = list(_alternatives(wink)) if wink.uncertain else []
        uppers = _uppers(board, wink.id)
        if wink.status is _S and uppers and uppers <= vanishing and _F not in statuses:
            statuses.append(_F)  # all that lies on it may be off or potted
        now = value(wink, wink.status)
        options = [value(wink, s) - now for s in statuses]
        low[wink.colour] += min([0, *options])
        high[wink.colour] += max([0, *options])
    for colour in Colour:
        missing = WINKS_PER_COLOUR - len(board.of_colour(colour))
        if missing > 0:
            probe = Wink(
                id=f"{colour.value}-S1", colour=colour, size=WinkSize.SMALL, status=WinkStatus.FREE
            )
            high[colour] += missing * value(probe, WinkStatus.FREE)
    best = {}
    for side in Partnership:
        counts = {c: high[c] if c.partnership is side else low[c] for c in Colour}
        best[side] = rules.score_by_tiddlies(counts, fmt, EndedBy.TIME)
    return CountRange(tiddlies={c: (low[c], high[c]) for c in Colour}, best_score=best)


def report_json(
    board: Board,
    tiddly_counts: dict[Colour, int],
    score: GameScore,
    *,
    notes: tuple[str, ...] = (),
    reviews: tuple[str, ...] = (),
    bounds: CountRange | None = None,
) -> dict[str, Any]:
    """The JSON form: ``tiddlies``, ``board``, ``points``, ``score``, ``notation`` and more.

    With ``bounds``, also ``tiddlies_range`` (per colour ``[fewest, most]``),
    ``score_settled`` and ``best_case`` (per partnership, the notation of the
    score if every unsure wink went its way).
    """
    extra: dict[str, Any] = {}
    if bounds is not None:
        extra = {
            "tiddlies_range": {c.value: list(r) for c, r in bounds.tiddlies.items()},
            "score_settled": bounds.score_is_settled,
            "best_case": {p.value: g.notation for p, g in bounds.best_score.items()},
        }
    return {
        "tiddlies": {c.value: int(n) for c, n in tiddly_counts.items()},
        "counts": colour_counts(board),
        "points": {c.value: points_number(p) for c, p in score.points.items()},
        "score": {p.value: points_number(s) for p, s in score.score.items()},
        "notation": score.notation,
        "uncertain": [w.id for w in board.winks if w.uncertain],
        "notes": list(notes),
        "reviews": list(reviews),
        **extra,
        "board": board.to_json_dict(),
    }


def report_text(
    board: Board,
    tiddly_counts: dict[Colour, int],
    score: GameScore,
    *,
    reviews: tuple[str, ...] = (),
    bounds: CountRange | None = None,
) -> str:
    """A table a person can check against the mat."""
    counts = colour_counts(board)
    lines = [
        f"{'colour':8} {'potted':>6} {'free':>5} {'squop':>5} {'unpl':>5} {'off':>4} "
        f"{'tiddlies':>8} {'points':>6}"
    ]
    for colour in Colour:
        row = counts[colour.value]
        lines.append(
            f"{colour.value:8} {row['potted']:>6} {row['free']:>5} {row['squopped']:>5} "
            f"{row['unplayed']:>5} {row['off']:>4} {tiddly_counts[colour]:>8} "
            f"{format_points(score.points[colour]):>6}"
        )
    sides = ", ".join(f"{p.value} {format_points(s)}" for p, s in score.score.items())
    lines.append(f"game score {score.notation} ({sides})")
    unsure = [w for w in board.winks if w.uncertain]
    if unsure:
        lines.append(
            "unsure, check by eye: " + ", ".join(f"{w.id} ({w.status.value})" for w in unsure)
        )
    if bounds is not None:
        moving = {c: r for c, r in bounds.tiddlies.items() if r[0] != r[1]}
        if moving:
            lines.append(
                "if the unsure winks went otherwise, tiddlies could be: "
                + ", ".join(f"{c.value} {lo}-{hi}" for c, (lo, hi) in moving.items())
            )
            if bounds.score_is_settled:
                lines.append(f"the game score is {score.notation} however they go")
            else:
                best = "; ".join(
                    f"at best for {p.value}: {format_points(g.score[p])}"
                    f"–{format_points(g.score[p.opponents])}"
                    for p, g in bounds.best_score.items()
                )
                lines.append(f"the game score depends on them ({best}): review them first")
    lines.extend(f"review: {r}" for r in reviews)
    return "\n".join(lines)


def summary_lines(
    tiddly_counts: dict[Colour, int], score: GameScore, bounds: CountRange | None = None
) -> list[str]:
    """The count in a few lines: tiddlies per colour (with their range) and the score."""
    lines = []
    for colour in Colour:
        text = f"{colour.value}: {tiddly_counts[colour]} tiddlies"
        if bounds is not None and bounds.tiddlies[colour][0] != bounds.tiddlies[colour][1]:
            low, high = bounds.tiddlies[colour]
            text += f" ({low}-{high} if unsure winks differ)"
        lines.append(text)
    lines.append(f"score {score.notation}")
    if bounds is not None and not bounds.score_is_settled:
        lines.append("score depends on the ? winks")
    return lines


def annotate(
    image_bgr: npt.NDArray[np.uint8],
    analysis: Any,
    summary: Sequence[str] = (),
    board: Board | None = None,
) -> npt.NDArray[np.uint8]:
    """The photo with a number on every wink seen, and a list of what each was counted as.

    Unsure winks are marked in red with a question mark, so the players can
    check exactly those on the mat. ``summary`` lines (see
    :func:`summary_lines`) go under the list. ``board`` is what was counted,
    when it is not the analysis's own (e.g. after the umpire's rulings).
    """
    photo = image_bgr.copy()
    det = analysis.detections
    ids = list(getattr(analysis.assembly, "detection_ids", ()))
    board = analysis.board if board is None else board
    lines: list[tuple[str, tuple[int, int, int]]] = []
    for k in range(len(det)):
        x, y = (int(v) for v in det.image_xy_px[k])
        wid = ids[k] if k < len(ids) else ""
        colour = (0, 160, 0)
        text = f"{k + 1} {wid or '(dropped)'}"
        if wid:
            try:
                wink = board.wink(wid)
                text += f" {wink.status.value}"
                if wink.uncertain:
                    text += " ?"
                    colour = (0, 0, 255)
            except KeyError:
                pass
        else:
            colour = (0, 140, 255)
        lines.append((text, colour))
        cv2.circle(photo, (x, y), 9, colour, 2)
        label = str(k + 1)
        cv2.putText(photo, label, (x + 9, y - 9), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 3)
        cv2.putText(photo, label, (x + 9, y - 9), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1)
    for wink in board.winks:
        if wink.id not in ids:
            # Not seen in this photo (potted and hidden, or inferred).
            lines.append((f"- {wink.id} {wink.status.value} (not seen)", (90, 90, 90)))
    if summary:
        lines.append(("", (0, 0, 0)))
        # OpenCV's Hershey fonts draw ASCII only.
        lines.extend((ascii_notation(text), (0, 0, 0)) for text in summary)
    row_h = 20
    panel = np.full((max(photo.shape[0], row_h * (len(lines) + 2)), 380, 3), 255, np.uint8)
    cv2.putText(panel, "counted as", (10, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 1)
    for n, (text, colour) in enumerate(lines):
        y = row_h * (n + 2)
        cv2.putText(panel, text, (10, y), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1)
    if panel.shape[0] > photo.shape[0]:
        pad = np.full((panel.shape[0] - photo.shape[0], photo.shape[1], 3), 255, np.uint8)
        photo = np.vstack([photo, pad])
    return np.hstack([photo, panel])


@dataclass(frozen=True)
class CloseupRuling:
    """What one close-up photo settled for the count, or why it settled nothing.

    Parameters
    ----------
    photo : Path
    ruling : Ruling or None
        The ruling it gives on a pair in doubt; None when it gives none.
    text : str
        What to tell the desk.
    """

    photo: Path
    ruling: Ruling | None
    text: str


def _alike(seen: Any, wink: Wink) -> bool:
    """Whether a close-up's wink (a ReviewedWink) could be the mat's: same size, and
    the same colour unless the close-up could not tell it."""
    return bool(
        seen.size == wink.size.value and (seen.colour is None or seen.colour == wink.colour.value)
    )


def closeup_ruling(photo: Path, board: Board, doubts: Sequence[PairDoubt]) -> CloseupRuling:
    """Review a close-up of a pair in doubt and turn its verdict into a ruling.

    The close-up's pair (the one nearest its centre) is matched to the pairs in
    doubt by the colours and sizes of its two winks: its own labels (W1, W2)
    are not the mat's. A match with no pair, or with several, gives no ruling
    and says so; so does a verdict too close to call, or a squop between two
    winks of the same colour and size, whose upper wink cannot be told apart.
    """
    from service.commands.review import hfov_of, lens_of, review_any

    try:
        image = load_photo(photo)
        with naming_photo(photo):
            verdict = review_any(image, hfov_deg=hfov_of(lens_of(photo, image)))
    except ValueError as exc:
        # One close-up that cannot be reviewed must not cost the desk the whole count.
        return CloseupRuling(
            photo,
            None,
            f"{photo}: not used: {exc}; or give the ruling by hand "
            "(--squop UPPER,LOWER or --no-squop A,B)",
        )
    seen = {w.id: w for w in verdict.winks}
    pair = [seen[i] for i in verdict.ids]
    pair_words = " and ".join(f"a {w.size} {w.colour or 'unknown-colour'} wink" for w in pair)

    def fits(doubt: PairDoubt) -> bool:
        mat = [board.wink(i) for i in doubt.ids]
        return any(
            all(_alike(w, m) for w, m in zip(pair, order, strict=True))
            for order in (mat, mat[::-1])
        )

    matches = [d for d in doubts if fits(d)]
    if not matches:
        return CloseupRuling(
            photo,
            None,
            f"{photo}: shows {pair_words}, which is none of the pairs in doubt; not used",
        )
    if len(matches) > 1:
        listed = ", ".join(",".join(d.ids) for d in matches)
        return CloseupRuling(
            photo,
            None,
            f"{photo}: shows {pair_words}, which could be any of {listed}; "
            "give the ruling by hand (--squop UPPER,LOWER or --no-squop A,B)",
        )
    doubt = matches[0]
    a, b = doubt.ids
    if verdict.squopped is None:
        return CloseupRuling(photo, None, f"{photo}: {a},{b}: {verdict.summary}; no ruling")
    if verdict.squopped is False:
        return CloseupRuling(
            photo, parse_apart(f"{a},{b}"), f"{photo}: {a} and {b} do not squop ({verdict.summary})"
        )
    upper_seen = next(w for w in pair if w.id == verdict.upper)
    uppers = [i for i in doubt.ids if _alike(upper_seen, board.wink(i))]
    if len(uppers) != 1:
        return CloseupRuling(
            photo,
            None,
            f"{photo}: {a},{b} squop, but the two are alike, so which of them is on top cannot "
            f"be matched ({verdict.summary}); give --squop UPPER,LOWER by hand",
        )
    upper = uppers[0]
    lower = b if upper == a else a
    return CloseupRuling(
        photo,
        parse_squops(f"{upper},{lower}"),
        f"{photo}: {upper} squops {lower} ({verdict.summary})",
    )


def _closeup_rulings(
    photos: Sequence[Path],
    board: Board,
    doubts: Sequence[PairDoubt],
) -> list[CloseupRuling]:
    """Each close-up's ruling; two close-ups that rule one pair differently rule it not at all."""
    results = [closeup_ruling(p, board, doubts) for p in photos]
    by_pair: dict[frozenset[str], list[CloseupRuling]] = {}
    for result in results:
        if result.ruling is not None:
            by_pair.setdefault(frozenset(result.ruling.wink_ids), []).append(result)
    out = []
    for result in results:
        if result.ruling is None:
            out.append(result)
            continue
        same = by_pair[frozenset(result.ruling.wink_ids)]
        if len({r.ruling for r in same}) > 1:
            names = " and ".join(str(r.photo) for r in same)
            out.append(
                replace(result, ruling=None, text=f"{result.text}; but {names} disagree: no ruling")
            )
        elif result is same[0]:
            out.append(result)
        else:
            out.append(replace(result, ruling=None, text=f"{result.text} (as {same[0].photo})"))
    return out


def parse_rulings(
    squops: Sequence[str] = (), apart: Sequence[str] = (), statuses: Sequence[str] = ()
) -> list[Ruling]:
    """The umpire's rulings from the command line, in the order squops, apart, statuses."""
    return [
        *(parse_squops(t) for t in squops),
        *(parse_apart(t) for t in apart),
        *(parse_status(t) for t in statuses),
    ]


#: A wink id as the board names it, e.g. ``blue-L1`` or ``red-S4``.
_WINK_ID = re.compile(r"\b(?:blue|green|red|yellow)-[LS]\d+\b")


def pair_moves_count(board: Board, doubt: PairDoubt, ruleset: str = "etwa-2012") -> bool:
    """Whether how a doubted pair is ruled can change any colour's tiddlies (rule 19.1).

    Two winks of one colour that surely overlap, with nothing else on
    either, leave one of them squopped whichever is on top: the umpire need
    not be asked for the count's sake (the game may still want to know).
    Only the pair's own readings are compared; the winks' other doubts are
    asked about separately.
    """
    rules = get_ruleset(ruleset)
    totals = set()
    for reading in doubt.readings():
        on = {i: _uppers(board, i, besides=frozenset(doubt.ids)) for i in doubt.ids}
        if reading is not None:
            on[reading[1]].add(reading[0])
        winks = []
        for i in doubt.ids:
            wink = board.wink(i)
            if wink.status in (WinkStatus.FREE, WinkStatus.SQUOPPED):
                wink = wink.with_status(WinkStatus.SQUOPPED if on[i] else WinkStatus.FREE)
            winks.append(wink)
        totals.add(tuple(sorted(rules.tiddlies(Board(winks=tuple(winks))).items())))
    return len(totals) > 1


#: Said after a review request whose answer cannot change the count.
NO_COUNT_CHANGE = (
    " (for the count it does not matter: one of the two is squopped whichever is on top)"
)


def _with_count_relevance(
    reviews: Sequence[str], board: Board, doubts: Sequence[PairDoubt], ruleset: str
) -> list[str]:
    """The review requests, those whose answer cannot change the count said so.

    Only for a pair whose winks are in no other doubt: in no other doubted
    pair, unsure of nothing else (their size aside), and with nothing on
    them that may be off or potted.
    """
    pairs_of: dict[str, int] = {}
    for d in doubts:
        for i in d.ids:
            pairs_of[i] = pairs_of.get(i, 0) + 1
    vanishing = _may_stop_squopping(board)

    def alone(i: str) -> bool:
        wink = board.wink(i)
        uppers = _uppers(board, i)
        return (
            pairs_of[i] == 1
            and set(wink.doubts) <= {Doubt.SQUOP, Doubt.SIZE}
            and bool(wink.doubts)
            and not uppers & vanishing
        )

    idle = [
        set(d.ids)
        for d in doubts
        if all(alone(i) for i in d.ids) and not pair_moves_count(board, d, ruleset)
    ]
    return [
        text + NO_COUNT_CHANGE if set(_WINK_ID.findall(text)) in idle else text for text in reviews
    ]


def _settled_reviews(reviews: Sequence[str], rulings: Sequence[Ruling]) -> list[str]:
    """The review requests the rulings do not answer.

    A request is answered when every wink it names was ruled on together: a
    pair ruling answers the question about that pair, a status ruling only
    questions about that wink alone (not a pair it belongs to).
    """
    ruled = [set(r.wink_ids) for r in rulings]
    out = []
    for text in reviews:
        named = set(_WINK_ID.findall(text))
        if named and any(named <= ids for ids in ruled):
            continue
        out.append(text)
    return out


def run(
    photo: Path,
    *,
    calibration_path: Path | None = None,
    ruleset: str = "etwa-2012",
    game_format: str = "pairs",
    json_output: bool = False,
    annotate_path: Path | None = None,
    calibrate: Callable[[npt.NDArray[np.uint8]], Any] | None = None,
    squops: Sequence[str] = (),
    apart: Sequence[str] = (),
    statuses: Sequence[str] = (),
    closeups: Sequence[Path] = (),
) -> str:
    """Count the tiddlies in a photo of the whole mat and return the text to print.

    ``closeups`` are close-up photos of pairs in doubt: each is reviewed (as
    ``winkref review`` does) and its verdict, matched to a pair in doubt by
    the winks' colours and sizes, counts as the umpire's ruling on it
    (:func:`closeup_ruling`). Rulings given by hand come first.

    ``squops`` (``"UPPER,LOWER"``), ``apart`` (``"A,B"``) and ``statuses``
    (``"ID=STATUS"``) are the umpire's rulings on winks the referee was unsure
    of (see :mod:`rules.rulings`); the count follows them. ``calibration_path``
    names a calibration file (from ``winkref calibrate``, e.g. with the
    corners given by hand) to use instead of calibrating from the photo.
    """
    # Check the cheap options first, so a typo fails before any image work.
    get_ruleset(ruleset)
    parse_format(game_format)
    rulings = parse_rulings(squops, apart, statuses)
    check_rulings_agree(rulings)
    if annotate_path is not None:
        inputs = [photo, *filter(None, [calibration_path]), *closeups]
        check_output_path(annotate_path, option="--annotate", inputs=inputs, image=True)
    image = load_photo(photo)
    # A close-up the photo checks refuse (a mistyped path, no image, black and
    # white, a palette or a strip) is refused before the count, as the photo
    # is; one that is a photo but cannot be reviewed only rules nothing. Each
    # is read again when reviewed, so that not all are held at once.
    for closeup in closeups:
        load_photo(closeup)
    from service.commands.analyze import calibration_for_photo
    from vision.pipeline import analyze_frame, prepare_context

    calibration, corners_mm, unsure_calibration = calibration_for_photo(
        image, photo, calibration_path, calibrate
    )
    corners_px = getattr(calibration, "corners_image_xy_px", None)
    if corners_px is not None:
        check_single_mat(image, corners_px)
    with naming_photo(photo):
        analysis = analyze_frame(image, prepare_context(calibration, corners_mm=corners_mm))
    analysis = replace(analysis, notes=unsure_calibration + analysis.notes)
    board = analysis.board
    if len(analysis.detections) == 0:
        raise NoWinksOnMatError(
            f"no winks found on the mat in {str(photo)!r}; nothing can be counted "
            "(check the light and that the whole mat is in view)"
        )
    reviews = tuple(analysis.reviews)
    doubts = _unruled(pair_doubts(analysis), rulings)
    from_closeups = _closeup_rulings(closeups, board, doubts)
    rulings = [*rulings, *(c.ruling for c in from_closeups if c.ruling is not None)]
    if rulings:
        board = apply_rulings(board, rulings)
        reviews = tuple(_settled_reviews(reviews, rulings))
    tiddly_counts, score = count_board(board, ruleset=ruleset, game_format=game_format)
    board = board.with_tiddlies(tiddly_counts)
    open_doubts = _unruled(doubts, rulings)
    bounds = count_range(board, ruleset=ruleset, game_format=game_format, doubts=open_doubts)
    reviews = tuple(_with_count_relevance(reviews, board, open_doubts, ruleset))
    ruled = [r.describe() for r in rulings]
    if annotate_path is not None:
        summary = summary_lines(tiddly_counts, score, bounds)
        if ruled:
            summary.append("umpire ruled: " + "; ".join(ruled))
        if unsure_calibration:
            sigma_mm = getattr(calibration, "mapping_sigma_mm", float("nan"))
            summary.append(f"calibration uncertain: about {sigma_mm:.1f} mm or more")
        write_image_atomic(
            annotate_path, annotate(image, analysis, summary, board), option="--annotate"
        )
    if json_output:
        report = report_json(
            board, tiddly_counts, score, notes=analysis.notes, reviews=reviews, bounds=bounds
        )
        return json.dumps(
            {**report, "rulings": ruled, "closeups": [c.text for c in from_closeups]}, indent=2
        )
    text = report_text(board, tiddly_counts, score, reviews=reviews, bounds=bounds)
    for closeup in from_closeups:
        text += "\nclose-up " + closeup.text
    if ruled:
        text += "\numpire's rulings applied: " + "; ".join(ruled)
    elif reviews:
        text += (
            "\nonce the umpire has ruled, count again with the rulings: --squop UPPER,LOWER, "
            "--no-squop A,B, --status ID=STATUS (free, potted, off, unplayed); or give "
            "close-ups of the pairs in doubt, each pair in the middle of its photo: "
            "--closeup PHOTO (repeatable)"
        )
    # What was inferred rather than seen (potted winks behind the pot, a turned
    # board, a coarse photo) changes what the desk should check.
    for note in analysis.notes:
        text += "\nnote: " + note
    return text
