"""How a ``tdsl`` command ends: the exit codes, the epilog that lists them, and the one
line on stderr a failure prints (``tdsl: error: ...``)."""

from __future__ import annotations

import sys

from ..errors import RenderError, StrategyError
from ..files import atomic_write, failure_dir

EXIT_OK, EXIT_VERDICT, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 3, 130, 141

EPILOG = f"""exit codes:
  {EXIT_OK}    success
  {EXIT_VERDICT}    a verdict: numbers past tolerance (run), a rule that matched nothing (compile --strict)
  {EXIT_BAD_INPUT}    bad input: strategy, strategy file, payload, arguments, script, compiler failure,
       unwritable output, OS error (one line on stderr)
  {EXIT_INTERNAL}    internal error of tdsl (a bug; TDSL_TRACEBACK=1 prints the traceback)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); earlier outputs are left as they were
A compiler failure keeps its evidence (full output, command, scripts, dumps) in a
tdsl-failure-* directory under $TDSL_FAILURE_DIR or the system temporary directory.
A compiler failure is bad input (2), not a code of its own: tdsl cannot tell a compiler
bug that a strategy value sets off from a strategy IREE refuses; 3 is tdsl's own bug."""


def os_reason(err: OSError) -> str:
    reason = err.strerror or type(err).__name__
    return f"{reason.lower()}" + (f" ({err.filename})" if err.filename else "")


def one_line(err: BaseException) -> str:
    if isinstance(err, StrategyError):
        return "invalid strategy: " + "; ".join(p.describe(err.strategy) for p in err.problems)
    if isinstance(err, RenderError):
        return _render_line(err)
    if isinstance(err, OSError):
        return os_reason(err)
    return " ".join(str(err).split())


def _render_line(err: RenderError) -> str:
    """The head and first error of a script that does not verify; the whole report (the
    numbered script and every error) goes to a file the line names."""
    text = str(err)
    head = text.split("\n", 1)[0].rstrip(":")
    errors = [line.strip() for line in text.splitlines() if line.strip().startswith("error:")]
    line = head + (f": {errors[0]}" if errors else "")
    try:
        where = failure_dir("render")
        atomic_write(where / "render-error.txt", text + "\n")
        atomic_write(where / "script.mlir", err.script)
        line += f"; the script and every error are in {where}"
    except OSError:
        pass
    return " ".join(line.split())


def fail(message: str, code: int) -> int:
    print(f"tdsl: error: {message}", file=sys.stderr)
    return code
