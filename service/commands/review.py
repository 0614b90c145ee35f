"""``winkref review PHOTO``: the umpire's verdict on a disputed squop.

Reads a close-up photo (or two, from different sides: rule D.1), finds the
winks, and decides for the disputed pair whether one squops the other, by how
much, and how sure that is. Output is text for the players, or JSON with
``--json``; ``--annotate OUT.png`` writes a zoomed picture of the pair with
both rims, the overlap (or gap) filled, and the number in mm.
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from rules.board import MAT_WIDTH_MM
from service.outputs import check_output_path, write_image_atomic
from service.photos import NoLens, PhotoLens, load_photo, naming_photo, photo_lens
from vision.review import Verdict, combine, review_photo


class BadOptionError(ValueError):
    """An option value that cannot be parsed."""


def _same_photo(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (
            a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
        )
    except OSError:
        return False  # the loader will say what is wrong with the unreadable one


def parse_pair(text: str | None) -> tuple[str, str] | None:
    """``"W1,W2"`` -> ``("W1", "W2")``."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise BadOptionError(f"--pair wants two wink ids like W1,W2, but got {text!r}")
    if parts[0] == parts[1]:
        raise BadOptionError(f"--pair {text!r} names one wink twice; give two different ids")
    return parts[0], parts[1]


def parse_near(text: str | None) -> tuple[float, float] | None:
    """``"2010,1500"`` -> ``(2010.0, 1500.0)`` pixels."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        x, y = float(parts[0]), float(parts[1])
    except ValueError:
        raise BadOptionError(
            f"--near wants pixel coordinates like 2010,1500, but got {text!r}"
        ) from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise BadOptionError(f"--near wants finite pixel coordinates, but got {text!r}")
    return x, y


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The JSON form: the required fields first, then the evidence."""
    return {
        "squopped": verdict.squopped,
        "upper": verdict.upper,
        "lower": verdict.lower,
        "pair": list(verdict.ids),
        "overlap_mm": round(verdict.overlap_mm, 3),
        "uncertainty_mm": round(verdict.uncertainty_mm, 3),
        # Overlapping beyond doubt with the upper wink unseen is undecided
        # (squopped null) but not too close to call: "overlapping" says so.
        "too_close_to_call": verdict.squopped is None and verdict.overlapping is not True,
        "overlapping": verdict.overlapping,
        "summary": verdict.summary,
        "upper_raised": verdict.upper_raised,
        "plane_tilt_deg": round(verdict.plane_tilt_deg, 1),
        "mm_per_px": round(verdict.mm_per_px, 4),
        "notes": list(verdict.notes),
        "other_pairs": [{"pair": [a, b], "plan_gap_mm": gap} for a, b, gap in verdict.other_pairs],
        "winks": [
            {
                "id": w.id,
                "colour": w.colour,
                "diameter_mm": w.diameter_mm,
                "image_xy_px": [round(v, 1) for v in w.ellipse.centre_xy_px],
                "plan_xy_mm": [round(v, 2) for v in w.plan_xy_mm],
                "rim_visible_fraction": round(w.rim_visible_fraction, 2),
            }
            for w in verdict.winks
        ],
    }


def annotate(image_bgr: npt.NDArray[np.uint8], verdict: Verdict) -> npt.NDArray[np.uint8]:
    """A zoomed crop of the pair: both rims, the overlap or gap filled, the number in mm."""
    by_id = {w.id: w for w in verdict.winks}
    a, b = by_id[verdict.ids[0]], by_id[verdict.ids[1]]
    pts_a = a.ellipse.points(360)
    pts_b = b.ellipse.points(360)
    allpts = np.vstack([pts_a, pts_b])
    lo = np.floor(allpts.min(axis=0) - 0.3 * (allpts.max(axis=0) - allpts.min(axis=0)))
    hi = np.ceil(allpts.max(axis=0) + 0.3 * (allpts.max(axis=0) - allpts.min(axis=0)))
    h, w = image_bgr.shape[:2]
    x0, y0 = int(max(0, lo[0])), int(max(0, lo[1]))
    x1, y1 = int(min(w, hi[0])), int(min(h, hi[1]))
    crop = image_bgr[y0:y1, x0:x1].copy()
    scale = 900.0 / max(1, max(crop.shape[:2]))
    crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)

    def to_crop(p: npt.NDArray[np.float64]) -> npt.NDArray[np.int32]:
        return np.round((p - [x0, y0]) * scale * 8).astype(np.int32)  # 3 fractional bits

    mask_a = np.zeros(crop.shape[:2], np.uint8)
    mask_b = np.zeros(crop.shape[:2], np.uint8)
    cv2.fillPoly(mask_a, [to_crop(pts_a)], 255, cv2.LINE_AA, 3)
    cv2.fillPoly(mask_b, [to_crop(pts_b)], 255, cv2.LINE_AA, 3)
    lens = (mask_a > 0) & (mask_b > 0)
    colour = (
        (0, 0, 255)
        if verdict.squopped
        else (0, 200, 255)
        if verdict.squopped is None
        else (0, 200, 0)
    )
    if lens.any():
        overlay = crop.copy()
        overlay[lens] = colour
        crop = cv2.addWeighted(overlay, 0.6, crop, 0.4, 0)
    else:
        # A gap: mark the segment between the two rims along the line of centres.
        ca, cb = np.asarray(a.ellipse.centre_xy_px), np.asarray(b.ellipse.centre_xy_px)
        u = (cb - ca) / max(1e-9, float(np.linalg.norm(cb - ca)))
        ea = ca + u * _radius_along(a.ellipse, u)
        eb = cb - u * _radius_along(b.ellipse, -u)
        cv2.line(crop, tuple(to_crop(ea)), tuple(to_crop(eb)), colour, 3, cv2.LINE_AA, 3)
        # The gap is a few pixels even zoomed: ring it so the eye finds it.
        mid = (ea + eb) / 2
        cv2.circle(crop, tuple(to_crop(mid)), 8 * 22, colour, 3, cv2.LINE_AA, 3)
    cv2.polylines(crop, [to_crop(pts_a)], True, (255, 255, 255), 2, cv2.LINE_AA, 3)
    cv2.polylines(crop, [to_crop(pts_b)], True, (40, 40, 40), 2, cv2.LINE_AA, 3)
    for wk in (a, b):
        c = (np.asarray(wk.ellipse.centre_xy_px) - [x0, y0]) * scale
        # A white halo under black text reads on any wink colour.
        for ink, thickness in (((255, 255, 255), 3), ((0, 0, 0), 1)):
            cv2.putText(
                crop,
                wk.id,
                (int(c[0]) - 20, int(c[1]) + 10),
                cv2.FONT_HERSHEY_SIMPLEX,
                1.0,
                ink,
                thickness,
                cv2.LINE_AA,
            )
    lines = textwrap.wrap(verdict.summary, width=max(20, int(crop.shape[1] / 13)))
    band = np.full((20 + 30 * len(lines), crop.shape[1], 3), 255, np.uint8)
    for k, line in enumerate(lines):
        cv2.putText(
            band, line, (10, 30 + 30 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (0, 0, 0), 2, cv2.LINE_AA
        )
    return np.vstack([crop, band])


def _radius_along(ellipse: Any, direction: npt.NDArray[np.float64]) -> float:
    a, b = ellipse.semi_axes_px
    c, s = math.cos(ellipse.angle_rad), math.sin(ellipse.angle_rad)
    x = direction[0] * c + direction[1] * s
    y = -direction[0] * s + direction[1] * c
    return 1.0 / math.sqrt((x / a) ** 2 + (y / b) ** 2)


#: Frames up to this wide are webcam-sized; phone close-ups are 3000-4000 px.
WEBCAM_MAX_WIDTH_PX = 2600


#: A large photo is first looked over for a whole mat at this width: a failed
#: search on a close-up costs 0.3-0.8 s here (4-6 s on a cluttered one, against
#: 5-12 s at 1920 px), and at 960 px a whole mat's fit can miss its tolerance.
MAT_PROBE_WIDTH_PX = 1280

#: A close-up whose own scale says it spans less than this fraction of the
#: mat's width is not looked over for a whole mat: a photo with the whole mat
#: in view spans at least its width (914 mm, upright), and the close-up's
#: scale is not off by twice (a large wink read as a small, or a pile as one
#: wink, is off by 1.4-1.5 times). Close-ups taken 15-40 cm away span about
#: 150-550 mm: those up to about 450 mm (33 cm away) are not searched.
CLOSEUP_FIELD_OF_MAT_WIDTH = 0.5


def _mat_verdict(
    image: npt.NDArray[np.uint8],
    *,
    pair: tuple[str, str] | None,
    near_xy_px: tuple[float, float] | None,
) -> Verdict | None:
    """The verdict through the mat calibration, or None when no whole mat is in view."""
    from calibration import calibrate

    if image.shape[1] > WEBCAM_MAX_WIDTH_PX:
        scale = MAT_PROBE_WIDTH_PX / image.shape[1]
        probe = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        try:
            calibrate(probe)
        except ValueError:
            return None
    try:
        calibration = calibrate(image)
    except ValueError:
        return None
    from vision.pipeline import analyze_frame
    from vision.review_webcam import verdict_from_frame

    analysis = analyze_frame(image, calibration)
    return verdict_from_frame(analysis, calibration.camera, pair=pair, near_xy_px=near_xy_px)


def _too_near_for_a_mat(closeup: Verdict, image: npt.NDArray[np.uint8]) -> bool:
    """Whether the close-up's own scale rules out a whole mat in the photo.

    Parameters
    ----------
    closeup : Verdict
        The photo read as a close-up; its ``mm_per_px`` is the mat plane's scale.
    image : (h, w, 3) ndarray of uint8
        The photo.

    Returns
    -------
    bool
        True when the photo spans under :data:`CLOSEUP_FIELD_OF_MAT_WIDTH` of
        the mat's width at the close-up's scale.
    """
    field_mm = image.shape[1] * closeup.mm_per_px
    return bool(field_mm < CLOSEUP_FIELD_OF_MAT_WIDTH * MAT_WIDTH_MM)


def review_any(
    image: npt.NDArray[np.uint8],
    *,
    pair: tuple[str, str] | None = None,
    near_xy_px: tuple[float, float] | None = None,
    hfov_deg: float | None = None,
) -> Verdict:
    """Review a close-up, or a photo of the whole mat (the mat calibration gives the scale).

    ``hfov_deg`` is the close-up's lens, when the photo tells it
    (:func:`service.photos.photo_lens`); see :func:`vision.review.review_photo`.

    A webcam-sized frame is tried as a whole-mat photo first. A larger photo is
    usually a phone close-up, and looking for a mat in one costs time, so it is
    read as a close-up first. When that finds no pair, not the pair named, no
    close-up's scale, or cannot call it, the photo may show the whole mat after
    all (a phone's photo of it: its winks are too small for the close-up
    reader, which then sees a pile as one wink); if a mat is found, its
    calibration decides. Not when the close-up's own scale says the photo
    spans too little of the mat for all of it to be in view: the search would
    only cost time (2-4 s on a cluttered close-up).
    """
    if image.shape[1] <= WEBCAM_MAX_WIDTH_PX:
        verdict = _mat_verdict(image, pair=pair, near_xy_px=near_xy_px)
        if verdict is not None:
            return verdict
        return review_photo(image, pair=pair, near_xy_px=near_xy_px, hfov_deg=hfov_deg)
    try:
        closeup = review_photo(image, pair=pair, near_xy_px=near_xy_px, hfov_deg=hfov_deg)
    except ValueError as closeup_error:
        verdict = _mat_verdict(image, pair=pair, near_xy_px=near_xy_px)
        if verdict is None:
            raise closeup_error from None
        return verdict
    if closeup.squopped is not None or _too_near_for_a_mat(closeup, image):
        return closeup
    try:
        verdict = _mat_verdict(image, pair=pair, near_xy_px=near_xy_px)
    except ValueError:
        # The mat's reading cannot answer for this pair (e.g. --pair W1,W2 names
        # the close-up's own labels): the close-up's honest answer stands.
        return closeup
    return closeup if verdict is None else verdict


def _pair_kinds(verdict: Verdict) -> list[tuple[str | None, str]]:
    by_id = {w.id: w for w in verdict.winks}
    return sorted(
        ((by_id[i].colour, by_id[i].size) for i in verdict.ids),
        key=lambda kind: (kind[0] or "", kind[1]),
    )


def pair_differs(first: Verdict, second: Verdict) -> str | None:
    """How the second photo's pair differs from the first's by colour and size, or None.

    A colour not told (a faint wink) matches any colour.
    """
    a, b = _pair_kinds(first), _pair_kinds(second)

    def matches(p: list[tuple[str | None, str]], q: list[tuple[str | None, str]]) -> bool:
        return all(
            ps == qs and (pc is None or qc is None or pc == qc)
            for (pc, ps), (qc, qs) in zip(p, q, strict=True)
        )

    if matches(a, b) or matches(a, b[::-1]):
        return None

    def words(kinds: list[tuple[str | None, str]]) -> str:
        return " and ".join(f"a {size} {colour or 'unknown-colour'} wink" for colour, size in kinds)

    return f"it shows {words(b)}, the first photo {words(a)}"


def lens_of(path: Path, image: npt.NDArray[np.uint8]) -> PhotoLens | NoLens:
    """The lens the photo at ``path`` tells, read as ``image`` (upright)."""
    return photo_lens(path, image.shape[1], image.shape[0])


def hfov_of(lens: PhotoLens | NoLens) -> float | None:
    """The field of view to review through: the lens told, or None (unknown)."""
    return lens.hfov_deg if isinstance(lens, PhotoLens) else None


def _with_lens_note(verdict: Verdict, lens: PhotoLens | NoLens) -> Verdict:
    """The verdict with what the photo told of its lens, when a close-up's plane used it."""
    if verdict.plane_normal_camera is None:
        return verdict  # read through the mat's calibration, which fits its own lens
    return replace(verdict, notes=(*verdict.notes, lens.note))


def run(
    photo: Path,
    *,
    pair: str | None = None,
    near: str | None = None,
    json_output: bool = False,
    annotate_path: Path | None = None,
    second: Path | None = None,
) -> str:
    """Review the disputed pair and return the text to print."""
    if pair is not None and near is not None:
        raise BadOptionError("give either --pair or --near, not both")
    pair_ids = parse_pair(pair)
    near_xy = parse_near(near)
    if annotate_path is not None:
        check_output_path(
            annotate_path, option="--annotate", inputs=[photo, *filter(None, [second])], image=True
        )
    if second is not None and _same_photo(photo, second):
        # The same photo twice would count one view as two and halve the stated error.
        raise BadOptionError(
            f"--second {str(second)!r} is the same file as the photo; "
            "give a photo taken from another side"
        )
    image = load_photo(photo)
    if near_xy is not None:
        height_px, width_px = image.shape[:2]
        if not (0 <= near_xy[0] < width_px and 0 <= near_xy[1] < height_px):
            raise BadOptionError(
                f"--near {near!r} is outside the {width_px}x{height_px} photo; "
                "give a pixel inside it (x across, y down from the top-left corner)"
            )
    image2 = load_photo(second) if second is not None else None
    with naming_photo(photo):
        lens = lens_of(photo, image)
        verdict = _with_lens_note(
            review_any(image, pair=pair_ids, near_xy_px=near_xy, hfov_deg=hfov_of(lens)), lens
        )
    if second is not None and image2 is not None:
        # The second photo's labels differ; its disputed pair is the one nearest its centre.
        try:
            with naming_photo(second):
                other = review_any(image2, hfov_deg=hfov_of(lens_of(second, image2)))
        except ValueError as exc:
            # The first photo's verdict stands: a second view that shows no
            # pair adds nothing, as one of another pair does.
            # (Its advice, e.g. --pair, would be about the second photo: left out.)
            other, differs = None, f"it could not be reviewed ({str(exc).split('; ')[0]})"
        else:
            differs = pair_differs(verdict, other)
        if other is not None and differs is None:
            verdict = combine(verdict, other)
        else:
            verdict = replace(
                verdict,
                notes=(
                    *verdict.notes,
                    f"the second photo was not combined: {differs}; this verdict is the "
                    "first photo's alone (photograph the same pair from another side)",
                ),
            )
    if annotate_path is not None:
        write_image_atomic(annotate_path, annotate(image, verdict), option="--annotate")
    if json_output:
        return json.dumps(verdict_json(verdict), indent=2)
    lines = [verdict.summary]
    lines.append(
        "winks found: "
        + ", ".join(
            f"{w.id} ({w.colour or '?'} {w.size} "
            f"at {w.ellipse.centre_xy_px[0]:.0f},{w.ellipse.centre_xy_px[1]:.0f} px)"
            for w in verdict.winks
        )
    )
    lines.extend(f"note: {n}" for n in verdict.notes)
    return "\n".join(lines)
