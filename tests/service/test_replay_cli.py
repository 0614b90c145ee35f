"""``winkref replay``: text and JSON output, and clean errors for bad records."""

from __future__ import annotations

import json
from pathlib import Path

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
