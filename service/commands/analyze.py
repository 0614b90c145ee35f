"""``winkref analyze IMAGE``: the board seen in one photo.

Calibrates from the photo itself unless ``--calibration FILE`` is given (a
calibration file with a ``camera`` block, or a scene ground-truth file whose
camera is used). Prints a table by default, the board JSON with ``--json``,
and with ``--annotate OUT.png`` writes the photo with the board drawn on it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from calibration import calibrate as calibrate_from_photo
from calibration import camera_moved, implausible_camera
from calibration.camera import CameraModel
from calibration.result import CALIBRATION_FORMAT
from rules.board import Colour, Wink, WinkStatus
from service.outputs import check_output_path, write_image_atomic
from service.photos import calibration_notes, load_photo, naming_photo
from vision.annotate import annotate_frame
from vision.pipeline import FrameAnalysis, analyze_frame, prepare_context


class CalibrationFileError(ValueError):
    """A calibration file that cannot be used."""


_CALIBRATION_HINT = "make one with `winkref calibrate PHOTO -o calib.json`"


def load_calibration(path: Path) -> tuple[Any, Mapping[Colour, tuple[float, float]] | None]:
    """A calibration (or bare camera) and the corners, from a JSON file.

    Every failure, however malformed the file, is a :class:`CalibrationFileError`
    that names the file and says how to make a good one.

    Raises
    ------
    CalibrationFileError
        When the file is missing, not JSON, or has no usable camera.
    """
    if path.is_dir():
        raise CalibrationFileError(
            f"calibration file {str(path)!r} is a folder; give the JSON file inside it"
        )
    try:
        return _read_calibration(path)
    except CalibrationFileError as exc:
        raise CalibrationFileError(f"{exc}; {_CALIBRATION_HINT}") from None
    except RecursionError:
        raise CalibrationFileError(
            f"{str(path)!r} is nested too deeply to be a calibration file; {_CALIBRATION_HINT}"
        ) from None
    except UnicodeDecodeError as exc:
        raise CalibrationFileError(
            f"{str(path)!r} is not a text file (byte {exc.object[exc.start]:#04x} at position "
            f"{exc.start} is not UTF-8), so not a calibration file; {_CALIBRATION_HINT}"
        ) from None
    except OSError as exc:
        raise CalibrationFileError(
            f"cannot read calibration file {str(path)!r} ({exc.strerror or exc}); "
            f"{_CALIBRATION_HINT}"
        ) from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        # Wrong types anywhere in a hand-edited file: say which file, not where in our code.
        raise CalibrationFileError(
            f"{str(path)!r} is not a usable calibration file "
            f"({type(exc).__name__}: {exc}); {_CALIBRATION_HINT}"
        ) from None


def check_calibration_fits_photo(
    calibration: Any, calibration_path: Path, image: npt.NDArray[np.uint8], photo: Path
) -> None:
    """Refuse, naming both, a calibration file that cannot be used for this photo.

    It may be made for a photo of another size, hold a camera no real camera
    can be (edited by hand, corrupt), or not put the mat where the photo shows
    it (the camera moved since): each would give a confident, wrong board.

    Raises
    ------
    CalibrationFileError
    """
    camera = getattr(calibration, "camera", calibration)
    made_for = tuple(getattr(camera, "image_size_wh", ()))
    photo_wh = (image.shape[1], image.shape[0])
    if made_for and made_for != photo_wh:
        raise CalibrationFileError(
            f"calibration file {str(calibration_path)!r} was made for a "
            f"{made_for[0]}x{made_for[1]} photo, and {str(photo)!r} is "
            f"{photo_wh[0]}x{photo_wh[1]}: calibrate this camera at this size "
            "(winkref calibrate PHOTO -o calib.json)"
        )
    failure = implausible_camera(camera)
    if failure is None:
        failure = camera_moved(image, camera)
    if failure is not None:
        raise CalibrationFileError(
            f"calibration file {str(calibration_path)!r} cannot be used for "
            f"{str(photo)!r}: {failure.message}; calibrate again with this photo "
            "(winkref calibrate PHOTO -o calib.json), or leave --calibration out"
        )


def calibration_for_photo(
    image: npt.NDArray[np.uint8],
    photo: Path,
    calibration_path: Path | None,
    calibrate: Callable[[npt.NDArray[np.uint8]], Any] | None = None,
) -> tuple[Any, Mapping[Colour, tuple[float, float]] | None, tuple[str, ...]]:
    """The calibration a command analyses ``photo`` with, its corners, and what to say of it.

    From ``calibration_path`` when given (refused if made for another photo
    size), else made from the photo itself (``calibrate``, by default
    :func:`calibration.calibrate`). The notes say when it is uncertain (see
    :func:`service.photos.calibration_notes`).

    Raises
    ------
    ValueError
        An unusable calibration file, or no mat found in the photo.
    """
    if calibration_path is not None:
        calibration, corners = load_calibration(calibration_path)
        check_calibration_fits_photo(calibration, calibration_path, image, photo)
        return (
            calibration,
            corners,
            calibration_notes(calibration, f"file {str(calibration_path)!r}"),
        )
    try:
        with naming_photo(photo):
            calibration = (calibrate or calibrate_from_photo)(image)
    except ValueError as exc:
        raise _with_corners_hint(exc) from None
    return calibration, None, calibration_notes(calibration)


#: How a photo's corners are given by hand: calibration's advice names no command.
CORNERS_HINT = (
    " (with 'winkref calibrate PHOTO --corners x1,y1,x2,y2,x3,y3,x4,y4 -o calib.json', "
    "then --calibration calib.json)"
)


def _with_corners_hint(exc: ValueError) -> ValueError:
    """``exc`` with how to give the corners by hand, where its advice is to give them."""
    text = str(exc)
    if "corners by hand" not in text or "--corners" in text:
        return exc
    at = text.index("corners by hand") + len("corners by hand")
    try:
        return type(exc)(text[:at] + CORNERS_HINT + text[at:])
    except TypeError:
        return exc


def _read_calibration(path: Path) -> tuple[Any, Mapping[Colour, tuple[float, float]] | None]:
    """The parsing behind :func:`load_calibration`.

    Accepts the calibration step's own file when it can read it, any JSON
    object with a ``camera`` block (``width``, ``height``, ``K``, ``dist``,
    ``R``, ``t``), or a scene ground-truth file (turned into the canonical
    frame, its baselines giving the corners).

    Raises
    ------
    CalibrationFileError
        When the file is not JSON or has no usable camera.
    """
    if not path.exists():
        raise CalibrationFileError(f"calibration file {str(path)!r} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise CalibrationFileError(f"{str(path)!r} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CalibrationFileError(f"{str(path)!r} holds no JSON object")
    if data.get("format") == "tiddlywinks-gt/1":
        from tools.groundtruth import load_scene, to_canonical_frame

        if not data.get("baselines"):
            raise CalibrationFileError(f"{str(path)!r} has no mat (no baselines) to calibrate by")
        scene = to_canonical_frame(load_scene(path))
        return scene.camera, {b.colour: (b.corner[0], b.corner[1]) for b in scene.baselines}
    stated = data.get("format")
    if (
        isinstance(stated, str)
        and stated.startswith("winkref-calibration/")
        and stated != CALIBRATION_FORMAT
    ):
        raise CalibrationFileError(
            f"{str(path)!r} is a calibration file of format {stated!r}, which this "
            f"version of winkref does not know (it reads {CALIBRATION_FORMAT!r})"
        )
    try:
        import calibration as calib_pkg

        from_json = getattr(getattr(calib_pkg, "Calibration", None), "from_json_dict", None)
        if from_json is not None:
            return from_json(data), None
    except (ImportError, ValueError, KeyError, TypeError):
        pass
    block = data.get("camera", data)
    if not isinstance(block, dict):
        raise CalibrationFileError(f"{str(path)!r}: 'camera' is not an object")
    try:
        camera = CameraModel.from_json_dict(block)
    except ValueError as exc:
        raise CalibrationFileError(f"{str(path)!r}: {exc}") from None
    corners: dict[Colour, tuple[float, float]] | None = None
    raw = data.get("corners_mm")
    if isinstance(raw, dict):
        corners = {Colour(k): (float(v[0]), float(v[1])) for k, v in raw.items()}
    return camera, corners


def analysis_json(analysis: FrameAnalysis) -> dict[str, Any]:
    """The board JSON, plus what the frame could not show (extra keys are allowed)."""
    out = analysis.board.to_json_dict()
    out["hidden_regions"] = [r.to_json_dict() for r in analysis.hidden_regions]
    out["notes"] = list(analysis.notes)
    out["reviews"] = list(analysis.reviews)
    out["timings_ms"] = {k: round(v, 1) for k, v in analysis.timings_ms.items()}
    return out


def flags_text(wink: Wink) -> str:
    """The table's flags for a wink: unsure, and why when vision says; inferred."""
    flags = []
    if wink.uncertain:
        # Why is what the umpire should look at.
        why = ", ".join(d.value for d in wink.doubts)
        flags.append(f"UNCERTAIN ({why})" if why else "UNCERTAIN")
    if getattr(wink, "inferred", False):
        flags.append("inferred")
    return " ".join(flags)


def table_text(analysis: FrameAnalysis, *, width: int = 110) -> str:
    """A readable table of the board, then tiddlies, reviews and notes."""
    board = analysis.board
    table = Table(title="Board", show_lines=False)
    for name in ("id", "status", "x mm", "y mm", "squops", "pile", "conf", "flags"):
        table.add_column(name, justify="right" if name in ("x mm", "y mm", "conf") else "left")
    for wk in board.winks:
        table.add_row(
            wk.id,
            wk.status.value,
            "" if wk.x_mm is None else f"{wk.x_mm:.1f}",
            "" if wk.y_mm is None else f"{wk.y_mm:.1f}",
            ", ".join(wk.squops),
            "" if wk.pile is None else str(wk.pile),
            "" if wk.confidence is None else f"{wk.confidence:.2f}",
            flags_text(wk),
        )
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(table)
    tiddlies = board.tiddlies or {}
    parts = []
    for colour in Colour:
        potted = board.count(colour, WinkStatus.POTTED)
        free = board.count(colour, WinkStatus.FREE)
        parts.append(f"{colour.value} {tiddlies.get(colour, 0)} ({potted} potted, {free} free)")
    console.print("Tiddlies (rule 19.1): " + "; ".join(parts))
    if analysis.hidden_regions:
        console.print(
            f"Hidden: {len(analysis.hidden_regions)} region(s) of the mat cannot be seen; "
            "winks there are not reported."
        )
    for text in analysis.reviews:
        console.print(f"Review: {text}")
    for text in analysis.notes:
        console.print(f"Note: {text}")
    return console.export_text().rstrip()


def run(
    image_path: Path,
    *,
    calibration_path: Path | None = None,
    json_output: bool = False,
    annotate_path: Path | None = None,
    calibrate: Callable[[npt.NDArray[np.uint8]], Any] | None = None,
) -> str:
    """Analyse one photo and return the text to print.

    Raises
    ------
    ValueError
        Unreadable photo, unusable calibration file, no mat in the photo,
        or a photo the calibration does not fit.
    """
    if annotate_path is not None:
        check_output_path(
            annotate_path,
            option="--annotate",
            inputs=[image_path, *filter(None, [calibration_path])],
            image=True,
        )
    image = load_photo(image_path)
    calibration, corners, calibration_said = calibration_for_photo(
        image, image_path, calibration_path, calibrate
    )
    context = prepare_context(calibration, corners_mm=corners)
    with naming_photo(image_path):
        analysis = analyze_frame(image, context)
    analysis = replace(analysis, notes=calibration_said + analysis.notes)
    if annotate_path is not None:
        drawn = annotate_frame(
            image,
            analysis.board,
            analysis.camera or context.camera,
            hidden_regions=analysis.hidden_regions,
            notes=analysis.notes,
        )
        write_image_atomic(annotate_path, np.asarray(drawn, np.uint8), option="--annotate")
    if json_output:
        return json.dumps(analysis_json(analysis), indent=2)
    return table_text(analysis)
