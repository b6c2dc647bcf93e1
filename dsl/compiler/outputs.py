"""A compile's output paths: checked before any work (an output file, a ``--keep-dump``
directory), and the executable dump kept with its marker."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..errors import OutputError
from ..files import atomic_write

DUMP_MARKER = "tdsl-dump.txt"
"""The file that marks a --keep-dump directory as tdsl's (a later run may replace it)."""


def check_dump_dir(path: Path) -> None:
    """Refuses, before any work, a ``--keep-dump`` directory tdsl may not fill: a file, a
    directory with files an earlier ``--keep-dump`` did not write, an unwritable place."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"--keep-dump {str(path)!r}: expected a directory, received an existing file")
    if path.is_dir() and any(path.iterdir()) and not (path / DUMP_MARKER).is_file():
        raise OutputError(
            f"--keep-dump {str(path)!r}: expected a new or empty directory (or one an earlier --keep-dump "
            f"wrote, with {DUMP_MARKER}), received a directory with other files"
        )
    parent = path if path.is_dir() else path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"--keep-dump {str(path)!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"--keep-dump {str(path)!r}: the directory {str(parent)!r} is not writable")


def keep_dump_dir(dump: Path, keep: Path) -> None:
    """Copies the executable dump ``dump`` to ``keep`` (replacing what an earlier
    ``--keep-dump`` wrote there), with :data:`DUMP_MARKER`."""
    keep.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{keep.name}.", dir=keep.parent))
    try:
        target = stage / "dump"
        if dump.is_dir():
            shutil.copytree(dump, target, symlinks=True)
        else:
            target.mkdir()
        atomic_write(
            target / DUMP_MARKER,
            "IREE executable dump kept by tdsl compile --keep-dump; a later --keep-dump replaces this directory\n",
        )
        if keep.exists():
            old = stage / "old"
            keep.rename(old)
        target.rename(keep)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def check_output_file(path: Path, what: str) -> None:
    """Refuses, before any work, an output file path that cannot be written: an existing
    directory, a path under a regular file, a missing or read-only directory."""
    if path.is_dir():
        raise OutputError(f"{what} {str(path)!r}: expected a file path, received an existing directory")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{what} {str(path)!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {str(path)!r}: the directory {str(parent)!r} is not writable")
