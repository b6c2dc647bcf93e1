"""The one error hierarchy of tdsl.

Every error says *where* (strategy name and field path), *what was expected* and
*what was received*; where one exists it also names the nearest legal value.
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


class TargetError(TdslError):
    """A target name that the strategy set does not define."""
