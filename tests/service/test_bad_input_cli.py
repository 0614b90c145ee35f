"""Hostile and unusual input to every `winkref` subcommand.

Each case must end in one line saying what is wrong with which input and what
to do, exit status 2, no traceback, and no file the user had lost or changed.
Images are tiny and made here, so every case fails (correctly) in well under
a second.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from service.cli import app
from service.outputs import UnwritableOutputError, write_text_atomic

runner = CliRunner()


def _png(path: Path, height_px: int, width_px: int) -> Path:
    cv2.imwrite(str(path), np.full((height_px, width_px, 3), 90, np.uint8))
    return path


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _truncated_jpeg(path: Path) -> Path:
    noise = np.random.default_rng(0).integers(0, 256, (300, 300, 3), dtype=np.uint8)
    ok, data = cv2.imencode(".jpg", noise)
    assert ok
    path.write_bytes(data.tobytes()[: data.size // 2])
    return path


# Each maker builds one bad photo in the test's folder and returns its path.
BAD_PHOTOS: dict[str, Callable[[Path], Path]] = {
    "missing": lambda d: d / "absent.jpg",
    "device": lambda d: Path(os.devnull),
    "folder": lambda d: d,
    "empty": lambda d: _file(d / "empty.jpg", b""),
    "text": lambda d: _file(d / "notes.jpg", b"not a photo\n"),
    "binary": lambda d: _file(d / "blob.jpg", bytes(range(256)) * 20),
    "truncated": lambda d: _truncated_jpeg(d / "cut.jpg"),
    "one-pixel": lambda d: _png(d / "dot.png", 1, 1),
    "tiny": lambda d: _png(d / "tiny.png", 20, 20),
    "palette": lambda d: _palette_png(d / "palette.png"),
    "strip": lambda d: _png(d / "strip.png", 20000, 400),
    "wide-strip": lambda d: _png(d / "wide.png", 200, 20000),
}


def _palette_png(path: Path) -> Path:
    # A photo saved with a palette of 256 colours (as an image editor or a
    # chat app might): the picture is the file's own, its colours too few.
    from PIL import Image

    noise = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    Image.fromarray(noise).quantize(256).save(path)
    return path


@pytest.mark.parametrize(
    ("command", "photo", "expected"),
    [
        ("analyze", "missing", "does not exist"),  # typo in the path
        ("calibrate", "missing", "does not exist"),  # same words in every command
        ("count", "missing", "does not exist"),  # same words in every command
        ("review", "missing", "does not exist"),  # same words in every command
        ("analyze", "folder", "it is a folder"),  # a folder, not "no such file"
        ("calibrate", "folder", "it is a folder"),  # a folder, not "no such file"
        ("count", "empty", "the file is empty"),  # zero-byte copy
        ("review", "empty", "the file is empty"),  # zero-byte copy
        ("analyze", "text", "not a readable image"),  # text file named .jpg
        ("count", "binary", "not a readable image"),  # random bytes named .jpg
        ("analyze", "truncated", "truncated"),  # cut-off download, not "no mat"
        ("calibrate", "truncated", "truncated"),  # cut-off download
        ("review", "truncated", "truncated"),  # cut-off download, not a bogus verdict
        ("count", "one-pixel", "1x1 pixels"),  # 1x1 PNG
        ("analyze", "tiny", "20x20 pixels"),  # thumbnail
        ("count", "device", "not a regular file"),  # /dev/null was "does not exist"
        ("count", "palette", "saved with a palette"),  # a 256-colour PNG: counts went wrong
        ("review", "palette", "saved with a palette"),  # same
        ("analyze", "strip", "panorama or a strip"),  # 400x20000: the mat search hung
        ("calibrate", "strip", "panorama or a strip"),  # same
        ("count", "wide-strip", "panorama or a strip"),  # 20000x200: was an OpenCV error
    ],
)
def test_a_bad_photo_is_one_line_naming_it_and_exit_2(
    tmp_path: Path, command: str, photo: str, expected: str
) -> None:
    path = BAD_PHOTOS[photo](tmp_path)
    args = [command, str(path)]
    if command == "calibrate":
        args += ["-o", str(tmp_path / "out" / "calib.json")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expected in result.output
    assert repr(str(path)) in result.output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # an extension OpenCV has no writer for (was a cv2.error traceback)
        (["analyze", "{photo}", "--annotate", "{dir}/out.xyz"], "'.xyz'"),
        (["count", "{photo}", "--annotate", "{dir}/out.xyz"], "'.xyz'"),  # same
        (["review", "{photo}", "--annotate", "{dir}/out.xyz"], "'.xyz'"),  # same
        (["calibrate", "{photo}", "-o", "{dir}/c.json", "--annotate", "{dir}/x.xyz"], "'.xyz'"),
        # no extension at all
        (["analyze", "{photo}", "--annotate", "{dir}/out"], "(no extension)"),
        # a folder that does not exist: said before any slow work
        (["analyze", "{photo}", "--annotate", "{dir}/nowhere/out.png"], "does not exist"),
        (["review", "{photo}", "--annotate", "{dir}/nowhere/out.png"], "does not exist"),  # same
        # the output is a folder (was "[Errno 21] Is a directory")
        (["calibrate", "{photo}", "-o", "{dir}"], "is a folder"),
        (["count", "{photo}", "--annotate", "{dir}"], "is a folder"),  # same for pictures
        # writing over the photo being analysed would destroy it
        (["analyze", "{photo}", "--annotate", "{photo}"], "would overwrite"),
        (["count", "{photo}", "--annotate", "{photo}"], "would overwrite"),  # same
        (["review", "{photo}", "--annotate", "{photo}"], "would overwrite"),  # same
        (["calibrate", "{photo}", "-o", "{photo}"], "would overwrite"),  # JSON over it
        (["calibrate", "{photo}", "--annotate", "{photo}"], "would overwrite"),  # same
        # the calibration file (JSON) given a picture's name
        (["calibrate", "{photo}", "-o", "{dir}/c.png"], "give it a .json name"),
        # the picture over the calibration file just being written
        (["calibrate", "{photo}", "-o", "{dir}/c.json", "--annotate", "{dir}/c.json"], "overwrite"),
    ],
)
def test_an_unusable_output_path_is_refused_and_nothing_is_lost(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    photo = _png(tmp_path / "mat.png", 300, 400)
    before = photo.read_bytes()
    filled = [a.format(photo=photo, dir=tmp_path) for a in args]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expected in result.output
    assert photo.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mat.png"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", ["analyze", "count"])
def test_a_folder_that_takes_no_files_is_refused_before_the_analysis(
    tmp_path: Path, command: str
) -> None:
    # /proc takes no new files, whatever its permission bits say (and root
    # passes every permission check): the analysis ran, then was lost.
    photo = Path(__file__).resolve().parents[2] / "sample_images" / "overhead_00101.jpg"
    result = runner.invoke(app, [command, str(photo), "--annotate", "/proc/winkref-out.png"])
    assert result.exit_code == 2, result.output
    assert "cannot write in the folder '/proc'" in result.output
    assert "tiddlies" not in result.output


def test_a_failed_calibrate_keeps_the_existing_calibration_file(tmp_path: Path) -> None:
    photo = _png(tmp_path / "mat.png", 300, 400)
    existing = tmp_path / "calib.json"
    existing.write_text('{"kept": true}\n')
    result = runner.invoke(
        app, ["calibrate", str(photo), "-o", str(existing), "--annotate", str(tmp_path / "x.bad")]
    )
    assert result.exit_code == 2
    assert existing.read_text() == '{"kept": true}\n'


def test_calibrate_will_not_write_over_a_file_that_is_not_a_calibration(tmp_path: Path) -> None:
    photo = _png(tmp_path / "mat.png", 300, 400)
    notes = _file(tmp_path / "notes.json", b'{"my": "notes"}\n')
    result = runner.invoke(app, ["calibrate", str(photo), "-o", str(notes)])
    assert result.exit_code == 2, result.output
    assert "not a winkref calibration file" in result.output
    assert notes.read_bytes() == b'{"my": "notes"}\n'


def test_the_default_picture_is_not_a_png_that_was_there_before_the_calibration(
    tmp_path: Path,
) -> None:
    from service.commands.calibrate import default_picture_path

    output = tmp_path / "calib.json"
    # calib.png with no calib.json beside it is someone's picture, not ours ...
    (tmp_path / "calib.png").write_bytes(b"a photo")
    assert default_picture_path(output, []) == tmp_path / "calib.calibration.png"
    # ... and stays so on the next run, when calib.json is there too.
    output.write_text("{}")
    (tmp_path / "calib.calibration.png").write_bytes(b"our picture")
    assert default_picture_path(output, []) == tmp_path / "calib.calibration.png"
    # Beside an earlier calib.json, with no other picture, calib.png is its picture.
    (tmp_path / "calib.calibration.png").unlink()
    assert default_picture_path(output, []) == tmp_path / "calib.png"


def test_calibrate_keeps_the_old_file_when_its_picture_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import service.commands.calibrate as calibrate_cmd
    from tools.groundtruth import load_scene

    sample = Path(__file__).resolve().parents[2] / "sample_images" / "overhead_00101.jpg"
    old = {"format": "winkref-calibration/1", "camera": "another camera's"}
    existing = tmp_path / "calib.json"
    existing.write_text(json.dumps(old))
    assert load_scene(sample.with_suffix(".json"))  # a photo the mat is found in

    def refuse(path: Path, *args: object, **kwargs: object) -> None:
        raise UnwritableOutputError(f"--annotate {str(path)!r}: cannot write (disk full)")

    monkeypatch.setattr(calibrate_cmd, "write_image_atomic", refuse)
    with pytest.raises(UnwritableOutputError):
        calibrate_cmd.run(sample, output=existing)
    assert json.loads(existing.read_text()) == old


def test_the_default_picture_never_overwrites_the_photo(tmp_path: Path) -> None:
    # calib.json's picture would be calib.png, which is the photo itself here.
    from service.commands.calibrate import default_picture_path

    photo = tmp_path / "calib.png"
    picture = default_picture_path(tmp_path / "calib.json", [photo])
    assert picture == tmp_path / "calib.calibration.png"
    assert default_picture_path(tmp_path / "calib.json", []) == tmp_path / "calib.png"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "calib.json"
    target.write_text("old\n")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(UnwritableOutputError, match="calib.json.*No space left"):
        write_text_atomic(target, "new\n", option="-o")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["calib.json"]


def test_a_written_file_gets_the_usual_permissions_not_private_ones(tmp_path: Path) -> None:
    # On a shared desk machine the calibration and pictures must stay readable by others.
    old_umask = os.umask(0o022)
    try:
        fresh = tmp_path / "calib.json"
        write_text_atomic(fresh, "{}\n", option="-o")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.json"
        kept.write_text("old\n")
        kept.chmod(0o640)
        write_text_atomic(kept, "new\n", option="-o")  # overwriting keeps the file's mode
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(old_umask)


def _colour_png(path: Path) -> Path:
    # Felt-green with a red patch: colour, but no mat and no winks.
    image = np.full((300, 400, 3), (40, 120, 40), np.uint8)
    image[100:150, 100:150] = (30, 30, 200)
    cv2.imwrite(str(path), image)
    return path


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # one corner clicked twice (was OpenCV's bare "solvePnP failed")
        (["calibrate", "{photo}", "--corners", "10,10,10,10,300,200,10,200"], "the same point"),
        # not-a-number coordinates (was "lie outside the image")
        (["calibrate", "{photo}", "--corners", "nan,1,2,3,4,5,6,7"], "finite number"),
        # a negative camera number (was a SIGSEGV inside OpenCV)
        (["calibrate", "--camera", "-1"], "camera numbers start at 0"),
        # past a C int (was OpenCV's "integer won't fit" as an internal error)
        (["calibrate", "--camera", "2147483648"], "no camera with so large a number"),
        # the same wink twice, refused before any image work
        (["review", "{photo}", "--pair", "W1,W1"], "names one wink twice"),
        # a pixel off the photo (was "nearest pair 137982 px away")
        (["review", "{photo}", "--near", "99999,5"], "outside the 400x300 photo"),
        (["review", "{photo}", "--near", "-5,-5"], "outside the 400x300 photo"),  # negative
        # the photo as its own second view would halve the stated error
        (["review", "{photo}", "--second", "{photo}"], "same file as the photo"),
        (["review", "{photo}", "--second", "{copy}"], "same file as the photo"),  # a byte copy
        # a black-and-white photo (was "no winks found ... check the light")
        (["analyze", "{grey}"], "has no colour in it"),
        (["count", "{grey}"], "has no colour in it"),  # same
        (["review", "{grey}"], "has no colour in it"),  # same
        # errors from calibration or vision now say which photo
        (["count", "{photo}"], "photo '{photo}': no mat found"),
        (["analyze", "{photo}"], "photo '{photo}': no mat found"),  # same
        (["review", "{photo}"], "photo '{photo}': no "),  # same (which complaint is vision's)
    ],
)
def test_a_bad_option_or_unusable_photo_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    photo = _colour_png(tmp_path / "mat.png")
    copy = _file(tmp_path / "copy.png", photo.read_bytes())
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), np.full((300, 400), 120, np.uint8))
    names = {"photo": photo, "copy": copy, "grey": grey}
    filled = [a.format(**names) for a in args]
    if args[0] == "calibrate":
        filled += ["-o", str(tmp_path / "c.json")]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expected.format(**names) in result.output
    assert not (tmp_path / "c.json").exists()


# A valid camera block: 1920x1080, 2 m straight above the mat.
CAMERA_1920 = {
    "width": 1920,
    "height": 1080,
    "K": [[1500, 0, 960], [0, 1500, 540], [0, 0, 1]],
    "dist": [0, 0, 0, 0, 0],
    "R": [[1, 0, 0], [0, -1, 0], [0, 0, -1]],
    "t": [0, 0, 2000],
}

# Each maker writes one malformed JSON file and returns its path.
BAD_JSON: dict[str, Callable[[Path], Path]] = {
    "missing": lambda d: d / "absent.json",
    "folder": lambda d: d,
    "not-json": lambda d: _file(d / "bad.json", b"{not json"),
    "binary": lambda d: _file(d / "blob.json", b"\xff\xfe\x00 garbage"),
    "list": lambda d: _file(d / "list.json", b"[1, 2, 3]"),
    "empty-object": lambda d: _file(d / "empty.json", b"{}"),
    "deep": lambda d: _file(d / "deep.json", b"[" * 100_000 + b"]" * 100_000),
    "camera-not-object": lambda d: _file(d / "cam.json", b'{"camera": 5}'),
    "corners-wrong-type": lambda d: _file(
        d / "corners.json", json.dumps({"camera": CAMERA_1920, "corners_mm": {"blue": 5}}).encode()
    ),
}


@pytest.mark.parametrize(
    ("json_file", "expected"),
    [
        ("missing", "does not exist; check the path"),  # typo in the path
        ("folder", "is a folder"),  # was "[Errno 21] Is a directory"
        ("not-json", "is not valid JSON"),  # now with where the format is described
        ("binary", "is not a text file (byte 0xff at position 0"),  # was a bare codec error
        ("list", "expected a JSON object, got list"),  # a JSON list
        ("empty-object", "squidge_off_winner: Field required"),  # {}: every field missing...
        ("empty-object", "shots: missing"),  # ...with shots, without which it would replay
        ("deep", "nested too deeply"),  # was a RecursionError traceback
    ],
)
def test_replay_of_a_malformed_record_is_one_line_and_exit_2(
    tmp_path: Path, json_file: str, expected: str
) -> None:
    path = BAD_JSON[json_file](tmp_path)
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expected in result.output
    assert str(path) in result.output
    if json_file not in ("missing", "folder"):
        assert "docs/board-contract.md" in result.output  # what to do: the format


@pytest.mark.parametrize(
    ("json_file", "expected"),
    [
        ("missing", "does not exist"),  # typo in the path
        ("folder", "is a folder"),  # was "[Errno 21] Is a directory", no file named
        ("not-json", "is not JSON"),  # invalid JSON
        ("binary", "is not a text file (byte 0xff"),  # was a bare codec error, no file named
        ("list", "holds no JSON object"),  # a JSON list
        ("empty-object", "camera block is missing"),  # {}
        ("deep", "nested too deeply"),  # was a RecursionError traceback
        ("camera-not-object", "'camera' is not an object"),  # wrong type
        ("corners-wrong-type", "not a usable calibration file"),  # was possible TypeError
    ],
)
def test_analyze_with_a_malformed_calibration_is_one_line_and_exit_2(
    tmp_path: Path, json_file: str, expected: str
) -> None:
    photo = _colour_png(tmp_path / "mat.png")
    cal_dir = tmp_path / "cal"
    cal_dir.mkdir()
    path = BAD_JSON[json_file](cal_dir)
    result = runner.invoke(app, ["analyze", str(photo), "--calibration", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expected in result.output
    assert repr(str(path)) in result.output
    if json_file != "folder":
        assert "winkref calibrate" in result.output  # what to do: make a good one


def test_analyze_with_a_calibration_for_another_image_size_says_so(tmp_path: Path) -> None:
    cal = _file(tmp_path / "cal.json", json.dumps({"camera": CAMERA_1920}).encode())
    photo = _colour_png(tmp_path / "mat.png")
    result = runner.invoke(app, ["analyze", str(photo), "--calibration", str(cal)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "400x300" in result.output and "1920x1080" in result.output
    assert "cal.json" in result.output  # the file it was made for is named


SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"


@pytest.mark.skipif(not (SAMPLES / "overhead_00105.json").exists(), reason="no sample images")
@pytest.mark.parametrize("command", ["analyze", "count"])  # both take --calibration
def test_a_calibration_of_another_camera_position_is_refused(tmp_path: Path, command: str) -> None:
    # overhead_00105's true camera, same image size, given for overhead_00104's photo:
    # as if the camera had been knocked after calibrating. It would count a wrong score.
    other = SAMPLES / "overhead_00105.json"
    photo = SAMPLES / "overhead_00104.jpg"
    result = runner.invoke(app, [command, str(photo), "--calibration", str(other)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "does not show the mat where the calibration puts it" in result.output
    assert "winkref calibrate" in result.output


def test_a_calibration_file_of_an_unknown_format_version_is_refused(tmp_path: Path) -> None:
    data = {"format": "winkref-calibration/99", "camera": CAMERA_1920}
    cal = _file(tmp_path / "cal.json", json.dumps(data).encode())
    photo = _colour_png(tmp_path / "mat.png")
    result = runner.invoke(app, ["analyze", str(photo), "--calibration", str(cal)])
    assert result.exit_code == 2, result.output
    assert "'winkref-calibration/99'" in result.output
    assert "does not know" in result.output


@pytest.mark.parametrize(
    ("raised", "exit_code", "expected"),
    [
        (MemoryError(), 2, "not enough memory"),  # a photo too big for this machine: input
        (RuntimeError("boom"), 1, "internal error (RuntimeError: boom)"),  # a bug, said so
        (KeyError("x"), 1, "this is a bug in winkref"),  # any other escaped exception
    ],
)
def test_an_unexpected_exception_is_one_line_not_a_traceback(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
    exit_code: int,
    expected: str,
) -> None:
    from service.commands import replay

    def explode(*args: object, **kwargs: object) -> str:
        raise raised

    monkeypatch.setattr(replay, "run", explode)
    monkeypatch.delenv("WINKREF_DEBUG", raising=False)
    result = runner.invoke(app, ["replay", str(tmp_path / "r.json")])
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    assert expected in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["winkref", "analyze", ""], "after 'analyze'"),  # was read as the folder '.'
        (["winkref", "review", "p.jpg", "--near", " "], "after '--near'"),  # blank value
    ],
)
def test_an_empty_argument_is_refused_not_read_as_the_current_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    from service import cli

    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "an empty argument" in err and named in err
    assert "folder" not in err


def test_the_version_is_printed_and_nothing_else_is_run() -> None:
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"winkref {version('winkref')}"
