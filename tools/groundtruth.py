"""Load scene ground truth (``tiddlywinks-gt/1``) for tests and benchmarks.

The format is described in ``/work/shared/scenes/README.md`` and produced by
:mod:`tools.scenegen`. Frame: mat millimetres, origin at the mat's centre,
x along the long side, y along the short side, z up, mat top at z = 0.

Usage::

    scene = load_scene("sample_images/overhead_00101.json")
    scene = to_canonical_frame(scene)  # blue's corner at y > 0
    scene.camera.mat_to_image(...)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from calibration.camera import CameraModel
from rules.board import Board, Colour, Wink, WinkSize, WinkStatus

GT_FORMAT = "tiddlywinks-gt/1"

_FROZEN = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]


class GroundTruthError(ValueError):
    """A ground-truth file that cannot be read or does not match the format."""


class MatInfo(BaseModel):
    """The mat: size and thickness (the table top is at ``table_z_mm``)."""

    model_config = _FROZEN

    length_mm: float
    width_mm: float
    thickness_mm: float
    table_z_mm: float


class Baseline(BaseModel):
    """One colour's corner and baseline ends (``p1`` on the long edge, ``p2`` on the short)."""

    model_config = _FROZEN

    colour: Colour
    corner: Vec2
    p1: Vec2
    p2: Vec2


class PotInfo(BaseModel):
    """The pot (rule 2.4): a truncated cone standing on the mat."""

    model_config = _FROZEN

    centre_mm: Vec3
    height_mm: float
    top_diameter_mm: float
    base_diameter_mm: float
    material: str


class GtWink(BaseModel):
    """One wink's exact state in the scene (fields as in the scenes README)."""

    model_config = _FROZEN

    id: str
    colour: Colour
    size: WinkSize
    diameter_mm: float
    thickness_mm: float
    bevel_mm: float = 0.0
    centre_mm: Vec3
    axis: Vec3
    tilt_deg: float
    status: WinkStatus
    squops: tuple[str, ...] = ()
    squopped_by: tuple[str, ...] = ()
    pile: int | None = None
    nearest_plan_gap_mm: float | None = None
    nearest_id: str | None = None
    pot_gap_mm: float | None = None
    pixel_centre: Vec2 | None = None
    in_image: bool = False

    @property
    def mat_xy_mm(self) -> Vec2:
        """Plan-view centre ``(x_mm, y_mm)``."""
        return (self.centre_mm[0], self.centre_mm[1])


class ColourCounts(BaseModel):
    """How many winks of one colour have each status, and the tiddlies (rule 19.1)."""

    model_config = _FROZEN

    potted: int
    free: int
    squopped: int
    unplayed: int
    off: int
    tiddlies: int


class MarginalPair(BaseModel):
    """A pair whose plan-view separation is within 1.5 mm (negative = overlap)."""

    model_config = _FROZEN

    ids: tuple[str, str]
    plan_gap_mm: float
    squop: bool
    upper: str | None = None


class Disputed(BaseModel):
    """The pair a closeup was taken to settle."""

    model_config = _FROZEN

    ids: tuple[str, ...]
    kind: str
    squop: bool
    upper: str | None = None
    lower: str | None = None
    plan_gap_mm: float | None = None


class Scene(BaseModel):
    """A whole ground-truth file.

    ``camera`` is the project's :class:`~calibration.camera.CameraModel`;
    the descriptive camera numbers (``position_mm``, ``tilt_deg``, ...) are
    kept in ``camera_info`` so that the file round-trips.
    """

    model_config = _FROZEN

    format: str = GT_FORMAT
    scene_id: str
    profile: str
    units: str = "mm"
    frame: str = ""
    mat: MatInfo
    baselines: tuple[Baseline, ...]
    pot: PotInfo | None
    camera: CameraModel
    camera_info: dict[str, Any] = Field(default_factory=dict)
    winks: tuple[GtWink, ...]
    counts: dict[Colour, ColourCounts]
    marginal_pairs: tuple[MarginalPair, ...] = ()
    disputed: Disputed | None = None
    #: False only for generated bad-input scenes with no mat (``nomat``).
    mat_in_view: bool = True
    #: Set by the project's generator; absent from photographed scenes.
    generator: str | None = None

    # ---- construction ----------------------------------------------------

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any], *, where: str = "scene") -> Scene:
        """Parse the JSON form.

        Raises
        ------
        GroundTruthError
            When the format tag is wrong or a field is missing or malformed.
        """
        if data.get("format") != GT_FORMAT:
            raise GroundTruthError(
                f"{where}: format is {data.get('format')!r}, expected {GT_FORMAT!r}"
            )
        fields = dict(data)
        camera_block = dict(fields.pop("camera", {}))
        try:
            camera = CameraModel.from_json_dict(camera_block)
        except ValueError as exc:
            raise GroundTruthError(f"{where}.camera: {exc}") from None
        info = {k: v for k, v in camera_block.items() if k not in _CAMERA_MODEL_KEYS}
        try:
            return cls.model_validate({**fields, "camera": camera, "camera_info": info})
        except ValidationError as exc:
            problems = [
                f"{where}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            ]
            raise GroundTruthError("; ".join(problems)) from None

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form: the inverse of :meth:`from_json_dict`."""
        exclude = {"camera", "camera_info"}
        if self.mat_in_view:
            exclude.add("mat_in_view")
        if self.generator is None:
            exclude.add("generator")
        out = self.model_dump(mode="json", exclude=exclude)
        camera = self.camera.to_json_dict()
        camera.update(self.camera_info)
        ordered: dict[str, Any] = {}
        for key, value in out.items():
            if key == "winks":
                ordered["camera"] = camera
            ordered[key] = value
        return ordered

    # ---- queries ------------------------------------------------------------

    @property
    def by_id(self) -> dict[str, GtWink]:
        """Winks keyed by id."""
        return {w.id: w for w in self.winks}

    def baseline(self, colour: Colour) -> Baseline:
        """The baseline of one colour."""
        for b in self.baselines:
            if b.colour is colour:
                return b
        raise KeyError(f"scene {self.scene_id!r} has no {colour.value} baseline")

    @property
    def blue_corner_mm(self) -> Vec2:
        """Where blue's corner is in this scene's frame."""
        return self.baseline(Colour.BLUE).corner

    def to_board(self) -> Board:
        """The scene as a :class:`rules.board.Board` (potted winks without positions)."""
        winks = []
        for w in self.winks:
            potted = w.status is WinkStatus.POTTED
            winks.append(
                Wink(
                    id=w.id,
                    colour=w.colour,
                    size=w.size,
                    x_mm=None if potted else w.centre_mm[0],
                    y_mm=None if potted else w.centre_mm[1],
                    status=w.status,
                    squops=w.squops,
                    pile=w.pile,
                )
            )
        tiddlies = {c: n.tiddlies for c, n in self.counts.items()}
        return Board(winks=tuple(winks), tiddlies=tiddlies)


_CAMERA_MODEL_KEYS = {"width", "height", "K", "dist", "R", "t"}


def load_scene(json_path: str | Path) -> Scene:
    """Read one ground-truth JSON file.

    Raises
    ------
    GroundTruthError
        When the file is not JSON or not in the ``tiddlywinks-gt/1`` format.
    OSError
        When the file cannot be read.
    """
    path = Path(json_path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise GroundTruthError(f"{str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise GroundTruthError(f"{str(path)!r} holds a {type(data).__name__}, not an object")
    return Scene.from_json_dict(data, where=str(path))


# --------------------------------------------------------------------------
# Canonical frame
# --------------------------------------------------------------------------


def _rot2(p: Vec2) -> Vec2:
    return (-p[0], -p[1])


def _rot3(p: Vec3) -> Vec3:
    return (-p[0], -p[1], p[2])


def to_canonical_frame(scene: Scene) -> Scene:
    """Turn the ground truth through 180 degrees if blue's corner has y < 0.

    The project's canonical frame (see :mod:`calibration`) puts blue's corner
    at y > 0. The mat is symmetric under a half turn about the pot, so the
    turn maps every mat point ``(x, y, z)`` to ``(-x, -y, z)``. The camera
    does not move: its rotation becomes ``R @ diag(-1, -1, 1)``, ``t`` is
    unchanged, and so every ``pixel_centre`` stays valid.
    """
    if scene.blue_corner_mm[1] > 0:
        return scene
    return half_turned(scene)


def half_turned(scene: Scene) -> Scene:
    """The ground truth turned through 180 degrees about the pot (the mat's symmetry).

    Every mat point ``(x, y, z)`` goes to ``(-x, -y, z)``; the camera does not
    move (:meth:`CameraModel.with_half_turn`), so the same pixels see the same
    winks and every ``pixel_centre`` stays valid.
    """
    info = dict(scene.camera_info)
    if "position_mm" in info:
        info["position_mm"] = list(_rot3(tuple(info["position_mm"])))
    baselines = tuple(
        b.model_copy(update={"corner": _rot2(b.corner), "p1": _rot2(b.p1), "p2": _rot2(b.p2)})
        for b in scene.baselines
    )
    winks = tuple(
        w.model_copy(update={"centre_mm": _rot3(w.centre_mm), "axis": _rot3(w.axis)})
        for w in scene.winks
    )
    pot = (
        None
        if scene.pot is None
        else scene.pot.model_copy(update={"centre_mm": _rot3(scene.pot.centre_mm)})
    )
    return scene.model_copy(
        update={
            "camera": scene.camera.with_half_turn(),
            "camera_info": info,
            "baselines": baselines,
            "winks": winks,
            "pot": pot,
        }
    )
