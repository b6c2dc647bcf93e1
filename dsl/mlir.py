"""The one shim over the untyped ``iree.compiler`` bindings.

Every other module goes through these functions; nothing else imports
``iree.compiler``. Emits nothing; requires the pinned ``iree-base-compiler``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_FILE_LOC = re.compile(r'^loc\("[^"]*":(\d+):(\d+)\)$')
_NAME_LOC = re.compile(r'^loc\("([^"]*)"\)$')

_context: Any = None


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


class ParseFailure(Exception):
    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("; ".join(d.message for d in diagnostics))


def _ir() -> Any:
    from iree.compiler import ir

    return ir


def context() -> Any:
    """The shared MLIR context with every IREE dialect registered (created once)."""
    global _context
    if _context is None:
        _context = _ir().Context()
    return _context


def _diagnostic(diag: Any) -> Diagnostic:
    location = str(diag.location)
    line = column = None
    name = None
    if m := _FILE_LOC.match(location):
        line, column = int(m.group(1)), int(m.group(2))
    elif m := _NAME_LOC.match(location):
        name = m.group(1)
    notes = tuple(n.message for n in diag.notes if not n.message.startswith("see current operation"))
    return Diagnostic(diag.message, line, column, name, notes)


def parse(text: str) -> Any:
    """Parses and verifies ``text`` as an MLIR module; raises :class:`ParseFailure`."""
    ir = _ir()
    with context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as err:
            raise ParseFailure([_diagnostic(d) for d in err.error_diagnostics]) from None
        try:
            module.operation.verify()
        except ir.MLIRError as err:
            raise ParseFailure([_diagnostic(d) for d in err.error_diagnostics]) from None
    return module


def print_module(module: Any, debug_info: bool = False) -> str:
    """The printer's form of ``module`` (locations only with ``debug_info``)."""
    with context():
        return str(module.operation.get_asm(enable_debug_info=debug_info))
