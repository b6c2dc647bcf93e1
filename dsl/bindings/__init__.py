"""The one shim over the untyped ``iree.compiler`` bindings.

Every other module goes through these functions; nothing outside this package imports
``iree.compiler``. Attributes become typed values through the one converter of
:mod:`.attributes`. Emits nothing; requires the pinned ``iree-base-compiler``.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import Diagnostic, ParseFailure, PayloadError, TdslError
from .attributes import (
    Attr,
    AttrValue,
    CompilationInfo,
    ConfigValue,
    LoweringConfig,
    MapA,
    Mma,
    Opaque,
    PipelineOptions,
    Sym,
    TranslationInfo,
    TypeA,
    Unit,
    convert,
    summary,
)

__all__ = [
    "Attr",
    "AttrValue",
    "CompilationInfo",
    "ConfigValue",
    "Diagnostic",
    "FunctionSignature",
    "LinalgOp",
    "LoweringConfig",
    "MapA",
    "Mma",
    "Opaque",
    "OpSummary",
    "ParseFailure",
    "PipelineOptions",
    "Sym",
    "TensorType",
    "TranslationInfo",
    "TypeA",
    "Unit",
    "ValueType",
    "apply_transform",
    "context",
    "convert",
    "function_types",
    "linalg_ops",
    "bound_types",
    "location_key",
    "onnx_import_command",
    "parse",
    "parse_vtensor_type",
    "asm_state",
    "print_in",
    "print_module",
    "value_name",
    "set_argument_types",
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
class OpSummary:
    """An op found by :func:`walk`: its name, enclosing func symbol, its attributes as
    printed and their values (:data:`AttrValue`, read with the attribute API)."""

    name: str
    function: str | None
    attributes: dict[str, str]
    location: str = ""
    values: dict[str, AttrValue] = field(default_factory=dict)


def _value(attr: Any) -> AttrValue:
    """``attr``'s flat value (:func:`~tdsl.bindings.attributes.summary` of :func:`convert`)."""
    return summary(convert(attr))


def _named_attributes(op: Any) -> list[tuple[str, Any]]:
    """(name, attribute) pairs of ``op`` (the bindings iterate names or named attributes)."""
    return [(str(a.name), a.attr) if hasattr(a, "name") else (str(a), op.attributes[a]) for a in op.attributes]


def walk(text: str) -> list[OpSummary]:
    """Every op of the module in ``text`` (pre-order), with its enclosing function's name."""
    ir = _ir()
    ops: list[OpSummary] = []
    with context():
        module = ir.Module.parse(text)

        def visit(op: Any, function: str | None) -> None:
            named = _named_attributes(op)
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


def _static_tensor(t: "ValueType") -> TensorType:
    """``t`` as a builtin tensor of static shape; anything else is a PayloadError."""
    expected = "expected function arguments and results of static-shape tensor types"
    if t.dialect != "builtin" or t.shape is None or t.element is None:
        raise PayloadError(f"{expected}, received {t.text}")
    if any(size is None for size in t.shape):
        raise PayloadError(f"{expected}, received {t.text} (dynamic shapes are not supported)")
    return TensorType(tuple(int(size) for size in t.shape if size is not None), t.element)


def signatures(text: str) -> list[FunctionSignature]:
    """Signatures of the public functions defined in the payload ``text``: builtin tensors of
    static shape only (:func:`function_types` reads any type).

    Raises :class:`ParseFailure` when the payload does not parse, :class:`PayloadError`
    for another argument or result type.
    """
    return [
        FunctionSignature(
            f.name, tuple(_static_tensor(t) for t in f.inputs), tuple(_static_tensor(t) for t in f.results)
        )
        for f in function_types(text)
    ]


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


def asm_state(op: Any) -> Any:
    """The printer state of ``op``: its body's ops printed with it (:func:`print_in`) keep
    the SSA names ``op`` prints them with."""
    return _ir().AsmState(op)


def print_in(op: Any, state: Any) -> str:
    """``op`` as printed inside the op ``state`` was made for (no locations)."""
    out = io.StringIO()
    op.print(state, file=out)
    return out.getvalue().rstrip()


def value_name(value: Any, state: Any) -> str:
    """The SSA name (``%0``, ``%arg0``) ``value`` is printed with under ``state``."""
    return str(value.get_name(state))


def print_module(module: Any, debug_info: bool = False) -> str:
    """The printer's form of ``module`` (locations only with ``debug_info``)."""
    with context():
        return str(module.operation.get_asm(enable_debug_info=debug_info))


# --------------------------------------------------------------------------------------
# Structured (linalg) ops as codegen and the graph level see them: in :mod:`.linalg`; the
# buffers each dispatch function binds: in :mod:`.interface`.

from .interface import bound_types  # noqa: E402
from .linalg import LinalgOp, linalg_ops, location_key  # noqa: E402

# --------------------------------------------------------------------------------------
# Argument and result types of any function: builtin tensors and torch-dialect value
# tensors (the signatures that iree-import-onnx writes).

_VTENSOR = re.compile(r"^!torch\.vtensor<(?:\*|\[([^\]]*)\]),\s*([A-Za-z0-9_]+)>$")


def parse_vtensor_type(text: str) -> tuple[tuple[int | None, ...] | None, str]:
    """``(shape, element)`` of a torch-dialect value tensor type as printed, e.g.
    ``!torch.vtensor<[1,128],si64>`` -> ``((1, 128), "si64")``; a dynamic dimension (``?``
    or ``-1``) is None, an unranked ``!torch.vtensor<*,f32>`` has shape None.

    The bindings of iree-base-compiler 3.13 register the torch dialect (its types parse and
    print) but expose no Python class or accessor for ``!torch.vtensor``, so this reads the
    printed form of a parsed type (the printer's canonical spelling, no spaces). Raises
    :class:`PayloadError` for any other text.
    """
    m = _VTENSOR.match(text.strip())
    if m is None:
        raise PayloadError(f"expected a !torch.vtensor<[dims],element> type, received {text}")
    if m.group(1) is None:
        return None, m.group(2)
    dims: list[int | None] = []
    for part in m.group(1).split(","):
        part = part.strip()
        if part == "":
            continue
        if part in ("?", "-1"):
            dims.append(None)
        elif part.isdigit():
            dims.append(int(part))
        else:
            raise PayloadError(f"expected a !torch.vtensor<[dims],element> type, received {text} (dimension {part!r})")
    return tuple(dims), m.group(2)


@dataclass(frozen=True)
class ValueType:
    """A function argument or result type as parsed by the bindings.

    ``dialect`` is ``"builtin"`` for a builtin ranked tensor, ``"torch"`` for a
    ``!torch.vtensor`` and ``"other"`` for anything else (then ``shape``/``element`` are
    None). ``shape`` is None when unranked; a dynamic dimension is None. ``element`` is the
    element type as spelled in the IR (``f32``, ``i64`` for builtin tensors, ``si64``,
    ``ui8``, ``i1`` for torch value tensors).
    """

    text: str
    dialect: str
    shape: tuple[int | None, ...] | None
    element: str | None


@dataclass(frozen=True)
class FunctionTypes:
    """A public function's name and its argument and result types (any types)."""

    name: str
    inputs: tuple[ValueType, ...]
    results: tuple[ValueType, ...]


def _value_type(t: Any) -> ValueType:
    ir = _ir()
    text = str(t)
    if isinstance(t, ir.RankedTensorType):  # the bindings hand out the most derived class
        shape = tuple(None if t.is_dynamic_dim(i) else int(t.shape[i]) for i in range(t.rank))
        return ValueType(text, "builtin", shape, str(t.element_type))
    if isinstance(t, ir.UnrankedTensorType):
        return ValueType(text, "builtin", None, str(t.element_type))
    if text.startswith("!torch.vtensor<"):
        shape_or_none, element = parse_vtensor_type(text)
        return ValueType(text, "torch", shape_or_none, element)
    return ValueType(text, "other", None, None)


def _public_functions(module: Any) -> list[Any]:
    found = []
    for op in module.body.operations:
        if op.operation.name not in ("func.func", "util.func") or len(op.regions[0].blocks) == 0:
            continue
        attrs = op.operation.attributes
        if "sym_visibility" in attrs and _value(attrs["sym_visibility"]) == "private":
            continue
        found.append(op)
    return found


def function_types(text: str) -> list[FunctionTypes]:
    """Argument and result types of every public function defined in ``text`` (not
    verified: torch-dialect imports parse as they are). Raises :class:`ParseFailure`."""
    ir = _ir()
    with context():
        module = _parsed(text)
        found = []
        for op in _public_functions(module):
            attrs = op.operation.attributes
            ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
            found.append(
                FunctionTypes(
                    str(ir.StringAttr(attrs["sym_name"]).value),
                    tuple(_value_type(t) for t in ftype.inputs),
                    tuple(_value_type(t) for t in ftype.results),
                )
            )
    return found


def set_argument_types(text: str, function: str, types: dict[int, str]) -> str:
    """``text`` with arguments of ``function`` given new (static) types: ``types`` maps an
    argument index to a type as text. The body keeps the old type: a cast at the entry
    (``torch.tensor_static_info_cast`` for ``!torch.vtensor``, ``tensor.cast`` for builtin
    tensors) turns the new argument into the old one. Raises :class:`ParseFailure` when a
    type does not parse, :class:`PayloadError` when ``function`` is not a public function."""
    ir = _ir()
    with context():
        module = _parsed(text)
        matches = [
            op
            for op in _public_functions(module)
            if str(ir.StringAttr(op.operation.attributes["sym_name"]).value) == function
        ]
        if not matches:
            raise PayloadError(f"no public function @{function} in the program")
        func = matches[0].operation
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = list(ftype.inputs)
        entry = func.regions[0].blocks[0]
        first = entry.operations[0]
        for index, spelled in sorted(types.items()):
            try:
                new = ir.Type.parse(spelled)
            except ir.MLIRError as err:
                raise ParseFailure([_diagnostic(d) for d in err.error_diagnostics]) from None
            except ValueError as err:
                raise ParseFailure([Diagnostic(str(err), None, None, None)]) from None
            arg = entry.arguments[index]
            old = arg.type
            cast_name = "torch.tensor_static_info_cast" if str(old).startswith("!torch.") else "tensor.cast"
            arg.set_type(new)
            cast = ir.Operation.create(
                cast_name, results=[old], operands=[arg], loc=ir.Location.unknown(), ip=ir.InsertionPoint(first)
            )
            arg.replace_all_uses_except(cast.result, cast)
            inputs[index] = new
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        return str(module)


def onnx_import_command() -> list[str] | None:
    """The command that runs iree-base-compiler's ONNX importer (``iree-import-onnx``, as
    ``python -m iree.compiler.tools.import_onnx``), or None when it or the ``onnx`` package
    it needs is missing (the ``iree-base-compiler[onnx]`` extra)."""
    import importlib.util
    import sys

    try:
        if (
            importlib.util.find_spec("onnx") is None
            or importlib.util.find_spec("iree.compiler.tools.import_onnx") is None
        ):
            return None
    except (ImportError, ValueError):
        return None
    return [sys.executable, "-m", "iree.compiler.tools.import_onnx"]
