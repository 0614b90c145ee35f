"""The recorded game, RECORD.json: its pydantic models and loader.

A record holds only the shots actually played and the voluntary passes; the
engine infers forfeits, deemed passes and squop-up turns. See
``docs/board-contract.md`` for the format in full.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rules.board import Board, Colour, IllegalBoardError, WinkStatus
from rules.ruleset import UnknownRulesetError, get_ruleset
from rules.scoring import GameFormat


class IllegalRecordError(ValueError):
    """A record that cannot be read, or contradicts itself or the rules.

    ``problems`` lists every problem found; each names the shot and field,
    e.g. ``shots[12].board: wink 'blue-S3' vanished without being potted``.
    """

    def __init__(self, problems: list[str] | tuple[str, ...] | str) -> None:
        if isinstance(problems, str):
            problems = [problems]
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__("; ".join(self.problems))


class RecordNotFoundError(IllegalRecordError):
    """The record file named does not exist (a wrong path, not a bad record)."""


class Choice(enum.StrEnum):
    """The opponents' choice after a foul or a wrong-colour shot (23.2, 23.3)."""

    REPLAY = "replay"
    """23.2 (i) / 23.3 (i): winks go back and the shot (or turn) is played again."""
    ACCEPT = "accept"
    """23.2 (ii) / 23.3 (ii): the shot stands and the turn ends."""


_STRICT = ConfigDict(frozen=True, extra="forbid")


class FoulEvent(BaseModel):
    """Rule 23.2: the correct wink played illegally, with the opponents' choice."""

    model_config = _STRICT
    type: Literal["foul"]
    choice: Choice


class WrongColourEvent(BaseModel):
    """Rule 23.3: the wrong colour played, with the opponents' choice."""

    model_config = _STRICT
    type: Literal["wrong_colour"]
    choice: Choice


class InterferenceEvent(BaseModel):
    """Rules 24.4, 26.6: deliberate interference by ``by``; the game ends 7-0."""

    model_config = _STRICT
    type: Literal["interference"]
    by: Colour


ManualEvent = Annotated[
    FoulEvent | WrongColourEvent | InterferenceEvent, Field(discriminator="type")
]


class ShotRecord(BaseModel):
    """One entry of ``shots``.

    ``board`` is the whole board after the shot. It may be left out for a
    pass, and for entries whose board the rules throw away: a foul or wrong
    colour the opponents made replay, and interference.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    t: float = Field(ge=0, allow_inf_nan=False)
    colour: Colour
    is_pass: bool = Field(default=False, alias="pass")
    event: ManualEvent | None = None
    board: Board | None = None


class GameRecord(BaseModel):
    """A recorded game (RECORD.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ruleset: str = "etwa-2012"
    format: GameFormat = GameFormat.PAIRS
    squidge_off_winner: Colour
    timed_period_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    blue_corner_x_sign: Literal[-1, 1] = -1
    shots: tuple[ShotRecord, ...] = ()


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("FoulEvent", "WrongColourEvent", "InterferenceEvent") or part.startswith(
            ("foul", "wrong_colour", "interference")
        ):
            continue  # the discriminator's branch name adds nothing for the reader
        else:
            out += f".{part}" if out else part
    return out


def parse_record(data: Any, *, source: str = "record") -> GameRecord:
    """Validate a decoded RECORD.json, reporting every problem at once.

    Raises
    ------
    IllegalRecordError
        Each problem names ``source``, the shot index and the field.
    """
    if not isinstance(data, dict):
        raise IllegalRecordError(f"{source}: expected a JSON object, got {type(data).__name__}")
    # Without `shots` any other JSON object (a calibration, a board) with a
    # squidge-off winner would replay as a game not begun.
    no_shots = (
        [
            f"{source}: shots: missing; a record lists the shots played "
            "(an empty list [] for a game not yet begun)"
        ]
        if "shots" not in data
        else []
    )
    try:
        record = GameRecord.model_validate(data)
    except ValidationError as exc:
        problems = list(no_shots)
        for err in exc.errors():
            where = _loc(err["loc"])
            got = err.get("input")
            shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
            if err["type"] == "union_tag_invalid":
                # Pydantic's own words ("Input tag ... found using ...") name its internals.
                ctx = err.get("ctx", {})
                field = str(ctx.get("discriminator", "kind")).strip("'")
                problems.append(
                    f"{source}: {where}: unknown {field} {ctx.get('tag')!r}; "
                    f"expected one of {ctx.get('expected_tags')}"
                )
                continue
            problems.append(f"{source}: {where}: {err['msg']} (got {shown})")
        raise IllegalRecordError(problems) from None
    if no_shots:
        raise IllegalRecordError(no_shots)
    try:
        ruleset = get_ruleset(record.ruleset)
    except UnknownRulesetError as exc:
        raise IllegalRecordError(f"{source}: ruleset: {exc}") from None
    problems = []
    if record.shots and record.shots[0].t != 0:
        problems.append(
            f"{source}: shots[0].t: {record.shots[0].t:g} s, but t counts from the first shot "
            "(rules 6.1, 17), so the first is 0; subtract it from every t"
        )
    previous: Board | None = None
    for i, shot in enumerate(record.shots):
        if shot.board is None:
            continue
        where = f"{source}: shots[{i}].board"
        if previous is not None:
            now = shot.board.by_id
            for w in previous.winks:
                if w.id not in now:
                    what = "potted wink" if w.status is WinkStatus.POTTED else "wink"
                    how = "from the board" if what == "potted wink" else "without being potted"
                    problems.append(f"{where}: {what} {w.id!r} vanished {how}")
        problems.extend(f"{where}: {p}" for p in ruleset.board_problems(shot.board))
        previous = shot.board
    if problems:
        raise IllegalRecordError(problems)
    return record


def load_record(path: str | Path) -> GameRecord:
    """Read and validate RECORD.json.

    Raises
    ------
    IllegalRecordError
        For a missing or unreadable file, bad JSON, or an invalid record;
        the message quotes the file name.
    """
    path = Path(path)
    try:
        # utf-8-sig: a record saved by Windows Notepad starts with a byte-order mark.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise RecordNotFoundError(f"record file '{path}' does not exist") from None
    except UnicodeDecodeError as exc:
        raise IllegalRecordError(
            f"'{path}' is not a text file (byte {exc.object[exc.start]:#04x} at position "
            f"{exc.start} is not UTF-8); give the game's RECORD.json"
        ) from None
    except OSError as exc:
        raise IllegalRecordError(
            f"cannot read record file '{path}': {exc.strerror or exc}"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IllegalRecordError(
            f"'{path}' is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError:
        # Python's limit on the digits of an integer (4300), met before any field is read.
        raise IllegalRecordError(
            f"'{path}' cannot be read as a record: a number in it has thousands of digits"
        ) from None
    except RecursionError:
        raise IllegalRecordError(f"'{path}' is nested too deeply to be a record") from None
    kind = _other_file_kind(data)
    if kind is not None:
        raise IllegalRecordError(
            f"'{path}' is {kind}, not a game record; give the RECORD.json that "
            "'winkref watch' saved (its --record file)"
        )
    return parse_record(data, source=str(path))


def _other_file_kind(data: object) -> str | None:
    """What other winkref JSON ``data`` is (told to a user who gave the wrong file), or None."""
    if not isinstance(data, dict):
        return None
    stated = data.get("format")
    if isinstance(stated, str):
        # The prefixes of calibration.result.CALIBRATION_FORMAT and of the
        # scene generator's ground truth (rules/ imports neither).
        if stated.startswith("winkref-calibration/"):
            return "a calibration file (from 'winkref calibrate -o')"
        if stated.startswith("tiddlywinks-gt/"):
            return "a scene's ground truth"
    if "shots" not in data and "winks" in data:
        return "one board (as 'winkref analyze --json' writes)"
    return None


__all__ = [
    "Choice",
    "FoulEvent",
    "GameRecord",
    "IllegalBoardError",
    "IllegalRecordError",
    "InterferenceEvent",
    "ManualEvent",
    "ShotRecord",
    "WrongColourEvent",
    "parse_record",
    "load_record",
]
