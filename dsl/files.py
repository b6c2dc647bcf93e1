"""Atomic output files: a crash, a failed compile or Ctrl-C never leaves a half-written
output, and every file gets the mode the umask gives (0644 under umask 022), as if
written with ``open(path, "w")``.

:func:`staged` hands out a temporary path beside the destination and renames it over the
destination only if the block succeeds; :func:`atomic_write` writes bytes or text that way.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def staged(path: Path | str) -> Iterator[Path]:
    """Yields a temporary path beside ``path`` (its directory is created); on normal exit
    the file there gets the umask's mode and is renamed over ``path``, on an exception it
    is removed. The caller writes the temporary path (or has a tool write it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write(path: Path | str, data: str | bytes) -> Path:
    """Writes ``data`` to ``path`` atomically (fsynced before the rename); returns ``path``."""
    with staged(path) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
    return Path(path)
