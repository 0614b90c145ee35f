"""Draw a frame's analysis on the frame: what the referee saw, for people to check.

Each wink is outlined in its colour with its id; squops are arrows from the
upper wink to the one beneath; piles are shaded; uncertain winks get a
magenta ring and a question mark; hidden regions are outlined; a panel gives
the tiddlies per colour (rule 19.1) and how many potted winks were inferred.
"""

from __future__ import annotations

import textwrap
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from calibration.camera import CameraModel
from rules.board import Board, Colour, Wink, WinkStatus

#: Outline colours (BGR), brighter than the winks so they stand out.
COLOUR_BGR: dict[Colour, tuple[int, int, int]] = {
    Colour.BLUE: (255, 120, 0),
    Colour.GREEN: (0, 200, 0),
    Colour.RED: (0, 0, 255),
    Colour.YELLOW: (0, 230, 255),
}
UNCERTAIN_BGR = (255, 0, 255)
HIDDEN_BGR = (0, 140, 255)
ARROW_BGR = (255, 255, 255)


class _Region(Protocol):
    @property
    def image_polygon_px(self) -> npt.NDArray[np.float64]: ...


def _rim_px(camera: CameraModel, wink: Wink, grow_mm: float = 1.5) -> npt.NDArray[np.float64]:
    z = float(getattr(wink, "top_z_mm", 1.5) or 1.5)
    r = wink.size.diameter_mm / 2 + grow_mm
    a = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    if wink.x_mm is None or wink.y_mm is None:
        raise ValueError(f"wink {wink.id!r} has no position to draw")
    pts = np.stack([wink.x_mm + r * np.cos(a), wink.y_mm + r * np.sin(a), np.full_like(a, z)], 1)
    return camera.mat_to_image(pts)


def _centre_px(camera: CameraModel, wink: Wink) -> npt.NDArray[np.float64]:
    xy = getattr(wink, "image_xy_px", None)
    if xy is not None:
        return np.asarray(xy, dtype=float)
    z = float(getattr(wink, "top_z_mm", 1.5) or 1.5)
    return camera.mat_to_image(np.array([[wink.x_mm, wink.y_mm, z]]))[0]


def annotate_frame(
    image_bgr: npt.NDArray[np.uint8],
    board: Board,
    camera: CameraModel,
    *,
    hidden_regions: tuple[_Region, ...] = (),
    notes: tuple[str, ...] = (),
) -> npt.NDArray[np.uint8]:
    """A copy of the frame with the board drawn on it.

    Parameters
    ----------
    image_bgr : (H, W, 3) uint8 ndarray
    board : Board
        The board from the frame (winks carry ``top_z_mm`` and
        ``image_xy_px`` when vision built them).
    camera : CameraModel
    hidden_regions : tuple of HiddenRegion
    notes : tuple of str
        Shown under the tiddlies panel (first few).

    Returns
    -------
    (H, W, 3) uint8 ndarray
    """
    out = image_bgr.copy()
    h, w = out.shape[:2]
    scale = max(0.35, w / 4800)
    thick = max(1, int(round(w / 2000)))
    placed = [wk for wk in board.winks if wk.x_mm is not None and wk.y_mm is not None]
    rims = {wk.id: _rim_px(camera, wk) for wk in placed}
    centres = {wk.id: _centre_px(camera, wk) for wk in placed}

    # Piles: shade the hull of each pile's winks.
    shade = out.copy()
    piles: dict[int, list[str]] = {}
    for wk in placed:
        if wk.pile is not None:
            piles.setdefault(wk.pile, []).append(wk.id)
    for members in piles.values():
        pts = np.vstack([rims[m] for m in members]).astype(np.float32)
        hull = cv2.convexHull(pts).reshape(-1, 2)
        cv2.fillPoly(shade, [np.round(hull * 4).astype(np.int32)], (255, 255, 255), cv2.LINE_AA, 2)
    out = cv2.addWeighted(shade, 0.35, out, 0.65, 0)

    for region in hidden_regions:
        poly = np.round(region.image_polygon_px * 4).astype(np.int32)
        cv2.polylines(out, [poly], True, HIDDEN_BGR, thick + 1, cv2.LINE_AA, 2)
        x, y = region.image_polygon_px.min(axis=0)
        cv2.putText(
            out,
            "hidden",
            (int(x), max(12, int(y) - 4)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            HIDDEN_BGR,
            thick,
            cv2.LINE_AA,
        )

    for wk in placed:
        outline_bgr = COLOUR_BGR[wk.colour]
        rim = np.round(rims[wk.id] * 4).astype(np.int32)
        cv2.polylines(out, [rim], True, outline_bgr, thick, cv2.LINE_AA, 2)
        if wk.uncertain:
            ring = np.round(_rim_px(camera, wk, grow_mm=5.0) * 4).astype(np.int32)
            cv2.polylines(out, [ring], True, UNCERTAIN_BGR, thick, cv2.LINE_AA, 2)
        cx, cy = rims[wk.id].max(axis=0)
        label = wk.id.split("-", 1)[1] + ("?" if wk.uncertain else "")
        label += {WinkStatus.UNPLAYED: " u", WinkStatus.OFF: " off"}.get(wk.status, "")
        cv2.putText(
            out,
            label,
            (int(cx) + 2, int(cy)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            outline_bgr,
            thick,
            cv2.LINE_AA,
        )

    for wk in placed:
        for low in wk.squops:
            if low not in centres:
                continue
            a, b = centres[wk.id], centres[low]
            cv2.arrowedLine(
                out,
                (int(round(a[0])), int(round(a[1]))),
                (int(round(b[0])), int(round(b[1]))),
                ARROW_BGR,
                thick,
                cv2.LINE_AA,
                tipLength=0.4,
            )

    # Panel: tiddlies per colour and potted counts.
    tiddlies = board.tiddlies or {}
    lines: list[tuple[str, tuple[int, int, int]]] = [("tiddlies (rule 19.1)", (255, 255, 255))]
    for colour in Colour:
        potted = board.count(colour, WinkStatus.POTTED)
        inferred = sum(
            1
            for wk in board.of_colour(colour)
            if wk.status is WinkStatus.POTTED and getattr(wk, "inferred", False)
        )
        extra = f"  potted {potted}" + (f" ({inferred} inferred)" if inferred else "")
        lines.append((f"{colour.value:<7}{tiddlies.get(colour, 0):>3}{extra}", COLOUR_BGR[colour]))
    flagged = sum(1 for wk in board.winks if wk.uncertain)
    if flagged:
        lines.append((f"{flagged} uncertain: umpire to review", UNCERTAIN_BGR))
    # Notes are wrapped, not cut, to at most about half the frame's width.
    char_w = cv2.getTextSize("abcdefghij", cv2.FONT_HERSHEY_SIMPLEX, scale * 1.1, thick)[0][0] / 10
    note_chars = max(24, int(0.5 * w / max(char_w, 1.0)))
    lines += [(text, (220, 220, 220)) for text in wrap_notes(notes[:3], note_chars)]
    line_h = int(34 * scale) + 4
    panel_w = 16 + max(
        cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale * 1.1, thick)[0][0]
        for text, _ in lines
    )
    cv2.rectangle(out, (0, 0), (panel_w, line_h * len(lines) + 10), (0, 0, 0), -1)
    for k, (text, text_bgr) in enumerate(lines):
        cv2.putText(
            out,
            text,
            (8, line_h * (k + 1)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale * 1.1,
            text_bgr,
            thick,
            cv2.LINE_AA,
        )
    return out


def wrap_notes(notes: tuple[str, ...], width_chars: int) -> list[str]:
    """The notes as panel lines of at most ``width_chars``, continuations indented.

    Parameters
    ----------
    notes : tuple of str
    width_chars : int
        At least 10.

    Returns
    -------
    list of str
        Every word of every note, in order.
    """
    lines: list[str] = []
    for note in notes:
        lines += textwrap.wrap(
            note, width=max(width_chars, 10), subsequent_indent="  ", break_on_hyphens=False
        ) or [""]
    return lines
