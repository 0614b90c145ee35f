"""``winkref calibrate``: find the mat, write the calibration file and a picture of it.

Usage::

    winkref calibrate IMAGE [-o calib.json] [--corners x1,y1,...,x4,y4] [--annotate OUT.png]
                      [--distortion k1,k2,p1,p2[,k3]]
    winkref calibrate --camera N [-o calib.json]

The calibration file (default ``calib.json``) is what ``winkref analyze
--calibration`` and the other commands reuse. The annotated picture goes next
to it (``calib.png``) unless ``--annotate`` says where.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from calibration import Calibration, calibrate
from calibration.annotate import draw_calibration
from calibration.check import MAX_RADIAL_COEFFICIENT, MAX_TANGENTIAL_COEFFICIENT
from calibration.result import CALIBRATION_FORMAT, BadCornersError
from service.outputs import check_output_path, write_image_atomic, write_text_atomic
from service.photos import load_photo, naming_photo, reworded
from vision.pipeline import COARSE_VIEW_ADVICE, COARSE_VIEW_MM_PER_PX, coarsest_mm_per_px


class OutputNotCalibrationError(ValueError):
    """``-o`` names an existing file that is not a calibration file."""


class CameraUnavailableError(ValueError):
    """No frame could be grabbed from the camera."""


class UsageError(ValueError):
    """The options contradict each other."""


class BadDistortionError(ValueError):
    """Lens distortion given on the command line is malformed or implausible."""


# Hand-clicked corners this close together are one corner clicked twice.
MIN_CORNER_SEPARATION_PX = 1.0


def _numbers(text: str) -> list[float] | None:
    """The numbers in ``text`` (split at commas, semicolons or spaces); None if one is not."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
    try:
        return [float(p) for p in parts]
    except ValueError:
        return None


def parse_corners(text: str) -> npt.NDArray[np.float64]:
    """``"x1,y1,x2,y2,x3,y3,x4,y4"`` as a (4, 2) array of pixels.

    Raises
    ------
    BadCornersError
        When there are not eight numbers.
    """
    values = _numbers(text)
    if values is None:
        raise BadCornersError(f"--corners {text!r}: expected eight numbers x1,y1,x2,y2,x3,y3,x4,y4")
    if len(values) != 8:
        raise BadCornersError(
            f"--corners {text!r}: expected eight numbers x1,y1,...,x4,y4, got {len(values)}"
        )
    if not all(np.isfinite(values)):
        raise BadCornersError(
            f"--corners {text!r}: every coordinate must be a finite number of pixels"
        )
    corners_px = np.asarray(values, np.float64).reshape(4, 2)
    # Two corners on one spot leave the pose undefined (OpenCV's solvePnP then
    # fails with a message that means nothing to the user).
    for i in range(4):
        for j in range(i + 1, 4):
            if np.hypot(*(corners_px[i] - corners_px[j])) < MIN_CORNER_SEPARATION_PX:
                raise BadCornersError(
                    f"--corners {text!r}: corners {i + 1} and {j + 1} are the same point; "
                    "give the mat's four distinct corners"
                )
    return corners_px


def parse_distortion(text: str) -> npt.NDArray[np.float64]:
    """``"k1,k2,p1,p2[,k3]"`` (OpenCV's order) as a (5,) array; k3 is 0 when left out.

    The numbers are those of OpenCV's camera calibration (``cv2.calibrateCamera``'s
    ``distCoeffs``) for this camera at this resolution.

    Raises
    ------
    BadDistortionError
        When there are not four or five finite numbers, or one is implausibly large.
    """
    values = _numbers(text)
    if values is None:
        raise BadDistortionError(
            f"--distortion {text!r}: expected four or five numbers k1,k2,p1,p2[,k3]"
        )
    if len(values) not in (4, 5):
        raise BadDistortionError(
            f"--distortion {text!r}: expected four or five numbers k1,k2,p1,p2[,k3] "
            f"(OpenCV's order), got {len(values)}"
        )
    if not all(np.isfinite(values)):
        raise BadDistortionError(f"--distortion {text!r}: every coefficient must be finite")
    coefficients = np.zeros(5)
    coefficients[: len(values)] = values
    radial, tangential = coefficients[[0, 1, 4]], coefficients[2:4]
    if np.abs(radial).max() > MAX_RADIAL_COEFFICIENT or (
        np.abs(tangential).max() > MAX_TANGENTIAL_COEFFICIENT
    ):
        raise BadDistortionError(
            f"--distortion {text!r}: implausibly large for a webcam or phone lens "
            f"(|k1|, |k2|, |k3| at most {MAX_RADIAL_COEFFICIENT}, |p1|, |p2| at most "
            f"{MAX_TANGENTIAL_COEFFICIENT}); give OpenCV's k1,k2,p1,p2[,k3] for this camera, "
            "or leave the option out to estimate the distortion from the mat's edges"
        )
    return coefficients


#: OpenCV reads a number of 100 and more as a capture API's code plus a
#: camera's number (200 is camera 0 through V4L2), and one past a C int not
#: at all: no machine has a hundred cameras.
MAX_CAMERA_INDEX = 99


def open_camera(camera_index: int) -> cv2.VideoCapture:
    """Camera ``camera_index``, opened; the caller releases it.

    Raises
    ------
    CameraUnavailableError
        For a number no camera can have, or a camera that cannot be opened.
    """
    if camera_index < 0:
        # OpenCV's V4L backend crashes the process (SIGSEGV) on a negative index.
        raise CameraUnavailableError(
            f"--camera {camera_index}: camera numbers start at 0; try --camera 0"
        )
    if camera_index > MAX_CAMERA_INDEX:
        raise CameraUnavailableError(
            f"--camera {camera_index}: there is no camera with so large a number; cameras are "
            f"numbered from 0 (the first webcam) to at most {MAX_CAMERA_INDEX}: try --camera 0"
        )
    # OpenCV logs its own warnings for a missing camera; our message says it better.
    previous = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    capture = cv2.VideoCapture(camera_index)
    cv2.utils.logging.setLogLevel(previous)
    if not capture.isOpened():
        capture.release()
        raise CameraUnavailableError(
            f"cannot open camera {camera_index}: no such camera or it is in use; "
            "check the cable and permissions, or give an image or video file instead"
        )
    return capture


def grab_frame(camera_index: int) -> npt.NDArray[np.uint8]:
    """One frame from camera ``camera_index``.

    Raises
    ------
    CameraUnavailableError
        When the camera cannot be opened or gives no frame.
    """
    capture = open_camera(camera_index)
    try:
        # Webcams need a few frames to settle exposure and white balance.
        frame = None
        for _ in range(5):
            ok, grabbed = capture.read()
            if ok:
                frame = grabbed
        if frame is None:
            raise CameraUnavailableError(
                f"camera {camera_index} opened but gave no picture; "
                "check that no other program is using it"
            )
        return np.asarray(frame, np.uint8)
    finally:
        capture.release()


def describe(cal: Calibration) -> str:
    """The lines printed after a calibration."""
    cam = cal.camera
    focal = float(np.sqrt(cam.camera_matrix[0, 0] * cam.camera_matrix[1, 1]))
    position = cam.position_mm
    hfov = float(np.degrees(2 * np.arctan(cal.image_size_wh[0] / (2 * focal))))
    # Angle of the optical axis from straight down.
    axis_mat = cam.rotation.T @ np.array([0.0, 0.0, 1.0])
    tilt = float(np.degrees(np.arccos(np.clip(-axis_mat[2], -1.0, 1.0))))
    found = sum(b.found for b in cal.baselines)
    lines = [
        f"mat found ({cal.method}) in a {cal.image_size_wh[0]}x{cal.image_size_wh[1]} image",
        "corners (px): " + "  ".join(f"({x:.1f}, {y:.1f})" for x, y in cal.corners_image_xy_px),
        f"baselines found: {found}/4",
        f"camera: focal {focal:.0f} px (horizontal field {hfov:.0f} deg), "
        f"k1 {cam.dist_coeffs[0]:+.4f}, k2 {cam.dist_coeffs[1]:+.4f}",
        f"camera position (mm): x {position[0]:.0f}, y {position[1]:.0f}, "
        f"height {position[2]:.0f}; {tilt:.0f} deg from vertical",
        f"reprojection error: RMS {cal.reprojection_rms_px:.2f} px = "
        f"{cal.reprojection_rms_mm:.2f} mm on the mat",
        f"mapping uncertainty: up to {cal.mapping_sigma_mm:.2f} mm (one sigma, over the mat)",
    ]
    coarsest = coarsest_mm_per_px(cam)
    resolution = f"resolution: {coarsest:.1f} mm a pixel at the mat's farthest corner"
    if coarsest > COARSE_VIEW_MM_PER_PX:
        resolution += f" (coarser than {COARSE_VIEW_MM_PER_PX}: {COARSE_VIEW_ADVICE})"
    lines.append(resolution)
    if cal.pot is not None and cal.pot.found:
        x, y = cal.pot.centre_mm
        lines.append(
            f"pot: top rim found {np.hypot(x, y):.1f} mm from the mat's centre "
            f"(at {x:+.1f}, {y:+.1f} mm; rule 2.4 puts it at the centre), "
            f"rim radius {cal.pot.radius_mm:.1f} mm"
        )
    else:
        lines.append("pot: top rim not found (clear or low-contrast pot, or hidden)")
    if cal.orientation_known and cal.corners_mm is not None:
        corners = ", ".join(
            f"{c.value} ({x:+.0f}, {y:+.0f})" for c, (x, y) in cal.corners_mm.items()
        )
        lines.append(f"orientation: known from the corner winks: {corners}")
    else:
        lines.append(
            "orientation: UNKNOWN (no unplayed winks seen behind the baselines); "
            "the frame may be turned through 180 degrees"
        )
    if cal.colour.source == "winks":
        seen = ", ".join(c.value for c in cal.colour.wink_lab)
        lines.append(f"colour reference: learned from the winks behind the baselines ({seen})")
    else:
        lines.append("colour reference: white balance from the felt only")
    return "\n".join(lines)


def default_picture_path(output: Path, inputs: list[Path]) -> Path:
    """``calib.json`` -> ``calib.png``, unless that would overwrite the photo, the output,
    or a picture that is not this calibration's (then ``calib.calibration.png``).

    ``calib.png`` beside an existing ``calib.json`` is taken as the picture an
    earlier ``calibrate -o calib.json`` drew; without one it may be a photo.
    Where ``calib.calibration.png`` exists, an earlier run drew it there.
    """
    picture = output.with_suffix(".png")
    other = output.with_name(f"{output.stem}.calibration.png")
    taken = [output, *inputs]
    if (
        other.exists()
        or any(picture.resolve() == p.resolve() for p in taken)
        or (picture.exists() and not output.exists())
    ):
        # Once the picture went to the other name, it keeps going there: the
        # calibration file now beside the photo does not make the photo ours.
        return other
    return picture


_PICTURE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".bmp", ".gif", ".heic"}


def check_not_overwriting_other_file(output: Path) -> None:
    """Refuse ``-o`` onto an existing file that is not a calibration file.

    Raises
    ------
    OutputNotCalibrationError
        When ``output`` exists and is not a winkref calibration file.
    """
    if not output.is_file():
        return
    try:
        data = json.loads(output.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("format") != CALIBRATION_FORMAT:
        raise OutputNotCalibrationError(
            f"-o {str(output)!r}: that file exists and is not a winkref calibration file, so it "
            "is not overwritten; give another name, or move the file away first"
        )


def run(
    image: Path | None,
    *,
    camera_index: int | None = None,
    output: Path = Path("calib.json"),
    corners: str | None = None,
    annotate_path: Path | None = None,
    distortion: str | None = None,
) -> str:
    """Calibrate from an image file or a camera; write the file and the picture.

    Returns
    -------
    str
        The text to print.

    Raises
    ------
    ValueError
        Bad options, unreadable image, no camera, no mat, mat out of frame.
    OSError
        When an output file cannot be written.
    """
    inputs = [image] if image is not None else []
    check_output_path(output, option="-o", inputs=inputs, make_parent=True)
    if output.suffix.lower() in _PICTURE_SUFFIXES:
        raise UsageError(
            f"-o {str(output)!r} names a picture, but -o is the calibration file (JSON); "
            "give it a .json name (the annotated picture goes to --annotate)"
        )
    check_not_overwriting_other_file(output)
    picture = annotate_path if annotate_path is not None else default_picture_path(output, inputs)
    check_output_path(
        picture, option="--annotate", inputs=[*inputs, output], image=True, make_parent=True
    )
    if image is not None and camera_index is None:
        frame = load_photo(image, need_colour=False)
        source = str(image)
    elif camera_index is not None and image is None:
        frame = grab_frame(camera_index)
        source = f"camera {camera_index}"
    else:
        raise UsageError("give either an IMAGE file or --camera N (exactly one of them)")
    corner_px = parse_corners(corners) if corners is not None else None
    dist_coeffs = parse_distortion(distortion) if distortion is not None else None
    try:
        with naming_photo(Path(source)):
            cal = calibrate(frame, corners_image_px=corner_px, dist_coeffs=dist_coeffs)
    except ValueError as exc:
        if dist_coeffs is None:
            raise
        # The distortion given bends every edge the fit looks along: say so.
        hint = (
            f"; this was with the lens distortion given (--distortion {distortion}): if the "
            "lens is not known for sure, leave --distortion out and it is estimated"
        )
        raise reworded(exc, f"{exc}{hint}") from None
    drawn = draw_calibration(frame, cal)
    # Said, so that a mistyped folder does not go unnoticed.
    made = sorted({str(p.parent) for p in (picture, output) if not p.parent.exists()})
    # The picture first: when it cannot be written, the calibration file that
    # was there (perhaps another camera's) is still as it was.
    write_image_atomic(picture, drawn, option="--annotate", make_parent=True)
    write_text_atomic(
        output, json.dumps(cal.to_json_dict(), indent=2) + "\n", option="-o", make_parent=True
    )
    return "\n".join(
        [
            f"calibrated from {source}",
            describe(cal),
            *(
                ["lens distortion: as given (--distortion), not estimated"]
                if dist_coeffs is not None
                else []
            ),
            *([f"made the folder{'s' if len(made) > 1 else ''} {', '.join(made)}"] if made else []),
            f"wrote {output} and {picture}",
        ]
    )
