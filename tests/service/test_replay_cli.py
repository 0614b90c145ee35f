"""``winkref replay``: text and JSON output, and clean errors for bad records."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from service.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()


def test_replay_prints_announcements_with_shot_and_time() -> None:
    result = runner.invoke(app, ["replay", str(EXAMPLES / "game_time_limit.json")])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert any("Time! The timed period of 10 minutes is over (rule 17)" in line for line in lines)
    assert lines[-1].startswith("[ 45]  18:45")
    assert "The score is 6–1" in lines[-1]


def test_replay_json_has_events_next_and_result() -> None:
    result = runner.invoke(app, ["replay", str(EXAMPLES / "game_pot_out.json"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"events", "next", "result"}
    event = data["events"][0]
    assert {"type", "shot", "colour", "rule", "text"} <= set(event)
    assert data["next"] is None
    assert data["result"]["ended_by"] == "pot_out"
    assert data["result"]["points"] == {"blue": 4, "green": 2, "red": 1, "yellow": 0}
    assert data["result"]["score"] == {"blue-red": 6, "green-yellow": 1}
    assert data["result"]["notation"] == "6*–1*"


def test_replay_json_squop_up_event_carries_turns() -> None:
    result = runner.invoke(app, ["replay", str(EXAMPLES / "game_squop_up.json"), "--json"])
    data = json.loads(result.output)
    squop_ups = [e for e in data["events"] if e["type"] == "squop_up"]
    assert squop_ups and squop_ups[0]["turns"] == 2 and squop_ups[0]["rule"] == "22.2"


def test_replay_of_an_unfinished_game_says_whose_turn_it_is(tmp_path: Path) -> None:
    record = json.loads((EXAMPLES / "game_time_limit.json").read_text())
    record["shots"] = record["shots"][:3]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(record))
    text = runner.invoke(app, ["replay", str(path)])
    assert text.output.strip().splitlines()[-1] == "Next: yellow to play."
    data = json.loads(runner.invoke(app, ["replay", str(path), "--json"]).output)
    assert data["result"] is None
    assert data["next"]["colour"] == "yellow"


def test_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["replay", str(tmp_path / "absent.json")])
    assert result.exit_code == 2
    assert "absent.json' does not exist" in result.output
    assert "Traceback" not in result.output


def test_bad_json_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert "bad.json' is not valid JSON" in result.output


def test_a_contradictory_record_names_the_shot_and_field(tmp_path: Path) -> None:
    record = json.loads((EXAMPLES / "game_time_limit.json").read_text())
    winks = record["shots"][4]["board"]["winks"]
    record["shots"][4]["board"]["winks"] = [w for w in winks if w["id"] != "blue-S3"]
    path = tmp_path / "vanish.json"
    path.write_text(json.dumps(record))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert "shots[4].board: wink 'blue-S3' vanished without being potted" in result.output


def test_a_rules_contradiction_names_the_file_too(tmp_path: Path) -> None:
    record = json.loads((EXAMPLES / "game_time_limit.json").read_text())
    record["shots"][2]["colour"] = "yellow"  # yellow passes in red's turn
    record["shots"][2]["pass"] = True
    path = tmp_path / "outofturn.json"
    path.write_text(json.dumps(record))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert "outofturn.json: shots[2].colour: yellow passed, but it is red" in result.output


def test_replay_json_result_has_exactly_the_issue_fields_and_tiddlies_ride_on_game_end() -> None:
    result = runner.invoke(app, ["replay", str(EXAMPLES / "game_time_limit.json"), "--json"])
    data = json.loads(result.output)
    assert set(data["result"]) == {"ended_by", "points", "score", "notation"}
    assert data["events"][-1]["tiddlies"] == {"blue": 9, "green": 6, "red": 8, "yellow": 6}


def _set_shot_field(shot: int, field: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["shots"][shot][field] = value

    return change


def _seven_blue_winks(record: dict[str, Any]) -> None:
    winks = record["shots"][5]["board"]["winks"]
    extra = dict(next(w for w in winks if w["colour"] == "blue"), id="blue-S9")
    winks.append(extra)


def _wink_far_off_the_mat(record: dict[str, Any]) -> None:
    wink = next(w for w in record["shots"][2]["board"]["winks"] if w["status"] == "free")
    wink["x_mm"] = 5000.0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # an unknown colour: named by shot and field, with the value given
        (_set_shot_field(3, "colour", "purple"), "shots[3].colour: Input should be"),
        # a shot earlier than the one before it
        (_set_shot_field(7, "t", 1.0), "shots[7].t: 1 s is earlier than the previous shot's"),
        # negative time
        (_set_shot_field(4, "t", -3), "shots[4].t: Input should be greater than or equal to 0"),
        # a seventh blue wink (rule 2.1.1)
        (_seven_blue_winks, "shots[5].board: 7 blue winks, but rule 2.1.1 allows 6"),
        # a wink called free five metres from the mat (rules 3, 13)
        (_wink_far_off_the_mat, "is wholly off the mat"),
        # a field the record format does not have
        (_set_shot_field(3, "index", 7), "shots[3].index: Extra inputs are not permitted"),
    ],
)
def test_a_bad_record_is_one_line_naming_shot_and_field(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    record = json.loads((EXAMPLES / "game_time_limit.json").read_text())
    change(record)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    for args in (["replay", str(path)], ["replay", str(path), "--json"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("winkref: error: ")
        assert expected in lines[0]
        assert "Traceback" not in result.output


def test_a_directory_or_undecodable_file_is_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    for path, expected in ((tmp_path, "cannot read record file"), (binary, "not a text file")):
        result = runner.invoke(app, ["replay", str(path)])
        assert result.exit_code == 2
        assert len(result.output.strip().splitlines()) == 1
        assert expected in result.output
