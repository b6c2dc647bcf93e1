"""Small, exact operations on MLIR text that models holding MLIR need: renaming SSA values
and symbol references token by token (string literals are skipped), and checking that a
snippet parses and verifies with the bindings.

Used by the matcher kinds that hold a pattern or a matcher as MLIR (:class:`DagMatch`,
:class:`~tdsl.model.raw.RawMatch`) and by the raw actions (:mod:`tdsl.model.raw`). The
text these operate on is the MLIR printer's own output (the importer stores ops as the
bindings print them) or text the user wrote and the model verified. Emits nothing.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

from .. import bindings
from ..errors import ParseFailure

_ID_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$.-")
_ID_CHARS = _ID_START | set("0123456789")
_SYMBOL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.-")


def _string_end(text: str, start: int) -> int:
    """The index after the string literal that starts at ``text[start] == '"'``."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


def _rewrite(text: str, sigil: str, replace: Callable[[str, bool], Optional[str]]) -> str:
    """``text`` with each ``<sigil>name`` token outside string literals passed through
    ``replace(name, quoted)`` (None keeps it). A symbol may be quoted (``@"a b"``)."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
            continue
        if c == sigil and i + 1 < n:
            if sigil == "@" and text[i + 1] == '"':
                end = _string_end(text, i + 1)
                name = text[i + 2 : end - 1]
                new = replace(name, True)
                out.append(text[i:end] if new is None else new)
                i = end
                continue
            j = i + 1
            chars = _SYMBOL_CHARS if sigil == "@" else _ID_CHARS
            while j < n and text[j] in chars:
                j += 1
            if j > i + 1:
                name = text[i + 1 : j]
                new = replace(name, False)
                out.append(text[i:j] if new is None else new)
                i = j
                continue
        out.append(c)
        i += 1
    return "".join(out)


def value_names(text: str) -> list[str]:
    """The SSA value names (without ``%``) in ``text``, in order of appearance."""
    found: list[str] = []

    def keep(name: str, quoted: bool) -> Optional[str]:
        found.append(name)
        return None

    _rewrite(text, "%", keep)
    return found


def map_values(text: str, rename: Callable[[str], str]) -> str:
    """Every SSA value ``%x`` in ``text`` becomes ``%<rename(x)>``."""
    return _rewrite(text, "%", lambda name, quoted: "%" + rename(name))


def strip_locations(text: str) -> str:
    """``text`` without its ``loc(...)`` locations (and the blank before each)."""
    return relocated(text, "\x00").replace(' loc("\x00")', "").replace('loc("\x00")', "")


def rename_values(text: str, prefix: str, fixed: Mapping[str, str] = {}) -> str:
    """Every SSA value ``%x`` in ``text`` becomes ``%<prefix>x`` (``fixed`` maps a name to
    its replacement name instead: ``{"arg0": "op"}`` turns ``%arg0`` into ``%op``)."""

    def rename(name: str, quoted: bool) -> str:
        if name in fixed:
            return "%" + fixed[name]
        return f"%{prefix}{name}"

    return _rewrite(text, "%", rename)


def symbol_text(name: str) -> str:
    """``@name``, quoted when the name is not a bare identifier (``@"a-b$c"``)."""
    bare = bool(name) and (name[0].isalpha() or name[0] == "_") and all(c.isalnum() or c in "_$." for c in name)
    return "@" + (name if bare else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"')


def rename_symbols(text: str, mapping: Mapping[str, str]) -> str:
    """Every symbol reference ``@old`` in ``text`` whose name ``mapping`` holds becomes
    ``@new`` (quoted where needed)."""

    def rename(name: str, quoted: bool) -> Optional[str]:
        return symbol_text(mapping[name]) if name in mapping else None

    return _rewrite(text, "@", rename)


def symbols(text: str) -> list[str]:
    """The symbol names referenced in ``text`` (``@x``), in order of appearance."""
    found: list[str] = []

    def keep(name: str, quoted: bool) -> Optional[str]:
        found.append(name)
        return None

    _rewrite(text, "@", keep)
    return found


def parse_problem(text: str) -> Optional[str]:
    """None when ``text`` (a whole module) parses and verifies; else the first diagnostic,
    with its line when the parser gives one."""
    try:
        bindings.parse(text)
    except ParseFailure as failure:
        first = failure.diagnostics[0] if failure.diagnostics else None
        if first is None:
            return str(failure)
        where = f"line {first.line}: " if first.line is not None else ""
        return f"{where}{first.message}"
    return None


def in_module(body: str) -> str:
    """``body`` (named sequences) wrapped in a transform module."""
    return "module attributes {transform.with_named_sequence} {\n" + body + "\n}\n"


def matcher_module(ops: str) -> str:
    """A module whose only matcher sequence runs ``ops`` on ``%op`` (for checking a leaf)."""
    return in_module(
        "  transform.named_sequence @check(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {\n"
        + ops
        + "\n    transform.yield %op : !transform.any_op\n  }"
    )


def canonical_attribute(text: str) -> Optional[str]:
    """``text`` (an attribute such as ``affine_map<(d0,d1)->(d1)>``) as the MLIR printer
    spells it (no aliases), or None when it does not parse. The printer's spelling is what
    an imported script holds, so a model that stores it re-renders byte for byte."""
    try:
        module = bindings.parse("module attributes {tdsl.value = " + text + "} {\n}\n")
    except ParseFailure:
        return None
    with bindings.context():
        return str(module.operation.attributes["tdsl.value"])


def relocated(text: str, path: str) -> str:
    """``text`` (printer output with debug info) with every ``loc(...)`` replaced by
    ``loc("<path>")``: each op of a verbatim snippet then names the field it came from."""
    out: list[str] = []
    i = 0
    n = len(text)
    needle = "loc("
    while i < n:
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
            continue
        if text.startswith(needle, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.$")):
            depth = 0
            j = i + len(needle) - 1
            while j < n:
                if text[j] == '"':
                    j = _string_end(text, j)
                    continue
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out.append(f'loc("{path}")')
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _sequence_ops(text: str) -> list[object]:
    """The top-level ops of the module ``text`` (a parsed, verified module's body)."""
    module = bindings.parse(text)
    return [op.operation for op in module.body.operations]


def sequence_name(op: object) -> str:
    """The symbol name of a top-level op (a named sequence)."""
    attributes = getattr(op, "attributes")
    return str(attributes["sym_name"]).strip('"') if "sym_name" in attributes else ""


def printed_sequences(text: str, debug_info: bool = False) -> list[tuple[str, str]]:
    """(symbol, printed op) of every top-level op of the module ``text``; with ``debug_info``
    each op carries its location inline."""
    found = []
    with bindings.context():
        for op in _sequence_ops(text):
            found.append((sequence_name(op), str(getattr(op, "get_asm")(enable_debug_info=debug_info))))
    return found


def indented(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.split("\n"))
