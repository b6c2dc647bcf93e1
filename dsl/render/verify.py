"""Verification of rendered scripts with the MLIR bindings, and the helpers that turn a
diagnostic into the strategy field that produced the bad line.

Every transform op carries ``loc("<strategy>.<field path>")``; :func:`verify` raises
:class:`tdsl.errors.RenderError` with the numbered script and that field. Emits nothing.
"""

from __future__ import annotations

import re

from .. import bindings as mlir
from ..errors import RenderError

_LOC_IN_LINE = re.compile(r'loc\("([^"]*)"\)')
_ATTR_KEY = re.compile(r"^\s*([a-z_]+) = ")


def field_at_line(text: str, line: int) -> str | None:
    """The strategy field path of the op at ``line`` (1-based): the first ``loc("..")``
    at or after that line, which closes the op the line belongs to. A line inside a
    multi-line attribute (``  mma_kind = ...,``) adds its key: ``mm_f16.mma_kind``."""
    lines = text.splitlines()
    for candidate in lines[line - 1 :]:
        found = _LOC_IN_LINE.search(candidate)
        if found:
            name = found.group(1)
            key = _ATTR_KEY.match(lines[line - 1])
            if key and not _LOC_IN_LINE.search(lines[line - 1]):
                name = f"{name}.{key.group(1)}"
            return name
    return None


def numbered(text: str, around: int | None = None, context: int = 6) -> str:
    """``text`` with line numbers; only ``context`` lines around line ``around`` if given."""
    lines = text.splitlines()
    lo, hi = 0, len(lines)
    if around is not None:
        lo, hi = max(0, around - 1 - context), min(len(lines), around + context)
    width = len(str(hi))
    out = []
    for i in range(lo, hi):
        mark = ">" if around is not None and i + 1 == around else " "
        out.append(f"{mark}{i + 1:>{width}} | {lines[i]}")
    return "\n".join(out)


_OP_IN_MESSAGE = re.compile(r"'([a-z_]+(?:\.[a-z_]+)+)' op")


def line_of_field(text: str, name: str, message: str = "") -> int | None:
    """The line that carries ``loc("<name>")``; among several, the one with the op the
    diagnostic ``message`` names (``'transform.structured.lower_unpack' op ...``)."""
    needle = f'loc("{name}")'
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    op = _OP_IN_MESSAGE.search(message)
    if op:
        text_lines = text.splitlines()
        named = [i for i in lines if f" {op.group(1)} " in text_lines[i - 1]]
        if named:
            return named[0]
    return lines[0] if lines else None


def verify(text: str, what: str) -> None:
    """Parses and verifies ``text``; raises RenderError naming the field of the bad line."""
    try:
        mlir.parse(text)
    except mlir.ParseFailure as failure:
        first = failure.diagnostics[0]
        line = first.line
        name = first.name
        if line is not None:
            name = field_at_line(text, line)
        elif name is not None:
            line = line_of_field(text, name, first.message)
        messages = "\n".join(
            f"  error: {d.message}" + "".join(f"\n    note: {n}" for n in d.notes) for d in failure.diagnostics
        )
        where = f" (strategy field {name})" if name else ""
        listing = numbered(text, line) if line else numbered(text)
        raise RenderError(
            f"the rendered script for {what} does not verify{where}:\n{messages}\n{listing}",
            text,
            name,
            line,
        ) from None
