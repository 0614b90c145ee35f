"""Reading the photo a command works on, and naming it in any error about it.

Every command refuses the same bad photos (folders, empty or truncated files,
non-images, too small, black-and-white) with the same words.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

from calibration import ImageTooSmallError, UnreadableImageError, load_image
from calibration.mat import MIN_IMAGE_SIDE_PX


class UnreadablePhotoError(ValueError):
    """The photo file is missing or is not an image."""


@contextlib.contextmanager
def naming_photo(path: Path) -> Iterator[None]:
    """Put the photo's name in front of any input error raised inside.

    Calibration and vision work on arrays and cannot name the file; a user
    with several photos needs to know which one had no mat.
    """
    try:
        yield
    except ValueError as exc:
        if str(path) in str(exc):
            raise
        message = f"photo {str(path)!r}: {exc}"
        try:
            renamed = type(exc)(message)
        except TypeError:
            renamed = ValueError(message)
        raise renamed from None


def load_photo(path: Path, *, need_colour: bool = True) -> npt.NDArray[np.uint8]:
    """Read a colour photo, with a clear error when that is impossible.

    Uses the shared loader so every command refuses the same bad files
    (folders, empty or truncated files, non-images) with the same words.
    With ``need_colour``, a black-and-white photo is refused: winks are told
    apart by colour, and without it every wink would silently go unseen.
    """
    try:
        image = load_image(path)
    except UnreadableImageError as exc:
        raise UnreadablePhotoError(str(exc)) from None
    height_px, width_px = image.shape[:2]
    # Checked here too (calibration checks arrays) so the message can name the file.
    if min(height_px, width_px) < MIN_IMAGE_SIDE_PX:
        raise ImageTooSmallError(
            f"photo {str(path)!r} is only {width_px}x{height_px} pixels; winkref needs at "
            f"least {MIN_IMAGE_SIDE_PX} pixels on each side: use the camera's full resolution"
        )
    if need_colour and _is_black_and_white(image):
        raise UnreadablePhotoError(
            f"photo {str(path)!r} has no colour in it (black-and-white, or all one grey); "
            "winkref tells the winks apart by colour: use a colour photo taken in good light"
        )
    return image


def _is_black_and_white(image_bgr: npt.NDArray[np.uint8]) -> bool:
    # A sparse grid is plenty: a colour photo has unequal channels almost everywhere.
    grid = image_bgr[::16, ::16].astype(np.int16)
    spread = np.max(grid, axis=2) - np.min(grid, axis=2)
    return bool(np.all(spread <= _GREY_CHANNEL_SPREAD))


# JPEG chroma rounding leaves grey pixels up to a few levels apart.
_GREY_CHANNEL_SPREAD = 3


#: A calibration from the photo uncertain by more than this (one sigma over the
#: mat, mm) is said so with the board: the referee's targets are 1 mm for an
#: overhead camera and 2 mm for an oblique one.
UNSURE_CALIBRATION_MM = 2.0


def calibration_notes(calibration: object, source: str = "this photo") -> tuple[str, ...]:
    """What the user should know about a calibration's uncertainty.

    A fit to faint mat edges (a pale felt on a pale table), or to a small or
    distant view, can be several mm out where its stated uncertainty is
    large; the board is still read, but statuses at the baselines and the
    mat's edge may then be wrong. ``source`` names where the calibration
    came from (the photo, or a calibration file).
    """
    sigma_mm = getattr(calibration, "mapping_sigma_mm", None)
    if sigma_mm is None or not np.isfinite(sigma_mm) or sigma_mm <= UNSURE_CALIBRATION_MM:
        return ()
    return (
        f"the calibration from {source} may be about {sigma_mm:.1f} mm out somewhere on the "
        "mat, or more (its one-sigma estimate; e.g. the mat's edges are faint against the "
        "table): winks near the baselines and the mat's edge may be misjudged; check them by "
        "eye, or make a calibration from the mat's corners given by hand (winkref calibrate "
        "PHOTO --corners ... -o calib.json) and pass it with --calibration calib.json",
    )
