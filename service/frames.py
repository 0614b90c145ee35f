"""Where ``winkref watch`` gets its pictures: a camera, a video file, or a folder of photos.

Each source is an iterator of :class:`service.watch.Frame`, with the time
each picture was taken counted from the first:

* a camera: the clock, as frames arrive;
* a video: the video's own timestamps;
* a folder: one photo after each shot, taken in name order, ``interval_s``
  apart (photos carry no trustworthy clock: copies lose it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from calibration.api import check_image_shape
from service.commands.calibrate import CameraUnavailableError, open_camera
from service.photos import load_photo
from service.watch import Frame

#: What a folder of photos may hold (other files, such as notes, are skipped).
PHOTO_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"})
#: A camera that gives no picture for this long has stopped, s.
CAMERA_SILENCE_S = 5.0


class UnreadableSourceError(ValueError):
    """A video or folder ``winkref watch`` cannot take pictures from."""


def photos_in(folder: Path) -> list[Path]:
    """The photos in ``folder``, in name order.

    Raises
    ------
    UnreadableSourceError
        When the folder holds no photo.
    """
    photos = sorted(
        p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in PHOTO_SUFFIXES
    )
    if not photos:
        raise UnreadableSourceError(
            f"the folder {str(folder)!r} holds no photos (.jpg, .png, ...); give a folder of "
            "photos taken after each shot, a video file, or --camera N"
        )
    return photos


def folder_frames(folder: Path, *, interval_s: float) -> Iterator[Frame]:
    """The photos of ``folder`` as frames, ``interval_s`` apart.

    Raises
    ------
    UnreadableSourceError, service.photos errors
        A folder without photos; a photo that cannot be read (named).
    """
    for k, path in enumerate(photos_in(folder)):
        yield Frame(load_photo(path), k * interval_s, str(path))


def video_frames(path: Path) -> Iterator[Frame]:
    """The frames of a video file, with the video's own times.

    Raises
    ------
    UnreadableSourceError
        When the file is missing or is not a video OpenCV can read.
    """
    if not path.exists():
        raise UnreadableSourceError(f"video file {str(path)!r} does not exist; check the path")
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise UnreadableSourceError(
                f"{str(path)!r} cannot be read as a video; give an .mp4 or .avi file, a folder "
                "of photos, or --camera N"
            )
        fps = capture.get(cv2.CAP_PROP_FPS) or 0.0
        index = 0
        while True:
            ok, image = capture.read()
            if not ok:
                break
            if index == 0:
                check_image_shape(image.shape[1], image.shape[0])
            t_s = index / fps if fps > 0 else capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
            yield Frame(np.asarray(image, np.uint8), t_s, f"{path.name} frame {index}")
            index += 1
        if index == 0:
            raise UnreadableSourceError(
                f"{str(path)!r} opened as a video but holds no frame it can decode; "
                "check the file, or convert it to .mp4"
            )
    finally:
        capture.release()


def camera_frames(camera_index: int) -> Iterator[Frame]:
    """Frames from camera ``camera_index``, timed by the clock, until it stops.

    Raises
    ------
    CameraUnavailableError
        When the camera cannot be opened or gives no picture at first.
    """
    capture = open_camera(camera_index)
    try:
        start = time.monotonic()
        last_picture = start  # silence is counted from here until the first picture
        index = 0
        while True:
            ok, image = capture.read()
            now = time.monotonic()
            if not ok:
                if now - last_picture > CAMERA_SILENCE_S:
                    if index == 0:
                        raise CameraUnavailableError(
                            f"camera {camera_index} opened but gave no picture; "
                            "check that no other program is using it"
                        )
                    return  # unplugged or switched off: the caller says so
                time.sleep(0.05)
                continue
            last_picture = now
            yield Frame(np.asarray(image, np.uint8), now - start, f"camera frame {index}")
            index += 1
    finally:
        capture.release()
