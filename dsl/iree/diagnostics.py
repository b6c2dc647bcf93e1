"""Diagnostics printed by ``iree-compile``, mapped back to strategy fields.

A diagnostic whose location is one of tdsl's ``loc("<strategy>.<field>")`` names that
field; one that points into the payload keeps its file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIAG = re.compile(r"^(?P<where>.*?):\s(?P<severity>error|warning|remark|note): (?P<message>.*)$")
_NAME_IN_WHERE = re.compile(r'^"(?P<name>[^"]+)"$')
_NAME_IN_MESSAGE = re.compile(r'^loc\("(?P<name>[^"]+)"\):\s*(?P<rest>.*)$')
_FILE_LINE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)$")


@dataclass(frozen=True)
class CompilerDiagnostic:
    """One diagnostic printed by ``iree-compile``.

    ``strategy_field`` is the tdsl location (``mm_td.tiling[1]``) when the diagnostic
    points into a rendered script; ``file``/``line`` when it points into the payload.
    """

    severity: str
    message: str
    strategy_field: str | None = None
    file: str | None = None
    line: int | None = None

    def describe(self) -> str:
        where = f"strategy field {self.strategy_field}" if self.strategy_field else (
            f"{self.file}:{self.line}" if self.file else "iree-compile"
        )
        return f"{where}: {self.severity}: {self.message}"


def parse_diagnostics(stderr: str) -> list[CompilerDiagnostic]:
    """The diagnostics in ``iree-compile``'s stderr (source excerpts and carets skipped)."""
    found = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw.strip())
        if not m:
            continue
        where, severity, message = m.group("where"), m.group("severity"), m.group("message")
        name = None
        file = line = None
        if n := _NAME_IN_WHERE.match(where):
            name = n.group("name")
        elif n := _NAME_IN_MESSAGE.match(message):
            name, message = n.group("name"), n.group("rest")
        if f := _FILE_LINE.match(where):
            if f.group("file") != "<unknown>":
                file, line = f.group("file"), int(f.group("line"))
        found.append(CompilerDiagnostic(severity, message, name, file, line))
    return found
