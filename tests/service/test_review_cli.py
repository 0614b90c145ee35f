"""`winkref review` from the command line: verdict, JSON, annotation and bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from service.cli import app
from service.commands.review import BadOptionError, parse_near, parse_pair

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
from test_review import BLUE, GREEN, OTHER_PAIRS_DISCS, RED, _verdict, render  # noqa: E402

runner = CliRunner()


@pytest.fixture(scope="module")
def squop_photo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small blue wink lying 1 mm onto a large red one, camera straight down."""
    path = tmp_path_factory.mktemp("review") / "squop.png"
    image = render([(0.0, 0.0, 0.0, 22.0, RED), (18.0, 0.0, 1.6, 16.0, BLUE)])
    cv2.imwrite(str(path), image)
    return path


def test_the_lens_a_jpeg_tells_is_used_and_said(squop_photo: Path, tmp_path: Path) -> None:
    from PIL import Image

    jpeg = tmp_path / "IMG_0007.jpg"
    exif = Image.Exif()
    exif.get_ifd(0x8769)[0xA405] = 27  # FocalLengthIn35mmFilm: about the test camera's 66 degrees
    Image.open(squop_photo).save(jpeg, quality=95, exif=exif.tobytes())
    told = runner.invoke(app, ["review", str(jpeg)])
    assumed = runner.invoke(app, ["review", str(squop_photo)])
    assert told.exit_code == assumed.exit_code == 0, told.output + assumed.output
    assert "the lens from the photo's EXIF: 27 mm in 35 mm terms, 65 degrees" in told.output
    assert "does not say which lens took it" in assumed.output
    assert told.output.splitlines()[0].startswith("squopped")


def test_json_verdict_has_the_required_fields(squop_photo: Path, tmp_path: Path) -> None:
    out_png = tmp_path / "pair.png"
    result = runner.invoke(app, ["review", str(squop_photo), "--json", "--annotate", str(out_png)])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert verdict["squopped"] is True
    assert verdict["overlap_mm"] == pytest.approx(1.0, abs=0.3)
    assert verdict["uncertainty_mm"] > 0
    blue = next(w["id"] for w in verdict["winks"] if w["colour"] == "blue")
    red = next(w["id"] for w in verdict["winks"] if w["colour"] == "red")
    assert (verdict["upper"], verdict["lower"]) == (blue, red)
    assert verdict["other_pairs"] == []  # one pair in view: nothing else to pick
    picture = cv2.imread(str(out_png))
    assert picture is not None and picture.shape[0] > 100


def test_text_verdict_names_the_pair_and_the_number(squop_photo: Path) -> None:
    result = runner.invoke(app, ["review", str(squop_photo)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("squopped:")
    assert "mm" in result.output


def test_a_soft_photo_is_said_to_be_soft_with_a_wider_uncertainty(
    squop_photo: Path, tmp_path: Path
) -> None:
    soft = tmp_path / "soft.png"
    cv2.imwrite(str(soft), cv2.GaussianBlur(cv2.imread(str(squop_photo)), (0, 0), 5.0))
    sharp = json.loads(runner.invoke(app, ["review", str(squop_photo), "--json"]).output)
    result = runner.invoke(app, ["review", str(soft), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert any(n.startswith("the photo is soft") for n in verdict["notes"])
    assert not any(n.startswith("the photo is soft") for n in sharp["notes"])
    assert verdict["uncertainty_mm"] > sharp["uncertainty_mm"]


def test_second_photo_is_combined(squop_photo: Path, tmp_path: Path) -> None:
    # The same pair seen from the opposite side: the photo turned half round.
    other_side = tmp_path / "other_side.png"
    cv2.imwrite(str(other_side), cv2.rotate(cv2.imread(str(squop_photo)), cv2.ROTATE_180))
    result = runner.invoke(app, ["review", str(squop_photo), "--second", str(other_side), "--json"])
    assert result.exit_code == 0, result.output
    assert any("second photo" in n for n in json.loads(result.output)["notes"])


def test_a_second_photo_of_another_pair_is_not_combined(squop_photo: Path, tmp_path: Path) -> None:
    # A small green wink on a large red one: not the first photo's small blue on large red.
    other_pair = tmp_path / "other_pair.png"
    cv2.imwrite(
        str(other_pair), render([(0.0, 0.0, 0.0, 22.0, RED), (18.0, 0.0, 1.6, 16.0, GREEN)])
    )
    alone = json.loads(runner.invoke(app, ["review", str(squop_photo), "--json"]).output)
    result = runner.invoke(app, ["review", str(squop_photo), "--second", str(other_pair), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert (verdict["overlap_mm"], verdict["uncertainty_mm"]) == (
        alone["overlap_mm"],
        alone["uncertainty_mm"],
    )
    (said,) = [n for n in verdict["notes"] if "not combined" in n]
    assert "small green" in said and "small blue" in said


def test_a_second_photo_that_shows_no_pair_leaves_the_first_photos_verdict(
    squop_photo: Path, tmp_path: Path
) -> None:
    # Two winks far apart: the second view cannot be reviewed. The review was
    # refused as a whole (exit 2), with advice about the second photo's --pair.
    apart = tmp_path / "apart.png"
    cv2.imwrite(str(apart), render([(0.0, 0.0, 0.0, 22.0, RED), (40.0, 0.0, 0.0, 16.0, BLUE)]))
    alone = json.loads(runner.invoke(app, ["review", str(squop_photo), "--json"]).output)
    result = runner.invoke(app, ["review", str(squop_photo), "--second", str(apart), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert verdict["overlap_mm"] == alone["overlap_mm"]
    (said,) = [n for n in verdict["notes"] if "not combined" in n]
    assert "could not be reviewed" in said and "--pair" not in said


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["review", "/no/such/photo.jpg"], "does not exist"),  # missing file
        (["review", "{readme}"], "cannot read"),  # not an image
        (["review", "{photo}", "--pair", "W1,W9"], "W9"),  # unknown wink id
        (["review", "{photo}", "--pair", "W1"], "--pair"),  # one id only
        (["review", "{photo}", "--near", "a,b"], "--near"),  # not numbers
        (["review", "{blank}"], "no winks"),  # felt only
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    args: list[str], message: str, squop_photo: Path, tmp_path: Path
) -> None:
    readme = tmp_path / "notes.txt"
    readme.write_text("not an image")
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((600, 800, 3), (150, 160, 165), np.uint8))
    filled = [a.format(readme=readme, photo=squop_photo, blank=blank) for a in args]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("W1,W2", ("W1", "W2")),  # plain
        (" W3 , W1 ", ("W3", "W1")),  # spaces tolerated
        (None, None),  # not given
    ],
)
def test_parse_pair(text: str | None, expected: tuple[str, str] | None) -> None:
    assert parse_pair(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "W1,,W2",  # an empty id between the commas (was read as W1,W2)
        "W1,",  # the second id missing
        ",W2",  # the first id missing
        "W1,W2,W3",  # three winks
    ],
)
def test_a_pair_that_is_not_two_ids_is_refused(text: str) -> None:
    with pytest.raises(BadOptionError, match="two wink ids"):
        parse_pair(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2010,1500", (2010.0, 1500.0)),  # integers
        ("10.5,-3", (10.5, -3.0)),  # decimals and signs
        ("1,2,3", BadOptionError),  # three numbers
        ("nan,1", BadOptionError),  # not finite
    ],
)
def test_parse_near(text: str, expected: object) -> None:
    if expected is BadOptionError:
        with pytest.raises(BadOptionError):
            parse_near(text)
    else:
        assert parse_near(text) == expected


SAMPLE_OVERHEAD = Path(__file__).resolve().parents[2] / "sample_images" / "overhead_00101.jpg"


@pytest.mark.skipif(not SAMPLE_OVERHEAD.exists(), reason="sample image not generated")
def test_overhead_webcam_frame_is_reviewed_with_the_mat_calibration() -> None:
    result = runner.invoke(app, ["review", str(SAMPLE_OVERHEAD), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    # Ids come from the frame's board, so they name colours, unlike a close-up's W1, W2.
    assert all("-" in i for i in verdict["pair"])
    assert verdict["uncertainty_mm"] > 0
    assert verdict["squopped"] in (True, False, None)
    # The pair was the program's pick: the other pairs the frame is unsure of are named.
    for other in verdict["other_pairs"]:
        assert all("-" in i for i in other["pair"]) and set(other["pair"]) != set(verdict["pair"])
    if verdict["other_pairs"]:
        assert any("give --pair" in n for n in verdict["notes"])


@pytest.mark.skipif(not SAMPLE_OVERHEAD.exists(), reason="sample image not generated")
def test_a_phone_sized_photo_of_the_whole_mat_is_reviewed_with_the_mat_calibration(
    tmp_path: Path,
) -> None:
    # A whole-mat photo as big as a phone's: read as a close-up first (it is
    # wider than a webcam frame), whose few tiny ellipses give no close-up's scale.
    frame = cv2.imread(str(SAMPLE_OVERHEAD))
    big = tmp_path / "whole_mat_4k.jpg"
    cv2.imwrite(str(big), cv2.resize(frame, (3840, 2160), interpolation=cv2.INTER_CUBIC))
    at_1080 = json.loads(runner.invoke(app, ["review", str(SAMPLE_OVERHEAD), "--json"]).output)
    result = runner.invoke(app, ["review", str(big), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)

    # Ids are numbered in the order found, which may differ: the pair is matched by place.
    def pair_xy_px(v: dict, scale: float) -> list[list[float]]:
        by_id = {w["id"]: w["image_xy_px"] for w in v["winks"]}
        return sorted([c / scale for c in by_id[i]] for i in v["pair"])

    assert np.allclose(pair_xy_px(verdict, 2.0), pair_xy_px(at_1080, 1.0), atol=2.0)
    # The same picture, upsampled: the two readings agree within what each states.
    assert verdict["squopped"] == at_1080["squopped"]
    assert abs(verdict["overlap_mm"] - at_1080["overlap_mm"]) <= at_1080["uncertainty_mm"]


def test_json_names_the_other_pairs_as_near_the_centre(tmp_path: Path) -> None:
    path = tmp_path / "two_pairs.png"
    cv2.imwrite(str(path), render(OTHER_PAIRS_DISCS, tilt_deg=10.0))
    result = runner.invoke(app, ["review", str(path), "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    (other,) = verdict["other_pairs"]
    assert len(set(other["pair"]) | set(verdict["pair"])) == 3  # the two pairs share one wink
    assert other["plan_gap_mm"] == pytest.approx(0.75, abs=0.6)


@pytest.mark.parametrize("command", ["count", "analyze"])  # both need the whole mat in view
def test_a_close_up_given_to_a_whole_mat_command_points_to_review(
    squop_photo: Path, command: str
) -> None:
    result = runner.invoke(app, [command, str(squop_photo)])
    assert result.exit_code == 2
    assert "use 'winkref review PHOTO' instead" in result.output


def test_an_heic_phone_photo_gets_the_verdict_of_the_same_photo_as_png(
    squop_photo: Path, tmp_path: Path
) -> None:
    import pillow_heif
    from PIL import Image

    # An iPhone's default format: OpenCV alone cannot read it.
    heic = tmp_path / "IMG_0042.HEIC"
    rgb = cv2.imread(str(squop_photo))[:, :, ::-1]
    pillow_heif.from_pillow(Image.fromarray(np.ascontiguousarray(rgb))).save(str(heic), quality=95)
    from_png = json.loads(runner.invoke(app, ["review", str(squop_photo), "--json"]).output)
    result = runner.invoke(app, ["review", str(heic), "--json"])
    assert result.exit_code == 0, result.output
    from_heic = json.loads(result.output)
    assert from_heic["squopped"] is from_png["squopped"] is True
    assert from_heic["upper"] == from_png["upper"]
    # Channels in the right order: the same wink is blue in both.
    assert [w["colour"] for w in from_heic["winks"]] == [w["colour"] for w in from_png["winks"]]
    # The HEVC coding moves the rims by a fraction of a pixel at most.
    assert from_heic["overlap_mm"] == pytest.approx(from_png["overlap_mm"], abs=0.1)


@pytest.mark.parametrize(
    ("squopped", "overlap_mm", "too_close", "overlapping"),
    [
        (True, 1.2, False, True),  # a squop, beyond doubt
        (False, -1.2, False, False),  # a gap, beyond doubt
        (None, 0.2, True, None),  # within the uncertainty: too close to call
        (None, 11.5, False, True),  # overlapping beyond doubt, the upper wink unseen
    ],
)
def test_json_tells_too_close_to_call_from_an_overlap_whose_top_is_unseen(
    squopped, overlap_mm, too_close, overlapping
) -> None:
    from service.commands.review import verdict_json

    verdict = _verdict(squopped, "W2" if squopped else None, overlap_mm)
    out = verdict_json(verdict)
    assert out["too_close_to_call"] is too_close
    assert out["overlapping"] is overlapping


@pytest.mark.parametrize(
    ("mm_per_px", "probed"),
    [
        # a close-up 30 cm away: 4032 px span about 300 mm, no whole mat can be in view
        (0.075, False),
        # about 33 cm away: 443 mm, still under half the mat's width (457 mm)
        (0.11, False),
        # 40 cm away, 484 mm: over half the mat's width, so a mat is still looked for
        (0.12, True),
        # a photo whose winks give a scale of 1000 mm across: it may hold a whole mat (upright)
        (0.25, True),
    ],
)
def test_a_close_up_too_close_to_call_is_looked_over_for_a_mat_only_if_one_could_be_in_view(
    monkeypatch: pytest.MonkeyPatch, mm_per_px: float, probed: bool
) -> None:
    from dataclasses import replace

    import service.commands.review as review_command

    closeup = replace(_verdict(None, None, 0.2), mm_per_px=mm_per_px)
    from_mat = _verdict(True, "W2", 1.5)
    asked: list[bool] = []

    def mat_verdict(image, **_: object):
        asked.append(True)
        return from_mat

    monkeypatch.setattr(review_command, "review_photo", lambda image, **_: closeup)
    monkeypatch.setattr(review_command, "_mat_verdict", mat_verdict)
    photo = np.zeros((3024, 4032, 3), dtype=np.uint8)
    verdict = review_command.review_any(photo)
    assert bool(asked) is probed
    assert verdict is (from_mat if probed else closeup)
