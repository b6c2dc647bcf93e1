"""Atomic file writes: a crash or Ctrl-C never leaves a half-written output file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path | str, data: str | bytes) -> Path:
    """Writes ``data`` to a temporary file beside ``path``, fsyncs it, then renames it over
    ``path``. Returns ``path``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return target
