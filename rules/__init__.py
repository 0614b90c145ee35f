"""The rules of tiddlywinks: board types, the ETwA 2012 engine, scoring.

This package imports nothing else of the project: vision, calibration and
the service depend on it, never the reverse.
"""
