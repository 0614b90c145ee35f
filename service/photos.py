"""Reading the photo a command works on, and naming it in any error about it.

Every command refuses the same bad photos (folders, empty or truncated files,
non-images, too small, black-and-white) with the same words.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from calibration import ImageTooSmallError, UnreadableImageError, load_image
from calibration.api import check_image_shape
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
        raise reworded(exc, f"photo {str(path)!r}: {exc}") from None


def reworded(exc: ValueError, message: str) -> ValueError:
    """An error of ``exc``'s class saying ``message`` (a plain ValueError if that class cannot).

    The class is kept so that the command line still knows the cause (and
    adds its own hint for a photo with no mat).
    """
    try:
        return type(exc)(message)
    except TypeError:
        return ValueError(message)


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
    with naming_photo(path):
        check_image_shape(width_px, height_px)
    if need_colour and _is_black_and_white(image):
        raise UnreadablePhotoError(
            f"photo {str(path)!r} has no colour in it (black-and-white, or all one grey); "
            "winkref tells the winks apart by colour: use a colour photo taken in good light"
        )
    if need_colour and _saved_with_palette(path):
        raise UnreadablePhotoError(
            f"photo {str(path)!r} was saved with a palette of at most 256 colours (a GIF, or "
            "a palette PNG): the winks' colours and edges are lost in so few, and the referee "
            "would misjudge them; use the camera's own JPEG, PNG or HEIC"
        )
    return image


def _saved_with_palette(path: Path) -> bool:
    """Whether the file is a GIF or a PNG of colour type 3 (indexed colour).

    Told from the file, not from the picture: a dim webcam frame can have
    only a few hundred colours too, and is a photo all the same.
    """
    try:
        with path.open("rb") as file:
            head = file.read(26)
    except OSError:
        return False
    if head[:4] == b"GIF8":
        return True
    # PNG: the signature, then the IHDR chunk, whose colour type is byte 25.
    return head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and head[25:26] == b"\x03"


def _is_black_and_white(image_bgr: npt.NDArray[np.uint8]) -> bool:
    # A sparse grid is plenty: a colour photo has unequal channels almost everywhere.
    grid = image_bgr[::16, ::16].astype(np.int16)
    spread = np.max(grid, axis=2) - np.min(grid, axis=2)
    return bool(np.all(spread <= _GREY_CHANNEL_SPREAD))


# JPEG chroma rounding leaves grey pixels up to a few levels apart.
_GREY_CHANNEL_SPREAD = 3


#: A 35 mm film frame's diagonal (36 x 24 mm), along which EXIF matches a
#: photo's lens to a 35 mm camera's (its 35 mm-equivalent focal length).
FILM_DIAGONAL_MM = math.hypot(36.0, 24.0)
#: EXIF tags: the Exif sub-IFD, the 35 mm-equivalent focal length in it, and
#: the size the camera wrote the picture at.
_EXIF_IFD = 0x8769
_FOCAL_LENGTH_IN_35MM_FILM = 0xA405
_PIXEL_X_DIMENSION, _PIXEL_Y_DIMENSION = 0xA002, 0xA003
#: 35 mm-equivalent focal lengths a phone or camera can have (mm): outside, the
#: tag is taken as wrong (some apps write 0 or junk).
_PLAUSIBLE_FOCAL_35MM = (8.0, 1200.0)


@dataclass(frozen=True)
class PhotoLens:
    """The lens a photo's EXIF tells.

    Parameters
    ----------
    focal_35mm : float
        The 35 mm-equivalent focal length, mm.
    hfov_deg : float
        The field of view across the photo's width (as shown upright), degrees.
    """

    focal_35mm: float
    hfov_deg: float

    @property
    def note(self) -> str:
        """What the verdict says of it."""
        return (
            f"the lens from the photo's EXIF: {self.focal_35mm:g} mm in 35 mm terms, "
            f"{self.hfov_deg:.0f} degrees across the photo"
        )


@dataclass(frozen=True)
class NoLens:
    """Why a photo's lens is not known from it.

    Parameters
    ----------
    reason : str
    """

    reason: str

    @property
    def note(self) -> str:
        """What the verdict says of it."""
        return (
            f"{self.reason}, so a phone's main lens is assumed; for a photo taken zoomed in, "
            "give the original file from the phone"
        )


#: The reason given when the EXIF holds no focal length.
NO_FOCAL_LENGTH = (
    "the photo does not say which lens took it (no EXIF focal length: apps that send "
    "photos often remove it)"
)


def hfov_from_focal_35mm(focal_35mm: float, width_px: int, height_px: int) -> float:
    """The field of view across a photo's width from its 35 mm-equivalent focal length.

    Parameters
    ----------
    focal_35mm : float
        mm, matched along the diagonal as the EXIF standard does.
    width_px, height_px : int
        The photo's size as shown (upright).

    Returns
    -------
    float
        Degrees.
    """
    half_width_mm = FILM_DIAGONAL_MM / 2 * width_px / math.hypot(width_px, height_px)
    return math.degrees(2 * math.atan(half_width_mm / focal_35mm))


def photo_lens(path: Path, width_px: int, height_px: int) -> PhotoLens | NoLens:
    """The lens a photo's EXIF tells, or why it tells none.

    ``width_px`` and ``height_px`` are the photo's size as read (upright).
    EXIF is a help, never a requirement: a file whose EXIF cannot be read, or
    holds no plausible focal length, tells none. Nor does a photo cropped or
    resized since it was taken (its size differs from the one its EXIF
    gives): a crop narrows the view and keeps the focal length.
    """
    focal, taken_wh = _exif_lens(path)
    # (0 is how some apps write "unknown".)
    if focal is None or focal == 0:
        return NoLens(NO_FOCAL_LENGTH)
    if not _PLAUSIBLE_FOCAL_35MM[0] <= focal <= _PLAUSIBLE_FOCAL_35MM[1]:
        return NoLens(
            f"the photo's EXIF gives a focal length of {focal:g} mm in 35 mm terms, which no "
            "phone or camera lens has, so it is not used"
        )
    if taken_wh is not None and sorted(taken_wh) != sorted((width_px, height_px)):
        return NoLens(
            f"the photo is {width_px}x{height_px} px but its EXIF says it was taken at "
            f"{taken_wh[0]}x{taken_wh[1]} (cropped or resized since), so its lens is not used"
        )
    return PhotoLens(focal, hfov_from_focal_35mm(focal, width_px, height_px))


def _exif_lens(path: Path) -> tuple[float | None, tuple[int, int] | None]:
    """The EXIF 35 mm-equivalent focal length, and the size the picture was written at."""
    tags = _exif_tags(path)
    focal = _number(tags.get(_FOCAL_LENGTH_IN_35MM_FILM))
    x, y = _number(tags.get(_PIXEL_X_DIMENSION)), _number(tags.get(_PIXEL_Y_DIMENSION))
    taken = (int(x), int(y)) if x and y else None
    return focal, taken


def _number(value: object) -> float | None:
    try:
        return float(value) if value is not None else None  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _exif_tags(path: Path) -> dict[int, object]:
    from PIL import Image, UnidentifiedImageError

    try:
        import pillow_heif

        pillow_heif.register_heif_opener()
    except ImportError:
        pass  # HEIC photos then carry no lens for us; JPEG still does
    # Only the header is read, never the pixels: Pillow's guard against
    # decompression bombs (a warning past 89 MP, an error past 179 MP, which
    # a 200 MP phone's photo is) does not apply.
    guard = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        with Image.open(path) as photo:
            return dict(photo.getexif().get_ifd(_EXIF_IFD))
    except (OSError, ValueError, SyntaxError, UnidentifiedImageError):
        return {}
    finally:
        Image.MAX_IMAGE_PIXELS = guard


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
