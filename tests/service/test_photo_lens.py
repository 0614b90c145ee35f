"""The lens a phone photo's EXIF tells, as the review reads it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pillow_heif
import pytest
from PIL import Image

from service.photos import FILM_DIAGONAL_MM, NoLens, PhotoLens, hfov_from_focal_35mm, photo_lens

#: EXIF's Exif sub-IFD and its FocalLengthIn35mmFilm tag.
EXIF_IFD, FOCAL_35MM = 0x8769, 0xA405


def _exif(focal_35mm: object | None) -> Image.Exif:
    exif = Image.Exif()
    if focal_35mm is not None:
        exif.get_ifd(EXIF_IFD)[FOCAL_35MM] = focal_35mm
    return exif


def _jpeg(path: Path, focal_35mm: object | None) -> Path:
    Image.new("RGB", (640, 480), (120, 140, 90)).save(
        path, quality=90, exif=_exif(focal_35mm).tobytes()
    )
    return path


@pytest.mark.parametrize(
    ("focal_35mm", "width_px", "height_px", "hfov_deg"),
    [
        (26.0, 4032, 3024, 67.30),  # a phone's main lens, 4:3: 2 atan(43.27 * 0.8 / 2 / 26)
        (77.0, 4032, 3024, 25.33),  # a 3x telephoto
        (26.0, 3024, 4032, 53.06),  # the main lens held upright: the narrower side across
        (43.27, 3000, 2000, 2 * math.degrees(math.atan(18.0 / 43.27))),  # 3:2, a film frame
    ],
)
def test_field_of_view_follows_from_the_35mm_focal_length(
    focal_35mm, width_px, height_px, hfov_deg
):
    assert hfov_from_focal_35mm(focal_35mm, width_px, height_px) == pytest.approx(
        hfov_deg, abs=0.01
    )


def test_field_of_view_and_35mm_focal_length_round_trip():
    for hfov_deg in (20.0, 45.0, 68.0, 100.0):
        width_px, height_px = 4000, 3000
        focal_px = width_px / 2 / math.tan(math.radians(hfov_deg) / 2)
        focal_35mm = focal_px * FILM_DIAGONAL_MM / math.hypot(width_px, height_px)
        assert hfov_from_focal_35mm(focal_35mm, width_px, height_px) == pytest.approx(hfov_deg)


def test_a_jpeg_tells_its_lens(tmp_path: Path) -> None:
    lens = photo_lens(_jpeg(tmp_path / "IMG_0001.jpg", 26), 640, 480)
    assert isinstance(lens, PhotoLens)
    assert lens.focal_35mm == 26.0
    assert lens.hfov_deg == pytest.approx(67.30, abs=0.01)
    assert "26 mm in 35 mm terms" in lens.note


def test_an_heic_photo_tells_its_lens(tmp_path: Path) -> None:
    path = tmp_path / "IMG_0002.HEIC"
    heif = pillow_heif.from_pillow(Image.fromarray(np.full((480, 640, 3), 100, np.uint8)))
    heif.save(str(path), quality=90, exif=_exif(77).tobytes())
    lens = photo_lens(path, 640, 480)
    assert isinstance(lens, PhotoLens) and lens.focal_35mm == 77.0


@pytest.mark.parametrize(
    ("focal_35mm", "told"),
    [
        (None, "does not say which lens took it"),  # no such tag (stripped by an app, say)
        (0, "does not say which lens took it"),  # written as 0 by some apps: unknown
        (5000, "5000 mm in 35 mm terms, which no"),  # junk: no lens is that long; said so
        (1, "1 mm in 35 mm terms, which no"),  # junk: nor that short
    ],
)
def test_no_lens_is_told_without_a_plausible_focal_length(
    tmp_path: Path, focal_35mm, told: str
) -> None:
    lens = photo_lens(_jpeg(tmp_path / "IMG_0003.jpg", focal_35mm), 640, 480)
    assert isinstance(lens, NoLens)
    assert told in lens.note


def test_a_png_without_exif_and_a_file_that_is_no_image_tell_no_lens(tmp_path: Path) -> None:
    png = tmp_path / "screenshot.png"
    Image.new("RGB", (640, 480)).save(png)
    junk = tmp_path / "notes.jpg"
    junk.write_text("not a photo")
    assert isinstance(photo_lens(png, 640, 480), NoLens)
    assert isinstance(photo_lens(junk, 640, 480), NoLens)


def test_a_photo_cropped_since_it_was_taken_tells_no_lens(tmp_path: Path) -> None:
    # The EXIF says 640x480 was taken; the file is a 320x240 crop of it: a narrower view.
    exif = _exif(26)
    exif.get_ifd(EXIF_IFD)[0xA002] = 640  # PixelXDimension
    exif.get_ifd(EXIF_IFD)[0xA003] = 480  # PixelYDimension
    cropped = tmp_path / "IMG_0004.jpg"
    Image.new("RGB", (320, 240), (120, 140, 90)).save(cropped, exif=exif.tobytes())
    lens = photo_lens(cropped, 320, 240)
    assert isinstance(lens, NoLens)
    assert "cropped or resized since" in lens.note
    # As taken (the same size, or turned upright), the lens is told.
    whole = tmp_path / "IMG_0005.jpg"
    Image.new("RGB", (640, 480)).save(whole, exif=exif.tobytes())
    assert isinstance(photo_lens(whole, 640, 480), PhotoLens)
    assert isinstance(photo_lens(whole, 480, 640), PhotoLens)


def test_a_photo_past_pillows_decompression_bomb_limit_still_tells_its_lens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 200 MP phone's photo is past Pillow's limit (179 MP), which raised out
    # of the EXIF reading as an internal error; here the limit is lowered to
    # below this small photo instead. Only the header is read, so the limit
    # does not apply, and it is left as it was.
    photo = _jpeg(tmp_path / "big.jpg", 26)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    lens = photo_lens(photo, 640, 480)
    assert isinstance(lens, PhotoLens)
    assert lens.focal_35mm == 26
    assert Image.MAX_IMAGE_PIXELS == 1000
