"""The one error hierarchy of tdsl: every error tdsl raises on purpose is a :class:`TdslError`.

Every error says *where* (strategy name and field path), *what was expected* and
*what was received*; where one exists it also names the nearest legal value.

::

    TdslError
    +-- StrategyError         an invalid strategy (field paths), at construction
    +-- StrategyFileError     a strategy file that cannot be loaded
    +-- OutputError           an output path tdsl cannot write (a directory, under a file, read-only)
    +-- ArgumentError         a command-line value tdsl cannot use (an --inputs file that is not .npy)
    +-- TargetError           a target the set does not define
    +-- RenderError           a rendered script that does not verify (shows the script)
    +-- ParseFailure          MLIR text that does not parse or verify (its diagnostics)
    +-- PayloadError          a payload tdsl cannot handle (dynamic shapes, ...)
    +-- CompileFailed         iree-compile failed (tdsl.compiler.iree_compile; carries the run)
    +-- StrategyNotApplied    --strict: a rule matched nothing
    +-- RunFailed             a module could not be run
    |   +-- NumericsFailed    results beyond tolerance (tdsl.measure.numerics; carries the report)
    +-- BenchFailed           a variant could not be measured
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


class TdslError(Exception):
    """Base class of every error tdsl raises on purpose."""


@dataclass(frozen=True)
class FieldProblem:
    """One invalid field: where it is, what was expected and what was received."""

    path: str
    expected: str
    received: str
    hint: str = ""

    def describe(self, strategy: str | None) -> str:
        where = f"{strategy}.{self.path}" if strategy and self.path else (strategy or self.path)
        text = f"{where}: expected {self.expected}, received {self.received}"
        if self.hint:
            text += f" ({self.hint})"
        return text


class StrategyError(TdslError, ValueError):
    """An invalid strategy, found at construction before anything renders or runs."""

    def __init__(self, strategy: str | None, problems: Sequence[FieldProblem]):
        self.strategy = strategy
        self.problems = tuple(problems)
        lines = [p.describe(strategy) for p in self.problems]
        head = "invalid strategy"
        if len(lines) == 1:
            super().__init__(f"{head}: {lines[0]}")
        else:
            super().__init__(head + ":\n" + "\n".join(f"  - {line}" for line in lines))


class RenderError(TdslError):
    """A rendered script failed to parse or verify; the message shows the script."""

    def __init__(self, message: str, script: str, field: str | None, line: int | None):
        self.script = script
        self.field = field
        self.line = line
        super().__init__(message)


class StrategyFileError(TdslError):
    """A strategy file could not be loaded (missing, wrong format, no StrategySet in it)."""


class OutputError(TdslError):
    """An output path tdsl cannot write: an existing directory where a file goes, a path
    under a regular file, a read-only or missing location. Raised before any work is done
    where the path is known up front."""


class ArgumentError(TdslError):
    """A command-line value that tdsl cannot use: an ``--inputs`` file that is missing or
    not a ``.npy`` array, a ``--plot`` without matplotlib."""


class TargetError(TdslError, KeyError):
    """A target name that the strategy set does not define, or a target a command cannot use."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Diagnostic:
    """One error from the MLIR parser or verifier.

    ``line``/``column`` are set for syntax errors (a position in the text); ``name`` is
    set when the error carries one of tdsl's ``loc("strategy.field")`` locations.
    """

    message: str
    line: int | None
    column: int | None
    name: str | None
    notes: tuple[str, ...] = ()


class ParseFailure(TdslError):
    """MLIR text did not parse or verify; ``diagnostics`` holds what MLIR reported."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("; ".join(d.message for d in self.diagnostics))


class PayloadError(TdslError):
    """A payload that tdsl cannot handle (a dynamic shape, no function to run, ...)."""


class StrategyNotApplied(TdslError):
    """``--strict``: a rule of the set matched nothing in the payload."""


class RunFailed(TdslError):
    """A module could not be run, or its payload uses types tdsl cannot feed."""


class BenchFailed(TdslError):
    """A variant could not be compiled or measured."""
