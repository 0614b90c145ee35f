"""The public entry points: :func:`calibrate`, :func:`find_mat`, :func:`load_image`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from calibration.baseline_search import find_mat_quads_from_baselines
from calibration.camera import CameraModel
from calibration.colour import CLOCKWISE, read_corner_colours
from calibration.edges import ridge_points
from calibration.fit import (
    MAT_CORNERS_MM,
    TooFewPointsError,
    baseline_segment_mm,
    mapping_sigma_mm,
)
from calibration.mat import (
    MIN_IMAGE_SIDE_PX,
    CalibrationFailure,
    FailureReason,
    _clockwise,
    find_mat_quads,
)
from calibration.pipeline import (
    FewBaselinesError,
    PipelineResult,
    baseline_curve,
    edge_colour_steps,
    fit_from_outline,
    image_lab_float,
    profile_half_width_px,
)
from calibration.pot import find_pot_rim
from calibration.result import (
    BadCornersError,
    BaselineResult,
    Calibration,
    CalibrationError,
    ImageShapeError,
    ImageTooSmallError,
    MatPartlyOutOfFrameError,
    NoMatFoundError,
    UnreadableImageError,
)
from rules.board import POT_HEIGHT_MM, Colour

FloatArray = npt.NDArray[np.float64]
UInt8Array = npt.NDArray[np.uint8]

#: A fit whose points miss their lines by more than this (RMS, px) is rejected.
MAX_RMS_PX = 2.0
#: An outline found automatically must show at least this many baselines where a
#: mat has them: planks, table edges and paper make rectangles too.
MIN_BASELINES_AUTO = 2
#: An outline of faint edges (felt close to the table's colour), whose edges
#: show on fewer profiles, must show all four baselines instead (with three, a
#: beige-on-wood test image fitted an outline 44 px off).
MIN_BASELINES_FAINT = 4
#: How many more baselines than its first fits showed the refinement of an
#: outline of faint edges may still find. It found at most one more on 126
#: such outlines (79 beige-on-wood photos, the shared and sample ones), and
#: every outline kept or told apart by its baselines showed three or four in
#: its first fits. One whose first fits show fewer than MIN_BASELINES_FAINT
#: less this is given up unrefined: on a close-up with no mat in view those
#: refinements were most of the search's time.
ROUGH_BASELINES_GAINED = 2
#: Both edges of a pair showing less felt/table colour step than this fraction
#: of the clearest edge's are not the mat's. The true edges of 57 development
#: images (ground-truth cameras) showed at least 0.23 of it, and 0.42 but for a
#: beige-on-beige-wood image; a camera that put two edges on a table's planks
#: showed 0.04.
MIN_EDGE_STEP_RATIO = 0.1
#: One edge showing less felt/table colour step than this fraction of the next
#: weakest edge's is not the mat's. The true edges of 75 images (shared,
#: samples, generated, 33 of them beige or off-white felt on beige wood;
#: ground-truth cameras) showed at least 0.34 of the four edges' median, which
#: is at least the next weakest step; a camera whose outline ran one long edge
#: across a beige table beside the mat (seed 2604, accepted 284 mm wrong)
#: showed 0.09 there. (The median itself was the yardstick at first, but two
#: edges beside a dark floor raise it past a true faint edge.)
MIN_EDGE_STEP_TO_NEXT = 0.2
#: A fit from corners given by hand refines them; one whose corners end further
#: than this fraction of the image diagonal from them followed other edges (a
#: beige-on-wood image fitted from its true corners ended 390 mm wrong).
MAX_MANUAL_CORNER_MOVE = 0.02
#: Outlines tried from the faint-edge search when the ordinary one finds no mat.
COARSE_OUTLINES = 3
#: A fit to faint edges (an outline from the faint-edge or baseline search) is
#: accepted only if the pot's top rim (rule 2.4) is found this close to the
#: mat's centre, mm. Right faint fits put it 0.2-1.8 mm off (15 development
#: and held-out beige-on-wood images); cameras 18-46 mm wrong in the middle
#: either lost it or put it 4.4 mm off; one 4.5 mm wrong put it 3.4 mm off.
MAX_FAINT_POT_OFFSET_MM = 3.0
#: A fit whose mapping is uncertain by more than this (one sigma, mm) is rejected.
MAX_MAPPING_SIGMA_MM = 5.0
#: Fewer edge points than this fraction of those sampled means the edges were not seen.
MIN_EDGE_FRACTION = 0.35
MIN_EDGE_FRACTION_MANUAL = 0.1
#: A photo with fewer pixels than this on its short side shows the mat's
#: baselines a pixel or so wide (640x360: about 2.9 mm a pixel): when no mat is
#: found there, the resolution may be why, whatever else the failure says.
COARSE_SHORT_SIDE_PX = 700
#: A found baseline the fitted camera misses by more than this (RMS, mm) says
#: the camera is wrong: in right fits of 38 development images the largest was
#: 0.21 mm; cameras fitted to outlines that were not the mat's missed by 0.6-2.3.
MAX_BASELINE_RMS_MM = 0.5
#: A baseline shown along this share of its length shows the mat's paint ...
PLAIN_BASELINE_FRACTION = 0.6
#: ... and one shown along less than this share, wholly in the picture and seen
#: at most ABSENT_BASELINE_COARSER times as coarsely (mm a pixel), is not where
#: the camera puts it. Both looked for with thin lines on slopes of light too
#: (``ridge_points(on_slopes=True)``). With the true cameras of 180 shared and
#: generated photos (overhead, oblique, beige on wood, 720p) that never
#: happens (at 0.9 and the plain test alone, it did on oblique 702: a baseline
#: a pixel wide near the mat's edge). A hand-given outline that runs on to a
#: board's end fits the baselines at the mat's far end (shown along 60-67 % at
#: 4.5 mm a pixel) and puts the near ones on felt (0 %, 4.8 mm a pixel).
ABSENT_BASELINE_FRACTION = 0.15
ABSENT_BASELINE_COARSER = 1.3


@dataclass(frozen=True, eq=False)
class MatFit:
    """The mat found in an image: sub-pixel corners and the camera fitted to its edges.

    Parameters
    ----------
    corners_image_xy_px : (4, 2) ndarray
        Corners (-x,-y), (+x,-y), (+x,+y), (-x,+y) of the calibration frame
        (which may be the canonical frame turned through 180 degrees).
    camera : CameraModel
    pipeline : PipelineResult
        The fit's details (residuals, baselines).
    """

    corners_image_xy_px: FloatArray
    camera: CameraModel
    pipeline: PipelineResult

    def __bool__(self) -> bool:
        return True


def load_image(path: str | Path) -> UInt8Array:
    """Read an image file as BGR uint8.

    Raises
    ------
    UnreadableImageError
        When the file is missing or not a readable image.
    """
    if not str(path).strip():
        # Path("") is ".", which would be reported as a folder the user never named.
        raise UnreadableImageError(
            f"cannot read image {str(path)!r}: no file name was given; give the photo's path"
        )
    p = Path(path)
    if p.is_dir():
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: it is a folder; give the photo file inside it"
        )
    if p.exists() and not p.is_file():
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: it is not a regular file (a device or pipe); "
            "save the photo to a file and give that"
        )
    if not p.is_file():
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: no such file (it does not exist); check the path"
        )
    try:
        data = np.fromfile(str(p), dtype=np.uint8)
    except OSError as exc:
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: {exc.strerror or exc}; check its permissions"
        ) from None
    if not data.size:
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: the file is empty; copy the photo again"
        )
    # libjpeg decodes a cut-off JPEG without complaint (grey below the cut), which
    # would then be analysed as if the mat ended there; a JPEG must end in EOI.
    if data[:2].tobytes() == _JPEG_SOI and _JPEG_EOI not in data[-_JPEG_TAIL_BYTES:].tobytes():
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: the JPEG is truncated (incomplete download or "
            "copy); copy the photo again"
        )
    if _is_heif(data):
        return _decode_heif(data, p)
    try:
        image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    except cv2.error:
        # OpenCV raises rather than returning None for some malformed headers
        # and for images past its pixel-count limit.
        image = None
    if image is None:
        raise UnreadableImageError(
            f"cannot read image {str(p)!r}: not a readable image (corrupt or unsupported format); "
            "save it again as JPEG or PNG"
        )
    return np.asarray(image, np.uint8)


def _is_heif(data: UInt8Array) -> bool:
    """Whether the file is an HEIF still image (an iPhone's HEIC photo, by default).

    HEIF is an ISO base media file: its first box is ``ftyp``, whose major
    brand and compatible brands name the kind of file.
    """
    head = data[:64].tobytes()
    if head[4:8] != b"ftyp":
        return False
    box_size = int.from_bytes(head[:4], "big")
    brands = head[8 : min(max(box_size, 16), len(head))]
    return any(brands[i : i + 4] in _HEIF_BRANDS for i in range(0, len(brands) - 3, 4))


def _decode_heif(data: UInt8Array, path: Path) -> UInt8Array:
    """Decode an HEIF/HEIC photo as BGR uint8, turned upright as the phone shows it.

    OpenCV cannot read HEIF; libheif (through pillow-heif) can. It applies the
    file's rotation and mirroring, so pixel coordinates (``--near``) mean what
    they mean in the phone's own viewer; 10-bit photos come out as 8 bits.
    """
    try:
        import pillow_heif
    except ImportError:
        raise UnreadableImageError(
            f"cannot read image {str(path)!r}: it is an HEIC/HEIF photo, and reading those needs "
            "the pillow-heif package, which is not installed; reinstall winkref, or export the "
            "photo as JPEG"
        ) from None
    try:
        # Decoded straight into OpenCV's channel order: a 12 MP photo takes
        # about 0.6 s here, a quarter less than through Pillow's RGB.
        heif = pillow_heif.open_heif(data.tobytes(), convert_hdr_to_8bit=True, bgr_mode=True)
        pixels = np.asarray(heif, dtype=np.uint8)
    except (ValueError, RuntimeError, OSError) as exc:
        raise UnreadableImageError(
            f"cannot read image {str(path)!r}: the HEIC/HEIF photo is damaged or incomplete "
            f"({exc}); copy it from the phone again, or export it as JPEG"
        ) from None
    if pixels.ndim == 2:
        return np.asarray(cv2.cvtColor(pixels, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
    return np.ascontiguousarray(pixels[:, :, :3])


#: ``ftyp`` brands of HEVC-coded HEIF files (ISO/IEC 23008-12), which phones
#: write. Not the bare image-file brands (``mif1``): AVIF files carry those too.
_HEIF_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx"})
_JPEG_SOI = b"\xff\xd8"
_JPEG_EOI = b"\xff\xd9"
# Some cameras pad after EOI; a few KiB of tail covers that.
_JPEG_TAIL_BYTES = 4096


def _check_image(image_bgr: object) -> UInt8Array:
    arr = np.asarray(image_bgr)
    if arr.ndim == 2:
        arr = cv2.cvtColor(arr.astype(np.uint8), cv2.COLOR_GRAY2BGR)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise UnreadableImageError(
            f"expected a colour image of shape (H, W, 3), but got shape {arr.shape}"
        )
    if arr.dtype != np.uint8:
        raise UnreadableImageError(f"expected an 8-bit image, but got dtype {arr.dtype}")
    h, w = arr.shape[:2]
    if min(h, w) < MIN_IMAGE_SIDE_PX:
        raise ImageTooSmallError(
            f"the image is {w}x{h} pixels; calibration needs at least {MIN_IMAGE_SIDE_PX} "
            "pixels on each side: use the camera's full resolution"
        )
    check_image_shape(w, h)
    return np.ascontiguousarray(arr)


#: Cameras' frames run from 1:1 to 32:9 (3.6): an image longer than this
#: times its width is a panorama or a strip, not one view of the mat.
MAX_ASPECT_RATIO = 4.0


def check_image_shape(width_px: int, height_px: int) -> None:
    """Refuse an image more than :data:`MAX_ASPECT_RATIO` times as long as it is wide.

    Raises
    ------
    ImageShapeError
        Saying why, and what to use instead.
    """
    if max(width_px, height_px) > MAX_ASPECT_RATIO * min(width_px, height_px):
        raise ImageShapeError(
            f"the image is {width_px}x{height_px} pixels, more than {MAX_ASPECT_RATIO:g} times "
            "as long as it is wide: that is a panorama or a strip, not one camera view of the "
            "mat; use an ordinary photo or video frame (e.g. 4:3 or 16:9)"
        )


def _error_for(failure: CalibrationFailure) -> ValueError:
    kinds: dict[FailureReason, type[ValueError]] = {
        FailureReason.NO_MAT: NoMatFoundError,
        FailureReason.MAT_PARTLY_OUT_OF_FRAME: MatPartlyOutOfFrameError,
        FailureReason.IMAGE_TOO_SMALL: ImageTooSmallError,
        FailureReason.FIT_FAILED: NoMatFoundError,
        FailureReason.NO_BASELINES: NoMatFoundError,
        FailureReason.EVIDENCE_DISAGREES: NoMatFoundError,
        FailureReason.FAINT_EDGES_UNVERIFIED: NoMatFoundError,
        FailureReason.CAMERA_IMPLAUSIBLE: CalibrationError,
        FailureReason.CAMERA_MOVED: CalibrationError,
    }
    return kinds[failure.reason](failure.message)


def _fit(
    image_lab: npt.NDArray[np.float32],
    outline_px: FloatArray,
    dist_coeffs: FloatArray | None,
    *,
    manual: bool = False,
    rough: bool = False,
) -> MatFit | CalibrationFailure:
    try:
        result = fit_from_outline(
            image_lab,
            outline_px,
            dist_coeffs=dist_coeffs,
            rough=rough,
            min_first_baselines=MIN_BASELINES_FAINT - ROUGH_BASELINES_GAINED if rough else 0,
        )
    except FewBaselinesError as exc:
        return _no_baselines(exc.found)
    except TooFewPointsError as exc:
        return CalibrationFailure(
            FailureReason.FIT_FAILED,
            f"no mat found: the mat's edges were not seen along the "
            f"{'given' if manual else 'found'} outline ({exc}); "
            + (
                "check that the corners are the mat's own, in pixels of this image"
                if manual
                else "make sure the whole mat is in view and sharp, or give the four corners "
                "by hand"
            ),
        )
    fit = result.fit
    rms = float(np.sqrt(np.mean(fit.residual_px**2))) if len(fit.residual_px) else np.inf
    # Corners given by hand vouch for the outline: faint edges need only confirm it.
    # So do three baselines for an outline of faint edges (felt close to the
    # table's colour): its edges show on fewer profiles even where it is right.
    min_fraction = MIN_EDGE_FRACTION_MANUAL if manual or rough else MIN_EDGE_FRACTION
    if result.edge_found_fraction < min_fraction or rms > MAX_RMS_PX:
        advice = (
            "check that the corners are the mat's own, in pixels of this image"
            if manual
            else "make sure the whole mat is in view and sharp, or give the four corners by hand"
        )
        return CalibrationFailure(
            FailureReason.FIT_FAILED,
            f"no mat found: the mat's edges were not seen along the "
            f"{'given' if manual else 'found'} outline (edge points seen: "
            f"{result.edge_found_fraction:.0%}, RMS {rms:.1f} px); {advice}",
        )
    found_baselines = sum(b.found for b in result.baselines)
    min_baselines = MIN_BASELINES_FAINT if rough else MIN_BASELINES_AUTO
    if not manual and found_baselines < min_baselines:
        return _no_baselines(found_baselines)
    # (Failures are falsy, so no `or` here.)
    disagreement = _evidence_disagrees(result, manual=manual, rough=rough)
    if disagreement is None:
        disagreement = _edges_show_no_step(image_lab, result.fit.camera, manual=manual)
    if disagreement is None:
        disagreement = _baseline_absent(image_lab, result.fit.camera, manual=manual)
    if disagreement is None and rough and not manual:
        disagreement = _pot_not_at_centre(image_lab, result.fit.camera)
    if disagreement is not None:
        return disagreement
    # Last, as it refits once per line.
    result = result.with_jackknife()
    sigma = mapping_sigma_mm(fit, faint_edges=result.faint_edges, jackknife_mm=result.jackknife_mm)
    if (not np.isfinite(sigma) or sigma > MAX_MAPPING_SIGMA_MM) and rough and not manual:
        # The mat's baselines were seen (a faint outline needs all four), so
        # saying no mat was found would mislead.
        return CalibrationFailure(
            FailureReason.FAINT_EDGES_UNVERIFIED,
            "calibration refused: the mat's edges are too faint against the table to pin down "
            f"the camera (the mapping is uncertain by {sigma:.0f} mm: its edges and baselines "
            "disagree); give the mat's four corners by hand, or photograph it on a table of a "
            "different colour",
        )
    if not np.isfinite(sigma) or sigma > MAX_MAPPING_SIGMA_MM:
        return CalibrationFailure(
            FailureReason.FIT_FAILED,
            f"no mat found: the {'given' if manual else 'found'} outline does not pin down a "
            f"camera (mapping uncertain by {sigma:.0f} mm); make sure the whole mat and its "
            "baselines are in view, or give the four corners by hand",
        )
    corners = fit.camera.mat_to_image(MAT_CORNERS_MM)
    h, w = image_lab.shape[:2]
    if manual:
        moved_px = _corner_move_px(corners, outline_px)
        limit_px = MAX_MANUAL_CORNER_MOVE * float(np.hypot(w, h))
        if not moved_px <= limit_px:
            return CalibrationFailure(
                FailureReason.EVIDENCE_DISAGREES,
                f"calibration refused: the camera fitted to the given corners puts the mat's "
                f"corners up to {moved_px:.0f} px away from them (at most {limit_px:.0f} px "
                "when it only refines them): the edges it followed are not the mat's; check "
                "that the corners are the mat's own, in pixels of this image",
            )
    margin = 1.0
    outside = (
        (corners[:, 0] < -margin)
        | (corners[:, 0] > w - 1 + margin)
        | (corners[:, 1] < -margin)
        | (corners[:, 1] > h - 1 + margin)
    )
    if np.any(outside):
        return CalibrationFailure(
            FailureReason.MAT_PARTLY_OUT_OF_FRAME,
            f"the mat runs out of the picture: {int(outside.sum())} of its corners are outside "
            "the image; move the camera back or zoom out until the whole mat shows",
        )
    return MatFit(corners_image_xy_px=corners, camera=fit.camera, pipeline=result)


def _corner_move_px(fitted_px: FloatArray, given_px: FloatArray) -> float:
    """Largest distance between fitted and given corners, matched in the best order."""
    given = np.asarray(given_px, np.float64)
    best = np.inf
    for ordered in (given, given[::-1]):
        for shift in range(4):
            moved = np.linalg.norm(np.roll(ordered, shift, axis=0) - fitted_px, axis=1)
            best = min(best, float(moved.max()))
    return best


def _evidence_disagrees(
    result: PipelineResult, *, manual: bool, rough: bool = False
) -> CalibrationFailure | None:
    """A failure when the fitted camera disagrees with its own evidence, else None.

    A camera fitted to an outline that is not the mat's (its long edges run on
    to a board's end, a score sheet's edge) can fit the edge points closely and
    state a small error, but it cannot also put the baselines it found where
    they are: rule 2.3.1 fixes them relative to the true corners.

    With ``rough`` (an outline from the faint-edge or baseline search, which
    reaches this check only with all four baselines found) the mat is in view
    and its faint edges are what fail: the failure says so, rather than that
    the outline is not the mat's.
    """
    where = "given" if manual else "found"
    advice = (
        "check that the corners are the mat's own, in pixels of this image"
        if manual
        else "give the mat's four corners by hand"
    )
    for b in result.baselines:
        if not (b.found and b.rms_residual_mm > MAX_BASELINE_RMS_MM):
            continue
        if rough and not manual:
            return CalibrationFailure(
                FailureReason.FAINT_EDGES_UNVERIFIED,
                "calibration refused: the mat's four baselines were found, but its edges are "
                "too faint against the table (or too dim) to fit a camera that agrees with "
                f"them: it misses one by {b.rms_residual_mm:.1f} mm RMS (at most "
                f"{MAX_BASELINE_RMS_MM} mm in a right fit); photograph the mat on a table of a "
                "different colour or in more even light, or give its four corners by hand",
            )
        return CalibrationFailure(
            FailureReason.EVIDENCE_DISAGREES,
            f"calibration refused: the camera fitted to the {where} outline misses a "
            f"baseline it found by {b.rms_residual_mm:.1f} mm RMS (at most "
            f"{MAX_BASELINE_RMS_MM} mm in a right fit): the outline is probably not the "
            f"mat's own; {advice}",
        )
    return None


def _baseline_absent(
    image_lab: npt.NDArray[np.float32], camera: CameraModel, *, manual: bool = True
) -> CalibrationFailure | None:
    """A failure when ``camera`` puts a baseline in plain view where none shows, else None.

    Only when another baseline shows plainly (:data:`PLAIN_BASELINE_FRACTION`)
    and the missing one is wholly in the picture and seen nearly as finely
    (:data:`ABSENT_BASELINE_COARSER`): corners given by hand that take in a
    strip of board beside the mat give a camera right at the mat's far end,
    whose baselines it fits, and wrong at the near end, where it puts baselines
    (rule 2.3.1) on felt that shows none. So can an outline found in the photo
    (``manual`` False): generated game q362's took in the beige table beyond
    one short end of a blue-grey mat, out to the table's edge against a dark
    floor, and was accepted with two baselines, 230 mm wrong at that end.
    """
    w_px, h_px = camera.image_size_wh
    half_width_px = profile_half_width_px(camera)
    seen = []
    for corner in MAT_CORNERS_MM:
        curve = baseline_curve(camera, corner)
        _, found, _ = ridge_points(image_lab, curve, half_width_px, on_slopes=True)
        in_view = bool(
            np.all((curve.image_xy_px >= 0) & (curve.image_xy_px <= [w_px - 1, h_px - 1]))
        )
        on_long, on_short, _ = baseline_segment_mm(corner)
        mm_per_px = camera.mm_per_px_at([*(on_long + on_short) / 2, 0.0])
        seen.append((corner, float(found.mean()) if len(found) else 0.0, in_view, mm_per_px))
    plain = [s for s in seen if s[1] >= PLAIN_BASELINE_FRACTION]
    if not plain:
        return None
    finest = min(plain, key=lambda s: s[3])
    for corner, fraction, in_view, mm_per_px in seen:
        if (
            in_view
            and fraction < ABSENT_BASELINE_FRACTION
            and mm_per_px <= ABSENT_BASELINE_COARSER * finest[3]
        ):
            where = "given corners" if manual else "found outline"
            advice = (
                "the corners are probably not the mat's own (a board's or paper's edge); "
                "check that the corners are the mat's own, in pixels of this image"
                if manual
                else "the outline takes in a strip of table or board beside the mat; give the "
                "mat's four corners by hand"
            )
            return CalibrationFailure(
                FailureReason.EVIDENCE_DISAGREES,
                f"calibration refused: the camera fitted to the {where} puts the "
                f"baseline of the corner ({corner[0]:+.0f}, {corner[1]:+.0f}) mm where the "
                f"photo shows no line (along {fraction:.0%} of it), though the one of the "
                f"corner ({finest[0][0]:+.0f}, {finest[0][1]:+.0f}) mm shows plainly: {advice}",
            )
    return None


def _pot_not_at_centre(
    image_lab: npt.NDArray[np.float32], camera: CameraModel
) -> CalibrationFailure | None:
    """A failure unless the pot's rim shows at the mat's centre, for a fit to faint edges.

    Faint edges under grain leave the mat's middle to the baselines, which lie
    in its corners: a camera can put all four where they are and still be
    tens of mm wrong in between (its lens distortion fitted to grain). The
    pot (rule 2.4) stands at the centre, so it is the witness there.
    """
    pot = find_pot_rim(image_lab, camera)
    offset_mm = float(np.hypot(*pot.centre_mm)) if pot.found else float("nan")
    if offset_mm <= MAX_FAINT_POT_OFFSET_MM:
        return None
    seen = (
        f"found {offset_mm:.1f} mm from the centre (at most {MAX_FAINT_POT_OFFSET_MM} mm)"
        if pot.found
        else "not seen where it puts the centre"
    )
    return CalibrationFailure(
        FailureReason.FAINT_EDGES_UNVERIFIED,
        "calibration refused: the mat's edges are too faint against the table to be sure "
        f"of the camera, and the pot's rim, which would vouch for it, is {seen}; give the "
        "mat's four corners by hand, or photograph it on a table of a different colour",
    )


def _edges_show_no_step(
    image_lab: npt.NDArray[np.float32], camera: CameraModel, *, manual: bool
) -> CalibrationFailure | None:
    """A failure when an edge, or both edges of one pair, show no felt/table step, else None.

    A camera that puts one or two edges of the mat on the table (a plank's
    seam, the grain, the far side of a beige table) can still fit their edge
    points and the baselines at one end; but a mat's edge is where felt gives
    way to table, so it shows a step.
    """
    steps = edge_colour_steps(image_lab, camera)
    strongest = float(np.nanmax(steps)) if np.any(np.isfinite(steps)) else 0.0
    where = "given" if manual else "found"
    advice = (
        "check that the corners are the mat's own, in pixels of this image"
        if manual
        else "give the mat's four corners by hand"
    )
    # A single edge out on the table, the other three on the mat's: the
    # strongest step may be the table's own edge against the floor, and two
    # edges may both run beside a dark floor, so the next weakest edge is the
    # yardstick (a pale mat on a pale table shows two weak edges of like step).
    finite = np.flatnonzero(np.isfinite(steps))
    if len(finite) >= 3:
        order = finite[np.argsort(steps[finite])]
        weakest, next_weakest = int(order[0]), float(steps[order[1]])
        if next_weakest > 0 and float(steps[weakest]) < MIN_EDGE_STEP_TO_NEXT * next_weakest:
            return CalibrationFailure(
                FailureReason.EVIDENCE_DISAGREES,
                f"calibration refused: the camera fitted to the {where} outline puts one "
                f"{_EDGE_NAMES[weakest]} edge of the mat where the colour hardly changes "
                f"(step {steps[weakest]:.1f} against {next_weakest:.1f} on the next weakest "
                f"edge): it is on the table, not the mat's edge; {advice}",
            )
    for name, pair in (("long", (0, 2)), ("short", (1, 3))):
        pair_steps = steps[list(pair)]
        if not np.all(np.isfinite(pair_steps)) or strongest <= 0:
            continue
        if float(pair_steps.max()) < MIN_EDGE_STEP_RATIO * strongest:
            return CalibrationFailure(
                FailureReason.EVIDENCE_DISAGREES,
                f"calibration refused: the camera fitted to the {where} outline puts both "
                f"{name} edges of the mat where the colour does not change (steps "
                f"{pair_steps[0]:.1f} and {pair_steps[1]:.1f} against {strongest:.1f} on the "
                f"clearest edge): they are on the table, not the mat's edges; {advice}",
            )
    return None


#: Edges in the order of ``edge_lines()`` (y-, x+, y+, x-), by which pair they belong to.
_EDGE_NAMES = ("long", "short", "long", "short")


def find_mat(image_bgr: UInt8Array) -> MatFit | CalibrationFailure:
    """Find the mat and fit a camera to its edges and baselines.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray

    Returns
    -------
    MatFit or CalibrationFailure
        The failure is falsy and carries a :class:`FailureReason` and a message.
    """
    h, w = np.shape(image_bgr)[:2]
    if min(h, w) < MIN_IMAGE_SIDE_PX:
        return CalibrationFailure(
            FailureReason.IMAGE_TOO_SMALL,
            f"the image is {w}x{h} pixels; calibration needs at least {MIN_IMAGE_SIDE_PX} "
            "pixels on each side",
        )
    return _auto_fit(image_bgr, None)


def _auto_fit(image_bgr: UInt8Array, dist_coeffs: FloatArray | None) -> MatFit | CalibrationFailure:
    """Try the few best outlines in turn; the first that fits a camera is the mat.

    When none does, look again with the faint-edge search (a felt close to the
    table's colour) and try the new outlines it gives.
    """
    found = find_mat_quads(image_bgr)
    image_lab = image_lab_float(image_bgr)
    failures: list[CalibrationFailure] = []
    accepted: list[MatFit] = []
    tried: list[FloatArray] = []
    partial_in_view = False
    # The ordinary search; then, for a felt close to the table's colour, the
    # outlines its four baselines imply; then the faint-edge search.
    for search in ("ordinary", "baselines", "coarse"):
        coarse = search != "ordinary"
        if search == "baselines":
            found = (find_mat_quads_from_baselines(image_bgr, max_count=COARSE_OUTLINES), False)
        elif search == "coarse":
            found = find_mat_quads(image_bgr, max_count=COARSE_OUTLINES, coarse=True)
        if isinstance(found, CalibrationFailure):
            if not coarse:
                failures.append(found)
            continue
        quads, partial = found
        # The faint-edge search sees more regions run out of the picture (table
        # planks, floor): only the ordinary search's verdict says "partly in view".
        partial_in_view |= partial and not coarse
        for quad in quads:
            corners = quad.corners_image_xy_px
            if any(np.abs(corners - t).max() < 2.0 for t in tried):
                continue
            tried.append(corners)
            fitted = _fit(image_lab, corners, dist_coeffs, rough=coarse)
            if isinstance(fitted, MatFit):
                accepted.append(fitted)
                if _found_baselines(fitted) == len(fitted.pipeline.baselines):
                    break
            elif not coarse or fitted.reason == FailureReason.FAINT_EDGES_UNVERIFIED:
                # The fallback searches either find the mat or leave the
                # ordinary search's verdict (and its message) as it was,
                # unless they saw the mat's baselines but could not vouch
                # for the camera: that says more.
                failures.append(fitted)
        if accepted:
            break
    if accepted:
        # An outline that takes in a piece of table or paper with the mat can
        # still fit a camera that shows two baselines; the mat's own outline
        # shows more. Ties keep the better-ranked outline.
        return max(accepted, key=_found_baselines)
    # The most telling failure: the mat's baselines seen but its faint edges
    # not vouched for by the pot, then a camera the image disagrees with, then a
    # rectangle that fitted a camera but showed no baselines, then one whose
    # corners left the picture, then the rest.
    rank = {
        FailureReason.FAINT_EDGES_UNVERIFIED: -1,
        FailureReason.EVIDENCE_DISAGREES: 0,
        FailureReason.NO_BASELINES: 1,
        FailureReason.MAT_PARTLY_OUT_OF_FRAME: 2,
    }
    failures.sort(key=lambda f: rank.get(f.reason, 2))
    first = failures[0] if failures else None
    # All four baselines seen in the picture say the mat is in view.
    unverified = first is not None and first.reason == FailureReason.FAINT_EDGES_UNVERIFIED
    if partial_in_view and not unverified:
        return CalibrationFailure(
            FailureReason.MAT_PARTLY_OUT_OF_FRAME,
            "no whole mat in view: no outline fits a camera, and a uniform region (perhaps "
            "the mat) runs out of the picture; move the camera back or zoom out until the "
            "whole mat and some table show, or give the four corners by hand",
        )
    return first if first is not None else CalibrationFailure(FailureReason.NO_MAT, "no mat found")


def _no_baselines(found: int) -> CalibrationFailure:
    return CalibrationFailure(
        FailureReason.NO_BASELINES,
        f"no mat found: the best outline has {found} of the 4 baselines "
        "(rule 2.3.1) where a mat would have them; make sure the whole mat is in view, "
        "or give the four corners by hand (needed for a mat without baselines)",
    )


def _found_baselines(mat: MatFit) -> int:
    return sum(b.found for b in mat.pipeline.baselines)


def _parse_corners(corners: object, size_wh: tuple[int, int]) -> FloatArray:
    try:
        arr = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    except (TypeError, ValueError):
        raise BadCornersError(
            f"corners must be four (x, y) pixel pairs, but got {corners!r}"
        ) from None
    w, h = size_wh
    bad = [
        (float(x), float(y))
        for x, y in arr
        if not (np.isfinite(x) and np.isfinite(y) and 0 <= x <= w - 1 and 0 <= y <= h - 1)
    ]
    if bad:
        raise BadCornersError(
            f"corners {bad!r} lie outside the {w}x{h} image; give pixel coordinates inside it"
        )
    ordered = _clockwise(arr)
    area = abs(float(cv2.contourArea(ordered.astype(np.float32))))
    if area < 0.01 * w * h:
        raise BadCornersError(
            f"corners {arr.tolist()!r} enclose almost nothing; give the mat's four corners"
        )
    return ordered


def calibrate(
    image_bgr: UInt8Array,
    *,
    corners_image_px: npt.ArrayLike | None = None,
    dist_coeffs: npt.ArrayLike | None = None,
) -> Calibration:
    """Calibrate from one image of the mat.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    corners_image_px : (4, 2) array_like, optional
        The mat's four corners clicked or typed by hand, in any order; skips the
        search for the mat (the edges and baselines still refine them).
    dist_coeffs : (5,) array_like, optional
        Known lens distortion (OpenCV k1, k2, p1, p2, k3); estimated otherwise.

    Returns
    -------
    Calibration

    Raises
    ------
    UnreadableImageError, ImageTooSmallError, NoMatFoundError,
    MatPartlyOutOfFrameError, BadCornersError
        All ``ValueError``; the message says what was not found and what to do.
    """
    image = _check_image(image_bgr)
    h, w = image.shape[:2]
    dist = None if dist_coeffs is None else np.asarray(dist_coeffs, np.float64).reshape(-1)
    if dist is not None and dist.shape not in ((4,), (5,)):
        raise ValueError(f"dist_coeffs must have 4 or 5 entries, but got {dist.tolist()!r}")
    if dist is not None and dist.shape == (4,):
        dist = np.append(dist, 0.0)
    if corners_image_px is None:
        mat = _auto_fit(image, dist)
        method = "auto"
    else:
        outline = _parse_corners(corners_image_px, (w, h))
        method = "manual-corners"
        mat = _fit(image_lab_float(image), outline, dist, manual=True)
    if isinstance(mat, CalibrationFailure):
        if min(h, w) < COARSE_SHORT_SIDE_PX and mat.reason is not FailureReason.IMAGE_TOO_SMALL:
            mat = CalibrationFailure(
                mat.reason,
                f"{mat.message}; the photo is only {w}x{h} pixels, which may be too coarse "
                "to find the mat's edges and baselines: use at least 1280x720",
            )
        raise _error_for(mat)
    return _finish(image, mat, method)


def _finish(image: UInt8Array, mat: MatFit, method: str) -> Calibration:
    fit = mat.pipeline.fit
    camera = fit.camera
    image_lab = image_lab_float(image)
    colours = read_corner_colours(image_lab, image, camera)
    baselines = list(mat.pipeline.baselines)
    corners_mm = MAT_CORNERS_MM.copy()
    offsets = fit.edge_offsets_mm.copy()
    # Canonical frame: blue's corner at y > 0. Turning the frame through 180
    # degrees maps corner i to corner i + 2 and edge i to edge i + 2.
    blue_mm = np.zeros(2)
    if colours.blue_corner_index is not None:
        blue_mm = MAT_CORNERS_MM[colours.blue_corner_index].copy()
    if colours.blue_corner_index is not None and blue_mm[1] < 0:
        blue_mm = -blue_mm
        camera = camera.with_half_turn()
        baselines = baselines[2:] + baselines[:2]
        offsets = np.roll(offsets, 2)
    corners_px = camera.mat_to_image(corners_mm)
    colour_corners: dict[Colour, tuple[float, float]] | None = None
    if colours.blue_corner_index is not None:
        # Blue's corner is the one with y > 0 on blue's side; the rest follow
        # clockwise seen from above, i.e. backwards through MAT_CORNERS_MM.
        blue_at = int(np.argmin(np.linalg.norm(corners_mm - blue_mm, axis=1)))
        colour_corners = {
            colour: (
                float(corners_mm[(blue_at - k) % 4][0]),
                float(corners_mm[(blue_at - k) % 4][1]),
            )
            for k, colour in enumerate(CLOCKWISE)
        }
    pot_px = camera.mat_to_image(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, POT_HEIGHT_MM]]))
    results = tuple(
        BaselineResult(
            corner_mm=corners_mm[i],
            found=b.found,
            rms_residual_mm=b.rms_residual_mm,
            image_xy_px=camera.mat_to_image(np.array(baseline_segment_mm(corners_mm[i])[:2])),
        )
        for i, b in enumerate(baselines)
    )
    return Calibration(
        camera=camera,
        corners_image_xy_px=corners_px,
        baselines=results,
        pot_image_xy_px=pot_px,
        reprojection_rms_px=float(np.sqrt(np.mean(fit.residual_px**2))),
        reprojection_rms_mm=float(np.sqrt(np.mean(fit.residual_mm**2))),
        mapping_sigma_mm=mapping_sigma_mm(
            fit, faint_edges=mat.pipeline.faint_edges, jackknife_mm=mat.pipeline.jackknife_mm
        ),
        edge_offsets_mm=offsets,
        orientation_known=colours.blue_corner_index is not None,
        colour=colours.reference,
        image_size_wh=(image.shape[1], image.shape[0]),
        method=method,
        corners_mm=colour_corners,
        pot=find_pot_rim(image_lab, camera),
    )
