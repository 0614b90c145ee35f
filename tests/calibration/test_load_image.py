"""`load_image` reads what phones write: HEIC photos, turned upright, beside JPEG and PNG."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pillow_heif
import pytest
from PIL import Image

from calibration import UnreadableImageError, load_image
from calibration.api import _is_heif

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"

#: EXIF orientation 6: the phone was held upright; the picture is stored on its
#: side and shown turned 90 degrees clockwise.
_ORIENTATION_TURNED_CLOCKWISE = 6


def _save_heic(path: Path, image_rgb: np.ndarray, *, orientation: int | None = None) -> Path:
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    heif = pillow_heif.from_pillow(Image.fromarray(image_rgb))
    heif.save(str(path), quality=95, exif=exif.tobytes())
    return path


def test_an_heic_photo_reads_as_the_same_pixels_as_its_jpeg(tmp_path: Path) -> None:
    jpeg_bgr = load_image(SAMPLES / "closeup_00101.jpg")[1000:1600, 1500:2300]
    path = _save_heic(tmp_path / "IMG_0001.HEIC", np.ascontiguousarray(jpeg_bgr[:, :, ::-1]))
    heic_bgr = load_image(path)
    assert heic_bgr.shape == jpeg_bgr.shape
    assert heic_bgr.dtype == np.uint8
    # HEVC at quality 95 is lossy, by a level or two on average.
    assert np.abs(heic_bgr.astype(int) - jpeg_bgr.astype(int)).mean() < 3.0


def test_an_heic_photo_is_turned_upright_as_the_phone_shows_it(tmp_path: Path) -> None:
    stored_rgb = np.zeros((300, 400, 3), np.uint8)
    stored_rgb[:, :200] = (255, 0, 0)  # the stored picture's left half is red
    stored_rgb[100:200, 300:] = (0, 200, 0)  # and a green block at its right edge
    path = _save_heic(
        tmp_path / "turned.heic", stored_rgb, orientation=_ORIENTATION_TURNED_CLOCKWISE
    )
    shown_bgr = load_image(path)
    # Turned clockwise, the left half becomes the top half, and the green block
    # (stored rows 100-199, columns 300-399) lands at rows 300-399, columns 100-199.
    assert shown_bgr.shape == (400, 300, 3)
    assert tuple(int(v) for v in shown_bgr[50, 150]) == pytest.approx((0, 0, 255), abs=8)
    assert tuple(int(v) for v in shown_bgr[350, 150]) == pytest.approx((0, 200, 0), abs=8)
    assert tuple(int(v) for v in shown_bgr[250, 150]) == pytest.approx((0, 0, 0), abs=8)


def test_a_damaged_heic_photo_is_refused_with_its_name_and_what_to_do(tmp_path: Path) -> None:
    whole = _save_heic(tmp_path / "whole.heic", np.full((200, 200, 3), 120, np.uint8))
    cut = tmp_path / "cut.heic"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(UnreadableImageError, match=r"'.*cut\.heic'.*HEIC.*export it as JPEG"):
        load_image(cut)


def _ftyp(major: bytes, *compatible: bytes) -> np.ndarray:
    brands = major + b"\0\0\0\0" + b"".join(compatible)
    box = (8 + len(brands)).to_bytes(4, "big") + b"ftyp" + brands
    return np.frombuffer(box + b"\0" * 32, dtype=np.uint8)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (_ftyp(b"heic", b"mif1", b"heic"), True),  # an iPhone's photo
        (_ftyp(b"mif1", b"heic"), True),  # HEVC named only among the compatible brands
        (_ftyp(b"heix", b"mif1"), True),  # 10-bit HEVC (some Android phones)
        (_ftyp(b"avif", b"mif1", b"miaf"), False),  # AVIF: left to OpenCV's own decoders
        (_ftyp(b"isom", b"mp41"), False),  # a video, not a still photo
        (np.frombuffer(b"\xff\xd8\xff\xe0" + b"\0" * 60, dtype=np.uint8), False),  # a JPEG
        (np.frombuffer(b"ftyp", dtype=np.uint8), False),  # too short to hold a brand
    ],
)
def test_heif_files_are_told_by_their_ftyp_brands(header: np.ndarray, expected: bool) -> None:
    assert _is_heif(header) is expected


def test_jpeg_and_png_still_read_through_opencv(tmp_path: Path) -> None:
    jpeg_bgr = load_image(SAMPLES / "overhead_00101.jpg")
    png = tmp_path / "frame.png"
    cv2.imwrite(str(png), jpeg_bgr)
    assert np.array_equal(load_image(png), jpeg_bgr)


def test_without_pillow_heif_an_heic_photo_gets_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _save_heic(tmp_path / "IMG_0002.HEIC", np.full((64, 64, 3), 100, np.uint8))
    # As on an install where the package is missing: its import fails.
    monkeypatch.setitem(sys.modules, "pillow_heif", None)
    with pytest.raises(UnreadableImageError, match=r"IMG_0002\.HEIC.*pillow-heif.*JPEG"):
        load_image(path)


def test_an_heic_with_an_alpha_channel_reads_as_its_colour(tmp_path: Path) -> None:
    # Edited or screenshotted photos may carry transparency: the colour is what counts.
    rgba = np.zeros((120, 160, 4), np.uint8)
    rgba[..., :3] = (200, 40, 30)  # red, in RGB
    rgba[..., 3] = 255
    bgr = load_image(_save_heic(tmp_path / "edited.heic", rgba))
    assert bgr.shape == (120, 160, 3)
    assert tuple(int(v) for v in bgr[60, 80]) == pytest.approx((30, 40, 200), abs=8)
