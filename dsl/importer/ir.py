"""A typed view of a parsed transform script: named sequences, their ops (SSA values as
integers), attributes as typed values and each op's line.

:func:`read_module` parses with :func:`tdsl.bindings.parse` and converts every attribute
with the bindings' one converter (:func:`tdsl.bindings.convert`, values of
:data:`tdsl.bindings.Attr`), so the importer never touches an untyped object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import bindings
from ..bindings import Attr, TypeA, convert

__all__ = ["Attr", "Block", "Module", "Op", "Sequence", "read_module"]


@dataclass
class Block:
    """A block: its argument values (ids), their types, and its ops."""

    args: tuple[int, ...]
    arg_types: tuple[str, ...]
    ops: list["Op"] = field(default_factory=list)


@dataclass
class Op:
    """An op: name, operand and result values (ids), result types, attributes, regions,
    its source line (None for a located op) and its named location (tdsl's renders:
    ``loc("set.rules[0].match")``); ``text`` is the printed op (only for named sequences and
    for ops whose form the importer keeps as MLIR)."""

    name: str
    operands: tuple[int, ...]
    results: tuple[int, ...]
    result_types: tuple[str, ...]
    attrs: dict[str, Attr]
    regions: list[list[Block]]
    line: Optional[int]
    loc: Optional[str]
    text: str = ""
    debug_text: str = ""
    """For a named sequence: its printed form with every op's location (tdsl's renders)."""
    value_text: str = ""
    """For ``transform.param.constant``: its value attribute as printed."""
    scoped_text: str = ""
    """For an op of a named sequence's body: the op as printed inside that sequence (its SSA
    names those of :attr:`value_names`), the form a raw chain keeps."""
    value_names: dict[int, str] = field(default_factory=dict)
    """For a named sequence: the SSA name of each value of its body as printed (value id ->
    ``%name``)."""

    def attr(self, name: str) -> Optional[Attr]:
        return self.attrs.get(name)

    @property
    def body(self) -> Block:
        """The first block of the first region."""
        return self.regions[0][0]


@dataclass
class Sequence:
    """A top-level ``transform.named_sequence`` (or another top-level op, ``name`` set to its
    symbol if it has one)."""

    name: str
    op: Op
    arg_attrs: tuple[dict[str, Attr], ...]
    result_types: tuple[str, ...]

    @property
    def args(self) -> tuple[int, ...]:
        return self.op.body.args

    @property
    def arg_types(self) -> tuple[str, ...]:
        return self.op.body.arg_types

    @property
    def line(self) -> Optional[int]:
        return self.op.line

    @property
    def text(self) -> str:
        return self.op.text


@dataclass
class Module:
    """The script: its symbol name, attributes and top-level sequences in order."""

    name: Optional[str]
    attrs: dict[str, Attr]
    sequences: list[Sequence]
    others: list[Op]

    def sequence(self, name: str) -> Optional[Sequence]:
        for s in self.sequences:
            if s.name == name:
                return s
        return None


def _named(op: Any) -> list[tuple[str, Any]]:
    return [(str(a.name), a.attr) if hasattr(a, "name") else (str(a), op.attributes[a]) for a in op.attributes]


def _location(location: Any) -> tuple[Optional[int], Optional[str]]:
    """(line, name) of a location printed ``loc("file":line:col)`` or ``loc("name")``."""
    text = str(location)
    if not text.startswith('loc("') or not text.endswith(")"):
        return None, None
    end = text.find('"', 5)
    while end > 0 and text[end - 1] == "\\":
        end = text.find('"', end + 1)
    if end < 0:
        return None, None
    rest = text[end + 1 : -1]
    if rest == "":
        return None, text[5:end]
    parts = rest.lstrip(":").split(":")
    return (int(parts[0]) if parts and parts[0].isdigit() else None), None


class _Reader:
    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}

    def value(self, v: Any) -> int:
        found = self.ids.get(v)
        if found is None:
            found = self.ids[v] = len(self.ids)
        return found

    def op(self, op: Any, text: bool = False, scope: Any = None) -> Op:
        """``op`` read; ``scope`` (the ``AsmState`` of a named sequence) prints its body's ops."""
        line, loc = _location(op.location)
        regions = []
        names: dict[int, str] = {}
        state = bindings.asm_state(op) if op.name == "transform.named_sequence" else None
        for region in op.regions:
            blocks = []
            for block in region.blocks:
                args = tuple(self.value(a) for a in block.arguments)
                b = Block(args, tuple(str(a.type) for a in block.arguments))
                for child in block.operations:
                    b.ops.append(self.op(child.operation, text=_keeps_text(child.operation.name), scope=state))
                if state is not None:
                    names.update((self.value(a), bindings.value_name(a, state)) for a in block.arguments)
                    for child in block.operations:
                        names.update((self.value(r), bindings.value_name(r, state)) for r in child.results)
                blocks.append(b)
            regions.append(blocks)
        return Op(
            name=str(op.name),
            operands=tuple(self.value(v) for v in op.operands),
            results=tuple(self.value(r) for r in op.results),
            result_types=tuple(str(r.type) for r in op.results),
            attrs={k: convert(a) for k, a in _named(op)},
            regions=regions,
            line=line,
            loc=loc,
            text=str(op.get_asm(enable_debug_info=False)) if text else "",
            value_text=str(op.attributes["value"])
            if op.name == "transform.param.constant" and "value" in op.attributes
            else "",
            scoped_text=bindings.print_in(op, scope) if scope is not None else "",
            value_names=names,
        )


def _keeps_text(name: str) -> bool:
    return name == "transform.iree.match.cast_compatible_dag_from_root"


def read_module(text: str) -> Module:
    """The script ``text`` parsed and verified (raises :class:`tdsl.errors.ParseFailure`)."""
    module = bindings.parse(text)
    reader = _Reader()
    with bindings.context():
        top = module.operation
        attrs = {k: convert(a) for k, a in _named(top)}
        name = attrs.get("sym_name")
        sequences: list[Sequence] = []
        others: list[Op] = []
        for child in module.body.operations:
            raw = child.operation
            op = reader.op(raw, text=True)
            op.debug_text = str(raw.get_asm(enable_debug_info=True))
            symbol = op.attrs.get("sym_name")
            if op.name == "transform.named_sequence" and isinstance(symbol, str):
                arg_attrs = op.attrs.get("arg_attrs")
                per_arg = (
                    tuple(a if isinstance(a, dict) else {} for a in arg_attrs) if isinstance(arg_attrs, tuple) else ()
                )
                function_type = op.attrs.get("function_type")
                results: tuple[str, ...] = ()
                if isinstance(function_type, TypeA):
                    results = _result_types(function_type.text)
                sequences.append(Sequence(symbol, op, per_arg, results))
            else:
                others.append(op)
    return Module(name if isinstance(name, str) else None, attrs, sequences, others)


def _result_types(function_type: str) -> tuple[str, ...]:
    """The result types of a printed function type ``(a) -> (b, c)`` / ``(a) -> b``."""
    depth = 0
    for i, c in enumerate(function_type):
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        elif c == "-" and depth == 0 and function_type[i : i + 2] == "->":
            tail = function_type[i + 2 :].strip()
            if tail.startswith("(") and tail.endswith(")"):
                tail = tail[1:-1]
            return tuple(t.strip() for t in _split_top(tail) if t.strip())
    return ()


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts
