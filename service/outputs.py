"""Writing the files a command produces without ever losing what was there.

Every output path is checked before a command does its (slow) work, so a
typo costs the user a second, not a minute; and files are written to a
temporary name beside the target and then renamed over it, so a write that
fails half-way leaves any existing file untouched.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt


class UnwritableOutputError(ValueError):
    """An output path that cannot (or must not) be written."""


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file or folder (False when either cannot be resolved)."""
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_output_path(
    path: Path,
    *,
    option: str,
    inputs: Iterable[Path] = (),
    image: bool = False,
    make_parent: bool = False,
) -> None:
    """Refuse an output path that cannot be written or would destroy an input.

    Parameters
    ----------
    path : Path
        Where the command will write.
    option : str
        The option that named it (``"--annotate"``), quoted in the message.
    inputs : iterable of Path
        Files the command reads; writing over one of them would lose it.
    image : bool
        The output is a picture: its extension must be one OpenCV can write.
    make_parent : bool
        Create a missing parent folder instead of refusing.

    Raises
    ------
    UnwritableOutputError
        With a message naming the path and what to do instead.
    """
    where = f"{option} {str(path)!r}"
    if path.is_dir():
        raise UnwritableOutputError(f"{where} is a folder; give a file name inside it")
    for source in inputs:
        if same_file(path, source):
            raise UnwritableOutputError(
                f"{where} would overwrite {str(source)!r}, which this command also uses; "
                "give a different file name"
            )
    if image and not (path.suffix and cv2.haveImageWriter(f"x{path.suffix}")):
        raise UnwritableOutputError(
            f"{where}: cannot write pictures of type {path.suffix or '(no extension)'!r}; "
            "end the name in .png or .jpg"
        )
    parent = path.parent if str(path.parent) else Path(".")
    if make_parent:
        # The folder is made only when writing, so a failed run leaves none behind;
        # here, check that the nearest folder that does exist can take it.
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    if not parent.is_dir():
        raise UnwritableOutputError(
            f"{where}: the folder {str(parent)!r} does not exist; create it or choose another"
        )
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UnwritableOutputError(
            f"{where}: no permission to write there; choose a folder you can write to"
        )
    # Permissions do not tell all (a read-only disk, /proc, or root, who may
    # write anywhere the bits say): a file made and removed there does, before
    # the slow work whose result would then be lost.
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".winkref-check-"):
            pass
    except OSError as exc:
        raise UnwritableOutputError(
            f"{where}: cannot write in the folder {str(parent)!r} "
            f"({exc.strerror or exc}); choose a folder you can write to"
        ) from None


def _mode_for(path: Path) -> int:
    """The permission bits a new file at ``path`` gets, keeping an existing file's."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes_atomic(path: Path, data: bytes, *, option: str, make_parent: bool = False) -> None:
    """Write ``data`` to ``path`` so a failure leaves any old file as it was.

    With ``make_parent``, a missing parent folder is created first.

    Raises
    ------
    UnwritableOutputError
        When the write or the rename fails (disk full, permissions).
    """
    tmp_name: str | None = None
    try:
        if make_parent:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(
            dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp"
        )
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        # mkstemp makes the file private (0600); give it the mode a plain
        # write would: the old file's, or what the umask allows.
        os.chmod(tmp_name, _mode_for(path))
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as exc:
        raise UnwritableOutputError(
            f"{option} {str(path)!r}: cannot write ({exc.strerror or exc}); "
            "any existing file there is unchanged; choose another path"
        ) from None
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)


def write_text_atomic(path: Path, text: str, *, option: str, make_parent: bool = False) -> None:
    """Write UTF-8 text to ``path`` atomically (see :func:`write_bytes_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"), option=option, make_parent=make_parent)


def write_image_atomic(
    path: Path, image_bgr: npt.NDArray[np.uint8], *, option: str, make_parent: bool = False
) -> None:
    """Encode a BGR picture by the file's extension and write it atomically.

    Raises
    ------
    UnwritableOutputError
        When the extension has no encoder or the file cannot be written.
    """
    try:
        ok, encoded = cv2.imencode(path.suffix, np.ascontiguousarray(image_bgr))
    except cv2.error:
        ok, encoded = False, None
    if not ok or encoded is None:
        raise UnwritableOutputError(
            f"{option} {str(path)!r}: cannot encode a picture of type {path.suffix!r}; "
            "end the name in .png or .jpg"
        )
    write_bytes_atomic(path, encoded.tobytes(), option=option, make_parent=make_parent)
