"""The onnxruntime reference: an ``.onnx`` model run by onnxruntime on one thread.

:func:`onnxruntime_reference` computes the model's outputs; :func:`onnxruntime_inexact`
says where onnxruntime is no reference (an 8-bit integer matmul that onnxruntime's kernels
for this CPU do not compute exactly). Needs ``pip install 'tdsl[onnx]'``.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import ArgumentError, TdslError
from .program import ONNX_EXTRA, MissingExtra


class ReferenceFailed(TdslError):
    """onnxruntime cannot compute the model (it refuses a form the ONNX standard allows)."""


def _onnxruntime_session(model: str | bytes) -> Any:
    """An onnxruntime CPU session on one thread, quiet, for ``model`` (a path or the
    serialized model)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


INTEGER_MATMUL_OPERANDS = {
    "MatMulInteger": (0, 1),
    "ConvInteger": (0, 1),
    "MatMulIntegerToFloat": (0, 1),
    "QLinearMatMul": (0, 3),
    "QLinearConv": (0, 3),
    "QGemm": (0, 3),
}
"""ONNX (and onnxruntime contrib) ops whose 8-bit operands onnxruntime multiplies in an
integer GEMM: the positions of the two operands. (``DynamicQuantizeMatMul`` quantizes a
float A to u8 itself: A is ``uint8`` there.)"""

_ONNX_ELEMENT = {2: "uint8", 3: "int8"}


@functools.cache
def onnxruntime_integer_matmul_error(a_type: str, b_type: str) -> int:
    """How far onnxruntime's ``a_type x b_type`` (``uint8`` / ``int8``) integer matmul is
    from the exact product on this CPU: the largest absolute difference on a 16x64 by 64x32
    probe over the full range of both types. Without VNNI its x86 kernels add pairs of
    8-bit products in int16 with saturation (``vpmaddubsw``): on Zen 3 (AVX2), onnxruntime
    1.32, u8 x s8 is off by 40749 while u8 x u8 is exact."""
    from onnx import TensorProto, helper

    codes = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8}
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node],
        "probe",
        [
            helper.make_tensor_value_info("a", codes[a_type], [16, 64]),
            helper.make_tensor_value_info("b", codes[b_type], [64, 32]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [16, 32])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 9)
    session = _onnxruntime_session(model.SerializeToString())
    rng = np.random.default_rng(0)
    a, b = (
        rng.integers(np.iinfo(t).min, np.iinfo(t).max + 1, shape).astype(t)
        for t, shape in ((a_type, (16, 64)), (b_type, (64, 32)))
    )
    [y] = session.run(None, {"a": a, "b": b})
    return int(np.abs(y.astype(np.int64) - a.astype(np.int64) @ b.astype(np.int64)).max())


def onnxruntime_inexact(onnx_path: Path | str) -> str:
    """Why onnxruntime is no reference for the model at ``onnx_path`` on this CPU: the
    first integer matmul (:data:`INTEGER_MATMUL_OPERANDS`) whose operand types onnxruntime
    does not multiply exactly here (:func:`onnxruntime_integer_matmul_error`); "" where
    there is none (also without onnxruntime: :func:`onnxruntime_reference` says so)."""
    if importlib.util.find_spec("onnxruntime") is None:
        return ""
    import onnx

    model = onnx.shape_inference.infer_shapes(onnx.load(str(onnx_path), load_external_data=False))
    graph = model.graph
    types = {t.name: t.data_type for t in graph.initializer}
    for info in (*graph.input, *graph.value_info, *graph.output):
        types.setdefault(info.name, info.type.tensor_type.elem_type)
    for node in graph.node:
        if node.op_type == "DynamicQuantizeMatMul" and len(node.input) > 1:
            pair = ("uint8", _ONNX_ELEMENT.get(types.get(node.input[1], 0), ""))
        elif node.op_type in INTEGER_MATMUL_OPERANDS:
            i, j = INTEGER_MATMUL_OPERANDS[node.op_type]
            if len(node.input) <= j:
                continue
            pair = (
                _ONNX_ELEMENT.get(types.get(node.input[i], 0), ""),
                _ONNX_ELEMENT.get(types.get(node.input[j], 0), ""),
            )
        else:
            continue
        if "" in pair:
            continue
        error = onnxruntime_integer_matmul_error(*pair)
        if error:
            name = f" {node.name}" if node.name else ""
            return (
                f"onnxruntime is not compared: its {pair[0]} x {pair[1]} integer matmul ({node.op_type}{name}) is not exact on this CPU "
                f"(a full-range probe was off by {error}; without VNNI its kernels saturate sums of 8-bit products in int16)"
            )
    return ""


def onnxruntime_reference(onnx_path: Path | str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs computed by onnxruntime (CPU, one thread) for ``inputs`` in the
    order of the graph's inputs. Raises :class:`MissingExtra` without onnxruntime,
    :class:`ReferenceFailed` where onnxruntime refuses to run it."""
    if importlib.util.find_spec("onnxruntime") is None:
        raise MissingExtra(f"the onnxruntime reference needs the onnxruntime package: {ONNX_EXTRA}")
    try:
        session = _onnxruntime_session(str(onnx_path))
    except Exception as err:  # onnxruntime raises its own exception classes
        raise TdslError(f"onnxruntime cannot load {onnx_path}: {str(err).strip().splitlines()[0]}") from None
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(inputs):
        raise ArgumentError(f"{onnx_path} takes {len(names)} inputs, received {len(inputs)}")
    try:
        outputs = session.run(None, dict(zip(names, inputs)))
    except Exception as err:  # onnxruntime raises its own exception classes
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ReferenceFailed(f"onnxruntime cannot run {onnx_path}: {reason}") from None
    return [np.asarray(o) for o in outputs]
