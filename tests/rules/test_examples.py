"""The shipped example games replay cleanly to the endings they were written for."""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.engine import replay_record
from rules.record import load_record
from rules.scoring import EndedBy

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("name", "ended_by", "notation", "must_have"),
    [
        # ends by time and round limit; a pot, an off with its forfeit, a pass
        ("game_time_limit", EndedBy.TIME, "6–1", {"time_up", "round", "off", "forfeit", "pass"}),
        # blue, green then red pot out: example F.2's 6*-1*
        ("game_pot_out", EndedBy.POT_OUT, "6*–1*", {"pot_out", "extra_shot"}),
        # a squop-up, a failure to free and a free shot with a nominated colour
        (
            "game_squop_up",
            EndedBy.TIME,
            "6–1",
            {"squop_up", "must_free", "failure_to_free", "nominated_shot"},
        ),
    ],
)
def test_example_game_replays_to_its_ending(
    name: str, ended_by: EndedBy, notation: str, must_have: set[str]
) -> None:
    game, _ = replay_record(load_record(EXAMPLES / f"{name}.json"))
    assert game.result is not None
    assert game.result.ended_by is ended_by
    assert game.result.notation == notation
    assert must_have <= {e.type.value for e in game.events}
    assert game.events[-1].type.value == "game_end"
