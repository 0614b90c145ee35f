"""Benchmark `winkref review` on close-up photos with ground truth.

For every ``closeup_*.jpg`` with its ``.json`` in the given folders (default:
``/work/shared/scenes`` and ``sample_images``), the disputed pair is reviewed
as an umpire would ask for it: ``--near`` the midpoint of the two winks'
true image centres. With ``--default-pair`` the program picks the pair itself
(closest close pair to the photo's centre), which tests that choice too.

Some generated pile photos are drawn in painter's order by centre height, so
where the true upper wink's centre is lower than the lower wink's, the photo
shows the opposite of the truth; those rows are marked
``image_contradicts_truth`` and counted separately as well.

Prints per photo: truth (plan_gap_mm, squop, upper) against the verdict, and
then the rate right on pairs with |gap| >= 0.3 mm, the wrong calls that were
not "too close to call", and the median time per photo. When the program
reviewed another pair than the disputed one ("wrong pair"), its verdict is
still checked against the truth for the pair it picked (squop or not, and
which is on top), since an umpire would be shown that verdict too.

Rows say whether the pot's top rim helped fit the mat plane (``pot_used``,
from the verdict's notes), and the summary gives the tilt error on those photos.

With ``--true-plane`` each pair's overlap is also measured on the scene's
true mat plane (``overlap_true_plane``), which splits its error into the
fitted plane's part and the rest (outlines, how the winks rest); it doubles
the run time.

With ``--blur=SIGMA`` each photo is blurred by a Gaussian of SIGMA pixels
before it is reviewed (not timed): a photo out of focus. With
``--shake=LENGTH`` it is smeared along a line LENGTH pixels long instead, at
an angle fixed per photo (from its name): a shaken photo. The summary says on
how many photos the review allowed for a soft photo (its ``soft`` part).

With ``--exif`` each photo is given its lens as a phone's EXIF would tell
it: the scene camera's focal length in 35 mm terms, rounded to whole mm, as
``winkref review`` reads it from the file (``service.photos``). Without it
the lens is unknown, as for a photo whose EXIF was removed.

With ``--code=CHECKOUT`` the photos are reviewed by another checkout's code
(``git worktree add /tmp/old COMMIT``), so that a before and after are
measured by the same script.

Usage::

    .venv/bin/python benchmarks/review.py [--default-pair] [--true-plane]
        [--blur=SIGMA | --shake=LENGTH] [--exif] [--code=CHECKOUT] [FOLDER ...]
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

# --code=CHECKOUT reviews with another checkout's code (e.g. `git worktree add
# /tmp/old COMMIT`), measured by this script: a before/after with this
# script's options, such as --shake, that the older one lacks.
_CODE = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--code=")]
ROOT = Path(_CODE[-1]).resolve() if _CODE else Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from service.commands.review import review_any  # noqa: E402
from tools.groundtruth import GtWink, Scene, load_scene  # noqa: E402
from vision import review as rv  # noqa: E402
from vision.closeup_geometry import MatPlane, PinholeIntrinsics  # noqa: E402
from vision.review import Verdict  # noqa: E402

DEFAULT_FOLDERS = [Path("/work/shared/scenes"), ROOT / "sample_images"]


def _truth_ids_for(verdict: Verdict, scene: Scene) -> dict[str, str]:
    """Map the verdict's wink labels to ground-truth ids by nearest image centre."""
    in_image = [w for w in scene.winks if w.in_image and w.pixel_centre is not None]
    out = {}
    for w in verdict.winks:
        c = np.asarray(w.ellipse.centre_xy_px)
        best = min(in_image, key=lambda g: float(np.hypot(*(np.asarray(g.pixel_centre) - c))))
        out[w.id] = best.id
    return out


def _picked_pair_result(verdict: Verdict, names: dict[str, str], by_id: dict[str, GtWink]) -> str:
    """Right or wrong for the pair the program reviewed, from the truth's squop relations."""
    a, b = (by_id[names[i]] for i in verdict.ids)
    truth_upper = a.id if b.id in a.squops else b.id if a.id in b.squops else None
    if verdict.squopped is None:
        return "too close"
    upper = names.get(verdict.upper) if verdict.upper else None
    if verdict.squopped == (truth_upper is not None) and (
        not verdict.squopped or upper == truth_upper
    ):
        return "right"
    return "WRONG"


def _tilt_error_deg(verdict: Verdict, scene: Scene) -> float | None:
    """Angle between the fitted mat normal and the scene camera's true one, degrees."""
    if verdict.plane_normal_camera is None:
        return None
    true_normal = -np.asarray(scene.camera.rotation)[:, 2]
    cos = abs(float(np.dot(true_normal, verdict.plane_normal_camera)))
    return round(float(np.degrees(np.arccos(min(1.0, cos)))), 2)


def _overlap_on_true_plane(image: np.ndarray, scene: Scene, near: tuple[float, float]) -> float:
    """The pair's overlap as review_photo measures it, but on the scene's true mat plane.

    Splits a pair's error into the plane's part (the verdict's overlap minus
    this) and the rest (this minus the truth: outlines, how the winks rest).
    The same steps as :func:`vision.review.review_photo` up to the estimate
    (:func:`vision.review._pair_setup`), on the photo as it reads it
    (:func:`vision.review.as_read`).
    """
    image, photo_per_read = rv.as_read(image)
    to_read = (1.0 / photo_per_read[0], 1.0 / photo_per_read[1])
    near = rv._rescaled_px(near, to_read)
    setup = rv._pair_setup(image, pair=None, near_xy_px=near, seed=0)
    cam = scene.camera
    normal = -np.asarray(cam.rotation)[:, 2]
    k = np.asarray(cam.camera_matrix)
    # The true camera's intrinsics in the pixels read (pixel centres kept).
    principal = rv._rescaled_px((float(k[0, 2]), float(k[1, 2])), to_read)
    true_plane = MatPlane(
        PinholeIntrinsics(float(k[0, 0]) * to_read[0], principal),
        normal,
        float(normal @ np.asarray(cam.translation_mm).reshape(3)),
    )
    return setup.overlap_on(true_plane)[0]


def _shaken(image: np.ndarray, length_px: int, name: str) -> np.ndarray:
    """``image`` smeared along a line ``length_px`` long, at an angle set by ``name``."""
    angle = math.radians(sum(name.encode()) * 37 % 180)
    size = length_px + 2
    kernel = np.zeros((size, size), np.float32)
    for u in np.linspace(-length_px / 2, length_px / 2, 4 * length_px):
        row = int(round((size - 1) / 2 + u * math.sin(angle)))
        col = int(round((size - 1) / 2 + u * math.cos(angle)))
        kernel[row, col] += 1.0
    return cv2.filter2D(image, -1, kernel / kernel.sum())


def _exif_hfov_deg(scene: Scene) -> float:
    """The lens a phone's EXIF would give for the scene's camera, as the service reads it."""
    from service.photos import FILM_DIAGONAL_MM, hfov_from_focal_35mm

    width_px, height_px = scene.camera.image_size_wh
    focal_px = float(scene.camera.camera_matrix[0, 0])
    focal_35mm = round(focal_px * FILM_DIAGONAL_MM / math.hypot(width_px, height_px))
    return hfov_from_focal_35mm(focal_35mm, width_px, height_px)


def main(
    folders: list[Path],
    default_pair: bool,
    true_plane: bool = False,
    blur_px: float = 0.0,
    shake_px: int = 0,
    exif: bool = False,
) -> int:
    rows = []
    times = []
    for folder in folders:
        for jpg in sorted(folder.glob("closeup_*.jpg")):
            gt_path = jpg.with_suffix(".json")
            if not gt_path.exists():
                continue
            scene = load_scene(gt_path)
            disputed = scene.disputed
            if disputed is None or disputed.plan_gap_mm is None:
                continue
            by_id = scene.by_id
            pc = [by_id[i].pixel_centre for i in disputed.ids]
            near = ((pc[0][0] + pc[1][0]) / 2, (pc[0][1] + pc[1][1]) / 2)
            blurred = None
            if blur_px > 0:
                blurred = cv2.GaussianBlur(cv2.imread(str(jpg)), (0, 0), blur_px)
            elif shake_px > 0:
                blurred = _shaken(cv2.imread(str(jpg)), shake_px, jpg.name)
            t0 = time.perf_counter()
            image = cv2.imread(str(jpg)) if blurred is None else blurred
            try:
                # As `winkref review` runs it: a large photo that the close-up
                # reader cannot call is also looked over for a whole mat.
                lens = {"hfov_deg": _exif_hfov_deg(scene)} if exif else {}
                verdict = review_any(image, near_xy_px=None if default_pair else near, **lens)
                err = None
            except ValueError as exc:
                verdict, err = None, str(exc)
            seconds = time.perf_counter() - t0
            times.append(seconds)
            truth_gap = float(disputed.plan_gap_mm)
            truth_squop = bool(disputed.squop)
            painter = bool(
                disputed.squop
                and disputed.upper is not None
                and disputed.lower is not None
                and by_id[disputed.upper].centre_mm[2] < by_id[disputed.lower].centre_mm[2]
            )
            row = {
                "photo": jpg.name,
                "kind": disputed.kind,
                "image_contradicts_truth": painter,
                "pair": list(disputed.ids),
                "gap": truth_gap,
                "squop": truth_squop,
                "upper": disputed.upper,
                "seconds": round(seconds, 2),
            }
            if verdict is None:
                row.update(result="error", detail=err)
            else:
                names = _truth_ids_for(verdict, scene)
                got_pair = sorted(names[i] for i in verdict.ids)
                same_pair = got_pair == sorted(disputed.ids)
                upper = names.get(verdict.upper) if verdict.upper else None
                row.update(
                    got_pair=got_pair,
                    overlap=round(verdict.overlap_mm, 3),
                    unc=round(verdict.uncertainty_mm, 3),
                    squopped=verdict.squopped,
                    got_upper=upper,
                    tilt=round(verdict.plane_tilt_deg, 1),
                    raised=verdict.upper_raised,
                    tilt_error=_tilt_error_deg(verdict, scene),
                    sigma={k: round(v, 3) for k, v in verdict.sigma_parts_mm},
                    pot_used=any("and the pot's rim" in n for n in verdict.notes),
                )
                if true_plane and same_pair:
                    row["overlap_true_plane"] = round(_overlap_on_true_plane(image, scene, near), 3)
                row["other_pairs_named"] = len(verdict.other_pairs)
                if not same_pair:
                    row["result"] = "wrong pair"
                    # Whether the verdict named the disputed pair as one about as near.
                    row["disputed_named"] = any(
                        sorted((names[p], names[q])) == sorted(disputed.ids)
                        for p, q, _ in verdict.other_pairs
                    )
                    if len(set(got_pair)) == 2:
                        row["picked_pair_result"] = _picked_pair_result(verdict, names, by_id)
                    else:
                        row["picked_pair_result"] = "two fits of one wink"
                elif verdict.squopped is None:
                    row["result"] = "too close"
                elif verdict.squopped == truth_squop and (
                    not truth_squop or upper == disputed.upper
                ):
                    row["result"] = "right"
                else:
                    row["result"] = "WRONG"
            rows.append(row)
            print(json.dumps(row))
    decisive = [r for r in rows if abs(r["gap"]) >= 0.3]
    right = sum(r["result"] == "right" for r in decisive)
    wrong = sum(r["result"] == "WRONG" for r in rows)
    print()
    print(f"photos: {len(rows)}")
    if decisive:
        print(
            f"right on |gap| >= 0.3 mm: {right}/{len(decisive)} "
            f"= {100 * right / len(decisive):.0f}%"
            " (target >= 95%)"
        )
    print(f"wrong calls not 'too close to call': {wrong} (target 0)")
    contra = [r for r in rows if r["image_contradicts_truth"]]
    if contra:
        print(
            f"of which on photos whose drawing order contradicts the truth: "
            f"{sum(r['result'] == 'WRONG' for r in contra)} (of {len(contra)} such photos)"
        )
    print(f"too close to call: {sum(r['result'] == 'too close' for r in rows)}")
    unseen_top = [
        r
        for r in rows
        if r["result"] == "too close" and r["got_upper"] is None and r["overlap"] > r["unc"]
    ]
    if unseen_top:
        right_overlap = sum(r["squop"] for r in unseen_top)
        print(
            f"  of which overlapping beyond doubt, which on top unseen: {len(unseen_top)} "
            f"(truly squopped: {right_overlap})"
        )
    print(f"wrong pair or error: {sum(r['result'] in ('wrong pair', 'error') for r in rows)}")
    picked = [r["picked_pair_result"] for r in rows if "picked_pair_result" in r]
    if picked:
        print(
            "  verdicts on the pair picked instead: "
            + ", ".join(f"{k} {picked.count(k)}" for k in sorted(set(picked)))
        )
    wrong_pair = [r for r in rows if r["result"] == "wrong pair"]
    if wrong_pair:
        reviewed = [r for r in rows if r["result"] not in ("wrong pair", "error")]
        print(
            "  the disputed pair named among the others about as near: "
            f"{sum(r['disputed_named'] for r in wrong_pair)} of {len(wrong_pair)}; "
            "others named beside the disputed pair: "
            f"{sum(r.get('other_pairs_named', 0) > 0 for r in reviewed)} of {len(reviewed)}"
        )
    if times:
        print(f"median time per photo: {statistics.median(times):.2f} s (target <= 1.5 s)")
        err = [
            abs(r["overlap"] + r["gap"])
            for r in rows
            if r.get("result") in ("right", "WRONG", "too close")
        ]
        if err:
            print(
                f"|overlap error|: median {statistics.median(err):.2f} mm, "
                f"95th pct {float(np.percentile(err, 95)):.2f} mm"
            )
        split = [r for r in rows if "overlap_true_plane" in r]
        if split:
            rest = [abs(r["overlap_true_plane"] + r["gap"]) for r in split]
            plane_part = [abs(r["overlap"] - r["overlap_true_plane"]) for r in split]
            print(
                f"on the true plane: |error| median {statistics.median(rest):.2f}, "
                f"95th pct {float(np.percentile(rest, 95)):.2f} mm; the fitted plane's part "
                f"|overlap - on true plane| median {statistics.median(plane_part):.2f}, "
                f"95th pct {float(np.percentile(plane_part, 95)):.2f} mm"
            )
            against = [
                abs(r["overlap"] - r["overlap_true_plane"]) / max(r["sigma"]["plane"], 1e-9)
                for r in split
                if "plane" in r["sigma"]
            ]
            if against:
                print(
                    "  the fitted plane's part in units of its stated one sigma: median "
                    f"{statistics.median(against):.1f}, "
                    f"95th pct {float(np.percentile(against, 95)):.1f}"
                )
        measured = [r for r in rows if r.get("result") in ("right", "WRONG", "too close")]
        if measured:
            # The stated uncertainty claims ~95 %: the truth must fall inside it that often.
            ratio = [abs(r["overlap"] + r["gap"]) / max(r["unc"], 1e-9) for r in measured]
            outside = sum(q > 1.0 for q in ratio)
            tilt_err = [r["tilt_error"] for r in measured if r.get("tilt_error") is not None]
            if tilt_err:
                print(
                    "plane tilt error against the true camera: median "
                    f"{statistics.median(tilt_err):.2f}, "
                    f"75th pct {np.percentile(tilt_err, 75):.2f}, "
                    f"90th pct {np.percentile(tilt_err, 90):.2f} degrees"
                )
            with_pot = [
                r for r in measured if r.get("pot_used") and r.get("tilt_error") is not None
            ]
            if with_pot:
                pot_err = [r["tilt_error"] for r in with_pot]
                print(
                    f"the pot's rim helped fit the plane on {len(with_pot)} photos: tilt error "
                    f"there median {statistics.median(pot_err):.2f}, max {max(pot_err):.2f} degrees"
                )
            plane_sigma = [r["sigma"]["plane"] for r in measured if "plane" in r["sigma"]]
            if plane_sigma:
                print(
                    "the mat plane's own one-sigma part: median "
                    f"{statistics.median(plane_sigma):.3f}, "
                    f"90th pct {np.percentile(plane_sigma, 90):.3f} mm"
                )
            soft = [r["sigma"].get("soft", 0.0) for r in measured]
            print(
                f"allowed for a soft photo on {sum(v > 0 for v in soft)} of {len(measured)} "
                f"pairs (that one-sigma part up to {max(soft):.2f} mm)"
            )
            print(
                f"truth outside the stated uncertainty: {outside} of {len(measured)} "
                f"({100 * (1 - outside / len(measured)):.0f} % inside, target >= 95 %); "
                f"95th pct |error| / uncertainty {float(np.percentile(ratio, 95)):.2f}, "
                f"median uncertainty {statistics.median(r['unc'] for r in measured):.2f} mm"
            )
    return 0


if __name__ == "__main__":
    default = "--default-pair" in sys.argv
    args = [Path(a) for a in sys.argv[1:] if not a.startswith("--")] or DEFAULT_FOLDERS
    blur = [float(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--blur=")]
    shake = [int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--shake=")]
    true_plane = "--true-plane" in sys.argv
    raise SystemExit(
        main(
            args,
            default,
            true_plane=true_plane,
            blur_px=blur[-1] if blur else 0.0,
            shake_px=shake[-1] if shake else 0,
            exif="--exif" in sys.argv,
        )
    )
