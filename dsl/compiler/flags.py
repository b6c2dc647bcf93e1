"""Extra ``iree-compile`` flags: passed through by the user, read from a flags file, the
serial-loading opt-out, and flags with paths relative to ``flags.txt``'s own directory.

``iree-compile`` resolves a relative path in a flag against its working directory. A
``flags.txt`` written with ``--relative`` therefore holds paths relative to its own
directory: use it from that directory (``cd out && iree-compile $(cat flags.txt)
../payload.mlir``), or give it to ``tdsl compile/run/bench --flags-file``, which resolves
such paths against the file's directory, as a configuration file is read.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Sequence

from ..errors import ArgumentError
from ..render import SERIAL_LOADING, Rendered

THREADING_ON = f"{SERIAL_LOADING}=false"
"""Turns MLIR threading back on after :data:`tdsl.render.SERIAL_LOADING` (the last
occurrence of an ``iree-compile`` option wins)."""

# A flag whose name ends so takes a path: a relative value in a flags file is taken
# relative to the file's directory even when nothing exists there yet (an output).
_PATH_FLAG_ENDINGS = ("-path", "-filename", "-file", "-library", "-to", "-dir", "-directory")


REPORT_FLAGS = (
    "--iree-hal-dump-executable-files-to",
    "--iree-hal-dump-executable-binaries-to",
    "--iree-scheduling-dump-statistics-format",
    "--iree-scheduling-dump-statistics-file",
)
"""Flags tdsl passes to read what a build made (dispatches, launches, rules that applied):
another value would move the dump away from the report (it said "0 executables")."""


def check_flag(text: str, what: str = "--iree-flag") -> str:
    """``text`` if it is one ``iree-compile`` option (``-x`` or ``--name[=value]``)."""
    if not text.startswith("-") or text in ("-", "--") or any(c in text for c in "\n\r\0"):
        raise ArgumentError(
            f"{what}: expected an iree-compile option such as --iree-opt-level=O3 "
            f"(write --iree-flag=--name=value), received {text!r}"
        )
    if text in ("-o", "--output") or text.startswith(("-o=", "--output=")):
        raise ArgumentError(f"{what}: the output is tdsl's to choose (use -o of tdsl compile), received {text!r}")
    name = text.split("=", 1)[0]
    if name in REPORT_FLAGS:
        raise ArgumentError(
            f"{what}: expected a flag tdsl does not set for its report ({name} is; --keep-dump DIR keeps the dump), received {text!r}"
        )
    return text


def read_flags_file(path: Path | str) -> list[str]:
    """The flags in ``path``: shell words (quotes and ``#`` comments allowed), any number per
    line, e.g. a ``flags.txt`` from ``tdsl render``. A relative path given to a flag
    (``--name=value``) is resolved against the file's directory when the flag takes a path
    (its name ends in -path, -filename, -file, -library, -to, -dir) or when ``value`` names
    something that exists there; every other value is passed on as written."""
    path = Path(path)
    if path.is_dir():
        raise ArgumentError(f"--flags-file {str(path)!r}: expected a file, received a directory")
    if not path.is_file():
        raise ArgumentError(f"--flags-file {str(path)!r}: the file does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ArgumentError(
            f"--flags-file {str(path)!r}: cannot be read: {(err.strerror or type(err).__name__).lower()}"
        ) from None
    except UnicodeDecodeError:
        raise ArgumentError(f"--flags-file {str(path)!r}: expected UTF-8 text") from None
    flags: list[str] = []
    base = path.resolve().parent
    for number, line in enumerate(text.splitlines(), 1):
        try:
            words = shlex.split(line, comments=True)
        except ValueError as err:
            raise ArgumentError(f"--flags-file {path}:{number}: {err}") from None
        for word in words:
            check_flag(word, f"--flags-file {path}:{number}")
            flags.append(_resolved(word, base))
    return flags


def _resolved(flag: str, base: Path) -> str:
    if "=" not in flag:
        return flag
    name, value = flag.split("=", 1)
    if not value or os.path.isabs(value) or "://" in value or value.startswith("-"):
        return flag
    candidate = base / value
    if name.endswith(_PATH_FLAG_ENDINGS) or candidate.exists():
        return f"{name}={os.path.normpath(candidate)}"
    return flag


def with_threading(flags: Sequence[str], serial_loading: bool) -> list[str]:
    """``flags`` without :data:`SERIAL_LOADING` when ``serial_loading`` is off."""
    return list(flags) if serial_loading else [f for f in flags if f != SERIAL_LOADING]


def rendered_flags(
    rendered: Rendered,
    directory: Path | str,
    *,
    include_target: bool = True,
    serial_loading: bool = True,
    relative: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """The flags that inject ``rendered``'s scripts from ``directory`` (as
    :meth:`Rendered.flags`), then ``extra``. ``serial_loading=False`` leaves out
    :data:`SERIAL_LOADING`; ``relative`` writes the script paths relative to ``directory``
    (what ``flags.txt`` in that directory holds under ``--relative``)."""
    flags = with_threading(rendered.flags(directory, include_target=include_target), serial_loading)
    if relative:
        base = Path(directory).resolve()
        scripts = {str(base / s.filename) for s in rendered.scripts}
        flags = [_relative(f, base, scripts) for f in flags]
    return [*flags, *extra]


def _relative(flag: str, base: Path, scripts: set[str]) -> str:
    name, _, value = flag.partition("=")
    if value in scripts:
        return f"{name}={os.path.relpath(value, base)}"
    return flag
