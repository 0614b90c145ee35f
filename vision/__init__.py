"""Vision: turn one calibrated frame into a :class:`rules.board.Board`.

Imports only ``rules.board`` and ``calibration`` from the project. Raw OpenCV
output never leaves this package.
"""
