"""The ``tdsl`` command line: render, flags, show, schema, compile, run, bench.

``-v`` lists every rule that matched nothing (and the iree-compile flags); ``-q`` leaves
out progress and warnings. Long work (compiles, benchmark samples) shows progress bars with
an ETA on stderr when stderr is a terminal.

Every failure is one line on stderr (``tdsl: error: ...``) and an exit code:

* 0: success.
* 1: a verdict: ``run`` found results past the element type's tolerance, or
  ``compile --strict`` found a rule that matched nothing.
* 2: bad input: an invalid strategy or command-line value, a strategy file that cannot be
  read, a payload it does not match, a script that does not verify, a compiler failure
  (crash, memory cap, timeout or error; the line names a directory that keeps the
  compiler's whole output), an output path that cannot be written, any OS error.
* 3: an internal error of tdsl (a bug: the line names the exception; ``TDSL_TRACEBACK=1``
  also prints the traceback).
* 130: interrupted (Ctrl-C). A render or compile that is interrupted leaves the earlier
  outputs as they were.
* 141: the reader of stdout went away (``tdsl show ... | head``); nothing is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Callable, Sequence

from ..errors import StrategyNotApplied, TdslError
from .exits import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VERDICT,
    fail,
    one_line,
)
from .options import resolve_ready_spec
from .parser import parser

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_VERDICT",
    "main",
    "parser",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code (see the module docstring)."""
    try:
        try:
            args = parser().parse_args(argv)
        except SystemExit as done:  # --help, --version, or argparse's one-line error
            return done.code if isinstance(done.code, int) else (EXIT_OK if done.code is None else EXIT_BAD_INPUT)
        resolve_ready_spec(args)
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except KeyboardInterrupt:
        print("tdsl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StrategyNotApplied as err:  # a verdict, like numbers past tolerance
        return fail(one_line(err), EXIT_VERDICT)
    except TdslError as err:
        return fail(one_line(err), EXIT_BAD_INPUT)
    except BrokenPipeError:  # the reader of stdout went away (tdsl show ... | head)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    except OSError as err:
        return fail(one_line(err), EXIT_BAD_INPUT)
    except Exception as err:  # noqa: BLE001 - a bug: one line, not a traceback
        if os.environ.get("TDSL_TRACEBACK"):
            traceback.print_exc()
        detail = " ".join(str(err).split())
        return fail(
            f"internal error: {type(err).__name__}"
            + (f": {detail}" if detail else "")
            + " (a bug in tdsl, not in the input; TDSL_TRACEBACK=1 prints the traceback)",
            EXIT_INTERNAL,
        )
