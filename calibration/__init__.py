"""Calibration: find the mat, its baselines and the pot; map pixels to mat mm.

Imports only the shared board types (``rules.board``) from the project.

The canonical mat frame
-----------------------
Millimetres, origin at the mat's centre (where the pot stands), x along the
long side, y along the short side, z up with the mat's top at z = 0. A
rectangle looks the same turned through 180 degrees, so the frame is fixed
by the corner colours (rule 5.2, clockwise blue-green-red-yellow seen from
above): **blue's corner has y > 0**. When the colours cannot be seen, the
calibration says so (``orientation_known = False``) and picks one of the
two.

Using it (for vision)
---------------------
::

    from calibration import calibrate, load_image

    image = load_image("frame.jpg")            # UnreadableImageError if it can't
    cal = calibrate(image)                     # NoMatFoundError, MatPartlyOutOfFrameError, ...
    cam = cal.camera                           # CameraModel in the canonical frame
    mat_xy = cam.image_to_mat(image_xy_px, z_mm=1.5)   # parallax-corrected plan view
    image_xy = cam.mat_to_image(mat_xyz_mm)            # and back, distortion included
    cal.colour.wink_lab[Colour.BLUE]           # mean 8-bit Lab of blue winks, if seen
    cal.colour.felt_lab                        # the felt's median 8-bit Lab

``cal.camera`` holds the focal length, principal point, distortion (k1, k2) and
the pose, all fitted to the mat's edges and baselines: use
``image_to_mat(..., z_mm)`` with a wink's height to correct parallax.
``cal.colour`` is a :class:`ColourReference`: ``source == "winks"`` when the
unplayed winks behind the baselines were seen (``wink_lab`` then has a mean
Lab per colour seen under this light), else ``"felt"`` with only the felt's
colour and a felt-based white balance ``bgr_gains``. ``cal.orientation_known``
is False when blue's corner could not be told; the frame may then be turned
through 180 degrees.

Save and reload with ``cal.to_json_dict()`` / ``Calibration.from_json_dict``.
Lower level: :func:`find_mat` returns a :class:`MatFit` or a falsy
:class:`CalibrationFailure` carrying a :class:`FailureReason`.
"""

from calibration.api import MatFit, calibrate, find_mat, load_image
from calibration.camera import CameraModel
from calibration.check import camera_moved, implausible_camera
from calibration.colour import ColourReference
from calibration.mat import CalibrationFailure, FailureReason
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

__all__ = [
    "BadCornersError",
    "BaselineResult",
    "Calibration",
    "CalibrationError",
    "CalibrationFailure",
    "CameraModel",
    "ColourReference",
    "FailureReason",
    "ImageShapeError",
    "ImageTooSmallError",
    "MatFit",
    "MatPartlyOutOfFrameError",
    "NoMatFoundError",
    "UnreadableImageError",
    "calibrate",
    "camera_moved",
    "find_mat",
    "implausible_camera",
    "load_image",
]
