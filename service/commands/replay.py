"""``winkref replay RECORD.json [--json]``: replay a recorded game.

The logic lives in :mod:`rules.engine`; this module reads the file and
formats what the referee would say, as text or as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rules.engine import NextTurn, replay_record
from rules.events import Event
from rules.record import IllegalRecordError, RecordNotFoundError, load_record
from rules.scoring import GameScore, points_number


def result_to_json(result: GameScore | None) -> dict[str, Any] | None:
    """The ``result`` object of ``--json``."""
    if result is None:
        return None
    out: dict[str, Any] = {
        "ended_by": result.ended_by.value,
        "points": {c.value: points_number(v) for c, v in result.points.items()},
        "score": {p.value: points_number(v) for p, v in result.score.items()},
        "notation": result.notation,
    }
    return out


def _clock(t: float | None) -> str:
    if t is None:
        return "  --:--"
    minutes, seconds = divmod(int(t), 60)
    return f"  {minutes:02d}:{seconds:02d}"


def event_line(event: Event, *, first_shot: int = 0) -> str:
    """An announcement as one line: ``[shot]  clock  text``.

    The shot is the record's index (``shots[i]``, as its errors say) unless
    ``first_shot`` is 1: the live referee numbers shots from 1, as its
    "Shot 5: ..." lines do.
    """
    shot = "   " if event.shot is None else f"{event.shot + first_shot:3d}"
    return f"[{shot}]{_clock(event.t)}  {event.text}"


def next_turn_line(nxt: NextTurn) -> str:
    if nxt.colour is None and nxt.choices:
        names = " or ".join(c.value for c in nxt.choices)
        return f"Next: {names}, as the opponents choose (rule 23.3)."
    if nxt.colour is None:
        return ""
    text = f"Next: {nxt.colour.value} to play"
    if nxt.nominated:
        text += ", with a free shot with a nominated colour (rule 22.6.1)"
    if nxt.shots_left > 1:
        text += f" ({nxt.shots_left} shots left in the turn)"
    if nxt.round == 0:
        text += "; the round in which time ran out is being completed (rule 18)"
    elif nxt.round is not None:
        text += f"; round limit period, round {nxt.round}"
    return text + "."


_FORMAT_HINT = "the format is in docs/board-contract.md, 'Game record (RECORD.json)'"


def load_game_record(record_path: Path) -> Any:
    """The loader's record, with its errors told in full (what to do, too)."""
    if record_path.is_dir():
        raise IllegalRecordError(
            f"cannot read record file {str(record_path)!r}: it is a folder; "
            "give the RECORD.json file inside it"
        )
    try:
        return load_record(record_path)
    except RecursionError:
        # json (and pydantic) recurse per nesting level; no real record nests deeply.
        raise IllegalRecordError(
            f"{str(record_path)!r} is nested too deeply to be a game record; {_FORMAT_HINT}"
        ) from None
    except RecordNotFoundError as exc:
        raise RecordNotFoundError(f"{exc}; check the path") from None
    except IllegalRecordError as exc:
        raise IllegalRecordError([*exc.problems, _FORMAT_HINT]) from None


def run(record_path: Path, *, json_output: bool = False) -> str:
    """Replay ``record_path`` and return what to print.

    Raises
    ------
    rules.record.IllegalRecordError
        For a missing, unreadable or invalid record (a ``ValueError``).
    """
    record = load_game_record(record_path)
    try:
        game, nxt = replay_record(record)
    except IllegalRecordError as exc:
        # Name the file, as the loader's own errors do.
        raise IllegalRecordError([f"{record_path}: {p}" for p in exc.problems]) from None
    if json_output:
        payload = {
            "events": [e.to_json_dict() for e in game.events],
            "next": None if game.result is not None else nxt.to_json_dict(),
            "result": result_to_json(game.result),
        }
        return json.dumps(payload, indent=2, ensure_ascii=False)
    lines = [event_line(e) for e in game.events]
    if game.result is None:
        lines.append(next_turn_line(nxt))
    return "\n".join(line for line in lines if line)
