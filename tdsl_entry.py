"""The ``tdsl`` console script. Importing this module covers Ctrl-C at once (it imports
only ``os``, ``signal`` and ``sys``); :func:`main` then imports tdsl and runs the command.
Ctrl-C at any moment after that (while tdsl imports, while a command runs, while the
interpreter shuts down) prints ``tdsl: interrupted`` and exits 130, never a traceback.
``tdsl.cli.main`` handles Ctrl-C during a command itself (earlier outputs left as they
were); this module covers the moments outside it. Keep it free of heavy imports."""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

EXIT_INTERRUPTED = 130


def exit_interrupted(signum: int = signal.SIGINT, frame: FrameType | None = None) -> None:
    """Prints ``tdsl: interrupted`` and ends the process at once with 130 (where there is
    nothing to unwind: an import, the interpreter's shutdown)."""
    try:
        os.write(2, b"tdsl: interrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


signal.signal(signal.SIGINT, exit_interrupted)


def main() -> int:
    """Imports ``tdsl.cli`` and runs it; returns its exit code."""
    signal.signal(signal.SIGINT, exit_interrupted)
    cli = importlib.import_module("tdsl.cli")  # by name: mypy checks dsl/ as its own tree

    # The command's own handler: Ctrl-C unwinds (staged outputs removed) to tdsl.cli.main.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code: int = cli.main()
    except KeyboardInterrupt:  # outside the command's own handler (before or after it)
        exit_interrupted()
    signal.signal(signal.SIGINT, exit_interrupted)  # the interpreter's shutdown (atexit, threads)
    return code


if __name__ == "__main__":
    sys.exit(main())
