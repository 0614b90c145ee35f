"""RECORD.json: parsing, and bad records reported clearly (shot index and field)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rules.engine import replay_record
from rules.record import IllegalRecordError, RecordNotFoundError, load_record, parse_record
from tests.rules.boardkit import Scribe


def short_game() -> dict[str, Any]:
    s = Scribe("blue")
    s.shot("blue", play=["blue-L1"])
    s.shot("green", play=["green-L1"])
    s.shot("red", play=["red-L1"])
    return s.record


def replay(data: dict[str, Any]) -> None:
    replay_record(parse_record(data))


def test_a_good_record_parses_and_replays() -> None:
    game, nxt = replay_record(parse_record(short_game()))
    assert nxt.colour is not None and nxt.colour.value == "yellow"
    assert game.result is None


def test_a_vanished_wink_names_the_shot_and_the_wink() -> None:
    # Reported with the wink count of rule 2.1.1, all in one error.
    data = short_game()
    winks = data["shots"][2]["board"]["winks"]
    data["shots"][2]["board"]["winks"] = [w for w in winks if w["id"] != "blue-S3"]
    with pytest.raises(IllegalRecordError, match=r"shots\[2\]\.board: wink 'blue-S3' vanished"):
        replay(data)


def test_an_unknown_colour_names_the_shot_and_the_field() -> None:
    data = short_game()
    data["shots"][1]["board"]["winks"][0]["colour"] = "purple"
    with pytest.raises(
        IllegalRecordError, match=r"shots\[1\]\.board\.winks\[0\]\.colour.*'purple'"
    ):
        parse_record(data)


def test_seven_blue_winks_are_reported_with_every_other_problem() -> None:
    data = short_game()
    extra = copy.deepcopy(data["shots"][0]["board"]["winks"][0])
    extra["id"] = "blue-S5"
    data["shots"][0]["board"]["winks"].append(extra)
    data["shots"][1]["colour"] = "mauve"
    with pytest.raises(IllegalRecordError) as err:
        parse_record(data)
    assert any("shots[1].colour" in p for p in err.value.problems)
    # Schema problems come first; fix them and the board problem shows.
    data["shots"][1]["colour"] = "green"
    with pytest.raises(IllegalRecordError, match=r"shots\[0\]\.board: 7 blue winks"):
        parse_record(data)


def test_unknown_ruleset_is_named() -> None:
    data = short_game()
    data["ruleset"] = "victorian"
    with pytest.raises(
        IllegalRecordError, match=r"ruleset: unknown ruleset 'victorian'.*'etwa-2012'"
    ):
        replay(data)


def test_unknown_fields_and_missing_fields_are_reported() -> None:
    data = short_game()
    del data["squidge_off_winner"]
    data["shots"][0]["colur"] = "blue"
    with pytest.raises(IllegalRecordError) as err:
        parse_record(data)
    text = str(err.value)
    assert "squidge_off_winner" in text
    assert "shots[0].colur" in text


def test_a_bad_manual_event_is_reported() -> None:
    data = short_game()
    data["shots"][0]["event"] = {"type": "foul", "choice": "maybe"}
    with pytest.raises(IllegalRecordError, match=r"shots\[0\]\.event"):
        parse_record(data)


def test_a_shot_after_the_end_is_an_error() -> None:
    data = short_game()
    data["shots"].insert(
        1, {"t": 5, "colour": "green", "event": {"type": "interference", "by": "red"}}
    )
    with pytest.raises(IllegalRecordError, match=r"shots\[2\]: the game has already ended"):
        replay(data)


def test_a_record_without_shots_is_refused_not_replayed_as_a_game_not_begun() -> None:
    data = short_game()
    del data["shots"]
    with pytest.raises(IllegalRecordError, match=r"shots: missing; .* \[\] for a game not"):
        parse_record(data)
    data["shots"] = []  # said outright: a game not begun is a record
    assert parse_record(data).shots == ()


def test_an_unknown_event_type_names_the_types_there_are() -> None:
    data = short_game()
    data["shots"][1]["event"] = {"type": "explode"}
    with pytest.raises(IllegalRecordError) as err:
        parse_record(data)
    text = str(err.value)
    assert "shots[1].event: unknown type 'explode'; expected one of 'foul'" in text
    assert "Input tag" not in text  # pydantic's internal wording stays inside


def test_a_record_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    # Windows Notepad writes one at the start of a UTF-8 file.
    path = tmp_path / "notepad.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(short_game()).encode())
    assert load_record(path) == parse_record(short_game())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xd8\xff\xe0 a JPEG", "is not a text file (byte 0xff at position 0"),  # a photo
        (b'{"t": ' + b"9" * 5000 + b"}", "a number in it has thousands of digits"),  # int limit
        # other winkref files: said what they are, not twenty field errors
        (b'{"format": "winkref-calibration/1", "camera": {}}', "is a calibration file"),
        (b'{"format": "tiddlywinks-gt/1", "winks": []}', "is a scene's ground truth"),
        (b'{"winks": [], "tiddlies": null}', "is one board (as 'winkref analyze --json'"),
    ],
)
def test_a_file_that_is_no_record_says_why_in_words(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "RECORD.json"
    path.write_bytes(content)
    with pytest.raises(IllegalRecordError) as err:
        load_record(path)
    assert message in str(err.value)
    assert "codec" not in str(err.value) and "sys.set_int" not in str(err.value)


def test_a_missing_file_is_named_with_its_own_error_class(tmp_path: Path) -> None:
    # A wrong path is told apart from a bad record by class, not by message text.
    with pytest.raises(RecordNotFoundError, match="nope.json' does not exist"):
        load_record(tmp_path / "nope.json")


def test_bad_json_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": "pairs",\n "shots": [}')
    with pytest.raises(IllegalRecordError, match=r"broken.json' is not valid JSON: .* line 2"):
        load_record(path)


def test_json_that_is_not_an_object_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(IllegalRecordError, match="expected a JSON object"):
        load_record(path)


def test_tiddlies_on_a_board_must_agree_with_its_winks() -> None:
    data = short_game()
    data["shots"][0]["board"]["tiddlies"] = {"blue": 3, "green": 0, "red": 0, "yellow": 0}
    with pytest.raises(
        IllegalRecordError, match=r"shots\[0\]\.board: tiddlies\.blue is 3, but the winks give 1"
    ):
        parse_record(data)


def test_a_free_wink_wholly_off_the_mat_names_the_shot_and_wink() -> None:
    # Rules 3, 4 and 13: a wink beyond the mat has left the playing volume, so a board
    # calling it free contradicts itself; the status to record is "off".
    data = short_game()
    wink = next(w for w in data["shots"][1]["board"]["winks"] if w["id"] == "green-L1")
    wink["x_mm"] = 5000.0
    with pytest.raises(IllegalRecordError, match=r"shots\[1\]\.board: free wink 'green-L1'.*off"):
        parse_record(data)


def test_a_free_wink_just_over_the_mat_edge_is_left_to_the_vision_tolerance() -> None:
    # A centre a few millimetres past the edge is measurement noise, not a contradiction.
    data = short_game()
    wink = next(w for w in data["shots"][1]["board"]["winks"] if w["id"] == "green-L1")
    wink["x_mm"], wink["y_mm"] = 300.0, 457.2 + 5.0
    parse_record(data)


def test_the_first_shot_is_at_time_zero() -> None:
    # Rules 6.1 and 17: t counts from the first shot, so a first t other than 0 would
    # shift the timed period; the error names the shot and the field.
    data = short_game()
    for shot in data["shots"]:
        shot["t"] += 12.0
    with pytest.raises(IllegalRecordError, match=r"shots\[0\]\.t: 12 s, but t counts from"):
        parse_record(data)
