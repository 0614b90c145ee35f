"""One module per ``winkref`` subcommand; ``service.cli`` wires them up.

Each module exposes ``run(...)``: it does the work and returns the text to
print, raising a ``ValueError`` subclass with a user-facing message on bad
input. The CLI turns those errors into a one-line message and exit code 2.
"""
