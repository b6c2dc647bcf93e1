"""The one shim over the untyped ``iree.compiler`` bindings.

Every other module goes through these functions; nothing else imports
``iree.compiler``. Emits nothing; requires the pinned ``iree-base-compiler``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Union

from .errors import Diagnostic, ParseFailure, PayloadError, TdslError

__all__ = [
    "Diagnostic",
    "FunctionSignature",
    "AttrValue",
    "OpSummary",
    "TranslationInfo",
    "ParseFailure",
    "TensorType",
    "apply_transform",
    "context",
    "parse",
    "print_module",
    "signatures",
    "tool_path",
    "walk",
]

_FILE_LOC = re.compile(r'^loc\("[^"]*":(\d+):(\d+)\)$')
_NAME_LOC = re.compile(r'^loc\("([^"]*)"\)$')

_context: Any = None


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


def _parsed(text: str, verify: bool = False) -> Any:
    """``text`` parsed (and verified) in the shared context; MLIR errors become ParseFailure.
    Call inside ``with context():``."""
    ir = _ir()
    try:
        module = ir.Module.parse(text)
        if verify:
            module.operation.verify()
    except ir.MLIRError as err:
        raise ParseFailure([_diagnostic(d) for d in err.error_diagnostics]) from None
    return module


def parse(text: str) -> Any:
    """Parses and verifies ``text`` as an MLIR module; raises :class:`ParseFailure`."""
    with context():
        return _parsed(text, verify=True)


def tool_path(name: str) -> str:
    """Path of the real ``iree-compile`` / ``iree-opt`` binary in the wheel (the console
    scripts of the same name are Python wrappers that add ~0.2 s per call)."""
    from iree.compiler.tools.binaries import find_tool

    return str(find_tool(name))


@dataclass(frozen=True)
class TranslationInfo:
    """The facts of an ``#iree_codegen.translation_info``: its pipeline attribute as
    printed (``#iree_cpu.pipeline<Mmt4dTilingExpert>``) and its codegen spec symbol."""

    pipeline: str
    codegen_spec: str | None


AttrValue = Union[bool, int, float, str, tuple[int, ...], TranslationInfo, None]
"""An attribute's value read with the bindings' attribute classes (None: not one of these)."""


@dataclass(frozen=True)
class OpSummary:
    """An op found by :func:`walk`: its name, enclosing func symbol, its attributes as
    printed and their values (:data:`AttrValue`, read with the attribute API)."""

    name: str
    function: str | None
    attributes: dict[str, str]
    location: str = ""
    values: dict[str, AttrValue] = field(default_factory=dict)


def _value(attr: Any) -> AttrValue:
    """``attr``'s value, for the attribute kinds tdsl reads; None for any other."""
    ir = _ir()
    from iree.compiler.dialects import iree_codegen

    if isinstance(attr, ir.BoolAttr):
        return bool(attr.value)
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, ir.StringAttr):
        return str(attr.value)
    if isinstance(attr, (ir.DenseI64ArrayAttr, ir.DenseIntElementsAttr)):
        return tuple(int(v) for v in attr)
    if isinstance(attr, ir.DenseFPElementsAttr):
        return float(ir.FloatAttr(attr.get_splat_value()).value) if attr.is_splat else None
    if isinstance(attr, iree_codegen.TranslationInfoAttr):
        spec = attr.codegen_spec
        return TranslationInfo(str(attr.pass_pipeline), None if spec is None else str(ir.FlatSymbolRefAttr(spec).value))
    return None


def walk(text: str) -> list[OpSummary]:
    """Every op of the module in ``text`` (pre-order), with its enclosing function's name."""
    ir = _ir()
    ops: list[OpSummary] = []
    with context():
        module = ir.Module.parse(text)

        def visit(op: Any, function: str | None) -> None:
            named = [(str(a.name), a.attr) if hasattr(a, "name") else (str(a), op.attributes[a]) for a in op.attributes]
            attrs = {key: str(attr) for key, attr in named}
            values = {key: _value(attr) for key, attr in named}
            if op.name in ("func.func", "util.func"):
                symbol = values.get("sym_name")
                function = symbol if isinstance(symbol, str) else ""
            ops.append(OpSummary(op.name, function, attrs, str(op.location), values))
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        visit(child.operation, function)

        visit(module.operation, None)
    return ops


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor type: static shape and element type spelling (``f32``, ``i8``, ..)."""

    shape: tuple[int, ...]
    element: str


@dataclass(frozen=True)
class FunctionSignature:
    """A public ``func.func`` of a payload: its name, argument and result tensor types."""

    name: str
    inputs: tuple[TensorType, ...]
    results: tuple[TensorType, ...]


def _tensor_type(t: Any) -> TensorType:
    ir = _ir()
    expected = "expected function arguments and results of static-shape tensor types"
    if not isinstance(t, ir.RankedTensorType):
        try:
            t = ir.RankedTensorType(t)
        except ValueError:
            raise PayloadError(f"{expected}, received {t}") from None
    ranked = t
    if not ranked.has_static_shape:
        raise PayloadError(f"{expected}, received {t} (dynamic shapes are not supported)")
    return TensorType(tuple(ranked.shape), str(ranked.element_type))


def signatures(text: str) -> list[FunctionSignature]:
    """Signatures of the public functions defined in the payload ``text``.

    Raises :class:`ParseFailure` when the payload does not parse.
    """
    ir = _ir()
    with context():
        module = _parsed(text)
        found = []
        for op in module.body.operations:
            if op.operation.name != "func.func" or len(op.regions[0].blocks) == 0:
                continue
            attrs = op.operation.attributes
            if "sym_visibility" in attrs and _value(attrs["sym_visibility"]) == "private":
                continue
            ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
            found.append(
                FunctionSignature(
                    str(ir.StringAttr(attrs["sym_name"]).value),
                    tuple(_tensor_type(t) for t in ftype.inputs),
                    tuple(_tensor_type(t) for t in ftype.results),
                )
            )
    return found


def apply_transform(payload: str, script: str, entry: str) -> str:
    """Applies the named sequence ``entry`` of ``script`` to ``payload`` in process (the
    transform interpreter) and returns the printed result."""
    ir = _ir()
    from iree.compiler.dialects.transform import interpreter

    with context():
        module = ir.Module.parse(payload)
        transforms = ir.Module.parse(script)
        sequence = None
        for op in transforms.body.operations:
            attrs = op.operation.attributes
            if "sym_name" in attrs and _value(attrs["sym_name"]) == entry:
                sequence = op
        if sequence is None:
            raise TdslError(f"no named sequence @{entry} in the script")
        try:
            interpreter.apply_named_sequence(module.operation, sequence, transforms)
        except (ValueError, ir.MLIRError) as err:
            raise ParseFailure([Diagnostic(str(err), None, None, None)]) from None
        return str(module)


def print_module(module: Any, debug_info: bool = False) -> str:
    """The printer's form of ``module`` (locations only with ``debug_info``)."""
    with context():
        return str(module.operation.get_asm(enable_debug_info=debug_info))
