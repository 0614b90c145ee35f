"""Bad input gets a clear ValueError naming what was not found, never a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from calibration import (
    BadCornersError,
    ImageShapeError,
    ImageTooSmallError,
    MatPartlyOutOfFrameError,
    NoMatFoundError,
    UnreadableImageError,
    calibrate,
    load_image,
)
from tests.calibration.synthetic import look_at_camera, render_mat

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"


def test_a_table_without_a_mat_says_no_mat_was_found() -> None:
    rng = np.random.default_rng(0)
    table = np.full((450, 800, 3), (90, 120, 160), np.uint8)
    # Clutter: a sheet of paper and a phone.
    table[50:150, 600:680] = (235, 235, 235)
    table[300:340, 100:180] = (30, 30, 30)
    noisy = np.clip(table + rng.normal(0, 3, table.shape), 0, 255).astype(np.uint8)
    with pytest.raises(NoMatFoundError, match="no mat found"):
        calibrate(noisy)


@pytest.mark.parametrize(
    ("size_wh", "says_coarse"),
    [
        ((640, 360), True),  # a low webcam setting: the resolution may be why
        ((1280, 720), False),  # 720p is enough to find a mat: not blamed
    ],
)
def test_no_mat_in_a_coarse_photo_also_names_its_resolution(
    size_wh: tuple[int, int], says_coarse: bool
) -> None:
    table = np.full((size_wh[1], size_wh[0], 3), (90, 120, 160), np.uint8)
    with pytest.raises(NoMatFoundError) as refused:
        calibrate(table)
    said = str(refused.value)
    assert ("too coarse" in said and f"{size_wh[0]}x{size_wh[1]}" in said) is says_coarse


def test_the_generated_no_mat_scene_says_no_mat_was_found() -> None:
    with pytest.raises(NoMatFoundError, match="no mat found"):
        calibrate(load_image(SAMPLES / "nomat_00101.jpg"))


def test_a_mat_running_out_of_the_frame_says_so() -> None:
    # Camera above the +x end, looking straight down: the -x end is out of the picture.
    truth = look_at_camera((800, 450), (600.0, 0.0, 1700.0), k1=0.0, target_mm=(600.0, 0.0, 0.0))
    with pytest.raises(MatPartlyOutOfFrameError, match="out of the picture"):
        calibrate(render_mat(truth))


def test_the_generated_partial_scene_says_the_mat_runs_out_of_the_frame() -> None:
    with pytest.raises(MatPartlyOutOfFrameError, match="out of the picture"):
        calibrate(load_image(SAMPLES / "partial_00101.jpg"))


def test_a_tiny_image_is_refused_with_its_size() -> None:
    with pytest.raises(ImageTooSmallError, match="100x80"):
        calibrate(np.zeros((80, 100, 3), np.uint8))


def test_a_corrupt_file_is_unreadable_and_quoted(tmp_path: Path) -> None:
    bad = tmp_path / "frame.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(UnreadableImageError, match="frame.jpg"):
        load_image(bad)


def test_a_missing_file_is_unreadable_and_quoted(tmp_path: Path) -> None:
    with pytest.raises(UnreadableImageError, match="no such file"):
        load_image(tmp_path / "nowhere.png")


def test_an_empty_file_name_is_unreadable_not_the_current_folder() -> None:
    with pytest.raises(UnreadableImageError, match="no file name was given"):
        load_image("")


@pytest.mark.parametrize(
    ("corners", "message"),
    [
        ([[10, 10], [20, 20], [30, 30]], "four"),  # three corners
        ([[-50, 10], [700, 10], [700, 400], [10, 400]], "outside"),  # one off the image
        ([[10, 10], [12, 10], [12, 12], [10, 12]], "almost nothing"),  # a speck
    ],
)
def test_bad_hand_given_corners_are_refused(corners, message) -> None:
    image = np.full((450, 800, 3), 128, np.uint8)
    with pytest.raises(BadCornersError, match=message):
        calibrate(image, corners_image_px=corners)


def test_all_calibration_errors_are_value_errors() -> None:
    for error in (
        BadCornersError,
        ImageTooSmallError,
        MatPartlyOutOfFrameError,
        NoMatFoundError,
        UnreadableImageError,
    ):
        assert issubclass(error, ValueError)


@pytest.mark.parametrize(
    "shape_hw",
    [
        (20000, 400),  # a tall strip: the mat search ran for minutes
        (200, 20000),  # a wide one: OpenCV failed resizing it to nothing
    ],
)
def test_an_image_longer_than_four_times_its_width_is_refused_at_once(
    shape_hw: tuple[int, int],
) -> None:
    with pytest.raises(ImageShapeError, match="panorama or a strip"):
        calibrate(np.full((*shape_hw, 3), 120, np.uint8))
