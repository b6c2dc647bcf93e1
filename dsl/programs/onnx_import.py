"""ONNX import: ``iree-import-onnx`` under a timeout, and the fixes made before it.

* :func:`import_onnx` runs ``iree-import-onnx`` (the optional extra ``tdsl[onnx]``) into a
  file that appears only when it succeeds; with an archive, large initializers go to a
  parameter archive instead (``--externalize-params``).
* :func:`import_fixes` rewrites, in the copy that is imported (never in the model
  onnxruntime runs), the ONNX forms IREE 3.13's importer gets wrong, each into an
  equivalent form, and says so in the program's notes.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .. import bindings as mlir
from ..errors import TdslError
from ..files import staged
from .bool_constants import store_bool_constants_as_u8
from .program import EXTERNAL_MIN_ELEMENTS, ONNX_EXTRA, PARAMETER_SCOPE, MissingExtra
from .qlinear_forms import integer_form, integer_qlinear_matmul

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx

DEFAULT_IMPORT_TIMEOUT_S = 600.0


class ImportFailed(TdslError):
    """``iree-import-onnx`` failed or ran past its timeout; the message ends with its error."""


def require_onnx() -> Any:
    """The ``onnx`` module and the importer, or a one-line :class:`MissingExtra`."""
    if mlir.onnx_import_command() is None:
        raise MissingExtra(
            f"loading .onnx models needs iree-import-onnx (iree-base-compiler[onnx]) and the onnx package: {ONNX_EXTRA}"
        )
    import onnx as onnx_module

    return onnx_module


def import_onnx(model: Path, output: Path, timeout_s: float, archive: Path | None = None) -> None:
    """Imports ``model`` to ``output``; with ``archive``, its large initializers go to that
    parameter archive instead (written first: a present ``output`` implies it)."""
    command = mlir.onnx_import_command()
    if command is None:
        raise MissingExtra(f"iree-import-onnx is not installed: {ONNX_EXTRA}")
    try:
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(staged(output))
            extra = []
            if archive is not None:  # staged after the module: renamed into place before it
                params = stack.enter_context(staged(archive))
                extra = [
                    "--externalize-params",
                    "--save-params-to",
                    str(params),
                    "--params-scope",
                    PARAMETER_SCOPE,
                    "--num-elements-threshold",
                    str(EXTERNAL_MIN_ELEMENTS),
                ]
            try:
                proc = subprocess.run(
                    [*command, str(model), "-o", str(tmp), *extra], capture_output=True, text=True, timeout=timeout_s
                )
            except subprocess.TimeoutExpired:
                raise ImportFailed(f"iree-import-onnx ran past {timeout_s:g} s on {model} and was killed") from None
            if proc.returncode != 0:
                last = [line for line in proc.stderr.strip().splitlines() if line.strip()]
                raise ImportFailed(
                    f"iree-import-onnx failed on {model} (exit {proc.returncode}): {last[-1] if last else 'no output'}"
                )
    except OSError as err:
        raise ImportFailed(f"iree-import-onnx could not write {output}: {err}") from None


def _value_types(model: "onnx.ModelProto") -> dict[str, Any]:
    """Value name -> its ``TypeProto`` tensor type (inputs, outputs, shape inference, initializers)."""
    import onnx as onnx_module

    try:
        inferred = onnx_module.shape_inference.infer_shapes(model)
    except Exception:  # an invalid or unusual model: use what the file declares
        inferred = model
    types: dict[str, Any] = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        if value.type.HasField("tensor_type"):
            types[value.name] = value.type.tensor_type
    for tensor in model.graph.initializer:
        types[tensor.name] = onnx_module.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims)).tensor_type
    return types


def _static_shape(tensor_type: Any) -> list[int] | None:
    if tensor_type is None or not tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim]
    return dims if all(d >= 0 for d in dims) else None


def _scalar(types: dict[str, Any], name: str) -> bool:
    shape = _static_shape(types.get(name))
    return shape is not None and int(np.prod(shape)) == 1


def _flattened_qlinear_matmul(
    model: "onnx.ModelProto", node: "onnx.NodeProto", types: dict[str, Any], fresh: Callable[[str], str]
) -> list["onnx.NodeProto"] | None:
    """The 2-D QLinearMatMul between two Reshapes that computes ``node``, a QLinearMatMul of a
    3-D (or higher) activation by a 2-D weight with per-tensor activation quantization and
    static shapes, the Reshapes' shapes added to ``model``'s initializers; None for any other
    QLinearMatMul."""
    from onnx import helper, numpy_helper

    a_shape = _static_shape(types.get(node.input[0]))
    b_shape = _static_shape(types.get(node.input[3]))
    if not (
        a_shape
        and b_shape
        and len(a_shape) >= 3
        and len(b_shape) == 2
        and _scalar(types, node.input[1])
        and _scalar(types, node.input[2])
    ):
        return None
    flat_shape = fresh(f"{node.name or node.output[0]}_tdsl_flat_shape")
    out_shape = fresh(f"{node.name or node.output[0]}_tdsl_out_shape")
    flat_in, flat_out = fresh(f"{node.input[0]}_tdsl_flat"), fresh(f"{node.output[0]}_tdsl_flat")
    model.graph.initializer.extend(
        [
            numpy_helper.from_array(np.array([-1, a_shape[-1]], np.int64), flat_shape),
            numpy_helper.from_array(np.array([*a_shape[:-1], b_shape[1]], np.int64), out_shape),
        ]
    )
    return [
        helper.make_node("Reshape", [node.input[0], flat_shape], [flat_in]),
        helper.make_node("QLinearMatMul", [flat_in, *node.input[1:]], [flat_out], name=node.name),
        helper.make_node("Reshape", [flat_out, out_shape], [node.output[0]]),
    ]


def import_fixes(model: "onnx.ModelProto") -> list[str]:
    """Rewrites ``model`` (in place) where IREE 3.13's ONNX import goes wrong, each into an
    equivalent graph; returns one note per kind of rewrite (empty: nothing to fix).

    * ``QLinearMatMul`` of a 3-D (or higher) activation by a 2-D weight, per-tensor
      activation quantization: imported as ``torch.aten.bmm`` of a 3-D by a 2-D tensor,
      which fails to compile ("failed to legalize operation 'torch.aten.bmm'"). Rewritten to
      a 2-D QLinearMatMul between two Reshapes (static shapes only).
    * every other ``QLinearMatMul`` form but 2-D x 2-D with a per-tensor activation (3-D x
      3-D, 2-D x 3-D, broadcast batch, per-row activation): computed wrong or not compiled
      (:mod:`~tdsl.programs.qlinear_forms`). Rewritten to an integer matmul and a
      requantization (:func:`~tdsl.programs.qlinear_forms.integer_qlinear_matmul`).
    * ``MatMulInteger`` of two u8 tensors without zero points: imported as
      ``linalg.matmul {cast = cast_unsigned}``, which IREE 3.13 computes as signed (its
      generalization and vectorization emit ``arith.extsi``: wrong results for values >= 128).
      Rewritten with explicit zero points 0, which IREE imports as an exact i32 contraction.
    * a boolean initializer or ``Constant`` (a causal mask): data tiling fails on the i1
      tensor. Stored as u8 and cast to bool where read
      (:func:`~tdsl.programs.bool_constants.store_bool_constants_as_u8`).
    """
    fresh = _name_factory(model)
    notes = _quantized_matmul_fixes(model, fresh)
    stored = store_bool_constants_as_u8(model, fresh)
    if stored:
        notes.append(
            f"{len(stored)} boolean constants stored as u8 and cast to bool where read: "
            f"{', '.join(stored[:3])}{', ...' if len(stored) > 3 else ''} "
            "(IREE 3.13's data tiling cannot encode an i1 tensor)"
        )
    return notes


def _name_factory(model: "onnx.ModelProto") -> Callable[[str], str]:
    """A function that returns a name no value of ``model`` has, from a base name (each once)."""
    taken = {v for node in model.graph.node for v in [*node.input, *node.output, node.name]} | {
        t.name for t in [*model.graph.initializer, *model.graph.input, *model.graph.output]
    }

    def fresh(base: str) -> str:
        name, i = base, 0
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        return name

    return fresh


def _quantized_matmul_fixes(model: "onnx.ModelProto", fresh: Callable[[str], str]) -> list[str]:
    """The QLinearMatMul and MatMulInteger rewrites of :func:`import_fixes` (in place); one
    note per kind made."""
    from onnx import TensorProto, numpy_helper

    if not any(node.op_type in ("QLinearMatMul", "MatMulInteger") for node in model.graph.node):
        return []
    types = _value_types(model)
    batched = unsigned = 0
    integer: list[str] = []
    nodes = []
    for node in model.graph.node:
        default = node.domain in ("", "ai.onnx")
        if default and node.op_type == "QLinearMatMul" and len(node.input) == 8:
            flattened = _flattened_qlinear_matmul(model, node, types, fresh)
            if flattened is not None:
                nodes.extend(flattened)
                batched += 1
                continue
            form = integer_form(node, types)
            if form is not None:
                nodes.extend(integer_qlinear_matmul(model, node, types, fresh))
                integer.append(f"{node.name or node.output[0]} ({form})")
                continue
        if default and node.op_type == "MatMulInteger" and len(node.input) == 2:
            elements = [types[n].elem_type if n in types else None for n in node.input]
            if elements == [TensorProto.UINT8, TensorProto.UINT8]:
                zero = fresh(f"{node.name or node.output[0]}_tdsl_zero_point")
                model.graph.initializer.append(numpy_helper.from_array(np.array(0, np.uint8), zero))
                node.input.extend([zero, zero])
                unsigned += 1
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    notes = []
    if batched:
        notes.append(
            f"{batched} QLinearMatMul of a 3-D activation by a 2-D weight imported as 2-D between Reshapes "
            "(IREE 3.13 imports the batched form as torch.aten.bmm, which fails to compile)"
        )
    if integer:
        notes.append(
            f"{len(integer)} QLinearMatMul imported as an integer matmul and a requantization: "
            f"{', '.join(integer[:3])}{', ...' if len(integer) > 3 else ''} "
            "(IREE 3.13 computes these forms wrong or cannot compile them)"
        )
    if unsigned:
        notes.append(
            f"{unsigned} MatMulInteger of u8 by u8 without zero points imported with zero points 0 "
            "(IREE 3.13 computes the unsigned form as signed)"
        )
    return notes
