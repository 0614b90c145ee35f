"""Ground-truth winks as the generator's solids, for tests that redo its geometry."""

from __future__ import annotations

from tools.groundtruth import GtWink
from tools.scenegen.geometry import WinkSolid

# Only potted and unplayed winks are placed differently; every other status was played.
_PLACEMENT = {"potted": "potted", "unplayed": "unplayed"}


def solid_from_truth(w: GtWink) -> WinkSolid:
    """The solid the generator drew for a ground-truth wink."""
    return WinkSolid(
        id=w.id,
        colour=w.colour,
        size=w.size,
        radius_mm=w.diameter_mm / 2,
        thickness_mm=w.thickness_mm,
        bevel_mm=w.bevel_mm,
        centre_mm=w.centre_mm,
        axis=w.axis,
        placement=_PLACEMENT.get(w.status.value, "played"),
    )
