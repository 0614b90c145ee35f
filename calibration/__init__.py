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
"""
