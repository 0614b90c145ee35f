"""The service layer: the ``winkref`` command line and the web service.

Only this package (and the CLI in it) imports every other package.
"""
