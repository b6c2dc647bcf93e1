"""Quantization in an ONNX graph: the roles of its inputs and the steps of its outputs.

* :func:`quantization_roles`: which inputs are quantized tensors, scales or zero points
  (seeded inputs respect them: :func:`tdsl.programs.inputs.make_inputs`).
* :func:`output_steps` gives the quantization step of each output that a quantizing op
  produces (1 for a u8/i8 result, the scale of a ``DequantizeLinear``): the numeric check
  accepts one step of difference there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx


_QUANT_SLOTS: dict[str, dict[int, str]] = {
    "QuantizeLinear": {1: "scale", 2: "zero_point"},
    "DequantizeLinear": {0: "quantized", 1: "scale", 2: "zero_point"},
    "QLinearMatMul": {
        0: "quantized",
        1: "scale",
        2: "zero_point",
        3: "quantized",
        4: "scale",
        5: "zero_point",
        6: "scale",
        7: "zero_point",
    },
    "QLinearConv": {
        0: "quantized",
        1: "scale",
        2: "zero_point",
        3: "quantized",
        4: "scale",
        5: "zero_point",
        6: "scale",
        7: "zero_point",
        8: "quantized",
    },
    "MatMulInteger": {0: "quantized", 1: "quantized", 2: "zero_point", 3: "zero_point"},
    "ConvInteger": {0: "quantized", 1: "quantized", 2: "zero_point", 3: "zero_point"},
}
"""ONNX ops (default domain) -> input position -> the role of the value there."""

_QUANTIZING = frozenset({"QuantizeLinear", "QLinearMatMul", "QLinearConv", "DynamicQuantizeLinear"})
"""Ops whose first output is a quantized (integer) tensor."""

_SHAPE_ONLY = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity"}
"""Ops that move values without changing them (a quantization step passes through)."""


def quantization_roles(model: "onnx.ModelProto", names: set[str]) -> dict[str, str]:
    """Graph input name -> its role where it feeds a quantization op: ``quantized`` (the
    integer tensor of QLinearMatMul / MatMulInteger / DequantizeLinear / ...), ``scale`` or
    ``zero_point``; a ``Cast`` between the input and the op is followed. The first role
    found wins."""
    aliases = {n: n for n in names}
    for node in model.graph.node:
        if node.op_type in ("Cast", "Identity") and node.input and node.input[0] in aliases:
            aliases[node.output[0]] = aliases[node.input[0]]
    roles: dict[str, str] = {}
    for node in model.graph.node:
        slots = _QUANT_SLOTS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        for position, role in (slots or {}).items():
            if position < len(node.input) and node.input[position] in aliases:
                roles.setdefault(aliases[node.input[position]], role)
    return roles


def _constant_value(model: "onnx.ModelProto", name: str) -> np.ndarray | None:
    """The value of the initializer or ``Constant`` node output ``name``; None for any other value."""
    from onnx import numpy_helper

    for tensor in model.graph.initializer:
        if tensor.name == name:
            return np.asarray(numpy_helper.to_array(tensor))
    for node in model.graph.node:
        if node.op_type == "Constant" and list(node.output) == [name]:
            for attr in node.attribute:
                if attr.name == "value":
                    return np.asarray(numpy_helper.to_array(attr.t))
    return None


def output_steps(model: "onnx.ModelProto") -> dict[str, float]:
    """Graph output name -> the quantization step of its values, where a quantizing op
    produces it (through shape-only ops): 1 (one integer step) for the result of
    QuantizeLinear, QLinearMatMul, QLinearConv or DynamicQuantizeLinear, the largest scale
    for a DequantizeLinear with a constant scale. Two correct implementations may round a
    value that lies on a rounding boundary differently: one step apart."""
    producers = {out: node for node in model.graph.node for out in node.output}
    steps: dict[str, float] = {}
    for output in model.graph.output:
        name = output.name
        node = producers.get(name)
        while node is not None and node.op_type in _SHAPE_ONLY and node.input:
            name = node.input[0]
            node = producers.get(name)
        if node is None or node.domain not in ("", "ai.onnx"):
            continue
        if node.op_type in _QUANTIZING and name == node.output[0]:
            steps[output.name] = 1.0
        elif node.op_type == "DequantizeLinear" and len(node.input) > 1:
            scale = _constant_value(model, node.input[1])
            if scale is not None and scale.size:
                steps[output.name] = float(np.abs(scale).max())
    return steps
