"""``winkref calibrate``: the calibration file, the picture, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from calibration import Calibration
from calibration.fit import MAT_CORNERS_MM
from service.cli import app
from service.commands.calibrate import BadDistortionError, parse_corners, parse_distortion
from tests.calibration.synthetic import look_at_camera, render_mat

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"


@pytest.fixture(scope="module")
def mat_photo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    truth = look_at_camera((800, 450), (250.0, -300.0, 1700.0))
    path = tmp_path_factory.mktemp("photos") / "mat.png"
    cv2.imwrite(str(path), render_mat(truth))
    return path, truth


def test_calibrate_writes_the_file_and_a_picture_next_to_it(mat_photo, tmp_path: Path) -> None:
    photo, _ = mat_photo
    out = tmp_path / "setup" / "calib.json"
    result = runner.invoke(app, ["calibrate", str(photo), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "reprojection error: RMS" in result.output and " mm on the mat" in result.output
    assert "baselines found: 4/4" in result.output
    # The folder did not exist: it is made, and said (a mistyped one shows).
    assert f"made the folder {out.parent}" in result.output
    # An 800x450 picture of the whole mat is too coarse to see every wink: said at set-up.
    assert "mm a pixel at the mat's farthest corner (coarser than 2.2" in result.output
    cal = Calibration.from_json_dict(json.loads(out.read_text()))
    assert cal.orientation_known
    picture = cv2.imread(str(out.with_suffix(".png")))
    assert picture is not None and picture.shape == (450, 800, 3)


def test_hand_given_corners_are_used(mat_photo, tmp_path: Path) -> None:
    photo, truth = mat_photo
    corners = ",".join(f"{v:.1f}" for v in truth.mat_to_image(MAT_CORNERS_MM).ravel())
    annotated = tmp_path / "look.png"
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(photo),
            "-o",
            str(tmp_path / "c.json"),
            "--corners",
            corners,
            "--annotate",
            str(annotated),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "mat found (manual-corners)" in result.output
    assert annotated.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--camera", "97"], "cannot open camera 97"),  # no such camera here
        (["/no/such/photo.jpg"], "'/no/such/photo.jpg': no such file"),  # missing file
        ([], "give either an IMAGE file or --camera N"),  # neither
        (["--corners", "1,2,3"], "expected eight numbers"),  # too few corner numbers
        (["--distortion", "-0.1,0.02"], "expected four or five numbers"),  # k1, k2 only
        (["--distortion", "-25,0,0,0"], "implausibly large"),  # another model's numbers
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(
    args: list[str], message: str, mat_photo, tmp_path: Path
) -> None:
    if args[:1] in (["--corners"], ["--distortion"]):
        args = [str(mat_photo[0]), *args]
    result = runner.invoke(app, ["calibrate", *args, "-o", str(tmp_path / "c.json")])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_corrupt_image_is_quoted(tmp_path: Path) -> None:
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\x00" * 64)
    result = runner.invoke(app, ["calibrate", str(bad), "-o", str(tmp_path / "c.json")])
    assert result.exit_code == 2
    assert "broken.jpg" in result.output and "not a readable image" in result.output


def test_no_mat_in_view_is_reported(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["calibrate", str(SAMPLES / "nomat_00101.jpg"), "-o", str(tmp_path / "c.json")]
    )
    assert result.exit_code == 2
    assert "no mat found" in result.output
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,2,3,4,5,6,7,8", [[1, 2], [3, 4], [5, 6], [7, 8]]),  # commas
        ("1 2 3 4 5 6 7 8", [[1, 2], [3, 4], [5, 6], [7, 8]]),  # spaces
        ("1.5,2;3,4;5,6;7,8", [[1.5, 2], [3, 4], [5, 6], [7, 8]]),  # pairs by semicolons
    ],
)
def test_corner_text_is_parsed(text: str, expected: list[list[float]]) -> None:
    np.testing.assert_allclose(parse_corners(text), expected)


def test_a_known_lens_distortion_is_used_not_estimated(mat_photo, tmp_path: Path) -> None:
    photo, truth = mat_photo
    out = tmp_path / "calib.json"
    k1 = float(truth.dist_coeffs[0])
    result = runner.invoke(
        app, ["calibrate", str(photo), "-o", str(out), "--distortion", f"{k1},0,0,0"]
    )
    assert result.exit_code == 0, result.output
    assert "lens distortion: as given" in result.output
    cal = Calibration.from_json_dict(json.loads(out.read_text()))
    np.testing.assert_allclose(cal.camera.dist_coeffs, [k1, 0.0, 0.0, 0.0, 0.0])
    # With the true distortion the mat's corners map back to within a millimetre.
    ours = cal.camera.image_to_mat(truth.mat_to_image(MAT_CORNERS_MM))
    error_mm = min(np.abs(ours - MAT_CORNERS_MM).max(), np.abs(-ours - MAT_CORNERS_MM).max())
    assert error_mm < 1.0


def test_a_failure_with_a_given_distortion_names_it(mat_photo, tmp_path: Path) -> None:
    # A wrong lens bends every edge the fit follows: the user is told what they gave.
    photo, _ = mat_photo
    args = ["calibrate", str(photo), "-o", str(tmp_path / "c.json")]
    result = runner.invoke(app, [*args, "--distortion", "-0.5,0.3,0.01,0.01"])
    assert result.exit_code == 2
    assert "with the lens distortion given (--distortion -0.5,0.3,0.01,0.01)" in result.output
    assert "leave --distortion out" in result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("-0.1,0.02,0.001,-0.002", [-0.1, 0.02, 0.001, -0.002, 0.0]),  # k3 left out: 0
        ("-0.1 0.02 0 0 0.005", [-0.1, 0.02, 0.0, 0.0, 0.005]),  # all five, by spaces
    ],
)
def test_distortion_text_is_parsed_in_opencvs_order(text: str, expected: list[float]) -> None:
    np.testing.assert_allclose(parse_distortion(text), expected)


@pytest.mark.parametrize(
    "text",
    [
        "a,b,c,d",  # not numbers
        "-0.1,0,0,0,0,0",  # six: a rational model's numbers
        "-0.1,0,0.5,0",  # a tangential term of 0.5
        "nan,0,0,0",  # not finite
    ],
)
def test_bad_distortion_text_is_refused_with_the_text_quoted(text: str) -> None:
    with pytest.raises(BadDistortionError, match="--distortion"):
        parse_distortion(text)
