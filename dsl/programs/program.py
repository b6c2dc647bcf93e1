"""The program value a user passes to tdsl, and the archives its weights can live in.

A :class:`Program` is what :func:`tdsl.programs.load.load_program` gives: an ``.onnx`` model
(imported to MLIR), an ``.mlir`` file in the torch/ONNX dialects as ``iree-import-onnx``
writes it, or a plain linalg ``.mlir``; ``iree-compile`` reads the MLIR. A
:class:`ParameterArchive` is an ``.irpa`` file the module reads its weights from at load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .. import bindings as mlir
from ..errors import TdslError

ONNX_EXTRA = "pip install 'tdsl[onnx]'"


class MissingExtra(TdslError):
    """An optional dependency is not installed; the message names the extra to install."""


# --------------------------------------------------------------------------------------
# Programs.


@dataclass(frozen=True)
class Program:
    """A program loaded by :func:`~tdsl.programs.load.load_program`.

    ``kind`` is ``"onnx"`` (an ``.onnx`` model, imported), ``"torch"`` (torch/ONNX-dialect
    MLIR) or ``"linalg"`` (MLIR with builtin tensor signatures). ``mlir_path`` is the file
    ``iree-compile`` reads; ``onnx_path`` the runnable model (weights refilled, dimensions set)
    that onnxruntime reads, None for MLIR programs. ``input_names`` / ``output_names`` are the
    ONNX graph's (empty for MLIR: the arguments are then ``arg0``, ``arg1``, ..);
    ``index_bounds`` maps an input name to the size of the table it indexes (a ``Gather``
    of a constant: token ids lie in ``[0, bound)``). ``notes`` say what was done to the
    program on the way (weights refilled, dimensions set, import fixes). ``roles`` and
    ``steps`` are the quantization roles of inputs and steps of outputs (ONNX models only).
    """

    source: Path
    kind: str
    mlir_path: Path
    onnx_path: Path | None
    functions: tuple[mlir.FunctionTypes, ...]
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    index_bounds: Mapping[str, int] = field(default_factory=dict)
    dims: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    roles: Mapping[str, str] = field(default_factory=dict)
    """Input name -> its role in quantization (:func:`~tdsl.programs.quantization.quantization_roles`)."""
    steps: Mapping[str, float] = field(default_factory=dict)
    """Output name -> its quantization step (:func:`~tdsl.programs.quantization.output_steps`)."""
    import_path: Path | None = None
    """The ONNX file ``iree-import-onnx`` read (the runnable model, or its copy with
    :func:`~tdsl.programs.onnx_import.import_fixes` applied); None for MLIR programs."""
    parameters: tuple["ParameterArchive", ...] = ()
    """The archives the module reads its weights from at load
    (:func:`~tdsl.programs.parameters.externalize_weights`); empty when the weights are in the program."""

    def text(self) -> str:
        """The MLIR text that ``iree-compile`` reads."""
        return self.mlir_path.read_text()


@dataclass(frozen=True)
class ParameterArchive:
    """A parameter archive (``.irpa``) a module reads weights from: the ``scope`` its
    globals name (``#stream.parameter.named<"model"::"w">``), the file and its sha256."""

    scope: str
    path: Path
    digest: str

    @property
    def spec(self) -> str:
        """``scope=path``: the value of ``iree-benchmark-module``'s ``--parameters``."""
        return f"{self.scope}={self.path}"


PARAMETER_SCOPE = "model"
EXTERNAL_MIN_ELEMENTS = 4096
"""Initializers with at least this many elements go to the archive
(:func:`~tdsl.programs.parameters.externalize_weights`): weight matrices and embedding tables; small tensors (shapes,
norms, biases of narrow layers, position ids) stay in the program."""
