"""The umpire's verdict from an overhead webcam frame, where the mat calibration gives the scale.

The frame pipeline (:func:`vision.pipeline.analyze_frame`) already calls
every close pair with a parallax-corrected plan separation and its sigma;
this module picks the disputed pair the same way as for a close-up (named,
nearest a pixel, or nearest the frame's centre) and states the verdict in
the same form, so ``winkref review`` answers alike from either kind of photo.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from vision.closeup import ImageEllipse, fit_ellipse_direct
from vision.review import (
    COVERAGE_SIGMA,
    NoCandidatePairError,
    PairNotFoundError,
    ReviewedWink,
    Verdict,
    decide,
)

FloatArray = npt.NDArray[np.float64]

#: One-sigma modelling error of a webcam call, mm: the close-ups' flat allowance
#: as it was before their fitted plane got a part of its own (the webcam's
#: plane comes from the mat's calibration, so nothing here narrows it).
MODEL_SIGMA_MM = 0.12
#: Below this the frame does not show clearly which wink is on top.
MIN_UPPER_CONFIDENCE = 0.5


def _outline(
    camera: CameraModel, mat_xy_mm: FloatArray, z_mm: float, radius_mm: float
) -> ImageEllipse:
    t = np.linspace(0, 2 * np.pi, 36, endpoint=False)
    ring = np.column_stack(
        [
            mat_xy_mm[0] + radius_mm * np.cos(t),
            mat_xy_mm[1] + radius_mm * np.sin(t),
            np.full(len(t), z_mm),
        ]
    )
    image = camera.mat_to_image(ring)
    fit = fit_ellipse_direct(image)
    if fit is None:  # a degenerate view; a small circle keeps the drawing going
        c = image.mean(axis=0)
        return ImageEllipse((float(c[0]), float(c[1])), (3.0, 3.0), 0.0)
    return fit


def verdict_from_frame(
    analysis: object,
    camera: CameraModel,
    *,
    pair: tuple[str, str] | None = None,
    near_xy_px: tuple[float, float] | None = None,
) -> Verdict:
    """The verdict on one pair from a :class:`vision.pipeline.FrameAnalysis`.

    Pair ids here are the board's (``blue-L1``), as the frame's board names them.

    Raises
    ------
    PairNotFoundError, NoCandidatePairError
    """
    det = analysis.detections  # type: ignore[attr-defined]
    assembly = analysis.assembly  # type: ignore[attr-defined]
    ids = list(assembly.detection_ids)
    calls = [c for c in assembly.squops.calls if ids[c.upper] and ids[c.lower]]
    if pair is not None:
        missing = [p for p in pair if p not in ids]
        if missing:
            known = sorted(i for i in ids if i)
            raise PairNotFoundError(
                f"wink id(s) {missing!r} not found in the frame; the winks seen are {known!r}"
            )
        wanted = {ids.index(pair[0]), ids.index(pair[1])}
        chosen = [c for c in calls if {c.upper, c.lower} == wanted]
        if not chosen:
            raise NoCandidatePairError(
                f"{pair[0]} and {pair[1]} are not close enough to be a squop question "
                "(the frame's pipeline made no call on them)"
            )
        call = chosen[0]
    else:
        if not calls:
            raise NoCandidatePairError(
                "no two winks in the frame are close enough to dispute; name a pair with --pair"
            )
        w, h = camera.image_size_wh
        target = (
            np.asarray(near_xy_px, dtype=np.float64)
            if near_xy_px is not None
            else np.array([(w - 1) / 2, (h - 1) / 2])
        )

        def miss(c: object) -> float:
            mid = (det.image_xy_px[c.upper] + det.image_xy_px[c.lower]) / 2  # type: ignore[attr-defined]
            return float(np.hypot(*(mid - target)))

        call = min(calls, key=miss)
    # A whole mat holds many close pairs, and the disputed one need not be at
    # the frame's centre: the others the frame is unsure of are named.
    other_pairs = (
        tuple(
            (ids[c.upper], ids[c.lower], round(float(c.separation_mm), 2))
            for c in calls
            if c.uncertain and c is not call
        )[:5]
        if pair is None
        else ()
    )
    overlap = -float(call.separation_mm)
    uncertainty = COVERAGE_SIGMA * float(np.hypot(call.sigma_mm, MODEL_SIGMA_MM))
    squopped = decide(overlap, uncertainty)
    notes = [call.reason]
    if other_pairs:
        listed = ", ".join(f"{p},{q}" for p, q, _ in other_pairs)
        notes.append(
            f"this pair is the close one nearest the {'point given' if near_xy_px else 'centre'}; "
            f"the frame is also unsure of {listed}: for one of those, give --pair ID1,ID2"
        )
    upper = lower = None
    if squopped is not False:
        if call.upper_confidence >= MIN_UPPER_CONFIDENCE:
            upper, lower = ids[call.upper], ids[call.lower]
        elif squopped:
            squopped = None
            notes.append("the frame does not show clearly which wink is on top")
    winks = tuple(
        ReviewedWink(
            id=ids[k],
            colour=det.colour[k].value,
            ellipse=_outline(camera, det.mat_xy_mm[k], float(det.z_mm[k]), float(det.radius_mm[k])),
            plan_xy_mm=(float(det.mat_xy_mm[k][0]), float(det.mat_xy_mm[k][1])),
            diameter_mm=2 * float(det.radius_mm[k]),
            rim_visible_fraction=float(det.rim_visible_fraction[k]),
        )
        for k in range(len(det))
        if ids[k]
    )
    tilt = float(np.degrees(np.arccos(min(1.0, abs(float(camera.rotation[2, 2]))))))
    mid_mm = (det.mat_xy_mm[call.upper] + det.mat_xy_mm[call.lower]) / 2
    return Verdict(
        ids=(ids[call.upper], ids[call.lower]),
        squopped=squopped,
        upper=upper,
        lower=lower,
        overlap_mm=overlap,
        uncertainty_mm=uncertainty,
        upper_raised=False,
        plane_tilt_deg=tilt,
        mm_per_px=camera.mm_per_px_at([float(mid_mm[0]), float(mid_mm[1]), 0.0]),
        winks=winks,
        notes=tuple(notes),
        other_pairs=other_pairs,
    )
