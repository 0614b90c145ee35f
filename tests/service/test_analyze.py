"""``winkref analyze``: table, JSON, annotation and clear errors, on the bundled samples."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest
from typer.testing import CliRunner

from rules.board import Board, Colour, Doubt, Wink, WinkSize, WinkStatus
from service.cli import app

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
runner = CliRunner()


def _sample(stem: str) -> tuple[Path, Path]:
    image, truth = SAMPLES / f"{stem}.jpg", SAMPLES / f"{stem}.json"
    if not image.exists():
        pytest.skip(f"{image.name} is not bundled")
    return image, truth


def test_json_output_is_a_valid_board_with_the_frame_report(tmp_path: Path) -> None:
    image, truth = _sample("overhead_00101")
    out_png = tmp_path / "out.png"
    result = runner.invoke(
        app,
        ["analyze", str(image), "--calibration", str(truth), "--json", "--annotate", str(out_png)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    board = Board.from_json_dict(data)
    assert len(board.winks) == 24
    assert set(board.tiddlies or {}) == {"blue", "green", "red", "yellow"}
    for key in ("hidden_regions", "notes", "reviews", "timings_ms"):
        assert key in data
    drawn = cv2.imread(str(out_png))
    assert drawn is not None and drawn.shape == cv2.imread(str(image)).shape


def test_table_output_lists_winks_and_tiddlies() -> None:
    image, truth = _sample("start_00101")
    result = runner.invoke(app, ["analyze", str(image), "--calibration", str(truth)])
    assert result.exit_code == 0, result.output
    assert "blue-L1" in result.output
    assert "Tiddlies (rule 19.1)" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze", "no-such.jpg", "--calibration", "x.json"], "does not exist"),  # no photo
        (["analyze", "{image}", "--calibration", "no-such.json"], "does not exist"),  # no file
        # no mat where the calibration file puts one (the file's check now says it first)
        (["analyze", "{nomat}", "--calibration", "{truth}"], "does not show the mat"),
        (["analyze", "{nomat}"], "no mat found"),  # no mat, calibrating from the photo itself
        # part of the mat out of frame: the corners by hand, with the command that takes them
        (["analyze", "{partial}"], "'winkref calibrate PHOTO --corners x1,y1,x2,y2"),
        (["count", "{partial}"], "then --calibration calib.json"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(args: list[str], message: str) -> None:
    image, truth = _sample("overhead_00101")
    nomat, _ = _sample("nomat_00101")
    partial, _ = _sample("partial_00101")
    filled = [a.format(image=image, truth=truth, nomat=nomat, partial=partial) for a in args]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_without_calibration_file_it_calibrates_from_the_photo() -> None:
    image, _ = _sample("overhead_00101")
    result = runner.invoke(app, ["analyze", str(image), "--json"])
    assert result.exit_code == 0, result.output
    board = Board.from_json_dict(json.loads(result.output))
    # Calibrated, detected and assembled: most winks found (the rest inferred or noted).
    assert 12 <= len(board.winks) <= 24


@pytest.mark.parametrize(
    ("sigma_mm", "noted"),
    [
        (0.6, False),  # a clear mat: nothing to say
        (2.9, True),  # faint edges: the user is told, and how to do better
    ],
)
def test_an_uncertain_calibration_from_the_photo_is_said_with_the_board(
    sigma_mm: float, noted: bool
) -> None:
    from dataclasses import replace

    from calibration import calibrate
    from service.commands.analyze import run

    image, _ = _sample("overhead_00101")

    def calibrated_as_if_faint(photo):  # type: ignore[no-untyped-def]
        return replace(calibrate(photo), mapping_sigma_mm=sigma_mm)

    data = json.loads(run(image, json_output=True, calibrate=calibrated_as_if_faint))
    said = [n for n in data["notes"] if "the calibration from this photo may be about" in n]
    assert bool(said) is noted
    if noted:
        assert f"{sigma_mm:.1f} mm out" in said[0] and "--corners" in said[0]


@pytest.mark.parametrize(
    ("uncertain", "doubts", "inferred", "flags"),
    [
        (True, (Doubt.SQUOP, Doubt.EDGE), False, "UNCERTAIN (squop, edge)"),  # why, as vision says
        (True, (), False, "UNCERTAIN"),  # a board that does not say why
        (True, (Doubt.INFERRED,), True, "UNCERTAIN (inferred) inferred"),  # counted potted unseen
        (False, (), False, ""),  # nothing to look at
    ],
)
def test_the_table_says_why_a_wink_is_unsure(uncertain, doubts, inferred, flags) -> None:
    from service.commands.analyze import flags_text

    wink = Wink(
        id="red-S1",
        colour=Colour.RED,
        size=WinkSize.SMALL,
        status=WinkStatus.POTTED if inferred else WinkStatus.FREE,
        uncertain=uncertain,
        doubts=doubts,
        inferred=inferred,
    )
    assert flags_text(wink) == flags
