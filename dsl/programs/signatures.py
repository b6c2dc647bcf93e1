"""Signatures: every public function's arguments and results (names, shapes, element
types, numpy dtypes, the index bound of token ids, quantization roles and steps), and
:func:`as_declared`, which gives IREE's results the declared dtypes (IREE returns ``ui8``
results as int8 buffers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import ArgumentError, PayloadError
from .program import Program

_NUMPY: dict[str, str] = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "si64": "int64",
    "si32": "int32",
    "si16": "int16",
    "si8": "int8",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "ui64": "uint64",
    "ui32": "uint32",
    "ui16": "uint16",
    "ui8": "uint8",
    "i1": "bool",
}


def numpy_dtype(element: str) -> np.dtype[Any]:
    """The numpy dtype of an element type as spelled in the IR (``si64`` -> int64, ``i1`` ->
    bool, ``bf16`` -> ml_dtypes.bfloat16 when ml_dtypes is installed). Raises PayloadError."""
    if element in _NUMPY:
        return np.dtype(_NUMPY[element])
    if element == "bf16":
        try:
            import ml_dtypes
        except ImportError:
            raise PayloadError("bf16 tensors need the ml_dtypes package (pip install ml_dtypes)") from None
        bf16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bf16
    raise PayloadError(f"element type {element} has no numpy dtype tdsl can feed (known: {', '.join(_NUMPY)}, bf16)")


@dataclass(frozen=True)
class Arg:
    """One argument or result: its position, name (the ONNX name, else ``argN`` /
    ``resultN``), shape (a dynamic result dimension is None; arguments are static), element
    type as spelled in the IR and, for integer arguments that index a table, ``bound``: the
    values lie in ``[0, bound)`` (token ids: the vocabulary size). ``role`` is an input's
    part in quantization (``quantized``, ``scale``, ``zero_point``: :func:`~tdsl.programs.quantization.quantization_roles`),
    ``step`` a result's quantization step (:func:`~tdsl.programs.quantization.output_steps`)."""

    index: int
    name: str
    shape: tuple[int | None, ...]
    element: str
    bound: int | None = None
    role: str | None = None
    step: float | None = None

    @property
    def dtype(self) -> np.dtype[Any]:
        return numpy_dtype(self.element)

    @property
    def static_shape(self) -> tuple[int, ...]:
        if any(s is None for s in self.shape):
            raise PayloadError(f"{self.name} has a dynamic shape {self.shape}")
        return tuple(int(s) for s in self.shape if s is not None)

    @property
    def is_mask(self) -> bool:
        """An i1 tensor, or an integer argument whose name contains ``mask``."""
        return self.element == "i1" or "mask" in self.name.lower()

    def describe(self) -> str:
        dims = "x".join("?" if s is None else str(s) for s in self.shape)
        return f"{self.name}: {dims + 'x' if dims else ''}{self.element}"


@dataclass(frozen=True)
class Signature:
    """A public function: its name, arguments and results."""

    function: str
    inputs: tuple[Arg, ...]
    results: tuple[Arg, ...]

    def arg(self, key: str) -> Arg:
        """The argument named ``key``: its name, ``argN`` or ``N``. Raises ArgumentError."""
        for a in self.inputs:
            if key in (a.name, f"arg{a.index}", str(a.index)):
                return a
        known = ", ".join(a.name if a.name == f"arg{a.index}" else f"{a.name} (arg{a.index})" for a in self.inputs)
        raise ArgumentError(f"@{self.function} has no argument {key!r}; its arguments: {known}")


def signatures(program: Program) -> list[Signature]:
    """Every public function's arguments and results, with names and index bounds where the
    program is an ONNX model."""
    found = []
    single = len(program.functions) == 1
    for f in program.functions:
        names = program.input_names if single and len(program.input_names) == len(f.inputs) else ()
        outs = program.output_names if single and len(program.output_names) == len(f.results) else ()
        inputs = []
        for i, t in enumerate(f.inputs):
            name = names[i] if names else f"arg{i}"
            inputs.append(
                Arg(
                    i, name, t.shape or (), t.element or t.text, program.index_bounds.get(name), program.roles.get(name)
                )
            )
        results = tuple(
            Arg(
                i,
                outs[i] if outs else f"result{i}",
                t.shape or (),
                t.element or t.text,
                step=program.steps.get(outs[i]) if outs else None,
            )
            for i, t in enumerate(f.results)
        )
        found.append(Signature(f.name, tuple(inputs), results))
    return found


def as_declared(results: Sequence[np.ndarray], signature: Signature) -> list[np.ndarray]:
    """IREE's results with the declared dtypes: IREE returns unsigned (``ui8``) results as
    signed buffers of the same width, which are reinterpreted; i1 results become bool."""
    out = []
    for array, arg in zip(results, signature.results):
        try:
            dtype = arg.dtype
        except PayloadError:
            out.append(array)
            continue
        if array.dtype == dtype:
            out.append(array)
        elif dtype.kind == "u" and array.dtype.kind == "i" and array.dtype.itemsize == dtype.itemsize:
            out.append(array.view(dtype))
        elif dtype.kind == "b":
            out.append(array.astype(bool))
        else:
            out.append(array)
    return out
