"""What an import reports: :class:`SpecImportError` (a construct tdsl cannot express: the
op, its line and what is missing) and :class:`Note` (what the import changed or dropped:
an upgraded spelling, a renamed sequence, a raw escape hatch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import TdslError


@dataclass(frozen=True)
class Note:
    """One thing the import did that a reader should know (``line``: in the spec file)."""

    line: Optional[int]
    text: str

    def describe(self, path: str) -> str:
        return f"{path}:{self.line}: {self.text}" if self.line is not None else f"{path}: {self.text}"


class Unsupported(Exception):
    """Raised while reading one sequence: ``op`` at ``line`` has no tdsl form; ``missing``
    says what tdsl lacks. The importer turns it into a :class:`SpecImportError` (or, with
    ``allow_raw``, into a raw escape hatch)."""

    def __init__(self, op: str, line: Optional[int], missing: str):
        self.op, self.line, self.missing = op, line, missing
        super().__init__(f"{op}: {missing}")


class SpecImportError(TdslError):
    """A spec tdsl cannot import: ``{path}:{line}: {op}: {missing}`` (and, where raw MLIR
    would keep it, the hint to rerun with ``--allow-raw``)."""

    def __init__(self, path: str, line: Optional[int], op: str, missing: str, hint: str = ""):
        self.path, self.line, self.op, self.missing = path, line, op, missing
        where = f"{path}:{line}" if line is not None else path
        text = f"{where}: {op}: {missing}" if op else f"{where}: {missing}"
        super().__init__(text + (f" ({hint})" if hint else ""))
