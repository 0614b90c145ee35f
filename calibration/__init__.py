"""Calibration: find the mat, its baselines and the pot; map pixels to mat mm.

Imports only the shared board types (``rules.board``) from the project.
"""
